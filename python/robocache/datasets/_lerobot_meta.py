"""The meta/ folder of a LeRobot dataset: info.json, the episodes and the tasks.

Layouts (info.json's codebase_version):
  v2.0, v2.1  meta/episodes.jsonl + meta/tasks.jsonl; one data Parquet and one MP4 per
              episode and video key, paths from info.json's data_path / video_path
              templates with episode_chunk = episode_index // chunks_size
  v3.0        meta/episodes/chunk-*/file-*.parquet + meta/tasks.parquet; many episodes
              per data file and per MP4, located by the episode's data/chunk_index,
              data/file_index and videos/<key>/chunk_index, file_index,
              from_timestamp, to_timestamp columns
"""

import glob
import json
import os

from ._deps import require
from ._series import DatasetError

LAYOUTS = {"v2.0": 2, "v2.1": 2, "v3.0": 3}


def read_info(root):
    """meta/info.json as a dict with its codebase_version checked; DatasetError
    naming the file and what is missing or unknown."""
    path = os.path.join(root, "meta", "info.json")
    if not os.path.isfile(path):
        raise DatasetError(f"{root}: not a LeRobot dataset folder: meta/info.json is missing")
    try:
        with open(path, encoding="utf-8") as f:
            info = json.load(f)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise DatasetError(f"{path}: cannot read it as JSON: {e}") from e
    if not isinstance(info, dict):
        raise DatasetError(f"{path}: is not a JSON object")
    version = info.get("codebase_version")
    if version not in LAYOUTS:
        raise DatasetError(f"{path}: codebase_version {version!r} is not one this reader knows "
                           f"({', '.join(LAYOUTS)})")
    for key in ("fps", "features", "data_path"):
        if key not in info:
            raise DatasetError(f"{path}: no {key!r}")
    if not isinstance(info["features"], dict):
        raise DatasetError(f"{path}: 'features' is not an object")
    return info


def video_keys(info):
    """Names of the features stored as video, in info.json's order."""
    return [k for k, f in info["features"].items() if isinstance(f, dict) and f.get("dtype") == "video"]


def _template(root, info, key, **fields):
    try:
        return os.path.join(root, info[key].format(**fields))
    except (KeyError, IndexError, ValueError, AttributeError) as e:
        raise DatasetError(f"{os.path.join(root, 'meta', 'info.json')}: cannot fill {key} "
                           f"{info.get(key)!r} with {sorted(fields)}: {e!r}") from e


def _jsonl(path):
    """[(line number, object)] of a JSON-lines file, blank lines skipped."""
    if not os.path.isfile(path):
        raise DatasetError(f"{path}: is missing")
    rows = []
    try:
        with open(path, encoding="utf-8") as f:
            lines = list(f)
    except UnicodeDecodeError as e:
        raise DatasetError(f"{path}: not UTF-8 text: {e}") from e
    for line_no, line in enumerate(lines, 1):
        if line.strip():
            try:
                rows.append((line_no, json.loads(line)))
            except json.JSONDecodeError as e:
                raise DatasetError(f"{path}: line {line_no}: not JSON: {e}") from e
    return rows


def _field(row, key, where):
    try:
        return row[key]
    except (KeyError, TypeError):
        raise DatasetError(f"{where}: no {key!r}") from None


def _typed(row, key, where, kinds, what):
    value = _field(row, key, where)
    if isinstance(value, bool) or not isinstance(value, kinds):
        raise DatasetError(f"{where}: {key} is {value!r}, not {what}")
    return value


def _int(row, key, where):
    return _typed(row, key, where, int, "an integer")


def _seconds(row, key, where):
    return float(_typed(row, key, where, (int, float), "a number"))


def _episodes_v2(root, info):
    path = os.path.join(root, "meta", "episodes.jsonl")
    chunks = _int(info, "chunks_size", os.path.join(root, "meta", "info.json"))
    keys = video_keys(info)
    out = []
    for line_no, row in _jsonl(path):
        where = f"{path}: line {line_no}"
        e = _int(row, "episode_index", where)
        chunk = e // max(chunks, 1)
        out.append({
            "episode_index": e,
            "tasks": list(row.get("tasks") or []),
            "length": _int(row, "length", where),
            "data_file": _template(root, info, "data_path", episode_chunk=chunk, episode_index=e),
            "videos": {k: {"file": _template(root, info, "video_path", episode_chunk=chunk,
                                             video_key=k, episode_index=e),
                           "from_timestamp": 0.0, "to_timestamp": None} for k in keys},
        })
    path = os.path.join(root, "meta", "tasks.jsonl")
    tasks = {_int(r, "task_index", f"{path}: line {n}"): _field(r, "task", f"{path}: line {n}")
             for n, r in _jsonl(path)}
    return out, tasks


