#!/usr/bin/env bash
# Installs everything robocache needs to build and test on a fresh Debian machine:
# system packages through apt-get, Python packages through pip. Safe to run again.
set -euo pipefail
here=$(dirname "$0")

bash "$here/apt-install.sh" build-essential cmake ninja-build pkg-config libhdf5-dev \
  hdf5-tools libcmocka-dev liblzf-dev clang-format clang llvm libclang-rt-dev

if [ "${ROBOCACHE_SKIP_PIP:-0}" != "1" ]; then
  python3 -m pip install -q --disable-pip-version-check -r "$here/../requirements-test.txt"
fi
