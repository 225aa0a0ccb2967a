"""The README's and docs' GPU tables, printed from committed result files, so
that every number quoted there comes from bench/results/*.json.

    python3 bench/gpu_tables.py [--align FILE] [--voxel FILE] [--python FILE]

Prints (markdown): the README's resample / align table, docs/cuda.md's
measured table, the README's voxelization table and docs/voxelize.md's, and
the README's table of public Python calls on CUDA tensors.
"""

import argparse
import json
import os

from bench_common import align_case_name

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")


def _header(columns):
    """A markdown table's header row and separator; columns joined by " | "."""
    print(f"| {columns} |")
    print("|" + "---|" * len(columns.split(" | ")))


def align_tables(path):
    d = json.load(open(path))
    print(f"<!-- {os.path.basename(path)}: copy bandwidth {d['copy_bandwidth_GBps']:.0f} GB/s -->")
    _header("op | shape | robocache | torch eager | torch.compile | × compile | % of floor")
    for r in d["results"]:
        short = "f32" if r.get("dtype", r.get("out_dtype")) == "float32" else "bf16"
        if r["op"] == "resample":
            op, shape = f"resample {short}", f"B{r['B']} S{r['S']} T{r['T']} D{r['D']}"
        else:
            short = "f32" if r["out_dtype"] == "float32" else "bf16"
            op, shape = f"align, {short} out", f"B={r['B']}"
        floor = "—" if r["op"] == "align" and r["B"] == 1 else f"{r['pct_of_floor']:.0f} %"
        print(f"| {op} | {shape} | {r['robocache']['median_us']:.1f} | "
              f"{r['torch_eager']['median_us']:.1f} | {r['torch_compile']['median_us']:.1f} | "
              f"{r['speedup_vs_compile']:.2f}× | {floor} |")
    print()
    # files without the copy_same_bytes timing get no copy columns
    copy = all("copy_same_bytes" in r for r in d["results"])
    print("| case | ours µs | eager µs | compile µs | floor µs | % floor | x eager | x compile "
          "| wall µs |" + (" copy µs | x copy |" if copy else ""))
    print("|---|---|---|---|---|---|---|---|---|" + ("---|---|" if copy else ""))
    for r in d["results"]:
        tail = (f" {r['copy_same_bytes']['median_us']:.1f} | {r['x_copy_same_bytes']:.2f}x |"
                if copy else "")
        print(f"| {align_case_name(r)} | {r['robocache']['median_us']:.1f} | {r['torch_eager']['median_us']:.1f}"
              f" | {r['torch_compile']['median_us']:.1f} | {r['floor_us']:.1f} | "
              f"{r['pct_of_floor']:.0f} % | {r['speedup_vs_eager']:.1f}x | "
              f"{r['speedup_vs_compile']:.2f}x | {r['robocache_eager_wall_us']:.0f} |{tail}")
    print()


VOXEL_CLOUDS = {"uniform 500K": "500K uniform", "KITTI scan": "KITTI scan (122,626)",
                "1 voxel 500K": "500K in one voxel", "8 KITTI scans": "8 KITTI scans (980,980)",
                "cuPCL sample": "cuPCL sample (119,978)", "4 KITTI scans": "4 KITTI scans (490,490)"}
VOXEL_MODES = {"count": "dense count i32, 128³", "occupancy": "dense occupancy u8, 128³",
               "sum": "dense sum, 128³", "mean": "dense mean, 128³", "max": "dense max, 128³"}


def voxel_tables(path):
    d = json.load(open(path))
    readme, docs = [], []
    for c in d["cases"]:
        r = c["robocache"]
        rate = max(c["gpoints_per_s_b2b"], 0.1)
        times = f"{r['median_us']:.1f} | {r['graph_median_us']:.1f} | {r['b2b_median_us']:.1f}"
        if c["op"] == "dense":
            name = f"{c['mode']}, {c['cloud']} → 128³"
            label = VOXEL_MODES[c["mode"]]
        elif c["op"] == "hard":
            packed = ", packed" if c.get("layout") == "packed" else ""
            name = f"hard, SECOND-KITTI preset, {c['cloud']}{packed}"
            label = f"hard, second-kitti (P 5, M 40000){packed}"
        else:
            name = f"downsample {c['leaf']:g} m, {c['cloud']}"
            label = f"downsample {c['leaf']:g} m, x y z"
        readme.append(f"| {name} | {times} ({rate:.1f} G points/s) | {c['torch']['median_us']:.1f} |")
        docs.append(f"| {label} | {VOXEL_CLOUDS[c['cloud']]} | {times} ({rate:.1f}) | "
                    f"{c['torch']['median_us']:.1f} | {c['speedup']:.1f} / "
                    f"{c['speedup_graph']:.1f} / {c['speedup_b2b']:.1f} |")
    print(f"<!-- {os.path.basename(path)} -->")
    _header("case | robocache eager | graph | back to back | PyTorch")
    print("\n".join(readme))
    print()
    print("| case | points | eager | graph | back to back (G points/s) | PyTorch "
          "| speed-up eager / graph / b2b |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(docs))


def python_table(path):
    d = json.load(open(path))
    print(f"<!-- {os.path.basename(path)} -->")
    _header("call | input | public call | `_C` call | Python layer")
    for c in d["cases"]:
        p, q = c["public"], c["c_call"]
        print(f"| {c['case']} | {c['input']} | {p['median_us']:.1f} ({p['p10_us']:.0f}-"
              f"{p['p90_us']:.0f}) | {q['median_us']:.1f} | {c['overhead_us']:.1f} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--align",
                    default=os.path.join(RESULTS, "gpu_align_nvidia-h100-80gb-hbm3.json"))
    ap.add_argument("--voxel",
                    default=os.path.join(RESULTS, "gpu_voxel_nvidia-h100-80gb-hbm3.json"))
    ap.add_argument("--python", default=os.path.join(RESULTS,
                                                     "gpu_python_nvidia-h100-80gb-hbm3.json"))
    a = ap.parse_args()
    align_tables(a.align)
    voxel_tables(a.voxel)
    print()
    python_table(a.python)


if __name__ == "__main__":
    main()
