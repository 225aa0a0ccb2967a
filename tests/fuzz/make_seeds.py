"""Writes the seed corpora of the fuzz targets (tests/fuzz/corpus/<name>/)
from small excerpts of the real files in data/, and the HDF5 seeds with the
robocache binary (outputs of `align` and `voxelize` on such excerpts).

    python3 tests/fuzz/make_seeds.py [--robocache build/robocache]

Inputs of fuzz_text start with two option bytes (fuzz_text.c), those of
fuzz_bin with one (fuzz_bin.c); the other targets take the file as is
(fuzz_mcap_records: a chunk's decompressed records).
Rerun after changing a target's input layout; the corpus stays small
(a few hundred bytes to a few KB per seed)."""
import argparse
import shutil
import struct
import subprocess
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SENSORS = ROOT / "data" / "sensors"
ROS2 = ROOT / "data" / "robot" / "ros2"
CLOUDS = ROOT / "data" / "pointclouds"

# fuzz_text option byte 0: format (0 auto, 1 euroc, 2 tum, 3 timestamps, 4 csv)
# + 5 * unit (0 auto, 1 ns, 2 us, 3 ms, 4 s) + 25 * order check + 50 * drop
# non-finite rows; byte 1: columns and time column (0: the defaults).
CHECKED = 25
DROP = 50


def head(path, lines):
    with open(path, "rb") as f:
        return b"".join(f.readline() for _ in range(lines))


def write(name, seed, data):
    folder = HERE / "corpus" / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / seed).write_bytes(data)


def text_seeds():
    imu = head(SENSORS / "euroc_V1_01_easy_imu0.csv", 25)
    gt = head(SENSORS / "euroc_V1_01_easy_groundtruth_200hz.txt", 20)
    cam = head(SENSORS / "euroc_V1_01_easy_cam0_timestamps.txt", 20)
    tum = head(SENSORS / "tum_fr1_xyz_groundtruth.txt", 20)
    assoc = head(SENSORS / "tum_fr1_xyz_rgb_depth_associations.txt", 8)
    # a generic CSV in seconds from 0 (LeRobot style) from the TUM rows
    rows = [line.split() for line in tum.decode().splitlines() if not line.startswith("#")]
    t0 = float(rows[0][0])
    csv = "timestamp,x,y,z\n" + "".join(
        f"{float(r[0]) - t0:.4f},{r[1]},{r[2]},{r[3]}\n" for r in rows)
    csv_nan = csv.replace(rows[3][2], "nan", 1)
    seeds = {
        "euroc_imu": (1 + CHECKED, 0, imu),
        "euroc_imu_auto": (CHECKED, 0, imu),
        "euroc_gt_tum": (CHECKED, 0, gt),
        "cam_timestamps": (3 + CHECKED, 0, cam),
        "tum_groundtruth": (2 + CHECKED, 0, tum),
        "tum_associations": (3, 12, assoc),
        "csv_seconds": (4 + CHECKED, 0, csv.encode()),
        "csv_bom_ms": (4 + 3 * 5, 4, b"\xef\xbb\xbf" + csv.encode()),
        "csv_nonfinite_drop": (4 + CHECKED + DROP, 0, csv_nan.encode()),
    }
    for seed, (o, c, body) in seeds.items():
        write("text", seed, bytes([o, c]) + body)


def kitti_points(n):
    return np.fromfile(CLOUDS / "kitti_000008_reduced.bin", dtype="<f4").reshape(-1, 4)[:n]


def bin_seeds():
    write("bin", "kitti", bytes([0]) + kitti_points(32).tobytes())
    nus = np.fromfile(CLOUDS / "nuscenes_lidar_top_1532402927647951.pcd.bin", dtype="<f4")
    write("bin", "nuscenes", bytes([0x80]) + nus[:32 * 5].tobytes())


def lzf_literals(raw):
    """An LZF stream of literal runs only (valid input of lzf_decompress)."""
    out = bytearray()
    for i in range(0, len(raw), 32):
        chunk = raw[i:i + 32]
        out += bytes([len(chunk) - 1]) + chunk
    return bytes(out)


def pcd_header(fields, sizes, types, counts, width, height, data):
    return (f"# .PCD v0.7 - Point Cloud Data file format\nVERSION 0.7\nFIELDS {fields}\n"
            f"SIZE {sizes}\nTYPE {types}\nCOUNT {counts}\nWIDTH {width}\nHEIGHT {height}\n"
            f"VIEWPOINT 0 0 0 1 0 0 0\nPOINTS {width * height}\nDATA {data}\n").encode()


