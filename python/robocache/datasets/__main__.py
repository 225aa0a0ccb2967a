"""python -m robocache.datasets PATH... [--rate-hz HZ] [--clock header|log]:
what `robocache info` prints for the recordings robocache.datasets reads."""

import sys

from ..cli import cmd_info

if __name__ == "__main__":
    sys.exit(cmd_info(sys.argv[1:]))