def _parquet(path):
    pq = require("pyarrow.parquet", purpose="read LeRobot metadata")
    try:
        return pq.ParquetFile(path, pre_buffer=False)
    except OSError as e:
        raise DatasetError(f"{path}: cannot read the Parquet file: {e}") from e


def _read_columns(path, columns, f=None):
    f = f or _parquet(path)
    try:
        table = f.read(columns=columns)
    except OSError as e:
        raise DatasetError(f"{path}: cannot read the Parquet file: {e}") from e
    missing = [c for c in columns if c not in table.column_names]
    if missing:
        raise DatasetError(f"{path}: no column {missing[0]!r}")
    return table.to_pydict()


def _episodes_v3(root, info):
    files = sorted(glob.glob(os.path.join(root, "meta", "episodes", "chunk-*", "file-*.parquet")))
    if not files:
        raise DatasetError(f"{root}: no episodes metadata (meta/episodes/chunk-*/file-*.parquet)")
    keys = video_keys(info)
    video_columns = [f"videos/{k}/{c}" for k in keys
                     for c in ("chunk_index", "file_index", "from_timestamp", "to_timestamp")]
    columns = ["episode_index", "tasks", "length", "data/chunk_index", "data/file_index",
               "dataset_from_index", "dataset_to_index"] + video_columns
    out = []
    for path in files:
        table = _read_columns(path, columns)
        for i in range(len(table["episode_index"])):
            row = {c: table[c][i] for c in columns}
            where = f"{path}: row {i}"
            videos = {}
            for k in keys:
                v = f"videos/{k}/"
                videos[k] = {
                    "file": _template(root, info, "video_path", video_key=k,
                                      chunk_index=_int(row, v + "chunk_index", where),
                                      file_index=_int(row, v + "file_index", where)),
                    "from_timestamp": _seconds(row, v + "from_timestamp", where),
                    "to_timestamp": _seconds(row, v + "to_timestamp", where)}
            out.append({
                "episode_index": _int(row, "episode_index", where),
                "tasks": list(row["tasks"] or []),
                "length": _int(row, "length", where),
                "data_file": _template(root, info, "data_path",
                                       chunk_index=_int(row, "data/chunk_index", where),
                                       file_index=_int(row, "data/file_index", where)),
                "videos": videos,
                "dataset_from_index": _int(row, "dataset_from_index", where),
                "dataset_to_index": _int(row, "dataset_to_index", where),
            })
    return out, _tasks_v3(os.path.join(root, "meta", "tasks.parquet"))


def _tasks_v3(path):
    """{task_index: task} of meta/tasks.parquet, whose task text is a 'task' column or,
    as pandas writes it, the index column."""
    if not os.path.isfile(path):
        raise DatasetError(f"{path}: is missing")
    f = _parquet(path)
    names = f.schema_arrow.names
    text = [n for n in names if n != "task_index"]
    if "task_index" not in names or not text:
        raise DatasetError(f"{path}: needs a task_index column and a task column")
    column = "task" if "task" in text else text[0]
    table = _read_columns(path, ["task_index", column], f)
    return {int(i): t for i, t in zip(table["task_index"], table[column])}


def list_episodes(root, info):
    """(episodes, tasks): the episodes the metadata lists, sorted by episode_index,
    each a dict of episode_index, tasks, length, data_file (path), videos ({key:
    {file, from_timestamp, to_timestamp}}) and for v3.0 dataset_from_index and
    dataset_to_index; tasks: {task_index: text}."""
    read = _episodes_v3 if LAYOUTS[info["codebase_version"]] == 3 else _episodes_v2
    episodes, tasks = read(root, info)
    episodes.sort(key=lambda e: e["episode_index"])
    return episodes, tasks
