"""ROS 2 bags (rosbag2: MCAP or sqlite3 storage) and ROS 1 bags (v2.0) for
robocache.datasets, read without a ROS install through rosbags (the
'datasets' extra) with the message definitions stored in the bag.

    rec = robocache.datasets.open("run.mcap")          # or a rosbag2 folder, a .db3, a .bag
    s = rec.episodes[0].streams["/imu/data/angular_velocity"]

A bag is one Episode. Streams and their names: robocache.datasets.ros_messages.
Times are int64 ns: header.stamp (clock "header", the default for messages
that have a std_msgs/Header) or the time the recorder logged the message
(clock "log"; always so for messages without a header). Messages are taken in
log-time order, as rosbags yields them; a stream whose times repeat or go back
is an error on access unless order="drop" (robocache.datasets.Series).

Lazy: open reads the bag's index and message definitions. The first access to
a stream of a topic decodes that topic's messages once and hands each of its
streams its arrays (memory follows the topics asked for); the exception is
tf2_msgs/TFMessage topics, decoded at open because their parent->child pairs,
and so their streams, are only in the messages. The pass over the file that
reads a topic also keeps the raw messages of the other numeric topics, up to
STASH_BYTES in all, so that reading them later needs no second pass (a bag's
chunks mix topics: each pass decompresses them all). Image frames are decoded
only when asked for (Series.frames). Numeric topics whose messages share one
byte layout decode all at once with NumPy (robocache.datasets.ros_bulk), the
others message by message through rosbags, with the same arrays.
"""

import contextlib
import functools
import os
import pathlib

import numpy as np

from ._deps import require
from ._series import DatasetError, Episode, Recording, Series

CLOCKS = ("header", "log")
STORAGE = {".mcap": "mcap", ".db3": "sqlite3"}  # rosbag2 storage file suffix -> storage
# errors that are the caller's system, not the bag: passed on as they are
PASSED_ON = (FileNotFoundError, PermissionError, MemoryError)
# raw messages a pass over the file keeps for the topics read later (bytes)
STASH_BYTES = 64 << 20


@contextlib.contextmanager
def _reading(what):
    """Turns what rosbags (or the decompressors under it) raise on a damaged
    bag into a DatasetError "<what()>: <message>"."""
    try:
        yield
    except PASSED_ON:
        raise
    except Exception as e:
        raise DatasetError(f"{what()}: {e or type(e).__name__}") from e


def _storage_of(name):
    """"mcap" or "sqlite3" for a rosbag2 storage file name (also one that
    rosbag2 compressed whole: "*.mcap.zstd"), else None."""
    for suffix, storage in STORAGE.items():
        if name.endswith(suffix) or name.endswith(suffix + ".zstd"):
            return storage
    return None


def _rosbag2_source(path):
    """(path handed to rosbags, storage) of a rosbag2 folder or storage file."""
    if os.path.isdir(path):
        files = sorted(f for f in os.listdir(path) if _storage_of(f))
        if os.path.exists(os.path.join(path, "metadata.yaml")):
            return pathlib.Path(path), "/".join(sorted({_storage_of(f) for f in files}))
        if len(files) == 1 and not files[0].endswith(".zstd"):
            return pathlib.Path(path, files[0]), _storage_of(files[0])
        raise DatasetError(f"{path}: a rosbag2 folder without metadata.yaml must hold exactly one "
                           f".mcap or .db3 file, found {files or 'none'}")
    suffix = pathlib.PurePath(path).suffix
    if suffix not in STORAGE:
        raise DatasetError(f"{path}: a rosbag2 storage file must end in .mcap or .db3 (rosbags "
                           "picks the storage by suffix), or be in a folder with metadata.yaml")
    return pathlib.Path(path), STORAGE[suffix]


