"""robomimic HDF5 writer (robomimic's documented dataset layout):

  data                 attrs total (frames of all demos), env_args (JSON: env_name,
                       type, env_kwargs.control_freq = fps), robocache (JSON: how converted)
  data/demo_N          attrs num_samples; N counts from 0 in output order
  data/demo_N/obs/<k>  float32 [T, D] (features observation.<k>, or the feature's
                       own name); image features uint8 [T, H, W, 3]
  data/demo_N/actions  float32 [T, D] (the feature named `action`)
  data/demo_N/rewards  float64 [T] zeros, dones uint8 [T] (1 on the last step):
                       the inputs hold no reward; robomimic's loader reads both keys
  mask/<name>          demo names (bytes) of each --mask split, in demo order
"""

import json

import numpy as np

from ..datasets._deps import require
from ._spec import SpecError

FRAMES_PER_DECODE = 64
OBS_PREFIX = "observation."


def obs_key(feature):
    return feature[len(OBS_PREFIX):] if feature.startswith(OBS_PREFIX) else feature


class RobomimicWriter:
    def __init__(self, path, fps, masks=None):
        h5py = require("h5py", purpose="write robomimic HDF5")
        self.fps = fps
        self.masks = dict(masks or {})
        self.file = h5py.File(path, "w")
        self.data = self.file.create_group("data")
        self.demos = []
        self.total = 0

    def write(self, ep):
        names = [f.name for f in ep.features]
        if "action" not in names:
            raise SpecError("--to robomimic needs a feature named 'action' (its `actions`); "
                            f"features: {', '.join(names)}")
        name = f"demo_{len(self.demos)}"
        g = self.data.create_group(name)
        obs = g.create_group("obs")
        T = ep.length
        for f in ep.features:
            if f.kind == "image":
                self._images(obs, obs_key(f.name), f, ep)
                continue
            x = ep.values[:, f.cols].astype(np.float32)
            if f.name == "action":
                g.create_dataset("actions", data=x)
            else:
                obs.create_dataset(obs_key(f.name), data=x)
        for col, v in ep.valid_columns.items():
            obs.create_dataset(obs_key(col), data=v.astype(np.uint8))
        g.create_dataset("rewards", data=np.zeros(T))
        dones = np.zeros(T, np.uint8)
        dones[-1] = 1
        g.create_dataset("dones", data=dones)
        g.attrs["num_samples"] = T
        g.attrs["robocache_source"] = ep.where
        self.demos.append(name)
        self.total += T

    def _images(self, obs, key, f, ep):
        series = f.series[0]
        idx = np.rint(ep.values[:, f.cols.start]).astype(np.int64)
        dset = None
        for w0 in range(0, len(idx), FRAMES_PER_DECODE):
            frames = series.frames(idx[w0:w0 + FRAMES_PER_DECODE])
            if dset is None:
                dset = obs.create_dataset(key, shape=(len(idx),) + frames.shape[1:],
                                          dtype=np.uint8, chunks=(1,) + frames.shape[1:])
            dset[w0:w0 + len(frames)] = frames

    def finish(self, meta):
        self.data.attrs["total"] = self.total
        self.data.attrs["env_args"] = json.dumps(
            {"env_name": "robocache_convert", "type": None,
             "env_kwargs": {"control_freq": self.fps}})
        self.data.attrs["robocache"] = json.dumps(meta)
        n = len(self.demos)
        start = 0
        if self.masks:
            mask = self.file.create_group("mask")
            for split, frac in self.masks.items():
                count = int(round(frac * n))
                mask.create_dataset(split, data=np.array(self.demos[start:start + count], "S"))
                start += count
        self.file.close()

    def abort(self):
        self.file.close()
