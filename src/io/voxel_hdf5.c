/* HDF5 writer of voxelization results (layout "robocache-voxels/1",
 * voxel_io.h). */
#define _POSIX_C_SOURCE 200809L
#include "h5_attrs_hdf5.h"
#include "voxel_io.h"

#include <stdio.h>
#include <time.h>

static hid_t h5_type(int32_t dtype, int native) {
  switch (dtype) {
  case ROBOCACHE_DTYPE_F32: return native ? H5T_NATIVE_FLOAT : H5T_IEEE_F32LE;
  case ROBOCACHE_DTYPE_I32: return native ? H5T_NATIVE_INT32 : H5T_STD_I32LE;
  case ROBOCACHE_DTYPE_I64: return native ? H5T_NATIVE_INT64 : H5T_STD_I64LE;
  case ROBOCACHE_DTYPE_U8: return native ? H5T_NATIVE_UINT8 : H5T_STD_U8LE;
  }
  return -1;
}

static herr_t write_array(hid_t file, const rc_io_array *a) {
  hsize_t dims[5];
  size_t count = 1;
  for (int i = 0; i < a->ndim; i++) {
    dims[i] = (hsize_t)a->shape[i];
    count *= (size_t)a->shape[i];
  }
  hid_t space = H5Screate_simple(a->ndim, dims, NULL);
  if (space < 0) return -1;
  hid_t d =
      H5Dcreate2(file, a->name, h5_type(a->dtype, 0), space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  herr_t r = d < 0 ? -1 : 0;
  if (r >= 0 && count > 0)
    r = H5Dwrite(d, h5_type(a->dtype, 1), H5S_ALL, H5S_ALL, H5P_DEFAULT, a->data);
  if (d >= 0) H5Dclose(d);
  H5Sclose(space);
  return r;
}

static herr_t root_attrs(hid_t file, const rc_io_voxel_output *o) {
  char created[32] = "unknown";
  time_t now = time(NULL);
  struct tm tm;
  if (gmtime_r(&now, &tm)) strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", &tm);
  const robocache_voxel_stats *s = o->stats;
  herr_t r = 0;
  r |= rc_h5_attr_string(file, "robocache_version", robocache_version_string());
  r |= rc_h5_attr_string(file, "command_line", o->command_line ? o->command_line : "");
  r |= rc_h5_attr_string(file, "created", created);
  r |= rc_h5_attr_string(file, "layout", "robocache-voxels/1");
  r |= rc_h5_attr_string(file, "mode", o->mode);
  r |= rc_h5_attr_string(file, "preset", o->preset ? o->preset : "");
  r |= rc_h5_attr_strings(file, "sources", o->sources, o->num_sources);
  r |= rc_h5_attr_strings(file, "columns", o->columns, o->num_columns);
  r |= rc_h5_attr_i64(file, "points_in", s->points_in);
  r |= rc_h5_attr_i64(file, "points_in_range", s->points_in_range);
  r |= rc_h5_attr_i64(file, "points_dropped_range", s->points_dropped_range);
  r |= rc_h5_attr_i64(file, "points_dropped_nonfinite", s->points_dropped_nonfinite);
  r |= rc_h5_attr_i64(file, "voxels_nonempty", s->voxels_nonempty);
  r |= rc_h5_attr_i64(file, "points_dropped_max_points", s->points_dropped_max_points);
  r |= rc_h5_attr_i64(file, "voxels_dropped_max_voxels", s->voxels_dropped_max_voxels);
  r |= rc_h5_attr_i64(file, "points_dropped_max_voxels", s->points_dropped_max_voxels);
  return r < 0 ? -1 : 0;
}

static herr_t write_contents(hid_t file, const rc_io_voxel_output *o, const char **what) {
  *what = "root attributes";
  if (root_attrs(file, o) < 0) return -1;
  rc_io_array grid[2] = {{"voxel_size", ROBOCACHE_DTYPE_F32, 1, {3}, o->voxel_size},
                         {"point_cloud_range", ROBOCACHE_DTYPE_F32, 1, {6}, o->point_cloud_range}};
  for (int i = 0; i < (o->point_cloud_range ? 2 : 1); i++) {
    *what = grid[i].name;
    if (write_array(file, &grid[i]) < 0) return -1;
  }
  for (int32_t i = 0; i < o->num_arrays; i++) {
    *what = o->arrays[i].name;
    if (write_array(file, &o->arrays[i]) < 0) return -1;
  }
  return 0;
}

robocache_status rc_io_write_voxels_hdf5(const rc_io_voxel_output *o, rc_io_err *err) {
  char *tmp = rc_io_temp_create(o->path, err);
  if (!tmp) return err ? err->status : ROBOCACHE_IO_ERROR;
  H5E_auto2_t old_fn;
  void *old_data;
  H5Eget_auto2(H5E_DEFAULT, &old_fn, &old_data);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* the library never prints */
  const char *what = "the file";
  hid_t file = H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  herr_t r = file < 0 ? -1 : write_contents(file, o, &what);
  if (file >= 0 && H5Fclose(file) < 0) r = -1;
  H5Eset_auto2(H5E_DEFAULT, old_fn, old_data);
  if (r < 0) {
    rc_io_fail(err, ROBOCACHE_IO_ERROR, "cannot write '%s': HDF5 error while writing %s", o->path,
               what);
    rc_io_temp_commit(tmp, o->path, 0, NULL);
    return ROBOCACHE_IO_ERROR;
  }
  return rc_io_temp_commit(tmp, o->path, 1, err);
}
