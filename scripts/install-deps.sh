#!/usr/bin/env bash
# Installs everything robocache needs to build and test (`make test`) on a fresh
# Debian machine: what the demo needs (install-demo-deps.sh), then the test tools
# through apt-get (h5dump, cmocka, liblzf, clang-format; clang, llvm and
# libclang-rt-dev for the libFuzzer targets; FFmpeg's shared libraries, which
# torchcodec loads) and the Python packages of requirements-test.txt through
# pip. Safe to run again.
set -euo pipefail
here=$(dirname "$0")

bash "$here/install-demo-deps.sh"
bash "$here/apt-install.sh" pkg-config hdf5-tools libcmocka-dev liblzf-dev clang-format \
  clang llvm libclang-rt-dev \
  libavcodec59 libavformat59 libavutil57 libswscale6 libswresample4 libavdevice59 libavfilter8

if [ "${ROBOCACHE_SKIP_PIP:-0}" != "1" ]; then
  python3 -m pip install -q --disable-pip-version-check -r "$here/../requirements-test.txt"
fi
