#!/usr/bin/env bash
# Installs what `make demo` needs on a fresh Debian machine, through apt-get: a C
# compiler, CMake, Ninja and the HDF5 C library with its headers (the robocache
# command writes HDF5). Debian's libhdf5-dev depends on HDF5's Fortran runtime
# libraries, so apt-get installs them too. Safe to run again.
set -euo pipefail

bash "$(dirname "$0")/apt-install.sh" build-essential cmake ninja-build libhdf5-dev