def _ros1_types(connections):
    """A ROS 1 Noetic type store with the bag's own definitions of the types
    Noetic lacks; {msgtype: error} for definitions that do not parse."""
    from rosbags.typesys import Stores, get_types_from_msg, get_typestore
    store, errors = get_typestore(Stores.ROS1_NOETIC), {}
    for c in connections:
        if c.msgtype in store.fielddefs or c.msgtype in errors:
            continue
        try:
            types = get_types_from_msg(c.msgdef.data, c.msgtype)
            store.register({k: v for k, v in types.items() if k not in store.fielddefs})
        except Exception as e:
            errors[c.msgtype] = str(e)
    return store, errors


class _Bag:
    """A bag's index, read at open: topics (name -> {"type", "messages"} in
    the order of the bag's connections), the type store, log-time span; and
    the raw messages of one topic, read on demand."""

    def __init__(self, path, format):
        self.path = path
        self.is2 = format == "rosbag2"
        if self.is2:
            self.source, self.storage = _rosbag2_source(path)
        elif os.path.isdir(path) or pathlib.PurePath(path).suffix != ".bag":
            raise DatasetError(f"{path}: a ROS 1 bag is a file ending in .bag")
        else:
            self.source, self.storage = pathlib.Path(path), "rosbag1"
        self.type_errors = {}
        self.stashable = set()  # topics not decoded yet whose raw messages a pass keeps
        self.stash = {}         # topic -> (log times, rows, bytes) kept by a pass
        self._read_index()
        self.mcap = self._mcap_file()

    def _read_index(self):
        from rosbags.highlevel import AnyReader, AnyReaderError
        try:
            with _reading(lambda: self.path), AnyReader([self.source]) as reader:
                return self._index_of(reader, reader.typestore)
        except DatasetError as e:
            if not isinstance(e.__cause__, AnyReaderError):
                raise
        # AnyReader builds the types from the bag's definitions only: a rosbag2
        # bag that stores none (sqlite3 before ROS 2 Iron) reads with the ROS 2
        # Humble ones, a ROS 1 bag naming legacy types (roslib/Header) with
        # rosbags.rosbag1.Reader and the ROS 1 Noetic ones
        from rosbags.typesys import Stores, get_typestore
        with _reading(lambda: self.path):
            if self.is2:
                humble = get_typestore(Stores.ROS2_HUMBLE)
                with AnyReader([self.source], default_typestore=humble) as reader:
                    return self._index_of(reader, reader.typestore)
            from rosbags.rosbag1 import Reader
            with Reader(self.source) as reader:
                store, self.type_errors = _ros1_types(reader.connections)
                return self._index_of(reader, store)

    def _index_of(self, reader, typestore):
        self.typestore = typestore
        # rosbag2 compression "message" or "file" (metadata.yaml): the storage holds it
        self.compressed = any(getattr(r, "compression_mode", None)
                              for r in getattr(reader, "readers", ()))
        self.topics = {}
        self.types = {}  # topic -> [msgtype]
        for c in reader.connections:
            t = self.topics.setdefault(c.topic, {"type": c.msgtype, "messages": 0})
            types = self.types.setdefault(c.topic, [])
            if c.msgtype not in types:
                types.append(c.msgtype)
                t["type"] = ", ".join(types)
            t["messages"] += c.msgcount
        self.messages_total = reader.message_count
        self.start_ns = reader.start_time if self.messages_total else None
        self.end_ns = reader.end_time - 1 if self.messages_total else None  # rosbags: last + 1

    def _mcap_file(self):
        """The path of the bag's one MCAP storage file when its messages can
        be read by robocache.datasets.ros_mcap (not compressed per message or
        per file by rosbag2), else None."""
        if self.storage != "mcap":
            return None
        if not os.path.isdir(self.source):
            return self.source
        if self.compressed:
            return None
        files = [f for f in os.listdir(self.source) if _storage_of(f)]
        return self.source / files[0] if len(files) == 1 and files[0].endswith(".mcap") else None

    @functools.cached_property
    def mcap_index(self):
        """ros_mcap.Index of the bag's MCAP file, or None (read with rosbags)."""
        if self.mcap is None:
            return None
        from . import ros_mcap
        return ros_mcap.index(self.mcap)

    def messages(self, topics, start=None, stop=None):
        """(connection, log time ns, raw bytes) of the messages of `topics`
        (a set of names) in log-time order, those in [start, stop) if given."""
        if self.is2:
            from rosbags.rosbag2 import Reader
        else:
            from rosbags.rosbag1 import Reader
        with Reader(self.source) as reader:
            connections = [c for c in reader.connections if c.topic in topics]
            if connections:
                yield from reader.messages(connections, start, stop)

    def read(self, topic, others):
        """(log time ns, raw bytes) of `topic`'s messages in log-time order:
        from the stash if an earlier pass kept them there (and gone from it
        now), else from the file, the same pass keeping the raw messages of
        the topics `others` (a set of names) not stashed yet, all kept coming
        to at most STASH_BYTES (else none of this pass's is kept)."""
        if topic in self.stash:
            times, rows, _ = self.stash.pop(topic)
            yield from zip(times.tolist(), map(bytes, rows))
            return
        keep = {t: [] for t in others - self.stash.keys() - {topic}}
        room = self._room()
        sizes = dict.fromkeys(keep, 0)
        with contextlib.closing(self.messages({topic, *keep})) as messages:
            for c, log_time, raw in messages:
                if c.topic == topic:
                    yield log_time, raw
                elif keep:
                    room -= len(raw)
                    if room < 0:
                        keep = {}  # no room: this pass keeps nothing
                    else:
                        keep[c.topic].append((log_time, raw))
                        sizes[c.topic] += len(raw)
        self.stash.update({t: (np.array([r[0] for r in rows], dtype=np.int64),
                               [r[1] for r in rows], sizes[t]) for t, rows in keep.items()})

    def _room(self):
        return STASH_BYTES - sum(size for *_, size in self.stash.values())

    def read_rows(self, topic, others, where):
        """(log times int64 [n] ns, rows) of `topic`'s messages, as read() but
        all at once: rows a uint8 [n, L] array where the MCAP fast path read
        messages of one length L, else a list of bytes. `where(index)` names
        a message for rosbags' errors."""
        if topic in self.stash:
            return self.stash.pop(topic)[:2]
        if self.mcap_index is None:
            logs, raws = [], []
            with _reading(lambda: where(len(raws))), \
                    contextlib.closing(self.read(topic, others)) as messages:
                for log_time, raw in messages:
                    logs.append(log_time)
                    raws.append(raw)
                return np.array(logs, dtype=np.int64), raws
        from . import ros_mcap
        keep = others - self.stash.keys() - {topic}
        got = ros_mcap.read(self.mcap_index, {topic, *keep}, where=where())
        sizes = {t: sum(map(len, rows)) if isinstance(rows, list) else rows.nbytes
                 for t, (_, rows) in got.items() if t != topic}
        if sum(sizes.values()) <= self._room():
            self.stash.update({t: (*got[t], size) for t, size in sizes.items()})
        return got[topic]

    def deserialize(self, raw, msgtype):
        if self.is2:
            return self.typestore.deserialize_cdr(raw, msgtype)
        return self.typestore.deserialize_ros1(raw, msgtype)


