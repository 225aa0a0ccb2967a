"""robocache.datasets on the real ROS bags in data/robot: every stream's times
(both clocks) and values against an independent read of the same file
(MCAP: mcap + mcap-ros2-support; the ROS 1 test1.bag: its MCAP conversion,
bit-identical per data/README.md; the other ROS 1 bags: a struct parser of
the bag format; sqlite3: Python's sqlite3 + mcap-ros2-support's CDR decoder),
the recording's metadata, and lazy opening."""

import functools
import pathlib
import shutil
import sqlite3

import numpy as np
import pytest
import ros1_bag_oracle
import ros2_bag_oracle

import robocache.datasets as rd

ROBOT = pathlib.Path(__file__).resolve().parents[3] / "data" / "robot"
TEST1_MCAP = ROBOT / "ros2" / "robot_localization_test1_mcap" / "robot_localization_test1_mcap.mcap"
TF_DB3 = ROBOT / "ros2" / "evo_tf_example" / "tf_example.db3"


def ns(stamp):
    return stamp.sec * 1_000_000_000 + stamp.nanosec


def xyz(v):
    return [v.x, v.y, v.z]


def xyzw(q):
    return [q.x, q.y, q.z, q.w]


def ros2_rows(msgtype, m):
    """[(stream suffix, header stamp ns, values)] of one message decoded by
    mcap-ros2-support, by the stream table of docs/datasets.md."""
    if msgtype == "tf2_msgs/msg/TFMessage":
        out = []
        for tr in m.transforms:
            pair = f"{tr.header.frame_id.lstrip('/')}/{tr.child_frame_id.lstrip('/')}"
            out += [(f"{pair}/translation", ns(tr.header.stamp), xyz(tr.transform.translation)),
                    (f"{pair}/rotation", ns(tr.header.stamp), xyzw(tr.transform.rotation))]
        return out
    h = ns(m.header.stamp)
    if msgtype == "sensor_msgs/msg/Imu":
        return [("orientation", h, xyzw(m.orientation)),
                ("angular_velocity", h, xyz(m.angular_velocity)),
                ("linear_acceleration", h, xyz(m.linear_acceleration))]
    if msgtype == "nav_msgs/msg/Odometry":
        return [("pose/position", h, xyz(m.pose.pose.position)),
                ("pose/orientation", h, xyzw(m.pose.pose.orientation)),
                ("twist/linear", h, xyz(m.twist.twist.linear)),
                ("twist/angular", h, xyz(m.twist.twist.angular))]
    if msgtype == "geometry_msgs/msg/PoseWithCovarianceStamped":
        return [("position", h, xyz(m.pose.pose.position)),
                ("orientation", h, xyzw(m.pose.pose.orientation))]
    if msgtype == "sensor_msgs/msg/NavSatFix":
        return [("", h, [m.latitude, m.longitude, m.altitude])]
    raise AssertionError(msgtype)


def ros1_rows(msgtype, raw):
    stamp, fields = ros1_bag_oracle.decode(msgtype, raw)
    if msgtype == "sensor_msgs/JointState":
        return [(f, stamp, fields[f]) for f in ("position", "velocity", "effort")]
    return [(suffix, stamp, v) for suffix, v in fields.items()]


@functools.lru_cache(maxsize=None)
def oracle(kind, path, topic, msgtype):
    """(log times, [rows per message]) of a topic read by the independent reader `kind`."""
    if kind == "ros1":
        found_type, log, raws = ros1_bag_oracle.messages(path)[topic]
        return log, [ros1_rows(found_type, raw) for raw in raws]
    read = {"mcap": ros2_bag_oracle.mcap_messages, "sqlite": ros2_bag_oracle.sqlite_messages}
    log, msgs = read[kind](path, topic)
    return log, [ros2_rows(msgtype, m) for m in msgs]


