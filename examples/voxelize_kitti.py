"""3D-detector inputs from LiDAR scans with robocache: a batch of KITTI HDL-64
scans (x, y, z, intensity) voxelized in ONE robocache.voxelize_hard call with
SECOND's settings, in the layout mmdet3d's data preprocessor builds (each
scan's voxels together, coords (batch, z, y, x)); PointPillars' BEV
occupancy grid of each scan; and a 0.2 m voxel-downsampled copy (PCL
VoxelGrid voxels) of each scan.

    python examples/voxelize_kitti.py [--device cuda] [--scans 4]

The scans are the two raw KITTI frames in data/pointclouds, alternating.
"""

import argparse
import pathlib

import torch

import robocache

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "pointclouds"
FRAMES = [DATA / f"kitti_raw_hdl64_000000000{i}.bin" for i in (0, 1)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--scans", type=int, default=4)
    a = ap.parse_args()
    frames = [robocache.read_point_cloud(f) for f in FRAMES]  # [N,4]: x y z intensity
    scans = [torch.from_numpy(frames[i % 2]) for i in range(a.scans)]
    # a batch is the scans' points concatenated, with offsets [B+1]
    points = torch.cat(scans).to(a.device)
    offsets = torch.tensor([0] + [len(s) for s in scans]).cumsum(0).to(a.device)
    print(f"batch: {a.scans} scans, {len(points)} points on {a.device}")

    voxels, coords, num_points, num_voxels, stats = robocache.voxelize_hard(
        points, **robocache.voxel_preset("second-kitti"), offsets=offsets, return_stats=True)
    print(f"hard: voxels {tuple(voxels.shape)}, coords {tuple(coords.shape)}, "
          f"num_points {tuple(num_points.shape)}, num_voxels {num_voxels.tolist()}")
    print(f"hard stats: {stats['points_in_range']} points in range, "
          f"{stats['points_dropped_max_points']} past max_points_per_voxel, "
          f"{stats['voxels_dropped_max_voxels']} voxels past max_voxels")

    pp = robocache.voxel_preset("pointpillars-kitti")
    bev = robocache.voxelize(points, pp["voxel_size"], pp["point_cloud_range"],
                             mode="occupancy", offsets=offsets)
    print(f"bev occupancy: {tuple(bev.shape)} {bev.dtype}, occupied cells per scan "
          f"{bev.flatten(1).sum(1, dtype=torch.int64).tolist()}")

    xyz = points[:, :3]
    down, down_offsets = robocache.voxel_downsample(xyz, 0.2, offsets=offsets)
    print(f"downsample 0.2 m: {tuple(down.shape)} points, per scan "
          f"{down_offsets.diff().tolist()}")


if __name__ == "__main__":
    main()
