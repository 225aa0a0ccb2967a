"""Decoders of the image keys' frames: WindowLoader(decoder=, decode_device=).

    "pyav"        the reader's own decoder, Series.frames (PyAV for video files), on
                  the host
    "torchcodec"  torchcodec's VideoDecoder on the frames of video files (LeRobot
                  MP4s), on the host (decode_device="cpu") or by NVDEC on the loader's
                  GPU (decode_device="cuda"); the optional extra robocache[torchcodec]

Both decode the same frames: the reader chooses them (LeRobot's rule:
from_timestamp + timestamp, the nearest frame within tolerance_s; Series.video_frames),
torchcodec is asked for the frames played at those frames' own PTS
(pts * time_base in seconds, computed as torchcodec computes it), and the PTS it
returns are checked against them.
"""

import collections
import threading

import numpy as np
import torch

from ..datasets._deps import require
from ..datasets._series import DatasetError

DECODERS = ("pyav", "torchcodec")
DECODE_DEVICES = ("cpu", "cuda")
OPEN_FILES = 16  # torchcodec decoders kept open, least recently used closed first


def make_decoder(decoder, decode_device, device):
    """The frame source for WindowLoader's options; ValueError for a bad
    combination, ImportError naming robocache[torchcodec] when it is missing."""
    if decoder not in DECODERS:
        raise ValueError(f"decoder must be one of {', '.join(map(repr, DECODERS))}, "
                         f"got {decoder!r}")
    if decode_device not in DECODE_DEVICES:
        raise ValueError(f"decode_device must be one of {', '.join(map(repr, DECODE_DEVICES))}"
                         f", got {decode_device!r}")
    if decode_device == "cuda" and decoder != "torchcodec":
        raise ValueError(f"decode_device='cuda' needs decoder='torchcodec' (NVDEC); "
                         f"decoder={decoder!r} decodes on the host")
    if decode_device == "cuda" and device.type != "cuda":
        raise ValueError(f"decode_device='cuda' decodes on the loader's GPU, but device is "
                         f"{device}")
    if decoder == "pyav":
        return ReaderFrames()
    return TorchCodecFrames(device if decode_device == "cuda" else torch.device("cpu"))


class ReaderFrames:
    """Series.frames: the reader's decoder, frames on the host."""

    name = "pyav"
    device = torch.device("cpu")

    def check(self, key, series):
        """Nothing to check: every image stream decodes through its reader."""

    def frames(self, series, wanted):
        """uint8 [n, H, W, C] (any dtype and shape; ImagePlan checks them)."""
        return torch.from_numpy(np.ascontiguousarray(series.frames(wanted)))


class TorchCodecFrames:
    """torchcodec.decoders.VideoDecoder, one per video file, kept open across
    batches (at most OPEN_FILES), frames [n, H, W, C] on `device`."""

    name = "torchcodec"

    def __init__(self, device):
        purpose = "decode video frames with decoder='torchcodec'"
        self._decoders = require("torchcodec.decoders", extra="torchcodec", purpose=purpose)
        self.device = device
        self._open = collections.OrderedDict()
        self._guard = threading.Lock()

    def check(self, key, series):
        if not series.has_video_file:
            raise ValueError(f"key {key!r}: decoder='torchcodec' decodes video files; stream "
                             f"{series.name!r} is not a video file's frames (use "
                             "decoder='pyav')")

    def _decoder(self, path):
        with self._guard:
            decoder = self._open.pop(path, None)
            if decoder is None:
                try:
                    decoder = self._decoders.VideoDecoder(
                        path, device=str(self.device), dimension_order="NHWC",
                        seek_mode="exact")
                except (RuntimeError, ValueError) as e:
                    raise DatasetError(f"{path}: torchcodec cannot open the video on "
                                       f"{self.device}: {e}") from e
            self._open[path] = decoder
            while len(self._open) > OPEN_FILES:
                self._open.popitem(last=False)
            return decoder

    def frames(self, series, wanted):
        video, pos = series.video_frames(wanted)
        seconds = video.times_s[pos]
        try:
            batch = self._decoder(video.path).get_frames_played_at(seconds=seconds.tolist())
        except (RuntimeError, ValueError) as e:
            raise DatasetError(f"{video.path}: torchcodec cannot decode the frames at "
                               f"{seconds.min():.6f} .. {seconds.max():.6f} s: {e}") from e
        got = batch.pts_seconds.cpu().numpy()
        bad = np.flatnonzero(np.abs(got - seconds) > 1e-9)
        if bad.size:
            k = int(bad[0])
            raise DatasetError(f"{video.path}: torchcodec gave the frame at PTS {got[k]:.9f} s "
                               f"for frame {int(pos[k])} at PTS {seconds[k]:.9f} s")
        return batch.data
