"""Support of the robocache.ray tests: the real Husky recordings and their
streams, a local Ray on 2 CPUs, and the dataset comparison every Ray output
is held to (the serial converter's output as the oracle)."""

import filecmp
import json
import os
import pathlib
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


def assert_same_dataset(a, b):
    """Every file byte for byte (data Parquet, meta/episodes, stats.json,
    info.json, tasks), Parquet values through pyarrow, and the sync reports
    (apart from the output path each names)."""
    a, b = pathlib.Path(a), pathlib.Path(b)
    assert files(a) == files(b)
    for rel in files(a):
        if rel.endswith(".parquet"):
            assert pq.read_table(a / rel).equals(pq.read_table(b / rel)), rel
        assert filecmp.cmp(a / rel, b / rel, shallow=False), rel
    ra, rb = (json.loads(pathlib.Path(f"{p}.sync.json").read_text()) for p in (a, b))
    assert ra.pop("output") == str(a) and rb.pop("output") == str(b)
    assert ra == rb


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
