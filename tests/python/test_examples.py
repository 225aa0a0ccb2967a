"""The examples run end to end: examples/torch_dataloader.py (DataLoader
workers, collate, one align call per batch) reports every batch;
examples/voxelize_kitti.py gives consistent batched voxelization outputs."""

import pathlib
import re
import subprocess
import sys

from conftest import requires_torch

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "torch_dataloader.py"


@requires_torch
def test_torch_dataloader_example_runs():
    done = subprocess.run([sys.executable, str(EXAMPLE), "--device", "cpu", "--batch-size", "8",
                           "--workers", "2"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("batch ")]
    assert len(lines) == 4  # 32 episodes / 8
    assert all("(8, " in ln and ", 13) torch.float32 on cpu" in ln for ln in lines), lines


VOXEL_EXAMPLE = EXAMPLE.parent / "voxelize_kitti.py"


def _ints(text):
    return [int(x) for x in re.findall(r"\d+", text)]


@requires_torch
def test_voxelize_kitti_example_runs():
    """Its batch of 4 scans (frames 0, 1, 0, 1): hard voxelization rows =
    sum(num_voxels), each scan's counts equal to those of the same frame."""
    done = subprocess.run([sys.executable, str(VOXEL_EXAMPLE), "--device", "cpu", "--scans",
                           "4"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = dict(ln.split(": ", 1) for ln in done.stdout.splitlines())
    hard = re.fullmatch(r"voxels \((\d+), 5, 4\), coords \((\d+), 4\), num_points \((\d+),\), "
                        r"num_voxels \[(.*)\]", lines["hard"])
    per_scan = _ints(hard[4])
    assert len(per_scan) == 4 and per_scan[:2] == per_scan[2:]
    assert int(hard[1]) == int(hard[2]) == int(hard[3]) == sum(per_scan) > 0
    bev = re.fullmatch(r"\(4, 1, 1, 496, 432\) torch.uint8, occupied cells per scan \[(.*)\]",
                       lines["bev occupancy"])
    cells = _ints(bev[1])
    assert cells[:2] == cells[2:] and min(cells) > 0
    down = re.fullmatch(r"\((\d+), 3\) points, per scan \[(.*)\]", lines["downsample 0.2 m"])
    rows = _ints(down[2])
    assert rows[:2] == rows[2:] and int(down[1]) == sum(rows) > 0
