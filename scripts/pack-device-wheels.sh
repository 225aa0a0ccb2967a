#!/usr/bin/env bash
# Packs what the Ray benchmark and tests need on a device host that has
# Python 3.12 with numpy, pandas, pyarrow and torch but no network: run here,
#
#   scripts/pack-device-wheels.sh            -> .devwheels/
#
# .devwheels/*.whl      manylinux x86_64 cp312 wheels of ray's and rosbags'
#                       dependencies and rosbags (pip download, no deps resolved:
#                       the list below is complete for those two)
# .devwheels/ray.tar.xz ray's wheel contents without ray/jars, ray/rllib,
#                       ray/serve, ray/llm and the dashboard's web client (not
#                       used by Ray Data), its raylet, gcs_server and _raylet.so
#                       stripped of symbols not needed to run (strip
#                       --strip-unneeded): the whole wheel is too large to carry
# The folder stays under 36 MB. On the device: scripts/device-ray-env.sh.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT="$ROOT/.devwheels"
RAY=${RAY_VERSION:-2.60.0}
WHEELS=(click==8.4.0 filelock==4.3.1 jsonschema==4.26.0 jsonschema-specifications==2025.9.1
  referencing==0.37.0 rpds-py==0.30.0 attrs==26.1.0 typing_extensions==4.15.0 msgpack==1.2.4
  packaging==26.2 protobuf==7.36.2 PyYAML==6.0.3 requests==2.34.2 charset-normalizer==3.4.7
  idna==3.13 urllib3==2.7.0 certifi==2026.5.20 fsspec==2026.9.0
  rosbags==0.11.9 apsw==3.54.1.0 backports.zstd==1.8.0 lz4==4.4.5 ruamel.yaml==0.19.1)
PLATFORM=(--only-binary=:all: --python-version 3.12 --implementation cp
  --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64
  --platform manylinux_2_28_x86_64)

rm -rf "$OUT"
mkdir -p "$OUT"
pip download -q --no-deps "${PLATFORM[@]}" -d "$OUT" "${WHEELS[@]}"

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
pip download -q --no-deps "${PLATFORM[@]}" -d "$TMP" "ray==$RAY"
mkdir "$TMP/site"
# extracted with each file's mode kept (Ray's raylet and gcs_server are executables)
python3 - "$TMP"/ray-"$RAY"-*.whl "$TMP/site" <<'PY'
import os, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    for info in z.infolist():
        path = z.extract(info, sys.argv[2])
        mode = info.external_attr >> 16
        if mode:
            os.chmod(path, mode & 0o777)
PY
cd "$TMP/site/ray"
rm -rf jars rllib serve llm dashboard/client
strip --strip-unneeded _raylet.so core/src/ray/raylet/raylet core/src/ray/gcs/gcs_server
cd "$ROOT"
tar -C "$TMP/site" -cf - . | xz -6 -T2 >"$OUT/ray.tar.xz"

du -b "$OUT"/* | sort -n | awk '{printf "%9.1f MB  %s\n", $1 / 1e6, $2}'
du -sb "$OUT" | awk '{printf "%9.1f MB  total\n", $1 / 1e6}'