# path, topics {name: type}, the independent reader of the same messages, storage
FIXTURES = {
    "ros1/test1": (ROBOT / "ros1" / "robot_localization_test1.bag",
                   {"/imu/data": "sensor_msgs/msg/Imu",
                    "/husky_velocity_controller/odom": "nav_msgs/msg/Odometry",
                    "/fix": "sensor_msgs/msg/NavSatFix"}, ("mcap", TEST1_MCAP),
                   "rosbag1"),
    "ros2/test1_mcap": (ROBOT / "ros2" / "robot_localization_test1_mcap",
                        {"/imu/data": "sensor_msgs/msg/Imu",
                         "/husky_velocity_controller/odom": "nav_msgs/msg/Odometry",
                         "/fix": "sensor_msgs/msg/NavSatFix"}, ("mcap", TEST1_MCAP),
                        "mcap"),
    "ros1/test2": (ROBOT / "ros1" / "robot_localization_test2.bag",
                   {"/imu/data": "sensor_msgs/msg/Imu",
                    "/jackal_velocity_controller/odom": "nav_msgs/msg/Odometry"},
                   ("ros1", ROBOT / "ros1" / "robot_localization_test2.bag"),
                   "rosbag1"),
    "ros1/joint_states": (ROBOT / "ros1" / "robot_state_publisher_joint_states_indexed.bag",
                          {"joint_states": "sensor_msgs/msg/JointState"},
                          ("ros1", ROBOT / "ros1" /
                                   "robot_state_publisher_joint_states_indexed.bag"),
                          "rosbag1"),
    "ros2/evo_nav2": (ROBOT / "ros2" / "evo_nav2_turtlebot.mcap",
                      {"/odom": "nav_msgs/msg/Odometry", "/tf": "tf2_msgs/msg/TFMessage",
                       "/tf_static": "tf2_msgs/msg/TFMessage",
                       "/amcl_pose": "geometry_msgs/msg/PoseWithCovarianceStamped"},
                      ("mcap", ROBOT / "ros2" / "evo_nav2_turtlebot.mcap"), "mcap"),
    "ros2/evo_tf_dir": (ROBOT / "ros2" / "evo_tf_example",
                        {"/tf_static": "tf2_msgs/msg/TFMessage", "/tf": "tf2_msgs/msg/TFMessage"},
                        ("sqlite", TF_DB3), "sqlite3"),
    "ros2/evo_tf_db3": (TF_DB3,
                        {"/tf_static": "tf2_msgs/msg/TFMessage", "/tf": "tf2_msgs/msg/TFMessage"},
                        ("sqlite", TF_DB3), "sqlite3"),
}


def keep_increasing(t):
    """order='drop': keep the samples after every earlier one."""
    before = np.concatenate(([np.iinfo(np.int64).min], np.maximum.accumulate(t)[:-1]))
    return t > before


def expected_streams(topic, log, rows, clock):
    """{stream name: (times, values)} from an oracle's (log times, rows)."""
    got = {}
    for t_log, message in zip(log, rows):
        for suffix, stamp, values in message:
            times, vals = got.setdefault(f"{topic}/{suffix}" if suffix else topic, ([], []))
            times.append(stamp if clock == "header" else t_log)
            vals.append(values)
    out = {}
    for name, (times, vals) in got.items():
        t = np.array(times, dtype=np.int64)
        keep = keep_increasing(t)
        out[name] = (t[keep], np.array(vals, dtype=np.float64)[keep])
    return out


@pytest.mark.parametrize("clock", ["header", "log"])
@pytest.mark.parametrize("key", list(FIXTURES))
def test_streams_equal_an_independent_read(key, clock):
    path, topics, reader, storage = FIXTURES[key]
    rec = rd.open(path, clock=clock, order="drop")
    assert rec.format == ("rosbag1" if path.suffix == ".bag" else "rosbag2")
    assert rec.meta["storage"] == storage
    ep = rec.episodes[0]
    names = []
    for topic, msgtype in topics.items():
        log, rows = oracle(*reader, topic, msgtype)
        assert rec.meta["topics"][topic] == {"type": msgtype, "messages": len(log)}
        for name, (times, values) in expected_streams(topic, log, rows, clock).items():
            s = ep.streams[name]
            names.append(name)
            assert s.clock == clock
            assert s.meta["topic"] == topic and s.meta["type"] == msgtype
            np.testing.assert_array_equal(s.times, times, err_msg=name)
            np.testing.assert_array_equal(s.values, values, err_msg=name)
            assert s.values.dtype == np.float64
            assert s.kind == ("quaternion" if name.endswith(("orientation", "rotation"))
                              else "vector")
    assert sorted(ep.streams) == sorted(names)
    assert rec.meta["skipped"] == {}


@pytest.mark.parametrize("key", list(FIXTURES))
def test_span_and_meta(key):
    path, topics, reader, _ = FIXTURES[key]
    rec = rd.open(path)
    logs = np.concatenate([oracle(*reader, t, m)[0] for t, m in topics.items()])
    assert rec.meta["messages"] == logs.size
    assert (rec.meta["start_ns"], rec.meta["end_ns"]) == (logs.min(), logs.max())
    assert rec.meta["duration_ns"] == logs.max() - logs.min()
    assert rec.meta["clock"] == "header"
    ep = rec.episodes[0]
    assert len(rec.episodes) == 1 and ep.index == 0
    assert ep.meta == {"source": str(path), "start_ns": logs.min(), "end_ns": logs.max()}


