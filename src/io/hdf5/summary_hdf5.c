/* Reads back the summary of a robocache HDF5 file for `robocache info`. */
#include "h5_attrs_hdf5.h"
#include "h5_file_hdf5.h"
#include "hdf5_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reads the whole dataset loc/name of native type into a malloc'd buffer of
 * *n elements (rank 1) or *n rows by *cols (rank 2). */
static void *read_dataset(hid_t loc, const char *name, hid_t type, size_t elem, int64_t *n,
                          int64_t *cols) {
  if (H5Lexists(loc, name, H5P_DEFAULT) <= 0) return NULL;
  hid_t d = H5Dopen2(loc, name, H5P_DEFAULT);
  hid_t space = d < 0 ? -1 : H5Dget_space(d);
  hsize_t dims[2] = {0, 1};
  int rank = space < 0 ? -1 : H5Sget_simple_extent_dims(space, dims, NULL);
  void *buf = NULL;
  if (rank == 1 || rank == 2) {
    buf = malloc((size_t)(dims[0] * dims[1]) * elem + 1);
    if (buf && dims[0] > 0 && H5Dread(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
      free(buf);
      buf = NULL;
    }
    *n = (int64_t)dims[0];
    *cols = (int64_t)dims[1];
  }
  if (space >= 0) H5Sclose(space);
  if (d >= 0) H5Dclose(d);
  return buf;
}

/* Columns of obs/<name>, or -1. */
static int64_t obs_cols(hid_t demo, const char *name) {
  char path[512];
  snprintf(path, sizeof path, "obs/%s", name);
  if (H5Lexists(demo, "obs", H5P_DEFAULT) <= 0 || H5Lexists(demo, path, H5P_DEFAULT) <= 0)
    return -1;
  hid_t d = H5Dopen2(demo, path, H5P_DEFAULT);
  hid_t space = d < 0 ? -1 : H5Dget_space(d);
  hsize_t dims[2] = {0, 0};
  int rank = space < 0 ? -1 : H5Sget_simple_extent_dims(space, dims, NULL);
  if (space >= 0) H5Sclose(space);
  if (d >= 0) H5Dclose(d);
  return rank == 2 ? (int64_t)dims[1] : -1;
}

static const char *read_demo(hid_t file, void *arg) {
  rc_io_h5_summary *s = arg;
  s->version = rc_h5_attr_read_string(file, "robocache_version");
  if (H5Lexists(file, "data", H5P_DEFAULT) <= 0 || H5Lexists(file, "data/demo_0", H5P_DEFAULT) <= 0)
    return "no group /data/demo_0";
  hid_t demo = H5Gopen2(file, "data/demo_0", H5P_DEFAULT);
  if (demo < 0) return "cannot open /data/demo_0";
  const char *problem = NULL;
  int64_t cols = 0, vt = 0, vk = 0;
  s->target = rc_h5_attr_read_string(demo, "target");
  s->timestamps_ns = read_dataset(demo, "timestamps", H5T_NATIVE_INT64, 8, &s->T, &cols);
  uint8_t *valid = read_dataset(demo, "valid", H5T_NATIVE_UINT8, 1, &vt, &vk);
  int64_t n = 0;
  if (!s->timestamps_ns || cols != 1)
    problem = "no int64 dataset /data/demo_0/timestamps [T]";
  else if (!valid || vt != s->T)
    problem = "no uint8 dataset /data/demo_0/valid [T,K]";
  else if (H5Aexists_by_name(demo, "valid", "streams", H5P_DEFAULT) <= 0)
    problem = "/data/demo_0/valid has no attribute 'streams'";
  if (!problem) {
    hid_t d = H5Dopen2(demo, "valid", H5P_DEFAULT);
    if (d < 0 || rc_h5_attr_read_strings(d, "streams", &s->names, &n) < 0 || n != vk)
      problem = "attribute 'streams' of /data/demo_0/valid does not list K names";
    if (d >= 0) H5Dclose(d);
  }
  s->K = (int32_t)n;
  s->cols = calloc((size_t)n + 1, sizeof *s->cols);
  s->valid_count = calloc((size_t)n + 1, sizeof *s->valid_count);
  if (!problem && (!s->cols || !s->valid_count)) problem = "out of memory";
  for (int32_t k = 0; !problem && k < s->K; k++) {
    s->cols[k] = obs_cols(demo, s->names[k]);
    if (s->cols[k] < 0) problem = "a stream named in 'streams' has no obs/<name> [T,D] dataset";
    for (int64_t t = 0; t < s->T; t++) s->valid_count[k] += valid[t * vk + k] != 0;
  }
  free(valid);
  H5Gclose(demo);
  return problem;
}

robocache_status rc_io_read_hdf5_summary(const char *path, rc_io_h5_summary *s, rc_io_err *err) {
  memset(s, 0, sizeof *s);
  return rc_h5_read_file(path, "align", read_demo, s, err);
}

static const char *read_layout(hid_t file, void *layout) {
  *(char **)layout = rc_h5_attr_read_string(file, "layout");
  return NULL;
}

char *rc_io_read_hdf5_layout(const char *path) {
  char *layout = NULL;
  rc_h5_read_file(path, "", read_layout, &layout, NULL);
  return layout;
}

void rc_io_h5_summary_free(rc_io_h5_summary *s) {
  for (int32_t k = 0; s->names && k < s->K; k++) free(s->names[k]);
  free(s->names);
  free(s->cols);
  free(s->valid_count);
  free(s->timestamps_ns);
  free(s->version);
  free(s->target);
  memset(s, 0, sizeof *s);
}
