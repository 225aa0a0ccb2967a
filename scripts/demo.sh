#!/usr/bin/env bash
# robocache demo: aligns the EuRoC MAV V1_01_easy flight in data/sensors/ —
# IMU (200 Hz, 6 channels, linear) and ground-truth pose (200 Hz; position
# linear, quaternion slerp) — (a) onto the cam0 frame times (20 Hz) and (b) onto
# a uniform 50 Hz grid over the streams' overlap. Writes two HDF5 files
# (layout: docs/hdf5-layout.md) and prints their summaries on stderr.
#
# Usage: bash scripts/demo.sh [ROBOCACHE_BIN] [OUT_DIR]   (defaults build/robocache, out)
set -euo pipefail

bin=${1:-build/robocache}
out=${2:-out}
root="$(cd "$(dirname "$0")/.." && pwd)"
data="$root/data/sensors"
[ "$root" = "$PWD" ] && data=data/sensors # shorter paths in the summary and HDF5 attributes
mkdir -p "$out"

imu="$data/euroc_V1_01_easy_imu0.csv"
gt="$data/euroc_V1_01_easy_groundtruth_200hz.txt"
cam="$data/euroc_V1_01_easy_cam0_timestamps.txt"

streams=(
  --stream "imu=$imu,format=euroc,method=linear,max-gap=20ms"
  --stream "position=$gt,format=tum,columns=tx:ty:tz,method=linear"
  --stream "orientation=$gt,format=tum,columns=qx:qy:qz:qw,method=slerp,quat-order=xyzw"
)

echo "== (a) IMU + ground-truth pose onto the cam0 frame times (20 Hz)" >&2
"$bin" align "${streams[@]}" --target-file "$cam,format=timestamps" \
  -o "$out/euroc_V1_01_easy_cam0.h5"

echo >&2
echo "== (b) IMU + ground-truth pose onto a uniform 50 Hz grid over the overlap" >&2
"$bin" align "${streams[@]}" --rate 50 -o "$out/euroc_V1_01_easy_50hz.h5"

echo >&2
echo "== the outputs" >&2
"$bin" info "$out/euroc_V1_01_easy_cam0.h5" "$out/euroc_V1_01_easy_50hz.h5" >&2
