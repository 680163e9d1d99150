"""The dynamics along recordings: per sample g, C q̇, Cᵀq̇, p = M q̇, τ and the energies of one
recording (``dynamics``), and of many at once in this process, local workers or a dask cluster
(``distributed``)."""

from .dynamics import DEFAULT_WHAT, WHAT, along, columns, parse_what

__all__ = ["DEFAULT_WHAT", "WHAT", "along", "columns", "parse_what"]
