"""robocache check: a timestamp audit of a LeRobot dataset (v2.1 or v3.0)
without decoding video (MP4 packet PTS only), or of any recording that
robocache.datasets.open reads.

LeRobot checks, per episode (tolerance_s default 1e-4, LeRobot's):
  timestamp      |timestamp - frame_index / fps| <= tolerance_s
  monotonic      timestamps strictly increasing; frame_index 0, 1, 2... (a reset
                 or a jump is reported at its frame)
  episode_index  the rows carry the episode's index; their count equals `length`;
                 v3.0: `index` runs dataset_from_index..dataset_to_index - 1
  video_span     to_timestamp - from_timestamp = length / fps (within tolerance)
  video_frames   the MP4 holds a frame (packet PTS) within tolerance of
                 from_timestamp + timestamp for every frame, and the span holds
                 `length` frames
  features       every non-video feature of info.json is a Parquet column of its
                 shape and dtype; every column is declared; video files exist
Recordings: samples whose time repeats or goes back, per stream.
"""

import os

import numpy as np

from ..datasets import _lerobot_meta as meta
from ..datasets._deps import require
from ..datasets._series import DatasetError

TOLERANCE_S = 1e-4
_DTYPES = {"float32": "float", "float64": "double", "int64": "int64", "int32": "int32",
           "bool": "bool", "string": "string", "uint8": "uint8", "int16": "int16"}


def problem(check, message, episode=None, frame=None, error=None):
    return {"check": check, "episode": episode, "frame": frame, "error": error,
            "message": message}


def check(path, tolerance_s=TOLERANCE_S, subset=False):
    """List of problems (dicts: check, episode, frame, error, message); empty
    when clean. subset=True: episodes (and videos) that the metadata lists but
    whose files are absent are skipped, not reported (a partial copy).
    Raises DatasetError when `path` cannot be read at all."""
    if os.path.isfile(os.path.join(path, "meta", "info.json")):
        return _check_lerobot(path, tolerance_s, subset)
    return _check_recording(path)


def _check_recording(path):
    from .. import datasets as rd
    rec = rd.open(path, order="drop")
    out = []
    for ep in rec.episodes:
        for name, s in ep.streams.items():
            s.times  # noqa: B018  (reads; order="drop" counts what goes back)
            dropped = s.meta.get("dropped", 0)
            if dropped:
                out.append(problem("monotonic", f"stream {name!r}: {dropped} sample(s) whose "
                                   "time repeats or goes back", episode=ep.index, error=dropped))
            s.release()
    return out


def _check_lerobot(root, tol, subset):
    pq = require("pyarrow.parquet", purpose="read LeRobot Parquet files")
    info = meta.read_info(root)
    fps = float(info["fps"])
    episodes, _ = meta.list_episodes(root, info)
    out = []
    keys = meta.video_keys(info)
    checked_files = set()
    videos = {}
    for ep in episodes:
        e = ep["episode_index"]
        if not os.path.isfile(ep["data_file"]):
            if subset:
                continue
            out.append(problem("features", f"data file {ep['data_file']} is missing", e))
            continue
        if ep["data_file"] not in checked_files:
            checked_files.add(ep["data_file"])
            out.extend(_check_features(pq, info, ep["data_file"], e))
        table = pq.read_table(ep["data_file"], columns=["episode_index", "frame_index",
                                                        "timestamp", "index"],
                              filters=[("episode_index", "=", e)])
        ts = table.column("timestamp").to_numpy().astype(np.float64)
        fi = table.column("frame_index").to_numpy()
        idx = table.column("index").to_numpy()
        out.extend(_check_rows(e, ep, ts, fi, idx, fps, tol))
        for k in keys:
            if subset and not os.path.isfile(ep["videos"][k]["file"]):
                continue
            out.extend(_check_video(e, ep, k, ts, fps, tol, videos))
    return out


