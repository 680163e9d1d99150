"""Safe output: write to a temporary file beside the target and rename, so a failed or
interrupted run (Ctrl-C, SIGTERM) never leaves a truncated file or a stray temporary one; refuse
to overwrite unless forced, and never replace anything but a regular file.

A symlink is written through: its target is replaced and the link stays. A new file gets the
mode the umask allows (0666 & ~umask), an existing one keeps its mode.
"""

from __future__ import annotations

import os
import stat
import tempfile

from ..errors import OutputError


def _target(path: str) -> str:
    """Where the bytes go: the path itself, or a symlink's final target."""
    return os.path.realpath(path) if os.path.islink(path) else path


def check_writable(path: str, force: bool = False) -> None:
    """Fail early, before any computation, if ``path`` cannot be written."""
    target = _target(path)
    if os.path.isdir(target):
        raise OutputError(f"{path}: is a directory")
    if os.path.lexists(path):
        if not force:
            raise OutputError(f"{path}: already exists", hint="pass --force to overwrite")
        if os.path.exists(target) and not stat.S_ISREG(os.stat(target).st_mode):
            raise OutputError(f"{path}: not a regular file (a device, a FIFO or a socket); choose a file path")
    directory = os.path.dirname(os.path.abspath(target))
    if not os.path.isdir(directory):
        raise OutputError(f"{path}: directory {directory} does not exist")
    if not os.access(directory, os.W_OK):
        raise OutputError(f"{path}: directory {directory} is not writable")


def _mode_for(target: str) -> int:
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def write_atomic(path: str, data: bytes | str, force: bool = False) -> None:
    check_writable(path, force)
    target = _target(path)
    directory = os.path.dirname(os.path.abspath(target))
    payload = data.encode("utf-8") if isinstance(data, str) else data
    try:
        fd, tmp = tempfile.mkstemp(prefix=".coriolis-", suffix=".part", dir=directory)
    except OSError as e:
        raise OutputError(f"{path}: cannot write ({e.strerror})") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
            f.flush()
            os.fchmod(f.fileno(), _mode_for(target))
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException as e:  # also KeyboardInterrupt and the CLI's SIGTERM: never a stray .part
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError):
            raise OutputError(f"{path}: cannot write ({e.strerror})") from None
        raise
