"""python -m robocache.datasets PATH [--format F]: describes a recording."""

import argparse
import sys

from . import FORMATS, describe, open


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m robocache.datasets",
                                     description="Episodes and streams of a recording.")
    parser.add_argument("path")
    parser.add_argument("--format", default="auto", choices=("auto",) + FORMATS)
    args = parser.parse_args(argv)
    try:
        print(describe(open(args.path, format=args.format)))
    except (OSError, ValueError, ImportError) as e:
        print(f"robocache: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
