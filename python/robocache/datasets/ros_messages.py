"""ROS messages to streams: which streams a message type gives and how the
messages of one topic (rosbags' deserialized objects) become their arrays.

layout(msgtype, fielddefs) -> a Layout, or a str saying why the type gives
no stream (fielddefs: the bag's type store, rosbags' `Typestore.fielddefs`).

A Layout's `streams` are (suffix, kind, fields) known without reading a
message (fields None where the messages name them: JointState; Transforms
know theirs only after decoding), `stamped` says whether the type has a
top-level std_msgs/Header, and `collector(use_header)` returns an object whose
add(msg, log_time_ns) takes the topic's messages in order and whose finish()
returns {suffix: (kind, times int64 [S] ns, values [S, D], fields)}.
The stream of a suffix is named "<topic>/<suffix>" ("<topic>" for "").

Standard types (field names as in the ROS message definitions):
  sensor_msgs/Imu            orientation (quaternion x y z w), angular_velocity,
                             linear_acceleration (x y z)
  nav_msgs/Odometry          pose/position, pose/orientation, twist/linear, twist/angular
  geometry_msgs/PoseStamped,
  PoseWithCovarianceStamped  position, orientation
  geometry_msgs/TwistStamped linear, angular
  sensor_msgs/NavSatFix      "" (the topic itself): latitude longitude altitude (deg, deg, m)
  sensor_msgs/JointState     position, velocity, effort; fields = joint names
  tf2_msgs/TFMessage         <parent>/<child>/translation, <parent>/<child>/rotation
  sensor_msgs/Image,
  CompressedImage            "" : kind "image", values = message index [S, 1] int64
Covariances of the standard types are not streams. Any other type: its
numeric fields (bool, integers, float32/64 and fixed-size arrays of them, one
column per element, "name[i]"), grouped by the message they belong to: one
stream per nested message path ("pose/position"), "" for top-level fields;
header, strings and variable-length arrays are not streams.
"""

import operator

import numpy as np
from rosbags.interfaces import Nodetype

from ._series import DatasetError

HEADER = "std_msgs/msg/Header"
QUATERNION = "geometry_msgs/msg/Quaternion"
XYZ = ("x", "y", "z")
XYZW = ("x", "y", "z", "w")
JOINT_FIELDS = ("position", "velocity", "effort")
IMAGE_TYPES = ("sensor_msgs/msg/Image", "sensor_msgs/msg/CompressedImage")
TRANSFORMS = "tf2_msgs/msg/TFMessage"

# ROS base type -> numpy dtype of its column (bool as 0/1 uint8)
NUMERIC = {"bool": np.uint8, "byte": np.uint8, "char": np.uint8, "int8": np.int8,
           "uint8": np.uint8, "int16": np.int16, "uint16": np.uint16, "int32": np.int32,
           "uint32": np.uint32, "int64": np.int64, "uint64": np.uint64,
           "float32": np.float32, "float64": np.float64}

# message type -> [(suffix, attribute path of the sub-message, field names, kind)]
STANDARD = {
    "sensor_msgs/msg/Imu": [
        ("orientation", "orientation", XYZW, "quaternion"),
        ("angular_velocity", "angular_velocity", XYZ, "vector"),
        ("linear_acceleration", "linear_acceleration", XYZ, "vector")],
    "nav_msgs/msg/Odometry": [
        ("pose/position", "pose.pose.position", XYZ, "vector"),
        ("pose/orientation", "pose.pose.orientation", XYZW, "quaternion"),
        ("twist/linear", "twist.twist.linear", XYZ, "vector"),
        ("twist/angular", "twist.twist.angular", XYZ, "vector")],
    "geometry_msgs/msg/PoseStamped": [
        ("position", "pose.position", XYZ, "vector"),
        ("orientation", "pose.orientation", XYZW, "quaternion")],
    "geometry_msgs/msg/PoseWithCovarianceStamped": [
        ("position", "pose.pose.position", XYZ, "vector"),
        ("orientation", "pose.pose.orientation", XYZW, "quaternion")],
    "geometry_msgs/msg/TwistStamped": [
        ("linear", "twist.linear", XYZ, "vector"),
        ("angular", "twist.angular", XYZ, "vector")],
    "sensor_msgs/msg/NavSatFix": [
        ("", "", ("latitude", "longitude", "altitude"), "vector")],
}

_STAMP = operator.attrgetter("header.stamp.sec", "header.stamp.nanosec")


def stamps_ns(rows):
    """(sec, nanosec) pairs -> int64 [S] ns."""
    a = np.array(rows, dtype=np.int64).reshape(-1, 2)
    return a[:, 0] * 1_000_000_000 + a[:, 1]


class _Clock:
    """The times of one stream: header.stamp of each message or its log time."""

    def __init__(self, use_header):
        self.use_header = use_header
        self.rows = []

    def add(self, obj, log_time):
        self.rows.append(_STAMP(obj) if self.use_header else log_time)

    def finish(self):
        if self.use_header:
            return stamps_ns(self.rows)
        return np.array(self.rows, dtype=np.int64)


