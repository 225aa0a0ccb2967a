"""robocache.convert.convert: recordings -> LeRobot v3.0 or robomimic HDF5."""

import contextlib
import json
import os
import sys

import numpy as np

from .. import datasets as rd
from . import _episode, _output
from ._errors import ConvertError
from ._spec import SpecError, parse_stream

TARGETS = ("lerobot", "robomimic")
INVALID = ("trim", "keep", "reject")
DEFAULT_TASK = "convert"


class Converted:
    """One output episode: `where` (input file, episode, segment), `task`,
    `features` (list of _episode.Feature), `values` float64 [T, sum D] (image
    features: the source frame index), `frame_times` int64 [T] ns (the grid),
    `valid_columns` (name -> bool [T], with invalid="keep"), `report` (dict)."""

    __slots__ = ("where", "task", "features", "values", "frame_times", "valid_columns",
                 "report")

    def __init__(self, **kw):
        for k, v in kw.items():
            setattr(self, k, v)

    @property
    def length(self):
        return int(self.frame_times.shape[0])

    @property
    def policies(self):
        """feature -> its sources, kind, column names and resample options."""
        return {f.name: {"sources": [s.name for s in f.series], "kind": f.kind,
                         "names": f.names, "options": [dict(o) for o in f.options]}
                for f in self.features}


def _feature_valid(feats, valid):
    out, k = {}, 0
    for f in feats:
        n = len(f.series)
        out[f.name] = valid[:, k:k + n].all(axis=1)
        k += n
    return out


def _apply_policy(frames, values, valid, feats, invalid, report):
    """Returns (frames, values, valid_columns) after the invalid-frame policy,
    or None when the episode is rejected (report["rejected"] says why)."""
    ok = valid.all(axis=1)
    bad = int(np.count_nonzero(~ok))
    report["frames_invalid"] = bad
    if invalid == "reject" and bad:
        report["rejected"] = f"{bad} frame(s) where a stream has no valid sample"
        return None
    if invalid == "keep":
        cols = {f"{name}.valid": v for name, v in _feature_valid(feats, valid).items()}
        return frames, values, cols
    if not ok.any():
        report["rejected"] = "no frame where every stream has a valid sample"
        return None
    first = int(np.argmax(ok))
    last = int(ok.shape[0] - np.argmax(ok[::-1]))
    report["frames_trimmed"] = [first, int(ok.shape[0] - last)]
    report["frames_invalid_inside"] = int(np.count_nonzero(~ok[first:last]))
    return frames[first:last], values[first:last], {}


def _episodes(inputs, specs, fps, options, names=None):
    """Yields Converted or rejected-episode reports, input by input (named
    in them by `names`, default the inputs)."""
    for path, name in zip(inputs, names or inputs):
        rec = rd.open(path, order=options["order"])
        for ep in rec.episodes:
            where = f"{name}: episode {ep.index}"
            feats = _episode.features_of(ep, specs, fps, where)
            split_by = None
            if options["split_by"] is not None:
                split_by = ep[options["split_by"]] if options["split_by"] in ep.streams else None
                if split_by is None:
                    raise ConvertError(f"{where}: --split-by stream {options['split_by']!r} "
                                       f"not found (streams: {', '.join(ep.streams)})")
            reference = None
            if options["reference"] is not None:
                ref = ep.streams.get(options["reference"])
                if ref is None:
                    raise ConvertError(f"{where}: --reference stream {options['reference']!r} "
                                       f"not found (streams: {', '.join(ep.streams)})")
                reference = ref.times
            spans = _episode.segments(feats, options["split_gap"], split_by)
            if not spans:
                raise ConvertError(f"{where}: the selected streams have no samples")
            for seg, span in enumerate(spans):
                w = where if len(spans) == 1 else f"{where}, segment {seg}"
                yield _one(w, ep, feats, span, reference, fps, options)
            for f in feats:
                for s in f.series:
                    s.release()


