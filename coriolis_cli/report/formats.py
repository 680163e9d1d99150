"""Serialize result records to JSON, CSV (long format) and NPZ."""

from __future__ import annotations

import csv
import io
import json

import numpy as np


def _finite_or_none(x):
    if isinstance(x, float):
        return x if np.isfinite(x) else None
    if isinstance(x, list):
        return [_finite_or_none(v) for v in x]
    return x


def _jsonable(x):
    """Plain JSON data; a non-finite number becomes null (JSON has no NaN or Infinity)."""
    if isinstance(x, np.ndarray):
        if x.dtype.kind == "f" and not np.all(np.isfinite(x)):
            return _finite_or_none(x.tolist())
        return x.tolist()
    if isinstance(x, (np.floating, np.integer)):
        return _finite_or_none(x.item())
    if isinstance(x, float):
        return _finite_or_none(x)
    if isinstance(x, dict):
        return {k: _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    return x


def to_json(record: dict) -> str:
    return json.dumps(_jsonable(record), indent=2, allow_nan=False) + "\n"


def compute_to_csv(record: dict, keys) -> str:
    """Long format: quantity,i,j,k,value with DoF names; j and k empty for vectors and matrices."""
    names = record["dof_names"]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["quantity", "i", "j", "k", "value"])
    for key in keys:
        a = np.asarray(record[key])
        if a.ndim == 1:
            for i, x in enumerate(a):
                w.writerow([key, names[i], "", "", repr(float(x))])
        elif a.ndim == 2:
            for i in range(a.shape[0]):
                for j in range(a.shape[1]):
                    w.writerow([key, names[i], names[j], "", repr(float(a[i, j]))])
        else:
            for i, j, k in zip(*np.nonzero(a)):
                w.writerow([key, names[i], names[j], names[k], repr(float(a[i, j, k]))])
    return buf.getvalue()


def to_npz(record: dict) -> bytes:
    arrays = {}
    for k, v in record.items():
        if isinstance(v, np.ndarray):
            arrays[k] = v
        elif isinstance(v, (list, tuple)) and v and isinstance(v[0], str):
            arrays[k] = np.array(v)
        elif isinstance(v, str):
            arrays[k] = np.array(v)
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()
