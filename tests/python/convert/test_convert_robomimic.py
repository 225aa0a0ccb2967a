"""robocache convert --to robomimic: the ROS 1 bag and its MCAP copy as two
demos, read back with plain h5py in robomimic's layout; values equal the
NumPy oracle of messages read through mcap-ros2-support."""

import json

import h5py
import numpy as np

from robocache.convert import convert

from conftest import HUSKY_BAG, HUSKY_MCAP, ODOM, hold, interp, oracle_grid


def test_robomimic_layout_and_values(tmp_path, husky_messages):
    out = tmp_path / "demos.hdf5"
    convert([str(HUSKY_BAG), str(HUSKY_MCAP)], str(out), to="robomimic", fps=20,
            streams=["observation.imu=/imu/data/angular_velocity,/imu/data/linear_acceleration",
                     f"action={ODOM}/twist"], masks={"train": 0.5, "valid": 0.5})
    t_imu, imu = husky_messages["/imu/data"]
    t_odom, odom = husky_messages[ODOM]
    grid = oracle_grid([t_imu, t_odom], 20)
    with h5py.File(out, "r") as f:
        assert sorted(f["data"]) == ["demo_0", "demo_1"]
        env = json.loads(f["data"].attrs["env_args"])
        assert env["env_kwargs"]["control_freq"] == 20
        assert f["data"].attrs["total"] == 2 * grid.shape[0]
        assert [list(f["mask"][k][()]) for k in ("train", "valid")] == [[b"demo_0"], [b"demo_1"]]
        for demo in ("demo_0", "demo_1"):
            g = f["data"][demo]
            assert g.attrs["num_samples"] == grid.shape[0]
            np.testing.assert_allclose(g["obs/imu"][()], interp(t_imu, imu, grid).astype(np.float32),
                                       rtol=1e-6, atol=1e-7)
            np.testing.assert_array_equal(g["actions"][()],
                                          hold(t_odom, odom[:, 7:13], grid).astype(np.float32))
            assert g["dones"][-1] == 1 and not g["dones"][:-1].any()
            assert g["rewards"].shape == (grid.shape[0],)


def test_robomimic_image_obs_equal_source_frames(tmp_path):
    import robocache.datasets as rd
    from conftest import LEROBOT
    src = LEROBOT / "lingzu_open50_v30_subset"
    out = tmp_path / "demos.hdf5"
    convert([str(src)], str(out), to="robomimic", reference="image",
            streams=["observation.state=state", "action=actions",
                     "observation.agentview_image=image"])
    rec = rd.open(str(src))
    with h5py.File(out, "r") as f:
        for demo, ep in zip(("demo_0", "demo_1"), rec.episodes):
            img = f["data"][demo]["obs/agentview_image"]
            n = len(ep.streams["image"])
            assert img.shape == (n, 480, 640, 3) and img.dtype == np.uint8
            pick = [0, n // 3, n - 1]
            np.testing.assert_array_equal(img[pick], ep.streams["image"].frames(pick))
            np.testing.assert_array_equal(f["data"][demo]["actions"][()],
                                          ep.streams["actions"].values)
