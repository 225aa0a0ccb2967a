"""RLDS / TFDS datasets (Open X-Embodiment) without TensorFlow: format "rlds".

A TFDS dataset folder holds dataset_info.json (name, splits, shard lengths),
features.json (the feature tree) and TFRecord shards
`<name>-<split>.tfrecord-NNNNN-of-NNNNN`. Each record is one episode, a
tf.train.Example with flattened keys (see _tfds_features). Each episode
becomes an Episode whose streams are its step features, named by their path
under `steps` ("observation/state", "action", "reward", "is_first",
"observation/image_0", ...), in features.json order:

- tensors: kind "vector", values [T, prod(shape)] of the features.json dtype
  (bool, int32, float32...), meta["shape"] the per-step shape;
- images: kind "image", values the frame index [T, 1] int64, frames(indices)
  decodes only those encoded frames (Pillow: uint8 [n, H, W, 3] RGB);
- text step features (language_instruction) go to ep.meta (one string when
  equal on every step, else the list), as do the episode features
  (ep.meta["episode_metadata"] = {"file_path": ..., "episode_id": ...}) and
  ep.meta["steps"]; ep.meta["split"], ["file"], ["record"] say where the
  episode is.

Times: RLDS steps have no timestamps, so times = round(step index * 1e9 /
rate_hz) ns, clock "step" (as LeRobot's timestamp = frame_index / fps).
rate_hz is the option, else a positive number under "rate_hz",
"control_frequency" or "fps" in the folder's metadata.json (TFDS's
MetadataDict), else DatasetError asking for rate_hz.

Lazy: open reads the two json files and the record framing of every shard
(12 bytes per record, length CRC checked); an episode's record is read, its
data CRC checked and its Example parsed on the first access of one of its
streams or of its meta beyond split/file/record; the last 4 parsed
episodes are kept for their sibling streams.
"""

import builtins
import json
import os
from collections import OrderedDict
from collections.abc import MutableMapping

import numpy as np

from . import _images, _steps, _tfds_features, _tfexample, _tfrecord
from ._series import DatasetError, Episode, Recording, Series

CACHED_EPISODES = 4
RATE_KEYS = ("rate_hz", "control_frequency", "fps")
_DEFAULT_TEMPLATE = "{DATASET}-{SPLIT}.{FILEFORMAT}-{SHARD_X_OF_Y}"


def _read_json(path):
    try:
        with builtins.open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        raise DatasetError(f"{path}: missing (a TFDS dataset folder holds dataset_info.json "
                           "and features.json beside its .tfrecord shards)") from None
    except json.JSONDecodeError as e:
        raise DatasetError(f"{path}: not valid JSON ({e})") from None


def _shards(info, split):
    """[(file name, expected records or None)] of one split of dataset_info.json."""
    lengths = [int(n) for n in split.get("shardLengths", [])]
    count = len(lengths) or int(split.get("numShards", 0))
    template = split.get("filepathTemplate") or _DEFAULT_TEMPLATE
    out = []
    for k in range(count):
        name = template
        for field, value in (("{DATASET}", info.get("name", "")), ("{SPLIT}", split["name"]),
                             ("{FILEFORMAT}", info.get("fileFormat", "tfrecord")),
                             ("{SHARD_X_OF_Y}", f"{k:05d}-of-{count:05d}"),
                             ("{SHARD_INDEX}", f"{k:05d}"), ("{NUM_SHARDS}", f"{count:05d}")):
            name = name.replace(field, value)
        out.append((name, lengths[k] if lengths else None))
    return out


def _rate(folder, rate_hz):
    if rate_hz is not None:
        return _steps.rate(rate_hz), "given"
    path = os.path.join(folder, "metadata.json")
    if os.path.exists(path):
        meta = _read_json(path)
        for key in RATE_KEYS:
            value = meta.get(key) if isinstance(meta, dict) else None
            if isinstance(value, (int, float)) and value > 0:
                return float(value), f"metadata.json {key}"
    raise DatasetError(
        f"{folder}: RLDS steps carry no timestamps and the dataset states no step rate "
        f"(metadata.json has none of {', '.join(RATE_KEYS)}); pass the control rate, e.g. "
        "rd.open(path, rate_hz=5)")


