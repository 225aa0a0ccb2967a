/* libFuzzer target: the headerless float32 point-cloud reader (KITTI .bin,
 * nuScenes .pcd.bin; src/io pointcloud.h). Byte 0 picks the column count
 * (0..65, 0 = from the name) and the name (.bin or .pcd.bin); the rest is
 * the file. Properties: pointcloud_checks.h, and every row of the file
 * accounted for (points in the file x columns x 4 = its size). */
#include "pointcloud_checks.h"
#include "tmpfile_support.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  const int32_t cols = (int32_t)(data[0] % 66);
  const char *path = rcf_write_temp(data + 1, size - 1, data[0] & 0x80 ? ".pcd.bin" : ".bin");
  const int64_t points = rcf_read_pointcloud(path, cols);
  const size_t row = 4 * (size_t)(cols ? cols : data[0] & 0x80 ? 5 : 4);
  RCF_CHECK(points < 0 || (size_t)points * row == size - 1);
  return 0;
}
