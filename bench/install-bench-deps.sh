#!/usr/bin/env bash
# Installs the benchmark-only dependencies (not needed to build or test robocache,
# not run by CI): PCL for bench/pcl_voxelgrid.cpp (the VoxelGrid baseline, built by
# bench/bench_voxel_downsample.py with g++ and pkg-config), Open3D (CPU wheel) for
# the voxel_down_sample baseline; libusb-1.0-0 is a runtime library the Open3D wheel
# loads on Debian. Run scripts/install-deps.sh first. Safe to run again.
set -euo pipefail

APT_PACKAGES=(g++ pkg-config libpcl-dev libusb-1.0-0)
PIP_PACKAGES=(open3d-cpu)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

python3 -m pip install -q --disable-pip-version-check "${PIP_PACKAGES[@]}"
