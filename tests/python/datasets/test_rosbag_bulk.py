"""The bulk decode of numeric ROS topics (robocache.datasets.ros_bulk) against
the message-by-message path (rosbags' deserializers) on the same bags: every
stream's times and values bit-identical, on every bag in data/robot (both
clocks) and on bags written here (ROS 2 CDR little and big endian, ROS 1; a
type whose fields need every CDR alignment, empty and non-empty sequences,
strings between numbers, TFMessage, JointState), the written values as the
independent oracle; and the per-message fallback, with the right values, for
topics whose layout varies (a frame_id that changes, JointState arrays that
come and go, joints reordered, a string that changes length)."""

import pathlib

import numpy as np
import pytest
from rosbags.rosbag1 import Writer as Writer1
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_types_from_msg, get_typestore

import robocache.datasets as rd
from robocache.datasets import ros_bulk

ROBOT = pathlib.Path(__file__).resolve().parents[3] / "data" / "robot"
BAGS = [("ros1/robot_localization_test1.bag", "rosbag1"),
        ("ros1/robot_localization_test2.bag", "rosbag1"),
        ("ros1/robot_state_publisher_joint_states_indexed.bag", "rosbag1"),
        ("ros2/robot_localization_test1_mcap", "rosbag2"),
        ("ros2/evo_nav2_turtlebot.mcap", "rosbag2"),
        ("ros2/evo_tf_example", "rosbag2")]
S = 1_000_000_000
MIXED = """
std_msgs/Header header
uint8 flag
float64 x
string label
int16[3] counts
bool ok
float64[] extra
uint8 tail
geometry_msgs/Point p
float32[2] f
int64 big
uint64 ubig
int8 small
"""
MIXED_TYPE = "test_msgs/msg/Mixed"


def read(path, fmt, clock, bulk, monkeypatch):
    """{stream: (times, values, fields)} of every non-image stream, and
    [True/False per topic decode: bulk path taken]; bulk=False forces the
    message-by-message path."""
    taken, decode = [], ros_bulk.decode

    def spy(*args, **kwargs):
        got = decode(*args, **kwargs) if bulk else None
        taken.append(got is not None)
        return got

    with monkeypatch.context() as m:
        m.setattr(ros_bulk, "decode", spy)
        rec = rd.open(path, format=fmt, clock=clock, order="drop")
        out = {n: (s.times, s.values, s.fields)
               for n, s in rec.episodes[0].streams.items() if s.kind != "image"}
    return out, taken


def assert_same(fast, slow):
    assert fast.keys() == slow.keys()
    for name, (t, v, f) in fast.items():
        t2, v2, f2 = slow[name]
        assert f == f2, name
        assert t.dtype == t2.dtype == np.int64 and np.array_equal(t, t2), name
        assert v.dtype == v2.dtype and v.shape == v2.shape, name
        assert v.tobytes() == v2.tobytes(), name  # bit for bit, NaN included


def both_paths(path, fmt, monkeypatch, clock="header"):
    fast, taken = read(path, fmt, clock, True, monkeypatch)
    slow, _ = read(path, fmt, clock, False, monkeypatch)
    assert_same(fast, slow)
    return fast, taken


@pytest.mark.parametrize("clock", ["header", "log"])
@pytest.mark.parametrize("bag,fmt", BAGS, ids=[b for b, _ in BAGS])
def test_fixture_bags_bit_identical(bag, fmt, clock, monkeypatch):
    _, taken = both_paths(ROBOT / bag, fmt, monkeypatch, clock)
    assert any(taken)  # every fixture bag has a topic of fixed layout


def stores():
    ros2, ros1 = get_typestore(Stores.ROS2_HUMBLE), get_typestore(Stores.ROS1_NOETIC)
    for store in (ros2, ros1):
        store.register(get_types_from_msg(MIXED, MIXED_TYPE))
    ros1.register(get_types_from_msg("geometry_msgs/TransformStamped[] transforms",
                                     "tf2_msgs/msg/TFMessage"))  # not in rosbags' Noetic store
    return ros2, ros1


