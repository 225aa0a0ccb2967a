"""Chosen frames of a video file, decoded through PyAV (FFmpeg).

    v = VideoFile("episode_000002.mp4")
    v.times_s                          # float64 [F], PTS of every frame in seconds
    pos = v.match(query_s, 1e-4)       # nearest frame per query time, -1 if none within tolerance
    v.decode(pos)                      # uint8 [n, H, W, 3] RGB
    v.split(np.unique(pos), 4)         # up to 4 runs of frames to decode apart

The first video stream of the file is read. Its packets are indexed once (demuxed,
not decoded) on first use: frame PTS and keyframes. `decode` then seeks to the last
keyframe at or before each requested frame and decodes forward to it, so only the
groups of pictures that hold requested frames are decoded, and every frame equals the
one a sequential decode of the file gives (same FFmpeg decoder, RGB through
`VideoFrame.to_ndarray(format="rgb24")`). `split` cuts sorted frames between groups of
pictures, so that each run can be decoded by its own container on its own thread.
"""

import numpy as np

from ._deps import require
from ._series import DatasetError


def _av():
    return require("av", purpose="decode video frames")


class VideoFile:
    """One video file: frame times from its packet index, frames decoded on demand.

    path       str
    pts        int64 [F], presentation time stamps in the stream's time base, sorted
    times_s    float64 [F], pts * time_base in seconds (each the float nearest to the
               exact fraction, as `float(frame.pts * stream.time_base)` in PyAV)
    keyframe   bool [F], the frame's packet is a keyframe (a point to seek to)
    shape      (H, W, 3) of the decoded frames, from the stream's codec parameters
    Errors: DatasetError naming the file when FFmpeg cannot open, demux or decode it.
    """

    def __init__(self, path):
        self.path = str(path)
        self.shape = None
        self._index = None

    def _fail(self, what, err=None):
        detail = f": {err}" if err is not None else ""
        return DatasetError(f"{self.path}: {what}{detail}")

    def _build_index(self):
        av = _av()
        try:
            with av.open(self.path) as container:
                if not container.streams.video:
                    raise self._fail("no video stream")
                stream = container.streams.video[0]
                base = stream.time_base
                self.shape = (stream.codec_context.height, stream.codec_context.width, 3)
                packets = [(p.pts, p.is_keyframe) for p in container.demux(stream)
                           if p.pts is not None]
        except (av.FFmpegError, OSError) as e:
            raise self._fail("cannot read the video", e) from e
        packets.sort()
        pts = np.array([p for p, _ in packets], dtype=np.int64)
        if pts.size and np.any(np.diff(pts) == 0):
            raise self._fail(f"two frames share PTS {int(pts[np.flatnonzero(np.diff(pts) == 0)[0]])}")
        # pts * num / den: the product is exact in float64 below 2**53, the division
        # rounds once, giving the float nearest the fraction.
        times = pts.astype(np.float64) * base.numerator / base.denominator
        self._index = (pts, times, np.array([k for _, k in packets], dtype=bool))

    @property
    def pts(self):
        if self._index is None:
            self._build_index()
        return self._index[0]

    @property
    def times_s(self):
        if self._index is None:
            self._build_index()
        return self._index[1]

    @property
    def keyframe(self):
        if self._index is None:
            self._build_index()
        return self._index[2]

    def __len__(self):
        return int(self.pts.shape[0])

    def match(self, query_s, tolerance_s):
        """Position of the frame nearest each query time (seconds, float64 [n]):
        int64 [n], -1 where the nearest frame is `tolerance_s` or more away
        (LeRobot's rule: |frame time - query| < tolerance_s, ties to the earlier frame)."""
        t = self.times_s
        q = np.asarray(query_s, dtype=np.float64).reshape(-1)
        if t.size == 0:
            return np.full(q.shape, -1, dtype=np.int64)
        right = np.clip(np.searchsorted(t, q, side="left"), 0, t.size - 1)
        left = np.clip(right - 1, 0, t.size - 1)
        pick = np.where(np.abs(t[left] - q) <= np.abs(t[right] - q), left, right)
        return np.where(np.abs(t[pick] - q) < tolerance_s, pick, -1).astype(np.int64)

    def _gop_starts(self, positions):
        """The keyframe to start from for each frame position: the last one at or before it."""
        keys = np.flatnonzero(self.keyframe)
        if not keys.size:
            return np.zeros_like(positions)
        return keys[np.clip(np.searchsorted(keys, positions, side="right") - 1, 0, None)]

    def split(self, positions, parts):
        """Sorted distinct frame positions (int64 [n]) cut into at most `parts` runs, each
        to be decoded apart (decode(run)): cuts fall only between groups of pictures, so no
        frame is decoded by two runs, and the runs hold about equal numbers of frames to
        decode (from each group's keyframe to the last position wanted in it). A list of
        min(parts, groups of pictures holding positions) non-empty int64 arrays whose
        concatenation is `positions`."""
        positions = np.asarray(positions, dtype=np.int64).reshape(-1)
        gop, first = np.unique(self._gop_starts(positions), return_index=True)
        k = min(int(parts), gop.size)
        if k <= 1:
            return [positions]
        last = positions[np.append(first[1:], positions.size) - 1]
        cost = np.cumsum(last - gop + 1)
        # groups of pictures in the first j runs: up to the one where the cost reaches j / k,
        # at least one more than in j - 1 runs and leaving one for each later run
        ends, end = [], 0
        for j in range(1, k):
            reach = int(np.searchsorted(cost, cost[-1] * j / k, side="left")) + 1
            end = min(max(reach, end + 1), gop.size - k + j)
            ends.append(end)
        return np.split(positions, first[ends])

    def decode(self, positions, containers=None):
        """Frames at `positions` (ints into pts, any order, repeats allowed):
        uint8 [n, H, W, 3] RGB. Only the needed groups of pictures are decoded, in one
        pass over one container: opened for this call, or, with `containers` (an object
        whose use(path, open) is a context manager lending an open container of `path`,
        calling open() when it has none), lent for this call."""
        positions = np.asarray(positions, dtype=np.int64).reshape(-1)
        pts = self.pts
        if positions.size and (positions.min() < 0 or positions.max() >= pts.size):
            raise IndexError(f"{self.path}: frame position out of range for {pts.size} frames")
        wanted = np.unique(positions)
        if not wanted.size:
            return np.empty((0,) + self.shape, dtype=np.uint8)
        start = self._gop_starts(wanted)
        stack = np.stack(self._decode_sorted(pts[wanted], pts[start], containers))
        return stack[np.searchsorted(wanted, positions)]

    def _decode_sorted(self, wanted_pts, start_pts, containers):
        av = _av()

        def open_container():
            return av.open(self.path)

        try:
            lent = open_container() if containers is None else \
                containers.use(self.path, open_container)
            with lent as container:
                return self._read(container, wanted_pts, start_pts)
        except av.FFmpegError as e:
            raise self._fail("cannot decode the video", e) from e

    def _read(self, container, wanted_pts, start_pts):
        """The frames at wanted_pts (sorted), each decoded forward from its start_pts
        keyframe; the first one after a seek (the container may have been used before)."""
        out = []
        stream = container.streams.video[0]
        last = None
        frames = iter(())
        for target, start in zip(wanted_pts.tolist(), start_pts.tolist()):
            if last is None or start > last or target <= last:
                container.seek(start, stream=stream, backward=True, any_frame=False)
                frames = container.decode(stream)
            for frame in frames:
                if frame.pts is None:
                    raise self._fail("a decoded frame has no PTS")
                last = frame.pts
                if last >= target:
                    break
            else:
                raise self._fail(f"the decoder ended before the frame at PTS {target}")
            if last != target:
                raise self._fail(f"the decoder gave PTS {last} where the index has "
                                 f"a frame at PTS {target}")
            out.append(frame.to_ndarray(format="rgb24"))
        return out
