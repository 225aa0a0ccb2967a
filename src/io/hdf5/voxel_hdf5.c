/* HDF5 writer of voxelization results (layout "robocache-voxels/1",
 * voxel_io.h). */
#include "h5_attrs_hdf5.h"
#include "h5_file_hdf5.h"
#include "voxel_io.h"
#include "voxel_stats_hdf5.h"

#define STAT(field)                                                                                \
  { #field, offsetof(robocache_voxel_stats, field) }
const rc_io_voxel_stat rc_io_voxel_stats[RC_IO_VOXEL_NSTATS] = {STAT(points_in),
                                                                STAT(points_in_range),
                                                                STAT(points_dropped_range),
                                                                STAT(points_dropped_nonfinite),
                                                                STAT(voxels_nonempty),
                                                                STAT(points_dropped_max_points),
                                                                STAT(voxels_dropped_max_voxels),
                                                                STAT(points_dropped_max_voxels)};
#undef STAT

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
  robocache_voxel_stats s = *o->stats;
  herr_t r = rc_h5_root_attrs(file, o->command_line, RC_IO_VOXEL_LAYOUT);
  r |= rc_h5_attr_string(file, "mode", o->mode);
  r |= rc_h5_attr_string(file, "preset", o->preset ? o->preset : "");
  r |= rc_h5_attr_strings(file, "sources", o->sources, o->num_sources);
  r |= rc_h5_attr_strings(file, "columns", o->columns, o->num_columns);
  for (int i = 0; i < RC_IO_VOXEL_NSTATS; i++)
    r |= rc_h5_attr_i64(file, rc_io_voxel_stats[i].name, *rc_io_voxel_stat_at(&s, i));
  return r < 0 ? -1 : 0;
}

static herr_t write_contents(hid_t file, const void *arg, const char **what) {
  const rc_io_voxel_output *o = arg;
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
  return rc_h5_write_file(o->path, write_contents, o, err);
}
