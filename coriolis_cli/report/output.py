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


FIGURE_FORMATS = {".png": "png", ".svg": "svg", ".pdf": "pdf"}


def figure_format(path: str) -> str:
    """The picture format a --plot path asks for by its extension, or OutputError."""
    ext = os.path.splitext(path)[1].lower()
    if ext not in FIGURE_FORMATS:
        raise OutputError(f"--plot {path}: name a .png, .svg or .pdf file (the format follows the extension)")
    return FIGURE_FORMATS[ext]


def check_distinct(*paths) -> None:
    """Two outputs of one run must not be one file: the second would replace the first."""
    seen = {}
    for path in paths:
        if not path:
            continue
        key = os.path.realpath(path)
        if key in seen:
            raise OutputError(f"{path}: given twice (as {seen[key]} and again); name two different files")
        seen[key] = path


def _read_paths(inputs) -> dict:
    """The files (and folders, with everything inside them) that ``inputs`` name, by real path."""
    read = {}
    for path in inputs:
        if path and os.path.exists(path):
            read[os.path.realpath(path)] = path
            if os.path.isdir(path):  # a ROS 2 bag or a folder of recordings: nothing inside it either
                read[os.path.realpath(path) + os.sep] = path
    return read


def _refuse_if_read(path: str, read: dict) -> None:
    key = os.path.realpath(path)
    source = read.get(key) or next((v for k, v in read.items() if k.endswith(os.sep) and key.startswith(k)), None)
    if source is not None:
        raise OutputError(f"{path}: is an input of this run ({source}); write the output elsewhere")


# The files this run reads (the command line notes them: its robot, state, recordings, every path
# an option names), which no output of the run may replace, whichever code writes it: every write
# goes through check_writable. Empty outside a command's run (cli.main clears it).
READ: dict[str, str] = {}


def note_inputs(paths) -> None:
    READ.update(_read_paths(paths))


def check_not_an_input(outputs, inputs) -> None:
    """No output of a run may be one of its inputs (a recording, a robot file), whatever the links
    between them: --force replaces an output, never what the run reads. ``inputs`` join the run's
    (READ), so that every later write of the run is held to them too."""
    note_inputs(inputs)
    for path in outputs:
        if path:
            _refuse_if_read(path, READ)


def _target(path: str) -> str:
    """Where the bytes go: the path itself, or a symlink's final target."""
    return os.path.realpath(path) if os.path.islink(path) else path


def check_writable(path: str, force: bool = False) -> None:
    """Fail early, before any computation, if ``path`` cannot be written (or is one of the run's
    inputs)."""
    if READ:
        _refuse_if_read(path, READ)
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


# the files this run has written, so that a run that then fails removes them (cli.main)
WRITTEN: list[str] = []


def remove_written() -> None:
    """Remove what this run wrote: it failed after writing some of its outputs."""
    while WRITTEN:
        path = WRITTEN.pop()
        try:
            os.unlink(path)
        except OSError:
            pass


def write_atomic(path: str, data: bytes | str, force: bool = False) -> None:
    payload = data.encode("utf-8") if isinstance(data, str) else data
    with atomic_file(path, force) as tmp:
        try:
            with open(tmp, "wb") as f:
                f.write(payload)
        except OSError as e:
            raise OutputError(f"{path}: cannot write ({e.strerror})") from None


class atomic_file:
    """``with atomic_file(path, force) as tmp:`` write the file ``tmp`` (beside the target); on
    leaving without an error it becomes ``path`` (fsynced, the target's mode, exclusive without
    ``force``), on any error or interrupt it is removed. For writers that stream (recordings)."""

    def __init__(self, path: str, force: bool = False):
        check_writable(path, force)
        self.path, self.force = path, force
        self.target = _target(path)
        directory = os.path.dirname(os.path.abspath(self.target))
        try:
            fd, self.tmp = tempfile.mkstemp(prefix=".coriolis-", suffix=".part", dir=directory)
        except OSError as e:
            raise OutputError(f"{path}: cannot write ({e.strerror})") from None
        os.close(fd)

    def __enter__(self) -> str:
        return self.tmp

    def __exit__(self, kind, error, traceback):
        if kind is None:
            try:
                self._commit()
            except OSError as e:
                self._discard()
                raise OutputError(f"{self.path}: cannot write ({e.strerror or e})") from None
            except BaseException:
                self._discard()
                raise
            return False
        self._discard()  # also on KeyboardInterrupt and the CLI's SIGTERM: never a stray .part
        return False

    def _discard(self) -> None:
        try:
            os.unlink(self.tmp)
        except OSError:
            pass

    def _commit(self) -> None:
        path, target, tmp = self.path, self.target, self.tmp
        with open(tmp, "rb+") as f:
            os.fchmod(f.fileno(), _mode_for(target))
            os.fsync(f.fileno())
        if self.force:
            os.replace(tmp, target)
        else:  # exclusive: of two runs writing one name without --force, the second fails
            try:
                os.link(tmp, target)
            except FileExistsError:
                raise OutputError(f"{path}: already exists (written meanwhile by another run)",
                                  hint="pass --force to overwrite") from None
            except OSError:  # a file system without hard links: check and rename, as close as it gets
                if os.path.lexists(target):
                    raise OutputError(f"{path}: already exists", hint="pass --force to overwrite") from None
                os.replace(tmp, target)
            finally:
                if os.path.lexists(tmp):
                    os.unlink(tmp)
        WRITTEN.append(target)
