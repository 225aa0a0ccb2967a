"""Bulk decoding of a topic's raw ROS messages with NumPy: the arrays that
robocache.datasets.ros_messages' collectors build message by message, read
at fixed byte offsets from all messages at once when the topic's layout is
fixed.

decode(layout, msgtype, fielddefs, raws, log_times, ros2=, use_header=, first=)
returns {suffix: (kind, times int64 [S] ns, values [S, D], fields)}, equal
bit for bit to the collector of `layout` (a ros_messages Fixed, Joints or
Transforms) fed the same messages, or None where the fast path does not hold
(the caller then decodes message by message, which also reports bad messages).

Layout rules (those of rosbags' serializers, walked on the type's field list
in the bag's type store, rosbags' Typestore.fielddefs):
  ROS 2 (CDR)  4-byte encapsulation header 00 01 (little endian) or 00 00
               (big endian), then the payload. Each primitive is aligned to
               its size (1, 2, 4, 8 bytes) counted from the payload start;
               string: uint32 length (with the terminating NUL), the bytes,
               NUL; sequence: uint32 count, then its elements (a non-empty
               sequence of primitives aligned to their size); fixed array:
               its elements; nested message: its fields, no padding of its
               own; an empty message: one uint8 (structure_needs_at_least_one_member).
               Up to 3 trailing padding bytes.
  ROS 1        little endian, packed (no alignment); string: uint32 length,
               the bytes (no NUL); sequence: uint32 count, its elements.
Fast path: every message of the topic has the byte length of the first, and
the bytes of its variable-length parts (string lengths and contents such as
header.frame_id or JointState.name, sequence counts, and the CDR
encapsulation header) equal the first message's, compared over all messages
at once. Then each field sits at the offset the first message gives, and a
field of all messages is one strided view of the concatenated messages. Any
other topic (a frame_id that changes, a changing joint count, wstring or
float128 fields, a first message that does not walk cleanly) returns None.
"""

import numpy as np
from rosbags.interfaces import Nodetype

from . import ros_messages

SIZES = {"bool": 1, "byte": 1, "char": 1, "int8": 1, "uint8": 1, "int16": 2, "uint16": 2,
         "int32": 4, "uint32": 4, "int64": 8, "uint64": 8, "float32": 4, "float64": 8}
CODES = {"bool": "u1", "byte": "u1", "char": "u1", "int8": "i1", "uint8": "u1", "int16": "i2",
         "uint16": "u2", "int32": "i4", "uint32": "u4", "int64": "i8", "uint64": "u8",
         "float32": "f4", "float64": "f8"}
EMPTY = "structure_needs_at_least_one_member"
NS = 1_000_000_000


class _NotFixed(Exception):
    """The first message does not give a fixed layout (the per-message path decides)."""


class _Walk:
    """Offsets in one raw message: `leaves` {attribute path: (offset, base
    type, count or None for a scalar)} of its primitives and primitive
    arrays, `fixed` [(start, stop)] byte ranges that must not vary."""

    def __init__(self, fielddefs, data, ros2):
        self.defs, self.data, self.ros2 = fielddefs, data, ros2
        self.leaves, self.fixed = {}, []
        if ros2:
            if len(data) < 4 or data[0] != 0 or data[1] not in (0, 1):
                raise _NotFixed("CDR encapsulation")
            self.order, self.start = ("<" if data[1] else ">"), 4
            self.fixed.append((0, 4))
        else:
            self.order, self.start = "<", 0
        self.pos = 0  # from the payload start

    def end(self):
        """Raises unless the message ends where its fields do (CDR: up to 3
        padding bytes), as rosbags' deserializers require."""
        left = len(self.data) - self.start - self.pos
        if left < 0 or left > (3 if self.ros2 else 0):
            raise _NotFixed("message size")

    def _take(self, size, align):
        if self.ros2 and align > 1:
            self.pos = (self.pos + align - 1) & -align
        at = self.start + self.pos
        self.pos += size
        if self.start + self.pos > len(self.data):
            raise _NotFixed("past the end")
        return at

    def _count(self):
        at = self._take(4, 4)
        self.fixed.append((at, at + 4))
        return int.from_bytes(self.data[at:at + 4], "little" if self.order == "<" else "big")

    def _string(self):
        n = self._count()
        at = self._take(n, 1)
        if self.ros2 and (n == 0 or self.data[at + n - 1] != 0):
            raise _NotFixed("string terminator")
        bytes(self.data[at:at + n - self.ros2]).decode()  # UTF-8, as rosbags
        self.fixed.append((at, at + n))

    def _elements(self, path, sub, count, sequence):
        node, detail = sub
        if node == Nodetype.NAME:
            for i in range(count):
                self.message(detail, path + (str(i),))
        elif detail[0] == "string":
            for _ in range(count):
                self._string()
        elif detail[0] in SIZES:
            size = SIZES[detail[0]]
            at = self._take(size * count, size if count or not sequence else 1)
            self.leaves[".".join(path)] = (at, detail[0], count)
        else:
            raise _NotFixed(detail[0])

    def message(self, typename, path=()):
        for name, (node, detail) in self.defs[typename][1]:
            here = path + (name,)
            if node == Nodetype.NAME:
                self.message(detail, here)
            elif node == Nodetype.ARRAY:
                self._elements(here, detail[0], detail[1], False)
            elif node == Nodetype.SEQUENCE:
                self._elements(here, detail[0], self._count(), True)
            elif detail[0] == "string":
                self._string()
            elif detail[0] in SIZES and (self.ros2 or name != EMPTY):
                size = SIZES[detail[0]]
                self.leaves[".".join(here)] = (self._take(size, size), detail[0], None)
            else:
                raise _NotFixed(detail[0])


