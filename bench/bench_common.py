"""Helpers shared by the benchmark drivers in bench/ (imported by name: the
drivers run as `python3 bench/<driver>.py`, which puts bench/ on sys.path)."""
import json
import os
import platform
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cpu_model():
    """The CPU's model name from /proc/cpuinfo (else what `platform` knows),
    recorded in the results and used in their file names."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def slug(name):
    """A device or CPU name as it appears in result file names: lower case,
    runs of other characters as one "-" ("NVIDIA H200" -> "nvidia-h200")."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def align_case_name(r):
    """The name of a result of bench_gpu_align.py (its printed table and
    docs/cuda.md's, via gpu_tables.py)."""
    if r["op"] == "resample":
        return f"resample B{r['B']} S{r['S']} T{r['T']} D{r['D']} {r['dtype']}"
    return f"align B{r['B']} f32 in, {r['out_dtype']} out"


def find_binary(explicit, name="bench_resample_cpu"):
    """The C harness bench/<name>.c as built: `explicit` (--bin), else
    $ROBOCACHE_BENCH_BIN, else build/bench/<name>; exits when none runs."""
    candidates = [explicit, os.environ.get("ROBOCACHE_BENCH_BIN"),
                  os.path.join(ROOT, "build", "bench", name)]
    for c in candidates:
        if c and os.access(c, os.X_OK):
            return c
    sys.exit(f"{name} not found: run `make build` (or pass --bin)")


def commit():
    """The commit the results belong to: $ROBOCACHE_COMMIT when set (a copy of
    the tree run elsewhere, whose .git may lag), else `git rev-parse HEAD`
    with "+dirty" for uncommitted changes to tracked files; None outside git."""
    if os.environ.get("ROBOCACHE_COMMIT"):
        return os.environ["ROBOCACHE_COMMIT"]
    try:
        head = subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain",
                                "--untracked-files=no"], capture_output=True,
                               text=True).stdout.strip()
        return head + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return None


def write_json(path, result):
    """Writes a benchmark's result file: parent folders made, indented JSON, a
    newline at the end; prints where it went."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    print(f"wrote {path}")
