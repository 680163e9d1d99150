import atexit
import glob
import os
import shutil
import tempfile


def _scratch_directory(prefix: str) -> str:
    path = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, path, True)
    return path


# Tests never touch the user's caches, and no variable of the user's changes what the tool does:
# every environment variable the tool reads is set or removed here.
os.environ["XDG_CACHE_HOME"] = _scratch_directory("coriolis-test-cache-")
for _name in ("CORIOLIS_NO_CACHE", "COLUMNS"):
    os.environ.pop(_name, None)

from hypothesis import settings  # noqa: E402

# CI runs the same examples every time (a green run is reproducible); local runs explore.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

import numpy as np
import pytest

from coriolis_cli.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROBOTS = os.path.join(ROOT, "robots")
BUNDLED = sorted(glob.glob(os.path.join(ROBOTS, "*.urdf")))


def robot_path(name: str) -> str:
    return os.path.join(ROBOTS, name)


class CliResult:
    def __init__(self, code, out, err):
        self.code, self.out, self.err = code, out, err

    def __repr__(self):
        return f"CliResult(code={self.code}, out={self.out[:300]!r}, err={self.err[:300]!r})"


@pytest.fixture
def run_cli(capsys):
    """Run the real entry point (with its error mapping) in-process."""

    def run(*args):
        code = 0
        try:
            main([str(a) for a in args])
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run


def stderr_lines(text: str) -> list[str]:
    """stderr's non-empty lines."""
    return [line for line in text.strip().splitlines() if line.strip()]


def assert_one_line_error(result, *fragments, code=2):
    assert result.code == code, result
    assert "Traceback" not in result.err, result.err
    lines = stderr_lines(result.err)
    assert len(lines) == 1, result.err
    assert lines[0].startswith("error:"), result.err
    for frag in fragments:
        assert frag in lines[0], (frag, lines[0])


@pytest.fixture
def rng():
    return np.random.default_rng(12345)
