"""xacro: ROS's XML macro language, expanded to URDF with the maintained ``xacro`` package.

``$(find pkg)`` is resolved without ROS: in the directories the user names (``--package-path``;
each a package itself, or a folder of packages), then ``ROS_PACKAGE_PATH`` (ROS 1: folders searched
for a ``package.xml`` naming the package) and ``AMENT_PREFIX_PATH`` (ROS 2: ``PREFIX/share/pkg``).
``package://`` URIs name meshes, which the dynamics never reads.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
import xml.etree.ElementTree as ET

from ..errors import ModelError

XACRO_EXT = (".xacro",)
XACRO_NS = "http://www.ros.org/wiki/xacro"
MAX_PACKAGE_SEARCH = 20_000  # folders visited under one ROS_PACKAGE_PATH entry


def is_xacro_path(path: str) -> bool:
    return path.lower().endswith(XACRO_EXT)


_SUBSTITUTION = re.compile(r"\$\{[^}]*\}|\$\((arg|find|env|optenv|eval|dirname)\b")
# where an unexpanded substitution changes what the dynamics reads (comments, plugins and
# geometry may hold any text: a URDF from xacro often keeps ${...} in commented-out blocks)
_READ = {"link": ("name",), "joint": ("name", "type"), "parent": ("link",), "child": ("link",),
         "origin": ("xyz", "rpy"), "axis": ("xyz",), "limit": ("lower", "upper", "effort", "velocity"),
         "mimic": ("joint", "multiplier", "offset"), "mass": ("value",),
         "inertia": ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}


def needs_expanding_tree(root) -> bool:
    """Whether a parsed URDF still holds xacro: an element of xacro's namespace, or a ${...} or
    $(arg ...) in an attribute the dynamics reads. Comments are not looked at."""
    for el in root.iter():
        if not isinstance(el.tag, str):
            continue
        if el.tag.startswith("{" + XACRO_NS + "}") or el.tag.startswith("xacro:"):
            return True
        for attr in _READ.get(el.tag, ()):
            value = el.get(attr)
            if value and _SUBSTITUTION.search(value):
                return True
    return False


def unexpanded_message(source: str) -> str:
    """What to do with a URDF that still holds xacro."""
    how = ("pipe the expanded URDF instead: xacro robot.xacro | coriolis info -" if source == "<stdin>" else
           f"name it .xacro (or .urdf.xacro) so that coriolis expands it, or expand it first: xacro {source} > robot.urdf")
    return f"{source}: holds xacro (xacro: elements or $(...) / ${{...}} substitutions) and needs expanding; {how}"


def _package_xml_name(directory: str) -> str | None:
    path = os.path.join(directory, "package.xml")
    if not os.path.isfile(path):
        return None
    try:
        name = ET.parse(path).getroot().findtext("name")
    except (ET.ParseError, OSError):
        return None
    return name.strip() if name else None


def find_package(name: str, package_paths=()) -> str:
    """The directory of ROS package ``name`` (see the module's docstring), absolute, or ModelError."""
    return os.path.abspath(_find_package(name, package_paths))


def _walk_for_package(root: str, name: str) -> str | None:
    """The folder under ``root`` whose package.xml names ``name`` (as ROS finds packages, by their
    manifest, not their folder's name), visiting at most MAX_PACKAGE_SEARCH folders."""
    visited = 0
    for directory, subdirs, files in os.walk(root):
        visited += 1
        if "package.xml" in files and _package_xml_name(directory) == name:
            return directory
        if visited > MAX_PACKAGE_SEARCH:
            break
        subdirs[:] = sorted(d for d in subdirs if not d.startswith("."))
    return None


def _find_package(name: str, package_paths=()) -> str:
    searched = []
    for root in package_paths:
        root = os.path.abspath(os.path.expanduser(root))
        searched.append(root)
        found = _walk_for_package(root, name)  # the package itself, or one in a workspace's src/
        if found:
            return found
        if os.path.basename(root.rstrip(os.sep)) == name:
            return root
        candidate = os.path.join(root, name)
        if os.path.isdir(candidate):
            return candidate
        candidate = os.path.join(root, "share", name)
        if os.path.isdir(candidate):
            return candidate
    for root in filter(None, os.environ.get("ROS_PACKAGE_PATH", "").split(os.pathsep)):
        searched.append(root)
        visited = 0
        for directory, subdirs, files in os.walk(root):
            visited += 1
            if "package.xml" in files and (_package_xml_name(directory) == name or os.path.basename(directory) == name):
                return directory
            if visited > MAX_PACKAGE_SEARCH:
                break
            subdirs[:] = [d for d in subdirs if not d.startswith(".")]
    for prefix in filter(None, os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep)):
        searched.append(os.path.join(prefix, "share"))
        candidate = os.path.join(prefix, "share", name)
        if os.path.isdir(candidate):
            return candidate
    where = f" (searched {', '.join(searched[:4])}{', ...' if len(searched) > 4 else ''})" if searched else ""
    raise ModelError(f"xacro: package '{name}' not found{where}",
                     hint=f"pass --package-path DIR, DIR holding '{name}' or being it, or set ROS_PACKAGE_PATH")


@contextlib.contextmanager
def _finding_packages(package_paths, failures: list):
    """xacro's $(find) (which asks ament_index_python) answered by find_package meanwhile; the
    errors it raises are kept in ``failures``, since xacro wraps them in its own."""
    from xacro import substitution_args

    original = substitution_args._eval_find

    def find(pkg):
        try:
            return find_package(pkg, package_paths)
        except ModelError as e:
            failures.append(e)
            raise

    substitution_args._eval_find = find
    substitution_args._eval_dict["find"] = find
    try:
        yield
    finally:
        substitution_args._eval_find = original
        substitution_args._eval_dict["find"] = original


