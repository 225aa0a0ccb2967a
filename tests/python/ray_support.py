"""Support of the robocache.ray tests: the real Husky recordings and their
streams, a local Ray on 2 CPUs, and the dataset comparison every Ray output
is held to (the serial converter's output as the oracle)."""

import filecmp
import json
import os
import pathlib
import subprocess
import sys

import pyarrow.parquet as pq

ROOT = pathlib.Path(__file__).resolve().parents[2]
HUSKY_MCAP = ROOT / "data/robot/ros2/robot_localization_test1_mcap"
HUSKY_BAG = ROOT / "data/robot/ros1/robot_localization_test1.bag"
ODOM = "/husky_velocity_controller/odom"
STREAMS = ["observation.imu=/imu/data/angular_velocity,/imu/data/linear_acceleration",
           f"observation.state={ODOM}/pose", f"action={ODOM}/twist,method=previous"]
FPS = 30
# Environment of a Ray started by a subprocess: no dashboard, usage report or
# progress bars, a small object store.
RAY_ENV = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_DATA_DISABLE_PROGRESS_BARS": "1",
           "RAY_INCLUDE_DASHBOARD": "0", "RAY_OBJECT_STORE_MEMORY": str(200 * 2**20),
           "OMP_NUM_THREADS": "1"}


def cli(*args, env=None, inputs=(str(HUSKY_MCAP), str(HUSKY_BAG))):
    """`python -m robocache.cli convert INPUTS` of STREAMS at FPS to LeRobot,
    quiet, with `args` (-o OUTPUT, --ray ...), in RAY_ENV and `env`."""
    argv = [sys.executable, "-m", "robocache.cli", "convert", *inputs,
            "--to", "lerobot", "--fps", str(FPS), "--quiet",
            *[a for s in STREAMS for a in ("-s", s)], *args]
    return subprocess.run(argv, capture_output=True, text=True,
                          env={**os.environ, **RAY_ENV, **(env or {})})


def local_ray(module):
    """Starts a local Ray (2 CPUs) that ships `module` (a test module with
    Align subclasses) and this one by value; ray.shutdown() when done."""
    import ray
    import ray.cloudpickle
    ray.cloudpickle.register_pickle_by_value(module)
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    ray.init(num_cpus=2, log_to_driver=False, include_dashboard=False)


def files(root):
    return sorted(str(p.relative_to(root)) for p in pathlib.Path(root).rglob("*") if p.is_file())


def assert_same_dataset(a, b, renamed=None):
    """Every file byte for byte (data Parquet, meta/episodes, stats.json,
    info.json, tasks), Parquet values through pyarrow, and the sync reports
    (apart from the output path each names). renamed: {name in b: name in a}
    of inputs b's reports name otherwise (URLs converted on Ray, a's local
    paths): b's meta/robocache.json and sync report, those names replaced,
    must equal a's byte for byte."""
    a, b = pathlib.Path(a), pathlib.Path(b)
    assert files(a) == files(b)
    for rel in files(a):
        if rel.endswith(".parquet"):
            assert pq.read_table(a / rel).equals(pq.read_table(b / rel)), rel
        if renamed and rel == "meta/robocache.json":
            assert _renamed(b / rel, renamed) == (a / rel).read_text(), rel
        else:
            assert filecmp.cmp(a / rel, b / rel, shallow=False), rel
    ra = json.loads(pathlib.Path(f"{a}.sync.json").read_text())
    rb = json.loads(_renamed(f"{b}.sync.json", renamed or {}))
    assert ra.pop("output") == str(a) and rb.pop("output") == str(b)
    assert ra == rb


def _renamed(path, renamed):
    """The text of `path` with each key of `renamed` replaced by its value
    (longest first), every key found in it."""
    text = pathlib.Path(path).read_text()
    for old in sorted(renamed, key=len, reverse=True):
        assert old in text, (path, old)
        text = text.replace(old, renamed[old])
    return text


def counting():
    """An Align subclass (the CPU backend) that records every recording it
    converts as an empty file named after it in the folder `log` (its
    constructor's argument)."""
    import robocache.ray as rr

    class Counting(rr.Align):
        def __init__(self, log):
            super().__init__("cpu")
            self.log = log

        def __call__(self, batch):
            for p in batch["path"]:
                open(os.path.join(self.log, os.path.basename(str(p))), "w").close()
            return super().__call__(batch)
    return Counting
