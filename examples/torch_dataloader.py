"""Training-style loading with robocache: a DataLoader yields ragged episodes
of the EuRoC V1_01_easy flight (IMU at 200 Hz, ground-truth pose at 200 Hz),
collate_ragged pads them, and the main process aligns every batch onto the
camera frame times in ONE robocache.align call after .to(device).

    python examples/torch_dataloader.py [--device cuda] [--batch-size 8]

Prints per batch the aligned tensor shape and the fraction of valid targets
(valid is LeRobot's `_is_pad` inverted).
"""

import argparse
import pathlib

import numpy as np
import torch

import robocache
import robocache.torch as rt

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "sensors"


class EurocEpisodes(torch.utils.data.Dataset):
    """Windows of random length (1 to 4 s) cut from the recording."""

    def __init__(self, seed=0, count=32):
        imu = np.loadtxt(DATA / "euroc_V1_01_easy_imu0.csv", delimiter=",", comments="#")
        self.t_imu = np.loadtxt(DATA / "euroc_V1_01_easy_imu0.csv", delimiter=",",
                                comments="#", usecols=0, dtype=np.int64)
        self.imu = imu[:, 1:].astype(np.float32)
        gt = np.loadtxt(DATA / "euroc_V1_01_easy_groundtruth_200hz.txt", comments="#")
        self.t_gt = np.round(gt[:, 0] * 1e9).astype(np.int64)
        self.pose = gt[:, 1:8].astype(np.float32)  # tx ty tz qx qy qz qw
        self.cam = np.loadtxt(DATA / "euroc_V1_01_easy_cam0_timestamps.txt", dtype=np.int64)
        rng = np.random.default_rng(seed)
        lo, hi = max(self.t_imu[0], self.t_gt[0]), min(self.t_imu[-1], self.t_gt[-1])
        span = rng.uniform(1e9, 4e9, size=count).astype(np.int64)
        start = rng.integers(lo, hi - span)
        self.windows = list(zip(start, start + span))

    def __len__(self):
        return len(self.windows)

    def __getitem__(self, i):
        a, b = self.windows[i]

        def cut(t):
            return slice(np.searchsorted(t, a), np.searchsorted(t, b, side="right"))

        imu, gt, cam = cut(self.t_imu), cut(self.t_gt), cut(self.cam)
        return {"imu": self.imu[imu], "imu_times": self.t_imu[imu],
                "pose": self.pose[gt], "pose_times": self.t_gt[gt],
                "camera_times": self.cam[cam]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    loader = torch.utils.data.DataLoader(EurocEpisodes(), batch_size=args.batch_size,
                                         num_workers=args.workers,
                                         collate_fn=rt.collate_ragged)
    for step, batch in enumerate(loader):
        batch = {k: v.to(args.device, non_blocking=True) for k, v in batch.items()}
        streams = [
            robocache.Stream(batch["imu"], batch["imu_times"], name="imu",
                             lengths=batch["imu_lengths"], max_gap=20_000_000),
            robocache.Stream(batch["pose"][..., :3], batch["pose_times"], name="position",
                             lengths=batch["pose_lengths"]),
            robocache.Stream(batch["pose"][..., 3:], batch["pose_times"], name="orientation",
                             method="slerp", lengths=batch["pose_lengths"]),
        ]
        out, valid = robocache.align(streams, batch["camera_times"],
                                     target_lengths=batch["camera_times_lengths"])
        frames = int(batch["camera_times_lengths"].sum())
        print(f"batch {step}: out {tuple(out.shape)} {out.dtype} on {out.device}, "
              f"{frames} camera frames, valid {valid.all(-1).sum().item() / frames:.1%}")


if __name__ == "__main__":
    main()
