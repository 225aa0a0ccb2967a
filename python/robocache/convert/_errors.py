"""Errors of robocache convert / check and their exit codes (as the C CLI:
1 data or runtime, 2 usage, 3 I/O)."""

from ._spec import SpecError


class ConvertError(ValueError):
    """Data that cannot be converted: no overlap, a source matching no stream,
    a reference stream with fewer than two frames, every episode rejected..."""


class OutputError(OSError):
    """The output cannot be written (exists without --overwrite, not writable)."""


def exit_code(exc):
    """2 for SpecError, 3 for OSError (OutputError included), 1 otherwise."""
    if isinstance(exc, SpecError):
        return 2
    if isinstance(exc, OSError):
        return 3
    return 1
