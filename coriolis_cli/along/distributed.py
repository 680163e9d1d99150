"""Many recordings at once: a folder, a glob or a partitioned Parquet dataset in, a partitioned
Parquet dataset out (one part per input recording, ``part-00000.parquet`` ...), computed in this
process, on local worker processes or on a running dask.distributed cluster. Every part is the
same computation (along.along) whichever runs it, so the parts are equal bit for bit."""

from __future__ import annotations

import contextlib
import glob
import logging
import os
import sys
import time

from ..errors import OutputError, RecordingError

RECORDING_EXT = (".mcap", ".bag", ".csv", ".parquet", ".pq", ".npz")


def expand_inputs(spec: str) -> list[str]:
    """The recordings ``spec`` names: a file, a ROS 2 bag folder, a folder of recordings (a
    partitioned Parquet dataset included), or a glob; sorted, so that part k is always the same."""
    if any(ch in spec for ch in "*?["):
        found = _unique(_walk_glob(spec) if "**" in spec else glob.iglob(spec), spec)
        if not found:
            raise RecordingError(f"{spec}: no file matches")
        return found
    if os.path.isdir(spec) and not os.path.isfile(os.path.join(spec, "metadata.yaml")):
        found = []
        for directory, subdirs, files in os.walk(spec):
            subdirs.sort()
            if "metadata.yaml" in files and directory != spec:
                found.append(directory)
                subdirs[:] = []
                continue
            found += [os.path.join(directory, f) for f in sorted(files) if f.lower().endswith(RECORDING_EXT)]
        if not found:
            raise RecordingError(f"{spec}: a folder without recordings ({', '.join(RECORDING_EXT)} or ROS 2 bags)")
        return found
    if not os.path.exists(spec):
        raise RecordingError(f"{spec}: no such file or folder")
    return [spec]


MAX_WORKERS_PER_CPU = 4


MAX_INPUTS = 100_000
MAX_VISITED = 200_000  # paths a glob may reach: links that loop make them without end


def _walk_glob(spec: str):
    """The paths a recursive pattern (``**``: any number of folders) matches, each folder entered
    once however many links lead to it: glob follows a link back to a folder above it without end."""
    import re

    parts = spec.split(os.sep)
    first = next(k for k, part in enumerate(parts) if any(ch in part for ch in "*?["))
    root = os.sep.join(parts[:first]) or ("." if not spec.startswith(os.sep) else os.sep)
    pattern = ""
    for k, part in enumerate(parts[first:]):
        if part == "**":
            pattern += "(?:[^/]*/)*"  # none or more folders
            continue
        for ch in re.split(r"(\*|\?|\[[^\]]*\])", part):
            pattern += {"*": "[^/]*", "?": "[^/]"}.get(ch, ch if ch.startswith("[") and ch.endswith("]") else re.escape(ch))
        if k < len(parts) - first - 1:
            pattern += "/"
    matcher = re.compile(pattern + r"\Z")
    entered = set()
    for directory, subdirs, files in os.walk(root, followlinks=True):
        key = os.path.realpath(directory)
        if key in entered:
            subdirs[:] = []
            continue
        entered.add(key)
        subdirs.sort()
        for name in sorted(files) + subdirs:
            path = os.path.join(directory, name)
            if matcher.match(os.path.relpath(path, root).replace(os.sep, "/")):
                yield path


def _unique(paths, spec) -> list[str]:
    """Each recording once, however many links lead to it (``**`` follows links to folders, and a
    link loop repeats the same files at every depth), and a bounded number of them."""
    seen, found = set(), []
    for visited, path in enumerate(paths):
        if visited > MAX_VISITED:
            raise RecordingError(f"{spec}: the pattern reaches more than {MAX_VISITED:,} paths (a link that loops "
                                 "back to a folder above it?); name the folder or a narrower pattern")
        if os.path.isdir(path) and not os.path.isfile(os.path.join(path, "metadata.yaml")):
            continue
        key = os.path.realpath(path)
        if key in seen:
            continue
        seen.add(key)
        found.append(path)
        if len(found) > MAX_INPUTS:
            raise RecordingError(f"{spec}: more than {MAX_INPUTS:,} recordings match; name fewer")
    return sorted(found)


def part_name(k: int) -> str:
    return f"part-{k:05d}.parquet"


def compute_part(robot, path: str, target: str, what, options: dict) -> tuple[int, list]:
    """One recording's table written to ``target`` (Parquet): its number of samples, and the
    warnings and notes said on the way as (category, message), for the process that shows them
    (a worker's own would print with its source line). What a worker runs: the same along.along
    as a single run."""
    import warnings

    from .dynamics import along, columns
    from ..report.streams import TableWriter

    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        with TableWriter(target, columns(robot, what), force=True, fmt="parquet") as writer:
            for chunk in along(robot, path, what, **options):
                writer.write(chunk)
    return writer.rows, [(w.category, str(w.message)) for w in said]


