"""Safe output: write to a temporary file beside the target and rename, so a failed or
interrupted run never leaves a truncated file; refuse to overwrite unless forced."""

from __future__ import annotations

import os
import tempfile

from ..errors import OutputError


def check_writable(path: str, force: bool = False) -> None:
    """Fail early, before any computation, if ``path`` cannot be written."""
    if os.path.isdir(path):
        raise OutputError(f"{path}: is a directory")
    if os.path.exists(path) and not force:
        raise OutputError(f"{path}: already exists (pass --force to overwrite)")
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise OutputError(f"{path}: directory {directory} does not exist")
    if not os.access(directory, os.W_OK):
        raise OutputError(f"{path}: directory {directory} is not writable")


def write_atomic(path: str, data: bytes | str, force: bool = False) -> None:
    check_writable(path, force)
    directory = os.path.dirname(os.path.abspath(path))
    payload = data.encode("utf-8") if isinstance(data, str) else data
    try:
        fd, tmp = tempfile.mkstemp(prefix=".coriolis-", suffix=".part", dir=directory)
    except OSError as e:
        raise OutputError(f"{path}: cannot write ({e.strerror})") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError):
            raise OutputError(f"{path}: cannot write ({e.strerror})") from None
        raise
