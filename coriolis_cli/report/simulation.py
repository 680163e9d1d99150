"""A simulation record as a summary table and as a plot (tracking error, V, parameter error)."""

from __future__ import annotations

import io

import numpy as np
from rich.table import Table


def simulation_table(result) -> Table:
    s = result.settings
    t = Table(title=f"{result.robot}: {s['controller']} tracking, {s['factorization']} factorization",
              show_header=False, title_justify="left")
    t.add_column(style="bold")
    t.add_column()
    rows = [
        ("duration", f"{s['duration_s']:g} s at {s['rate_hz']:g} Hz ({len(result.t) - 1} steps; {s['integrator']})"),
        ("gains", f"λ = {s['lambda']:g} 1/s, K_D = {s['kappa']:g} 1/s · M(q)"
         + (f", adaptation γ = {s['adaptation_gain']:g}" if s["adaptation_gain"] is not None else "")),
        ("tracking error ‖e‖", f"{result.tracking_error[0]:.3g} at t = 0 → {result.tracking_error[-1]:.3g} at the end"),
        ("Lyapunov V", f"{result.V[0]:.4g} → {result.V[-1]:.4g}; largest rise in one step "
         f"{result.largest_rise_of_V:.2g} of V(0)"),
    ]
    if s["adaptation_gain"] is not None:
        rows.append(("parameter error ‖θ̂ − θ‖/‖θ‖", f"{result.parameter_error[0]:.3g} → {result.parameter_error[-1]:.3g}"))
    for k, v in rows:
        t.add_row(k, v)
    return t


def simulation_plot(result) -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    s = result.settings
    adapting = s["adaptation_gain"] is not None
    fig, axes = plt.subplots(3 if adapting else 2, 1, figsize=(7, 7.5 if adapting else 5.5), dpi=110, sharex=True)
    floor = 1e-16
    axes[0].semilogy(result.t, np.maximum(result.tracking_error, floor), color="tab:blue")
    axes[0].set_ylabel("tracking error ‖e‖")
    axes[1].semilogy(result.t, np.maximum(result.V, floor), color="tab:red")
    axes[1].set_ylabel("V = ½ sᵀMs" + (" + ½ θ̃ᵀθ̃/γ" if adapting else ""))
    if adapting:
        axes[2].plot(result.t, result.parameter_error, color="tab:green")
        axes[2].set_ylabel("‖θ̂ − θ‖ / ‖θ‖")
    for ax in axes:
        ax.grid(True, which="both", alpha=0.3)
    axes[-1].set_xlabel("t (s)")
    fig.suptitle(f"{result.robot}: {s['controller']}, {s['factorization']} C "
                 f"(largest rise of V: {result.largest_rise_of_V:.1e} of V(0))", fontsize=10)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return buf.getvalue()
