/* Reads back the summary of a "robocache-voxels/1" file for `robocache
 * info`. */
#include "h5_attrs_hdf5.h"
#include "h5_file_hdf5.h"
#include "voxel_io.h"
#include "voxel_stats_hdf5.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The arrays a mode may write, in the order info lists them. */
static const char *const rc_voxel_arrays[] = {"grid",       "voxels", "coords", "num_points",
                                              "num_voxels", "points", "offsets"};

/* NumPy's name of an HDF5 integer or float type ("" for any other). */
static void dtype_name(hid_t type, char *name, size_t len) {
  const H5T_class_t cls = H5Tget_class(type);
  const int bits = (int)H5Tget_size(type) * 8;
  if (cls == H5T_FLOAT)
    snprintf(name, len, "float%d", bits);
  else if (cls == H5T_INTEGER)
    snprintf(name, len, "%sint%d", H5Tget_sign(type) == H5T_SGN_NONE ? "u" : "", bits);
  else
    snprintf(name, len, "%s", "");
}

/* Shape and dtype of dataset file/name; 0 when it exists, -1 otherwise. */
static int dataset_info(hid_t file, const char *name, rc_io_h5_dataset *d) {
  if (H5Lexists(file, name, H5P_DEFAULT) <= 0) return -1;
  hid_t ds = H5Dopen2(file, name, H5P_DEFAULT);
  hid_t space = ds < 0 ? -1 : H5Dget_space(ds);
  hid_t type = ds < 0 ? -1 : H5Dget_type(ds);
  hsize_t dims[5];
  int rank = space < 0 ? -1 : H5Sget_simple_extent_ndims(space);
  if (rank >= 0 && rank <= 5) rank = H5Sget_simple_extent_dims(space, dims, NULL);
  if (rank >= 0 && rank <= 5 && type >= 0) {
    d->name = name;
    d->ndim = rank;
    for (int i = 0; i < rank; i++) d->shape[i] = (int64_t)dims[i];
    dtype_name(type, d->dtype, sizeof d->dtype);
  }
  if (type >= 0) H5Tclose(type);
  if (space >= 0) H5Sclose(space);
  if (ds >= 0) H5Dclose(ds);
  return rank >= 0 && rank <= 5 && type >= 0 ? 0 : -1;
}

/* Reads the float32 vector file/name of n elements into v; -1 when missing or
 * of another type or shape. */
static int read_floats(hid_t file, const char *name, int64_t n, float *v) {
  hsize_t dims[1];
  hid_t ds = rc_h5_open_dataset(file, name, H5T_FLOAT, 4, 1, dims);
  herr_t r = ds < 0 || (int64_t)dims[0] != n
                 ? -1
                 : H5Dread(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
  if (ds >= 0) H5Dclose(ds);
  return r < 0 ? -1 : 0;
}

static const char *read_voxels(hid_t file, void *arg) {
  rc_io_voxel_summary *s = arg;
  char *layout = rc_h5_attr_read_string(file, "layout");
  const int ours = layout && strcmp(layout, RC_IO_VOXEL_LAYOUT) == 0;
  free(layout);
  if (!ours) return "no root attribute layout = '" RC_IO_VOXEL_LAYOUT "'";
  s->version = rc_h5_attr_read_string(file, "robocache_version");
  s->mode = rc_h5_attr_read_string(file, "mode");
  s->preset = rc_h5_attr_read_string(file, "preset");
  if (!s->mode || !s->preset) return "no root attributes mode and preset";
  if (rc_h5_attr_read_strings(file, "sources", &s->sources, &s->num_sources) < 0 ||
      rc_h5_attr_read_strings(file, "columns", &s->columns, &s->num_columns) < 0)
    return "no root attributes sources and columns";
  for (int i = 0; i < RC_IO_VOXEL_NSTATS; i++)
    if (rc_h5_attr_read_i64(file, rc_io_voxel_stats[i].name, rc_io_voxel_stat_at(&s->stats, i)) < 0)
      return "a robocache_voxel_stats counter attribute is missing or not one integer";
  if (read_floats(file, "voxel_size", 3, s->voxel_size) < 0)
    return "no float32 dataset /voxel_size [3]";
  s->has_range = H5Lexists(file, "point_cloud_range", H5P_DEFAULT) > 0;
  if (s->has_range && read_floats(file, "point_cloud_range", 6, s->point_cloud_range) < 0)
    return "/point_cloud_range is not float32 [6]";
  for (size_t i = 0; i < sizeof rc_voxel_arrays / sizeof *rc_voxel_arrays; i++)
    if (dataset_info(file, rc_voxel_arrays[i], &s->datasets[s->num_datasets]) == 0)
      s->num_datasets++;
  return s->num_datasets > 0 ? NULL : "no voxel arrays (grid, voxels, points, ...)";
}

/* The summary's fixed-size fields, sent as they are (the datasets' names
 * point to rc_voxel_arrays, at the same address in the child), then its
 * strings. */
#define RC_FIELD(f)                                                                                \
  { offsetof(rc_io_voxel_summary, f), sizeof(((rc_io_voxel_summary *)0)->f) }
static const struct {
  size_t offset, size;
} rc_voxel_fields[] = {RC_FIELD(voxel_size), RC_FIELD(point_cloud_range), RC_FIELD(has_range),
                       RC_FIELD(stats),      RC_FIELD(num_datasets),      RC_FIELD(datasets)};
#undef RC_FIELD
enum { RC_VOXEL_FIELDS = sizeof rc_voxel_fields / sizeof *rc_voxel_fields };

static void pack_voxels(const void *arg, rc_h5_wire *w) {
  const rc_io_voxel_summary *s = arg;
  for (int i = 0; i < RC_VOXEL_FIELDS; i++)
    rc_h5_put(w, (const char *)s + rc_voxel_fields[i].offset, rc_voxel_fields[i].size);
  rc_h5_put_str(w, s->version);
  rc_h5_put_str(w, s->mode);
  rc_h5_put_str(w, s->preset);
  rc_h5_put_strs(w, s->sources, s->num_sources);
  rc_h5_put_strs(w, s->columns, s->num_columns);
}

static void unpack_voxels(rc_h5_wire *w, void *arg) {
  rc_io_voxel_summary *s = arg;
  for (int i = 0; i < RC_VOXEL_FIELDS; i++)
    rc_h5_get(w, (char *)s + rc_voxel_fields[i].offset, rc_voxel_fields[i].size);
  s->version = rc_h5_get_str(w);
  s->mode = rc_h5_get_str(w);
  s->preset = rc_h5_get_str(w);
  s->sources = rc_h5_get_strs(w, &s->num_sources);
  s->columns = rc_h5_get_strs(w, &s->num_columns);
}

static const rc_h5_reader voxel_reader = {"voxelize", read_voxels, pack_voxels, unpack_voxels};

robocache_status rc_io_read_voxel_summary(const char *path, rc_io_voxel_summary *s,
                                          rc_io_err *err) {
  memset(s, 0, sizeof *s);
  return rc_h5_read_file(path, &voxel_reader, s, err);
}

static void free_strings(char **v, int64_t n) {
  for (int64_t i = 0; v && i < n; i++) free(v[i]);
  free(v);
}

void rc_io_voxel_summary_free(rc_io_voxel_summary *s) {
  free(s->version);
  free(s->mode);
  free(s->preset);
  free_strings(s->sources, s->num_sources);
  free_strings(s->columns, s->num_columns);
  memset(s, 0, sizeof *s);
}
