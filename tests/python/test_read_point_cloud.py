"""robocache.read_point_cloud against files read with NumPy alone (raw .bin
rows, and pcd_oracle's PCD reader with its own LZF decoder) on the real
clouds in data/pointclouds, binary PCD and PLY files written here, and bad
files (clear errors naming the file)."""
import numpy as np
import pytest

import robocache
from pcd_oracle import read_pcd
from voxel_oracle import KITTI, NUS, PC, load_bin


def _read(path, **kw):
    """read_point_cloud with its info; skips binary_compressed files in a
    build without liblzf (the reader says so)."""
    try:
        return robocache.read_point_cloud(path, return_info=True, **kw)
    except ValueError as e:
        if "liblzf" in str(e):
            pytest.skip(str(e))
        raise


@pytest.mark.parametrize("path,cols,names", [
    (KITTI, 4, ("x", "y", "z", "intensity")),
    (NUS, 5, ("x", "y", "z", "intensity", "ring"))])
def test_bin_files(path, cols, names):
    pts, info = _read(path)
    want = load_bin(path, cols)
    np.testing.assert_array_equal(pts, want)
    assert pts.dtype == np.float32 and pts.flags.c_contiguous
    assert info == {"names": names, "format": "bin", "points_in_file": len(want),
                    "dropped_nonfinite": 0, "width": len(want), "height": 1}
    np.testing.assert_array_equal(robocache.read_point_cloud(str(path), bin_columns=cols), want)


@pytest.mark.parametrize("name,fmt", [("bunny.pcd", "pcd ascii"), ("cupcl_sample.pcd", "pcd ascii"),
                                      ("cturtle.pcd", "pcd binary_compressed"),
                                      ("table_scene_mug_stereo_textured.pcd",
                                       "pcd binary_compressed")])
def test_real_pcd_files(name, fmt):
    pts, info = _read(PC / name)
    want, names = read_pcd(PC / name)
    np.testing.assert_array_equal(pts, want)
    assert info["names"] == names and info["format"] == fmt
    assert info["points_in_file"] - info["dropped_nonfinite"] == len(want)
    if name.startswith("table_scene"):  # organized 640 x 480 with invalid (NaN) pixels
        assert (info["width"], info["height"], info["points_in_file"]) == (640, 480, 307200)
        assert info["dropped_nonfinite"] > 0 and names == ("x", "y", "z", "r", "g", "b")


def _pcd_binary(tmp_path):
    """A binary PCD: x y z F4, rgb F4 (packed colour), normal F4 COUNT 2,
    label I2, a padding field _; point 1 has a NaN y."""
    rec = np.dtype([("x", "<f4"), ("y", "<f4"), ("z", "<f4"), ("rgb", "<u4"),
                    ("normal", "<f4", (2,)), ("label", "<i2"), ("_", "<u1", (2,))])
    g = np.random.default_rng(0)
    a = np.zeros(5, rec)
    for f in "xyz":
        a[f] = g.uniform(-10, 10, 5)
    a["y"][1] = np.nan
    a["rgb"] = g.integers(0, 2 ** 24, 5)
    a["normal"] = g.uniform(-1, 1, (5, 2))
    a["label"] = g.integers(-300, 300, 5)
    header = ("VERSION 0.7\nFIELDS x y z rgb normal label _\nSIZE 4 4 4 4 4 2 1\n"
              "TYPE F F F F F I U\nCOUNT 1 1 1 1 2 1 2\nWIDTH 5\nHEIGHT 1\n"
              "VIEWPOINT 0 0 0 1 0 0 0\nPOINTS 5\nDATA binary\n")
    path = tmp_path / "cloud.pcd"
    path.write_bytes(header.encode() + a.tobytes())
    return path, a


def test_binary_pcd_fields(tmp_path):
    path, a = _pcd_binary(tmp_path)
    pts, info = _read(path)
    keep = np.isfinite(a["y"])
    rgb = a["rgb"][keep]
    want = np.stack([a["x"][keep], a["y"][keep], a["z"][keep], (rgb >> 16) & 255,
                     (rgb >> 8) & 255, rgb & 255, a["normal"][keep, 0], a["normal"][keep, 1],
                     a["label"][keep]], axis=1).astype(np.float32)
    np.testing.assert_array_equal(pts, want)
    assert info["names"] == ("x", "y", "z", "r", "g", "b", "normal_0", "normal_1", "label")
    assert (info["format"], info["points_in_file"], info["dropped_nonfinite"]) == \
        ("pcd binary", 5, 1)
    np.testing.assert_array_equal(read_pcd(path)[0], want)  # the oracle agrees


def test_binary_ply(tmp_path):
    rec = np.dtype([("x", "<f4"), ("y", "<f4"), ("z", "<f4"), ("intensity", "u1"),
                    ("t", "<f8")])
    a = np.zeros(4, rec)
    a["x"], a["y"], a["z"] = [1, 2, np.inf, 4], [5, 6, 7, 8], [-1, -2, -3, -4]
    a["intensity"], a["t"] = [0, 100, 200, 255], [0.5, 1.5, 2.5, 3.5]
    header = ("ply\nformat binary_little_endian 1.0\nelement vertex 4\nproperty float x\n"
              "property float y\nproperty float z\nproperty uchar intensity\n"
              "property double t\nend_header\n")
    path = tmp_path / "cloud.ply"
    path.write_bytes(header.encode() + a.tobytes())
    pts, info = _read(path)
    keep = np.isfinite(a["x"])
    want = np.stack([a[f][keep] for f in ("x", "y", "z", "intensity", "t")], 1).astype(np.float32)
    np.testing.assert_array_equal(pts, want)
    assert info["names"] == ("x", "y", "z", "intensity", "t")
    assert (info["format"], info["dropped_nonfinite"]) == ("ply binary_little_endian", 1)


def test_points_feed_voxelization():
    pts = robocache.read_point_cloud(KITTI)
    voxels, coords, num_points, num_voxels = robocache.voxelize_hard(
        pts, **robocache.voxel_preset("second-kitti"))
    assert len(voxels) == num_voxels[0] > 0


def test_errors(tmp_path):
    with pytest.raises(OSError, match="missing.bin"):
        robocache.read_point_cloud(tmp_path / "missing.bin")
    cut = tmp_path / "cut.bin"
    cut.write_bytes(KITTI.read_bytes()[:1001])
    with pytest.raises(ValueError, match=r"cut\.bin: size 1001 bytes is not a multiple of 16"):
        robocache.read_point_cloud(cut)
    with pytest.raises(ValueError, match="3..64"):
        robocache.read_point_cloud(KITTI, bin_columns=2)
    with pytest.raises(ValueError, match="bin_columns"):
        robocache.read_point_cloud(KITTI, bin_columns=100)
    bad = tmp_path / "bad.pcd"
    bad.write_text("VERSION 0.7\nFIELDS x y z\nSIZE 4 4 4\nTYPE F F F\nCOUNT 1 1 1\n"
                   "WIDTH 2\nHEIGHT 1\nPOINTS 2\nDATA ascii\n1 2 3\n")
    with pytest.raises(ValueError, match="bad.pcd"):
        robocache.read_point_cloud(bad)
    half = tmp_path / "half.pcd"
    path, _ = _pcd_binary(tmp_path)
    half.write_bytes(path.read_bytes()[:-10])
    with pytest.raises(ValueError, match="half.pcd"):
        robocache.read_point_cloud(half)
