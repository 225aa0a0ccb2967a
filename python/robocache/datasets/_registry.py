"""robocache.datasets.open: format detection and the table of readers.

Each format's reader is a module of this package with a function
`open(path, **options) -> Recording`; it is imported only when a file of
its format is opened, so a format's optional dependencies are needed only
for that format.
"""

import builtins
import importlib
import inspect
import os

from ._series import DatasetError

# format name -> module of this package that reads it
READERS = {
    "rosbag2": "rosbag",
    "rosbag1": "rosbag",
    "lerobot": "lerobot",
    "rlds": "rlds",
    "robomimic": "hdf5",
    "aloha": "hdf5",
    "ulog": "ulog",
    "euroc": "text",
    "tum": "text",
    "csv": "text",
    "timestamps": "text",
}

FORMATS = tuple(READERS)


def _has(path, *names):
    return all(os.path.exists(os.path.join(path, n)) for n in names)


def _detect_dir(path):
    if _has(path, os.path.join("meta", "info.json")):
        return "lerobot"
    if _has(path, "metadata.yaml"):
        return "rosbag2"
    entries = os.listdir(path)
    if "dataset_info.json" in entries and any(".tfrecord" in e for e in entries):
        return "rlds"
    if any(e.endswith(".mcap") or e.endswith(".db3") for e in entries):
        return "rosbag2"
    if any(e.startswith("episode_") and e.endswith(".hdf5") for e in entries):
        return "aloha"
    raise DatasetError(
        f"{path}: is a directory that is no known dataset (LeRobot: meta/info.json; rosbag2: "
        "metadata.yaml or *.mcap / *.db3; RLDS: dataset_info.json and *.tfrecord-*; ALOHA: "
        "episode_N.hdf5); give format= to choose a reader")


def _detect_hdf5(path):
    from . import hdf5
    return hdf5.detect(path)


def detect(path):
    """The format name of `path` (a file or directory); DatasetError if unknown."""
    if os.path.isdir(path):
        return _detect_dir(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such file or directory")
    lower = path.lower()
    with builtins.open(path, "rb") as f:
        head = f.read(16)
    if head.startswith(b"\x89MCAP") or lower.endswith(".mcap") or lower.endswith(".db3"):
        return "rosbag2"
    if head.startswith(b"#ROSBAG V2.0") or lower.endswith(".bag"):
        return "rosbag1"
    if head.startswith(b"ULog\x01\x12\x35"):
        return "ulog"
    if head.startswith(b"\x89HDF\r\n\x1a\n"):
        return _detect_hdf5(path)
    if ".tfrecord" in lower:
        return "rlds"
    if head.startswith(b"PAR1"):
        raise DatasetError(f"{path}: a lone Parquet file; open the LeRobot dataset folder "
                           "(the one holding meta/info.json)")
    from . import text
    return text.detect(path)


def open(path, format="auto", **options):
    """Opens a recording or dataset (a file or a directory) lazily: indexes and
    metadata are read now, stream data on first access of a Series' times,
    values or frames.

    format   "auto" (from the path's layout and leading bytes) or one of
             robocache.datasets.FORMATS
    options  reader options, e.g. clock="log" for bags, rate_hz= for RLDS /
             HDF5 demos, order="drop" to drop samples whose time is not after
             the previous one (default "error")
    Errors: FileNotFoundError, DatasetError (a ValueError naming file,
    episode, stream and index), ImportError naming the pip extra a format needs.
    """
    path = os.fspath(path)
    if format == "auto":
        format = detect(path)
    if format not in READERS:
        raise ValueError(f"format must be 'auto' or one of {', '.join(FORMATS)}; got {format!r}")
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such file or directory")
    module = importlib.import_module(f".{READERS[format]}", __package__)
    params = inspect.signature(module.open).parameters
    if not any(p.kind is p.VAR_KEYWORD for p in params.values()):
        unknown = sorted(set(options) - set(params))
        if unknown:
            takes = ", ".join(n for n, p in params.items() if p.kind is p.KEYWORD_ONLY
                              and n != "format")
            raise ValueError(f"{path}: the {format} reader takes no option "
                             f"{', '.join(unknown)} (its options: {takes})")
    return module.open(path, format=format, **options)
