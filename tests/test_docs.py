"""The documentation site (mkdocs.yml, docs/): it builds strictly, every command has its page, and
the pages show what the code says (the option tables come from the click commands themselves)."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys

import click
import pytest

from .conftest import ROOT

sys.path.insert(0, os.path.join(ROOT, "docs"))
from hooks import SHARED  # noqa: E402  (the options that load a robot, listed once on the robot files page)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The site, built once for this module's tests."""
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings")
    tmp_path = tmp_path_factory.mktemp("docs")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    # not -q: a quiet build drops the warnings that --strict counts, and passes with them
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, env=env, timeout=240)
    assert done.returncode == 0 and "WARNING" not in done.stderr, done.stderr
    return tmp_path


def test_the_site_builds_strictly_with_a_page_per_command(site):
    tmp_path = site
    from coriolis_cli.cli import main  # noqa: F401  (registers the commands)
    from coriolis_cli.cli.common import cli

    for name in cli.commands:
        page = tmp_path / "site" / "commands" / name / "index.html"
        assert page.exists(), name
        text = page.read_text(encoding="utf-8")
        assert f"coriolis {name}" in text, name
        for option in cli.commands[name].params:  # every option of the command, from the command itself
            if isinstance(option, click.Option) and option.name not in SHARED:
                assert f"<code>{option.opts[0]}" in text, (name, option.opts[0])
    robots = (tmp_path / "site" / "robots" / "index.html").read_text(encoding="utf-8")
    assert all(f"<code>--{name.replace('_', '-')}" in robots for name in SHARED)
    derivatives = (tmp_path / "site" / "api" / "derivatives" / "index.html").read_text(encoding="utf-8")
    assert "inverse_dynamics_derivatives" in derivatives and "tangent space" in derivatives


def _formulas(page) -> list[tuple[str, bool]]:
    """The TeX of each formula arithmatex marked on a built page, and whether it is displayed."""
    found = re.findall(r'<(span|div) class="arithmatex">(.*?)</\1>', page.read_text(encoding="utf-8"), re.S)
    return [(html.unescape(tex).strip()[2:-2], kind == "div") for kind, tex in found]


def test_the_mathematics_pages_typeset_their_formulas_with_the_bundled_katex(site):
    pages = {name: _formulas(site / "site" / name / "index.html") for name in ("algorithms", "conventions", "derivatives")}
    for name, formulas in pages.items():
        assert sum(display for _, display in formulas) >= 2 and len(formulas) >= 20, (name, len(formulas))
    katex = os.path.join(ROOT, "docs", "assets", "katex", "katex.min.js")
    assert (site / "site" / "assets" / "katex" / "katex.min.js").exists()
    every = [formula for page in sorted((site / "site").rglob("index.html")) for formula in _formulas(page)]
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the formulas' TeX is not checked")
    # KaTeX itself, as the browser runs it, with errors raised rather than drawn in red
    script = ("const katex = require(process.argv[1]); let bad = [];"
              "for (const [tex, display] of JSON.parse(require('fs').readFileSync(0, 'utf8'))) {"
              "  try { katex.renderToString(tex, {displayMode: display, throwOnError: true}); }"
              "  catch (e) { bad.push(tex + ': ' + e.message); } }"
              "console.log(JSON.stringify(bad));")
    done = subprocess.run([node, "-e", script, katex], input=json.dumps(every), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


def test_no_formula_or_list_is_left_as_source(site):
    """A $…$ that arithmatex did not take (a display without its blank lines, say) shows as TeX; a
    list item after a wrongly indented paragraph shows its "- " as text."""
    for page in sorted((site / "site").rglob("index.html")):
        text = re.sub(r"<(pre|code|script)\b.*?</\1>", "", page.read_text(encoding="utf-8"), flags=re.S)
        text = re.sub(r'<(span|div) class="arithmatex">.*?</\1>', "", text, flags=re.S)
        assert "$$" not in text and not re.search(r"\$[^$\n]*\\[a-zA-Z]+", text), page
        assert "\n- <strong>" not in text, f"{page}: a list item left as text (its list broken by what precedes it)"


def test_no_page_fetches_anything_from_another_site(site):
    """Fonts, scripts and styles come with the site: it reads the same offline."""
    for page in (site / "site").rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        assert "fonts.googleapis" not in text and "fonts.gstatic" not in text, page
        assert not re.search(r'<(script|link)[^>]+(src|href)="(https?:)?//', text), page
