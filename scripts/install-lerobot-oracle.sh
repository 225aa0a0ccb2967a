#!/usr/bin/env bash
# Builds .venv-lerobot: Python 3.12 with the real `lerobot` package (LeRobotDataset), the
# oracle tests/python/test_window_loader_lerobot.py compares robocache.torch.WindowLoader with.
# Only what `lerobot.datasets.lerobot_dataset` imports, pinned, installed with --no-deps
# (scripts/lerobot-oracle-requirements.txt). Skipped when the venv already holds that list.
#   LEROBOT_ORACLE_PYTHON   the Python 3.12 interpreter (default: python3.12 on PATH, else pyenv's)
#   LEROBOT_ORACLE_VENV     where to build it (default: .venv-lerobot in the repository)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
req="$root/scripts/lerobot-oracle-requirements.txt"
venv=${LEROBOT_ORACLE_VENV:-$root/.venv-lerobot}
stamp="$venv/.requirements"

if [ -f "$stamp" ] && cmp -s "$stamp" "$req"; then
  echo "install-lerobot-oracle: $venv is up to date"
  exit 0
fi

pyenv_root=${PYENV_ROOT:-$HOME/.pyenv}
python=
for candidate in ${LEROBOT_ORACLE_PYTHON:-} python3.12 \
    $(ls -d "$pyenv_root"/versions/3.12*/bin/python 2>/dev/null | sort -rV); do
  if "$candidate" -c 'import sys; assert sys.version_info[:2] == (3, 12)' 2>/dev/null; then
    python=$candidate
    break
  fi
done
if [ -z "$python" ]; then
  echo "install-lerobot-oracle: lerobot 0.6.1 needs Python 3.12; none found (set" \
       "LEROBOT_ORACLE_PYTHON to a python3.12)" >&2
  exit 3
fi

start=$(date +%s)
rm -rf "$venv"
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps -r "$req"
"$venv/bin/python" -W ignore -c "from lerobot.datasets.lerobot_dataset import LeRobotDataset"
cp "$req" "$stamp"
echo "install-lerobot-oracle: $venv built in $(( $(date +%s) - start )) s" \
     "($(du -sh "$venv" | cut -f1))"
