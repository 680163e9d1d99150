"""A simulation record as a summary table and as a plot (tracking error, V, parameter error)."""

from __future__ import annotations

import io

import numpy as np
from rich.table import Table


def simulation_table(result) -> Table:
    s = result.settings
    title = f"{result.robot}: {s['controller']} tracking, {s['factorization']} factorization"
    if result.diverged:
        title += f" (DIVERGED at t = {result.diverged_at:.4g} s)"
    t = Table(title=title, show_header=False, title_justify="left")
    t.add_column(style="bold")
    t.add_column()
    end = f"t = {result.t[-1]:.4g} s, the last finite sample" if result.diverged else "the end"
    rise = result.largest_rise_of_V
    rows = [
        ("duration", f"{s['duration_s']:g} s at {s['rate_hz']:g} Hz ({round(s['duration_s'] * s['rate_hz']):,} steps; "
         f"{s['integrator']})"),
        ("gains", f"λ = {s['lambda']:g} 1/s, K_D = {s['kappa']:g} 1/s · M(q)"
         + (f", adaptation γ = {s['adaptation_gain']:g} × Γ₀ (scaled to the robot)" if s["adaptation_gain"] is not None
            else "")),
        ("tracking error ‖e‖", f"{result.tracking_error[0]:.3g} at t = 0 → {result.tracking_error[-1]:.3g} at {end}"),
        ("Lyapunov V", f"{result.V[0]:.4g} → {result.V[-1]:.4g}; "
         + ("never rises" if rise == 0.0 else f"largest rise in one step {rise:.2g} of V(0)")),
    ]
    if result.diverged:
        rows.insert(0, ("DIVERGED", f"{result.diverged_because} at t = {result.diverged_at:.4g} s"))
    if s["adaptation_gain"] is not None:
        rows.append(("parameter error ‖θ̂ − θ‖/‖θ‖", f"{result.parameter_error[0]:.3g} → {result.parameter_error[-1]:.3g}"))
    for k, v in rows:
        t.add_row(k, v)
    from .tables import fit_columns

    return fit_columns(t)


def simulation_plot(result, fmt: str = "png") -> bytes:
    from .plots import offscreen_pyplot, plain_log_ticks

    plt = offscreen_pyplot()

    s = result.settings
    adapting = s["adaptation_gain"] is not None
    fig, axes = plt.subplots(3 if adapting else 2, 1, figsize=(7, 7.5 if adapting else 5.5), dpi=110, sharex=True)
    floor, ceiling = 1e-16, 1e30  # a diverging run's last samples reach 1e300: matplotlib's log ticks overflow

    def shown(x):
        return np.clip(x, floor, ceiling)

    axes[0].semilogy(result.t, shown(result.tracking_error), color="tab:blue")
    axes[0].set_ylabel("tracking error ‖e‖")
    axes[1].semilogy(result.t, shown(result.V), color="tab:red")
    axes[1].set_ylabel("V = ½ sᵀMs" + (" + ½ θ̃ᵀΓ⁻¹θ̃" if adapting else ""))
    if adapting:
        if np.max(result.parameter_error) > 100:
            axes[2].semilogy(result.t, shown(result.parameter_error), color="tab:green")
        else:
            axes[2].plot(result.t, result.parameter_error, color="tab:green")
        axes[2].set_ylabel("‖θ̂ − θ‖ / ‖θ‖")
    for ax in axes:
        ax.grid(True, which="both", alpha=0.3)
        if ax.get_yscale() == "log":
            plain_log_ticks(ax.yaxis)
    axes[-1].set_xlabel("t (s)")
    rise = result.largest_rise_of_V
    title = (f"{result.robot} ({len(result.dof_names)} DoF): {s['controller']}, {s['factorization']} C "
             + ("(V never rises)" if rise == 0.0 else f"(largest rise of V: {rise:.1e} of V(0))"))
    if result.diverged:
        title += f"\nDIVERGED at t = {result.diverged_at:.4g} s ({result.diverged_because})"
        for ax in axes:
            ax.axvline(result.diverged_at, color="black", linestyle="--", linewidth=1)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt)
    plt.close(fig)
    return buf.getvalue()
