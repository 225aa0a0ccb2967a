/* .npy writer (NumPy format 1.0: magic, header length, a Python dict literal
 * padded to 64 bytes, raw little-endian C-order data); the HDF5 stub of
 * builds without HDF5. */
#include "atomic_file.h"
#include "voxel_io.h"

#include <stdio.h>
#include <string.h>

static const char *descr(int32_t dtype) {
  switch (dtype) {
  case ROBOCACHE_DTYPE_F32: return "<f4";
  case ROBOCACHE_DTYPE_I32: return "<i4";
  case ROBOCACHE_DTYPE_I64: return "<i8";
  case ROBOCACHE_DTYPE_U8: return "|u1";
  }
  return NULL;
}

robocache_status rc_io_write_npy(const char *path, const rc_io_array *a, rc_io_err *err) {
  const char *d = descr(a->dtype);
  if (!d || a->ndim < 1 || a->ndim > 5)
    return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT,
                      "cannot write '%s': .npy of dtype %s with %d dimensions not supported", path,
                      robocache_dtype_name((robocache_dtype)a->dtype), (int)a->ndim);
  char header[256];
  int n = snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': False, 'shape': (", d);
  size_t count = 1;
  for (int i = 0; i < a->ndim; i++) {
    n += snprintf(header + n, sizeof header - (size_t)n, "%lld,%s", (long long)a->shape[i],
                  i + 1 < a->ndim ? " " : "");
    count *= (size_t)a->shape[i];
  }
  n += snprintf(header + n, sizeof header - (size_t)n, "), }");
  size_t total = 10 + (size_t)n + 1, pad = (64 - total % 64) % 64; /* + '\n' */
  memset(header + n, ' ', pad);
  header[n + (int)pad] = '\n';
  uint16_t hlen = (uint16_t)((size_t)n + pad + 1);
  const unsigned char pre[10] = {
      0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hlen & 255), (unsigned char)(hlen >> 8)};
  const rc_io_bytes parts[3] = {{pre, sizeof pre},
                                {header, hlen},
                                {a->data, count * robocache_dtype_size((robocache_dtype)a->dtype)}};
  return rc_io_write_atomic(path, parts, 3, err);
}

#ifndef ROBOCACHE_HAVE_HDF5
robocache_status rc_io_write_voxels_hdf5(const rc_io_voxel_output *o, rc_io_err *err) {
  return rc_io_fail(err, ROBOCACHE_IO_ERROR,
                    "cannot write '%s': this robocache was built without HDF5 (write .npy)",
                    o->path);
}
#endif