class _Topic:
    """One topic's streams: decodes the topic once for all of them and keeps
    each stream's arrays until that stream takes them."""

    def __init__(self, bag, name, msgtype, count, layout, use_header):
        self.bag, self.name, self.msgtype, self.count = bag, name, msgtype, count
        self.layout, self.use_header = layout, use_header
        self.clock = "header" if use_header else "log"
        self.series = {}   # suffix -> Series
        self.pending = {}  # suffix -> (kind, times, values, fields) not yet taken
        self.log_times = None  # image topics: log time of each message

    def where(self, index=None):
        at = "" if index is None else f", message {index}"
        return f"{self.bag.path}: topic {self.name!r}{at}"

    def decode(self, others=None):
        """{suffix: (kind, times, values, fields)} of all streams of the topic;
        the pass over the file keeps the raw messages of `others` (default
        the bag's stashable topics; see _Bag.read). Numeric topics decode in
        bulk where their layout is fixed (robocache.datasets.ros_bulk), else
        message by message."""
        self.bag.stashable.discard(self.name)  # decoded once: no pass keeps it again
        others = self.bag.stashable if others is None else others
        from . import ros_bulk
        if ros_bulk.supports(self.layout):
            logs, raws = self.bag.read_rows(self.name, others, self.where)
            self._check_count(len(raws))
            with _reading(lambda: self.where(0)):
                streams = ros_bulk.decode(
                    self.layout, self.msgtype, self.bag.typestore.fielddefs, raws, logs,
                    ros2=self.bag.is2, use_header=self.use_header,
                    first=lambda: self.bag.deserialize(bytes(raws[0]), self.msgtype))
            if streams is not None:
                return streams
            messages = (row for row in zip(logs.tolist(), map(bytes, raws)))  # closable
        else:
            messages = self.bag.read(self.name, others)
        collector = self.layout.collector(self.use_header)
        n = 0
        with _reading(lambda: self.where(n)), contextlib.closing(messages):
            for log_time, raw in messages:
                collector.add(self.bag.deserialize(raw, self.msgtype), log_time)
                n += 1
        self._check_count(n)
        self.log_times = getattr(collector, "log_times", None)
        return collector.finish()

    def _check_count(self, n):
        if self.count and n != self.count:
            raise DatasetError(f"{self.where()}: read {n} messages where the bag's index lists "
                               f"{self.count} (a damaged chunk?)")

    def load(self, suffix):
        """(times, values, fields) of the stream `suffix` (a Series' loader)."""
        if suffix not in self.pending:
            self.pending = {s: d for s, d in self.decode().items()
                            if s == suffix or (s in self.series and not self.series[s].loaded)}
        _, times, values, fields = self.pending.pop(suffix)
        return times, values, fields

    def frames(self, suffix, indices):
        """uint8 [n, H, W, C] of the samples `indices` of the image stream
        `suffix` (its values are message indices); only those are decoded."""
        from . import ros_images
        index = self.series[suffix].values[indices, 0]
        if index.size == 0:
            return np.zeros((0, 0, 0, 0), dtype=np.uint8)
        wanted = np.unique(index)
        log = self.log_times
        n = int(np.searchsorted(log, log[wanted[0]], "left"))
        got, todo = {}, set(wanted.tolist())
        with _reading(lambda: self.where(n)), contextlib.closing(self.bag.messages(
                {self.name}, int(log[wanted[0]]), int(log[wanted[-1]]) + 1)) as messages:
            for _, _, raw in messages:
                if n in todo:
                    got[n] = ros_images.decode(self.bag.deserialize(raw, self.msgtype),
                                               self.msgtype)
                    if len(got) == len(todo):
                        break
                n += 1
        if len(got) != len(todo):
            raise DatasetError(f"{self.where()}: messages {sorted(todo - set(got))} not found "
                               "when reading frames")
        shapes = {a.shape for a in got.values()}
        if len(shapes) > 1:
            raise DatasetError(f"{self.where()}: frames {sorted(got)} differ in shape "
                               f"{sorted(shapes)}; ask for frames of one shape at a time")
        return np.stack([got[int(i)] for i in index])