class _Ref:
    __slots__ = ("file", "record", "offset", "length", "where")

    def __init__(self, file, record, offset, length, where):
        self.file, self.record, self.offset, self.length = file, record, offset, length
        self.where = where


class _Episodes:
    """Reads, checks and decodes episode records; keeps the last few."""

    def __init__(self, features, rate):
        self.features = features
        self.rate = rate
        self._cache = OrderedDict()

    def get(self, ref):
        """(steps, arrays, times) of the episode at `ref`: see
        _tfds_features.decode; times int64 [steps] ns, read-only, shared by
        the episode's streams."""
        key = (ref.file, ref.record)
        hit = self._cache.get(key)
        if hit is not None:
            self._cache.move_to_end(key)
            return hit
        data = _tfrecord.read(ref.file, ref.record, ref.offset, ref.length)
        from google.protobuf.message import DecodeError
        try:
            example = _tfexample.parse(data)
        except DecodeError as e:
            raise DatasetError(f"{ref.where}: the record is no tf.train.Example ({e})") from None
        steps, arrays = _tfds_features.decode(self.features, example, ref.where)
        times = _steps.times(steps, self.rate)
        times.flags.writeable = False
        got = self._cache[key] = (steps, arrays, times)
        if len(self._cache) > CACHED_EPISODES:
            self._cache.popitem(last=False)
        return got


class _EpisodeMeta(MutableMapping):
    """ep.meta of an RLDS episode: split, file and record at once; the rest
    (steps, text step features, episode features) read with the record on
    first use."""

    def __init__(self, base, fill):
        self._data = dict(base)
        self._fill = fill

    def _full(self):
        if self._fill is not None:
            filled = self._fill()
            self._fill = None
            filled.update(self._data)
            self._data = filled
        return self._data

    def __getitem__(self, key):
        return self._full()[key]

    def __setitem__(self, key, value):
        self._full()[key] = value

    def __delitem__(self, key):
        del self._full()[key]

    def __iter__(self):
        return iter(self._full())

    def __len__(self):
        return len(self._full())

    def __repr__(self):
        return repr(self._full())


def _value(feature, array):
    if feature.kind == "text":
        return array[0] if len(array) == 1 else array
    if feature.kind == "tensor" and array.size == 1:
        return array.item()
    return array


def _meta_of(episodes, ref):
    def fill():
        steps, arrays, _ = episodes.get(ref)
        meta = {"steps": steps}
        for f in episodes.features:
            if f.key not in arrays:
                continue
            if f.stepped:
                if f.kind == "text":
                    texts = arrays[f.key]
                    same = bool(texts) and all(t == texts[0] for t in texts)
                    meta[f.key.split("/", 1)[1]] = texts[0] if same else texts
            else:
                group, _, rest = f.key.partition("/")
                if rest:
                    meta.setdefault(group, {})[rest] = _value(f, arrays[f.key])
                else:
                    meta[group] = _value(f, arrays[f.key])
        return meta
    return fill


