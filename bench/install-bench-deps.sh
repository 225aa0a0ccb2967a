#!/usr/bin/env bash
# Installs the benchmark-only dependencies (not needed to build or test robocache,
# not run by CI): PCL for bench/pcl_voxelgrid.cpp (the VoxelGrid baseline, built by
# bench/bench_voxel_downsample.py with g++ and pkg-config), Open3D (CPU wheel) for
# the voxel_down_sample baseline; libusb-1.0-0 is a runtime library the Open3D wheel
# loads on Debian. Run scripts/install-deps.sh first. Safe to run again.
set -euo pipefail

bash "$(dirname "$0")/../scripts/apt-install.sh" g++ pkg-config libpcl-dev libusb-1.0-0
python3 -m pip install -q --disable-pip-version-check open3d-cpu
