"""The merge's journal: write_lerobot's merge writes the dataset in the
staging folder's `merge/` and, each time a data file is closed at the start
of a recording's episodes, appends to `merge.journal` what it has written up
to there (the writer's delta since the last record, the sync report's
entries, the shard keys merged, and the size and SHA-256 of every file
closed since); then the shards merged are removed. A rerun resumes the merge
after the last record whose files all match (read_recordings leaves those
recordings out) instead of needing every shard until the end.

    <staging>/merge/           the dataset being written (renamed to the output)
    <staging>/merge.journal    records: 8-byte length, SHA-256, pickle
"""

import hashlib
import os
import pickle
import shutil
import struct
from concurrent import futures

from ..convert import _output
from ._shards import file_sha256

JOURNAL = "merge.journal"
FOLDER = "merge"


def folder(root):
    """The merge's folder in staging folder `root`."""
    return os.path.join(root, FOLDER)


def records(root):
    """The journal's records in order, up to the first torn or damaged one."""
    try:
        with open(os.path.join(root, JOURNAL), "rb") as fh:
            data = fh.read()
    except OSError:
        return []
    out, at = [], 0
    while at + 40 <= len(data):
        (size,), digest = struct.unpack("<Q", data[at:at + 8]), data[at + 8:at + 40]
        body = data[at + 40:at + 40 + size]
        if len(body) != size or hashlib.sha256(body).digest() != digest:
            break
        out.append(pickle.loads(body))
        at += 40 + size
    return out


def _append(root, record):
    body = pickle.dumps(record, protocol=pickle.HIGHEST_PROTOCOL)
    with open(os.path.join(root, JOURNAL), "ab") as fh:
        fh.write(struct.pack("<Q", len(body)) + hashlib.sha256(body).digest() + body)
        fh.flush()
        os.fsync(fh.fileno())


def resume(root, keys):
    """How many of the shards `keys` (in input order) the journal in `root`
    holds merged: its records' keys must be the first of `keys` and every
    file they list must be in the merge folder with its size and SHA-256;
    files the records do not list (written after the last one) are removed.
    Otherwise the journal and the merge folder are removed (0): those
    recordings are converted again."""
    recs = records(root)
    merged = [k for r in recs for k in r["keys"]]
    files = {rel: v for r in recs for rel, v in r["files"].items()}
    base = folder(root)
    if recs and merged == keys[:len(merged)] and all(
            _matches(os.path.join(base, rel), *v) for rel, v in files.items()):
        for dirpath, _, names in os.walk(base):
            for n in names:
                path = os.path.join(dirpath, n)
                if os.path.relpath(path, base) not in files:
                    os.unlink(path)
        return len(merged)
    shutil.rmtree(base, ignore_errors=True)
    _output.discard(os.path.join(root, JOURNAL))
    return 0


def _matches(path, size, digest):
    return (os.path.isfile(path) and os.path.getsize(path) == size
            and file_sha256(path) == digest)


class Journal:
    """Checkpoints a merge: rotated(mark) is MergeWriter.rotated. `state` is
    write()'s (robocache.convert._convert.write), `keys` the shard keys in
    order, `recs` the journal's records the merge resumes from (their shards
    and files already journalled), `remove` called with the keys of shards
    merged once a record holds them. Records
    are hashed, appended and followed by the removal on a background thread
    (the next record, wait() and close() wait for it; wait() raises its
    error). at: the index of the shard whose first item the merge is writing,
    else None."""

    def __init__(self, root, keys, recs, state, remove):
        self.root, self.keys, self.state, self.remove = root, keys, state, remove
        self.shards = sum(len(r["keys"]) for r in recs)
        self.at = None
        self._since = state["writer"].mark() if recs else None
        self._report = (len(state["report"]["episodes"]), len(state["report"]["rejected"]))
        self._hashed = {rel for r in recs for rel in r["files"]}
        self._thread = futures.ThreadPoolExecutor(1, thread_name_prefix="robocache-journal")
        self._job = None

    def rotated(self, mark):
        if self.at is None or self.at <= self.shards:
            return
        writer, report = self.state["writer"], self.state["report"]
        e, r = len(report["episodes"]), len(report["rejected"])
        record = {"keys": self.keys[self.shards:self.at], "writer": writer.delta(self._since, mark),
                  "episodes": report["episodes"][self._report[0]:e],
                  "rejected": report["rejected"][self._report[1]:r],
                  "policies": self.state.get("policies"), "data_mb": writer.data_mb}
        closed = [rel for rel in writer.closed_files(mark) if rel not in self._hashed]
        self._hashed.update(closed)
        self.wait()
        self._job = self._thread.submit(self._write, record, closed)
        self.shards, self._since, self._report = self.at, mark, (e, r)

    def _write(self, record, closed):
        base = folder(self.root)
        record["files"] = {rel: (os.path.getsize(os.path.join(base, rel)),
                                 file_sha256(os.path.join(base, rel))) for rel in closed}
        _append(self.root, record)
        self.remove(record["keys"])

    def wait(self):
        """Waits for the last record and removal; raises their error."""
        job, self._job = self._job, None
        if job is not None:
            job.result()

    def close(self):
        """Waits for the background thread and ends it, raising nothing: on
        the normal path wait() has raised any error; on an error's path a
        record that failed is not in the journal and its shards are kept."""
        self._thread.shutdown(wait=True)