class Group:
    """One stream of a fixed layout: `leaves` are (attribute path, field name,
    width) with width 0 for a scalar and n for a fixed-size array (n columns)."""

    def __init__(self, suffix, kind, leaves, dtype):
        self.suffix, self.kind, self.dtype = suffix, kind, np.dtype(dtype)
        self.fields, self.scalar_cols, self.arrays = [], [], []
        scalar_paths = []
        for path, name, width in leaves:
            col = len(self.fields)
            if width:
                self.fields += [f"{name}[{i}]" for i in range(width)]
                self.arrays.append((path, slice(col, col + width)))
            else:
                self.fields.append(name)
                self.scalar_cols.append(col)
                scalar_paths.append(path)
        self.scalar_paths = scalar_paths

    def rows(self):
        """[(getter, list)]: one getter for the scalars (a tuple per message),
        one per array leaf."""
        out = []
        if self.scalar_paths:
            out.append((operator.attrgetter(*self.scalar_paths), []))
        out += [(operator.attrgetter(path), []) for path, _ in self.arrays]
        return out

    def values(self, rows, n):
        """[n, D] of this group from the lists filled by rows()."""
        D = len(self.fields)
        if not self.arrays:
            return np.array(rows[0][1], dtype=self.dtype).reshape(n, D)
        out = np.empty((n, D), dtype=self.dtype)
        k = 0
        if self.scalar_paths:
            out[:, self.scalar_cols] = np.array(rows[0][1], dtype=self.dtype).reshape(
                n, len(self.scalar_cols))
            k = 1
        for (_, cols), (_, got) in zip(self.arrays, rows[k:]):
            if n:
                out[:, cols] = np.stack(got)
        return out


class Fixed:
    """A type whose streams are known from its definition (the standard types
    above and any other type with numeric fields)."""

    def __init__(self, groups, stamped):
        self.groups = groups
        self.stamped = stamped
        self.streams = [(g.suffix, g.kind, g.fields) for g in groups]

    def collector(self, use_header):
        return _FixedCollector(self.groups, use_header)


class _FixedCollector:
    def __init__(self, groups, use_header):
        self.groups = groups
        self.clock = _Clock(use_header)
        self.rows = [g.rows() for g in groups]
        self.ops = [(get, got.append) for rows in self.rows for get, got in rows]

    def add(self, msg, log_time):
        self.clock.add(msg, log_time)
        for get, append in self.ops:
            append(get(msg))

    def finish(self):
        times = self.clock.finish()
        n = times.shape[0]
        return {g.suffix: (g.kind, times, g.values(rows, n), g.fields)
                for g, rows in zip(self.groups, self.rows)}


class Joints:
    """sensor_msgs/JointState: position, velocity and effort with the joint
    names of the first message as fields; a message naming the same joints in
    another order is reordered by name; an empty array (not provided) gives a
    row of NaN. Missing, new or repeated joint names, or an array whose length
    is neither 0 nor the number of names: DatasetError."""

    stamped = True
    streams = [(f, "vector", None) for f in JOINT_FIELDS]

    def collector(self, use_header):
        return _JointCollector(use_header)


class _JointCollector:
    def __init__(self, use_header):
        self.clock = _Clock(use_header)
        self.names = None
        self.orders = {}  # names of a message -> index array into them, None if as the first
        self.rows = {f: [] for f in JOINT_FIELDS}
        self.missing = None

    def _order(self, names):
        if self.names is None:
            if len(set(names)) != len(names):
                raise DatasetError(f"repeated joint names in {list(names)}")
            self.names = names
            self.missing = np.full(len(names), np.nan)
        if names == self.names:
            return None
        first = set(self.names)
        if set(names) != first or len(names) != len(self.names):
            missing = [n for n in self.names if n not in names]
            new = [n for n in names if n not in first]
            raise DatasetError(f"joint names differ from the first message's: missing {missing}, "
                               f"new {new}" + ("" if missing or new else ", repeated names"))
        return np.array([names.index(n) for n in self.names])

    def add(self, msg, log_time):
        names = tuple(msg.name)
        if names not in self.orders:
            self.orders[names] = self._order(names)
        order = self.orders[names]
        self.clock.add(msg, log_time)
        for field, rows in self.rows.items():
            v = getattr(msg, field)
            if len(v) == 0:
                v = self.missing
            elif len(v) != len(names):
                raise DatasetError(f"{len(v)} {field} values for {len(names)} joint names")
            elif order is not None:
                v = np.asarray(v)[order]
            rows.append(v)

    def finish(self):
        times = self.clock.finish()
        fields = list(self.names or ())
        return {f: ("vector", times,
                    np.stack(rows).astype(np.float64) if rows else np.empty((0, 0)), fields)
                for f, rows in self.rows.items()}


class Transforms:
    """tf2_msgs/TFMessage: per parent->child pair (frame ids without a leading
    "/", as tf2 names them) "<parent>/<child>/translation" (x y z) and
    "<parent>/<child>/rotation" (quaternion x y z w), timed by each
    transform's header.stamp. The pairs are in the messages: streams is None."""

    stamped = True
    streams = None

    def collector(self, use_header):
        return _TransformCollector(use_header)


