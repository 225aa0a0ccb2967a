/* Built-in voxelization presets (values of the mmdet3d / OpenPCDet configs
 * of the same name; DESIGN §1.3). */
#include "robocache.h"

#include <string.h>

static const robocache_voxel_preset rc_voxel_presets[] = {
    {"second-kitti",
     {0.05f, 0.05f, 0.1f},
     {0.0f, -40.0f, -3.0f, 70.4f, 40.0f, 1.0f},
     5,
     16000,
     40000},
    {"pointpillars-kitti",
     {0.16f, 0.16f, 4.0f},
     {0.0f, -39.68f, -3.0f, 69.12f, 39.68f, 1.0f},
     32,
     16000,
     40000},
    {"centerpoint-nus",
     {0.1f, 0.1f, 0.2f},
     {-51.2f, -51.2f, -5.0f, 51.2f, 51.2f, 3.0f},
     10,
     90000,
     120000},
};

#define RC_NUM_PRESETS ((int32_t)(sizeof rc_voxel_presets / sizeof rc_voxel_presets[0]))

const robocache_voxel_preset *robocache_voxel_preset_at(int32_t i) {
  return i >= 0 && i < RC_NUM_PRESETS ? &rc_voxel_presets[i] : NULL;
}

const robocache_voxel_preset *robocache_voxel_preset_find(const char *name) {
  if (!name) return NULL;
  for (int32_t i = 0; i < RC_NUM_PRESETS; i++)
    if (strcmp(rc_voxel_presets[i].name, name) == 0) return &rc_voxel_presets[i];
  return NULL;
}
