"""Many recordings at once: a folder, a glob or a partitioned Parquet dataset in, a partitioned
Parquet dataset out (one part per input recording, ``part-00000.parquet`` ...), computed in this
process, on local worker processes or on a running dask.distributed cluster. Every part is the
same computation (along.along) whichever runs it, so the parts are equal bit for bit."""

from __future__ import annotations

import glob
import os

from .errors import OutputError, RecordingError

RECORDING_EXT = (".mcap", ".bag", ".csv", ".parquet", ".pq", ".npz")


def expand_inputs(spec: str) -> list[str]:
    """The recordings ``spec`` names: a file, a ROS 2 bag folder, a folder of recordings (a
    partitioned Parquet dataset included), or a glob; sorted, so that part k is always the same."""
    if any(ch in spec for ch in "*?["):
        found = sorted(glob.glob(spec, recursive=True))
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


def part_name(k: int) -> str:
    return f"part-{k:05d}.parquet"


def compute_part(robot, path: str, target: str, what, options: dict) -> int:
    """One recording's table written to ``target`` (Parquet); its number of samples. What a
    worker runs: the same along.along as a single run."""
    from .along import along, columns
    from .report.streams import TableWriter

    with TableWriter(target, columns(robot, what), force=True, fmt="parquet") as writer:
        for chunk in along(robot, path, what, **options):
            writer.write(chunk)
    return writer.rows


def run_many(robot, inputs, output: str, what, options: dict, workers=None, scheduler=None, force=False):
    """Each input's table as a part of the dataset ``output`` (a folder): [(part, samples)]."""
    if os.path.exists(output) and not os.path.isdir(output):
        raise OutputError(f"-o {output}: many recordings make a Parquet dataset, a folder; name a folder")
    parts = [os.path.join(output, part_name(k)) for k in range(len(inputs))]
    existing = [p for p in parts if os.path.exists(p)]
    if existing and not force:
        raise OutputError(f"{existing[0]}: already exists", hint="pass --force to overwrite")
    os.makedirs(output, exist_ok=True)
    try:
        return _run(robot, inputs, parts, what, options, workers, scheduler)
    except BaseException:  # a failed or interrupted run leaves none of its parts
        for part in parts:
            if not os.path.exists(part) or part in existing:
                continue
            os.unlink(part)
        raise


def _run(robot, inputs, parts, what, options, workers, scheduler):
    if workers is None and scheduler is None:
        return [(target, compute_part(robot, path, target, what, options)) for path, target in zip(inputs, parts)]
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise RecordingError("running on workers needs dask.distributed", hint="pip install 'coriolis-cli[recordings]'") from None
    if workers is not None and workers < 1:
        raise RecordingError("--workers must be at least 1")
    if scheduler is not None and workers is not None:
        raise RecordingError("--workers starts local workers and --scheduler names a running cluster: give one")
    cluster = None
    try:
        if scheduler is not None:
            client = Client(scheduler, timeout="10s")
        else:
            # the cores shared out: each worker's compiled batches run on its share of the threads
            threads = str(max(1, (os.cpu_count() or 1) // workers))
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                                   dashboard_address=None, env={"CORIOLIS_THREADS": threads})
            client = Client(cluster)
    except (OSError, TimeoutError) as e:
        raise RecordingError(f"no Dask scheduler at {scheduler} ({' '.join(str(e).split())[:120]})") from None
    try:
        futures = [client.submit(compute_part, robot, path, target, what, options, pure=False)
                   for path, target in zip(inputs, parts)]
        counts = client.gather(futures)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    return list(zip(parts, counts))
