"""CPU benchmark of voxel-grid downsampling: robocache (`robocache voxelize
--mode downsample --repeat N`, PCL VoxelGrid semantics, which times the
library call alone) against Open3D's `PointCloud.voxel_down_sample` and PCL's
`pcl::VoxelGrid<pcl::PointXYZ>` (bench/pcl_voxelgrid.cpp, built here with g++
and pkg-config pcl_filters), all measured in this run on the same clouds and
leaf sizes.

    python3 bench/bench_voxel_downsample.py [--bin build/robocache] [--threads 2]
                                            [--repeat 31] [--out bench/results]

Inputs: data/pointclouds/kitti_raw_hdl64_0000000000.bin (122,626 points),
data/pointclouds/cupcl_sample.pcd (119,978 points), and a batch of 4 KITTI
scans (frames 0, 1, 0, 1: one robocache call with offsets; Open3D: one call
per scan), x y z only (every tool averages x, y, z: PCL with PointXYZ),
leaves 0.05, 0.1, 0.2, 1 m. Open3D runs with OMP_NUM_THREADS = --threads;
robocache with 1 thread and with --threads; PCL's VoxelGrid is
single-threaded (one filter() per scan, a warm-up call first). PCL and
robocache use the same voxels: the run stops unless their point counts agree
(except where PCL refuses a leaf too small for the cloud's extent: recorded,
no ratio). Times: median, p10, p90 over --repeat calls (for robocache the
first call is included, there is no separate warm-up).
The load average is recorded: on a machine shared with other work, OpenMP
threads that wait at a barrier spin and slow robocache's multi-threaded runs
down (robocache with 1 thread is the robust figure there).
Open3D's grid starts half a leaf below the minimum, so its voxel count differs
slightly from PCL's. Needs bench/install-bench-deps.sh (libpcl-dev, g++,
open3d-cpu). Writes <out>/voxel_downsample_cpu_<cpu>.json and prints a table.
"""

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

from bench_common import cpu_model, slug

ROOT = Path(__file__).resolve().parents[1]
CLOUDS = {"kitti_raw_hdl64_0000000000.bin": 4, "cupcl_sample.pcd": 0}
BATCH = ["kitti_raw_hdl64_0000000000.bin", "kitti_raw_hdl64_0000000001.bin"] * 2
LEAVES = (0.05, 0.1, 0.2, 1.0)


def load(path, cols):
    if cols:
        return np.fromfile(path, dtype="<f4").reshape(-1, cols)[:, :3].copy()
    lines = path.read_text().splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("DATA")) + 1
    return np.loadtxt(lines[start:], dtype=np.float32)


def robocache_times(binary, xyz_files, leaf, threads, repeat):
    out = subprocess.run([binary, "voxelize", "--mode", "downsample", "--columns", "3",
                          "--voxel-size", f"{leaf},{leaf},{leaf}", "--threads", str(threads),
                          "--repeat", str(repeat), *xyz_files], capture_output=True, text=True,
                         check=True).stdout
    t = re.search(r"median ([\d.]+) ms, p10 ([\d.]+) ms, p90 ([\d.]+) ms", out)
    n = int(re.search(r"non-empty voxels\s+(\d+)", out).group(1))
    return {"median_ms": float(t.group(1)), "p10_ms": float(t.group(2)),
            "p90_ms": float(t.group(3)), "points_out": n}


def open3d_times(o3d, clouds, leaf, repeat):
    pcs = [o3d.geometry.PointCloud(o3d.utility.Vector3dVector(xyz.astype(np.float64)))
           for xyz in clouds]
    for pc in pcs:
        pc.voxel_down_sample(leaf)  # warm-up
    ms = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        n = sum(len(pc.voxel_down_sample(leaf).points) for pc in pcs)
        ms.append((time.perf_counter() - t0) * 1e3)
    q = np.percentile(ms, [10, 90])
    return {"median_ms": statistics.median(ms), "p10_ms": float(q[0]), "p90_ms": float(q[1]),
            "points_out": n}


def build_pcl(tmp):
    """Compiles bench/pcl_voxelgrid.cpp into tmp; returns the binary."""
    if not shutil.which("g++") or subprocess.run(["pkg-config", "--exists",
                                                  "pcl_filters"]).returncode:
        raise SystemExit("g++ and PCL (pkg-config pcl_filters) are needed: "
                         "run bench/install-bench-deps.sh")
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "pcl_filters"],
                           capture_output=True, text=True, check=True).stdout.split()
    binary = os.path.join(tmp, "pcl_voxelgrid")
    subprocess.run(["g++", "-O2", "-std=c++17", str(ROOT / "bench" / "pcl_voxelgrid.cpp"), *flags,
                    "-o", binary], check=True)
    return binary


