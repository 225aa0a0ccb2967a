"""TFRecord framing: the record index of a file and the checked read of one record.

A TFRecord file is a sequence of records, each
    uint64 length (little-endian) | uint32 masked CRC32C of the 8 length bytes |
    length bytes of data          | uint32 masked CRC32C of the data
with masked(crc) = ((crc >> 15) | (crc << 17)) + 0xa282ead8 (mod 2**32), as
TensorFlow's record writer defines it. CRC32C comes from the `crc32c` package.
"""

import builtins
import os
import struct

from ._deps import require
from ._series import DatasetError

_HEAD = struct.Struct("<QI")
_CRC = struct.Struct("<I")
_MASK_DELTA = 0xA282EAD8


def _masked(crc):
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + _MASK_DELTA) & 0xFFFFFFFF


def _crc32c():
    return require("crc32c", purpose="check TFRecord CRCs").crc32c


def index(path):
    """(offsets, lengths) of the data of every record of `path`: lists of
    ints (byte offset of the data, data length). Reads only the 12-byte
    record headers and checks each length CRC. DatasetError naming the file
    and record index for a bad length CRC or a record cut by the end of the
    file."""
    crc32c = _crc32c()
    size = os.path.getsize(path)
    offsets, lengths = [], []
    pos = 0
    with builtins.open(path, "rb") as f:
        while pos < size:
            i = len(offsets)
            head = f.read(_HEAD.size)
            if len(head) < _HEAD.size:
                raise DatasetError(f"{path}: record {i} at byte {pos}: file ends inside the "
                                   f"record header ({size - pos} of 12 bytes); truncated file")
            length, length_crc = _HEAD.unpack(head)
            if _masked(crc32c(head[:8])) != length_crc:
                raise DatasetError(f"{path}: record {i} at byte {pos}: length CRC mismatch "
                                   "(corrupt file or not a TFRecord file)")
            end = pos + _HEAD.size + length + _CRC.size
            if end > size:
                raise DatasetError(f"{path}: record {i} at byte {pos}: {length} data bytes "
                                   f"declared but the file ends {end - size} bytes short; "
                                   "truncated file")
            offsets.append(pos + _HEAD.size)
            lengths.append(length)
            pos = end
            f.seek(pos)
    return offsets, lengths


def read(path, record, offset, length):
    """The data bytes of record number `record` (at `offset`, `length` bytes,
    from index()), after checking its data CRC: DatasetError naming the file
    and record index on a mismatch."""
    with builtins.open(path, "rb") as f:
        f.seek(offset)
        blob = f.read(length + _CRC.size)
    if len(blob) < length + _CRC.size:
        raise DatasetError(f"{path}: record {record}: file ends inside the record (changed "
                           "since it was opened?)")
    data = blob[:length]
    (want,) = _CRC.unpack_from(blob, length)
    if _masked(_crc32c()(data)) != want:
        raise DatasetError(f"{path}: record {record} at byte {offset - _HEAD.size}: data CRC "
                           "mismatch (corrupt record)")
    return data
