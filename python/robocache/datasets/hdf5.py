"""robomimic and ALOHA/ACT HDF5 demonstrations through h5py: formats "robomimic" and "aloha".

robomimic (one file, many demos): data/demo_N/{obs/<key>, actions, rewards,
dones, states}, `data` attribute env_args (JSON; env_kwargs.control_freq for
robosuite), mask/<split> (demo names). One Episode per demo, sorted by N,
index N; streams "obs/<key>" (sorted), "actions", "rewards", "dones",
"states" (those present). ep.meta: demo, num_samples, splits (the masks
holding the demo).

ALOHA/ACT (one file per episode: episode_N.hdf5 in a folder, or one file):
observations/qpos, observations/qvel, observations/effort, observations/
images/<cam>, action, and any other dataset with one row per step
(base_action...); root attributes sim and compress. One Episode per file,
index N; a stream per dataset, named by its HDF5 path ("action",
"observations/qpos", "observations/images/cam_high"). Compressed cameras
(compress=True: uint8 [T, max_len] rows of zero-padded JPEG bytes, as ACT's
compress_data.py and ALOHA's recorder write them) are decoded per frame;
the JPEG's channels are reversed, so frames equal what cv2.imdecode returns
in ACT's and LeRobot's ALOHA loaders (the arrays as they were recorded,
cv2.imencode having read them as BGR).

Streams: kind "image" for uint8 [T, H, W, C] datasets (and compressed ALOHA
cameras): values the frame index [T, 1], frames(indices) reads only those
rows; every other dataset kind "vector", values [T, prod(shape[1:])] as
stored. Times step index / rate_hz (rounded ns), clock "step". Rate:
rate_hz= if given, else robomimic's env_args control_freq, else for ALOHA
its control rate of 50 Hz (ACT's constants.py DT = 0.02 s; LeRobot's ALOHA
converter's default fps 50), else DatasetError asking for rate_hz.

Lazy: open reads keys, shapes, dtypes and attributes; a dataset is read on
the first access of its series' times/values (only that dataset), image rows
on frames(). The last file read stays open (read-only) for the next read
until another file is read or the Recording is dropped. A missing required key (robomimic: actions; ALOHA: action,
observations/qpos) or a dataset whose length differs from the actions':
DatasetError naming file, episode and key.
"""

import json
import os
import re

import numpy as np

from . import _images, _steps
from ._deps import require
from ._series import DatasetError, Episode, Recording, Series

ALOHA_RATE_HZ = 50.0


def _h5py():
    return require("h5py", purpose="read robomimic and ALOHA HDF5 files")


def detect(path):
    """"robomimic" (a `data` group) or "aloha" (`observations` and `action`) for
    an HDF5 file; DatasetError naming the file and its top-level keys if
    neither."""
    with _h5py().File(path, "r") as f:
        if isinstance(f.get("data"), _h5py().Group):
            return "robomimic"
        if "observations" in f and "action" in f:
            return "aloha"
        keys = ", ".join(list(f)[:12]) or "none"
    raise DatasetError(f"{path}: an HDF5 file that is neither robomimic (data/demo_N/...) nor "
                       f"ALOHA (observations/..., action); top-level keys: {keys}")


def _number(name):
    m = re.search(r"(\d+)$", os.path.splitext(name)[0])
    return int(m.group(1)) if m else 0


class _LastFile:
    """The HDF5 file of the last read, kept open for the next one (one per
    Recording: a demo file is opened once, an ALOHA folder once per episode);
    closed when another file is read or the Recording is dropped."""

    def __init__(self):
        self.path = self.file = None

    def get(self, path):
        if self.path != path:
            if self.file is not None:
                self.file.close()
                self.path = self.file = None
            self.file = _h5py().File(path, "r")
            self.path = path
        return self.file


def _read(files, path, key, dset, where, rows=None):
    """Dataset `key` of file `path`, or its increasing unique `rows`: through
    `dset` (the h5py Dataset found at open) while its file is still open,
    else through the file opened again."""
    try:
        d = dset if dset.id.valid else files.get(path)[key]
        if rows is None:
            return d[()]
        if len(rows) == 0:
            return np.empty((0,) + d.shape[1:], dtype=d.dtype)
        if rows[-1] - rows[0] + 1 == len(rows):  # a run of rows: one hyperslab
            return d[int(rows[0]):int(rows[-1]) + 1]
        return d[rows]
    except (KeyError, OSError) as e:
        raise DatasetError(f"{where}: cannot read {key!r}: {e}") from None


def _rows(files, path, key, dset, indices, where):
    """Rows `indices` of dataset `key` in the order asked (h5py reads increasing rows)."""
    indices = np.asarray(indices, dtype=np.int64)
    if indices.size < 2 or bool(np.all(np.diff(indices) > 0)):
        return _read(files, path, key, dset, where, rows=indices)
    unique, inverse = np.unique(indices, return_inverse=True)
    return _read(files, path, key, dset, where, rows=unique)[inverse]


