"""Shaping CasADi's straight-line C for compilers: structural zeros written once, long bodies split.

CasADi writes an SX function as one C function: ``casadi_real a0, a1, …;`` then one statement per
operation (``a12=(a3*a7);``), the names reused once a value is dead, and one guarded store per
output entry (``if (res[0]!=0) res[0][5]=a12;``). Two things about that text cost compile time:

* Stores of a structural zero. An output entry that is zero for every q is a store of a variable
  that holds the literal ``0.``. Most of Γ is such entries (46,525 of TALOS's 54,872), and each
  is a statement GCC carries through every pass. They become one loop that clears each output
  before the first store.
* One function of 10⁵ statements. GCC -O2 is superlinear in a function's size (register
  allocation, scheduling, alias walks): TALOS's Γ took 140 s and 1.4 GB. Above SPLIT_ABOVE
  statements the body is cut into parts of PART_STATEMENTS, each a function of its own with
  its variables local; a value live across a cut goes through the work array ``w`` that CasADi
  already sizes for all the variables. The parts run in the original order, so every value and
  every rounding is the one the single function computed. GCC would inline a static function
  called once (rebuilding the giant), hence ``noinline`` where the compiler knows it.

Parts cost run time (values cross cuts through memory), so functions below SPLIT_ABOVE stay whole.
"""

from __future__ import annotations

import re

SPLIT_ABOVE = 20_000  # statements; the Panda's functions have about 5,000
PART_STATEMENTS = 1_000

ENTRY = re.compile(r"static int (casadi_f\d+)\(const casadi_real\*\* arg, casadi_real\*\* res, casadi_int\* iw, "
                   r"casadi_real\* w, int mem\) \{$")
VARIABLE = re.compile(r"\ba\d+\b")
ASSIGN = re.compile(r"  (a\d+)=(.*);$")
STORE = re.compile(r"  if \(res\[(\d+)\]!=0\) res\[\1\]\[\d+\]=(a\d+);$")
ZERO = re.compile(r"0\.?0*$")  # not -0.: clearing writes +0.


def shape(code: str, output_sizes: dict, noinline: str) -> tuple[str, dict]:
    """CasADi's ``code`` with each function reshaped (see the module's docstring).
    ``output_sizes``: {casadi function name: entries of each output}; ``noinline``: the macro
    that expands to the compiler's noinline attribute. Returns the code and, per function, the
    doubles its work array must hold (more than CasADi's ``sz_w`` only if a split needs it)."""
    lines, out, work = code.split("\n"), [], {}
    i = 0
    while i < len(lines):
        entry = ENTRY.match(lines[i])
        if not entry:
            out.append(lines[i])
            i += 1
            continue
        end = lines.index("}", i)
        name = entry.group(1)
        body = lines[i + 1 : end]
        statements = [line for line in body if not line.startswith("  casadi_real a")
                      and not line.startswith("  (void)") and line != "  return 0;"]
        statements, cleared = _drop_zero_stores(statements)
        clears = [f"  if (res[{r}]!=0) {{ casadi_int k; for (k=0; k<{output_sizes[name][r]}; ++k) res[{r}][k]=0.; }}"
                  for r in sorted(cleared)]
        # not every function uses its work arrays (Γ of a pendulum reads no q): said, for -Wextra
        header = [lines[i], "  (void)arg; (void)res; (void)iw; (void)w; (void)mem;"]
        if len(statements) <= SPLIT_ABOVE:
            out += header + _declarations(statements) + clears + statements + ["  return 0;", "}"]
        else:
            parts, count, work[name] = _parts(name, statements, noinline)
            out += parts + header + clears + [f"  {name}_part{p}(arg, res, w);" for p in range(count)]
            out += ["  return 0;", "}"]
        i = end + 1
    return "\n".join(out), work


def _accesses(line) -> tuple[str | None, set]:
    """The variable a statement writes (None for a store) and those it reads."""
    assign = ASSIGN.match(line)
    if assign:
        return assign.group(1), set(VARIABLE.findall(assign.group(2)))
    return None, set(VARIABLE.findall(line))


def _index(variable: str) -> int:
    return int(variable[1:])


def _declarations(statements) -> list[str]:
    """The variables the statements use (a dropped zero may have been the only use of one)."""
    names = sorted({v for line in statements for v in VARIABLE.findall(line)}, key=_index)
    return [f"  casadi_real {', '.join(names[k : k + 12])};" for k in range(0, len(names), 12)]


def _drop_zero_stores(statements):
    """The statements without the stores of a variable whose value is the literal zero, and the
    outputs that then need clearing. Names are reused, so a variable is zero only from its
    assignment of 0. until its next assignment."""
    zero, kept, cleared = set(), [], set()
    for line in statements:
        assign = ASSIGN.match(line)
        if assign:
            (zero.add if ZERO.match(assign.group(2)) else zero.discard)(assign.group(1))
        else:
            store = STORE.match(line)
            if store and store.group(2) in zero:
                cleared.add(int(store.group(1)))
                continue
        kept.append(line)
    # a zero only those stores read is now set and never used (-Wextra says so): dropped too
    live, needed = set(), []
    for line in reversed(kept):
        written, read = _accesses(line)
        if written is not None and written not in live and ZERO.match(ASSIGN.match(line).group(2)):
            continue
        live.discard(written)
        live |= read
        needed.append(line)
    return needed[::-1], cleared


def _parts(name, statements, noinline):
    """The part functions of ``statements``, their number and the size of ``w`` they use."""
    written_by, read_by = zip(*map(_accesses, statements))
    cuts = list(range(0, len(statements), PART_STATEMENTS)) + [len(statements)]
    # the variables read after each cut before being written again
    live_after, live = {}, set()
    for k in range(len(statements) - 1, -1, -1):
        if k + 1 in cuts:
            live_after[k + 1] = set(live)
        if written_by[k] is not None:
            live.discard(written_by[k])
        live |= read_by[k]
    lines, largest = [], 0
    for p, (start, stop) in enumerate(zip(cuts, cuts[1:])):
        written, live_in, used = set(), set(), set()
        for k in range(start, stop):
            live_in |= read_by[k] - written
            used |= read_by[k]
            if written_by[k] is not None:
                written.add(written_by[k])
                used.add(written_by[k])
        live_out = written & live_after.get(stop, set())
        largest = max([largest] + [_index(v) + 1 for v in live_in | live_out])
        lines.append(f"static {noinline} void {name}_part{p}(const casadi_real** arg, casadi_real** res, casadi_real* w) {{")
        lines.append("  (void)arg; (void)res; (void)w;")
        if live_in:
            lines.append("  casadi_real " + ", ".join(f"{v}=w[{_index(v)}]" for v in sorted(live_in, key=_index)) + ";")
        others = sorted(used - live_in, key=_index)
        if others:
            lines.append("  casadi_real " + ", ".join(others) + ";")
        lines += statements[start:stop]
        lines += [f"  w[{_index(v)}]={v};" for v in sorted(live_out, key=_index)]
        lines += ["}", ""]
    return lines, len(cuts) - 1, largest
