"""Shard files: the converted episodes of one input recording, kept in a
staging folder beside the output until the merge.

    <parent>/.<output name>.shards/<key>/episodes.npz    the episodes' columns
    <parent>/.<output name>.shards/<key>/episodes.json   parts' metadata, reports
    <parent>/.<output name>.shards/<key>/videos/...      its image features' MP4 files
    <parent>/.<output name>.shards/<key>/manifest.json   SHA-256 of all, written last

A shard is written under `<key>.partial-XXXX/` and renamed to `<key>/` once
its manifest is on disk, so `<key>/` exists only complete. `key` hashes the
input (path or URL, and name, size and mtime of each file under it) and the
conversion plan, so a changed input or plan never reuses an old shard.
"""

import hashlib
import io
import json
import os
import shutil
import tempfile

import numpy as np

from ..convert._errors import OutputError
from ..convert._lerobot_writer import EpisodePart
from . import _remote

_PART_FIELDS = ("where", "task", "length", "layout", "features", "valid", "stats")
_PAYLOAD = ("episodes.npz", "episodes.json")  # read into memory; videos are placed as files


def staging(output):
    """The staging folder of `output`."""
    out = os.path.abspath(output).rstrip("/")
    return os.path.join(os.path.dirname(out), f".{os.path.basename(out)}.shards")


def _files_of(path):
    if os.path.isdir(path):
        for base, _, names in sorted(os.walk(path)):
            for n in sorted(names):
                yield os.path.join(base, n)
    else:
        yield path


def _stats_of(path):
    """(relative name, size, mtime in ns) of every file under a local path."""
    for f in _files_of(path):
        st = os.stat(f)
        yield os.path.relpath(f, path), st.st_size, st.st_mtime_ns


def shard_key(path, plan_text):
    """16 hex digits naming the shard of `path` (a path here, or a URL:
    _remote.files, as pyarrow.fs lists it) under a plan (repr text)."""
    h = hashlib.sha256(plan_text.encode())
    url = _remote.is_url(path)
    h.update((path if url else os.path.abspath(path)).encode())
    for rel, size, mtime_ns in (_remote.files(path) if url else _stats_of(path)):
        h.update(f"{rel}:{size}:{mtime_ns}".encode())
    return h.hexdigest()[:16]


def file_sha256(path):
    """The SHA-256 (hex) of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def write_shard(root, key, items, files=None):
    """Writes one shard (items: StagedPart or rejected-episode reports; files:
    {relative path: bytes}, the MP4s its parts' `videos` name), replacing a
    damaged one. Returns its folder."""
    final = os.path.join(root, key)
    os.makedirs(root, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=f"{key}.partial-", dir=root)
    try:
        arrays, meta = {}, []
        for i, it in enumerate(items):
            if isinstance(it, dict):
                meta.append({"rejected": it})
                continue
            m = {k: getattr(it, k) for k in _PART_FIELDS}
            m.update(report=it.report, policies=it.policies, columns=list(it.columns),
                     videos=it.videos)
            meta.append(m)
            for j, name in enumerate(it.columns):
                arrays[f"{i}/{j}"] = it.columns[name]
        npz = io.BytesIO()
        np.savez(npz, **arrays)
        contents = {"episodes.npz": npz.getvalue(), "episodes.json": json.dumps(meta).encode(),
                    **(files or {})}
        sums = {rel: _put(os.path.join(tmp, rel), data) for rel, data in contents.items()}
        with open(os.path.join(tmp, "manifest.json"), "w") as fh:
            json.dump({"key": key, "sha256": sums}, fh)
        if os.path.isdir(final):  # damaged, or written meanwhile by a retry: replaced
            old = tempfile.mkdtemp(prefix=f"{key}.damaged-", dir=root)
            os.rename(final, os.path.join(old, key))
            shutil.rmtree(old, ignore_errors=True)
        try:
            os.rename(tmp, final)
        except OSError:
            if not is_complete(final):  # else another attempt finished it first
                raise
    finally:
        if os.path.isdir(tmp):
            shutil.rmtree(tmp, ignore_errors=True)
    return final


def _put(path, data):
    """Writes bytes to path; their SHA-256 (hex)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as fh:
        fh.write(data)
    return hashlib.sha256(data).hexdigest()


def _checked(folder):
    """{name: bytes} of the shard's episodes.npz and episodes.json, each file
    read once, when folder/manifest.json exists and every file it lists
    matches its SHA-256; else None."""
    try:
        with open(os.path.join(folder, "manifest.json")) as fh:
            sums = json.load(fh)["sha256"]
        payload = {}
        for n, s in sums.items():
            path = os.path.join(folder, n)
            if n in _PAYLOAD:
                with open(path, "rb") as fh:
                    payload[n] = fh.read()
                digest = hashlib.sha256(payload[n]).hexdigest()
            else:
                digest = file_sha256(path)
            if digest != s:
                return None
        return payload if len(payload) == len(_PAYLOAD) else None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def is_complete(folder):
    """True when folder/manifest.json exists and every file matches its SHA-256."""
    return _checked(folder) is not None


def read_shard(folder):
    """The shard's items in order: StagedPart (video files as absolute paths)
    or rejected reports. OutputError when the shard is missing or damaged."""
    payload = _checked(folder)
    if payload is None:
        raise OutputError(f"{folder}: shard missing or its checksums do not match")
    meta = json.loads(payload["episodes.json"])
    out = []
    with np.load(io.BytesIO(payload["episodes.npz"])) as npz:
        for i, m in enumerate(meta):
            if "rejected" in m:
                out.append(m["rejected"])
                continue
            cols = {name: npz[f"{i}/{j}"] for j, name in enumerate(m["columns"])}
            videos = {k: dict(v, file=os.path.join(folder, v["file"]))
                      for k, v in m["videos"].items()}
            part = StagedPart(columns=cols, report=m["report"], policies=m["policies"],
                              videos=videos, **{k: m[k] for k in _PART_FIELDS})
            part.layout = [tuple(x) for x in part.layout]
            out.append(part)
    return out


class StagedPart(EpisodePart):
    """An EpisodePart with the episode's sync `report`, feature `policies` and
    `videos` ({image feature: its video in the shard}, _video.RecordingVideos)."""

    __slots__ = ("report", "policies", "videos")
