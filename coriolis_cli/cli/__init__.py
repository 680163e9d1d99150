"""Command-line interface: thin click commands, one module per command, that parse, call the
layers below, and render their records. This package maps the library's typed errors to one-line
messages and exit codes."""

from __future__ import annotations

import sys
import warnings

import click

from ..errors import CoriolisError, Note, RecordingNote
from . import bench, codegen, compute, convert, excite, identify, info, observe, simulate, skew, verify  # noqa: F401 - each registers its command
from .common import cli, err, styled

__all__ = ["cli", "main"]


def _show_warning(message, category, filename, lineno, file=None, line=None):
    """Warnings and notes are said after the output of a run that succeeds (or whose check failed,
    exit 1), once each; a run refused for its input says one line, the error."""
    said = ("note:", "cyan") if issubclass(category, Note) else ("warning:", "yellow")
    text = str(message)
    if issubclass(category, RecordingNote):  # it names the library's parameter (window=): say the option
        from ..recordings.align import for_command_line

        text = for_command_line(text)
    if (said, text) not in SAID:
        SAID.append((said, text))


SAID: list = []  # this run's warnings and notes, in order: ((label, colour), text)


def _say_all() -> None:
    for said, text in SAID:
        err.print(styled(said, f" {text}"), soft_wrap=True)
    SAID.clear()


class Terminated(BaseException):
    """SIGTERM, raised in the main thread so that clean-up (temporary files) runs as for Ctrl-C."""


def _on_sigterm(signum, frame):
    raise Terminated()


def _usage_message(e: click.UsageError) -> str:
    """click's message on one line, with where to read more: 'coriolis CMD --help'."""
    text = " ".join(e.format_message().split()).rstrip(".")
    ctx = e.ctx
    path = ctx.command_path if ctx is not None else "coriolis"
    return f"{text} (see '{path} --help')"


def main(argv=None):
    from ..report.output import READ

    try:
        _main(argv)
    finally:
        READ.clear()  # what a run read binds that run's outputs only, not a library call after it


def _applies(hint, argv) -> bool:
    """Whether ``hint`` can be followed in the command being run: it names no option that command
    lacks (a robot file's 'pass --floating-base' means nothing to simulate, which takes fixed bases)."""
    import re

    if not hint:
        return False
    named = set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", hint))
    command = next((cli.commands[a] for a in argv if a in cli.commands), None)
    if not named or command is None:
        return True
    return named <= {o for p in command.params for o in (*p.opts, *p.secondary_opts)}


def _main(argv):
    import signal
    import threading

    from ..report.output import WRITTEN, remove_written

    WRITTEN.clear()  # this run's own files only (tests call main many times in one process)
    SAID.clear()
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    warnings.showwarning = _show_warning
    # NumPy's overflow and invalid-value warnings come before the typed error that explains them:
    # a run says one line, the error
    warnings.filterwarnings("ignore", category=RuntimeWarning)
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        rv = cli.main(args=argv, prog_name="coriolis", standalone_mode=False)
        _say_all()
    except SystemExit as e:  # a command's own exit: 1 keeps its report, and what was said with it
        if e.code in (None, 0, 1):
            _say_all()
        raise
    except click.exceptions.Abort as e:  # click's Ctrl-C (it turns KeyboardInterrupt into Abort)
        remove_written()
        err.print("interrupted" if isinstance(e.__cause__, KeyboardInterrupt) else "aborted")
        sys.exit(130)
    except click.UsageError as e:  # one line, in the same voice as every other error
        err.print(styled(("error:", "red"), f" {_usage_message(e)}"), soft_wrap=True)
        sys.exit(2)
    except click.ClickException as e:
        err.print(styled(("error:", "red"), f" {' '.join(e.format_message().split())}"), soft_wrap=True)
        sys.exit(e.exit_code)
    except CoriolisError as e:
        hint = f" ({e.hint})" if _applies(getattr(e, "hint", None), argv) else ""
        if e.exit_code == 1:
            _say_all()
        err.print(styled(("error:", "red"), f" {e}{hint}"), soft_wrap=True)
        if e.exit_code != 1:  # a failed check keeps its report; bad input leaves nothing half done
            remove_written()
        sys.exit(e.exit_code)
    except KeyboardInterrupt:
        remove_written()
        err.print("interrupted")
        sys.exit(130)
    except Terminated:
        remove_written()
        err.print("terminated")
        sys.exit(143)
    except Exception as e:  # noqa: BLE001 - the one place unexpected errors are turned into a message
        remove_written()
        if debug:
            raise
        msg = str(e).splitlines()[0] if str(e) else ""
        err.print(styled(("error:", "red"), f" unexpected {type(e).__name__}: {msg} (run with --debug for the traceback)"),
                  soft_wrap=True)
        sys.exit(3)
    if isinstance(rv, int) and rv != 0:
        sys.exit(rv)
