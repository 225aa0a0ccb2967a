"""`robocache align` on the EuRoC V1_01_easy flight: every output channel is
checked against NumPy/SciPy computed here from the raw files."""
import h5py
import numpy as np
import pytest
from scipy.spatial.transform import Rotation, Slerp

from cli_support import CAM, GT, IMU, load_euroc, load_ns_list, load_tum, robocache

STREAMS = [
    "--stream", f"imu={IMU},format=euroc,max-gap=20ms",
    "--stream", f"position={GT},format=tum,columns=tx:ty:tz",
    "--stream", f"orientation={GT},format=tum,columns=qx:qy:qz:qw,method=slerp",
]


@pytest.fixture(scope="module")
def raw():
    imu_t, imu_v = load_euroc(IMU)
    gt_t, gt_v = load_tum(GT)
    return {"imu_t": imu_t, "imu_v": imu_v, "gt_t": gt_t, "gt_v": gt_v, "cam": load_ns_list(CAM)}


def align(robocache, tmp_path, *args, name="out.h5"):
    out = tmp_path / name
    r = robocache("align", *args, "-o", out)
    assert r.returncode == 0, r.stderr
    f = h5py.File(out, "r")
    return f, r


@pytest.fixture(scope="module")
def cam_run(robocache, tmp_path_factory):
    return align(robocache, tmp_path_factory.mktemp("cam"), *STREAMS, "--target-file", CAM)


@pytest.fixture(scope="module")
def rate_run(robocache, tmp_path_factory):
    return align(robocache, tmp_path_factory.mktemp("rate"), *STREAMS, "--rate", "50")


def interp(t, src_t, src_v):
    """numpy.interp per channel with times relative to the first source time."""
    o = src_t[0]
    return np.stack([np.interp(t - o, src_t - o, src_v[:, j]) for j in range(src_v.shape[1])], 1)


def slerp(t, src_t, quat_xyzw):
    o = src_t[0]
    inside = np.clip(t, src_t[0], src_t[-1]) - o
    return Slerp(src_t - o, Rotation.from_quat(quat_xyzw))(inside)


def check_all_streams(f, raw):
    demo = f["data/demo_0"]
    t = demo["timestamps"][:]
    assert demo["timestamps"].dtype == np.int64
    imu = demo["obs/imu"][:]
    assert imu.dtype == np.float32 and imu.shape == (len(t), 6)
    np.testing.assert_allclose(imu, interp(t, raw["imu_t"], raw["imu_v"]), rtol=2e-7, atol=1e-7)
    pos = demo["obs/position"][:]
    np.testing.assert_allclose(pos, interp(t, raw["gt_t"], raw["gt_v"][:, :3]), rtol=2e-7,
                               atol=1e-7)
    quat = demo["obs/orientation"][:].astype(np.float64)
    # renormalised between samples; a target on a sample returns that sample
    on_sample = np.isin(t, raw["gt_t"])
    np.testing.assert_allclose(np.linalg.norm(quat[~on_sample], axis=1), 1.0, atol=1e-6)
    j = np.searchsorted(raw["gt_t"], t[on_sample])
    np.testing.assert_array_equal(quat[on_sample], raw["gt_v"][j, 3:].astype(np.float32))
    ref = slerp(t, raw["gt_t"], raw["gt_v"][:, 3:])
    angle = (Rotation.from_quat(quat).inv() * ref).magnitude()
    assert angle.max() < 5e-6, angle.max()
    return t


def test_cam0_grid_values(cam_run, raw):
    f, _ = cam_run
    t = check_all_streams(f, raw)
    np.testing.assert_array_equal(t, raw["cam"])


def test_cam0_valid_mask_follows_groundtruth_coverage(cam_run, raw):
    f, r = cam_run
    demo = f["data/demo_0"]
    t = demo["timestamps"][:]
    valid = demo["valid"][:]
    assert list(demo["valid"].attrs["streams"]) == ["imu", "position", "orientation"]
    inside_gt = (t >= raw["gt_t"][0]) & (t <= raw["gt_t"][-1])
    inside_imu = (t >= raw["imu_t"][0]) & (t <= raw["imu_t"][-1])
    np.testing.assert_array_equal(valid[:, 0], inside_imu)
    np.testing.assert_array_equal(valid[:, 1], inside_gt)
    np.testing.assert_array_equal(valid[:, 2], inside_gt)
    # ground truth starts 1.04 s after the IMU / first camera frame
    assert 1.0e9 < raw["gt_t"][0] - t[0] < 1.1e9
    assert not valid[0, 1] and valid[-1, 0]
    # clamp: before the ground truth, the first pose (as float32)
    np.testing.assert_array_equal(demo["obs/position"][0], raw["gt_v"][0, :3].astype(np.float32))
    n_invalid = int((~inside_gt).sum())
    assert f"{n_invalid} / {len(t)}" in r.stderr


def test_rate_grid(rate_run, raw):
    f, r = rate_run
    t = check_all_streams(f, raw)
    start = max(raw["imu_t"][0], raw["gt_t"][0])
    end = min(raw["imu_t"][-1], raw["gt_t"][-1])
    assert t[0] == start
    assert t[-1] <= end < t[-1] + 20_000_000
    np.testing.assert_array_equal(np.diff(t), 20_000_000)
    assert f["data/demo_0/valid"][:].all()
    assert f"-> {len(t)} targets" in r.stderr