def _stream(episodes, ref, feature, rate_source, order):
    name = feature.key.split("/", 1)[1]
    meta = {"feature": feature.key, "rate_hz": episodes.rate, "rate_source": rate_source,
            "dtype": feature.dtype, "shape": feature.shape}
    if feature.kind == "image":
        meta["encoding"] = feature.encoding

        def load():
            steps, _, times = episodes.get(ref)
            return times, np.arange(steps, dtype=np.int64).reshape(-1, 1)

        def frames(indices):
            blobs = episodes.get(ref)[1][feature.key]
            return _images.decode([blobs[i] for i in indices], indices,
                                  f"{ref.where}: stream {name!r}")

        return Series(name, load, kind="image", clock="step", fields=["frame_index"],
                      frames=frames, meta=meta, order=order, where=ref.where)

    def load():
        steps, arrays, times = episodes.get(ref)
        values = arrays[feature.key]
        columns = feature.size if feature.size is not None else \
            (values.size // steps if steps else 0)
        return times, values.reshape(steps, columns)

    return Series(name, load, kind="vector", clock="step", meta=meta, order=order,
                  where=ref.where)


def _select(info, split, folder, path):
    """[(split name, file path, expected records)] to read, and the missing files."""
    splits = info.get("splits", [])
    names = [s["name"] for s in splits]
    if not splits:
        raise DatasetError(f"{folder}/dataset_info.json: lists no splits")
    wanted = names if split is None else [split] if isinstance(split, str) else list(split)
    for w in wanted:
        if w not in names:
            raise DatasetError(f"{folder}: no split {w!r} (splits: {', '.join(names)})")
    chosen, missing = [], []
    for s in splits:
        if s["name"] not in wanted:
            continue
        shards = [(s["name"], os.path.join(folder, n), want) for n, want in _shards(info, s)]
        if os.path.isfile(path):
            shards = [x for x in shards
                      if os.path.exists(x[1]) and os.path.samefile(x[1], path)]
        lost = [x[1] for x in shards if not os.path.exists(x[1])]
        if lost and split is not None:
            raise DatasetError(f"{folder}: split {s['name']!r}: shard {lost[0]} is missing")
        missing += lost
        chosen += [x for x in shards if os.path.exists(x[1])]
    if os.path.isfile(path) and not chosen:
        chosen = [(None, path, None)]
    return chosen, missing


def open(path, *, format="rlds", order="error", split=None, rate_hz=None):
    """Opens a TFDS/RLDS dataset folder (or one of its .tfrecord shards).

    split    None (every split of dataset_info.json; ep.meta["split"] says
             which), a split name or a list of names
    rate_hz  steps per second, for the step times (else from metadata.json,
             else DatasetError)
    order    "error" or "drop" (step times are always increasing)
    Returns a Recording of format "rlds" with meta name, version, splits
    (split -> episodes), missing (shards dataset_info.json lists that are not
    there; an error instead when that split was asked for), rate_hz,
    rate_source, skipped_features. DatasetError (file and record index) for
    a bad CRC, a truncated shard, or a shard whose record count differs from
    dataset_info.json.
    """
    folder = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
    info = _read_json(os.path.join(folder, "dataset_info.json"))
    if info.get("fileFormat", "tfrecord") != "tfrecord":
        raise DatasetError(f"{folder}: file format {info['fileFormat']!r}; only TFRecord "
                           "shards are read")
    features, skipped = _tfds_features.parse(_read_json(os.path.join(folder, "features.json")))
    rate, rate_source = _rate(folder, rate_hz)
    shards, missing = _select(info, split, folder, path)
    reader = _Episodes(features, rate)
    episodes, counts = [], {}
    for split_name, file, want in shards:
        offsets, lengths = _tfrecord.index(file)
        if want is not None and len(offsets) != want:
            raise DatasetError(f"{file}: {len(offsets)} records, dataset_info.json says {want}")
        for record, (offset, length) in enumerate(zip(offsets, lengths)):
            i = len(episodes)
            where = f"{file}: episode {i} (split {split_name}, record {record})"
            ref = _Ref(file, record, offset, length, where)
            streams = {f.key.split("/", 1)[1]: _stream(reader, ref, f, rate_source, order)
                       for f in features if f.stepped and f.kind != "text"}
            ep = Episode(i, streams)
            ep.meta = _EpisodeMeta({"split": split_name, "file": file, "record": record},
                                   _meta_of(reader, ref))
            episodes.append(ep)
            counts[split_name] = counts.get(split_name, 0) + 1
    meta = {"name": info.get("name"), "version": info.get("version"), "splits": counts,
            "missing": missing, "rate_hz": rate, "rate_source": rate_source,
            "skipped_features": skipped}
    return Recording("rlds", path, episodes, meta)