def _one(where, ep, feats, span, reference, fps, options):
    streams = _episode._streams(feats, span)
    ref = None
    if reference is not None:
        i0, i1 = np.searchsorted(reference, span, side="left")
        ref = reference[i0:i1]
    frames = _episode.grid(streams, fps, options["span"], ref, where)
    values, valid = _episode.align(streams, frames, options.get("device"))
    report = {"episode": where, "frames_grid": int(frames.shape[0]),
              "grid": "reference" if ref is not None else f"{fps} fps {options['span']}",
              "start_ns": int(frames[0]) if frames.size else None,
              "streams": _episode.sync_report(streams, frames, valid, fps)}
    if ref is not None and frames.size:
        nominal = frames[0] + np.round(np.arange(frames.shape[0]) * 1e9 / fps).astype(np.int64)
        report["worst_reference_vs_timestamp_ms"] = float(np.abs(frames - nominal).max()) / 1e6
    kept = _apply_policy(frames, values, valid, feats, options["invalid"], report)
    if kept is None:
        return report
    frames, values, cols = kept
    report["frames"] = int(frames.shape[0])
    task = options["task"] or str(ep.meta.get("task") or DEFAULT_TASK)
    return Converted(where=where, task=task, features=feats, values=values, frame_times=frames,
                     valid_columns=cols, report=report)


def convert(inputs, output, *, to, streams, fps=None, reference=None, span="overlap",
            invalid="trim", split_gap=None, split_by=None, task=None, robot_type=None,
            overwrite=False, order="error", masks=None, progress=False, log=None,
            data_files_size_in_mb=None, video_files_size_in_mb=None):
    """Converts recordings to a training dataset on one frame grid.

    inputs     list of paths robocache.datasets.open reads (each episode of each
               input becomes one or more output episodes)
    output     LeRobot v3.0 folder (to="lerobot") or robomimic HDF5 file
               (to="robomimic"); refused if it exists unless overwrite=True
    streams    list of "NAME=SOURCE[,SOURCE...][,KEY=VALUE...]" or StreamSpec
    fps        target rate (frames per second); with reference=None the grid is
               t_i = start + round(i * 1e9 / fps) ns over the streams' `span`
               ("overlap" or "union"); with reference (a stream name) the
               grid is that stream's frame times and fps defaults to the
               rounded median rate of the reference
    invalid    frames where a stream has no valid sample: "trim" (drop them at
               the episode's edges), "keep" (write a bool column
               "<feature>.valid"), "reject" (drop the episode)
    split_gap  ns: split an episode where no selected stream has a sample for
               longer than this; split_by: a stream whose value changes start
               new episodes
    masks      robomimic only: {"train": 0.9} style split fractions -> mask/
    data_files_size_in_mb, video_files_size_in_mb
               LeRobot only: MiB of Parquet / MP4 after which a file takes no
               more episodes (default LeRobot's 100 / 500)
    Image features of a LeRobot video input whose output frames are exactly
    the source episode's are copied packet for packet, others re-encoded
    (robocache.convert._video_copy; the path each took is in the report).
    Returns the sync report (dict: "episodes" list, "rejected" list); also
    written as OUTPUT.sync.json. Raises SpecError (usage), ConvertError (data),
    OutputError (I/O), robocache.datasets.DatasetError (unreadable input).
    robocache.ray.convert runs the same conversion on Ray, and reads URLs
    (s3://...), which this refuses (FileNotFoundError naming the URL).
    """
    _refuse_urls(inputs)
    specs, fps, options = plan(inputs, to=to, streams=streams, fps=fps, reference=reference,
                               span=span, invalid=invalid, split_gap=split_gap,
                               split_by=split_by, task=task, order=order)
    sizes = _file_sizes(to, data_files_size_in_mb, video_files_size_in_mb)
    _output.check_target(output, overwrite)
    items = _progress(_episodes(inputs, specs, fps, options), progress)
    if progress and log is not None:
        log = items.write
    return write(items, output, to=to, inputs=inputs, fps=fps, options=options,
                 robot_type=robot_type, masks=masks, log=log, sizes=sizes)


