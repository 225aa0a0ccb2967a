"""The raw messages of some topics of an indexed MCAP file (rosbag2's MCAP
storage), read chunk by chunk without a Python step per message: the bulk
path of robocache.datasets.rosbag for numeric topics.

Anchor: the MCAP format specification, https://mcap.dev/spec. The file ends
in a Footer record (opcode 0x02) and the magic; the footer's summary_start
leads to the summary section, whose Channel records (0x04: id uint16,
schema_id uint16, topic string, ...) name the topics and whose Chunk Index
records (0x08) give each chunk's offset and byte length. A Chunk record (0x06:
message_start_time, message_end_time, uncompressed_size uint64,
uncompressed_crc uint32, compression string, records uint64-prefixed bytes)
holds records compressed with "" (none), "zstd" or "lz4" (LZ4 frame), read
here with the decompressors rosbags depends on (backports.zstd, lz4). The
decompressed records are scanned in C (robocache._C.mcap_scan: opcode,
length, and for Message records channel_id, sequence, log_time, publish_time,
data) and the messages of a topic gathered into one [n, L] byte block when
they share a length L (robocache._C.gather_rows), allocated once for the
count the summary's Statistics record (0x0B) gives, when it does (a hint:
more or fewer messages still read right).

index(path) -> Index, or None for a file without summary, channels or chunk
indexes (robocache.datasets.rosbag then reads with rosbags, which scans it).
read(index, topics) -> {topic: (log_times int64 [n] ns, rows)}: rows a uint8
[n, L] array, or a list of n bytes where the lengths differ. Messages come in
the order rosbags gives them: by log time, ties in chunk offset order, then in
the order of the records in the chunk.
Errors: DatasetError naming the file, the chunk's byte offset and, inside a
chunk, the record's index and byte offset in its decompressed records: a
truncated file or chunk, a record length past its end, sizes that disagree
with the chunk index, a decompression failure, a CRC mismatch, an unknown
compression, a message log time outside its chunk's range.
"""

import struct
import zlib
from typing import NamedTuple

import numpy as np

from ._series import DatasetError

MAGIC = b"\x89MCAP0\r\n"
OP_FOOTER, OP_CHANNEL, OP_CHUNK, OP_CHUNK_INDEX, OP_STATISTICS = 0x02, 0x04, 0x06, 0x08, 0x0B
FOOTER_BYTES = 1 + 8 + 20 + len(MAGIC)  # opcode, length, summary_start, offset_start, crc
RECORD = struct.Struct("<BQ")
CHUNK_HEAD = struct.Struct("<QQQI")  # start, end, uncompressed_size, uncompressed_crc


class Chunk(NamedTuple):
    """A Chunk Index record's fields used here (times in ns, sizes in bytes)."""
    start: int
    end: int
    offset: int
    length: int
    compression: str
    compressed_size: int
    uncompressed_size: int


class Index(NamedTuple):
    path: str
    channels: dict  # channel id -> topic
    chunks: list    # [Chunk] by offset
    counts: dict    # channel id -> messages, from the Statistics record (a size hint only)


class _Fields:
    """Little-endian fields read in turn from one record's content; a read
    past its end raises DatasetError naming `where`."""

    def __init__(self, data, where):
        self.data, self.pos, self.where = data, 0, where

    def take(self, fmt):
        s = struct.Struct("<" + fmt)
        if self.pos + s.size > len(self.data):
            raise DatasetError(f"{self.where}: record shorter than its fields")
        out = s.unpack_from(self.data, self.pos)
        self.pos += s.size
        return out

    def bytes(self, prefix="I"):
        (n,) = self.take(prefix)
        if n > len(self.data) - self.pos:
            raise DatasetError(f"{self.where}: a field's length runs past the record")
        self.pos += n
        return self.data[self.pos - n:self.pos]


def _records(data, where):
    """(opcode, content, byte offset) of each record in data."""
    pos = 0
    while pos < len(data):
        if len(data) - pos < RECORD.size:
            raise DatasetError(f"{where}: record header at byte {pos} past the end")
        op, size = RECORD.unpack_from(data, pos)
        if size > len(data) - pos - RECORD.size:
            raise DatasetError(f"{where}: record at byte {pos}: length {size} past the end")
        yield op, data[pos + RECORD.size:pos + RECORD.size + size], pos
        pos += RECORD.size + size


