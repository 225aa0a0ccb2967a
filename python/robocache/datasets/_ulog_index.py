"""The message index of a ULog file: one pass over its message framing.

pyulog can parse the definitions alone, but it learns which topics and
instances were logged (the 'A' add-logged-message records of the data
section) only while loading their data. This pass walks the documented
framing (16-byte file header, then messages of uint16 size | uint8 type |
payload) and records, without decoding any data:
  subscriptions  msg_id -> (topic, multi_id) from 'A' (uint8 multi_id,
                 uint16 msg_id, name)
  per msg_id     data messages ('D': uint16 msg_id, then the topic's
                 fields), their first and last timestamp field (uint64 µs at
                 the format's timestamp offset) and whether any is non-zero
  dropouts       'O' records (uint16 duration in ms)
and where the walk stopped early: a message cut by the end of the file
(truncated) or of size 0 / type 0 (corrupt, where pyulog searches for the
next sync record).
"""

import builtins
import mmap
import struct

_HEADER = struct.Struct("<HB")
_U16 = struct.Struct("<H")
_U64 = struct.Struct("<Q")
_DATA, _ADD, _DROPOUT = ord("D"), ord("A"), ord("O")


class Stats:
    """Data messages of one subscription: count, first_us, last_us, any_nonzero."""

    __slots__ = ("count", "first_us", "last_us", "any_nonzero")

    def __init__(self):
        self.count = 0
        self.first_us = self.last_us = None
        self.any_nonzero = False


def timestamp_offset(name, formats, field_size):
    """Byte offset of the top-level `timestamp` field of message format `name`
    (pyulog MessageFormat objects by name; field_size(type) of a basic type),
    or None when the format has none."""
    offset = 0
    for type_name, array_size, field in formats[name].fields:
        if field == "timestamp":
            return offset
        offset += _size(type_name, formats, field_size) * max(array_size, 1)
    return None


def _size(type_name, formats, field_size):
    if type_name in formats:
        return sum(_size(t, formats, field_size) * max(n, 1)
                   for t, n, _ in formats[type_name].fields)
    return field_size(type_name)


def walk(path, formats, field_size):
    """(subscriptions, stats, dropouts_ms, stop) of the ULog file `path`:
    subscriptions {msg_id: (topic, multi_id)}, stats {msg_id: Stats},
    dropouts_ms [int], stop None or {"reason": "truncated" | "corrupt",
    "at_byte": offset of the message where the walk stopped, "file_bytes"}."""
    header, u64 = _HEADER.unpack_from, _U64.unpack_from
    subscriptions, dropouts = {}, []
    live = {}  # msg_id -> [count, first, last, any non-zero, timestamp offset]
    with builtins.open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
        n = len(buf)
        pos = 16
        stop = None
        while pos + 3 <= n:
            size, kind = header(buf, pos)
            end = pos + 3 + size
            if end > n:
                stop = "truncated"
                break
            if kind == _DATA:
                s = live.get(buf[pos + 3] | (buf[pos + 4] << 8))
                if s is not None:
                    s[0] += 1
                    off = s[4]
                    if off is not None and pos + 13 + off <= end:
                        t = u64(buf, pos + 5 + off)[0]
                        if s[1] is None:
                            s[1] = t
                        s[2] = t
                        if t:
                            s[3] = True
            elif kind == _ADD:
                msg_id = buf[pos + 4] | (buf[pos + 5] << 8)
                name = bytes(buf[pos + 6:end]).decode("utf-8", "replace")
                subscriptions[msg_id] = (name, buf[pos + 3])
                off = timestamp_offset(name, formats, field_size) if name in formats else None
                live[msg_id] = [0, None, None, False, off]
            elif kind == _DROPOUT and size >= 2:
                dropouts.append(_U16.unpack_from(buf, pos + 3)[0])
            elif size == 0 or kind == 0:
                stop = "corrupt"
                break
            pos = end
        if stop is None and pos < n:
            stop = "truncated"
    stats = {}
    for msg_id, (count, first, last, nonzero, _) in live.items():
        stats[msg_id] = s = Stats()
        s.count, s.first_us, s.last_us, s.any_nonzero = count, first, last, nonzero
    where = None if stop is None else {"reason": stop, "at_byte": pos, "file_bytes": n}
    return subscriptions, stats, dropouts, where
