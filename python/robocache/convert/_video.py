"""The MP4 files of one video feature (videos/<key>/chunk-CCC/file-FFF.mp4),
written through PyAV, episodes one after another in a file (LeRobot v3.0
from_timestamp / to_timestamp), a new file once the current one holds
`limit_bytes` of packets (LeRobot's video_files_size_in_mb; an episode never
splits across files; the file index rolls into a new chunk every
`chunks_size` files).

An episode is either encoded from RGB frames with LeRobot's default encoding
(lerobot.datasets.video_utils.encode_video_frames: AV1 by libsvtav1,
yuv420p, g=2, crf=30; PTS = frame number in a 1/fps time base) or copied as
the source's packets (robocache.convert._video_copy; the source's time base
kept, PTS and DTS moved to the episode's place in the file). Packets of one
file share one codec, size, pixel format, time base and extradata: an
episode whose parameters differ from the current file's starts a new file.
"""

import os
from fractions import Fraction

from ..datasets._deps import require
from ._errors import ConvertError

CODEC = "libsvtav1"
PIX_FMT = "yuv420p"
OPTIONS = {"g": "2", "crf": "30"}
PATH = "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4"


def next_index(chunk, file, chunks_size):
    """(chunk, file) after (chunk, file): LeRobot's update_chunk_file_indices."""
    file += 1
    return (chunk + 1, 0) if file == chunks_size else (chunk, file)


class _File:
    """One open MP4: `key` (what its packets share), `bytes` of packets muxed,
    `end` (the first free PTS), `last_dts`, `info` (codec, pix_fmt, size)."""

    def __init__(self, av, path, rel, chunk, file):
        self.container = av.open(path, mode="w")
        self.rel, self.chunk, self.file = rel, chunk, file
        self.stream = None
        self.key = None
        self.info = None
        self.bytes = 0
        self.end = 0
        self.last_dts = None
        self.episodes = 0

    def mux(self, packets):
        for p in packets:
            if p.dts is not None:
                self.last_dts = p.dts
            self.bytes += p.size
            self.container.mux(p)

    def close(self):
        if self.stream is not None and self.key[0] == "encode":
            self.mux(self.stream.encode(None))
        self.container.close()


class VideoFeature:
    """Writer of one image feature's MP4 files. encode(chunks) or copy(clip)
    per episode, each returning (chunk_index, file_index, from_timestamp,
    to_timestamp); close() at the end; `files` lists each file's path,
    codec, pix_fmt, width, height, bytes and episodes; info() is the info.json
    entry of the first file."""

    def __init__(self, root, key, fps, limit_bytes, chunks_size):
        os.environ.setdefault("SVT_LOG", "1")  # SVT-AV1: errors only on stderr
        self.av = require("av", extra="datasets", purpose="write MP4 video")
        self.root, self.key, self.fps = root, key, fps
        self.limit, self.chunks_size = limit_bytes, chunks_size
        self.shape = None
        self.files = []
        self._file = None
        self._next = (0, 0)

    def _target(self, key, shape, where):
        """The file the next episode goes to (a new one past the size limit or
        for other codec parameters)."""
        if self.shape is None:
            self.shape = shape
        elif shape != self.shape:
            raise ConvertError(f"{where}: feature {self.key!r}: frames of {shape[1]}x{shape[0]} "
                             f"where the first episode's are {self.shape[1]}x{self.shape[0]}")
        f = self._file
        if f is not None and (f.bytes >= self.limit or f.key != key):
            self._close()
            f = None
        if f is None:
            chunk, file = self._next
            self._next = next_index(chunk, file, self.chunks_size)
            rel = PATH.format(video_key=self.key, chunk_index=chunk, file_index=file)
            path = os.path.join(self.root, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            f = self._file = _File(self.av, path, rel, chunk, file)
        f.episodes += 1
        return f

    def encode(self, chunks, where):
        """chunks: iterable of uint8 [n, H, W, 3] RGB frames of one episode."""
        chunks = iter(chunks)
        first = next(chunks)
        h, w = first.shape[1], first.shape[2]
        f = self._target(("encode", h, w), first.shape[1:], where)
        if f.stream is None:
            rate = Fraction(self.fps).limit_denominator()
            s = f.container.add_stream(CODEC, rate=rate)
            s.width, s.height, s.pix_fmt = w, h, PIX_FMT
            s.options = dict(OPTIONS)
            s.time_base = 1 / rate
            f.stream, f.key = s, ("encode", h, w)
            f.info = {"codec": "av1", "pix_fmt": PIX_FMT, "width": w, "height": h}
        start = f.end
        for frames in (first, *chunks):
            for img in frames:
                frame = self.av.VideoFrame.from_ndarray(img, format="rgb24")
                frame.pts = f.end
                if f.end == start:  # each episode starts on a key frame, as LeRobot's files
                    frame.pict_type = self.av.video.frame.PictureType.I
                f.mux(f.stream.encode(frame))
                f.end += 1
        return f.chunk, f.file, start / self.fps, f.end / self.fps

    def copy(self, clip, where):
        """clip: robocache.convert._video_copy.Clip of one episode."""
        prm = clip.params
        f = self._target(("copy",) + prm.key(), (prm.height, prm.width, 3), where)
        with self.av.open(clip.path) as src:
            stream, packets = clip.packets(src)
            if f.stream is None:
                f.stream = f.container.add_stream_from_template(stream, opaque=True)
                f.stream.time_base = stream.time_base
                f.key = ("copy",) + prm.key()
                f.info = {"codec": prm.codec, "pix_fmt": prm.pix_fmt, "width": prm.width,
                          "height": prm.height}
            start = f.end
            ticks = max(round(1 / (self.fps * prm.time_base)), 1)
            for k, p in enumerate(packets):
                if k == 0 and p.dts is not None and f.last_dts is not None \
                        and p.dts + start - clip.first <= f.last_dts:
                    start = f.last_dts + 1 + clip.first - p.dts  # DTS must keep increasing
                shift = start - clip.first
                end = p.pts + shift + (p.duration or ticks)
                p.pts += shift
                if p.dts is not None:
                    p.dts += shift
                p.stream = f.stream
                f.mux((p,))
                f.end = max(f.end, end)
        t0 = float(start * prm.time_base)
        return f.chunk, f.file, t0, t0 + clip.count / self.fps

    def _close(self):
        f, self._file = self._file, None
        f.close()
        self.files.append(dict(f.info, file=f.rel, bytes=f.bytes, episodes=f.episodes))

    def close(self):
        if self._file is not None:
            self._close()

    def abort(self):
        if self._file is not None:
            self._file.container.close()
            self._file = None

    def info(self):
        """The info.json "info" of the feature: the first file's stream."""
        first = self.files[0]
        return {"video.height": first["height"], "video.width": first["width"],
                "video.codec": first["codec"], "video.pix_fmt": first["pix_fmt"],
                "video.is_depth_map": False, "video.fps": self.fps,
                "video.channels": 3, "has_audio": False}
