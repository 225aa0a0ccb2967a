/* HDF5 writer of `robocache align` results (layout: hdf5_io.h). */
#include "h5_attrs_hdf5.h"
#include "h5_file_hdf5.h"
#include "hdf5_io.h"

#include <stdio.h>
#include <stdlib.h>

static const char *const rc_method_names[] = {"linear", "nearest", "previous", "next", "slerp"};
static const char *const rc_extrap_names[] = {"clamp", "fill", "extrapolate", "error"};
static const char *const rc_quat_names[] = {"xyzw", "wxyz"};

static const char *name_of(const char *const *names, int n, int32_t v) {
  return v >= 0 && v < n ? names[v] : "unknown";
}

/* A dataset of rank 1 or 2 written from mem (for rank 2, columns
 * [col, col + dims[1]) of a row-major [dims[0], mem_cols] buffer). */
static hid_t write_dataset(hid_t loc, const char *name, hid_t file_type, hid_t mem_type, int rank,
                           const hsize_t *dims, const void *mem, hsize_t mem_cols, hsize_t col) {
  hid_t fspace = H5Screate_simple(rank, dims, NULL);
  hsize_t mdims[2] = {dims[0], rank == 2 ? mem_cols : 0};
  hid_t mspace = H5Screate_simple(rank, mdims, NULL);
  hid_t d = -1;
  if (fspace >= 0 && mspace >= 0)
    d = H5Dcreate2(loc, name, file_type, fspace, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  herr_t r = d < 0 ? -1 : 0;
  if (r >= 0 && rank == 2) {
    hsize_t start[2] = {0, col};
    r = H5Sselect_hyperslab(mspace, H5S_SELECT_SET, start, NULL, dims, NULL);
  }
  if (r >= 0 && dims[0] > 0) r = H5Dwrite(d, mem_type, mspace, fspace, H5P_DEFAULT, mem);
  if (fspace >= 0) H5Sclose(fspace);
  if (mspace >= 0) H5Sclose(mspace);
  if (r < 0 && d >= 0) {
    H5Dclose(d);
    d = -1;
  }
  return d;
}

static herr_t stream_attrs(hid_t d, const rc_io_h5_stream *s, int32_t k) {
  const robocache_interp_options *o = s->options;
  herr_t r = 0;
  r |= rc_h5_attr_string(d, "method", name_of(rc_method_names, 5, o->method));
  r |= rc_h5_attr_string(d, "extrapolate", name_of(rc_extrap_names, 4, o->extrapolate));
  r |= rc_h5_attr_f64(d, "fill_value", o->fill_value);
  r |= rc_h5_attr_i64(d, "max_gap_ns", o->max_gap_ns);
  r |= rc_h5_attr_i64(d, "tolerance_ns", o->tolerance_ns);
  r |= rc_h5_attr_i64(d, "time_offset_ns", o->time_offset_ns);
  r |= rc_h5_attr_string(d, "quat_order", name_of(rc_quat_names, 2, o->quat_order));
  r |= rc_h5_attr_string(d, "source_file", s->source_file);
  r |= rc_h5_attr_string(d, "source_format", s->source_format);
  r |= rc_h5_attr_strings(d, "columns", s->columns, s->cols);
  r |= rc_h5_attr_string(d, "time_column", s->time_column);
  r |= rc_h5_attr_i64(d, "valid_column", k);
  return r < 0 ? -1 : 0;
}

static herr_t root_attrs(hid_t file, const rc_io_h5_output *o) {
  char h5ver[32];
  unsigned maj, min, rel;
  H5get_libversion(&maj, &min, &rel);
  snprintf(h5ver, sizeof h5ver, "%u.%u.%u", maj, min, rel);
  herr_t r = rc_h5_root_attrs(file, o->command_line, "robocache-align/1");
  r |= rc_h5_attr_string(file, "hdf5_version", h5ver);
  return r < 0 ? -1 : 0;
}

static hid_t group(hid_t loc, const char *name) {
  return H5Gcreate2(loc, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
}

/* Everything below the root of an open file; a description of the failing
 * part in *what. */
static herr_t write_contents(hid_t file, const void *arg, const char **what) {
  const rc_io_h5_output *o = arg;
  *what = "root attributes";
  if (root_attrs(file, o) < 0) return -1;
  *what = "group /data/demo_0";
  hid_t data = group(file, "data");
  hid_t demo = data < 0 ? -1 : group(data, "demo_0");
  hid_t obs = demo < 0 ? -1 : group(demo, "obs");
  herr_t r = obs < 0 ? -1 : 0;
  if (r >= 0)
    r = rc_h5_attr_i64(data, "total", o->T) | rc_h5_attr_i64(demo, "num_samples", o->T) |
        rc_h5_attr_string(demo, "target", o->target ? o->target : "");
  hsize_t dims[2] = {(hsize_t)o->T, (hsize_t)o->K};
  if (r >= 0) {
    *what = "/data/demo_0/timestamps";
    hid_t d = write_dataset(demo, "timestamps", H5T_STD_I64LE, H5T_NATIVE_INT64, 1, dims,
                            o->timestamps_ns, 0, 0);
    r = d < 0 ? -1 : rc_h5_attr_string(d, "units", "ns");
    if (d >= 0) H5Dclose(d);
  }
  if (r >= 0) {
    *what = "/data/demo_0/valid";
    hid_t d = write_dataset(demo, "valid", H5T_STD_U8LE, H5T_NATIVE_UINT8, 2, dims, o->valid,
                            (hsize_t)o->K, 0);
    const char **names = malloc((size_t)o->K * sizeof *names);
    for (int32_t k = 0; names && k < o->K; k++) names[k] = o->streams[k].name;
    r = d < 0 || !names ? -1 : rc_h5_attr_strings(d, "streams", names, o->K);
    free(names);
    if (d >= 0) H5Dclose(d);
  }
  hsize_t col = 0;
  for (int32_t k = 0; r >= 0 && k < o->K; k++) {
    const rc_io_h5_stream *s = &o->streams[k];
    *what = s->name;
    hsize_t sd[2] = {(hsize_t)o->T, (hsize_t)s->cols};
    hid_t d = write_dataset(obs, s->name, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, 2, sd, o->obs,
                            (hsize_t)o->total_cols, col);
    r = d < 0 ? -1 : stream_attrs(d, s, k);
    if (d >= 0) H5Dclose(d);
    col += (hsize_t)s->cols;
  }
  if (obs >= 0) H5Gclose(obs);
  if (demo >= 0) H5Gclose(demo);
  if (data >= 0) H5Gclose(data);
  return r;
}

robocache_status rc_io_write_hdf5(const rc_io_h5_output *o, rc_io_err *err) {
  return rc_h5_write_file(o->path, write_contents, o, err);
}
