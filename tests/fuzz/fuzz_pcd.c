/* libFuzzer target: the PCD reader (PCL Point Cloud Data: DATA ascii,
 * binary, binary_compressed; src/io pointcloud.h) on a file holding the
 * input. Properties: pointcloud_checks.h. */
#include "pointcloud_checks.h"
#include "tmpfile_support.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  rcf_read_pointcloud(rcf_write_temp(data, size, ".pcd"), 0);
  return 0;
}
