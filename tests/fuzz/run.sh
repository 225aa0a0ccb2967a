#!/usr/bin/env bash
# run.sh BUILD SECONDS [JOBS] — runs every libFuzzer target listed in
# BUILD/tests/fuzz/targets.txt, JOBS targets at a time (default 2). For target
# fuzz_<name> (or any other target name):
#   1. replays each committed crasher in tests/fuzz/regressions/<name>/;
#   2. fuzzes for SECONDS from the seeds in tests/fuzz/corpus/<name>/. New
#      inputs go to BUILD/fuzz/corpus/<name>/ (the committed corpus is never
#      written), findings to BUILD/fuzz/artifacts/<name>/, the log to
#      BUILD/fuzz/<name>.log.
# Prints one line per target (executions, seconds, corpus); exits 1 when a
# regression input fails or fuzzing finds a crash, a leak, undefined behaviour,
# an input taking over 25 s (-timeout: above the 10 s the HDF5 readers give
# libhdf5) or an allocation over -malloc_limit_mb (1,024 MB; fuzz_hdf5: see below).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" && pwd)
seconds=$2
jobs=${3:-2}
list=$build/tests/fuzz/targets.txt
[ -s "$list" ] || { echo "run.sh: no fuzz targets listed in $list" >&2; exit 1; }
export here build seconds
# The targets write each input to a file: in memory (/dev/shm) that is some
# fifty times faster than on a disk. A target that crashes leaves its file:
# all go in one folder, removed at the end.
shm=/dev/shm
[ -d $shm ] && [ -w $shm ] || shm=${TMPDIR:-/tmp}
TMPDIR=$(mktemp -d "$shm/robocache-fuzz.XXXXXX")
export TMPDIR
trap 'rm -rf "$TMPDIR"' EXIT

run_one() {
  local target=$1 name=${1#fuzz_}
  local bin=$build/tests/fuzz/$target out=$build/fuzz
  local log=$out/$name.log art=$out/artifacts/$name/ work=$out/corpus/$name
  mkdir -p "$art" "$work"
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1:suppressions=$here/asan.supp
  export LSAN_OPTIONS=suppressions=$here/lsan.supp UBSAN_OPTIONS=print_stacktrace=1
  local regress=$here/regressions/$name
  if compgen -G "$regress/*" > /dev/null; then
    if ! "$bin" "$regress"/* > "$out/$name.regressions.log" 2>&1; then
      echo "FAIL $target: a regression input fails (log: $out/$name.regressions.log)"
      tail -n 40 "$out/$name.regressions.log"
      return 1
    fi
  fi
  local seeds=()
  [ -d "$here/corpus/$name" ] && seeds=("$here/corpus/$name")
  # fuzz_hdf5: in the reader's child process, where the HDF5 readers contain libhdf5
  # (fuzz_hdf5.c), libhdf5 allocates a variable-length string's declared length (32-bit:
  # up to 4 GiB + 8 bytes) before it reads the string, so that target's limit is above it;
  # corpus/hdf5/vlen_string_length_* declare 2 GB and 4 GiB.
  local malloc_mb=1024
  [ "$name" = hdf5 ] && malloc_mb=4097
  if ! "$bin" -max_total_time="$seconds" -timeout=25 -report_slow_units=30 -rss_limit_mb=2048 \
      -malloc_limit_mb="$malloc_mb" -print_final_stats=1 -artifact_prefix="$art" "$work" "${seeds[@]}" > "$log" 2>&1; then
    echo "FAIL $target: finding in $art (log: $log)"
    tail -n 60 "$log"
    return 1
  fi
  if compgen -G "$art*" > /dev/null; then # crash-child-*: from the HDF5 readers' child process (fuzz_hdf5.c)
    echo "FAIL $target: finding in $art (log: $log)"
    return 1
  fi
  local runs
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  echo "ok   $target: ${runs:-?} executions in ${seconds} s, corpus $(ls "$work" | wc -l) new inputs"
}
export -f run_one

xargs -P "$jobs" -I{} bash -c 'run_one "$@"' _ {} < "$list"