def test_db3_row_counts_and_times():
    counts = ros2_bag_oracle.sqlite_counts(TF_DB3)
    rec = rd.open(TF_DB3, clock="log")
    assert {t: v["messages"] for t, v in rec.meta["topics"].items()} == counts
    log, _ = ros2_bag_oracle.sqlite_messages(TF_DB3, "/tf")
    np.testing.assert_array_equal(rec.episodes[0].streams["/tf/odom/base_footprint/rotation"].times,
                                  log)


def test_joint_state_fields_are_the_joint_names():
    path = ROBOT / "ros1" / "robot_state_publisher_joint_states_indexed.bag"
    _, _, raws = ros1_bag_oracle.messages(path)["joint_states"]
    _, first = ros1_bag_oracle.decode("sensor_msgs/JointState", raws[0])
    ep = rd.open(path).episodes[0]
    for f in ("position", "velocity", "effort"):
        assert ep.streams[f"joint_states/{f}"].fields == first["name"]
    assert len(first["name"]) == 42


def test_default_order_errors_on_repeated_log_times():
    """test2.bag's odometry was logged with 359 repeated receive times: an
    error naming stream and index with clock='log', dropped with order='drop';
    its header stamps are strictly increasing."""
    path = ROBOT / "ros1" / "robot_localization_test2.bag"
    name = "/jackal_velocity_controller/odom/pose/position"
    with pytest.raises(rd.DatasetError, match=r"robot_localization_test2\.bag.*"
                       r"/jackal_velocity_controller/odom/pose/position.*time repeats at index"):
        rd.open(path, clock="log").episodes[0].streams[name].times
    log = ros1_bag_oracle.messages(path)["/jackal_velocity_controller/odom"][1]
    repeats = int(np.count_nonzero(np.diff(log) == 0))
    assert repeats == 359
    dropped = rd.open(path, clock="log", order="drop").episodes[0].streams[name]
    assert len(dropped) == log.size - repeats and dropped.meta["dropped"] == repeats
    header = rd.open(path).episodes[0].streams[name]
    assert len(header) == log.size and header.clock == "header"


def test_topics_option_reads_only_those():
    rec = rd.open(ROBOT / "ros2" / "evo_nav2_turtlebot.mcap", topics=["/odom"])
    assert sorted(rec.episodes[0].streams) == [f"/odom/{s}" for s in
                                               sorted(["pose/position", "pose/orientation",
                                                       "twist/linear", "twist/angular"])]
    with pytest.raises(rd.DatasetError, match=r"no topic '/nope'.*/amcl_pose"):
        rd.open(ROBOT / "ros2" / "evo_nav2_turtlebot.mcap", topics=["/nope"])


def test_bad_options():
    with pytest.raises(ValueError, match="clock must be one of"):
        rd.open(TF_DB3, clock="receive")
    with pytest.raises(ValueError, match="order must be one of"):
        rd.open(TF_DB3, order="sort")


class _Counting:
    """Messages of numeric topics read for decoding (from the file or the
    stash), per message type: whichever path then decodes them, in bulk or
    one by one."""

    def __init__(self, monkeypatch):
        from robocache.datasets import rosbag
        self.calls = {}
        real = rosbag._Bag.read_rows

        def counted(bag, topic, others, where):
            msgtype = bag.topics[topic]["type"]
            times, rows = real(bag, topic, others, where)
            self.calls[msgtype] = self.calls.get(msgtype, 0) + len(rows)
            return times, rows
        monkeypatch.setattr(rosbag._Bag, "read_rows", counted)


@pytest.mark.parametrize("path", [ROBOT / "ros1" / "robot_localization_test1.bag",
                                  ROBOT / "ros2" / "robot_localization_test1_mcap"])
def test_open_is_lazy_and_decodes_each_topic_once(path, monkeypatch):
    counting = _Counting(monkeypatch)
    rec = rd.open(path)
    streams = rec.episodes[0].streams
    assert counting.calls == {}
    assert not any(s.loaded for s in streams.values())
    streams["/imu/data/angular_velocity"].values
    assert counting.calls == {"sensor_msgs/msg/Imu": 11865}
    streams["/imu/data/orientation"].times
    streams["/imu/data/linear_acceleration"].values
    assert counting.calls == {"sensor_msgs/msg/Imu": 11865}
    assert not streams["/fix"].loaded
    streams["/fix"].values
    assert counting.calls == {"sensor_msgs/msg/Imu": 11865, "sensor_msgs/msg/NavSatFix": 989}
    imu = streams["/imu/data/angular_velocity"]
    first = imu.values.copy()
    imu.release()
    np.testing.assert_array_equal(imu.values, first)  # read again after release
    assert counting.calls["sensor_msgs/msg/Imu"] == 2 * 11865


