"""The tutorials (docs/tutorials/*.md) run from start to end, as a reader runs them: in an empty
working folder, block after block, in one Python namespace.

On each page, in the order written:

- a fenced block with a title (```` ```xml title="arm.urdf" ````) is a file the reader saves:
  it is written into the working folder under that name;
- a ```` ```python ```` block is executed in the page's one namespace (names defined by a block
  are seen by the next ones, as in one Python session);
- a ```` ```pycon ```` block is a doctest in that namespace;
- a ```` ```console ```` block holds ``$ coriolis ...`` lines, each followed by what it prints: the
  command runs (in-process, a 100-column terminal), and every line shown below it must be printed
  by it, in order (spacing aside; a line ``…`` leaves lines out, a ``…`` within a line leaves out
  a part of it).
  A command that fails (a non-zero exit) must show what it says. The pages show only the digits
  that round-off cannot change.

Every picture a page shows (``![...](NAME.png)``) must be written by the page's own code into the
working folder. The committed copies in docs/tutorials/ are made by running the pages with
``TUTORIAL_FIGURES`` set to the folder to copy them to:

    TUTORIAL_FIGURES=docs/tutorials .venv/bin/python -m pytest tests/test_tutorials.py

A page that imports PyTorch (not installed by `make test`) is skipped where it is missing;
`make test-torch` runs it (its test's id holds "torch").

The other documentation tests (tests/test_readme.py) leave docs/tutorials/ to this one.
"""

from __future__ import annotations

import doctest
import linecache
import os
import re
import shlex
import shutil

import pytest

from .conftest import ROOT

FOLDER = os.path.join(ROOT, "docs", "tutorials")
PAGES = sorted(f for f in os.listdir(FOLDER) if f.endswith(".md") and f != "index.md")
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.M | re.S)
PICTURE = re.compile(r"!\[[^\]]*\]\(([^)\s]+\.png)\)")
COLUMNS = 100
# not installed by `make test`: a page that imports one is skipped where it is missing (PyTorch's
# page runs under `make test-torch`, whose -k "torch" picks its test by the page's name)
OPTIONAL = ("torch",)


def _blocks(text: str):
    """(kind, title, body, line) of every fenced block of a page, in order."""
    for m in FENCE.finditer(text):
        info = m.group(1).strip()
        kind = info.split()[0] if info else ""
        title = re.search(r'title="([^"]+)"', info)
        yield kind, title.group(1) if title else None, m.group(2), text.count("\n", 0, m.start()) + 1


def _sessions(body: str):
    """The ($ command, lines it is shown to print) pairs of a console block; a command continued
    with a trailing backslash is joined."""
    body = re.sub(r" \\\n\s*", " ", body)
    out = []
    for line in body.splitlines():
        if line.startswith("$ "):
            out.append((line[2:].strip(), []))
        elif out:
            out[-1][1].append(line)
    return out


def _squeeze(text: str) -> str:
    return " ".join(text.split())


def _find_pieces(text: str, want: str, start: int) -> int:
    """Where the pieces of ``want`` between its ``…`` are found in ``text`` in order from
    ``start`` (the end of the last), or -1."""
    at = start
    for piece in (p.strip() for p in want.split("…")):
        if piece:
            k = text.find(piece, at)
            if k < 0:
                return -1
            at = k + len(piece)
    return at


def assert_shown_is_printed(shown: list[str], out: str, err: str, where: str) -> None:
    """Each shown line is in the command's standard output or error, in order within each (the
    terminal interleaves the two; a captured run has them apart), spacing aside."""
    streams = {"out": _squeeze(out), "err": _squeeze(err)}
    at = {"out": 0, "err": 0}
    for line in shown:
        want = _squeeze(line)
        if want in ("", "…", "..."):
            continue
        for name in ("out", "err"):
            end = _find_pieces(streams[name], want, at[name])
            if end >= 0:
                at[name] = end
                break
        else:
            raise AssertionError(f"{where}: the page shows\n    {line.strip()}\nwhich the command does not print "
                                 f"(after what matched before). It printed:\n{err}{out}")


