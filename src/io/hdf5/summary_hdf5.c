/* Reads back the summary of a robocache HDF5 file for `robocache info`. */
#include "h5_attrs_hdf5.h"
#include "h5_file_hdf5.h"
#include "hdf5_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reads dataset loc/name, checked first by rc_h5_open_dataset (class, element
 * size, rank, storage within the file), into a malloc'd buffer; dims[rank]. */
static void *read_dataset(hid_t loc, const char *name, H5T_class_t cls, hid_t mem_type, int rank,
                          hsize_t *dims) {
  const size_t size = H5Tget_size(mem_type);
  hid_t d = rc_h5_open_dataset(loc, name, cls, size, rank, dims);
  if (d < 0) return NULL;
  size_t n = 1;
  for (int i = 0; i < rank; i++) n *= (size_t)dims[i]; /* bounded by the file size */
  void *buf = malloc(n * size + 1);
  if (buf && n > 0 && H5Dread(d, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
    free(buf);
    buf = NULL;
  }
  H5Dclose(d);
  return buf;
}

/* Columns of obs/<name> when it is float32 [T, D], else -1. */
static int64_t obs_cols(hid_t demo, const char *name, int64_t T) {
  char path[512];
  snprintf(path, sizeof path, "obs/%s", name);
  hsize_t dims[2];
  if (strchr(name, '/') || H5Lexists(demo, "obs", H5P_DEFAULT) <= 0) return -1;
  hid_t d = rc_h5_open_dataset(demo, path, H5T_FLOAT, 4, 2, dims);
  if (d < 0) return -1;
  H5Dclose(d);
  return (int64_t)dims[0] == T ? (int64_t)dims[1] : -1;
}

static const char *read_demo(hid_t file, void *arg) {
  rc_io_h5_summary *s = arg;
  char *layout = rc_h5_attr_read_string(file, "layout");
  const int ours = layout && strcmp(layout, "robocache-align/1") == 0;
  free(layout);
  if (!ours) return "no root attribute layout = 'robocache-align/1'";
  s->version = rc_h5_attr_read_string(file, "robocache_version");
  if (H5Lexists(file, "data", H5P_DEFAULT) <= 0 || H5Lexists(file, "data/demo_0", H5P_DEFAULT) <= 0)
    return "no group /data/demo_0";
  hid_t demo = H5Gopen2(file, "data/demo_0", H5P_DEFAULT);
  if (demo < 0) return "cannot open /data/demo_0";
  const char *problem = NULL;
  hsize_t td[1] = {0}, vd[2] = {0, 0};
  s->target = rc_h5_attr_read_string(demo, "target");
  s->timestamps_ns = read_dataset(demo, "timestamps", H5T_INTEGER, H5T_NATIVE_INT64, 1, td);
  uint8_t *valid = read_dataset(demo, "valid", H5T_INTEGER, H5T_NATIVE_UINT8, 2, vd);
  s->T = (int64_t)td[0];
  int64_t n = 0, vk = (int64_t)vd[1];
  if (!s->timestamps_ns)
    problem = "no int64 dataset /data/demo_0/timestamps [T]";
  else if (!valid || (int64_t)vd[0] != s->T || vk > RC_H5_MAX_STRINGS)
    problem = "no uint8 dataset /data/demo_0/valid [T,K]";
  else if (H5Aexists_by_name(demo, "valid", "streams", H5P_DEFAULT) <= 0)
    problem = "/data/demo_0/valid has no attribute 'streams'";
  if (!problem) {
    hid_t d = H5Dopen2(demo, "valid", H5P_DEFAULT);
    if (d < 0 || rc_h5_attr_read_strings(d, "streams", &s->names, &n) < 0)
      problem = "attribute 'streams' of /data/demo_0/valid is not a list of strings";
    else if (n != vk)
      problem = "attribute 'streams' of /data/demo_0/valid does not list K names";
    if (d >= 0) H5Dclose(d);
  }
  s->K = (int32_t)n; /* the names to free, also when they do not match */
  s->cols = calloc((size_t)n + 1, sizeof *s->cols);
  s->valid_count = calloc((size_t)n + 1, sizeof *s->valid_count);
  if (!problem && (!s->cols || !s->valid_count)) problem = "out of memory";
  for (int32_t k = 0; !problem && k < s->K; k++) {
    s->cols[k] = obs_cols(demo, s->names[k], s->T);
    if (s->cols[k] < 0) problem = "a stream named in 'streams' has no float32 obs/<name> [T,D]";
    for (int64_t t = 0; t < s->T; t++) s->valid_count[k] += valid[t * vk + k] != 0;
  }
  free(valid);
  H5Gclose(demo);
  return problem;
}

static void pack_demo(const void *arg, rc_h5_wire *w) {
  const rc_io_h5_summary *s = arg;
  rc_h5_put_array(w, s->timestamps_ns, s->T, sizeof *s->timestamps_ns);
  rc_h5_put_strs(w, s->names, s->K);
  rc_h5_put_array(w, s->cols, s->K, sizeof *s->cols);
  rc_h5_put_array(w, s->valid_count, s->K, sizeof *s->valid_count);
  rc_h5_put_str(w, s->version);
  rc_h5_put_str(w, s->target);
}

static void unpack_demo(rc_h5_wire *w, void *arg) {
  rc_io_h5_summary *s = arg;
  s->timestamps_ns = rc_h5_get_array(w, sizeof *s->timestamps_ns, &s->T);
  int64_t K, n_cols, n_valid;
  s->names = rc_h5_get_strs(w, &K);
  s->K = (int32_t)K; /* exact: K strings fit the 1 GiB a read may send */
  s->cols = rc_h5_get_array(w, sizeof *s->cols, &n_cols);
  s->valid_count = rc_h5_get_array(w, sizeof *s->valid_count, &n_valid);
  if (K > RC_H5_MAX_STRINGS || n_cols != K || n_valid != K) w->bad = 1;
  s->version = rc_h5_get_str(w);
  s->target = rc_h5_get_str(w);
}

static const rc_h5_reader demo_reader = {"align", read_demo, pack_demo, unpack_demo};

robocache_status rc_io_read_hdf5_summary(const char *path, rc_io_h5_summary *s, rc_io_err *err) {
  memset(s, 0, sizeof *s);
  return rc_h5_read_file(path, &demo_reader, s, err);
}

static const char *read_layout(hid_t file, void *layout) {
  *(char **)layout = rc_h5_attr_read_string(file, "layout");
  return NULL;
}

static void pack_layout(const void *layout, rc_h5_wire *w) {
  rc_h5_put_str(w, *(char *const *)layout);
}

static void unpack_layout(rc_h5_wire *w, void *layout) { *(char **)layout = rc_h5_get_str(w); }

static const rc_h5_reader layout_reader = {"HDF5", read_layout, pack_layout, unpack_layout};

robocache_status rc_io_read_hdf5_layout(const char *path, char **layout, rc_io_err *err) {
  *layout = NULL;
  robocache_status s = rc_h5_read_file(path, &layout_reader, layout, err);
  if (s != ROBOCACHE_OK) {
    free(*layout);
    *layout = NULL;
  }
  return s;
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
