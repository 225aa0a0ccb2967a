/* The DLPack ABI (https://dmlc.github.io/dlpack/latest/c_api.html), the
 * subset robocache's Python module exchanges: tensors, the legacy managed
 * tensor (capsule "dltensor") and the versioned one, DLPack 1.x (capsule
 * "dltensor_versioned"). Field order and sizes are fixed by the ABI; the
 * names here are our own. */
#ifndef ROBOCACHE_PY_DLPACK_H
#define ROBOCACHE_PY_DLPACK_H

#include <stdint.h>

/* Device types used by robocache (DLDeviceType values). */
enum { RCDL_CPU = 1, RCDL_CUDA = 2, RCDL_CUDA_HOST = 3, RCDL_CUDA_MANAGED = 13 };

/* Type codes (DLDataTypeCode values). */
enum { RCDL_INT = 0, RCDL_UINT = 1, RCDL_FLOAT = 2, RCDL_BFLOAT = 4, RCDL_BOOL = 6 };

/* Versioned-tensor flags. */
#define RCDL_FLAG_READ_ONLY ((uint64_t)1)
#define RCDL_FLAG_IS_COPIED ((uint64_t)2)

/* The DLPack version robocache speaks (major must match to be read). */
#define RCDL_MAJOR 1
#define RCDL_MINOR 0

typedef struct rcdl_device {
  int32_t device_type; /* an enum in the ABI: int-sized */
  int32_t device_id;
} rcdl_device;

typedef struct rcdl_dtype {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} rcdl_dtype;

typedef struct rcdl_tensor {
  void *data;
  rcdl_device device;
  int32_t ndim;
  rcdl_dtype dtype;
  int64_t *shape;
  int64_t *strides; /* in elements; NULL = C-contiguous */
  uint64_t byte_offset;
} rcdl_tensor;

/* Capsule "dltensor". */
typedef struct rcdl_managed {
  rcdl_tensor dl_tensor;
  void *manager_ctx;
  void (*deleter)(struct rcdl_managed *self);
} rcdl_managed;

typedef struct rcdl_version {
  uint32_t major;
  uint32_t minor;
} rcdl_version;

/* Capsule "dltensor_versioned". */
typedef struct rcdl_managed_versioned {
  rcdl_version version;
  void *manager_ctx;
  void (*deleter)(struct rcdl_managed_versioned *self);
  uint64_t flags;
  rcdl_tensor dl_tensor;
} rcdl_managed_versioned;

#endif
