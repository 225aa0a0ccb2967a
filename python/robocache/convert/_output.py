"""Outputs written under a temporary name beside the target and renamed into
place at the end: an interrupted or failed run leaves nothing that looks
complete (a `.NAME.partial-XXXX` entry at most, removed on errors)."""

import os
import shutil
import tempfile

from ._errors import OutputError


def check_target(path, overwrite):
    """OutputError when `path` exists and overwrite is False, or its folder is missing."""
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise OutputError(f"{path}: the folder {parent} does not exist")
    if os.path.lexists(path) and not overwrite:
        raise OutputError(f"{path}: exists; pass --overwrite to replace it")


def temporary(path, is_dir):
    """A fresh temporary directory or file name beside `path`."""
    parent = os.path.dirname(os.path.abspath(path))
    prefix = f".{os.path.basename(path)}.partial-"
    try:
        if is_dir:
            return tempfile.mkdtemp(prefix=prefix, dir=parent)
        fd, tmp = tempfile.mkstemp(prefix=prefix, dir=parent)
        os.close(fd)
        return tmp
    except OSError as e:
        raise OutputError(f"{path}: cannot create a temporary output beside it: {e}") from e


def discard(tmp):
    if os.path.isdir(tmp) and not os.path.islink(tmp):
        shutil.rmtree(tmp, ignore_errors=True)
    elif os.path.lexists(tmp):
        os.unlink(tmp)


def commit(tmp, path):
    """Moves the finished temporary output to `path` (replacing an old one)."""
    old = None
    if os.path.lexists(path):
        old = temporary(path + ".old", True)
        os.rmdir(old)
        os.rename(path, old)
    os.rename(tmp, path)
    if old is not None:
        discard(old)
