#!/usr/bin/env bash
# GPU check in one command, on a machine with an NVIDIA GPU, nvcc, CMake,
# ninja, cmocka and PyTorch (CUDA):
#
#   scripts/gpu-check.sh OUT_DIR
#
# Sections (each logged to OUT_DIR/gpu-check.log, a summary printed last):
#   build      clean CMake build, CUDA on, HDF5 off, sm_90 only (for speed)
#   ctest      the C tests labelled `cuda` (test_cuda_*)
#   sanitizer  every test_cuda_* (or those matching $SANITIZE_TESTS) again
#              under compute-sanitizer memcheck and racecheck
#   python     pip install --no-build-isolation . (CUDA, sm_90), then the GPU
#              pytest files tests/python/test_cuda_*.py
#   bench      the GPU benchmarks in BENCHES, JSON written to OUT_DIR
# To add a test or benchmark: name test_cuda_*.c / test_cuda_*.py (picked up
# automatically) or append the script to BENCHES. Exit status 1 when any
# section failed. Keep the whole run well under 10 minutes.
# A shorter run: SECTIONS (default "env build ctest python bench sanitizer"),
# SANITIZE_TOOLS (default "memcheck racecheck"), SANITIZE_TESTS (a glob of
# test program names, e.g. "test_cuda_[ac][la]*"; none matching fails),
# SANITIZE_FILTER (a cmocka test-name pattern passed to each test program,
# e.g. "test_big*"), BENCHES (space-separated scripts).
set -u -o pipefail

OUT=${1:?usage: scripts/gpu-check.sh OUT_DIR}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-/tmp/robocache-gpu-build}
ARCH=${CUDA_ARCH:-90}
PYTHON=${PYTHON:-python3}
read -r -a BENCHES <<<"${BENCHES:-bench/bench_gpu_align.py bench/bench_gpu_voxel.py bench/bench_gpu_python.py bench/bench_training_loop.py}"
# voxel: bench_gpu_voxel.py times robocache through the C harness built here
export BENCH_VOXEL_BIN="$BUILD/bench/bench_voxel_cuda"
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
LOG="$OUT/gpu-check.log"
: >"$LOG"
cd "$ROOT"

declare -a SUMMARY=()
FAILED=0

# step NAME TIMEOUT_S CMD...: runs CMD, appends its output to the log.
step() {
  local name=$1 limit=$2
  shift 2
  local t0=$SECONDS
  echo "===== $name: $*" >>"$LOG"
  if timeout "$limit" "$@" >>"$LOG" 2>&1; then
    SUMMARY+=("ok      $name ($((SECONDS - t0)) s)")
  else
    local rc=$?
    SUMMARY+=("FAILED  $name (exit $rc, $((SECONDS - t0)) s)")
    echo "===== $name FAILED with exit $rc" >>"$LOG"
    FAILED=1
  fi
}

section_env() {
  step env 60 bash -c 'nvidia-smi -L; nvcc --version | tail -2; cmake --version | head -1;
    '"$PYTHON"' -c "import torch; print(\"torch\", torch.__version__, torch.cuda.get_device_name(0))"'
}

# A GPU machine without cmocka (and no network): its Debian packages
# (apt-get download libcmocka0 libcmocka-dev) in $ROOT/.gpu-deps are unpacked
# and used instead.
CMOCKA_ARGS=()
use_carried_cmocka() {
  local deps=/tmp/robocache-gpu-deps f lib
  [ -e /usr/include/cmocka.h ] && return
  compgen -G "$ROOT/.gpu-deps/*.deb" >/dev/null || return
  for f in "$ROOT"/.gpu-deps/*.deb; do dpkg -x "$f" "$deps"; done
  lib=$(ls "$deps"/usr/lib/*/libcmocka.so.0 | head -1)
  CMOCKA_ARGS=(-DCMOCKA_INCLUDE_DIR="$deps/usr/include" -DCMOCKA_LIBRARY="$lib")
  export LD_LIBRARY_PATH="$(dirname "$lib")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
}

section_build() {
  rm -rf "$BUILD"
  use_carried_cmocka
  step build-configure 120 cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DROBOCACHE_WERROR=ON -DROBOCACHE_CUDA=ON -DROBOCACHE_HDF5=OFF \
    -DCMAKE_CUDA_ARCHITECTURES="$ARCH" "${CMOCKA_ARGS[@]}"
  # -k 0: a failure in one target (another op in progress) does not hide the others
  step build 300 cmake --build "$BUILD" -j "$(nproc)" -- -k 0
}

section_ctest() {
  step ctest-cuda 300 ctest --test-dir "$BUILD" -L cuda --output-on-failure --no-tests=error
}

section_sanitizer() {
  local exe tool n=0
  for exe in "$BUILD"/tests/c/${SANITIZE_TESTS:-test_cuda_*}; do
    [ -x "$exe" ] || continue
    n=$((n + 1))
    for tool in ${SANITIZE_TOOLS:-memcheck racecheck}; do
      step "$tool-$(basename "$exe")" 300 compute-sanitizer --tool "$tool" \
        --error-exitcode 1 "$exe" ${SANITIZE_FILTER:+"$SANITIZE_FILTER"}
    done
  done
  [ "$n" -gt 0 ] || step sanitizer 1 bash -c "echo 'no test program matches ${SANITIZE_TESTS:-test_cuda_*}' >&2; exit 1"
}

section_python() {
  # torchcodec for the NVDEC tests, when its wheels were carried (.tcwheels/)
  if compgen -G "$ROOT/.tcwheels/torchcodec-*.whl" >/dev/null; then
    source "$ROOT/scripts/device-torchcodec-env.sh"
  fi
  step pip-install 400 "$PYTHON" -m pip install --no-build-isolation --no-deps -q \
    -C cmake.define.ROBOCACHE_CUDA=ON -C cmake.define.CMAKE_CUDA_ARCHITECTURES="$ARCH" .
  local tests=(tests/python/test_cuda_*.py)
  if [ -e "${tests[0]}" ]; then
    # run from outside the source tree so that the installed package is imported
    step pytest-cuda 300 bash -c "cd /tmp && $PYTHON -m pytest -q -p no:cacheprovider \
      $(printf '%q ' "${tests[@]/#/$ROOT/}")"
  fi
}

section_bench() {
  local b
  for b in "${BENCHES[@]}"; do
    step "bench-$(basename "$b" .py)" 420 bash -c "cd /tmp && PYTHONUNBUFFERED=1 $PYTHON \
      $(printf '%q' "$ROOT/$b") --out $(printf '%q' "$OUT")"
  done
}

for section in ${SECTIONS:-env build ctest python bench sanitizer}; do
  "section_$section"
done

# bench tables and failures at the end of the log are what a reader needs first
grep -A40 '^device .*copy bandwidth' "$LOG" || true
grep -A30 '^device .*per call, median us' "$LOG" || true
grep -A12 '^device .*frames in .*episodes, batch' "$LOG" || true
printf '%s\n' "${SUMMARY[@]}" | tee -a "$LOG"
exit "$FAILED"