def _say(results) -> list:
    """[(part, samples)], the parts' warnings and notes said once each, in this process."""
    import warnings

    done = set()
    for _, (_, said) in results:
        for category, message in said:
            if (category, message) not in done:
                done.add((category, message))
                warnings.warn(category(message), stacklevel=3)
    return [(part, rows) for part, (rows, _) in results]


def run_many(robot, inputs, output: str, what, options: dict, workers=None, scheduler=None, force=False):
    """Each input's table as a part of the dataset ``output`` (a folder): [(part, samples)]."""
    if os.path.exists(output) and not os.path.isdir(output):
        raise OutputError(f"-o {output}: many recordings make a Parquet dataset, a folder; name a folder")
    parts = [os.path.join(output, part_name(k)) for k in range(len(inputs))]
    existing = [p for p in parts if os.path.exists(p)]
    if existing and not force:
        raise OutputError(f"{existing[0]}: already exists", hint="pass --force to overwrite")
    check_workers(workers, scheduler, len(inputs))  # before a folder is made or a process started
    made = not os.path.exists(output)
    os.makedirs(output, exist_ok=True)
    started = time.time()
    try:
        return _run(robot, inputs, parts, what, options, workers, scheduler)
    except BaseException:  # a failed or interrupted run leaves none of its parts, nor a folder it made
        for part in parts:
            if part not in existing:
                with contextlib.suppress(OSError):
                    os.unlink(part)
        # and none of the half-written files of workers stopped mid-part (report.output's atomic files)
        for leftover in glob.glob(os.path.join(glob.escape(output), ".coriolis-*.part*")):
            with contextlib.suppress(OSError):
                if os.path.getmtime(leftover) >= started - 1.0:
                    os.unlink(leftover)
        if made:
            with contextlib.suppress(OSError):
                os.rmdir(output)  # only when empty: anything else in it is not ours
        raise


def check_workers(workers, scheduler, recordings: int) -> None:
    """--workers and --scheduler that can run: one of them, and no more local workers than the
    machine's CPUs can keep busy (MAX_WORKERS_PER_CPU each)."""
    if scheduler is not None and workers is not None:
        raise RecordingError("--workers starts local workers and --scheduler names a running cluster: give one")
    if workers is None:
        return
    if workers < 1:
        raise RecordingError("--workers must be at least 1")
    most = MAX_WORKERS_PER_CPU * (os.cpu_count() or 1)
    if workers > most:
        raise RecordingError(f"--workers {workers}: this machine has {os.cpu_count() or 1} CPUs; at most {most} local "
                             "workers (a Dask cluster's are given with --scheduler)")


def _stop_workers_now(pids) -> None:
    """On Ctrl-C, this run's local worker processes (``pids``, children of this process) stopped at
    once: a graceful close lets each finish its part first (1.4 s of a 1.6 s exit). Their parts
    are removed with the rest of the output."""
    import multiprocessing

    workers = [child for child in multiprocessing.active_children() if child.pid in pids]
    for child in workers:
        with contextlib.suppress(Exception):
            child.kill()
    for child in workers:
        with contextlib.suppress(Exception):
            child.join(5)


def _run(robot, inputs, parts, what, options, workers, scheduler):
    if workers is None and scheduler is None:
        return _say([(target, compute_part(robot, path, target, what, options)) for path, target in zip(inputs, parts)])
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise RecordingError("running on workers needs dask.distributed", hint="pip install 'coriolis-cli[recordings]'") from None
    cluster, local_workers = None, set()
    try:
        if scheduler is not None:
            client = Client(scheduler, timeout="10s")
        else:
            # the cores shared out: each worker's compiled batches run on its share of the threads
            threads = str(max(1, (os.cpu_count() or 1) // workers))
            # its workers' log lines (a worker killed on Ctrl-C, say) are not ours to print: errors come back typed
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                                   dashboard_address=None, env={"CORIOLIS_THREADS": threads},
                                   silence_logs=logging.CRITICAL)
            client = Client(cluster)
            local_workers = set(client.run(os.getpid).values())
    except (OSError, TimeoutError) as e:
        raise RecordingError(f"no Dask scheduler at {scheduler} ({' '.join(str(e).split())[:120]})") from None
    futures = []
    try:
        futures = [client.submit(compute_part, robot, path, target, what, options, pure=False)
                   for path, target in zip(inputs, parts)]
        counts = client.gather(futures)
    except BaseException:  # Ctrl-C, a worker's error: the rest cancelled, and the client's tasks left unsaid
        for name in ("asyncio", "distributed"):
            logging.getLogger(name).setLevel(logging.CRITICAL)
        with contextlib.suppress(Exception):
            client.cancel(futures)
        if isinstance(sys.exc_info()[1], KeyboardInterrupt):
            _stop_workers_now(local_workers)
        raise
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    return _say(list(zip(parts, counts)))