def expand(path: str, args: dict[str, str] | None = None, package_paths=()) -> str:
    """The URDF text of xacro file ``path`` with ``args`` (name: value), or ModelError naming what
    is missing and the option that supplies it. xacro evaluates Python expressions (${9**9**9})
    and recursive macros, which no signal interrupts: it runs in a child process bounded by
    CORIOLIS_XACRO_SECONDS (default 30) of CPU and wall time and CORIOLIS_XACRO_MB (default 2048)
    of memory."""
    import json
    import subprocess

    from .limits import env_int

    _require_xacro(path)  # here, where the one-line error reaches the user, not in the child
    seconds, megabytes = env_int("CORIOLIS_XACRO_SECONDS", 30), env_int("CORIOLIS_XACRO_MB", 2048)

    def limit():  # in the child, before it runs
        import resource

        resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds + 1))
        resource.setrlimit(resource.RLIMIT_AS, (megabytes * 2**20, megabytes * 2**20))

    package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")])))
    request = json.dumps({"path": path, "args": {str(k): str(v) for k, v in (args or {}).items()},
                          "package_paths": [str(p) for p in package_paths]})
    try:
        done = subprocess.run([sys.executable, "-c", "from coriolis_cli.model.xacro_format import _child; _child()"],
                              input=request, capture_output=True, text=True, timeout=seconds, env=env,
                              preexec_fn=limit if os.name == "posix" else None)
    except subprocess.TimeoutExpired:  # the wall clock: a child that waits, or one a busy machine starves (the
        # bound the message states: with 5 s of grace a starved bomb ran 35.8 s on a loaded machine)
        raise _out_of_time(path, seconds) from None
    try:
        answer = json.loads(done.stdout)
    except ValueError:
        if done.returncode in (-9, -24, 152, 137):  # the CPU limit: SIGXCPU, then SIGKILL at the hard one
            raise _out_of_time(path, seconds) from None
        raise ModelError(f"{path}: xacro ran out of its memory or failed ({megabytes} MiB) while expanding it (a "
                         "macro that never ends, or an expression too large to evaluate)",
                         hint="set CORIOLIS_XACRO_MB to allow more") from None
    if "text" in answer:
        return answer["text"]
    raise ModelError(answer["error"], hint=answer.get("hint")) from None


def _out_of_time(path: str, seconds: int) -> ModelError:
    """One message for xacro's time, whichever of its CPU and wall-clock bounds ends it first."""
    return ModelError(f"{path}: xacro ran out of its time ({seconds} s) while expanding it (a macro that never ends, "
                      "or an expression too large to evaluate)", hint="set CORIOLIS_XACRO_SECONDS to allow longer")


def _child() -> None:
    """expand()'s child process: a request as JSON on standard input, {"text"} or {"error", "hint"}
    as JSON on standard output."""
    import json

    request = json.loads(sys.stdin.read())
    try:
        answer = {"text": _expand_here(request["path"], request["args"], request["package_paths"])}
    except ModelError as e:
        answer = {"error": str(e), "hint": e.hint}
    except MemoryError:
        answer = {"error": f"{request['path']}: xacro ran out of memory while expanding it (a macro that never ends, "
                           "or an expression too large to evaluate)", "hint": "set CORIOLIS_XACRO_MB to allow more"}
    sys.stdout.write(json.dumps(answer))


XACRO_HINT = "pip install 'coriolis-cli[xacro]'"


def _require_xacro(path: str) -> None:
    """The xacro package is an extra: a light install says which, in one line."""
    import importlib.util

    try:
        found = importlib.util.find_spec("xacro") is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise ModelError(f"{path}: reading xacro needs the 'xacro' package", hint=XACRO_HINT)


def _expand_here(path: str, args: dict[str, str] | None = None, package_paths=()) -> str:
    try:
        import xacro
        from xacro.substitution_args import ArgException, SubstitutionException
    except ImportError:
        raise ModelError(f"{path}: reading xacro needs the 'xacro' package", hint=XACRO_HINT) from None
    args = {str(k): str(v) for k, v in (args or {}).items()}
    stderr, sys.stderr = sys.stderr, io.StringIO()  # xacro prints its own messages; ours are one line
    failures: list = []
    try:
        with _finding_packages(package_paths, failures):
            doc = xacro.process_file(path, mappings=args)
        text = doc.toprettyxml(indent="  ")
    except Exception as e:  # noqa: BLE001 - sorted out below, outside the redirected stderr
        error = e
    else:
        error = None
    finally:
        sys.stderr = stderr
    if error is None:
        return text
    if failures:
        raise ModelError(f"{path}: {failures[0]}", hint=failures[0].hint) from None
    try:
        raise error
    except ArgException as e:
        raise ModelError(f"{path}: xacro argument '{e}' has no value",
                         hint=f"pass --xacro-arg {e}:=VALUE") from None
    except ModelError:
        raise
    except (SubstitutionException, xacro.XacroException) as e:
        text = " ".join(str(e).split())
        missing = re.search(r"Undefined substitution argument (\S+)", text)
        if missing:
            raise ModelError(f"{path}: xacro argument '{missing.group(1)}' has no value",
                             hint=f"pass --xacro-arg {missing.group(1)}:=VALUE") from None
        raise ModelError(f"{path}: xacro: {text}") from None
    except Exception as e:  # noqa: BLE001 - expat, a missing include, an eval error: the file, not us
        message = " ".join(str(e).split()) or type(e).__name__
        raise ModelError(f"{path}: xacro could not expand it ({message})") from None