def test_transform_topics_are_decoded_at_open(monkeypatch):
    """The parent->child pairs of TFMessage topics are only in the messages."""
    counting = _Counting(monkeypatch)
    rec = rd.open(ROBOT / "ros2" / "evo_nav2_turtlebot.mcap")
    assert counting.calls == {"tf2_msgs/msg/TFMessage": 5422 + 1}
    rec.episodes[0].streams["/tf/map/odom/rotation"].values
    assert counting.calls == {"tf2_msgs/msg/TFMessage": 5423}


def test_folder_without_metadata_reads_its_storage_file(tmp_path):
    """A folder holding one .mcap (no metadata.yaml) is read as that file."""
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "nav2.mcap").write_bytes((ROBOT / "ros2" / "evo_nav2_turtlebot.mcap").read_bytes())
    rec = rd.open(folder)
    want = rd.open(ROBOT / "ros2" / "evo_nav2_turtlebot.mcap").episodes[0].streams
    got = rec.episodes[0].streams
    assert rec.format == "rosbag2" and rec.meta["storage"] == "mcap" and list(got) == list(want)
    np.testing.assert_array_equal(got["/odom/twist/linear"].values,
                                  want["/odom/twist/linear"].values)


def test_db3_without_stored_definitions_uses_ros2_humble_types(tmp_path):
    """sqlite3 bags recorded before ROS 2 Iron store no message definitions."""
    bag = tmp_path / "tf"
    shutil.copytree(ROBOT / "ros2" / "evo_tf_example", bag)
    con = sqlite3.connect(bag / "tf_example.db3")
    con.execute("DELETE FROM message_definitions")
    con.commit()
    con.close()
    got = rd.open(bag).episodes[0].streams
    want = rd.open(ROBOT / "ros2" / "evo_tf_example").episodes[0].streams
    assert list(got) == list(want)
    for name, s in want.items():
        np.testing.assert_array_equal(got[name].times, s.times)
        np.testing.assert_array_equal(got[name].values, s.values)


def count_passes(monkeypatch):
    """Counts the passes over a bag's file (rosbags readers opened on its
    messages, MCAP chunk reads)."""
    from robocache.datasets import ros_mcap, rosbag
    passes = []
    real, real_mcap = rosbag._Bag.messages, ros_mcap.read

    def counted(bag, topics, *args):
        passes.append(sorted(topics))
        return real(bag, topics, *args)

    def counted_mcap(index, topics, **kwargs):
        passes.append(sorted(topics))
        return real_mcap(index, topics, **kwargs)
    monkeypatch.setattr(rosbag._Bag, "messages", counted)
    monkeypatch.setattr(ros_mcap, "read", counted_mcap)
    return passes


def test_one_pass_keeps_the_other_topics_raw_messages(monkeypatch):
    """Reading the IMU of the bz2 ROS 1 bag decompresses its chunks once; the
    odometry and GPS then decode from the raw messages that pass kept."""
    passes = count_passes(monkeypatch)
    streams = rd.open(ROBOT / "ros1" / "robot_localization_test1.bag").episodes[0].streams
    streams["/imu/data/orientation"].values
    assert passes == [["/fix", "/husky_velocity_controller/odom", "/imu/data"]]
    for s in streams.values():
        s.values
    assert len(passes) == 1


def test_stash_budget(monkeypatch):
    """With no room to keep raw messages each topic is a pass of its own and
    the streams are the same."""
    from robocache.datasets import rosbag
    path = ROBOT / "ros2" / "robot_localization_test1_mcap"
    want = {n: (s.times, s.values) for n, s in rd.open(path).episodes[0].streams.items()}
    monkeypatch.setattr(rosbag, "STASH_BYTES", 10_000)
    passes = count_passes(monkeypatch)
    got = rd.open(path).episodes[0].streams
    for name, (times, values) in want.items():
        np.testing.assert_array_equal(got[name].times, times)
        np.testing.assert_array_equal(got[name].values, values)
    assert len(passes) == 3


def test_transform_topics_take_one_pass_at_open(monkeypatch):
    passes = count_passes(monkeypatch)
    rd.open(ROBOT / "ros2" / "evo_tf_example")
    assert passes == [["/tf", "/tf_static"]]