def index(path):
    """The channels and chunks of the indexed MCAP file `path`, or None when
    it has no summary with channels and chunk indexes."""
    with open(path, "rb") as f:
        size = f.seek(0, 2)
        if size < len(MAGIC) + FOOTER_BYTES:
            return None
        f.seek(size - FOOTER_BYTES)
        footer = f.read(FOOTER_BYTES)
        if footer[-len(MAGIC):] != MAGIC or footer[0] != OP_FOOTER:
            return None
        summary_start = struct.unpack_from("<Q", footer, RECORD.size)[0]
        if not summary_start or summary_start > size - FOOTER_BYTES:
            return None
        f.seek(summary_start)
        summary = f.read(size - FOOTER_BYTES - summary_start)
    where = f"{path}: summary section at byte {summary_start}"
    channels, chunks, counts = {}, [], {}
    for op, content, at in _records(summary, where):
        fields = _Fields(content, f"{where}: record at byte {at}")
        if op == OP_CHANNEL:
            (cid, _), topic = fields.take("HH"), fields.bytes()
            channels[cid] = bytes(topic).decode("utf-8", "replace")
        elif op == OP_CHUNK_INDEX:
            start, end, offset, length = fields.take("QQQQ")
            fields.bytes()  # message_index_offsets
            fields.take("Q")  # message_index_length
            compression = bytes(fields.bytes()).decode("ascii", "replace")
            compressed, uncompressed = fields.take("QQ")
            chunks.append(Chunk(start, end, offset, length, compression, compressed, uncompressed))
        elif op == OP_STATISTICS:
            fields.take("QHIIIIQQ")  # counts of messages, schemas, ..., time span
            entries = fields.bytes()  # channel_message_counts: uint16 id, uint64 count
            counts = dict(struct.iter_unpack("<HQ", entries)) if len(entries) % 10 == 0 else {}
    if not channels or not chunks:
        return None
    return Index(str(path), channels, sorted(chunks, key=lambda c: c.offset), counts)


def _decompress(compression, data, size):
    if compression == "":
        return data
    if compression == "zstd":
        try:
            from compression import zstd
        except ImportError:
            from backports import zstd
        return zstd.decompress(data)
    if compression == "lz4":
        from lz4.frame import decompress
        return decompress(data)
    raise ValueError(f"unknown compression {compression!r} (MCAP names '', 'zstd', 'lz4')")


def _chunk_records(f, path, chunk, where):
    """The decompressed records of `chunk`, checked against its index entry
    and its CRC."""
    where = f"{where}: chunk at byte {chunk.offset}"
    f.seek(chunk.offset)
    data = f.read(chunk.length)
    if len(data) != chunk.length or chunk.length < RECORD.size:
        raise DatasetError(f"{where}: the file ends inside the chunk ({len(data)} of "
                           f"{chunk.length} bytes)")
    op, size = RECORD.unpack_from(data)
    if op != OP_CHUNK or size != chunk.length - RECORD.size:
        raise DatasetError(f"{where}: not a chunk record of the indexed length (opcode {op:#x}, "
                           f"length {size}, index says {chunk.length - RECORD.size})")
    fields = _Fields(memoryview(data)[RECORD.size:], where)
    start, end, usize, crc = fields.take("QQQI")
    compression = bytes(fields.bytes()).decode("ascii", "replace")
    records = fields.bytes("Q")
    if (start, end, usize, compression, len(records)) != (
            chunk.start, chunk.end, chunk.uncompressed_size, chunk.compression,
            chunk.compressed_size):
        raise DatasetError(f"{where}: the chunk's times, sizes or compression differ from its "
                           "chunk index")
    try:
        records = _decompress(compression, records, usize)
    except Exception as e:
        raise DatasetError(f"{where}: {compression} decompression failed: {e}") from e
    if len(records) != usize:
        raise DatasetError(f"{where}: {len(records)} bytes decompressed where the chunk says "
                           f"{usize}")
    if crc and zlib.crc32(records) != crc:
        raise DatasetError(f"{where}: CRC-32 checksum of the decompressed records does not match")
    return records


