"""The `robocache` command: one entry point for every subcommand.

convert and check (and info of the dataset formats robocache.datasets reads)
run here in Python; align, voxelize and info of text, HDF5 and point-cloud
files run the C tool, found through $ROBOCACHE_BIN, then robocache/bin/robocache
next to this package, then the first `robocache` executable on PATH that is
the C tool (an ELF binary, not this script). Exit codes as the C tool:
0 ok, 1 data or runtime error, 2 usage error, 3 I/O error.
"""

import argparse
import json
import os
import shutil
import sys

COMMANDS = (("convert", "recordings -> LeRobot v3.0 or robomimic HDF5 on one frame grid"),
            ("check", "audit a LeRobot dataset's (or a recording's) timestamps"),
            ("info", "streams, rate, jitter, span and gaps of recordings and files"),
            ("align", "resample text recordings onto one time grid -> HDF5 (C tool)"),
            ("voxelize", "point clouds -> voxel grids, hard voxels, downsampled clouds (C tool)"))
C_COMMANDS = ("align", "voxelize")
DATASET_FORMATS = ("rosbag2", "rosbag1", "lerobot", "rlds", "robomimic", "aloha", "ulog")


def _usage():
    lines = ["Usage: robocache [--help] [--version] COMMAND [ARGS...]", "", "Commands:"]
    lines += [f"  {name:10s} {text}" for name, text in COMMANDS]
    lines += ["", "'robocache COMMAND --help' describes a command. Exit codes: 0 ok, 1 data or",
              "runtime error, 2 usage error, 3 I/O error."]
    return "\n".join(lines) + "\n"


def _is_elf(path):
    try:
        with open(path, "rb") as fh:
            return fh.read(4) == b"\x7fELF"
    except OSError:
        return False


def c_tool():
    """Path of the C `robocache` binary, or None."""
    env = os.environ.get("ROBOCACHE_BIN")
    if env:
        return env if os.access(env, os.X_OK) else None
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "robocache")
    if os.access(here, os.X_OK):
        return here
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        cand = os.path.join(folder, "robocache")
        if os.access(cand, os.X_OK) and _is_elf(cand):
            return cand
    return None


def run_c(argv):
    tool = c_tool()
    if tool is None:
        sys.stderr.write(
            f"robocache {argv[0]}: needs the C tool `robocache`, which was not found "
            "($ROBOCACHE_BIN, robocache/bin/robocache, PATH). Build it from the source tree "
            "with `make` (it is build/robocache) and set ROBOCACHE_BIN=$PWD/build/robocache "
            "or put it on PATH.\n")
        return 1
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(tool, [tool] + list(argv))
    return 1  # not reached