def _check_topics(bag, topics):
    if topics is None:
        return None
    topics = [topics] if isinstance(topics, str) else list(topics)
    unknown = [t for t in topics if t not in bag.topics]
    if unknown:
        raise DatasetError(f"{bag.path}: no topic {', '.join(map(repr, unknown))} "
                           f"(topics: {', '.join(bag.topics)})")
    return set(topics)


def _topics(bag, chosen, clock, skipped):
    """The _Topic of each topic read (all, or those `chosen`) that gives
    streams; the others go to skipped {topic: why}."""
    from . import ros_messages
    out = []
    for name, info in bag.topics.items():
        if chosen is not None and name not in chosen:
            continue
        msgtype = info["type"]
        if len(bag.types[name]) > 1:
            layout = f"several message types on one topic: {msgtype}"
        elif msgtype in bag.type_errors:
            layout = f"{msgtype}: its message definition does not parse: {bag.type_errors[msgtype]}"
        else:
            layout = ros_messages.layout(msgtype, bag.typestore.fielddefs)
        if isinstance(layout, str):
            skipped[name] = layout
        else:
            out.append(_Topic(bag, name, msgtype, info["messages"], layout,
                              clock == "header" and layout.stamped))
    return out


def _specs(topic, transforms, skipped):
    """[(suffix, kind, fields)] of a topic's streams. TFMessage topics name
    theirs in their messages: decoded now, the first of them keeping the raw
    messages of the others (`transforms`) so that all take one pass."""
    if topic.layout.streams is not None:
        return topic.layout.streams
    topic.pending = topic.decode(others=transforms)
    if not topic.pending:
        skipped[topic.name] = f"{topic.msgtype}: no transform in its messages"
    return [(s, d[0], d[3]) for s, d in topic.pending.items()]


