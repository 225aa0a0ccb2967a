"""GPU actors on Ray: robocache.ray.Align with num_gpus (each actor aligns on
the GPU Ray gives it, as torch CUDA tensors) on a local Ray cluster gives the
columns of the CPU backend (the serial robocache.convert dataset) within
1e-6, and the same episodes, lengths, indices and tasks. Skipped without
ray or CUDA. Input: the real Husky recording as MCAP and ROS 1 bag."""

import sys

import numpy as np
import pytest

ray = pytest.importorskip("ray")
torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)
rr = pytest.importorskip("robocache.ray")
from robocache.convert import convert  # noqa: E402

from ray_support import FPS, HUSKY_BAG, HUSKY_MCAP, STREAMS  # noqa: E402

INPUTS = [str(HUSKY_MCAP), str(HUSKY_BAG)]
VECTORS = ("observation.imu", "observation.state", "action")


class Device(rr.Align):
    """Align that also reports the device its actor aligned on."""

    def __call__(self, batch):
        out = super().__call__(batch)
        out["device"] = np.array([str(self.device)] * len(batch["path"]))
        return out


@pytest.fixture(scope="module")
def cpu_dataset(tmp_path_factory):
    out = tmp_path_factory.mktemp("serial") / "cpu"
    convert(INPUTS, str(out), to="lerobot", fps=FPS, streams=STREAMS)
    return out


def assert_matches_cpu(cpu, out):
    import pyarrow.parquet as pq
    data = "data/chunk-000/file-000.parquet"
    a, b = pq.read_table(cpu / data), pq.read_table(out / data)
    assert a.column_names == b.column_names and a.num_rows == b.num_rows
    for name in a.column_names:
        if name in VECTORS:
            x = np.stack(a[name].to_numpy(zero_copy_only=False))
            y = np.stack(b[name].to_numpy(zero_copy_only=False))
            np.testing.assert_allclose(y, x, rtol=1e-6, atol=1e-6, err_msg=name)
        else:
            assert a.column(name).equals(b.column(name)), name


def test_gpu_actors_match_cpu(tmp_path, cpu_dataset):
    ray.init(num_cpus=2, num_gpus=1, log_to_driver=False, include_dashboard=False)
    try:
        from ray import cloudpickle
        cloudpickle.register_pickle_by_value(sys.modules[__name__])
        out = tmp_path / "gpu"
        ds = rr.read_recordings(INPUTS, streams=STREAMS, fps=FPS, output=str(out))
        ds = ds.map_batches(Device, fn_constructor_kwargs={"device": "auto"}, batch_size=1,
                            batch_format="numpy", num_gpus=0.5,
                            compute=ray.data.ActorPoolStrategy(size=2))
        ds = ds.materialize()
        assert set(ds.unique("device")) == {"cuda:0"}
        rr.write_lerobot(ds, str(out))
    finally:
        ray.shutdown()
    assert_matches_cpu(cpu_dataset, out)


def test_convert_with_gpu_workers_matches_cpu(tmp_path, cpu_dataset):
    # robocache.ray.convert(num_gpus_per_worker=...): `robocache convert --ray
    # --num-gpus-per-worker` runs Align actors on the GPU.
    ray.init(num_cpus=2, num_gpus=1, log_to_driver=False, include_dashboard=False)
    try:
        rr.convert(INPUTS, str(tmp_path / "gpu"), streams=STREAMS, fps=FPS,
                   num_gpus_per_worker=0.5)
    finally:
        ray.shutdown()
    assert_matches_cpu(cpu_dataset, tmp_path / "gpu")
