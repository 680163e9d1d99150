"""The observers' findings as a table and as JSON (observers.Observation)."""

from __future__ import annotations


def observation_json(obs) -> dict:
    return {"samples": int(len(obs.t)), "duration_s": float(obs.t[-1] - obs.t[0]) if len(obs.t) else 0.0,
            "bandwidth_per_s": obs.bandwidth.tolist(), "quiet_s": list(obs.quiet), "dof_names": list(obs.dof_names),
            "threshold_rule": obs.rule, "threshold_base": obs.base.tolist(),
            "residual_spread": None if obs.noise is None else obs.noise.tolist(),
            "static_friction_allowed": None if obs.static is None else obs.static.tolist(),
            "events": [{"start_s": e.start, "end_s": e.end, "peak_joint": e.joint, "peak": e.peak, "link": e.link,
                        "start_from_first_sample_s": e.start - float(obs.t[0])} for e in obs.events]}


def observation_table(obs):
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    t0 = float(obs.t[0])
    rule = {"auto": "threshold 6σ of the residual from its drifting baseline",
            "friction": "threshold 6σ of the residual (+ static friction at rest)",
            "quiet": f"threshold from the quiet stretch {obs.quiet[0]:g}:{obs.quiet[1]:g} s",
            "fixed": "threshold given"}.get(obs.rule, obs.rule)
    head = Text(f"{len(obs.t):,} samples over {obs.t[-1] - t0:.3f} s; momentum observer at {obs.bandwidth[0]:g} 1/s, "
                f"{rule}; {len(obs.events)} event{'s' if len(obs.events) != 1 else ''}")
    if not obs.events:
        return Group(head)
    table = Table(title="events (times from the first sample)")
    for col, justify in (("start (s)", "right"), ("end (s)", "right"), ("peak joint", "left"), ("peak r", "right"),
                         ("isolated link", "left")):
        table.add_column(col, justify=justify)
    for e in obs.events:
        table.add_row(f"{e.start - t0:.3f}", f"{e.end - t0:.3f}", e.joint, f"{e.peak:.4g}", e.link)
    return Group(head, table)
