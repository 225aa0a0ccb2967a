"""Bad inputs of `robocache convert`: a clear message and the CLI's exit code
(1 data, 2 usage, 3 I/O), and no output left behind."""

import os
import subprocess
import sys

import pytest

from convert_support import HUSKY_MCAP, HUSKY_STREAMS, write_bag


def robocache(*args):
    return subprocess.run([sys.executable, "-m", "robocache.cli", *map(str, args)],
                          capture_output=True, text=True)


def leftovers(folder):
    return [n for n in os.listdir(folder) if n.startswith(".")]


def test_streams_without_overlap(tmp_path):
    bag = tmp_path / "disjoint"
    s = 10**9
    write_bag(bag, {"/a": [s + i * s // 10 for i in range(10)],
                    "/b": [3 * s + i * s // 10 for i in range(10)]})
    p = robocache("convert", bag, "-o", tmp_path / "out", "--to", "lerobot", "--fps", 10,
                  "-s", "a=/a/angular_velocity", "-s", "b=/b/angular_velocity", "-q")
    assert p.returncode == 1, p.stderr
    assert "overlap" in p.stderr and "episode 0" in p.stderr
    assert not (tmp_path / "out").exists() and leftovers(tmp_path) == []


def test_reference_with_one_frame(tmp_path):
    bag = tmp_path / "one"
    s = 10**9
    write_bag(bag, {"/a": [s + i * s // 10 for i in range(10)], "/cam": [s + s // 2]})
    p = robocache("convert", bag, "-o", tmp_path / "out", "--to", "lerobot",
                  "--reference", "/cam/angular_velocity", "-s", "a=/a/angular_velocity", "-q")
    assert p.returncode == 1
    assert "1 frame(s)" in p.stderr and "/cam/angular_velocity" not in p.stdout
    assert not (tmp_path / "out").exists()


def test_source_matching_nothing(tmp_path):
    p = robocache("convert", HUSKY_MCAP, "-o", tmp_path / "out", "--to", "lerobot", "--fps", 30,
                  "-s", "observation.state=/odom/pose", "-q")
    assert p.returncode == 1
    assert "'/odom/pose' matches no stream" in p.stderr and "/imu/data/orientation" in p.stderr
    assert not (tmp_path / "out").exists() and leftovers(tmp_path) == []


def test_url_needs_ray(tmp_path):
    # the serial converter reads files here; URLs are read by --ray (robocache.ray)
    p = robocache("convert", "s3://bucket/run1.mcap", "-o", tmp_path / "out", "--to", "lerobot",
                  "--fps", 30, "-s", HUSKY_STREAMS[0], "-q")
    assert p.returncode == 3
    assert ("robocache convert: s3://bucket/run1.mcap: no such file or directory; URLs are read "
            "on Ray only (robocache convert --ray, robocache.ray.convert)\n") in p.stderr
    assert os.listdir(tmp_path) == []


def test_existing_output_needs_overwrite(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "mine.txt").write_text("keep")
    args = ["convert", HUSKY_MCAP, "-o", out, "--to", "lerobot", "--fps", 10, "-q"]
    for s in HUSKY_STREAMS:
        args += ["-s", s]
    p = robocache(*args)
    assert p.returncode == 3 and "--overwrite" in p.stderr
    assert (out / "mine.txt").read_text() == "keep"
    p = robocache(*args, "--overwrite")
    assert p.returncode == 0, p.stderr
    assert not (out / "mine.txt").exists() and (out / "meta/info.json").is_file()
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("bad, needle", [
    (["-s", "x=/imu/data/angular_velocity,method=cubic"], "'cubic' is not one of"),
    (["-s", "x=/imu/data/angular_velocity,max-gap=3"], "duration with a unit"),
    (["-s", "x=/imu/data/angular_velocity", "--to", "hdf5"], "invalid choice"),
])
def test_usage_errors(tmp_path, bad, needle):
    args = ["convert", HUSKY_MCAP, "-o", tmp_path / "out", "--fps", 30, "-q"]
    if "--to" not in bad:
        args += ["--to", "lerobot"]
    p = robocache(*args, *bad)
    assert p.returncode == 2 and needle in p.stderr
