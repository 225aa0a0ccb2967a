// PCL baseline of bench/bench_voxel_downsample.py: times pcl::VoxelGrid<pcl::PointXYZ>
// (single-threaded, PCL's defaults: every voxel with >= 1 point kept, all fields
// averaged, output sorted by voxel index) on raw clouds of float32 x y z rows.
//
//   pcl_voxelgrid LEAF REPEAT FILE...
//
// Each FILE is one cloud ([n, 3] float32, little endian, as the driver writes
// them from data/pointclouds). One timed call = one filter() per cloud, clouds
// one after another (as a batch in robocache); a warm-up call first, then
// REPEAT timed calls. Prints one JSON line: leaf_m, points_in, points_out (sum
// over the clouds), median_ms, p10_ms, p90_ms, pcl_version.
//
// Built by the driver: g++ -O2 -std=c++17 pcl_voxelgrid.cpp
//   $(pkg-config --cflags --libs pcl_filters) (libpcl-dev: bench/install-bench-deps.sh).
#include <pcl/filters/voxel_grid.h>
#include <pcl/pcl_config.h>
#include <pcl/point_types.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

using Cloud = pcl::PointCloud<pcl::PointXYZ>;

static Cloud::Ptr read_xyz(const char *path) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) {
    std::fprintf(stderr, "pcl_voxelgrid: cannot open %s\n", path);
    std::exit(2);
  }
  const std::streamsize bytes = f.tellg();
  if (bytes % 12 != 0) {
    std::fprintf(stderr, "pcl_voxelgrid: %s: %lld bytes is not a multiple of 12 (x y z float32)\n",
                 path, static_cast<long long>(bytes));
    std::exit(2);
  }
  std::vector<float> xyz(static_cast<size_t>(bytes / 4));
  f.seekg(0);
  f.read(reinterpret_cast<char *>(xyz.data()), bytes);
  Cloud::Ptr cloud(new Cloud);
  cloud->resize(xyz.size() / 3);
  for (size_t i = 0; i < cloud->size(); i++)
    (*cloud)[i] = pcl::PointXYZ(xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2]);
  cloud->is_dense = false; // finite points only are used, as in robocache
  return cloud;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: pcl_voxelgrid LEAF REPEAT FILE...\n");
    return 2;
  }
  const float leaf = std::strtof(argv[1], nullptr);
  const int repeat = std::atoi(argv[2]);
  if (!(leaf > 0.0f) || repeat < 1) {
    std::fprintf(stderr, "pcl_voxelgrid: need LEAF > 0 and REPEAT >= 1\n");
    return 2;
  }
  std::vector<Cloud::Ptr> clouds;
  size_t points_in = 0;
  for (int i = 3; i < argc; i++) {
    clouds.push_back(read_xyz(argv[i]));
    points_in += clouds.back()->size();
  }
  pcl::VoxelGrid<pcl::PointXYZ> grid;
  grid.setLeafSize(leaf, leaf, leaf);
  Cloud out;
  size_t points_out = 0;
  std::vector<double> ms;
  for (int r = 0; r <= repeat; r++) { // r == 0: warm-up
    const auto t0 = std::chrono::steady_clock::now();
    points_out = 0;
    for (const auto &c : clouds) {
      grid.setInputCloud(c);
      grid.filter(out);
      points_out += out.size();
    }
    const std::chrono::duration<double, std::milli> dt = std::chrono::steady_clock::now() - t0;
    if (r > 0) ms.push_back(dt.count());
  }
  std::sort(ms.begin(), ms.end());
  const size_t n = ms.size();
  std::printf("{\"leaf_m\": %g, \"points_in\": %zu, \"points_out\": %zu, \"median_ms\": %.6f, "
              "\"p10_ms\": %.6f, \"p90_ms\": %.6f, \"pcl_version\": \"%s\"}\n",
              static_cast<double>(leaf), points_in, points_out, ms[n / 2], ms[n / 10],
              ms[std::min(n - 1, n * 9 / 10)], PCL_VERSION_PRETTY);
  return 0;
}
