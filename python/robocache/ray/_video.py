"""Video (image) features on Ray.

On the worker, RecordingVideos encodes the image features of one recording's
episodes with robocache.convert's own LeRobotWriter (a LeRobot v3.0 dataset of
that recording alone, in a temporary folder: the same codec settings, frame
picking and image statistics as a serial conversion) and keeps its MP4 files
and, per episode, where its frames are in them.

On the driver, VideoPlacer (a LeRobotWriter) writes the dataset from the
shards and, instead of encoding, places each shard's MP4 files in the output
as videos/<key>/chunk-CCC/file-FFF.mp4 (numbered in shard order, chunk rolled
every CHUNKS_SIZE files), each episode's from_timestamp / to_timestamp
relative to its own file as LeRobot v3.0 reads them.
"""

import json
import os
import shutil
import tempfile

from ..convert._errors import ConvertError
from ..convert._lerobot_writer import CHUNKS_SIZE, VIDEO_PATH, LeRobotWriter


class RecordingVideos:
    """add(conv) per converted episode of one recording (its image series
    still open), then finish() -> (videos, files): videos one dict per added
    episode, {key: {"file", "from_timestamp", "to_timestamp", "stats",
    "shape", "info"}} ("file": a path relative to the files' root), files
    {relative path: MP4 bytes}."""

    def __init__(self, fps):
        self.tmp = tempfile.mkdtemp(prefix="robocache-ray-video-")
        self.writer = LeRobotWriter(self.tmp, fps)

    def add(self, conv):
        self.writer.write(conv)

    def finish(self):
        import pyarrow.parquet as pq
        try:
            self.writer.finish({})
            self.writer = None
            with open(os.path.join(self.tmp, "meta", "info.json")) as fh:
                feats = json.load(fh)["features"]
            rows = pq.read_table(os.path.join(self.tmp, "meta", "episodes", "chunk-000",
                                              "file-000.parquet")).to_pylist()
            keys = [k for k, f in feats.items() if f["dtype"] == "video"]
            videos = [{k: _episode_video(row, k, feats[k]) for k in keys} for row in rows]
            files = {}
            for v in videos:
                for ev in v.values():
                    if ev["file"] not in files:
                        with open(os.path.join(self.tmp, ev["file"]), "rb") as fh:
                            files[ev["file"]] = fh.read()
            return videos, files
        finally:
            self.close()

    def close(self):
        if self.writer is not None:
            self.writer.abort()
            self.writer = None
        shutil.rmtree(self.tmp, ignore_errors=True)


def _episode_video(row, key, feature):
    pre = f"videos/{key}/"
    stats = {k[len(f"stats/{key}/"):]: v for k, v in row.items()
             if k.startswith(f"stats/{key}/")}
    return {"file": VIDEO_PATH.format(video_key=key, chunk_index=row[pre + "chunk_index"],
                                      file_index=row[pre + "file_index"]),
            "from_timestamp": row[pre + "from_timestamp"],
            "to_timestamp": row[pre + "to_timestamp"], "stats": stats,
            "shape": feature["shape"], "info": feature["info"]}


class _Placed:
    """What LeRobotWriter.finish reads of a feature's video: shape, info(),
    `files` (each placed file's output path and bytes)."""

    def __init__(self, shape, info):
        self.shape, self._info, self.files = tuple(shape), info, []

    def info(self):
        return self._info

    def close(self):
        pass

    abort = close  # (nothing open: the files are placed whole)


class VideoPlacer(LeRobotWriter):
    """LeRobotWriter whose video features are the shards' MP4 files, placed
    (hard-linked, else copied) instead of encoded."""

    def __init__(self, root, fps, robot_type=None, **sizes):
        super().__init__(root, fps, robot_type, **sizes)
        self._placed = {}   # shard file -> (chunk, file) in the output
        self._count = {}    # feature -> files placed

    def _write_video(self, name, ep, stats):
        """ep: a shard's StagedPart; its video of `name` is RecordingVideos'
        dict ("file" an absolute path)."""
        v = ep.videos[name]
        placed = self._videos.get(name)
        if placed is not None and placed.shape != tuple(v["shape"]):
            raise ConvertError(f"{ep.where}: {name} frames are {v['shape']}, the first "
                               f"episode's {list(placed.shape)}")
        if placed is None:
            placed = self._videos[name] = _Placed(v["shape"], v["info"])
        at = self._placed.get(v["file"])
        if at is None:
            n = self._count.get(name, 0)
            self._count[name] = n + 1
            at = divmod(n, CHUNKS_SIZE)
            dst = os.path.join(self.root, VIDEO_PATH.format(video_key=name, chunk_index=at[0],
                                                            file_index=at[1]))
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            _link(v["file"], dst)
            self._placed[v["file"]] = at
            placed.files.append({"file": os.path.relpath(dst, self.root),
                                 "bytes": os.path.getsize(dst)})
        stats[name] = v["stats"]
        self._record_path(name, ep, dict(ep.report.get("videos", {}).get(name, {}),
                                         chunk_index=at[0], file_index=at[1]))
        pre = f"videos/{name}/"
        return {pre + "chunk_index": at[0], pre + "file_index": at[1],
                pre + "from_timestamp": v["from_timestamp"],
                pre + "to_timestamp": v["to_timestamp"]}


def _link(src, dst):
    try:
        os.link(src, dst)
    except OSError:
        shutil.copyfile(src, dst)
