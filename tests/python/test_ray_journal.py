"""The merge journal's reader (robocache.ray._resume.records) on damaged
bytes: a journal of three records, truncated anywhere or with any byte
changed, reads back as a prefix of the records (up to the first damaged
one) and never raises; records appended after a torn one are not read."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("ray")
from robocache.ray import _resume  # noqa: E402

RECORDS = [{"keys": [f"{i:016x}"], "files": {f"data/chunk-000/file-{i:03d}.parquet": (i, "ab")},
            "episodes": list(range(i * 5))} for i in range(3)]


def journal(root):
    for r in RECORDS:
        _resume._append(str(root), r)
    return root / _resume.JOURNAL


@settings(max_examples=200, deadline=None)
@given(cut=st.integers(0, 10**6), flip=st.integers(0, 10**6), xor=st.integers(1, 255),
       truncate=st.booleans())
def test_damaged_journal_reads_a_prefix(tmp_path_factory, cut, flip, xor, truncate):
    path = journal(tmp_path_factory.mktemp("j"))
    data = bytearray(path.read_bytes())
    if truncate:
        data = data[:cut % len(data)]  # shorter than whole
    else:
        data[flip % len(data)] ^= xor
    path.write_bytes(bytes(data))
    got = _resume.records(str(path.parent))
    assert got == RECORDS[:len(got)]
    assert len(got) < len(RECORDS)


def test_records_after_a_torn_one_are_not_read(tmp_path):
    path = journal(tmp_path)
    with open(path, "ab") as fh:
        fh.write(b"\xff" * 7)
    _resume._append(str(tmp_path), {"keys": ["after"], "files": {}})
    assert _resume.records(str(tmp_path)) == RECORDS
