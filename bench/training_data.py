"""The datasets of bench/bench_training_loop.py: a LeRobot v3.0 fixture's episodes
repeated `repeat` times into one LeRobot v3.0 folder (imported by name from bench/).

Copy r of episode e becomes episode r * E + e (E: the fixture's episodes present in its
data files), its rows frame indices r * F + i (F: their rows); every copy keeps the
episode's video file and from/to timestamps, so a video fixture's MP4 files are shared
by the copies (the folder's videos/ is a link to the fixture's); a fixture without videos/
loses its video features.
"""

import glob
import json
import os
import shutil

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LOWDIM = os.path.join(ROOT, "data", "robot", "lerobot", "so101_record_test_v30_novideo")
IMAGE = os.path.join(ROOT, "data", "robot", "lerobot", "lingzu_open50_v30_subset")


def _mapped(col, old, new):
    """int64 column with each value old[j] replaced by new[j]."""
    return pa.array(np.asarray(new, dtype=np.int64)[np.searchsorted(old, col.to_numpy())])


def build(source, dst, repeat):
    """Writes (once) the repeated folder; returns its info.json dict."""
    stamp = os.path.join(dst, "meta", "info.json")
    if os.path.exists(stamp):
        return json.load(open(stamp))
    shutil.rmtree(dst, ignore_errors=True)
    os.makedirs(os.path.join(dst, "data", "chunk-000"))
    os.makedirs(os.path.join(dst, "meta", "episodes", "chunk-000"))
    data = pa.concat_tables(pq.read_table(f) for f in sorted(
        glob.glob(os.path.join(source, "data", "chunk-*", "*.parquet"))))
    data = data.sort_by("index")
    eps = pq.read_table(os.path.join(source, "meta", "episodes", "chunk-000",
                                     "file-000.parquet"))
    present = np.unique(data["episode_index"].to_numpy())
    eps = eps.filter(pc.is_in(eps["episode_index"], pa.array(present)))
    index = data["index"].to_numpy()
    E, F = present.size, index.size
    first = int(index[0])
    data_copies, eps_copies = [], []
    for r in range(repeat):
        d = data.set_column(data.schema.get_field_index("episode_index"), "episode_index",
                            _mapped(data["episode_index"], present, r * E + np.arange(E)))
        d = d.set_column(d.schema.get_field_index("index"), "index",
                         pa.array(index - first + r * F))
        data_copies.append(d)
        m = eps.set_column(eps.schema.get_field_index("episode_index"), "episode_index",
                           _mapped(eps["episode_index"], present, r * E + np.arange(E)))
        for name in ("dataset_from_index", "dataset_to_index"):
            m = m.set_column(m.schema.get_field_index(name), name,
                             pa.array(m[name].to_numpy() - first + r * F))
        for name in ("data/chunk_index", "data/file_index"):
            m = m.set_column(m.schema.get_field_index(name), name,
                             pa.array(np.zeros(m.num_rows, dtype=np.int64)))
        eps_copies.append(m)
    pq.write_table(pa.concat_tables(data_copies),
                   os.path.join(dst, "data", "chunk-000", "file-000.parquet"))
    pq.write_table(pa.concat_tables(eps_copies),
                   os.path.join(dst, "meta", "episodes", "chunk-000", "file-000.parquet"))
    for name in ("tasks.parquet", "stats.json"):
        shutil.copy(os.path.join(source, "meta", name), os.path.join(dst, "meta", name))
    info = json.load(open(os.path.join(source, "meta", "info.json")))
    if os.path.isdir(os.path.join(source, "videos")):
        os.symlink(os.path.join(source, "videos"), os.path.join(dst, "videos"))
    else:  # a fixture without its videos: LeRobot would look for them (on the Hub)
        info["features"] = {k: f for k, f in info["features"].items()
                            if f.get("dtype") != "video"}
    info.update(total_episodes=E * repeat, total_frames=F * repeat,
                splits={"train": f"0:{E * repeat}"})
    with open(stamp + ".tmp", "w") as f:
        json.dump(info, f, indent=2)
    os.replace(stamp + ".tmp", stamp)
    return info
