"""An independent reader of ROS 1 bags (format 2.0, as documented on the ROS
wiki "Bags/Format/2.0") for the tests: the records parsed with struct, chunks
decompressed with the standard library, and the few message types the
fixtures hold decoded by their ROS 1 serialisation (little-endian, strings
and variable arrays prefixed by a uint32 length). No rosbags involved."""

import bz2
import struct

import numpy as np

OP_MSG, OP_CHUNK, OP_CONNECTION = 0x02, 0x05, 0x07


def _fields(header):
    out, i = {}, 0
    while i < len(header):
        (n,) = struct.unpack_from("<I", header, i)
        name, _, value = header[i + 4:i + 4 + n].partition(b"=")
        out[name.decode()] = value
        i += 4 + n
    return out


def _records(buf, start=0):
    i = start
    while i < len(buf):
        (hlen,) = struct.unpack_from("<I", buf, i)
        header = _fields(buf[i + 4:i + 4 + hlen])
        (dlen,) = struct.unpack_from("<I", buf, i + 4 + hlen)
        data = buf[i + 8 + hlen:i + 8 + hlen + dlen]
        yield header, data
        i += 8 + hlen + dlen


def messages(path):
    """{topic: (msgtype, log times int64 [n] ns, [raw bytes])} in log-time
    order (file order for equal times)."""
    buf = open(path, "rb").read()
    assert buf.startswith(b"#ROSBAG V2.0\n")
    conns, found = {}, {}

    def visit(header, data):
        op = header["op"][0]
        if op == OP_CONNECTION:
            conn = struct.unpack("<I", header["conn"])[0]
            conns[conn] = (header["topic"].decode(), _fields(data)["type"].decode())
        elif op == OP_MSG:
            conn = struct.unpack("<I", header["conn"])[0]
            sec, nsec = struct.unpack("<II", header["time"])
            found.setdefault(conn, []).append((sec * 1_000_000_000 + nsec, data))

    for header, data in _records(buf, len(b"#ROSBAG V2.0\n")):
        if header["op"][0] == OP_CHUNK:
            kind = header["compression"].decode()
            assert kind in ("none", "bz2"), kind
            inner = bz2.decompress(data) if kind == "bz2" else data
            for h, d in _records(inner):
                visit(h, d)
        else:
            visit(header, data)
    out = {}
    for conn, rows in found.items():
        topic, msgtype = conns[conn]
        times = np.array([t for t, _ in rows], dtype=np.int64)
        order = np.argsort(times, kind="stable")
        out[topic] = (msgtype, times[order], [rows[k][1] for k in order])
    return out


class _Cursor:
    def __init__(self, data):
        self.data, self.i = data, 0

    def take(self, fmt):
        got = struct.unpack_from("<" + fmt, self.data, self.i)
        self.i += struct.calcsize("<" + fmt)
        return got

    def string(self):
        (n,) = self.take("I")
        s = self.data[self.i:self.i + n].decode()
        self.i += n
        return s

    def stamp(self):
        """header (seq, stamp, frame_id) -> stamp in ns."""
        _, sec, nsec = self.take("III")
        self.string()
        return sec * 1_000_000_000 + nsec

    def f64s(self, n):
        return list(self.take(f"{n}d"))

    def f64_array(self):
        (n,) = self.take("I")
        return self.f64s(n)


def decode(msgtype, data):
    """(header stamp ns, {field path: list of floats}) of one message."""
    c = _Cursor(data)
    stamp = c.stamp()
    if msgtype == "sensor_msgs/Imu":
        o = c.f64s(4); c.f64s(9)
        av = c.f64s(3); c.f64s(9)
        la = c.f64s(3)
        return stamp, {"orientation": o, "angular_velocity": av, "linear_acceleration": la}
    if msgtype == "nav_msgs/Odometry":
        c.string()
        pose = c.f64s(7); c.f64s(36)
        twist = c.f64s(6)
        return stamp, {"pose/position": pose[:3], "pose/orientation": pose[3:],
                       "twist/linear": twist[:3], "twist/angular": twist[3:]}
    if msgtype == "sensor_msgs/JointState":
        (n,) = c.take("I")
        names = [c.string() for _ in range(n)]
        return stamp, {"name": names, "position": c.f64_array(), "velocity": c.f64_array(),
                       "effort": c.f64_array()}
    raise AssertionError(f"no decoder for {msgtype}")
