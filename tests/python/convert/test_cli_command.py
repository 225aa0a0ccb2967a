"""The one `robocache` command (python -m robocache.cli, the console script's
entry point): one --help listing every subcommand, dataset info in Python,
align / voxelize / text info forwarded to the C tool, and a clear error
naming how to get the C tool when it is missing."""

import os
import subprocess
import sys

import pytest

from convert_support import HUSKY_BAG, ROOT

C_TOOL = os.environ.get("ROBOCACHE_BIN", str(ROOT / "build" / "robocache"))
has_c_tool = pytest.mark.skipif(not os.access(C_TOOL, os.X_OK),
                                reason=f"C tool not built at {C_TOOL}")


def robocache(*args, env=None):
    return subprocess.run([sys.executable, "-m", "robocache.cli", *map(str, args)],
                          capture_output=True, text=True, env=env)


def test_help_lists_every_command():
    p = robocache("--help")
    assert p.returncode == 0
    for cmd in ("convert", "check", "info", "align", "voxelize"):
        assert f"\n  {cmd} " in p.stdout
    assert robocache().returncode == 2 and robocache("frobnicate").returncode == 2


def test_info_of_a_bag_in_python():
    p = robocache("info", HUSKY_BAG)
    assert p.returncode == 0, p.stderr
    assert "rosbag1" in p.stdout and "/husky_velocity_controller/odom/pose/orientation" in p.stdout


def test_info_options_reach_the_reader():
    rlds = ROOT / "data/robot/rlds/bridge_dataset/1.0.0"
    p = robocache("info", rlds)
    assert p.returncode == 1 and "rate_hz" in p.stderr  # RLDS steps have no rate of their own
    p = robocache("info", rlds, "--rate-hz", "5")
    assert p.returncode == 0, p.stderr
    assert "rlds, 25 episode(s)" in p.stdout and " 5.000 " in p.stdout
    p = robocache("info", HUSKY_BAG, "--clock=log")
    assert p.returncode == 0 and " log " in p.stdout and " header " not in p.stdout
    p = robocache("info", rlds, "--clock", "log")
    assert p.returncode == 1 and "the rlds reader takes no option clock" in p.stderr
    p = robocache("info", HUSKY_BAG, "--rate-hz", "fast")
    assert p.returncode == 2 and "--rate-hz 'fast': expected a float" in p.stderr
    p = subprocess.run([sys.executable, "-m", "robocache.datasets", HUSKY_BAG],
                       capture_output=True, text=True)
    assert p.returncode == 0 and "rosbag1" in p.stdout


@has_c_tool
def test_c_commands_are_forwarded():
    env = {**os.environ, "ROBOCACHE_BIN": C_TOOL}
    p = robocache("align", "--help", env=env)
    assert p.returncode == 0 and "robocache align" in p.stdout
    p = robocache("info", ROOT / "data/sensors/euroc_V1_01_easy_imu0.csv", env=env)
    assert p.returncode == 0 and "format euroc" in p.stdout and "29120 rows" in p.stdout


def test_missing_c_tool_names_the_remedy(tmp_path):
    env = {**os.environ, "ROBOCACHE_BIN": str(tmp_path / "nothing"), "PATH": str(tmp_path)}
    p = robocache("voxelize", "--help", env=env)
    assert p.returncode == 1
    assert "make" in p.stderr and "ROBOCACHE_BIN" in p.stderr