def test_attributes(cam_run):
    f, _ = cam_run
    assert f.attrs["robocache_version"]
    assert "robocache align" in f.attrs["command_line"]
    assert f.attrs["created"].endswith("Z")
    assert f["data"].attrs["total"] == f["data/demo_0/timestamps"].shape[0]
    imu = f["data/demo_0/obs/imu"].attrs
    assert imu["method"] == "linear" and imu["extrapolate"] == "clamp"
    assert imu["max_gap_ns"] == 20_000_000 and imu["time_offset_ns"] == 0
    assert imu["source_format"] == "euroc" and imu["source_file"] == str(IMU)
    assert list(imu["columns"])[0] == "w_RS_S_x [rad s^-1]"
    ori = f["data/demo_0/obs/orientation"].attrs
    assert ori["method"] == "slerp" and ori["quat_order"] == "xyzw" and ori["valid_column"] == 2
    assert list(ori["columns"]) == ["qx", "qy", "qz", "qw"]


def test_offset_previous_and_fill(robocache, tmp_path, raw):
    """offset shifts the source times; previous is a zero-order hold; fill
    writes the fill value outside the stream."""
    f, _ = align(robocache, tmp_path,
                 "--stream", f"imu={IMU},format=euroc,columns=a_RS_S_x:a_RS_S_y,offset=-2.5ms",
                 "--stream", f"hold={IMU},format=euroc,columns=1,method=previous",
                 "--stream", f"pos={GT},columns=tx,extrapolate=fill,fill=-7",
                 "--target-file", f"{CAM},format=timestamps")
    demo = f["data/demo_0"]
    t = demo["timestamps"][:]
    shifted = raw["imu_t"] - 2_500_000
    np.testing.assert_allclose(demo["obs/imu"][:], interp(t, shifted, raw["imu_v"][:, 3:5]),
                               rtol=2e-7, atol=1e-7)
    i = np.clip(np.searchsorted(raw["imu_t"], t, side="right") - 1, 0, None)
    np.testing.assert_array_equal(demo["obs/hold"][:, 0], raw["imu_v"][i, 0].astype(np.float32))
    inside = (t >= raw["gt_t"][0]) & (t <= raw["gt_t"][-1])
    pos = demo["obs/pos"][:, 0]
    assert (pos[~inside] == -7).all()
    np.testing.assert_allclose(pos[inside], interp(t[inside], raw["gt_t"], raw["gt_v"][:, :1])[:, 0],
                               rtol=2e-7, atol=1e-7)
    assert demo["obs/imu"].attrs["time_offset_ns"] == -2_500_000


def test_target_stream_and_quiet(robocache, tmp_path, raw):
    out = tmp_path / "q.h5"
    r = robocache("align", *STREAMS, "--target", "position", "--quiet", "-o", out)
    assert r.returncode == 0 and r.stderr == ""
    with h5py.File(out, "r") as f:
        np.testing.assert_array_equal(f["data/demo_0/timestamps"][:], raw["gt_t"])
        # a target on a sample returns that sample
        np.testing.assert_array_equal(f["data/demo_0/obs/position"][:],
                                      raw["gt_v"][:, :3].astype(np.float32))


def test_max_gap_marks_dropout_invalid(robocache, tmp_path):
    """A 100 ms hole in a 10 ms stream: targets inside it are invalid with
    max-gap=20ms and valid without."""
    src = tmp_path / "drop.csv"
    times = [i * 10_000_000 for i in range(10)] + [190_000_000 + i * 10_000_000 for i in range(10)]
    src.write_text("#timestamp [ns],v\n" + "".join(f"{t},{t / 1e7}\n" for t in times))
    grid = tmp_path / "grid.txt"
    grid.write_text("".join(f"{t}\n" for t in range(0, 280_000_001, 5_000_000)))
    f, _ = align(robocache, tmp_path, "--stream", f"a={src},max-gap=20ms",
                 "--stream", f"b={src}", "--target-file", grid)
    t = f["data/demo_0/timestamps"][:]
    valid = f["data/demo_0/valid"][:]
    in_hole = (t > 90_000_000) & (t < 190_000_000)
    np.testing.assert_array_equal(valid[:, 0], ~in_hole)
    assert valid[:, 1].all()


def test_threads_do_not_change_results(robocache, tmp_path, rate_run):
    f, _ = align(robocache, tmp_path, *STREAMS, "--rate", "50", "--threads", "1")
    ref, _ = rate_run
    for key in ("timestamps", "valid", "obs/imu", "obs/position", "obs/orientation"):
        np.testing.assert_array_equal(f["data/demo_0"][key][:], ref["data/demo_0"][key][:])


def test_wxyz_quaternions_and_generic_csv(robocache, tmp_path, raw):
    """The ground truth rewritten here as a generic CSV in seconds with the
    quaternion in w,x,y,z order gives the same rotations with quat-order=wxyz."""
    n = 2000
    t, q = raw["gt_t"][:n], raw["gt_v"][:n, 3:]
    src = tmp_path / "gt_wxyz.csv"
    lines = ["qw,qx,qy,qz,time"]
    lines += [f"{float(w)!r},{float(x)!r},{float(y)!r},{float(z)!r},{s // 10**9}.{s % 10**9:09d}"
              for (x, y, z, w), s in zip(q, t)]
    src.write_text("\n".join(lines) + "\n")
    f, _ = align(robocache, tmp_path,
                 "--stream", f"q={src},format=csv,time-column=time,time-unit=s,method=slerp,"
                             "quat-order=wxyz",
                 "--rate", "33")
    demo = f["data/demo_0"]
    grid = demo["timestamps"][:]
    assert grid[0] == t[0] and np.diff(grid).min() >= 30_303_030
    assert list(demo["obs/q"].attrs["columns"]) == ["qw", "qx", "qy", "qz"]
    wxyz = demo["obs/q"][:].astype(np.float64)
    ours = Rotation.from_quat(wxyz[:, [1, 2, 3, 0]])
    angle = (ours.inv() * slerp(grid, t, q)).magnitude()
    assert angle.max() < 5e-6, angle.max()