def _run_console(body: str, line: int, page: str, run_cli) -> None:
    for command, shown in _sessions(body):
        where = f"{page}:{line}: $ {command}"
        args = shlex.split(command)
        assert args[0] == "coriolis", f"{where}: a console block runs coriolis commands only"
        r = run_cli(*args[1:])
        if r.code != 0:
            assert any(s.strip() for s in shown), f"{where}: exit {r.code}, and the page does not show why\n{r}"
        assert_shown_is_printed(shown, r.out, r.err, where)


@pytest.mark.parametrize("page", PAGES)
def test_tutorial_runs_from_start_to_end(page, run_cli, tmp_path, monkeypatch):
    from coriolis_cli.cli import common

    monkeypatch.setenv("COLUMNS", str(COLUMNS))
    monkeypatch.setattr(common.out, "width", COLUMNS)  # the console's width is read once, at import
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.chdir(tmp_path)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    text = open(os.path.join(FOLDER, page), encoding="utf-8").read()
    for framework in OPTIONAL:  # a page in PyTorch runs where it is installed (make test-torch)
        if re.search(rf"^\s*(import|from) {framework}\b", text, re.M):
            pytest.importorskip(framework)
    namespace = {"__name__": "__main__"}
    ran = 0
    try:
        for kind, title, body, line in _blocks(text):
            if title is not None:
                (tmp_path / title).write_text(body, encoding="utf-8")
            elif kind == "python":
                name = f"{page}:{line}"
                linecache.cache[name] = (len(body), None, body.splitlines(True), name)  # tracebacks show the code
                exec(compile(body, name, "exec"), namespace)
            elif kind == "pycon":
                test = doctest.DocTestParser().get_doctest(body, namespace, f"{page}:{line}", page, line)
                runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
                runner.run(test, clear_globs=False)
                assert runner.failures == 0, f"{page}:{line}: the pycon block prints something else (above)"
                namespace.update(test.globs)
            elif kind == "console":
                _run_console(body, line, page, run_cli)
            else:
                assert not re.search(r"^\$ coriolis", body, re.M), f"{page}:{line}: commands outside a console block do not run"
                continue
            ran += 1
    finally:
        plt.close("all")
    assert ran >= 3, f"{page}: too few blocks to be a tutorial"
    pictures = PICTURE.findall(text)
    assert pictures, f"{page}: a tutorial shows at least one figure"
    for name in pictures:
        assert (tmp_path / name).is_file(), f"{page} shows {name}, which its code did not write"
    target = os.environ.get("TUTORIAL_FIGURES")
    if target:  # the committed copies: TUTORIAL_FIGURES=docs/tutorials
        target = os.path.join(ROOT, target) if not os.path.isabs(target) else target
        for name in pictures:
            shutil.copyfile(tmp_path / name, os.path.join(target, name))
    for name in pictures:
        assert os.path.isfile(os.path.join(FOLDER, name)), f"{page}: {name} is not in docs/tutorials/ (TUTORIAL_FIGURES)"


def test_the_gallery_links_every_tutorial_with_its_figure():
    gallery = open(os.path.join(FOLDER, "index.md"), encoding="utf-8").read()
    for page in PAGES:
        assert f"]({page})" in gallery, f"the gallery (docs/tutorials/index.md) does not link {page}"
        figure = PICTURE.findall(open(os.path.join(FOLDER, page), encoding="utf-8").read())[0]
        assert f"]({figure})" in gallery, f"the gallery does not show {figure}, {page}'s first figure"
    for name in PICTURE.findall(gallery):
        assert os.path.isfile(os.path.join(FOLDER, name)), name


def test_a_shown_line_that_the_command_does_not_print_fails():
    assert_shown_is_printed(["wrote run.npz", "…", "3 events"], "wrote run.npz\nfoo\n3  events\n", "", "here")
    assert_shown_is_printed(["took … s: 2 failed"], "took 0.3 s: 2 failed\n", "", "here")
    with pytest.raises(AssertionError, match="does not print"):
        assert_shown_is_printed(["4 events"], "3 events\n", "", "here")
    with pytest.raises(AssertionError, match="does not print"):  # in order
        assert_shown_is_printed(["b", "a"], "a b\n", "", "here")
