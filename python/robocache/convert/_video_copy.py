"""Passthrough of LeRobot video: the compressed packets of a source episode,
copied instead of decoded and re-encoded, when the output frames of the
episode are exactly the source episode's frames.

The rule (each condition failing names itself as the reason to re-encode):
  source   the image series is a LeRobot video stream (robocache.datasets.lerobot:
           meta "video_file" and "from_timestamp")
  method   the feature's method is nearest (the image default)
  frames   output frame k is source frame k for every k, and every frame of the
           series is used (no frame dropped at an edge, none repeated: the grid is
           the camera's own, e.g. --reference on it)
  grid     the source frames, found by LeRobot's rule (the frame whose PTS is nearest
           from_timestamp + timestamp, within 1e-4 s), are consecutive in the MP4 and
           their PTS, relative to the first, are k / fps within 1e-4 s: the output's
           own timestamp = frame_index / fps finds them after the copy
  keyframe the first packet is a keyframe and the one after the last is a keyframe
           or the end of the file (the packets decode on their own; LeRobot encodes
           every episode apart, so its episodes satisfy this)
"""

from fractions import Fraction

import numpy as np

from ..datasets._deps import require
from ..datasets.video import VideoFile
from ._errors import ConvertError

TOLERANCE_S = 1e-4  # LeRobotDataset's default tolerance_s


def _av():
    return require("av", extra="datasets", purpose="copy video packets")


class Clip:
    """The packets of one source episode to copy: `path` (source MP4), `first`
    and `last` (PTS of its first and last frame, in the source time base),
    `count` (frames), `params` (Params of the source stream)."""

    __slots__ = ("path", "first", "last", "count", "params")

    def __init__(self, path, first, last, count, params):
        self.path, self.first, self.last = path, first, last
        self.count, self.params = count, params

    def packets(self, container):
        """(stream, iterator of the clip's packets in decode order) of an open
        container of `path`; each packet keeps its source PTS, DTS and time base."""
        stream = container.streams.video[0]
        container.seek(self.first, stream=stream, backward=True, any_frame=False)

        def gen():
            n = 0
            for p in container.demux(stream):
                if p.pts is None or not self.first <= p.pts <= self.last:
                    continue
                yield p
                n += 1
                if n == self.count:
                    return
            raise ConvertError(f"{self.path}: the file ended after {n} of the {self.count} "
                             f"packets between PTS {self.first} and {self.last}")
        return stream, gen()


class Params:
    """Codec parameters of a video stream that packets of one output file must
    share: codec (FFmpeg's canonical name, e.g. "h264", "av1"), pix_fmt, width,
    height, time_base (Fraction), extradata (bytes)."""

    __slots__ = ("codec", "pix_fmt", "width", "height", "time_base", "extradata")

    def __init__(self, stream):
        cc = stream.codec_context
        self.codec = cc.codec.canonical_name
        self.pix_fmt = cc.pix_fmt
        self.width, self.height = cc.width, cc.height
        self.time_base = Fraction(stream.time_base)
        self.extradata = bytes(cc.extradata or b"")

    def key(self):
        return (self.codec, self.pix_fmt, self.width, self.height, self.time_base,
                self.extradata)


class Sources:
    """The source MP4s seen so far (packet index and codec parameters, read
    once per file: v3.0 episodes share files)."""

    def __init__(self):
        self._videos = {}
        self._params = {}

    def _video(self, path):
        if path not in self._videos:
            self._videos[path] = VideoFile(path)
            with _av().open(path) as c:
                self._params[path] = Params(c.streams.video[0])
        return self._videos[path]

    def clip(self, feature, idx, fps):
        """(Clip, None) when the episode's frames of this image feature can be
        copied, else (None, reason). feature: robocache.convert._episode.Feature;
        idx int64 [T]: the source frame of each output frame; fps: the output's."""
        series = feature.series[0]
        path, start = series.meta.get("video_file"), series.meta.get("from_timestamp")
        if path is None or start is None:
            return None, "source: not a LeRobot video stream"
        if feature.options[0].get("method") != "nearest":
            return None, f"method: {feature.options[0].get('method')}, not nearest"
        n = len(series)
        if idx.shape[0] != n or np.any(idx != np.arange(n)):
            return None, (f"frames: output frames are not source frames 0..{n - 1} in order "
                          f"({idx.shape[0]} frames, first {int(idx[0]) if idx.size else None})")
        video = self._video(path)
        pos = video.match(start + series.times / 1e9, TOLERANCE_S)
        if np.any(pos < 0) or np.any(np.diff(pos) != 1):
            return None, "grid: the source frames are not consecutive in its MP4"
        pts = video.pts[pos]
        base = self._params[path].time_base
        rel = (pts - pts[0]).astype(np.float64) * base.numerator / base.denominator
        worst = float(np.abs(rel - np.arange(n) / fps).max())
        if worst >= TOLERANCE_S:
            return None, (f"grid: source frame PTS are up to {worst * 1e3:.3f} ms off "
                          f"frame_index / {fps}")
        nxt = int(pos[-1]) + 1
        if not video.keyframe[pos[0]] or (nxt < len(video) and not video.keyframe[nxt]):
            return None, "keyframe: the episode's packets do not start and end on keyframes"
        return Clip(path, int(pts[0]), int(pts[-1]), n, self._params[path]), None
