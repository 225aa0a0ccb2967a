"""Small LeRobot v3.0 datasets written with plain pyarrow and PyAV, for the LeRobot
reader's tests and benchmark: episodes stored one after another in shared data files
(one row group per episode, as LeRobot's writer does) and, optionally, in one shared
MP4 per data file whose frame k is mid-gray with a 16 x 16 corner block of level
gray_level(k)."""

import json
import os

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq


def gray_level(k):
    """The gray level of the k-th frame of a shared MP4 (distinct for k < 32)."""
    return (16 + 7 * k) % 256


def frame_number(image):
    """The k whose gray_level is nearest the mean of a decoded frame's corner block."""
    levels = np.array([gray_level(k) for k in range(32)], dtype=np.float64)
    return int(np.argmin(np.abs(levels - float(image[:16, :16].mean()))))


def encode_gray_video(path, count, fps, *, size=(64, 48), gop=5):
    """An MP4 (MPEG-4 Part 2) of `count` frames at `fps` (frame k: gray 128 with the
    corner block at gray_level(k)), a keyframe every `gop` frames."""
    import av
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with av.open(path, "w") as out:
        stream = out.add_stream("mpeg4", rate=fps)
        stream.width, stream.height = size
        stream.pix_fmt = "yuv420p"
        stream.codec_context.gop_size = gop
        stream.codec_context.qmax = 2
        stream.options = {"sc_threshold": "1000000000"}  # keyframes only every gop frames
        for k in range(count):
            image = np.full((size[1], size[0], 3), 128, dtype=np.uint8)
            image[:16, :16] = gray_level(k)
            frame = av.VideoFrame.from_ndarray(image, format="rgb24")
            frame.pts = k
            out.mux(stream.encode(frame))
        out.mux(stream.encode(None))


def _info(fps, dim, video, total_episodes, total_frames):
    vector = {"dtype": "float32", "shape": [dim], "names": [f"j{i}" for i in range(dim)]}
    features = {"observation.state": vector, "action": dict(vector)}
    if video:
        features["observation.images.cam"] = {
            "dtype": "video", "shape": [48, 64, 3], "names": ["height", "width", "channels"],
            "info": {"video.fps": fps, "video.codec": "mpeg4"}}
    for name, dtype in (("timestamp", "float32"), ("frame_index", "int64"),
                        ("episode_index", "int64"), ("index", "int64"), ("task_index", "int64")):
        features[name] = {"dtype": dtype, "shape": [1], "names": None}
    return {"codebase_version": "v3.0", "robot_type": "test_arm", "fps": fps,
            "total_episodes": total_episodes, "total_frames": total_frames, "total_tasks": 1,
            "chunks_size": 1000,
            "data_path": "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet",
            "video_path": "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4",
            "features": features}


def write_v30(root, lengths, *, fps=30, dim=4, per_file=None, video=False, seed=0,
              group_per_episode=True):
    """Writes a LeRobot v3.0 dataset of len(lengths) episodes under `root`
    (per_file episodes per data file, default all in one; one row group per
    episode, or with group_per_episode=False row groups of 7 rows that straddle
    episodes) and returns
    {episode_index: {"timestamp": float32 [n], "observation.state": float32 [n, dim],
    "action": float32 [n, dim], "file_frame0": first frame of the episode in its MP4}}."""
    rng = np.random.default_rng(seed)
    per_file = per_file or len(lengths)
    episodes_meta, truth, index = [], {}, 0
    for f0 in range(0, len(lengths), per_file):
        file_index = f0 // per_file
        data_path = os.path.join(root, "data", "chunk-000", f"file-{file_index:03d}.parquet")
        os.makedirs(os.path.dirname(data_path), exist_ok=True)
        tables, frame0 = [], 0
        for e in range(f0, min(f0 + per_file, len(lengths))):
            n = lengths[e]
            ts = (np.arange(n) / fps).astype(np.float32)
            state = rng.standard_normal((n, dim)).astype(np.float32)
            action = rng.standard_normal((n, dim)).astype(np.float32)
            table = pa.table({
                "observation.state": pa.FixedSizeListArray.from_arrays(state.reshape(-1), dim),
                "action": pa.FixedSizeListArray.from_arrays(action.reshape(-1), dim),
                "timestamp": ts, "frame_index": np.arange(n, dtype=np.int64),
                "episode_index": np.full(n, e, dtype=np.int64),
                "index": np.arange(index, index + n, dtype=np.int64),
                "task_index": np.zeros(n, dtype=np.int64)})
            tables.append(table)
            truth[e] = {"timestamp": ts, "observation.state": state, "action": action,
                        "file_frame0": frame0}
            meta = {"episode_index": e, "tasks": ["move the block"], "length": n,
                    "data/chunk_index": 0, "data/file_index": file_index,
                    "dataset_from_index": index, "dataset_to_index": index + n}
            if video:
                key = "videos/observation.images.cam/"
                meta.update({key + "chunk_index": 0, key + "file_index": file_index,
                             key + "from_timestamp": frame0 / fps,
                             key + "to_timestamp": (frame0 + n) / fps})
            episodes_meta.append(meta)
            index += n
            frame0 += n
        with pq.ParquetWriter(data_path, tables[0].schema) as writer:
            if group_per_episode:
                for table in tables:
                    writer.write_table(table)
            else:
                writer.write_table(pa.concat_tables(tables), row_group_size=7)
        if video:
            encode_gray_video(os.path.join(root, "videos", "observation.images.cam", "chunk-000",
                                           f"file-{file_index:03d}.mp4"), frame0, fps)
    os.makedirs(os.path.join(root, "meta", "episodes", "chunk-000"), exist_ok=True)
    pq.write_table(pa.Table.from_pylist(episodes_meta),
                   os.path.join(root, "meta", "episodes", "chunk-000", "file-000.parquet"))
    pq.write_table(pa.table({"task_index": [0], "task": ["move the block"]}),
                   os.path.join(root, "meta", "tasks.parquet"))
    with open(os.path.join(root, "meta", "info.json"), "w") as f:
        json.dump(_info(fps, dim, video, len(lengths), index), f, indent=2)
    return truth