def header(store, stamp, frame):
    T = store.types
    return T["std_msgs/msg/Header"](
        **({"seq": 0} if "seq" in store.types["std_msgs/msg/Header"].__dataclass_fields__ else {}),
        stamp=T["builtin_interfaces/msg/Time"](sec=stamp // S, nanosec=stamp % S), frame_id=frame)


def mixed(store, rng, stamp, frame="base", label="lbl", extra=0):
    T = store.types
    v = dict(flag=int(rng.integers(0, 256)), x=float(rng.normal()), label=label,
             counts=rng.integers(-2**15, 2**15, 3).astype(np.int16), ok=bool(rng.integers(0, 2)),
             extra=rng.normal(size=extra), tail=int(rng.integers(0, 256)),
             p=T["geometry_msgs/msg/Point"](*rng.normal(size=3)),
             f=rng.normal(size=2).astype(np.float32), big=int(rng.integers(-2**62, 2**62)),
             ubig=int(rng.integers(0, 2**63)) * 2 + 1, small=int(rng.integers(-128, 128)))
    row = [v["flag"], v["x"], *v["counts"], v["ok"], v["tail"], *v["f"], v["big"], v["ubig"],
           v["small"]]
    return T[MIXED_TYPE](header=header(store, stamp, frame), **v), row, [v["p"].x, v["p"].y,
                                                                         v["p"].z]


def transforms(store, rng, stamp, pairs):
    T = store.types
    out, rows = [], []
    for k, (parent, child) in enumerate(pairs):
        t, q = rng.normal(size=3), rng.normal(size=4)
        out.append(T["geometry_msgs/msg/TransformStamped"](
            header=header(store, stamp + k, parent), child_frame_id=child,
            transform=T["geometry_msgs/msg/Transform"](
                translation=T["geometry_msgs/msg/Vector3"](*t),
                rotation=T["geometry_msgs/msg/Quaternion"](*q))))
        rows.append((stamp + k, t, q))
    return T["tf2_msgs/msg/TFMessage"](transforms=out), rows


def joints(store, stamp, names, pos, vel, eff):
    return store.types["sensor_msgs/msg/JointState"](
        header=header(store, stamp, "j"), name=list(names), position=np.ascontiguousarray(pos, float),
        velocity=np.ascontiguousarray(vel, float), effort=np.ascontiguousarray(eff, float))


def write(path, store, topics, ros2=True, little_endian=True):
    """topics: {name: (msgtype, [(log time, message)])}."""
    if ros2:
        with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as w:
            for name, (msgtype, messages) in topics.items():
                conn = w.add_connection(name, msgtype, typestore=store)
                for log, msg in messages:
                    w.write(conn, log, bytes(store.serialize_cdr(
                        msg, msgtype, little_endian=little_endian)))
        return
    with Writer1(path) as w:
        for name, (msgtype, messages) in topics.items():
            conn = w.add_connection(name, msgtype, typestore=store)
            for log, msg in messages:
                w.write(conn, log, bytes(store.serialize_ros1(msg, msgtype)))


def written_bag(path, store, rng, ros2, little_endian=True, n=40):
    st = [1_700_000_000 * S + i * 10_000_003 for i in range(n)]
    m0 = [mixed(store, rng, t) for t in st]
    m2 = [mixed(store, rng, t, extra=2, label="") for t in st]
    pairs = [("/map", "odom"), ("odom", "base"), ("map", "odom")]  # "/map" and "map": one pair
    tf = [transforms(store, rng, t, pairs) for t in st]
    names = ["a", "bb", "ccc"]
    js = rng.normal(size=(n, 2, 3))
    topics = {
        "/mixed": (MIXED_TYPE, [(t + 7, m) for t, (m, _, _) in zip(st, m0)]),
        "/mixed2": (MIXED_TYPE, [(t + 7, m) for t, (m, _, _) in zip(st, m2)]),
        "/tf": ("tf2_msgs/msg/TFMessage", [(t + 5, m) for t, (m, _) in zip(st, tf)]),
        "/joints": ("sensor_msgs/msg/JointState",
                    [(t + 3, joints(store, t, names, j[0], [], j[1])) for t, j in zip(st, js)]),
    }
    write(path, store, topics, ros2, little_endian)
    return dict(stamps=np.array(st), mixed=[np.array([r for _, r, _ in m], float) for m in
                                            (m0, m2)],
                points=[np.array([p for _, _, p in m]) for m in (m0, m2)], tf=tf, js=js,
                names=names)


@pytest.mark.parametrize("kind", ["ros2-le", "ros2-be", "ros1"])
def test_written_bags_bit_identical_and_right(kind, tmp_path, rng, monkeypatch):
    ros2_store, ros1_store = stores()
    ros2 = kind != "ros1"
    path = tmp_path / ("bag" if ros2 else "bag.bag")
    w = written_bag(path, ros2_store if ros2 else ros1_store, rng, ros2,
                    little_endian=kind != "ros2-be")
    fmt = "rosbag2" if ros2 else "rosbag1"
    got, taken = both_paths(path, fmt, monkeypatch)
    assert taken == [True] * 4
    both_paths(path, fmt, monkeypatch, clock="log")
    for i, topic in enumerate(("/mixed", "/mixed2")):
        t, v, f = got[topic]
        assert f == ["flag", "x", "counts[0]", "counts[1]", "counts[2]", "ok", "tail", "f[0]",
                     "f[1]", "big", "ubig", "small"]
        np.testing.assert_array_equal(t, w["stamps"])
        np.testing.assert_array_equal(v, w["mixed"][i])
        np.testing.assert_array_equal(got[f"{topic}/p"][1], w["points"][i])
    for parent, child, ks in (("map", "odom", (0, 2)), ("odom", "base", (1,))):
        t, v, _ = got[f"/tf/{parent}/{child}/translation"]
        rows = [r[k] for _, rs in w["tf"] for k in ks for r in [rs]]
        np.testing.assert_array_equal(t, [r[0] for r in rows])
        np.testing.assert_array_equal(v, [r[1] for r in rows])
        np.testing.assert_array_equal(got[f"/tf/{parent}/{child}/rotation"][1],
                                      [r[2] for r in rows])
    t, v, f = got["/joints/position"]
    assert f == w["names"]
    np.testing.assert_array_equal(t, w["stamps"])
    np.testing.assert_array_equal(v, w["js"][:, 0])
    np.testing.assert_array_equal(got["/joints/effort"][1], w["js"][:, 1])
    assert np.isnan(got["/joints/velocity"][1]).all() and got["/joints/velocity"][1].shape == (
        40, 3)


def test_varying_layouts_fall_back(tmp_path, rng, monkeypatch):
    store, _ = stores()
    n = 12
    st = [1_700_000_000 * S + i * 20_000_000 for i in range(n)]
    frames = ["base" if i < 5 else "odom" for i in range(n)]  # same length, other bytes
    labels = ["x" * (i % 3) for i in range(n)]                 # length changes
    a = [mixed(store, rng, t, frame=fr) for t, fr in zip(st, frames)]
    b = [mixed(store, rng, t, label=lb, extra=i % 2) for i, (t, lb) in enumerate(zip(st, labels))]
    names = ["j1", "j2"]
    pos = rng.normal(size=(n, 2))
    vel = rng.normal(size=(n, 2))
    order = [names[::-1] if i % 4 == 1 else names for i in range(n)]
    js = []  # velocity not provided in every third message; effort = velocity
    for i, (t, o, p, v) in enumerate(zip(st, order, pos, vel)):
        p, v = (p, v) if o == names else (p[::-1], v[::-1])
        js.append(joints(store, t, o, p, v if i % 3 else [], v))
    topics = {"/a": (MIXED_TYPE, [(t, m) for t, (m, _, _) in zip(st, a)]),
              "/b": (MIXED_TYPE, [(t, m) for t, (m, _, _) in zip(st, b)]),
              "/joints": ("sensor_msgs/msg/JointState", list(zip(st, js)))}
    path = tmp_path / "varying"
    write(path, store, topics)
    got, taken = both_paths(path, "rosbag2", monkeypatch)
    assert taken == [False] * 3
    np.testing.assert_array_equal(got["/a"][1], [r for _, r, _ in a])
    np.testing.assert_array_equal(got["/b"][1], [r for _, r, _ in b])
    np.testing.assert_array_equal(got["/b/p"][1], [p for _, _, p in b])
    np.testing.assert_array_equal(got["/joints/position"][1], pos)
    want = np.where(np.arange(n)[:, None] % 3 == 0, np.nan, vel)
    np.testing.assert_array_equal(got["/joints/velocity"][1], want)
    np.testing.assert_array_equal(got["/joints/effort"][1], vel)
    for topic in ("/a", "/b", "/joints/position"):
        np.testing.assert_array_equal(got[topic][0], st)
