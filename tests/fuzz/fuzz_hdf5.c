/* libFuzzer target: what `robocache info` reads of an HDF5 file (src/io
 * hdf5_io.h, voxel_io.h): the layout attribute, the align summary and the
 * voxelize summary, on a file holding the input. Each read runs first in a
 * child process (h5_file_hdf5.h), where libhdf5 may crash or stall on a
 * damaged file for up to 10 s: run with -timeout above that.
 * Properties of a successful read: align: K names with their [T, D] columns
 * and at most T valid targets each; voxelize: at most 7 arrays of rank 0..5
 * with non-negative shapes. */
#include "hdf5_io.h"
#include "tmpfile_support.h"
#include "voxel_io.h"

#include <stdlib.h>

static void check_align(const char *path) {
  rc_io_h5_summary s;
  rc_io_err err = {0};
  if (rc_io_read_hdf5_summary(path, &s, &err) == ROBOCACHE_OK) {
    RCF_CHECK(s.T >= 0 && s.K >= 0 && (s.T == 0 || s.timestamps_ns != NULL));
    for (int32_t k = 0; k < s.K; k++)
      RCF_CHECK(s.names[k] != NULL && s.cols[k] >= 0 && s.valid_count[k] <= s.T);
  } else {
    RCF_CHECK(err.msg[0] != '\0');
  }
  rc_io_h5_summary_free(&s);
}

static void check_voxels(const char *path) {
  rc_io_voxel_summary s;
  rc_io_err err = {0};
  if (rc_io_read_voxel_summary(path, &s, &err) == ROBOCACHE_OK) {
    RCF_CHECK(s.mode && s.preset && s.num_datasets >= 1 && s.num_datasets <= 7);
    for (int32_t i = 0; i < s.num_datasets; i++) {
      RCF_CHECK(s.datasets[i].ndim >= 0 && s.datasets[i].ndim <= 5);
      for (int32_t k = 0; k < s.datasets[i].ndim; k++) RCF_CHECK(s.datasets[i].shape[k] >= 0);
    }
  } else {
    RCF_CHECK(err.msg[0] != '\0');
  }
  rc_io_voxel_summary_free(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = rcf_write_temp(data, size, ".h5");
  char *layout;
  rc_io_err err = {0};
  if (rc_io_read_hdf5_layout(path, &layout, &err) != ROBOCACHE_OK) {
    RCF_CHECK(layout == NULL && err.msg[0] != '\0');
    return 0; /* robocache info stops here */
  }
  free(layout);
  check_align(path);
  check_voxels(path);
  return 0;
}
