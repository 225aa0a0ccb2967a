"""TFDS features.json: which flattened Example keys an RLDS episode has, and
their decoding into per-step arrays.

TFDS stores an episode as one tf.train.Example whose keys are the feature
paths joined by "/" ("steps/observation/state", "episode_metadata/file_path").
Features under a `Dataset` (the RLDS `steps`) hold one value per step, their
lists concatenated over the steps; integers and bools travel as int64_list,
floats as float_list, text and encoded images as bytes_list (one item per
step), tensors of encoding "bytes" as one bytes item of raw little-endian
values per step.
"""

import numpy as np

from ._series import DatasetError


class Feature:
    """One leaf of features.json: `key` (the flattened Example key), `stepped`
    (under the steps Dataset), `kind` ("tensor", "image" or "text"), `shape`
    (tuple of ints, -1 unknown), `dtype` (numpy dtype name), `encoding`
    ("none" or "bytes" for tensors; the image format for images), `size`
    (values per step, None for an unknown dimension)."""

    __slots__ = ("key", "stepped", "kind", "shape", "dtype", "encoding", "size")

    def __init__(self, key, stepped, kind, shape=(), dtype="", encoding="none"):
        self.key, self.stepped, self.kind = key, stepped, kind
        self.shape, self.dtype, self.encoding = tuple(shape), dtype, encoding
        # values per step (None when the shape has an unknown dimension)
        self.size = None if -1 in self.shape else int(np.prod(self.shape, dtype=np.int64))


def _dims(spec):
    return tuple(int(d) for d in spec.get("shape", {}).get("dimensions", []))


def _leaf(node, key, stepped):
    if "tensor" in node:
        spec = node["tensor"]
        dtype = spec.get("dtype", "")
        if dtype == "string":
            return Feature(key, stepped, "text")
        return Feature(key, stepped, "tensor", _dims(spec), dtype,
                       spec.get("encoding", "none").lower())
    if "image" in node:
        spec = node["image"]
        return Feature(key, stepped, "image", _dims(spec), spec.get("dtype", "uint8"),
                       spec.get("encodingFormat", "png"))
    if "text" in node:
        return Feature(key, stepped, "text")
    if "classLabel" in node:
        return Feature(key, stepped, "tensor", (), "int64")
    return None


def parse(features_json):
    """(features, skipped): the leaves of a features.json document as a list
    of Feature in file order, and "key (class)" strings of the leaves this
    reader does not decode (nested sequences inside steps, video, audio...)."""
    out, skipped = [], []

    def walk(node, prefix, stepped):
        if "featuresDict" in node:
            for name, child in node["featuresDict"].get("features", {}).items():
                walk(child, f"{prefix}{name}/", stepped)
            return
        key = prefix.rstrip("/")
        if "sequence" in node and not stepped:
            walk(node["sequence"]["feature"], prefix, True)
            return
        leaf = _leaf(node, key, stepped)
        if leaf is None:
            skipped.append(f"{key} ({node.get('pythonClassName', '?').rsplit('.', 1)[-1]})")
        else:
            out.append(leaf)

    walk(features_json, "", False)
    return out, skipped


def _steps_of(feature, raw):
    if feature.kind != "tensor" or feature.encoding == "bytes":
        return len(raw)
    size = feature.size
    if not size:
        return None
    if len(raw) % size:
        raise ValueError(f"{len(raw)} values, not a multiple of the {size} per step of "
                         f"shape {feature.shape}")
    return len(raw) // size


def _tensor(feature, raw, steps):
    dtype = np.dtype(feature.dtype)
    if feature.encoding == "bytes":
        parts = [np.frombuffer(b, dtype=dtype.newbyteorder("<")) for b in raw]
        flat = np.concatenate(parts) if parts else np.empty(0, dtype)
    elif feature.encoding == "none":
        flat = np.asarray(raw if raw is not None else [])
    else:
        raise ValueError(f"tensor encoding {feature.encoding!r} is not supported "
                         "(only 'none' and 'bytes')")
    lead = (steps,) if feature.stepped else ()
    return flat.astype(dtype, copy=False).reshape(lead + feature.shape)


def decode(features, example, where):
    """The episode in `example` (dict from _tfexample.parse): (steps, arrays)
    with arrays[key] = numpy [steps, *shape] of the feature's dtype for
    tensors, list of `steps` bytes for images, list of str for text (episode
    features: the value itself, without the steps axis). A key of
    features.json missing from the Example, or lists whose lengths disagree
    on the number of steps: DatasetError naming `where` and the key."""
    steps = None
    for f in features:
        if not f.stepped:
            continue
        if f.key not in example:
            raise DatasetError(f"{where}: feature {f.key!r} of features.json is missing "
                               "from the record")
        raw = example[f.key]
        try:
            n = _steps_of(f, raw if raw is not None else [])
        except ValueError as e:
            raise DatasetError(f"{where}: feature {f.key!r}: {e}") from None
        if n is None:
            continue
        if steps is None:
            steps = n
        elif n != steps:
            raise DatasetError(f"{where}: feature {f.key!r} has {n} steps, the features "
                               f"before it {steps}")
    steps = steps or 0
    arrays = {}
    for f in features:
        raw = example.get(f.key)
        if raw is None and not f.stepped:
            continue
        try:
            if f.kind == "tensor":
                arrays[f.key] = _tensor(f, raw, steps)
            elif f.kind == "text":
                arrays[f.key] = [b.decode("utf-8", "replace") for b in (raw or [])]
            else:
                arrays[f.key] = list(raw or [])
        except ValueError as e:
            raise DatasetError(f"{where}: feature {f.key!r} ({f.dtype}, shape "
                               f"{f.shape}): {e}") from None
    return steps, arrays
