"""Inputs given as URLs (s3://bucket/key, gs://..., hdfs://..., file://...),
read through pyarrow.fs: pyarrow.fs.FileSystem.from_uri resolves a URL, with
its query options (s3://bucket/key?endpoint_override=host:9000&scheme=http)
and credentials as pyarrow takes them (environment, config files, instance
roles). A URL names one recording, a file or a folder, as a path here would;
one whose last component holds a glob (`*`, `[...]`) names the entries of its
folder that match. The driver expands and lists the URLs (shard keys), a
worker copies its recording into a local temporary folder and converts it
from there."""

import contextlib
import fnmatch
import os
import posixpath
import shutil
import tempfile
from urllib.parse import quote, unquote, urlsplit

from ..convert._convert import is_url

GLOB_CHARS = "*["  # ("?" starts a URL's query)


@contextlib.contextmanager
def _naming(url):
    """pyarrow's errors about `url` with the URL in front: ValueError when
    pyarrow.fs opens no file system for it (scheme, query), OSError (its
    text: credentials, network) otherwise."""
    import pyarrow as pa
    try:
        yield
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise ValueError(f"{url}: pyarrow.fs does not open this URL: {exc}") from None
    except OSError as exc:
        raise OSError(f"{url}: {exc}") from exc


def _resolve(url):
    """(pyarrow FileSystem, path in it, its FileInfo) of a URL."""
    import pyarrow.fs as pafs
    with _naming(url):
        fs, path = pafs.FileSystem.from_uri(url)
        return fs, path, fs.get_file_info(path)


def _not_found(url):
    return FileNotFoundError(f"{url}: no such file or directory")


def expand(url):
    """The recordings a URL names, as URLs: itself (FileNotFoundError naming
    it when nothing is there) or, when its last component holds a glob, the
    entries of its folder that match (fnmatch, case-sensitive), in sorted
    order (FileNotFoundError when none does)."""
    import pyarrow.fs as pafs
    parts = urlsplit(url)
    head, _, pattern = parts.path.rpartition("/")
    if not any(c in pattern for c in GLOB_CHARS):
        if _resolve(url)[2].type == pafs.FileType.NotFound:
            raise _not_found(url)
        return [url]
    folder_url = parts._replace(path=head or "/").geturl()
    fs, folder, _ = _resolve(folder_url)
    with _naming(folder_url):
        entries = fs.get_file_info(pafs.FileSelector(folder, allow_not_found=True))
    names = sorted(n for n in (posixpath.basename(e.path) for e in entries)
                   if fnmatch.fnmatchcase(n, unquote(pattern)))
    if not names:
        raise FileNotFoundError(f"{url}: no file or folder matches")
    return [parts._replace(path=f"{head}/{quote(n)}").geturl() for n in names]


def files(url):
    """[(name relative to the URL: "." for a file, size in bytes, mtime in ns
    or None)] of every file the URL names, sorted by name; FileNotFoundError
    naming it when nothing is there."""
    import pyarrow.fs as pafs
    fs, path, info = _resolve(url)
    if info.type == pafs.FileType.NotFound:
        raise _not_found(url)
    if info.type != pafs.FileType.Directory:
        return [(".", info.size, info.mtime_ns)]
    with _naming(url):
        infos = fs.get_file_info(pafs.FileSelector(path, recursive=True))
    return sorted((posixpath.relpath(i.path, path), i.size, i.mtime_ns)
                  for i in infos if i.type == pafs.FileType.File)


def copy(url, folder):
    """Copies the recording `url` names (a file, or a folder's tree) into the
    local `folder`, under its base name; returns its path there."""
    import pyarrow.fs as pafs
    fs, path, info = _resolve(url)
    if info.type == pafs.FileType.NotFound:
        raise _not_found(url)
    local = os.path.join(folder, posixpath.basename(path.rstrip("/")))
    if info.type == pafs.FileType.Directory:
        os.makedirs(local)  # (copy_files makes the folders below it)
    with _naming(url):
        pafs.copy_files(path, local, source_filesystem=fs,
                        destination_filesystem=pafs.LocalFileSystem())
    return local


@contextlib.contextmanager
def local_copy(path):
    """A context giving the local path to read an input from: `path` itself,
    or for a URL its copy (copy()) in a temporary folder, removed on exit.
    An error raised inside names the URL where it named the copy."""
    if not is_url(path):
        yield path
        return
    folder = tempfile.mkdtemp(prefix="robocache-input-")
    local = None
    try:
        local = copy(path, folder)
        yield local
    except Exception as exc:
        if local is not None:
            exc.args = tuple(a.replace(local, path) if isinstance(a, str) else a
                             for a in exc.args)
        raise
    finally:
        shutil.rmtree(folder, ignore_errors=True)