def pcd_seeds():
    bunny = (CLOUDS / "bunny.pcd").read_text().splitlines()
    start = bunny.index("DATA ascii") + 1
    body = bunny[start:start + 20]
    header = [line for line in bunny[:start]]
    header = [f"WIDTH {len(body)}" if h.startswith("WIDTH") else
              f"POINTS {len(body)}" if h.startswith("POINTS") else h for h in header]
    write("pcd", "bunny_ascii", ("\n".join(header + body) + "\n").encode())
    pts = kitti_points(24)
    xyzi = ("x y z intensity", "4 4 4 4", "F F F F", "1 1 1 1")
    write("pcd", "kitti_binary", pcd_header(*xyzi, len(pts), 1, "binary") + pts.tobytes())
    soa = pts.T.copy().tobytes()
    block = lzf_literals(soa)
    write("pcd", "kitti_binary_compressed", pcd_header(*xyzi, len(pts), 1, "binary_compressed")
          + struct.pack("<II", len(block), len(soa)) + block)
    organized = pts.copy()
    organized[::5, :3] = np.nan
    write("pcd", "kitti_organized_nan", pcd_header(*xyzi, 6, 4, "binary") + organized.tobytes())
    # typed fields: int8 label, float64 time, int16 normal pair, packed rgb
    rec = np.zeros(8, dtype=[("x", "<f4"), ("y", "<f4"), ("z", "<f4"), ("label", "i1"),
                             ("t", "<f8"), ("n", "<i2", 2), ("rgb", "<u4")])
    for f in "xyz":
        rec[f] = pts[:8, "xyz".index(f)]
    rec["label"], rec["t"], rec["n"][:, 0] = 7, 1.5e9, -3
    rec["rgb"] = 0x102030
    write("pcd", "typed_fields", pcd_header("x y z label t n rgb", "4 4 4 1 8 2 4",
                                            "F F F I F I U", "1 1 1 1 1 2 1", 8, 1, "binary")
          + rec.tobytes())


def ply_seeds():
    pts = kitti_points(16)
    head_text = ("ply\nformat {fmt} 1.0\ncomment from data/pointclouds/kitti_000008_reduced.bin\n"
                 "element vertex 16\nproperty float x\nproperty float y\nproperty float z\n"
                 "property float intensity\nelement face 0\n"
                 "property list uchar int vertex_indices\nend_header\n")
    ascii_body = "".join(" ".join(f"{v:.6g}" for v in p) + "\n" for p in pts)
    write("ply", "kitti_ascii", (head_text.format(fmt="ascii") + ascii_body).encode())
    write("ply", "kitti_binary",
          head_text.format(fmt="binary_little_endian").encode() + pts.tobytes())


def hdf5_seeds(robocache):
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        imu = tmp / "imu.csv"  # the header and the 30 rows at the start of the ground truth
        lines = head(SENSORS / "euroc_V1_01_easy_imu0.csv", 240).splitlines(keepends=True)
        imu.write_bytes(lines[0] + b"".join(lines[210:]))
        gt = tmp / "gt.txt"
        gt.write_bytes(head(SENSORS / "euroc_V1_01_easy_groundtruth_200hz.txt", 30))
        cloud = tmp / "cloud.bin"
        cloud.write_bytes(kitti_points(64).tobytes())
        runs = {
            "align": ["align", "--stream", f"imu={imu}", "--rate", "100", "-q"],
            "align_two_streams": ["align", "--stream", f"imu={imu}", "--stream",
                                  f"q={gt},columns=qx:qy:qz:qw,method=slerp",
                                  "--target", "imu", "-q"],
            "voxels_downsample": ["voxelize", "--voxel-size", "2,2,2", "--mode", "downsample",
                                  str(cloud)],
            "voxels_hard": ["voxelize", "--voxel-size", "4,4,4", "--range",
                            "0,-20,-3,40,20,1", "--max-points", "4", "--max-voxels", "8",
                            str(cloud)],
        }
        for seed, args in runs.items():
            out = tmp / f"{seed}.h5"
            subprocess.run([str(robocache), *args, "-o", str(out)], check=True,
                           capture_output=True)
            write("hdf5", seed, out.read_bytes())


def mcap_chunk_records(path, messages):
    """The records of the first chunk of an MCAP file, decompressed, up to and
    with its message record number `messages` (the input of fuzz_mcap_records)."""
    import zstandard
    from mcap.reader import make_reader
    with open(path, "rb") as f:
        chunk = make_reader(f).get_summary().chunk_indexes[0]
        f.seek(chunk.chunk_start_offset)
        body = f.read(chunk.chunk_length)
    at = 1 + 8 + 8 + 8 + 8 + 4 + 4 + len(chunk.compression) + 8
    raw = body[at:at + chunk.compressed_size]
    if chunk.compression == "zstd":
        raw = zstandard.ZstdDecompressor().decompress(raw, max_output_size=chunk.uncompressed_size)
    end = 0
    while messages:
        messages -= raw[end] == 0x05
        end += 9 + struct.unpack_from("<Q", raw, end + 1)[0]
    return raw[:end]


def mcap_seeds():
    write("mcap_records", "robot_localization_test1",
          mcap_chunk_records(ROS2 / "robot_localization_test1_mcap" /
                             "robot_localization_test1_mcap.mcap", 8))
    write("mcap_records", "evo_nav2_turtlebot",
          mcap_chunk_records(ROS2 / "evo_nav2_turtlebot.mcap", 8))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robocache", default=str(ROOT / "build" / "robocache"))
    args = parser.parse_args()
    for name in ("text", "bin", "pcd", "ply", "hdf5", "mcap_records"):  # the corpora of the reader targets
        shutil.rmtree(HERE / "corpus" / name, ignore_errors=True)
    text_seeds()
    bin_seeds()
    pcd_seeds()
    ply_seeds()
    mcap_seeds()
    hdf5_seeds(args.robocache)


if __name__ == "__main__":
    main()
