"""MP4 writer of one video feature through PyAV, with LeRobot's default
encoding (lerobot.datasets.video_utils.encode_video_frames): AV1 by libsvtav1,
yuv420p, g=2, crf=30; PTS = frame number in a 1/fps time base, episodes one
after another in the same file (LeRobot v3.0 from_timestamp/to_timestamp)."""

import os
from fractions import Fraction

from ..datasets._deps import require

CODEC = "libsvtav1"
PIX_FMT = "yuv420p"
OPTIONS = {"g": "2", "crf": "30"}


class VideoWriter:
    def __init__(self, path, fps):
        os.environ.setdefault("SVT_LOG", "1")  # SVT-AV1: errors only on stderr
        self.av = require("av", extra="datasets", purpose="encode MP4 video")
        self.path = path
        self.fps = fps
        self.frames = 0
        self.shape = None
        self._container = self.av.open(str(path), mode="w")
        self._stream = None

    def add(self, frames):
        """frames uint8 [n, H, W, 3] RGB."""
        for img in frames:
            if self._stream is None:
                self.shape = tuple(img.shape)
                s = self._container.add_stream(CODEC, rate=Fraction(self.fps).limit_denominator())
                s.width, s.height = img.shape[1], img.shape[0]
                s.pix_fmt = PIX_FMT
                s.options = dict(OPTIONS)
                s.time_base = Fraction(1, 1) / Fraction(self.fps).limit_denominator()
                self._stream = s
            frame = self.av.VideoFrame.from_ndarray(img, format="rgb24")
            frame.pts = self.frames
            self._container.mux(self._stream.encode(frame))
            self.frames += 1

    def close(self):
        if self._stream is not None:
            self._container.mux(self._stream.encode(None))
        self._container.close()

    def info(self):
        h, w, c = self.shape
        return {"video.height": h, "video.width": w, "video.codec": "av1",
                "video.pix_fmt": PIX_FMT, "video.is_depth_map": False, "video.fps": self.fps,
                "video.channels": c, "has_audio": False}
