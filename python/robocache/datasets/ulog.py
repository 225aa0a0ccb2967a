"""PX4 ULog flight logs through pyulog: format "ulog".

One Episode (index 0). Every logged topic instance with data is a Series
named "<topic>" (multi_id 0) or "<topic>_<multi_id>" (instances 1, 2, ...),
in (topic, multi_id) order: times its `timestamp` field (µs since boot) x
1000 ns, clock "timestamp"; fields the message's other fields as pyulog
names them (arrays flattened "q[0]".."q[3]", nested "a.b"; _padding
dropped); kind "vector"; values float32 [S, D] when every field is float32,
else float64 (integers, bools, uint64 µs times converted). Topics with a
4-element float array "q" or "q_*" (PX4 attitude quaternions, stored w x y
z) also give a Series "<stream>/<field>" of kind "quaternion" with the
columns reordered to x y z w (robocache's order, slerp in align).

Skipped (listed in rec.meta["skipped"] with the reason): topic instances
whose timestamps are all 0 (PX4 logs some topics, e.g. sensor_preflight,
without setting them). A topic whose timestamps repeat or go back is kept and
is a DatasetError naming it and the index on first access (order="drop"
keeps the increasing ones).

Lazy: open parses the header and definitions with pyulog (parse_header_only)
and walks the message framing once (_ulog_index: subscriptions, message
counts, first/last timestamps, dropouts; no data decoded). A topic's data
are parsed by pyulog on the first access of one of its series, with a
message filter of that topic (or of every topic given in topics=, parsed
together); pyulog reads the whole file for each such parse, so reading k
topics one at a time costs k passes over the file: give topics= to read
several in one pass. Parsed topics are kept for their sibling series.

A truncated file (a message cut by its end) is read up to the last whole
message, as pyulog does, and said in rec.meta["truncated"]; a corrupt
message stops the index there (rec.meta["corrupt"]); pyulog's own
corruption flag goes to rec.meta["file_corruption"] once data are parsed.
"""

import struct

import numpy as np

from . import _ulog_index
from ._deps import require
from ._series import DatasetError, Episode, Recording, Series

QUATERNION_FIELDS = ("x", "y", "z", "w")


def _pyulog():
    return require("pyulog", purpose="read PX4 ULog files")


def _stream_name(topic, multi_id):
    return topic if multi_id == 0 else f"{topic}_{multi_id}"


def _quaternion_fields(fmt):
    """Names of the 4-element float arrays of a message format that hold quaternions."""
    return [name for type_name, size, name in fmt.fields
            if size == 4 and type_name == "float" and (name == "q" or name.startswith("q_"))]


class _Topics:
    """Topic data parsed by pyulog on demand, kept per topic (all instances)."""

    def __init__(self, path, together, meta):
        self.path = path
        self.together = set(together or ())
        self.meta = meta
        self._parsed = {}

    def data(self, topic, multi_id, where):
        """The pyulog Data of one topic instance (a topic's first call parses it)."""
        if topic not in self._parsed:
            names = sorted(self.together) if topic in self.together else [topic]
            try:
                log = _pyulog().ULog(self.path, names)
            except (ValueError, OSError, struct.error, _pyulog().ULogException) as e:
                raise DatasetError(f"{where}: pyulog cannot parse topic {topic!r}: {e}") from None
            for name in names:
                self._parsed.setdefault(name, {})
            for d in log.data_list:
                self._parsed[d.name][d.multi_id] = d
            if log.file_corruption:
                self.meta["file_corruption"] = True
        got = self._parsed[topic].get(multi_id)
        if got is None:
            raise DatasetError(f"{where}: pyulog found no data of topic {topic!r} instance "
                               f"{multi_id} that the index lists")
        return got


def _fields(data):
    return [k for k in data.data if k != "timestamp" and not k.startswith("_padding")]


