#!/usr/bin/env bash
# Multi-GPU scaling of the training-loop benchmark: the same configuration under
# torchrun with 1 rank and with N ranks, then the scaling efficiency and every
# rank's data wait (bench/training_scaling.py).
#
#   scripts/gpu-multi.sh N OUT [bench_training_loop.py options...]
#   scripts/gpu-multi.sh 2 bench/results --skip-lerobot                      # the issue's config
#   scripts/gpu-multi.sh 2 bench/results --skip-lerobot --preset act --ddp-tuned
#   scripts/gpu-multi.sh 2 bench/results --skip-lerobot --cuda-graph          # one graph a step
#
# Writes OUT/training_loop_[policy_]ddp1[_graph]_<gpu>.json, ..._ddpN[_graph]_... and
# OUT/training_scaling_<policy>_<preset>_<default|tuned>[_graph]_ddpN_<gpu>.json. DEVICE=cpu runs it on the CPU (gloo),
# PYTHON picks the interpreter.
set -euo pipefail
if [ $# -lt 2 ]; then
  sed -n 2,12p "$0"
  exit 2
fi
n=$1 out=$2
shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
py=${PYTHON:-python3} device=${DEVICE:-cuda}
graph=
for a in "$@"; do [ "$a" = --cuda-graph ] && graph=_graph; done
# NVLink multicast (NVLS) stays off on the shared hosts
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$py" -m torch.distributed.run --standalone --nproc-per-node 1 \
  "$root/bench/bench_training_loop.py" --device "$device" --out "$work" --tag "ddp1$graph" "$@"
"$py" -m torch.distributed.run --standalone --nproc-per-node "$n" \
  "$root/bench/bench_training_loop.py" --device "$device" --out "$work" --tag "ddp$n$graph" "$@"
one=$(ls "$work"/training_loop_*"ddp1${graph}"_*.json)
many=$(ls "$work"/training_loop_*"ddp$n${graph}"_*.json)
cp "$one" "$many" "$out"/
"$py" "$root/bench/training_scaling.py" "$out/$(basename "$one")" "$out/$(basename "$many")" "$out"
