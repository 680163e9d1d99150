"""Rich tables for verification and skew-symmetry records."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

from .tables import fit_columns


def _num(x):
    return "—" if x is None else f"{x:.2e}"


def _status(check):
    if check.warning:
        return Text("warn", style="yellow")
    if check.passed is None:
        return Text("skipped" if check.note.startswith("skipped") else "n/a", style="dim")
    return Text("pass", style="green") if check.passed else Text("FAIL", style="bold red")


def verification_table(rec):
    """The checks of one robot as a table, their notes numbered below it (long notes in a table
    column squeeze every other column to a few characters in a narrow terminal)."""
    t = Table(
        title=f"{rec.label}  (nv = {rec.nv}, {rec.trials} trials)",
        title_justify="left",
        caption="rel error = max |error| / size, the size being max |reference| or, when larger, "
                "max |M|·max(1, max |q̇|)^k (k = 0 for M and Γ, 1 for C and Ṁ, 2 for C q̇ and τ)",
        caption_justify="left",
    )
    for col, just in (("", "left"), ("check", "left"), ("abs error", "right"), ("rel error", "right"),
                      ("tolerance", "right"), ("trials", "right"), ("result", "left")):
        t.add_column(col, justify=just)
    notes = []
    for c in rec.checks:
        mark = ""
        if c.note:
            notes.append((c.key, c.note))
            mark = f" [{len(notes)}]"
        t.add_row(c.key, c.name + mark, _num(c.max_abs), _num(c.max_rel), f"{c.tolerance:.0e}" if c.tolerance else "exact",
                  str(c.trials), _status(c))
    lines = [Text(f"[{k}] {key}: {note}", style="dim") for k, (key, note) in enumerate(notes, 1)]
    return Group(fit_columns(t), *lines, Text(""))


def skew_table(robot_label: str, rows, trials: int) -> Table:
    """One column per factorization and one row per check, so that it reads at 80 columns; what
    each factorization is, in the caption."""
    legend = "; ".join(f"{r.factorization}: {r.description}" for r in rows)
    t = Table(
        title=f"skew-symmetry of N = Ṁ − 2C: {robot_label} ({trials} random states, random η)",
        title_justify="left",
        caption=(
            f"{legend}. admissible: N skew-symmetric, what passivity-based control needs; Christoffel-consistent: "
            "C = Σ_k Γ q̇_k. All three give the same C q̇, so only this test tells them apart."
            + (" With one DoF no such S exists (S q̇ = 0 forces S = 0): no counter-example." if len(rows) < 3 else "")
        ),
        caption_justify="left",
    )
    t.add_column("", justify="left")
    for r in rows:
        t.add_column(r.factorization, justify="right")

    def yes(b, good=True):
        return Text("yes", style="green" if good else "yellow") if b else Text("no", style="red" if good else "yellow")

    t.add_row("C q̇ vs RNEA", *(f"{r.valid_error:.1e}" for r in rows))
    t.add_row("max |ηᵀNη|/|η|²", *(f"{r.eta_max:.1e}" for r in rows))
    t.add_row("max |N + Nᵀ|", *(f"{r.symmetric_part:.1e}" for r in rows))
    t.add_row("C vs Σ Γ q̇", *(f"{r.christoffel_error:.1e}" for r in rows))
    t.add_row("valid", *(yes(r.valid) for r in rows))
    t.add_row("admissible", *(yes(r.admissible, r.expected_admissible) for r in rows))
    t.add_row("Christoffel-consistent", *(yes(r.christoffel_consistent, r.factorization == "christoffel") for r in rows))
    return fit_columns(t)
