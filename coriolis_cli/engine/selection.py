"""The largest entries of Γ, from its slices: one selection for a held Γ and a streamed one."""

from __future__ import annotations

import numpy as np


def largest_entries(slices, n: int, top: int, tiny: float = 0.0):
    """The ``top`` largest |Γ_ijk| from Γ's slices ``(k, Γ[:, :, k])``, largest first, and the number
    of entries with |Γ_ijk| > ``tiny`` (entries at or below it are not listed). The one selection
    for dense and streamed Γ alike."""
    best_v = np.zeros(0)
    best_i = np.zeros((0, 3), dtype=np.int64)
    nonzero = 0
    for k, slice_k in slices:
        flat = np.ravel(slice_k)
        nonzero += int(np.count_nonzero(np.abs(flat) > tiny))
        m = min(top, flat.size)
        idx = np.argpartition(-np.abs(flat), m - 1)[:m]
        ij = np.stack([idx // n, idx % n, np.full(m, k)], axis=1)
        best_v = np.concatenate([best_v, flat[idx]])
        best_i = np.concatenate([best_i, ij])
        if len(best_v) > top:
            keep = np.argpartition(-np.abs(best_v), top - 1)[:top]
            best_v, best_i = best_v[keep], best_i[keep]
    keep = np.abs(best_v) > tiny
    best_v, best_i = best_v[keep], best_i[keep]
    order = np.lexsort((best_i[:, 2], best_i[:, 1], best_i[:, 0], -np.abs(best_v)))
    entries = [(int(best_i[o, 0]), int(best_i[o, 1]), int(best_i[o, 2]), float(best_v[o])) for o in order]
    return entries, nonzero