class _TransformCollector:
    # per transform: parent, child, stamp (sec, nanosec), translation, rotation
    _GET = operator.attrgetter(
        "header.frame_id", "child_frame_id", "header.stamp.sec", "header.stamp.nanosec",
        *(f"transform.translation.{c}" for c in XYZ), *(f"transform.rotation.{c}" for c in XYZW))

    def __init__(self, use_header):
        self.use_header = use_header
        self.pairs = {}  # (parent, child) without leading "/" -> [(log time, values)]
        self.keys = {}   # (parent, child) as in the messages -> key of pairs

    def add(self, msg, log_time):
        for tr in msg.transforms:
            row = self._GET(tr)
            key = self.keys.get(row[:2])
            if key is None:
                key = self.keys[row[:2]] = (row[0].lstrip("/"), row[1].lstrip("/"))
                self.pairs.setdefault(key, [])
            self.pairs[key].append((log_time, row[2:]))

    def finish(self):
        out = {}
        for (parent, child), rows in self.pairs.items():
            values = np.array([r for _, r in rows], dtype=np.float64)  # int32 / uint32 exact
            if self.use_header:
                times = stamps_ns(values[:, :2].astype(np.int64))
            else:
                times = np.array([t for t, _ in rows], dtype=np.int64)
            out[f"{parent}/{child}/translation"] = (
                "vector", times, np.ascontiguousarray(values[:, 2:5]), list(XYZ))
            out[f"{parent}/{child}/rotation"] = (
                "quaternion", times, np.ascontiguousarray(values[:, 5:9]), list(XYZW))
        return out


class Images:
    """sensor_msgs/Image and CompressedImage: one stream, kind "image",
    values = the message's index in the topic [S, 1] int64 (decoded on demand
    by robocache.datasets.ros_images); the collector's log_times (int64 [S],
    after finish) say where to find each message again."""

    stamped = True
    streams = [("", "image", ["frame_index"])]

    def collector(self, use_header):
        return _ImageCollector(use_header)


class _ImageCollector:
    def __init__(self, use_header):
        self.clock = _Clock(use_header)
        self.log_times = []

    def add(self, msg, log_time):
        self.clock.add(msg, log_time)
        self.log_times.append(log_time)

    def finish(self):
        self.log_times = np.array(self.log_times, dtype=np.int64)
        times = self.clock.finish()
        index = np.arange(times.shape[0], dtype=np.int64).reshape(-1, 1)
        return {"": ("image", times, index, ["frame_index"])}


def _standard(msgtype, stamped):
    groups = [Group(suffix, kind, [(f"{base}.{f}" if base else f, f, 0) for f in fields],
                    np.float64)
              for suffix, base, fields, kind in STANDARD[msgtype]]
    return Fixed(groups, stamped)


def _numeric_array(node, detail):
    return (node == Nodetype.ARRAY and detail[0][0] == Nodetype.BASE
            and detail[0][1][0] in NUMERIC)


def _groups(fielddefs, typename, path, out):
    """Appends the Groups of `typename` at attribute `path` (a tuple) to out."""
    leaves, dtypes, nested = [], [], []
    for name, (node, detail) in fielddefs[typename][1]:
        attr = ".".join(path + (name,))
        if not path and name == "header" and node == Nodetype.NAME and detail == HEADER:
            continue
        if node == Nodetype.BASE and detail[0] in NUMERIC:
            leaves.append((attr, name, 0))
            dtypes.append(NUMERIC[detail[0]])
        elif _numeric_array(node, detail):
            leaves.append((attr, name, detail[1]))
            dtypes.append(NUMERIC[detail[0][1][0]])
        elif node == Nodetype.NAME:
            nested.append((detail, path + (name,)))
    if leaves:
        kind = "quaternion" if typename == QUATERNION and \
            [n for _, n, _ in leaves] == list(XYZW) else "vector"
        out.append(Group("/".join(path), kind, leaves, np.result_type(*dtypes)))
    for sub, subpath in nested:
        _groups(fielddefs, sub, subpath, out)


def layout(msgtype, fielddefs):
    """The Layout of `msgtype`, or a str saying why it gives no stream."""
    if msgtype not in fielddefs:
        return f"{msgtype}: no message definition in the bag"
    fields = fielddefs[msgtype][1]
    stamped = any(name == "header" and node == Nodetype.NAME and detail == HEADER
                  for name, (node, detail) in fields)
    if msgtype in STANDARD:
        return _standard(msgtype, stamped)
    if msgtype == "sensor_msgs/msg/JointState":
        return Joints()
    if msgtype == TRANSFORMS:
        return Transforms()
    if msgtype in IMAGE_TYPES:
        return Images()
    groups = []
    try:
        _groups(fielddefs, msgtype, (), groups)
    except KeyError as e:
        return f"{msgtype}: no definition of its field type {e.args[0]}"
    if not groups:
        return (f"{msgtype}: no numeric field (strings, header and variable-length arrays "
                "are not streams)")
    return Fixed(groups, stamped)