def is_url(path):
    """True when `path` (str) is a URL ("scheme://...") and no path here."""
    return "://" in path and not os.path.exists(path)


def _refuse_urls(inputs):
    for p in map(str, inputs):
        if is_url(p):
            raise FileNotFoundError(f"{p}: no such file or directory; URLs are read on Ray only "
                                    "(robocache convert --ray, robocache.ray.convert)")


def _file_sizes(to, data_mb, video_mb):
    """{"data_files_size_in_mb": ..., "video_files_size_in_mb": ...} of the
    limits given (SpecError when not positive or not for LeRobot)."""
    sizes = {}
    for key, value, flag in (("data_files_size_in_mb", data_mb, "--data-file-size-mb"),
                             ("video_files_size_in_mb", video_mb, "--video-file-size-mb")):
        if value is None:
            continue
        if to != "lerobot":
            raise SpecError(f"{flag}: LeRobot output only (--to lerobot)")
        if not value > 0:
            raise SpecError(f"{flag} must be positive, got {value}")
        sizes[key] = value
    return sizes


def plan(inputs, *, to, streams, fps=None, reference=None, span="overlap", invalid="trim",
         split_gap=None, split_by=None, task=None, order="error", local_copy=None):
    """Checks convert's arguments (SpecError naming the bad one) and returns
    (specs: list of StreamSpec, fps, options: dict for episodes()).
    local_copy: a function of an input giving a context manager of the
    local path to read it from (robocache.ray: a URL's temporary copy), used
    on inputs[0] when fps is None (the reference stream's rate); None: the
    input itself."""
    if to not in TARGETS:
        raise SpecError(f"--to: {to!r} is not one of {', '.join(TARGETS)}")
    if invalid not in INVALID:
        raise SpecError(f"--invalid: {invalid!r} is not one of {', '.join(INVALID)}")
    if span not in _episode.SPANS:
        raise SpecError(f"--span: {span!r} is not overlap or union")
    if not inputs:
        raise SpecError("no input given")
    specs = [parse_stream(s) if isinstance(s, str) else s for s in streams]
    if not specs:
        raise SpecError("give at least one --stream NAME=SOURCE")
    if len({s.name for s in specs}) != len(specs):
        raise SpecError("--stream: feature names must be unique")
    if fps is None and reference is None:
        raise SpecError("give --fps or --reference")
    if fps is not None and not fps > 0:
        raise SpecError(f"--fps must be positive, got {fps}")
    if fps is None:
        with (local_copy or contextlib.nullcontext)(inputs[0]) as first:
            fps = _reference_fps(first, reference, order)
    options = {"reference": reference, "span": span, "invalid": invalid, "split_gap": split_gap,
               "split_by": split_by, "task": task, "order": order}
    return specs, fps, options


def episodes(inputs, specs, fps, options, device=None, names=None):
    """The converted episodes of `inputs` in order: Converted, or the report
    (dict with "rejected") of an episode the invalid policy dropped. device:
    None (the CPU backend) or a torch device string ("cuda:0") to align on.
    names: what the reports call each input (robocache.ray: the URL a local
    copy was made of); None: its path."""
    return _episodes(inputs, specs, fps, dict(options, device=device), names)