def _convert_parser():
    p = argparse.ArgumentParser(prog="robocache convert",
                                description="Convert recordings to a training dataset whose "
                                "streams share one frame grid (docs/convert.md).")
    p.add_argument("inputs", nargs="+", metavar="INPUT",
                   help="recordings robocache.datasets reads; each episode of each becomes "
                   "one or more output episodes. With --ray also URLs pyarrow.fs opens "
                   "(s3://bucket/run.mcap, s3://bucket/bags/*.bag; docs/ray.md)")
    p.add_argument("-o", "--output", required=True, help="output folder (lerobot) or .hdf5 file")
    p.add_argument("--to", required=True, choices=("lerobot", "robomimic"))
    p.add_argument("-s", "--stream", action="append", required=True, metavar="SPEC",
                   help="NAME=SOURCE[,SOURCE...][,KEY=VALUE...]; keys method, extrapolate, "
                   "fill, max-gap, tolerance, offset, quat-order (as robocache align)")
    p.add_argument("-r", "--fps", type=float, help="frames per second of the grid")
    p.add_argument("-t", "--reference", metavar="STREAM",
                   help="use the frame times of this stream (a camera) as the grid")
    p.add_argument("--span", default="overlap", choices=("overlap", "union"))
    p.add_argument("--invalid", default="trim", choices=("trim", "keep", "reject"),
                   help="frames where a stream has no valid sample: trim them at episode "
                   "edges (default), keep them with a <feature>.valid column, reject the episode")
    p.add_argument("--split-gap", metavar="DURATION",
                   help="new episode where no stream has a sample for longer (e.g. 2s)")
    p.add_argument("--split-by", metavar="STREAM",
                   help="new episode where this stream's value changes")
    p.add_argument("--task", help="task text of every episode (default: the input's, or "
                   "'convert')")
    p.add_argument("--robot-type")
    p.add_argument("--mask", action="append", default=[], metavar="NAME=FRACTION",
                   help="robomimic: a mask/NAME split of that fraction of the demos, in order")
    p.add_argument("--order", default="error", choices=("error", "drop"),
                   help="input times that repeat or go back: an error, or drop those samples")
    p.add_argument("--data-file-size-mb", type=float, metavar="MB", help="lerobot: a data "
                   "file takes no more episodes past this many MiB (default 100)")
    p.add_argument("--video-file-size-mb", type=float, metavar="MB", help="lerobot: a video "
                   "file takes no more episodes past this many MiB (default 500; not with --ray)")
    p.add_argument("--overwrite", action="store_true", help="replace an existing output")
    p.add_argument("--ray", action="store_true", help="run on Ray (lerobot only; pip install "
                   "'robocache[ray]'): a shard per recording, merged (docs/ray.md)")
    p.add_argument("--ray-address", metavar="ADDRESS", help="a Ray cluster (ray://head:10001); "
                   "implies --ray")
    p.add_argument("--num-workers", type=int, metavar="N", help="--ray: converting actors "
                   "(default: the cluster's CPUs)")
    p.add_argument("--num-gpus-per-worker", type=float, default=0, metavar="G",
                   help="--ray: GPUs per actor (e.g. 0.25); 0 runs the CPU backend")
    p.add_argument("--recordings-per-task", type=int, metavar="K",
                   help="--ray: recordings converted per Ray task (default: recordings // "
                        "(50 x workers), at least 1); when > 1 the last 2 x workers go one "
                        "per task")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress and no summary")
    return p


def _masks(items):
    out = {}
    for item in items:
        name, eq, frac = item.partition("=")
        try:
            value = float(frac)
        except ValueError:
            value = -1.0
        if not eq or not name or not 0 < value <= 1:
            raise SystemExit(_usage_error("convert", f"--mask {item!r}: expected NAME=FRACTION "
                                          "with 0 < FRACTION <= 1"))
        out[name] = value
    return out


def _usage_error(cmd, msg):
    sys.stderr.write(f"robocache {cmd}: {msg}\n")
    return 2


def cmd_convert(argv):
    from .convert import convert, exit_code
    from .convert._spec import duration_ns
    args = _convert_parser().parse_args(argv)
    fps = args.fps
    if fps is not None and args.to == "lerobot":
        if fps != round(fps):
            return _usage_error("convert", f"--fps {fps:g}: LeRobot needs a whole number")
        fps = int(round(fps))
    log = None if args.quiet else (lambda line: sys.stderr.write(line + "\n"))
    try:
        split_gap = None if args.split_gap is None else duration_ns(args.split_gap, "--split-gap")
        common = dict(streams=args.stream, fps=fps, reference=args.reference, span=args.span,
                      invalid=args.invalid, split_gap=split_gap, split_by=args.split_by,
                      task=args.task, robot_type=args.robot_type, overwrite=args.overwrite,
                      order=args.order, log=log)
        sizes = dict(data_files_size_in_mb=args.data_file_size_mb,
                     video_files_size_in_mb=args.video_file_size_mb)
        if args.ray or args.ray_address:
            if args.video_file_size_mb is not None:
                return _usage_error("convert", "--video-file-size-mb is not taken with --ray "
                                    "(its videos are each recording's own MP4 files)")
            if args.to != "lerobot":
                return _usage_error("convert", "--ray writes LeRobot datasets only (--to lerobot)")
            from .ray import convert as ray_convert
            ray_convert(args.inputs, args.output, address=args.ray_address,
                        num_workers=args.num_workers,
                        num_gpus_per_worker=args.num_gpus_per_worker,
                        recordings_per_task=args.recordings_per_task,
                        data_files_size_in_mb=args.data_file_size_mb, **common)
        else:
            convert(args.inputs, args.output, to=args.to, masks=_masks(args.mask),
                    progress=not args.quiet, **common, **sizes)
    except (ValueError, OSError, ImportError) as exc:
        sys.stderr.write(f"robocache convert: {exc}\n")
        return exit_code(exc)
    if log:
        log(f"robocache convert: wrote {args.output} (sync report "
            f"{args.output.rstrip('/')}.sync.json)")
    return 0


