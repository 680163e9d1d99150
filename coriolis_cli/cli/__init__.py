"""Command-line interface: thin click commands, one module per command, that parse, call the
layers below, and render their records. This package maps the library's typed errors to one-line
messages and exit codes."""

from __future__ import annotations

import sys
import warnings

import click

from ..errors import CoriolisError, Note
from . import bench, codegen, compute, convert, excite, identify, info, observe, simulate, skew, verify  # noqa: F401 - each registers its command
from .common import cli, err, styled

__all__ = ["cli", "main"]


def _show_warning(message, category, filename, lineno, file=None, line=None):
    if issubclass(category, Note):  # a choice made for the user: said after the output, if all went well
        if str(message) not in NOTES:
            NOTES.append(str(message))
        return
    err.print(styled(("warning:", "yellow"), f" {message}"), soft_wrap=True)


NOTES: list = []  # this run's notes (Note), printed once it has succeeded


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
    import signal
    import threading

    from ..report.output import WRITTEN, remove_written

    WRITTEN.clear()  # this run's own files only (tests call main many times in one process)
    NOTES.clear()
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
        for note in NOTES:
            err.print(styled(("note:", "cyan"), f" {note}"), soft_wrap=True)
    except click.exceptions.Abort:
        err.print("aborted")
        sys.exit(130)
    except click.UsageError as e:  # one line, in the same voice as every other error
        err.print(styled(("error:", "red"), f" {_usage_message(e)}"), soft_wrap=True)
        sys.exit(2)
    except click.ClickException as e:
        err.print(styled(("error:", "red"), f" {' '.join(e.format_message().split())}"), soft_wrap=True)
        sys.exit(e.exit_code)
    except CoriolisError as e:
        hint = f" ({e.hint})" if getattr(e, "hint", None) else ""
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
