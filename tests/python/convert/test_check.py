"""robocache check on the real LeRobot fixtures (clean) and on copies corrupted
here in each way it audits: every corruption is caught at its episode and
frame, none is reported on the clean folders. Runs the `robocache` command
(python -m robocache.cli) for exit codes and --json."""

import json
import shutil
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import LEROBOT

V30 = LEROBOT / "so101_record_test_v30_novideo"
VIDEO = LEROBOT / "lingzu_open50_v30_subset"
V21 = LEROBOT / "unitree_g1_inspire_v21_subset"


def run_check(path, *extra):
    p = subprocess.run([sys.executable, "-m", "robocache.cli", "check", str(path), "--json",
                        "--subset", *extra], capture_output=True, text=True)
    return p.returncode, json.loads(p.stdout) if p.stdout else None, p.stderr


@pytest.mark.parametrize("folder", [V30, VIDEO, V21], ids=lambda p: p.name)
def test_fixtures_are_clean(folder):
    rc, out, err = run_check(folder)
    assert rc == 0, (out, err)
    assert out["clean"] and out["problems"] == []


def test_missing_files_reported_without_subset():
    p = subprocess.run([sys.executable, "-m", "robocache.cli", "check", str(V21), "--json"],
                       capture_output=True, text=True)
    assert p.returncode == 1
    msgs = [x["message"] for x in json.loads(p.stdout)["problems"]]
    assert any("episode_000000.parquet is missing" in m for m in msgs)


def copy(src, tmp_path):
    dst = tmp_path / src.name
    shutil.copytree(src, dst)
    return dst


def rewrite(path, **columns):
    t = pq.read_table(path)
    for name, fn in columns.items():
        i = t.column_names.index(name)
        t = t.set_column(i, t.field(i), fn(t.column(name)))
    pq.write_table(t, path)


def data_file(root):
    return next((root / "data").rglob("*.parquet"))


def test_timestamp_off_by_more_than_tolerance(tmp_path):
    root = copy(V30, tmp_path)
    ts = pq.read_table(data_file(root)).column("timestamp").to_numpy().copy()
    ts[40] += 2e-3
    rewrite(data_file(root), timestamp=lambda c: pa.array(ts, pa.float32()))
    rc, out, _ = run_check(root)
    assert rc == 1
    [p] = [p for p in out["problems"] if p["check"] == "timestamp"]
    assert (p["episode"], p["frame"]) == (0, 40)
    assert p["error"] == pytest.approx(2e-3, rel=1e-3)


def test_reset_inside_an_episode(tmp_path):
    root = copy(V30, tmp_path)
    t = pq.read_table(data_file(root))
    ep = t.column("episode_index").to_numpy()
    fi = t.column("frame_index").to_numpy().copy()
    ts = t.column("timestamp").to_numpy().copy()
    rows = np.flatnonzero(ep == 1)
    cut = rows[50]
    fi[cut:rows[-1] + 1] -= fi[cut]
    ts[cut:rows[-1] + 1] -= ts[cut]
    rewrite(data_file(root), frame_index=lambda c: pa.array(fi),
            timestamp=lambda c: pa.array(ts, pa.float32()))
    rc, out, _ = run_check(root)
    assert rc == 1
    mono = [p for p in out["problems"] if p["check"] == "monotonic"]
    assert {(p["episode"], p["frame"]) for p in mono} >= {(1, 50)}


def test_video_span_and_frames(tmp_path):
    root = copy(VIDEO, tmp_path)
    meta = next((root / "meta/episodes").rglob("*.parquet"))
    col = "videos/image/to_timestamp"
    rewrite(meta, **{col: lambda c: pa.array(c.to_numpy() + 0.5)})
    rc, out, _ = run_check(root)
    assert rc == 1
    spans = [p for p in out["problems"] if p["check"] == "video_span"]
    assert {p["episode"] for p in spans} == {3, 4}
    assert all(p["error"] == pytest.approx(0.5 - 1 / 30, abs=1e-6) for p in spans)


def test_video_from_timestamp_shift(tmp_path):
    root = copy(VIDEO, tmp_path)
    meta = next((root / "meta/episodes").rglob("*.parquet"))
    rewrite(meta, **{"videos/image/from_timestamp": lambda c: pa.array(c.to_numpy() + 0.01),
                     "videos/image/to_timestamp": lambda c: pa.array(c.to_numpy() + 0.01)})
    rc, out, _ = run_check(root)
    frames = [p for p in out["problems"] if p["check"] == "video_frames" and p["frame"] is not None]
    assert rc == 1 and frames and all(p["error"] == pytest.approx(0.01, abs=1e-6) for p in frames)


def test_mp4_missing_a_frame(tmp_path):
    import av
    root = copy(VIDEO, tmp_path)
    mp4 = next((root / "videos").rglob("file-003.mp4"))
    src = str(mp4) + ".src"
    shutil.move(mp4, src)
    with av.open(src) as inp, av.open(str(mp4), "w") as out:
        s_in = inp.streams.video[0]
        s_out = out.add_stream_from_template(s_in)
        packets = sorted((p for p in inp.demux(s_in) if p.pts is not None), key=lambda p: p.pts)
        for p in packets[:-1]:        # the last frame dropped
            p.stream = s_out
            out.mux(p)
    rc, out_json, _ = run_check(root)
    assert rc == 1
    [p] = [p for p in out_json["problems"] if p["check"] == "video_frames" and p["frame"] is None]
    assert p["episode"] == 3 and p["error"] == -1


def test_features_against_files(tmp_path):
    root = copy(V30, tmp_path)
    info = json.loads((root / "meta/info.json").read_text())
    info["features"]["observation.extra"] = {"dtype": "float32", "shape": [3], "names": None}
    info["features"]["action"]["shape"] = [7]
    (root / "meta/info.json").write_text(json.dumps(info))
    rc, out, _ = run_check(root)
    assert rc == 1
    msgs = [p["message"] for p in out["problems"] if p["check"] == "features"]
    assert any("'observation.extra'" in m for m in msgs)
    assert any("'action'" in m and "declared shape [7]" in m for m in msgs)


def test_clean_recording_reports_nothing():
    # robot_localization test2: 359 odometry messages repeat their log time
    # (data/README.md); under the header clock the bag is clean.
    path = LEROBOT.parent / "ros1/robot_localization_test2.bag"
    rc, out, _ = run_check(path)
    assert rc == 0, out
