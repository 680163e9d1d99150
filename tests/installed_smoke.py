"""What a new user runs first, against an installed coriolis (a wheel in a fresh environment):
`coriolis --version`, `coriolis verify panda`, and README's Python examples, each as written.

    python tests/installed_smoke.py README.md

Run from outside the checkout, so that the package imported is the installed one; the wheel tests
(tests/test_install.py) and cibuildwheel's test command both call it. Exits non-zero on the first
failure, saying which step failed.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys


def python_examples(readme: str) -> list[str]:
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def command(name: str) -> str:
    """The console script beside this interpreter (bin/ or Scripts/), as a user's shell finds it."""
    here = os.path.dirname(sys.executable)
    for candidate in (os.path.join(here, name), os.path.join(here, name + ".exe")):
        if os.path.exists(candidate):
            return candidate
    return name


def main(readme: str) -> int:
    import coriolis_cli

    where = os.path.dirname(os.path.abspath(coriolis_cli.__file__))
    if os.path.basename(os.path.dirname(where)) not in ("site-packages", "dist-packages"):
        print(f"installed_smoke: imported coriolis_cli from {where}, not from an install", file=sys.stderr)
        return 1
    version = subprocess.run([command("coriolis"), "--version"], capture_output=True, text=True)
    if version.returncode != 0 or coriolis_cli.__version__ not in version.stdout:
        print(f"installed_smoke: coriolis --version said {version.stdout!r} {version.stderr!r}", file=sys.stderr)
        return 1
    verify = subprocess.run([command("coriolis"), "verify", "panda"], capture_output=True, text=True)
    if verify.returncode != 0 or "checks passed" not in verify.stdout:
        print(f"installed_smoke: coriolis verify panda exited {verify.returncode}:\n{verify.stdout}\n{verify.stderr}",
              file=sys.stderr)
        return 1
    examples = python_examples(readme)
    if not examples:
        print(f"installed_smoke: no Python example in {readme}", file=sys.stderr)
        return 1
    for i, code in enumerate(examples, 1):
        exec(compile(code, f"{readme} (Python example {i})", "exec"), {"__name__": "__readme__"})
    print(f"coriolis {coriolis_cli.__version__} from {where}: --version, verify panda and "
          f"{len(examples)} README example(s) ran")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "README.md"))