def _values(data, names):
    columns = [data.data[k] for k in names]
    dtype = np.float32 if columns and all(c.dtype == np.float32 for c in columns) \
        else np.float64
    if not columns:
        return np.empty((len(data.data["timestamp"]), 0), dtype=dtype)
    return np.stack([c.astype(dtype, copy=False) for c in columns], axis=1)


def _times(data):
    return data.data["timestamp"].astype(np.int64) * 1000


def _series(topics, topic, multi_id, stats, order, where):
    name = _stream_name(topic, multi_id)
    meta = {"topic": topic, "multi_id": multi_id, "messages": stats.count,
            "first_timestamp_us": stats.first_us, "last_timestamp_us": stats.last_us}

    def load():
        d = topics.data(topic, multi_id, where)
        names = _fields(d)
        return _times(d), _values(d, names), names

    return name, Series(name, load, kind="vector", clock="timestamp", meta=meta, order=order,
                        where=where)


def _quaternion(topics, topic, multi_id, field, order, where):
    wxyz = [f"{field}[{i}]" for i in range(4)]

    def load():
        d = topics.data(topic, multi_id, where)
        return _times(d), _values(d, wxyz[1:] + wxyz[:1])

    name = f"{_stream_name(topic, multi_id)}/{field}"
    meta = {"topic": topic, "multi_id": multi_id, "source_fields": wxyz[1:] + wxyz[:1]}
    return name, Series(name, load, kind="quaternion", clock="timestamp",
                        fields=QUATERNION_FIELDS, meta=meta, order=order, where=where)


def open(path, *, format="ulog", order="error", topics=None):
    """Opens a PX4 ULog file.

    topics  None (every logged topic) or names of topics: only those become
            streams, and the first access of any of them parses them all in
            one pyulog pass
    order   "error" or "drop" for timestamps that repeat or go back
    Returns a Recording of one episode; rec.meta: start_timestamp_us, info
    (pyulog's msg_info_dict: sys_name, ver_hw, ...), parameters (initial),
    dropouts (count, total_ms), skipped {stream: reason}, truncated /
    corrupt {reason, at_byte, file_bytes} when the walk stopped early.
    DatasetError naming the file when the header or definitions cannot be
    parsed, or when a topic of topics= was not logged.
    """
    pyulog = _pyulog()
    try:
        head = pyulog.ULog(path, parse_header_only=True)
    except (ValueError, OSError, struct.error, pyulog.ULogException) as e:
        raise DatasetError(f"{path}: not a readable ULog file ({e})") from None
    formats = head.message_formats
    subs, stats, dropouts, stop = _ulog_index.walk(path, formats, pyulog.ULog.get_field_size)
    logged = {topic for topic, _ in subs.values()}
    for t in topics or ():
        if t not in logged:
            raise DatasetError(f"{path}: topic {t!r} was not logged (topics: "
                               f"{', '.join(sorted(logged))})")
    meta = {"start_timestamp_us": head.start_timestamp, "info": dict(head.msg_info_dict),
            "parameters": dict(head.initial_parameters),
            "dropouts": {"count": len(dropouts), "total_ms": int(sum(dropouts))}, "skipped": {}}
    if stop is not None:
        meta[stop["reason"]] = stop
    loader = _Topics(path, topics, meta)
    where = f"{path}: episode 0"
    streams = {}
    for msg_id, (topic, multi_id) in sorted(subs.items(), key=lambda item: item[1]):
        s = stats[msg_id]
        if s.count == 0 or (topics is not None and topic not in topics):
            continue
        if s.first_us is None:
            meta["skipped"][_stream_name(topic, multi_id)] = "no timestamp field"
            continue
        if not s.any_nonzero:
            meta["skipped"][_stream_name(topic, multi_id)] = "all timestamps 0"
            continue
        name, series = _series(loader, topic, multi_id, s, order, where)
        streams[name] = series
        for field in _quaternion_fields(formats[topic]):
            qname, q = _quaternion(loader, topic, multi_id, field, order, where)
            streams[qname] = q
    return Recording("ulog", path, [Episode(0, streams, {"file": path})], meta)
