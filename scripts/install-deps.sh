#!/usr/bin/env bash
# Installs everything robocache needs to build and test on a fresh Debian machine:
# system packages through apt-get, Python packages through pip. Safe to run again.
set -euo pipefail

APT_PACKAGES=(build-essential cmake ninja-build pkg-config libhdf5-dev hdf5-tools
  libcmocka-dev liblzf-dev clang-format)

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

if [ "${ROBOCACHE_SKIP_PIP:-0}" != "1" ]; then
  python3 -m pip install -q --disable-pip-version-check -r "$(dirname "$0")/../requirements-test.txt"
fi
