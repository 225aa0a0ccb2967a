/* libFuzzer target: the PLY reader (ascii, binary_little_endian; the vertex
 * element; src/io pointcloud.h) on a file holding the input. Properties:
 * pointcloud_checks.h. */
#include "pointcloud_checks.h"
#include "tmpfile_support.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  rcf_read_pointcloud(rcf_write_temp(data, size, ".ply"), 0);
  return 0;
}
