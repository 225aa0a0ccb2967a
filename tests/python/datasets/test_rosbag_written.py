"""robocache.datasets on rosbag2 bags written here with rosbags' Writer:
image frames (raw rgb8 with row padding, bgr8, mono8; JPEG) against the pixels
written, JointState messages naming their joints in changing orders against
the values written, other message types flattened by field path, and types
with nothing numeric listed as skipped."""

import fractions

import av
import numpy as np
import pytest
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore

import robocache.datasets as rd

TS = get_typestore(Stores.ROS2_HUMBLE)
T = TS.types
LOG_LAG = 1_500_000  # log time = header stamp + 1.5 ms
JOINTS = ["shoulder", "elbow", "wrist"]


def header(stamp_ns, frame="base"):
    return T["std_msgs/msg/Header"](
        stamp=T["builtin_interfaces/msg/Time"](sec=stamp_ns // 10**9, nanosec=stamp_ns % 10**9),
        frame_id=frame)


def stamps(n, start=1_700_000_000_000_000_000, step=33_000_000):
    return [start + i * step for i in range(n)]


def write_bag(path, topics, storage=StoragePlugin.MCAP):
    """topics: {name: (msgtype, [(log time ns, message)])}."""
    with Writer(path, version=9, storage_plugin=storage) as w:
        for name, (msgtype, messages) in topics.items():
            conn = w.add_connection(name, msgtype, typestore=TS)
            for log, msg in messages:
                w.write(conn, log, TS.serialize_cdr(msg, msgtype))


def image_msg(stamp, img, encoding, pad=0):
    h, w = img.shape[:2]
    c = 1 if img.ndim == 2 else img.shape[2]
    rows = np.zeros((h, w * c + pad), dtype=np.uint8)
    rows[:, :w * c] = img.reshape(h, w * c)
    rows[:, w * c:] = 77  # padding bytes that must not show up
    return T["sensor_msgs/msg/Image"](header=header(stamp, "cam"), height=h, width=w,
                                      encoding=encoding, is_bigendian=0, step=w * c + pad,
                                      data=rows.reshape(-1))


def jpeg(img):
    ctx = av.CodecContext.create("mjpeg", "w")
    ctx.width, ctx.height, ctx.pix_fmt = img.shape[1], img.shape[0], "yuvj444p"
    ctx.time_base = fractions.Fraction(1, 30)
    ctx.options = {"qmin": "1", "qmax": "2"}
    frame = av.VideoFrame.from_ndarray(img, format="rgb24").reformat(format="yuvj444p")
    return b"".join(bytes(p) for p in ctx.encode(frame) + ctx.encode(None))


def color_frames(rng, n, h, w):
    """Smooth frames whose three channels differ (a swapped channel order or a
    transposed frame would not match)."""
    yy, xx = np.mgrid[0:h, 0:w]
    out = []
    for i in range(n):
        r = (xx * 5 + i * 9) % 256
        b = (255 - yy * 7 - i * 5) % 256
        g = np.full_like(xx, 40 + 30 * i + int(rng.integers(0, 10)))
        out.append(np.stack([r, g, b], -1).astype(np.uint8))
    return out


@pytest.fixture(params=[StoragePlugin.MCAP, StoragePlugin.SQLITE3], ids=["mcap", "sqlite3"])
def image_bag(tmp_path, rng, request):
    rgb = color_frames(rng, 4, 6, 8)
    bgr = color_frames(rng, 2, 5, 7)
    mono = [rng.integers(0, 256, size=(4, 9), dtype=np.uint8) for _ in range(3)]
    jpg = color_frames(rng, 3, 32, 48)
    st = stamps(4)
    # frames 1 and 2 of /cam/rgb were logged at the same time
    rgb_log = [st[0] + LOG_LAG, st[1] + LOG_LAG, st[1] + LOG_LAG, st[3] + LOG_LAG]
    topics = {
        "/cam/rgb": ("sensor_msgs/msg/Image",
                     [(rgb_log[i], image_msg(st[i], im, "rgb8", pad=5))
                      for i, im in enumerate(rgb)]),
        "/cam/bgr": ("sensor_msgs/msg/Image",
                     [(st[i] + LOG_LAG, image_msg(st[i], im[..., ::-1], "bgr8"))
                      for i, im in enumerate(bgr)]),
        "/cam/mono": ("sensor_msgs/msg/Image",
                      [(st[i] + LOG_LAG, image_msg(st[i], im, "mono8", pad=3))
                       for i, im in enumerate(mono)]),
        "/cam/jpeg": ("sensor_msgs/msg/CompressedImage",
                      [(st[i] + LOG_LAG, T["sensor_msgs/msg/CompressedImage"](
                          header=header(st[i], "cam"), format="jpeg",
                          data=np.frombuffer(jpeg(im), dtype=np.uint8)))
                       for i, im in enumerate(jpg)]),
    }
    path = tmp_path / "images"
    write_bag(path, topics, request.param)
    return path, dict(rgb=rgb, bgr=bgr, mono=mono, jpg=jpg, stamps=st, rgb_log=rgb_log)


def test_image_streams_and_frames(image_bag):
    path, w = image_bag
    ep = rd.open(path).episodes[0]
    for name, n in (("/cam/rgb", 4), ("/cam/bgr", 2), ("/cam/mono", 3), ("/cam/jpeg", 3)):
        s = ep.streams[name]
        assert (s.kind, s.clock, s.fields) == ("image", "header", ["frame_index"])
        np.testing.assert_array_equal(s.times, w["stamps"][:n])
        np.testing.assert_array_equal(s.values, np.arange(n).reshape(-1, 1))
    rgb = ep.streams["/cam/rgb"]
    got = rgb.frames([2, 0, -1, 2])
    assert got.dtype == np.uint8 and got.shape == (4, 6, 8, 3)
    np.testing.assert_array_equal(got, np.stack([w["rgb"][i] for i in (2, 0, 3, 2)]))
    np.testing.assert_array_equal(rgb.frames([1]), w["rgb"][1][None])
    np.testing.assert_array_equal(ep.streams["/cam/bgr"].frames([1, 0]),
                                  np.stack([w["bgr"][1], w["bgr"][0]]))  # as RGB
    mono = ep.streams["/cam/mono"].frames([0, 1, 2])
    np.testing.assert_array_equal(mono, np.stack(w["mono"])[..., None])
    jpg = ep.streams["/cam/jpeg"].frames([2, 1]).astype(np.int64)
    want = np.stack([w["jpg"][2], w["jpg"][1]]).astype(np.int64)
    assert jpg.shape == (2, 32, 48, 3)
    assert np.abs(jpg - want).max() <= 8 and np.abs(jpg - want).mean() <= 2
    assert rgb.frames([]).shape[0] == 0
    with pytest.raises(IndexError):
        rgb.frames([4])


def test_image_log_clock_and_dropped_frames(image_bag):
    """With clock='log' and order='drop' the frame repeated in log time is
    dropped and frames() still finds the others by their message index."""
    path, w = image_bag
    s = rd.open(path, clock="log", order="drop").episodes[0].streams["/cam/rgb"]
    assert s.clock == "log"
    np.testing.assert_array_equal(s.times, [w["rgb_log"][i] for i in (0, 1, 3)])
    np.testing.assert_array_equal(s.values[:, 0], [0, 1, 3])
    np.testing.assert_array_equal(s.frames([2, 1]), np.stack([w["rgb"][3], w["rgb"][1]]))


def test_frames_decode_only_the_frames_asked_for(image_bag, monkeypatch):
    from rosbags.typesys.store import Typestore
    path, w = image_bag
    s = rd.open(path).episodes[0].streams["/cam/rgb"]
    s.times
    calls = []
    real = Typestore.deserialize_cdr
    monkeypatch.setattr(Typestore, "deserialize_cdr",
                        lambda store, raw, t: calls.append(t) or real(store, raw, t))
    np.testing.assert_array_equal(s.frames([2]), w["rgb"][2][None])
    assert calls == ["sensor_msgs/msg/Image"]


def joint_msg(stamp, names, pos, vel, eff):
    return T["sensor_msgs/msg/JointState"](
        header=header(stamp), name=list(names), position=np.array(pos, dtype=np.float64),
        velocity=np.array(vel, dtype=np.float64), effort=np.array(eff, dtype=np.float64))


def test_joint_states_reordered_by_name(tmp_path, rng):
    st = stamps(6, step=10_000_000)
    pos, vel, eff = (rng.normal(size=(6, 3)) for _ in range(3))
    orders = [[0, 1, 2], [2, 0, 1], [1, 2, 0], [0, 1, 2], [2, 1, 0], [1, 0, 2]]
    messages = []
    for i, order in enumerate(orders):
        e = [] if i == 3 else eff[i][order]  # message 3 gives no effort
        messages.append((st[i] + LOG_LAG, joint_msg(st[i], [JOINTS[j] for j in order],
                                                    pos[i][order], vel[i][order], e)))
    path = tmp_path / "joints"
    write_bag(path, {"/joint_states": ("sensor_msgs/msg/JointState", messages)},
              StoragePlugin.SQLITE3)
    ep = rd.open(path).episodes[0]
    want_eff = eff.copy()
    want_eff[3] = np.nan
    for field, want in (("position", pos), ("velocity", vel), ("effort", want_eff)):
        s = ep.streams[f"/joint_states/{field}"]
        assert s.fields == JOINTS and s.clock == "header" and s.kind == "vector"
        np.testing.assert_array_equal(s.times, st)
        np.testing.assert_array_equal(s.values, want)
    log = rd.open(path, clock="log").episodes[0].streams["/joint_states/position"]
    np.testing.assert_array_equal(log.times, np.array(st) + LOG_LAG)


@pytest.mark.parametrize("names,values,what", [
    (["shoulder", "elbow"], [1.0, 2.0], r"missing \['wrist'\], new \[\]"),
    (["shoulder", "elbow", "wrist", "hand"], [1.0, 2.0, 3.0, 4.0], r"new \['hand'\]"),
    (["shoulder", "elbow", "hand"], [1.0, 2.0, 3.0], r"missing \['wrist'\], new \['hand'\]"),
    (["wrist", "elbow", "shoulder"], [1.0, 2.0], r"2 position values for 3 joint names"),
])
def test_joint_state_mismatch_names_topic_and_index(tmp_path, names, values, what):
    st = stamps(3)
    ok = [1.0, 2.0, 3.0]
    messages = [(st[0], joint_msg(st[0], JOINTS, ok, ok, ok)),
                (st[1], joint_msg(st[1], JOINTS, ok, ok, ok)),
                (st[2], joint_msg(st[2], names, values, [], []))]
    path = tmp_path / "bad_joints"
    write_bag(path, {"/arm/joints": ("sensor_msgs/msg/JointState", messages)})
    s = rd.open(path).episodes[0].streams["/arm/joints/velocity"]
    with pytest.raises(rd.DatasetError, match=r"bad_joints: topic '/arm/joints', message 2: .*"
                       + what):
        s.values


def test_other_types_flattened_by_field_path(tmp_path, rng):
    st = stamps(4)
    temp = rng.normal(20, 3, size=(4, 2))
    vec = rng.normal(size=(4, 3))
    k, r, p = rng.normal(size=(4, 9)), rng.normal(size=(4, 9)), rng.normal(size=(4, 12))
    roi = rng.integers(0, 1000, size=(4, 4))
    Info = T["sensor_msgs/msg/CameraInfo"]
    topics = {
        "/temp": ("sensor_msgs/msg/Temperature",
                  [(t + LOG_LAG, T["sensor_msgs/msg/Temperature"](
                      header=header(t), temperature=temp[i, 0], variance=temp[i, 1]))
                   for i, t in enumerate(st)]),
        "/vec": ("geometry_msgs/msg/Vector3Stamped",
                 [(t + LOG_LAG, T["geometry_msgs/msg/Vector3Stamped"](
                     header=header(t), vector=T["geometry_msgs/msg/Vector3"](*vec[i])))
                  for i, t in enumerate(st)]),
        "/info": ("sensor_msgs/msg/CameraInfo",
                  [(t + LOG_LAG, Info(
                      header=header(t), height=480 + i, width=640, distortion_model="plumb_bob",
                      d=np.arange(5, dtype=np.float64), k=k[i], r=r[i], p=p[i], binning_x=1,
                      binning_y=2, roi=T["sensor_msgs/msg/RegionOfInterest"](
                          x_offset=int(roi[i, 0]), y_offset=int(roi[i, 1]),
                          height=int(roi[i, 2]), width=int(roi[i, 3]), do_rectify=i % 2 == 1)))
                   for i, t in enumerate(st)]),
        "/chatter": ("std_msgs/msg/String",
                     [(t + LOG_LAG, T["std_msgs/msg/String"](data="hi")) for t in st]),
        "/count": ("std_msgs/msg/Int32",
                   [(t + LOG_LAG, T["std_msgs/msg/Int32"](data=i * 7)) for i, t in enumerate(st)]),
    }
    path = tmp_path / "misc"
    write_bag(path, topics)
    rec = rd.open(path)
    ep = rec.episodes[0]
    assert list(rec.meta["skipped"]) == ["/chatter"]
    assert "std_msgs/msg/String" in rec.meta["skipped"]["/chatter"]
    assert rec.meta["topics"]["/chatter"] == {"type": "std_msgs/msg/String", "messages": 4}
    assert sorted(ep.streams) == ["/count", "/info", "/info/roi", "/temp", "/vec/vector"]

    s = ep.streams["/temp"]
    assert s.fields == ["temperature", "variance"] and s.clock == "header"
    with pytest.raises(TypeError, match="no frames"):
        s.frames([0])
    np.testing.assert_array_equal(s.values, temp)
    np.testing.assert_array_equal(s.times, st)
    s = ep.streams["/vec/vector"]
    assert s.fields == ["x", "y", "z"] and s.kind == "vector"
    np.testing.assert_array_equal(s.values, vec)
    s = ep.streams["/count"]  # no header: log time
    assert s.clock == "log" and s.fields == ["data"] and s.values.dtype == np.int32
    np.testing.assert_array_equal(s.times, np.array(st) + LOG_LAG)
    np.testing.assert_array_equal(s.values[:, 0], [0, 7, 14, 21])

    s = ep.streams["/info"]
    assert s.fields == (["height", "width"] + [f"k[{i}]" for i in range(9)]
                        + [f"r[{i}]" for i in range(9)] + [f"p[{i}]" for i in range(12)]
                        + ["binning_x", "binning_y"])
    assert s.values.dtype == np.float64
    want = np.column_stack([480 + np.arange(4), np.full(4, 640), k, r, p, np.ones(4),
                            np.full(4, 2)])
    np.testing.assert_array_equal(s.values, want)
    s = ep.streams["/info/roi"]
    assert s.fields == ["x_offset", "y_offset", "height", "width", "do_rectify"]
    assert s.values.dtype == np.uint32
    np.testing.assert_array_equal(s.values, np.column_stack([roi, np.arange(4) % 2]))


def test_unsupported_image_encoding_is_an_error(tmp_path):
    st = stamps(2)
    depth = T["sensor_msgs/msg/Image"](header=header(st[0]), height=2, width=2,
                                       encoding="16UC1", is_bigendian=0, step=4,
                                       data=np.zeros(8, dtype=np.uint8))
    png_as_jpeg = T["sensor_msgs/msg/CompressedImage"](header=header(st[0]), format="jpeg",
                                                       data=np.frombuffer(b"not an image",
                                                                          dtype=np.uint8))
    path = tmp_path / "depth"
    write_bag(path, {"/depth": ("sensor_msgs/msg/Image", [(st[0], depth)]),
                     "/bad_jpeg": ("sensor_msgs/msg/CompressedImage", [(st[0], png_as_jpeg)])})
    ep = rd.open(path).episodes[0]
    with pytest.raises(rd.DatasetError, match=r"topic '/depth', message 0: image encoding "
                       r"'16UC1'"):
        ep.streams["/depth"].frames([0])
    with pytest.raises(rd.DatasetError, match=r"topic '/bad_jpeg', message 0: compressed image "
                       r"of format 'jpeg' is neither JPEG nor PNG"):
        ep.streams["/bad_jpeg"].frames([0])