class _Messages:
    """All messages of a topic as one [n, L] byte block with the first
    message's offsets."""

    def __init__(self, walk, raws):
        self.n, self.size = len(raws), len(walk.data)
        self.buf = raws if isinstance(raws, np.ndarray) else b"".join(raws)
        self.walk = walk

    def same_layout(self, raws):
        if isinstance(raws, np.ndarray):
            if raws.shape != (self.n, self.size):
                return False
        elif len(self.buf) != self.n * self.size or any(len(r) != self.size for r in raws):
            return False
        if not self.walk.fixed:
            return True
        block = np.frombuffer(self.buf, np.uint8).reshape(self.n, self.size)
        cols = np.concatenate([np.arange(a, b) for a, b in self.walk.fixed])
        return bool((block[:, cols] == block[0, cols]).all())

    def column(self, path):
        """[n] (scalar) or [n, count] (array) of the field at `path`, native
        byte order; bool as 0/1 uint8."""
        at, base, count = self.walk.leaves[path]
        dtype = np.dtype(self.walk.order + CODES[base])
        shape, strides = ((self.n,), (self.size,)) if count is None else \
            ((self.n, count), (self.size, dtype.itemsize))
        view = np.ndarray(shape, dtype, buffer=self.buf, offset=at, strides=strides)
        if base == "bool":
            return (view != 0).astype(np.uint8)
        return view.astype(dtype.newbyteorder("="))

    def stamps(self, prefix=""):
        return (self.column(prefix + "header.stamp.sec").astype(np.int64) * NS
                + self.column(prefix + "header.stamp.nanosec").astype(np.int64))


def _fixed(layout, m, times):
    out = {}
    for g in layout.groups:
        values = np.empty((m.n, len(g.fields)), dtype=g.dtype)
        for col, path in zip(g.scalar_cols, g.scalar_paths):
            values[:, col] = m.column(path)
        for path, cols in g.arrays:
            values[:, cols] = m.column(path)
        out[g.suffix] = (g.kind, times, values, g.fields)
    return out


def _joints(m, times, first):
    names = list(first.name)
    if len(set(names)) != len(names):
        return None  # an error: the per-message path names it
    out = {}
    for field in ros_messages.JOINT_FIELDS:
        count = m.walk.leaves[field][2]
        if count == len(names):
            values = m.column(field).astype(np.float64)
        elif count == 0:
            values = np.full((m.n, len(names)), np.nan)
        else:
            return None
        out[field] = ("vector", times, values, names)
    return out


def _transforms(m, log_times, use_header, first):
    pairs = {}  # (parent, child) without leading "/" -> transform indices in a message
    for j, tr in enumerate(first.transforms):
        key = (tr.header.frame_id.lstrip("/"), tr.child_frame_id.lstrip("/"))
        pairs.setdefault(key, []).append(j)
    out = {}
    for (parent, child), js in pairs.items():
        cols = []
        for j in js:
            at = f"transforms.{j}."
            cols.append(np.stack(
                [m.column(at + "header.stamp.sec"), m.column(at + "header.stamp.nanosec")]
                + [m.column(f"{at}transform.translation.{c}") for c in ros_messages.XYZ]
                + [m.column(f"{at}transform.rotation.{c}") for c in ros_messages.XYZW],
                axis=-1).astype(np.float64))
        values = np.stack(cols, axis=1).reshape(-1, 9)  # message-major, as the messages run
        if use_header:
            times = ros_messages.stamps_ns(values[:, :2].astype(np.int64))
        else:
            times = np.repeat(log_times, len(js))
        out[f"{parent}/{child}/translation"] = (
            "vector", times, np.ascontiguousarray(values[:, 2:5]), list(ros_messages.XYZ))
        out[f"{parent}/{child}/rotation"] = (
            "quaternion", times, np.ascontiguousarray(values[:, 5:9]), list(ros_messages.XYZW))
    return out


def supports(layout):
    """Whether decode can take topics of this layout."""
    return isinstance(layout, (ros_messages.Fixed, ros_messages.Joints,
                               ros_messages.Transforms))


def decode(layout, msgtype, fielddefs, raws, log_times, *, ros2, use_header, first):
    """The streams of the messages `raws` (a list of bytes-like, or a C-contiguous
    uint8 [n, L] array of messages of one length L; in log-time order;
    `log_times` the int64 ns of each), or None off the fast path. `first()`
    deserializes the first message (names of JointState and TFMessage)."""
    if not len(raws) or not supports(layout):
        return None
    walk = _Walk(fielddefs, bytes(raws[0]), ros2)
    try:
        walk.message(msgtype)
        walk.end()
    except (_NotFixed, KeyError, UnicodeDecodeError):
        return None
    m = _Messages(walk, raws)
    if not m.same_layout(raws):
        return None
    log_times = np.array(log_times, dtype=np.int64)
    if isinstance(layout, ros_messages.Transforms):
        return _transforms(m, log_times, use_header, first())
    times = m.stamps() if use_header else log_times
    if isinstance(layout, ros_messages.Joints):
        return _joints(m, times, first())
    return _fixed(layout, m, times)