def open(path, *, format, clock="header", order="error", topics=None):
    """Opens a ROS 2 bag (format "rosbag2": a folder with metadata.yaml, or a
    single .mcap or .db3 file) or a ROS 1 bag (format "rosbag1": a .bag file)
    as a Recording of one Episode, lazily.

    clock   "header": header.stamp where the message type has a
            std_msgs/Header (per transform for TFMessage), else the log time;
            "log": the log time for every stream. Series.clock says which.
    order   "error" (default) or "drop": what a stream whose times repeat or
            go back does on access (robocache.datasets.Series)
    topics  None (all) or the topic names to read
    rec.meta: storage ("mcap", "sqlite3", "rosbag1"), topics ({name: {"type":
    msgtype, "messages": count}}, all topics of the bag), messages, start_ns,
    end_ns and duration_ns (log times of the first and last message), clock,
    skipped ({topic: why it gives no stream}). ep.meta: source, start_ns, end_ns.
    Errors: DatasetError naming the file (and topic and message index where
    known) for a damaged, truncated or unreadable bag; FileNotFoundError;
    ValueError for a bad option.
    """
    if clock not in CLOCKS:
        raise ValueError(f"clock must be one of {CLOCKS}, got {clock!r}")
    require("rosbags", purpose="read ROS bags")
    path = os.fspath(path)
    bag = _Bag(path, format)
    skipped = {}
    topics = _topics(bag, _check_topics(bag, topics), clock, skipped)
    transforms = {t.name for t in topics if t.layout.streams is None}
    bag.stashable = {t.name for t in topics if t.layout.streams is not None
                     and all(kind != "image" for _, kind, _ in t.layout.streams)}
    where = f"{path}: episode 0"
    streams, owner = {}, {}
    for topic in topics:
        for suffix, kind, fields in _specs(topic, transforms, skipped):
            stream = f"{topic.name}/{suffix}" if suffix else topic.name
            if stream in streams:
                raise DatasetError(f"{path}: topics {owner[stream]!r} and {topic.name!r} both "
                                   f"give a stream {stream!r}; open with topics= to choose one")
            frames = functools.partial(topic.frames, suffix) if kind == "image" else None
            series = Series(stream, functools.partial(topic.load, suffix), kind=kind,
                            clock=topic.clock, fields=fields, frames=frames,
                            meta={"topic": topic.name, "type": topic.msgtype}, order=order,
                            where=where)
            topic.series[suffix] = series
            streams[stream], owner[stream] = series, topic.name
    span = {"start_ns": bag.start_ns, "end_ns": bag.end_ns}
    meta = dict(storage=bag.storage, topics=bag.topics, messages=bag.messages_total, **span,
                duration_ns=None if bag.start_ns is None else bag.end_ns - bag.start_ns,
                clock=clock, skipped=skipped)
    return Recording(format, path, [Episode(0, streams, dict(source=path, **span))], meta)
