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

import contextlib
import itertools
import threading

import numpy as np
import torch

from ..datasets._deps import require
from ..datasets._series import DatasetError

DECODERS = ("pyav", "torchcodec")
DECODE_DEVICES = ("cpu", "cuda")
OPEN_FILES = 16  # idle open containers / decoders kept: at least this, 4 per decode thread


def make_decoder(decoder, decode_device, device, threads=1):
    """The frame source for WindowLoader's options (`threads`: its decode_threads);
    ValueError for a bad combination, ImportError naming robocache[torchcodec] when it is
    missing."""
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
    handles = Handles(max(OPEN_FILES, 4 * max(1, int(threads))))
    if decoder == "pyav":
        return ReaderFrames(handles)
    return TorchCodecFrames(device if decode_device == "cuda" else torch.device("cpu"), handles)


class Handles:
    """Open handles of video files (PyAV containers, torchcodec decoders), each used by
    one thread at a time: use(path, opener) lends an idle handle of `path`, or opener()'s new
    one, and takes it back afterwards (dropping it, closed, when the block raised). At most
    `limit` idle handles are kept, the least recently used closed first."""

    def __init__(self, limit):
        self.limit = limit
        self._idle = []  # (path, handle), least recently used first
        self._guard = threading.Lock()

    @contextlib.contextmanager
    def use(self, path, opener):
        with self._guard:
            k = next((k for k in range(len(self._idle) - 1, -1, -1)
                      if self._idle[k][0] == path), None)
            handle = None if k is None else self._idle.pop(k)[1]
        if handle is None:
            handle = opener()
        try:
            yield handle
        except BaseException:
            _close(handle)
            raise
        with self._guard:
            self._idle.append((path, handle))
            drop, self._idle = self._idle[:-self.limit], self._idle[-self.limit:]
        for _, h in drop:
            _close(h)


def _close(handle):
    close = getattr(handle, "close", None)  # PyAV containers; torchcodec's decoders are freed
    if close is not None:
        close()


class ReaderFrames:
    """Series.frames: the reader's decoder, frames on the host; the frames of video files
    decoded by PyAV (VideoFile.decode) from containers kept open in `handles`."""

    name = "pyav"
    device = torch.device("cpu")

    def __init__(self, handles):
        self._handles = handles

    def fresh(self):
        """The same decoder with no open container (for a forked process)."""
        return ReaderFrames(Handles(self._handles.limit))

    def check(self, key, series):
        """Nothing to check: every image stream decodes through its reader."""

    def frames(self, series, wanted):
        """Frames `wanted` of a series that is not a video file's: uint8 [n, H, W, C]
        (any dtype and shape; ImagePlan checks them)."""
        return torch.from_numpy(np.ascontiguousarray(series.frames(wanted)))

    def video(self, video, positions):
        """Frames at `positions` of a VideoFile: uint8 [n, H, W, 3]."""
        return torch.from_numpy(video.decode(positions, self._handles))


class TorchCodecFrames:
    """torchcodec.decoders.VideoDecoder on video files, frames [n, H, W, C] on `device`
    (the host, or a CUDA device: NVDEC). A file's frames may be decoded in runs on several
    threads, each by its own decoder (NVDEC: each thread with decoders of its own). Decoders
    are kept open across batches in `handles`."""

    name = "torchcodec"

    def __init__(self, device, handles):
        purpose = "decode video frames with decoder='torchcodec'"
        self._decoders = require("torchcodec.decoders", extra="torchcodec", purpose=purpose)
        self.device = device
        self._handles = handles
        self._threads, self._tokens = threading.local(), itertools.count()

    def _thread_token(self):
        """A number of the calling thread's own, never reused by a later thread: torchcodec's
        NVDEC decoders fail when used from a thread other than the one that opened them."""
        if not hasattr(self._threads, "token"):
            self._threads.token = next(self._tokens)
        return self._threads.token

    def fresh(self):
        """The same decoder with no open torchcodec decoder (for a forked process)."""
        return TorchCodecFrames(self.device, Handles(self._handles.limit))

    def check(self, key, series):
        if not series.has_video_file:
            raise ValueError(f"key {key!r}: decoder='torchcodec' decodes video files; stream "
                             f"{series.name!r} is not a video file's frames (use "
                             "decoder='pyav')")

    def _open(self, path):
        try:
            return self._decoders.VideoDecoder(path, device=str(self.device),
                                               dimension_order="NHWC", seek_mode="exact")
        except (RuntimeError, ValueError) as e:
            raise DatasetError(f"{path}: torchcodec cannot open the video on "
                               f"{self.device}: {e}") from e

    def video(self, video, positions):
        """Frames at `positions` of a VideoFile, the frames played at their PTS."""
        seconds = video.times_s[positions]
        key = video.path if self.device.type == "cpu" else (self._thread_token(), video.path)
        with self._handles.use(key, lambda: self._open(video.path)) as decoder:
            try:
                batch = decoder.get_frames_played_at(seconds=seconds.tolist())
            except (RuntimeError, ValueError) as e:
                raise DatasetError(f"{video.path}: torchcodec cannot decode the frames at "
                                   f"{seconds.min():.6f} .. {seconds.max():.6f} s: {e}") from e
        got = batch.pts_seconds.cpu().numpy()
        bad = np.flatnonzero(np.abs(got - seconds) > 1e-9)
        if bad.size:
            k = int(bad[0])
            raise DatasetError(f"{video.path}: torchcodec gave the frame at PTS {got[k]:.9f} s "
                               f"for frame {int(positions[k])} at PTS {seconds[k]:.9f} s")
        return batch.data
