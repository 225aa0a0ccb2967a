#!/usr/bin/env bash
# Ray, rosbags and their dependencies on a device host without network, from
# the .devwheels/ folder that scripts/pack-device-wheels.sh made (carried
# with the repository): wheels installed with pip --no-index --no-deps and
# ray's archive unpacked into $SITE (default /tmp/site), put first on
# PYTHONPATH. robocache itself is pip-installed (CPU backend; CUDA with
# ROBOCACHE_CUDA=ON) when `import robocache` fails outside the source tree.
#
#   source scripts/device-ray-env.sh          # this shell gets PYTHONPATH
#   scripts/device-ray-env.sh CMD [ARGS...]   # runs CMD with it (from the
#                                             # repository root), e.g.
#   scripts/device-ray-env.sh python3 bench/bench_ray_convert.py --workers 1 2 4 8 16 --out OUT

_rc_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export PYTHONPATH="${SITE:-/tmp/site}${PYTHONPATH:+:$PYTHONPATH}"
export RAY_USAGE_STATS_ENABLED=0

_rc_install() (
  set -euo pipefail
  local site=${SITE:-/tmp/site} python=${PYTHON:-python3} wheels="$_rc_root/.devwheels"
  if [ ! -f "$wheels/ray.tar.xz" ]; then
    echo "$wheels/ray.tar.xz missing: run scripts/pack-device-wheels.sh and carry .devwheels" >&2
    exit 1
  fi
  if [ ! -d "$site/ray" ]; then
    mkdir -p "$site"
    "$python" -m pip install -q --no-index --no-deps --target "$site" "$wheels"/*.whl
    tar -C "$site" -xJf "$wheels/ray.tar.xz"
  fi
  if ! (cd /tmp && "$python" -c "import robocache" 2>/dev/null); then
    cd "$_rc_root"
    "$python" -m pip install -q --no-build-isolation --no-deps \
      -C cmake.define.ROBOCACHE_CUDA="${ROBOCACHE_CUDA:-OFF}" \
      -C cmake.define.CMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" .
  fi
  cd /tmp
  "$python" -c "import ray, rosbags, robocache; print('ray', ray.__version__, 'robocache', robocache.__version__)"
)

if [[ "${BASH_SOURCE[0]}" != "$0" ]]; then
  _rc_install
else
  _rc_install || exit 1
  if [ $# -gt 0 ]; then
    cd "$_rc_root"
    exec "$@"
  fi
fi
