"""Identification's findings (identification.Fit, BodyReport, Validation) as tables, JSON and a plot."""

from __future__ import annotations

import math

import numpy as np

from ..estimation.identification import PARAMETER_NAMES

_UNITS = {"m": "kg", "mcx": "kg·m", "mcy": "kg·m", "mcz": "kg·m"}


def _number(x: float) -> str:
    return "—" if not math.isfinite(x) else f"{x:.4g}"


def _std(x: float) -> str:
    return "n.i." if not math.isfinite(x) else f"±{x:.2g}"


def identification_table(summary: dict, fit, bodies, friction_rows, validation):
    """The summary line, what is not identifiable, one table per body, friction, and the
    validation RMS per DoF."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    parts = [Text(f"{summary['rows']:,} rows from {summary['samples']:,} samples ({summary['form']} form, "
                  f"{summary['method']} fit); {fit.base_parameters} base parameters of {len(fit.scales)}; "
                  f"condition number {fit.condition:.3g} (columns scaled by each parameter's size); "
                  f"residual RMS {fit.residual_rms:.3g}. Per body: m, the first moment m·c and the inertia about "
                  "the body frame's origin, in that frame; n.i.: not identifiable alone")]
    missing = [(b.name, [q for q, s in zip(PARAMETER_NAMES, b.std) if not math.isfinite(s)], b.moves) for b in bodies]
    missing = [m for m in missing if m[1]]
    if missing:
        lines = ["not identifiable from these recordings (the prior is kept where the data say nothing):"]
        for name, quantities, moves in missing:
            what = ("moves no recorded effort" if not moves
                    else "each parameter only in combinations" if len(quantities) == len(PARAMETER_NAMES)
                    else ", ".join(quantities) + " (only in combinations)")
            lines.append(f"  {name}: {what}")
        parts.append(Text("\n".join(lines)))
    for b in bodies:
        if not b.moves:
            continue
        table = Table(title=b.name, title_justify="left")
        for col, justify in (("", "left"), ("prior", "right"), ("identified", "right"), ("std", "right")):
            table.add_column(col, justify=justify)
        for q, p, x, s in zip(PARAMETER_NAMES, b.prior, b.identified, b.std):
            table.add_row(f"{q} ({_UNITS.get(q, 'kg·m²')})", _number(p), _number(x), _std(s))
        parts.append(table)
    if friction_rows:
        table = Table(title="friction (prior 0)", title_justify="left")
        for col, justify in (("DoF", "left"), ("kind", "left"), ("identified", "right"), ("std", "right")):
            table.add_column(col, justify=justify)
        for name, kind, x, s in friction_rows:
            table.add_row(name, kind, _number(x), _std(s))
        parts.append(table)
    if fit.joint_weights is not None:
        table = Table(title="each DoF's rows weighed by 1/σ² of its residual (--equal-weights: all alike)",
                      title_justify="left")
        for col in ("DoF", "residual RMS", "residual mean", "weight"):
            table.add_column(col, justify="left" if col == "DoF" else "right")
        for name, r, m, w in zip(summary["dof_names"], fit.joint_rms, fit.joint_mean, fit.joint_weights):
            table.add_row(name, _number(r), _number(m), f"{w:.3g}")
        parts.append(table)
    if validation is not None:
        table = Table(title=f"torque RMS on {validation['label']} ({validation['samples']:,} samples)",
                      title_justify="left")
        for col in ("DoF", "prior", "identified", "ratio"):
            table.add_column(col, justify="left" if col == "DoF" else "right")
        for name, p, x in zip(validation["dof_names"], validation["prior"], validation["identified"]):
            if math.isfinite(p):
                table.add_row(name, _number(p), _number(x), f"{x / p:.3g}" if p > 0 else "—")
        parts.append(table)
    return Group(*parts)


def identification_json(summary: dict, fit, bodies, friction_rows, validation) -> dict:
    def clean(values):
        return [float(v) if math.isfinite(v) else None for v in values]

    return {**summary, "base_parameters": fit.base_parameters, "parameters": len(fit.scales),
            "condition_number": fit.condition, "residual_rms": fit.residual_rms,
            "bodies": [{"name": b.name, "moves_recorded_effort": b.moves, "quantities": list(PARAMETER_NAMES),
                        "prior": clean(b.prior), "identified": clean(b.identified), "std": clean(b.std)}
                       for b in bodies],
            "not_identifiable": {b.name: [q for q, s in zip(PARAMETER_NAMES, b.std) if not math.isfinite(s)]
                                 for b in bodies if not np.isfinite(b.std).all()},
            "friction": [{"dof": n, "kind": k, "identified": float(x), "std": clean([s])[0]}
                         for n, k, x, s in friction_rows],
            "joints": None if fit.joint_rms is None else {
                "dof_names": list(summary["dof_names"]), "residual_rms": clean(fit.joint_rms),
                "residual_mean": clean(fit.joint_mean),
                "weight": None if fit.joint_weights is None else clean(fit.joint_weights)},
            "validation": None if validation is None else {
                "recording": validation["label"], "samples": validation["samples"],
                "dof_names": list(validation["dof_names"]), "rms_prior": clean(validation["prior"]),
                "rms_identified": clean(validation["identified"])}}


def torque_plot(validation, fmt: str = "png", max_panels: int = 24) -> bytes:
    """Measured τ against the prior's and the identified model's, one panel per DoF with effort
    (the first ``max_panels``, largest prior error first)."""
    from .plots import finish_panels, panel_grid

    v = validation
    t = v.t - v.t[0]
    known = [j for j in range(v.measured.shape[1]) if np.isfinite(v.rms["prior"][j])]
    n = len(known)
    order = sorted(known, key=lambda j: -v.rms["prior"][j])[:max_panels] if n > max_panels else known
    fig, axes = panel_grid(len(order))
    for ax, j in zip(axes.ravel(), order):
        ax.plot(t, v.measured[:, j], color="#9a9a9a", lw=1.6, label="measured")
        ax.plot(t, v.predicted["prior"][:, j], color="#c55a11", lw=0.9, ls="--", label="prior")
        ax.plot(t, v.predicted["identified"][:, j], color="#1f4e79", lw=0.9, label="identified")
        ax.set_ylabel(v.dof_names[j], fontsize=8, rotation=0, ha="right", va="center")
        ax.tick_params(labelsize=7)
    axes[0, 0].legend(fontsize=7, loc="lower right", bbox_to_anchor=(1.0, 1.0), ncol=3, frameon=False)
    title = "measured and predicted joint torque (N·m or N)"
    if n > max_panels:
        title += f" ({max_panels} of {n} DoF, largest prior error first)"
    return finish_panels(fig, axes, len(order), title, fmt)
