"""`robocache convert --ray` as a user runs it: `python -m robocache.cli` in a
subprocess (its own local Ray, 2 workers) gives the same dataset as the serial
CLI, file for file, with the same --data-file-size-mb; where `import ray`
fails (an import blocker put first on PYTHONPATH), --ray exits 1 with a
message naming pip install 'robocache[ray]' and writes nothing; an input that
is not there (a URL with nothing there or a missing path) exits 3 naming it
before any Ray is started. Inputs: the real Husky recording as MCAP and ROS 1 bag."""

import os

import pytest

pytest.importorskip("ray")

from ray_support import HUSKY_MCAP, assert_same_dataset, cli  # noqa: E402

BLOCK_RAY = '''import importlib.abc, sys
class _NoRay(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "ray" or name.startswith("ray."):
            raise ImportError(f"No module named {name!r}")
sys.meta_path.insert(0, _NoRay())
'''


def test_cli_ray_equals_serial(tmp_path):
    # data files of 0.5 MiB: one per Husky episode, as the serial CLI writes them
    p = cli("-o", str(tmp_path / "serial"), "--data-file-size-mb", "0.5")
    assert p.returncode == 0, p.stderr[-3000:]
    p = cli("-o", str(tmp_path / "ray"), "--ray", "--num-workers", "2",
            "--data-file-size-mb", "0.5")
    assert p.returncode == 0, p.stderr[-3000:]
    assert len(os.listdir(tmp_path / "ray/data/chunk-000")) == 2
    assert_same_dataset(tmp_path / "serial", tmp_path / "ray")


def test_cli_ray_without_ray_names_the_extra(tmp_path):
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(BLOCK_RAY)
    path = os.pathsep.join(filter(None, [str(tmp_path / "site"), os.environ.get("PYTHONPATH")]))
    p = cli("-o", str(tmp_path / "out"), "--ray", env={"PYTHONPATH": path})
    assert p.returncode == 1, p.stderr
    assert "pip install 'robocache[ray]'" in p.stderr
    assert not (tmp_path / "out").exists()
    assert [n for n in os.listdir(tmp_path) if n != "site"] == []


@pytest.mark.parametrize("missing", ["file:///no-such-folder/run1.mcap", "no-such-recording.mcap"])
def test_cli_ray_missing_input_fails_before_ray_starts(tmp_path, missing):
    # the serial CLI's exit code (3) and the input named (a URL as pyarrow.fs finds it
    # missing); no Ray started
    p = cli("-o", str(tmp_path / "out"), "--ray", inputs=(str(HUSKY_MCAP), missing))
    assert p.returncode == 3, p.stderr[-3000:]
    assert f"robocache convert: {missing}: no such file or directory\n" in p.stderr
    assert "Started a local Ray instance" not in p.stderr
    assert os.listdir(tmp_path) == []
