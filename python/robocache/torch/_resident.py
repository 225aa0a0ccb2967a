"""The low-dimensional streams of a group of episodes in device memory, and
the windows of a batch of samples from them in ONE robocache.align call.

Per batch (B samples, U = the distinct offsets of all keys):
  targets [1, B*U] = sample_time[idx, None] + offsets[None, :]   (int64 ns)
  out [1, B*U, sum D], valid [1, B*U, K] = robocache.align(streams, targets)
then each key takes its offsets' columns and its channels: [B, W, D], and
`_is_pad` = not valid for every stream of the key: [B, W].
No host synchronisation (CUDA: check=False; the data were checked when the
timeline was built), so a step can be captured in a CUDA graph.
"""

import torch

import robocache


class KeyOut:
    """Where key `key` lies in align's output: channels c0:c1, streams
    s0:s1 of valid, offset columns `cols` (int64 [W] on the device)."""

    __slots__ = ("key", "c0", "c1", "s0", "s1", "cols")


class Resident:
    """Episodes [e0, e1) of a Timeline on `device`.

    sample0, sample1  the global sample indices this group holds
    nbytes            device bytes of its streams and sample tables
    """

    def __init__(self, timeline, specs, e0, e1, device, out_dtype):
        self.e0, self.e1 = e0, e1
        self.device = device
        self.out_dtype = out_dtype
        self.check = device.type != "cuda"
        self.sample0 = int(timeline.sample_starts[e0])
        self.sample1 = int(timeline.sample_starts[e1])
        s0, s1 = self.sample0, self.sample1

        def put(a):
            return torch.from_numpy(a).to(device)

        self.sample_time = put(timeline.sample_time[s0:s1])
        self.sample_episode = put(timeline.episode_index[timeline.sample_episode[s0:s1]])
        self.sample_frame = put(timeline.sample_frame[s0:s1])
        self.streams = []
        rows = {}  # rows_key -> (values, times) on the device: a series read by two keys once
        for d in timeline.streams:
            if d.rows_key not in rows:
                cut = d.rows(e0, e1)
                rows[d.rows_key] = put(d.values[cut])[None], put(d.times[cut])[None]
            values, times = rows[d.rows_key]
            spec = d.spec
            max_gap = timeline.max_gap_ns if spec.max_gap_ns is None else \
                min(spec.max_gap_ns, timeline.max_gap_ns)
            self.streams.append(robocache.Stream(
                values, times, name=d.name,
                method=spec.method, extrapolate=spec.extrapolate, fill_value=spec.fill_value,
                max_gap=max_gap, tolerance=spec.tolerance_ns, time_offset=spec.time_offset_ns,
                quat_order=spec.quat_order))
        self.nbytes = sum(v.nbytes + t.nbytes for v, t in rows.values()) + 3 * 8 * (s1 - s0)
        self._layout(timeline, specs)

    def _layout(self, timeline, specs):
        offsets = sorted({o for spec in specs for o in spec.offsets_ns
                          if any(d.spec is spec for d in timeline.streams)})
        column = {o: i for i, o in enumerate(offsets)}
        self.offsets = torch.tensor(offsets, dtype=torch.int64, device=self.device)
        self.keys = []
        c = s = 0
        for spec in specs:
            mine = [d for d in timeline.streams if d.spec is spec]
            if not mine:
                continue
            k = KeyOut()
            k.key = spec.key
            k.c0, k.s0 = c, s
            c += sum(d.values.shape[1] for d in mine)
            s += len(mine)
            k.c1, k.s1 = c, s
            k.cols = torch.tensor([column[o] for o in spec.offsets_ns], dtype=torch.int64,
                                  device=self.device)
            self.keys.append(k)

    def gather(self, idx):
        """Windows of the samples `idx` (int64 [B] on the device, global
        indices within [sample0, sample1)): {key: [B, W, D] out_dtype,
        f"{key}_is_pad": [B, W] bool, "episode_index", "frame_index",
        "sample_index": [B] int64}."""
        local = idx - self.sample0 if self.sample0 else idx
        batch = {}
        if self.streams:
            self._windows(local, batch)
        batch["episode_index"] = self.sample_episode[local]
        batch["frame_index"] = self.sample_frame[local]
        batch["sample_index"] = idx
        return batch

    def _windows(self, local, batch):
        B, U = local.shape[0], self.offsets.shape[0]
        targets = (self.sample_time[local][:, None] + self.offsets[None, :]).reshape(1, B * U)
        out, valid = robocache.align(self.streams, targets, out_dtype=self.out_dtype,
                                     check=self.check)
        out = out.view(B, U, -1)
        valid = valid.view(B, U, -1)
        for k in self.keys:
            batch[k.key] = out[:, k.cols, k.c0:k.c1]
            batch[f"{k.key}_is_pad"] = valid[:, k.cols, k.s0:k.s1].all(-1).logical_not()
