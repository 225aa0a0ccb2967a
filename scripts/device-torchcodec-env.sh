#!/usr/bin/env bash
# torchcodec (a CUDA build, for NVDEC) on a device host without network or
# FFmpeg: the wheels in .tcwheels/ (torchcodec and PyAV for the host's Python,
# carried with the repository) installed into $TC_SITE (default /tmp/tcsite),
# and FFmpeg's shared libraries taken from PyAV's wheel (av.libs/, FFmpeg 7)
# under the names torchcodec loads (libavcodec.so.61, ...), beside the
# libraries they need.
#
#   source scripts/device-torchcodec-env.sh   # this shell gets PYTHONPATH, LD_LIBRARY_PATH
#
# .tcwheels/ is made here (43 MB; the device has Python 3.12 and torch 2.11 with CUDA 13,
# which torchcodec 0.14's PyPI wheel, a CUDA 13 build, loads):
#   pip download --no-deps --only-binary=:all: --python-version 3.12 -d .tcwheels \
#     torchcodec==0.14.0 av==15.1.0
_tc_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
_tc_site=${TC_SITE:-/tmp/tcsite}
if [ ! -d "$_tc_site/torchcodec" ]; then
  ${PYTHON:-python3} -m pip install -q --no-index --no-deps --target "$_tc_site" "$_tc_root"/.tcwheels/*.whl
fi
mkdir -p "$_tc_site/ffmpeg"
for _tc_lib in "$_tc_site"/av.libs/lib{avcodec,avdevice,avfilter,avformat,avutil,swresample,swscale}-*.so.*; do
  _tc_name=$(basename "$_tc_lib")
  _tc_stem=${_tc_name%%-*}                          # libavcodec
  _tc_major=$(echo "$_tc_name" | sed -E 's/.*\.so\.([0-9]+).*/\1/')
  ln -sf "$_tc_lib" "$_tc_site/ffmpeg/$_tc_stem.so.$_tc_major"
done
export PYTHONPATH="$_tc_site${PYTHONPATH:+:$PYTHONPATH}"
export LD_LIBRARY_PATH="$_tc_site/ffmpeg:$_tc_site/av.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
