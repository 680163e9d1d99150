"""Every code block on the site's pages and in README is run by the tests, or says on the page,
in its title, why not.

Run: ```python blocks (tests/test_readme.py), every block of a tutorial (tests/test_tutorials.py runs
each page whole, in one namespace, its titled blocks saved as the files they name),
```pycon blocks (doctests, same file), ```py blocks (PyTorch: tests/test_torch.py), the ```c program
(tests/test_codegen.py compiles and runs it), the ```yaml robot files (loaded here and in
tests/test_readme.py), and every `$ coriolis …` line (tests/test_readme.py runs each command; the
lines under it are its output). Any other block carries a title="…" saying what it is and why the
tests do not run it: set-up that `make test-install` runs, pseudo-code, timings of one machine.
"""

from __future__ import annotations

import os
import re

import yaml

from .conftest import ROOT
from .test_readme import _readme_commands

BLOCK = re.compile(r"^( *)```(\w*)([^\n]*)\n(.*?)^\1```", re.M | re.S)
RUN_BY_LANGUAGE = ("python", "pycon", "py", "c", "yaml")
TUTORIALS = os.path.join("docs", "tutorials") + os.sep
# shell lines other than coriolis's own that a test runs as written
RUN_ELSEWHERE = {"cc -O2 -std=c99 -I gen main.c gen/panda.c -lm -o main && ./main": "tests/test_codegen.py"}


def pages() -> list[str]:
    paths = [os.path.join(ROOT, "README.md")]
    for folder, _, files in sorted(os.walk(os.path.join(ROOT, "docs"))):
        paths += [os.path.join(folder, f) for f in sorted(files) if f.endswith(".md")]
    return paths


def blocks():
    for path in pages():
        text = open(path, encoding="utf-8").read()
        for m in BLOCK.finditer(text):
            yield os.path.relpath(path, ROOT), text[: m.start()].count("\n") + 1, m.group(2), m.group(3), m.group(4)


def _title(info: str) -> str | None:
    found = re.search(r'title="([^"]*)"', info)
    return found.group(1) if found else None


def classify() -> dict[str, list[str]]:
    """Each block as 'run' or 'marked', and the blocks that are neither."""
    commands = set(_readme_commands())
    joined = lambda body: re.sub(r" \\\n\s*", " ", body)  # noqa: E731  (a command continued with " \")
    kinds = {"run": [], "marked": [], "neither": []}
    for path, line, language, info, body in blocks():
        where = f"{path}:{line}"
        if path.startswith(TUTORIALS):  # each page run whole, in order (tests/test_tutorials.py)
            run = language in ("python", "pycon", "console") or _title(info) is not None  # a titled block: a file
            kinds["run" if run else "neither"].append(where)
        elif _title(info):
            kinds["marked"].append(where)
        elif language in RUN_BY_LANGUAGE and path != "docs/ARCHITECTURE.md":
            kinds["run"].append(where)
        else:
            shell = [m for m in re.findall(r"^\$ (.*)$", joined(body), re.M)]
            unrun = [c for c in shell if " ".join(c.split()) not in commands and c not in RUN_ELSEWHERE]
            kinds["run" if shell and not unrun else "neither"].append(f"{where} {unrun or 'no $ command'}")
    return kinds


def test_every_block_is_run_or_says_why_not():
    kinds = classify()
    assert not kinds["neither"], kinds["neither"]
    assert len(kinds["run"]) >= 30 and len(kinds["marked"]) >= 10


def test_a_marked_block_says_what_it_is():
    for path, line, _, info, _ in blocks():
        title = None if path.startswith(TUTORIALS) else _title(info)  # a tutorial's titles name files
        assert title is None or len(title.split()) >= 3, f"{path}:{line}: {title!r}"


def test_the_closed_loop_sections_shown_are_the_bundled_four_bar():
    page = open(os.path.join(ROOT, "docs", "robots.md"), encoding="utf-8").read()
    shown = [yaml.safe_load(body) for _, language, _, body in BLOCK.findall(page) if language == "yaml"]
    fourbar = yaml.safe_load(open(os.path.join(ROOT, "coriolis_cli", "robots", "fourbar.yaml"), encoding="utf-8"))
    loops = [block for block in shown if "loops" in block]
    for closure in fourbar["loops"]:  # the defaults, which the page writes out
        closure.setdefault("rpy", [0, 0, 0])
        closure.setdefault("child_rpy", [0, 0, 0])
    assert len(loops) == 1 and all(loops[0][key] == fourbar[key] for key in loops[0]) and "guess" in loops[0]