class _Topic:
    """One topic's messages over the chunks: [n, L] blocks while all have
    one length (the first one sized for `capacity` messages, filled chunk
    after chunk while they fit), else a list of bytes."""

    def __init__(self, capacity):
        self.times, self.blocks, self.size, self.raws = [], [], None, None
        self.capacity, self.filled = capacity, 0

    def _block(self, k):
        """The C-contiguous uint8 [k, size] rows for the next k messages."""
        if not self.blocks and self.capacity:
            self.blocks.append(np.empty((self.capacity, self.size), dtype=np.uint8))
        if self.filled + k <= self.capacity:
            self.filled += k
            return self.blocks[0][self.filled - k:self.filled]
        if self.capacity:  # more messages than counted: blocks of their own from here
            self.blocks[0] = self.blocks[0][:self.filled]
            self.capacity = 0
        self.blocks.append(np.empty((k, self.size), dtype=np.uint8))
        return self.blocks[-1]

    def _pieces(self):
        if self.capacity and self.blocks:
            return [self.blocks[0][:self.filled], *self.blocks[1:]]
        return self.blocks

    def add(self, records, times, offsets, lengths):
        from .. import _C
        self.times.append(times)
        if self.raws is None:
            size = int(lengths[0]) if self.size is None else self.size
            if (lengths == size).all():
                self.size = size
                rows = self._block(len(offsets))
                _C.gather_rows(records, np.ascontiguousarray(offsets), size, rows)
                return
            self.raws = [row.tobytes() for block in self._pieces() for row in block]
        view = memoryview(records)
        self.raws += [bytes(view[o:o + n]) for o, n in zip(offsets.tolist(), lengths.tolist())]

    def finish(self):
        if not self.times:
            return np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.uint8)
        times = np.concatenate(self.times)
        pieces = self._pieces() if self.raws is None else None
        rows = self.raws if pieces is None else pieces[0] if len(pieces) == 1 else \
            np.concatenate(pieces)
        if times.size and (times[1:] < times[:-1]).any():
            order = np.argsort(times, kind="stable")
            times = times[order]
            rows = rows[order] if self.raws is None else [rows[i] for i in order.tolist()]
        return times, rows


def read(index, topics, where=None):
    """{topic: (log_times int64 [n], rows)} of `topics` (a set of names); see
    the module docstring. Errors begin with `where` (default: the path)."""
    where = where or index.path
    from .. import _C
    names = sorted(topics)
    code = np.zeros(1 << 16, dtype=np.int32)  # channel id -> 1 + index in names, 0: not read
    for cid, name in index.channels.items():
        if name in topics:
            code[cid] = 1 + names.index(name)
    out = {t: _Topic(sum(n for c, n in index.counts.items() if index.channels.get(c) == t))
           for t in names}
    with open(index.path, "rb") as f:
        for chunk in index.chunks:
            records = _chunk_records(f, index.path, chunk, where)
            try:
                table = np.frombuffer(_C.mcap_scan(records), dtype=np.int64).reshape(-1, 4)
            except ValueError as e:
                raise DatasetError(f"{where}: chunk at byte {chunk.offset}: {e} of its "
                                   "decompressed records") from e
            which = code[table[:, 0]]
            table, which = table[which > 0], which[which > 0]
            times = table[:, 1]
            if times.size and (times.min() < chunk.start or times.max() > chunk.end):
                raise DatasetError(f"{where}: chunk at byte {chunk.offset}: a message's log "
                                   f"time is outside the chunk's [{chunk.start}, {chunk.end}]")
            for k, topic in enumerate(names, 1):
                rows = table[which == k] if len(names) > 1 else table
                if len(rows):
                    out[topic].add(records, rows[:, 1], rows[:, 2], rows[:, 3])
    return {t: topic.finish() for t, topic in out.items()}
