#!/usr/bin/env bash
# Same-run A/B of a change on a GPU machine: the Python package of a base
# revision against the working tree's, measured by the same benchmark scripts
# in one run (METHOD: compare versions only within a run).
#
#   git archive --prefix=base/ -o .ab/base.tar REV -- . ":!data" ":!bench/results"
#   scripts/gpu-ab.sh OUT_DIR .ab/base.tar [BENCH...]  # on the GPU machine, .ab carried
#
# (.ab/ listed in .git/info/exclude, like .gpu-deps/: see docs/cuda.md)
#
# Each tree is installed (pip --no-build-isolation, CUDA on, sm_90) into a
# folder of its own, and when bench/bench_gpu_voxel.py is a BENCH its C
# harness (bench_voxel_cuda) is built from each tree too; then, ROUNDS times
# (default 2), every BENCH (default bench/bench_gpu_align.py) runs with the
# base, then with the working tree, writing its JSON to OUT_DIR/base-R and
# OUT_DIR/new-R. The working tree's benchmark scripts are used for both, with
# the arguments in BENCH_ARGS, split at spaces (e.g. BENCH_ARGS="--cases
# B1024.*bfloat16" for bench/bench_gpu_align.py: one shape, so more rounds
# in the same time).
# Log: OUT_DIR/gpu-ab.log.
set -u -o pipefail

OUT=${1:?usage: scripts/gpu-ab.sh OUT_DIR BASE_TAR [BENCH...]}
BASE_TAR=${2:?usage: scripts/gpu-ab.sh OUT_DIR BASE_TAR [BENCH...]}
shift 2
BENCHES=("${@:-bench/bench_gpu_align.py}")
read -r -a EXTRA <<<"${BENCH_ARGS:-}"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PYTHON=${PYTHON:-python3}
ARCH=${CUDA_ARCH:-90}
WORK=${AB_WORK:-/tmp/robocache-ab}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
BASE_TAR=$(cd "$(dirname "$BASE_TAR")" && pwd)/$(basename "$BASE_TAR")
LOG="$OUT/gpu-ab.log"
exec > >(tee "$LOG") 2>&1

install_tree() { # SOURCE_DIR TARGET_DIR
  rm -rf "$2"
  "$PYTHON" -m pip install --no-build-isolation --no-deps -q --target "$2" \
    -C cmake.define.ROBOCACHE_CUDA=ON \
    -C cmake.define.CMAKE_CUDA_ARCHITECTURES="$ARCH" "$1"
}

build_voxel_harness() { # SOURCE_DIR BUILD_DIR
  cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DROBOCACHE_CUDA=ON \
    -DROBOCACHE_HDF5=OFF -DROBOCACHE_BUILD_TESTS=OFF -DROBOCACHE_BUILD_CLI=OFF \
    -DCMAKE_CUDA_ARCHITECTURES="$ARCH" >/dev/null &&
    cmake --build "$2" --target bench_voxel_cuda -j "$(nproc)" >/dev/null
}

rm -rf "$WORK" && mkdir -p "$WORK"
tar -xf "$BASE_TAR" -C "$WORK"
install_tree "$WORK/base" "$WORK/site-base" || exit 1
install_tree "$ROOT" "$WORK/site-new" || exit 1
if [[ " ${BENCHES[*]} " == *" bench/bench_gpu_voxel.py "* ]]; then
  build_voxel_harness "$WORK/base" "$WORK/build-base" || exit 1
  build_voxel_harness "$ROOT" "$WORK/build-new" || exit 1
fi

for round in $(seq 1 "${ROUNDS:-2}"); do
  for side in base new; do
    for b in "${BENCHES[@]}"; do
      echo "===== round $round, $side: $b"
      (cd /tmp && PYTHONPATH="$WORK/site-$side" PYTHONUNBUFFERED=1 \
        BENCH_VOXEL_BIN="$WORK/build-$side/bench/bench_voxel_cuda" \
        "$PYTHON" "$ROOT/$b" --out "$OUT/$side-$round" "${EXTRA[@]}") || exit 1
    done
  done
done
