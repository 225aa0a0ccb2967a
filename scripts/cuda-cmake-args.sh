#!/usr/bin/env bash
# cuda-cmake-args.sh demo|test [auto|1|0] — prints the CMake options that decide
# whether a `make demo` / `make test` build compiles the CUDA backend, and for
# which architectures:
#   0                      no CUDA backend;
#   a GPU that nvidia-smi lists: the backend for that GPU's architecture (its
#                          compute capability; CMake's `native` when the driver
#                          is too old to tell it), with 1 it must build, with
#                          auto only when CMake finds nvcc;
#   1, no GPU              the backend for the library's default architectures;
#   test, auto, no GPU     the backend for sm_90 when CMake finds nvcc, so that
#                          the tests still compile the CUDA code;
#   demo, auto, no GPU     no CUDA backend.
set -euo pipefail
mode=${1:-}
want=${2:-auto}
case "$mode/$want" in
demo/auto | demo/1 | demo/0 | test/auto | test/1 | test/0) ;;
*)
  echo "usage: $0 demo|test [auto|1|0]" >&2
  exit 2
  ;;
esac
if [ "$want" = 0 ]; then
  echo "-DROBOCACHE_CUDA=OFF"
  exit 0
fi

# compute capabilities of the GPUs present ("9.0" -> 90), ';'-separated
arch=""
if command -v nvidia-smi >/dev/null 2>&1; then
  arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null |
    tr -d ' .\r' | grep -E '^[0-9]+$' | sort -u | paste -sd ';' || true)
  if [ -z "$arch" ] && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
    arch=native
  fi
fi

backend=AUTO
[ "$want" = 1 ] && backend=ON
if [ -n "$arch" ]; then
  echo "-DROBOCACHE_CUDA=$backend -DCMAKE_CUDA_ARCHITECTURES=$arch"
elif [ "$want" = 1 ]; then
  echo "-DROBOCACHE_CUDA=ON -UCMAKE_CUDA_ARCHITECTURES"
elif [ "$mode" = test ]; then
  echo "-DROBOCACHE_CUDA=AUTO -DCMAKE_CUDA_ARCHITECTURES=90"
else
  echo "-DROBOCACHE_CUDA=OFF"
fi