def cmd_check(argv):
    from .convert._check import TOLERANCE_S, check
    p = argparse.ArgumentParser(prog="robocache check",
                                description="Audit the timestamps of a LeRobot dataset (v2.1, "
                                "v3.0) without decoding video, or of any recording "
                                "robocache.datasets reads. Exit 0 clean, 1 problems found.")
    p.add_argument("path")
    p.add_argument("--tolerance", type=float, default=TOLERANCE_S, metavar="SECONDS",
                   help=f"LeRobot's tolerance_s (default {TOLERANCE_S})")
    p.add_argument("--subset", action="store_true",
                   help="skip episodes and videos the metadata lists but the folder lacks")
    p.add_argument("--json", action="store_true", help="print the problems as JSON")
    args = p.parse_args(argv)
    if not os.path.exists(args.path):
        sys.stderr.write(f"robocache check: {args.path}: no such file or folder\n")
        return 3
    try:
        problems = check(args.path, args.tolerance, args.subset)
    except (ValueError, ImportError) as exc:
        sys.stderr.write(f"robocache check: {exc}\n")
        return 1
    except OSError as exc:
        sys.stderr.write(f"robocache check: {exc}\n")
        return 3
    if args.json:
        json.dump({"path": args.path, "clean": not problems, "problems": problems},
                  sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        for pr in problems:
            where = f"episode {pr['episode']}" if pr["episode"] is not None else "-"
            if pr["frame"] is not None:
                where += f", frame {pr['frame']}"
            sys.stdout.write(f"{where}: {pr['check']}: {pr['message']}\n")
        sys.stdout.write(f"{args.path}: {'clean' if not problems else f'{len(problems)} problem(s)'}\n")
    return 1 if problems else 0


# options of `info` for the dataset formats, passed to robocache.datasets.open
INFO_OPTIONS = {"--rate-hz": ("rate_hz", float), "--clock": ("clock", str)}


def _info_options(argv):
    """(rd.open keyword arguments, the other arguments) of `info`'s argv."""
    options, rest, argv = {}, [], list(argv)
    while argv:
        a = argv.pop(0)
        name, _, value = a.partition("=")
        if name in INFO_OPTIONS:
            key, kind = INFO_OPTIONS[name]
            if not value:
                value = argv.pop(0) if argv else ""
            try:
                options[key] = kind(value)
            except ValueError:
                raise SystemExit(_usage_error("info", f"{name} {value!r}: expected a {kind.__name__}"))
        else:
            rest.append(a)
    return options, rest


def cmd_info(argv):
    options, argv = _info_options(argv)
    if any(a.startswith("-") for a in argv):
        return run_c(["info"] + list(argv))
    from . import datasets as rd
    rc = 0
    for path in argv:
        try:
            fmt = rd.detect(path)
        except (ValueError, OSError, ImportError):
            fmt = None  # text and point-cloud files: the C tool
        if fmt not in DATASET_FORMATS:
            return run_c(["info"] + list(argv))
        try:
            sys.stdout.write(rd.describe(rd.open(path, format=fmt, order="drop", **options)) + "\n")
        except (ValueError, ImportError) as exc:
            sys.stderr.write(f"robocache info: {exc}\n")
            rc = rc or 1
    if not argv:
        return run_c(["info"])
    return rc


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv:
        sys.stderr.write("robocache: missing COMMAND\n" + _usage())
        return 2
    head = argv[0]
    if head in ("-h", "--help"):
        sys.stdout.write(_usage())
        return 0
    if head in ("-V", "--version"):
        from ._version import __version__
        sys.stdout.write(f"robocache {__version__}\n")
        return 0
    if head in C_COMMANDS:
        return run_c(argv)
    handlers = {"convert": cmd_convert, "check": cmd_check, "info": cmd_info}
    if head not in handlers:
        sys.stderr.write(f"robocache: unknown command '{head}'\n" + _usage())
        return 2
    return handlers[head](argv[1:])


if __name__ == "__main__":
    sys.exit(main())