def pcl_times(binary, xyz_files, leaf, repeat):
    """PCL's times, or its refusal: when dx * dy * dz voxels (from the cloud's
    extent) exceed int32, VoxelGrid warns and returns the input unchanged."""
    run = subprocess.run([binary, str(leaf), str(repeat), *xyz_files], capture_output=True,
                         text=True, check=True)
    res = json.loads(run.stdout)
    if "Integer indices would overflow" in run.stderr:
        res["refused"] = "leaf too small for the cloud's extent: int32 voxel indices would " \
                         "overflow (PCL warns and returns the input unchanged)"
    return res


def tool_version(cmd):
    return subprocess.run(cmd, capture_output=True, text=True).stdout.splitlines()[0].strip()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=str(ROOT / "build" / "robocache"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=31)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"))
    args = ap.parse_args()
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    import open3d as o3d  # after OMP_NUM_THREADS

    rows = []
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        pcl_bin = build_pcl(tmp)
        inputs = {name: [name] for name in CLOUDS}
        inputs["batch of 4 KITTI scans"] = BATCH
        for name, files in inputs.items():
            clouds = [load(ROOT / "data" / "pointclouds" / f, CLOUDS.get(f, 4)) for f in files]
            xyz_files = []
            for i, xyz in enumerate(clouds):
                xyz_files.append(os.path.join(tmp, f"{i}.xyz.bin"))
                xyz.tofile(xyz_files[-1])
            points = sum(len(xyz) for xyz in clouds)
            for leaf in LEAVES:
                rc1 = robocache_times(args.bin, xyz_files, leaf, 1, args.repeat)
                rcn = robocache_times(args.bin, xyz_files, leaf, args.threads, args.repeat)
                o3 = open3d_times(o3d, clouds, leaf, args.repeat)
                pcl = pcl_times(pcl_bin, xyz_files, leaf, args.repeat)
                ok = "refused" not in pcl
                if ok and pcl["points_out"] != rcn["points_out"]:
                    raise SystemExit(f"{name}, leaf {leaf}: PCL gives {pcl['points_out']} points, "
                                     f"robocache {rcn['points_out']}")
                rows.append({"cloud": name, "points": points, "leaf_m": leaf,
                             "robocache_1thread": rc1, "robocache": rcn, "open3d": o3, "pcl": pcl,
                             "pcl_points_equal_robocache": ok,
                             "speedup_median_1thread": o3["median_ms"] / rc1["median_ms"],
                             "speedup_median": o3["median_ms"] / rcn["median_ms"],
                             "speedup_vs_pcl_median_1thread":
                                 pcl["median_ms"] / rc1["median_ms"] if ok else None,
                             "speedup_vs_pcl_median":
                                 pcl["median_ms"] / rcn["median_ms"] if ok else None})
                r = rows[-1]
                vs_pcl = lambda key: f"x{r[key]:.1f} pcl" if ok else "pcl refused"
                print(f"{name[:24]:24s} leaf {leaf:4} m  open3d {o3['median_ms']:7.3f} ms "
                      f"pcl {pcl['median_ms']:7.3f} ms  robocache 1 thread "
                      f"{rc1['median_ms']:6.3f} ms (x{r['speedup_median_1thread']:.1f} open3d, "
                      f"{vs_pcl('speedup_vs_pcl_median_1thread')}), {args.threads} threads "
                      f"{rcn['median_ms']:6.3f} ms (x{r['speedup_median']:.1f} open3d, "
                      f"{vs_pcl('speedup_vs_pcl_median')})  {rcn['points_out']} points")
    cpu = cpu_model()
    result = {"benchmark": "voxel_downsample_cpu", "cpu": cpu, "threads": args.threads,
              "repeat": args.repeat, "open3d_version": o3d.__version__,
              "pcl_version": rows[0]["pcl"]["pcl_version"],
              "gxx_version": tool_version(["g++", "--version"]),
              "load_average_1_5_15min_before": load_before,
              "load_average_1_5_15min": os.getloadavg(), "cores": os.cpu_count(),
              "robocache_version": subprocess.run([args.bin, "--version"], capture_output=True,
                                                  text=True).stdout.strip(),
              "numpy_version": np.__version__, "python": platform.python_version(),
              "command": "python3 bench/bench_voxel_downsample.py " +
                         f"--bin {os.path.relpath(args.bin, ROOT)} --threads {args.threads} "
                         f"--repeat {args.repeat}",
              "rows": rows}
    Path(args.out).mkdir(parents=True, exist_ok=True)
    path = Path(args.out) / f"voxel_downsample_cpu_{slug(cpu)}.json"
    path.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