def _series(files, path, key, name, dset, steps, rate, rate_source, order, where):
    """The Series of dataset `key` (`dset`, an h5py Dataset of the file `files` holds open)."""
    t = _steps.times(steps, rate)
    meta = {"key": key, "dtype": str(dset.dtype), "shape": tuple(dset.shape[1:]),
            "rate_hz": rate, "rate_source": rate_source}
    encoded = dset.ndim == 2 and dset.dtype == np.uint8 and "/images/" in f"/{key}"
    if encoded or (dset.ndim == 4 and dset.dtype == np.uint8):
        label = f"{where}: stream {name!r}"

        def frames(indices):
            rows = _rows(files, path, key, dset, indices, label)
            if not encoded:
                return rows
            decoded = _images.decode([r.tobytes() for r in rows], indices, label)
            return np.ascontiguousarray(decoded[..., ::-1])

        meta["encoding"] = "jpeg" if encoded else "none"
        return Series(name, lambda: (t, np.arange(steps, dtype=np.int64).reshape(-1, 1)),
                      kind="image", clock="step", fields=["frame_index"], frames=frames,
                      meta=meta, order=order, where=where)

    def load():
        return t, _read(files, path, key, dset, where).reshape(steps, -1)

    return Series(name, load, kind="vector", clock="step", meta=meta, order=order, where=where)


def _require(group, key, where):
    if key not in group:
        raise DatasetError(f"{where}: missing key {key!r}")
    return group[key]


def _check_length(dset, key, steps, where):
    if dset.ndim == 0 or dset.shape[0] != steps:
        raise DatasetError(f"{where}: {key!r} has shape {dset.shape}, expected {steps} rows "
                           "(one per step)")


def _text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


def _robomimic_rate(data, rate_hz, path):
    env_args = json.loads(_text(data.attrs["env_args"])) if "env_args" in data.attrs else {}
    if rate_hz is not None:
        return env_args, _steps.rate(rate_hz), "given"
    freq = env_args.get("env_kwargs", {}).get("control_freq")
    if freq is not None:
        return env_args, _steps.rate(freq), "env_args control_freq"
    raise DatasetError(f"{path}: the demos carry no timestamps and data/env_args states no "
                       "env_kwargs.control_freq; pass the control rate, e.g. "
                       "rd.open(path, rate_hz=20)")


def _robomimic(path, order, rate_hz, split):
    files = _LastFile()
    f = files.get(path)
    data = f["data"]
    env_args, rate, source = _robomimic_rate(data, rate_hz, path)
    masks = {name: {_text(v) for v in f["mask"][name][()]} for name in f.get("mask", {})}
    if split is not None and split not in masks:
        raise DatasetError(f"{path}: no mask/{split} (masks: {', '.join(masks) or 'none'})")
    demos = sorted((k for k in data if k.startswith("demo_")), key=_number)
    episodes = []
    for demo in demos:
        if split is not None and demo not in masks[split]:
            continue
        g = data[demo]
        where = f"{path}: episode {demo}"
        steps = _require(g, "actions", where).shape[0]
        keys = [f"obs/{k}" for k in sorted(g["obs"])] if "obs" in g else []
        keys += [k for k in ("actions", "rewards", "dones", "states") if k in g]
        streams = {}
        for key in keys:
            dset = g[key]
            _check_length(dset, key, steps, where)
            streams[key] = _series(files, path, f"data/{demo}/{key}", key, dset, steps,
                                   rate, source, order, where)
        meta = {"demo": demo, "num_samples": int(g.attrs.get("num_samples", steps)),
                "splits": sorted(m for m in masks if demo in masks[m]), "file": path}
        episodes.append(Episode(_number(demo), streams, meta))
    meta = {"env_args": env_args, "rate_hz": rate, "rate_source": source,
            "masks": {m: len(v) for m, v in masks.items()}}
    if "total" in data.attrs:
        meta["total"] = int(data.attrs["total"])
    return Recording("robomimic", path, episodes, meta)


def _aloha_episode(files, path, order, rate, source):
    h5py = _h5py()
    where = f"{path}: episode {_number(os.path.basename(path))}"
    f = files.get(path)
    steps = _require(f, "action", where).shape[0]
    _require(f, "observations/qpos", where)
    keys = []
    f.visititems(lambda k, obj: keys.append(k) if isinstance(obj, h5py.Dataset)
                 and k != "compress_len" else None)
    streams = {}
    for key in keys:
        dset = f[key]
        _check_length(dset, key, steps, where)
        streams[key] = _series(files, path, key, key, dset, steps, rate, source, order,
                               where)
    meta = {"file": path, "sim": bool(f.attrs.get("sim", False)),
            "compress": bool(f.attrs.get("compress", False))}
    return Episode(_number(os.path.basename(path)), streams, meta)


def _aloha(path, order, rate_hz):
    if rate_hz is not None:
        rate, source = _steps.rate(rate_hz), "given"
    else:
        rate, source = ALOHA_RATE_HZ, "ALOHA control rate"
    if os.path.isdir(path):
        files = sorted((e for e in os.listdir(path) if re.fullmatch(r"episode_\d+\.hdf5", e)),
                       key=_number)
        if not files:
            raise DatasetError(f"{path}: no episode_N.hdf5 files")
        files = [os.path.join(path, e) for e in files]
    else:
        files = [path]
    last = _LastFile()
    episodes = [_aloha_episode(last, p, order, rate, source) for p in files]
    return Recording("aloha", path, episodes, {"rate_hz": rate, "rate_source": source})


def open(path, *, format, order="error", rate_hz=None, split=None):
    """Opens a robomimic HDF5 file (format "robomimic") or ALOHA episode
    file(s) (format "aloha": one episode_N.hdf5, or a folder of them).

    rate_hz  control rate in Hz for the step times (overrides env_args /
             the ALOHA default)
    split    robomimic only: keep the demos of mask/<split>
    order    "error" or "drop" (step times are always increasing)
    """
    if format == "robomimic":
        return _robomimic(path, order, rate_hz, split)
    if split is not None:
        raise ValueError("split= applies to robomimic files (mask/<split>), not to ALOHA")
    return _aloha(path, order, rate_hz)