def write(items, output, *, to, inputs, fps, options, robot_type=None, masks=None, log=None,
          writer_class=None, sizes=None, committed=None, state=None):
    """Writes converted episodes (`items`: Converted, LeRobot EpisodePart with
    `report` and `policies`, or rejected reports) to a temporary output
    renamed to `output` at the end, then OUTPUT.sync.json. sizes: LeRobot's
    file size limits (LeRobotWriter's keywords). writer_class: a LeRobotWriter
    subclass to write with (robocache.ray's places the videos its workers
    encoded); None: the writer of `to`. committed: called once `output` is
    in place, before the report is written. state: None, or a dict write()
    keeps its progress in, so that a caller can save it and resume the
    output (robocache.ray's merge): "tmp" (the temporary output, kept on
    errors when the caller gave it), "writer" (a writer holding the items
    written so far), "report" (the sync report so far), "policies" (the
    first episode's). Returns the report."""
    state = {} if state is None else state
    owned = "tmp" not in state
    if owned:
        state["tmp"] = _output.temporary(output, to == "lerobot")
    tmp = state["tmp"]
    writer = None
    try:
        writer = state.get("writer") or (
            _writer(to, tmp, fps, robot_type, masks, sizes or {}) if writer_class is None
            else writer_class(tmp, fps, robot_type, **(sizes or {})))
        state["writer"] = writer
        report = state.setdefault("report", {"output": output, "to": to, "fps": fps,
                                             "episodes": [], "rejected": []})
        for conv in items:
            if isinstance(conv, dict):
                report["rejected"].append(conv)
                _log(log, f"rejected {conv['episode']}: {conv['rejected']}")
                continue
            writer.write(conv)
            state["policies"] = state.get("policies") or conv.policies
            report["episodes"].append(conv.report)
            _log(log, _summary(conv.report))
        if not report["episodes"]:
            raise ConvertError("no episode was converted: "
                               + "; ".join(f"{r['episode']}: {r['rejected']}"
                                           for r in report["rejected"]))
        writer.finish({"inputs": [str(p) for p in inputs], "fps": fps,
                       "reference": options["reference"], "span": options["span"],
                       "invalid": options["invalid"], "features": state["policies"],
                       "split_gap_ns": options["split_gap"], "split_by": options["split_by"]})
        writer = None
        _output.commit(tmp, output)
    except BaseException:
        if writer is not None:
            writer.abort()
        if owned:
            _output.discard(tmp)
        raise
    if committed is not None:
        committed()
    with open(output.rstrip("/") + ".sync.json", "w") as fh:
        json.dump(report, fh, indent=2)
    return report


def _reference_fps(path, reference, order):
    rec = rd.open(path, order=order)
    ep = rec.episodes[0]
    if reference not in ep.streams:
        raise ConvertError(f"{path}: episode {ep.index}: --reference stream {reference!r} not "
                           f"found (streams: {', '.join(ep.streams)})")
    t = ep.streams[reference].times
    if t.shape[0] < 2:
        raise ConvertError(f"{path}: episode {ep.index}: the reference stream has "
                           f"{t.shape[0]} frame(s); a frame grid needs at least 2")
    return int(round(1e9 / float(np.median(np.diff(t)))))


def _writer(to, tmp, fps, robot_type, masks, sizes):
    if to == "lerobot":
        from ._lerobot_writer import LeRobotWriter
        return LeRobotWriter(tmp, fps, robot_type, **sizes)
    from ._robomimic_writer import RobomimicWriter
    return RobomimicWriter(tmp, fps, masks)


def _progress(it, enabled):
    if not enabled:
        return it
    from tqdm import tqdm
    return tqdm(it, desc="episodes", unit="ep", file=sys.stderr)


def _log(log, line):
    if log is not None:
        log(line)


def _summary(rep):
    lines = [f"{rep['episode']}: {rep['frames']} frames ({rep['grid']}), "
             f"{rep['frames_invalid']} with a stream not covered"]
    for s in rep["streams"]:
        rate = f"{s['rate_hz']:.3f} Hz" if "rate_hz" in s else "-"
        jit = f"{s['jitter_ms']:.3f} ms" if "jitter_ms" in s else "-"
        near = f", worst nearest {s['worst_nearest_ms']:.3f} ms" if "worst_nearest_ms" in s else ""
        lines.append(f"  {s['stream']:48s} {s['method']:8s} {rate:>12s} jitter {jit:>10s} "
                     f"gaps {s.get('gaps', 0):3d} uncovered {s['uncovered']}{near}")
    return "\n".join(lines)
