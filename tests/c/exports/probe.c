/* A shared object that pulls the voxelization and alignment code (and, in a
 * CUDA build, its kernels) out of the static library: check_exports.cmake
 * lists what it exports. */
#include "robocache.h"

__attribute__((visibility("default"))) int robocache_export_probe(void) {
  return robocache_voxelize_hard_packed(NULL, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, NULL,
                                        NULL) == ROBOCACHE_OK ||
         robocache_align(NULL, NULL, 0, NULL, NULL, NULL, NULL) == ROBOCACHE_OK;
}
