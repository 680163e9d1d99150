"""Per-sample tables written as they are computed, never held whole: Parquet (a row group per
chunk), CSV (pyarrow's writer, every digit kept), NPZ (one array per quantity, assembled from a
temporary file at the end) and MCAP (one JSON message per sample on /coriolis, so Foxglove plots
the results beside the recording). Written to a temporary file beside the target and renamed at
the end (report.output.atomic_file): an error or an interrupt leaves nothing."""

from __future__ import annotations

import os

import numpy as np

from ..errors import OutputError, RecordingError
from .output import atomic_file

TABLE_FORMATS = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".npz": "npz", ".mcap": "mcap"}


def table_format(path: str) -> str:
    ext = os.path.splitext(path)[1].lower()
    if ext not in TABLE_FORMATS:
        raise OutputError(f"-o {path}: a table along a recording is written as .parquet, .csv, .npz or .mcap")
    return TABLE_FORMATS[ext]


def _pyarrow():
    try:
        import pyarrow
    except ImportError:
        raise RecordingError("writing the table needs pyarrow", hint="pip install 'coriolis-cli[recordings]'") from None
    return pyarrow


class TableWriter:
    """``with TableWriter(path, columns, force) as w: w.write(rows)`` for (k, len(columns)) chunks."""

    def __init__(self, path: str, columns, force: bool = False, fmt: str | None = None):
        self.path, self.columns = path, list(columns)
        self.fmt = fmt or table_format(path)
        if self.fmt in ("parquet", "csv"):
            _pyarrow()
        self.atomic = atomic_file(path, force)
        self.rows = 0

    def __enter__(self):
        self.tmp = self.atomic.__enter__()
        if self.fmt == "parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            self.schema = pa.schema([(c, pa.float64()) for c in self.columns])
            self.writer = pq.ParquetWriter(self.tmp, self.schema)
        elif self.fmt == "csv":
            import pyarrow as pa
            import pyarrow.csv as pcsv

            self.schema = pa.schema([(c, pa.float64()) for c in self.columns])
            self.writer = pcsv.CSVWriter(self.tmp, self.schema)
        elif self.fmt == "npz":
            self.raw = open(self.tmp + ".rows", "wb")
        else:
            self._open_mcap()
        return self

    def write(self, rows: np.ndarray) -> None:
        if not len(rows):
            return
        if self.fmt in ("parquet", "csv"):
            import pyarrow as pa

            table = pa.Table.from_arrays([pa.array(rows[:, k]) for k in range(rows.shape[1])], schema=self.schema)
            self.writer.write_table(table)
        elif self.fmt == "npz":
            np.ascontiguousarray(rows, dtype=np.float64).tofile(self.raw)
        else:
            self._write_mcap(rows)
        self.rows += len(rows)

    def __exit__(self, kind, error, traceback):
        try:
            if self.fmt in ("parquet", "csv"):
                self.writer.close()
            elif self.fmt == "npz":
                self.raw.close()
                if kind is None:
                    self._assemble_npz()
            else:
                self.mcap.finish()
                self.stream.close()
        finally:
            if self.fmt == "npz" and os.path.exists(self.tmp + ".rows"):
                os.unlink(self.tmp + ".rows")
        return self.atomic.__exit__(kind, error, traceback)

    # ---- NPZ: time and one (K, nv) array per quantity, from the rows written meanwhile ----------
    def _assemble_npz(self) -> None:
        import zipfile

        width = len(self.columns)
        data = np.memmap(self.tmp + ".rows", dtype=np.float64, mode="r", shape=(self.rows, width)) if self.rows else \
            np.zeros((0, width))
        groups: dict = {}
        for k, c in enumerate(self.columns):
            head, _, name = c.partition("/")
            groups.setdefault(head, []).append((k, name))
        with zipfile.ZipFile(self.tmp, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as z:
            for head, members in groups.items():
                cols = [k for k, _ in members]
                array = data[:, cols[0]] if head == "time" else data[:, cols[0] : cols[-1] + 1]
                with z.open(f"{head}.npy", "w", force_zip64=True) as f:
                    np.lib.format.write_array(f, np.asarray(array) if not self.rows else array, allow_pickle=False)
                if head != "time":
                    with z.open(f"{head}_names.npy", "w") as f:
                        np.lib.format.write_array(f, np.array([n for _, n in members]), allow_pickle=False)
        del data

    # ---- MCAP: /coriolis, one JSON message per sample --------------------------------------------
    def _open_mcap(self) -> None:
        import json

        try:
            from mcap.writer import Writer
        except ImportError:
            raise RecordingError("writing MCAP needs the 'mcap' package", hint="pip install 'coriolis-cli[recordings]'") from None
        self.stream = open(self.tmp, "wb")
        self.mcap = Writer(self.stream)
        self.mcap.start(profile="", library="coriolis")
        groups: dict = {}
        for k, c in enumerate(self.columns[1:], start=1):
            head, _, name = c.partition("/")
            groups.setdefault(head, []).append((k, name))
        self.groups = groups
        properties = {head: {"type": "object", "properties": {n: {"type": "number"} for _, n in members}}
                      for head, members in groups.items()}
        schema = self.mcap.register_schema(name="coriolis.Dynamics", encoding="jsonschema",
                                           data=json.dumps({"type": "object", "properties": properties}).encode())
        self.channel = self.mcap.register_channel(topic="/coriolis", message_encoding="json", schema_id=schema)

    def _write_mcap(self, rows) -> None:
        import json

        for row in rows:
            message = {head: {n: float(row[k]) for k, n in members} for head, members in self.groups.items()}
            stamp = int(round(row[0] * 1e9))
            self.mcap.add_message(channel_id=self.channel, log_time=stamp, publish_time=stamp,
                                  data=json.dumps(message).encode())
