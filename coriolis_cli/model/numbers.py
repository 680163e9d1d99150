"""Numbers as robot files and command lines write them: decimal notation only, of a size that can
be computed with.

Python's float() also reads "1_0" (as 10), "0x1p3", "infinity" and surrounding spaces; URDF and
YAML mean none of these. Magnitudes are bounded so that products such as m·|c|² in the dynamics
cannot overflow: no robot has a part 10³⁰ m away or of 10³⁰ kg.
"""

from __future__ import annotations

import math
import re

_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_SPECIAL = re.compile(r"[+-]?(?:inf|nan)", re.IGNORECASE)
MAX_MAGNITUDE = 1e30


def parse_number(text: str) -> float:
    """A decimal number (or inf/nan, which callers refuse with their own message); ValueError
    for anything else."""
    t = text.strip()
    if _DECIMAL.fullmatch(t) or _SPECIAL.fullmatch(t):
        return float(t)
    raise ValueError(f"'{text}' is not a number")


def as_float(value) -> float:
    """An int or float of any size as a float; OverflowError becomes ValueError."""
    try:
        return float(value)
    except OverflowError:
        raise ValueError(f"{str(value)[:20]}... is too large") from None


def check_magnitude(values, what: str) -> None:
    """ValueError naming ``what`` when a finite value is beyond MAX_MAGNITUDE."""
    for v in values:
        if v is not None and math.isfinite(v) and abs(v) > MAX_MAGNITUDE:
            raise ValueError(f"{what} {v:g} is too large to compute with (|x| ≤ {MAX_MAGNITUDE:g})")