def _check_rows(e, ep, ts, fi, idx, fps, tol):
    out = []
    if ts.shape[0] != ep["length"]:
        out.append(problem("episode_index", f"{ts.shape[0]} rows, metadata length "
                           f"{ep['length']}", e, error=int(ts.shape[0] - ep["length"])))
    if ts.shape[0] == 0:
        return out
    err = np.abs(ts - fi / fps)
    for i in np.flatnonzero(err > tol)[:20]:
        out.append(problem("timestamp", f"timestamp {ts[i]:.6f} s, frame_index {fi[i]} / fps = "
                           f"{fi[i] / fps:.6f} s: off by {err[i]:.6g} s", e, int(i), float(err[i])))
    for i in np.flatnonzero(np.diff(ts) <= 0)[:20]:
        out.append(problem("monotonic", f"timestamp goes from {ts[i]:.6f} to {ts[i + 1]:.6f} s",
                           e, int(i + 1), float(ts[i + 1] - ts[i])))
    for i in np.flatnonzero(fi != np.arange(fi.shape[0]))[:1]:
        out.append(problem("monotonic", f"frame_index {fi[i]} at row {i} of the episode "
                           "(a reset or a jump)", e, int(i), int(fi[i] - i)))
    if "dataset_from_index" in ep:
        want = np.arange(ep["dataset_from_index"], ep["dataset_to_index"])
        if want.shape != idx.shape or np.any(want != idx):
            out.append(problem("episode_index", "index column does not run dataset_from_index "
                               f"{ep['dataset_from_index']} .. dataset_to_index "
                               f"{ep['dataset_to_index']}", e))
    return out


def _check_video(e, ep, key, ts, fps, tol, videos):
    from ..datasets.video import VideoFile
    v = ep["videos"][key]
    out = []
    if not os.path.isfile(v["file"]):
        return [problem("features", f"video {key}: file {v['file']} is missing", e)]
    start = v["from_timestamp"]
    end = v["to_timestamp"]
    span = None if end is None else end - start
    last = (ep["length"] - 1) / fps
    # LeRobot writes to_timestamp one frame past the last (length / fps) or, where it
    # takes the video's duration, at the last frame's PTS ((length - 1) / fps).
    if span is not None and not (last - tol <= span <= last + 1 / fps + tol):
        out.append(problem("video_span", f"video {key}: from_timestamp {start:.6f} .. "
                           f"to_timestamp {end:.6f} s spans {end - start:.6f} s for "
                           f"{ep['length']} frames at {fps:g} fps", e,
                           error=float(span - ep["length"] / fps)))
    vf = videos.get(v["file"]) or videos.setdefault(v["file"], VideoFile(v["file"]))
    try:
        pts = vf.times_s
    except DatasetError as exc:
        return out + [problem("video_frames", f"video {key}: {exc}", e)]
    stop = start + last
    inside = int(np.count_nonzero((pts >= start - tol) & (pts <= stop + tol)))
    if inside != ep["length"]:
        out.append(problem("video_frames", f"video {key}: {inside} frames from "
                           f"{start:.6f} to {stop:.6f} s in {os.path.basename(v['file'])}, "
                           f"episode length {ep['length']}", e, error=inside - ep["length"]))
    want = start + ts
    j = np.clip(np.searchsorted(pts, want), 1, max(len(pts) - 1, 1)) if len(pts) else None
    if j is None:
        return out + [problem("video_frames", f"video {key}: no frames", e)]
    near = np.minimum(np.abs(pts[j - 1] - want), np.abs(pts[np.minimum(j, len(pts) - 1)] - want))
    for i in np.flatnonzero(near > tol)[:20]:
        out.append(problem("video_frames", f"video {key}: no frame within {tol:g} s of "
                           f"{want[i]:.6f} s (nearest off by {near[i]:.6g} s)", e, int(i),
                           float(near[i])))
    return out


def _check_features(pq, info, path, e):
    schema = pq.read_schema(path)
    out = []
    declared = {k: f for k, f in info["features"].items() if f.get("dtype") not in ("video",)}
    for name, f in declared.items():
        if f.get("dtype") == "image":
            continue
        if name not in schema.names:
            out.append(problem("features", f"feature {name!r} of info.json is no column of "
                               f"{os.path.basename(path)}", e))
            continue
        out.extend(_check_type(name, f, schema.field(name).type, path, e))
    for name in schema.names:
        if name not in info["features"]:
            out.append(problem("features", f"column {name!r} of {os.path.basename(path)} is not "
                               "declared in info.json", e))
    return out


def _check_type(name, f, typ, path, e):
    shape = list(f.get("shape") or [1])
    width = int(np.prod(shape))
    inner, size = typ, 1
    while hasattr(inner, "value_type"):
        size *= getattr(inner, "list_size", -1) if getattr(inner, "list_size", -1) > 0 else 1
        inner = inner.value_type
    want = _DTYPES.get(f.get("dtype"))
    bad = []
    if want is not None and str(inner) != want:
        bad.append(f"dtype {inner}, declared {f.get('dtype')}")
    if hasattr(typ, "list_size") and size != width:
        bad.append(f"{size} values per row, declared shape {shape}")
    if bad:
        return [problem("features", f"column {name!r} of {os.path.basename(path)}: "
                        + "; ".join(bad), e)]
    return []
