"""Rich tables and matplotlib plots for benchmark records."""

from __future__ import annotations

import io

from rich.table import Table
from rich.text import Text

from ..bench.suite import OURS_DATA, OURS_LOOP, PAPER_TABLE1
from .tables import fit_columns

OUTPUT_LABELS = {"dtau": "∂τ/∂q, ∂τ/∂q̇, M", "dqdd": "∂q̈/∂q, ∂q̈/∂q̇, M⁻¹", "dg": "∂g/∂q",
                 "dslotine": "∂τ_SL/∂q, ∂q̇, ∂q̇_r, ∂q̈_r", "d2tau": "∂²τ/∂q², ∂q̇², ∂q∂q̇, ∂q∂q̈", "lam_d2tau": "λᵀ∂²τ/∂q², ∂q̇², ∂q∂q̇, ∂q∂q̈", "d2qdd": "∂²q̈/∂q², ∂q̇², ∂q∂q̇, ∂q∂τ", "lam_d2qdd": "λᵀ∂²q̈/∂q², ∂q̇², ∂q∂q̇, ∂q∂τ", "dCv": "∂(C v)/∂q, ∂q̇", "dCTqd": "∂(Cᵀq̇)/∂q, ∂q̇", "C": "M, Ṁ, C", "Gamma": "Γ", "qdd": "q̈ (forward dynamics)", "slotine": "τ (Slotine–Li)",
                 "M": "M (CRBA)", "tau": "τ (RNEA)", "g": "g(q)",
                 "centroidal": "A_g, Ȧ_g (not C: for scale)"}


def _us(x):
    return "—" if x is None else (f"{x:,.2f}" if x < 100 else f"{x:,.0f}")


def system_table(s) -> Table:
    t = Table(title=f"{s.label}: nv = {s.nv}, {s.n_bodies} bodies, depth {s.depth}", title_justify="left",
              caption="median µs per evaluation; ratio = time / our data= call for the same output, same process", caption_justify="left")
    for col in ("output", "implementation", "µs", "ratio", "note"):
        t.add_column(col, justify="right" if col in ("µs", "ratio") else "left")
    for tm in s.timings:
        ours = s.get(tm.what, OURS_DATA)
        ratio = "" if ours is None or tm.implementation == OURS_DATA else f"{tm.us / ours:.2f}×"
        label = OUTPUT_LABELS.get(tm.what, tm.what)
        t.add_row(label, tm.implementation, _us(tm.us), ratio, Text(tm.note, style="dim"))
    return fit_columns(t)


def sweep_table(topology: str, systems) -> Table:
    t = Table(title=f"{topology}{' (floating base)' if systems and systems[0].floating_base else ''}: time vs DoF",
              title_justify="left", caption="median µs; call = public API with data=, loop = compiled loop over states", caption_justify="left")
    cols = ["DoF", "depth", "C call", "C loop", "Γ call", "Γ loop"]
    peers = any(s.get("C", "pinocchio computeCoriolisMatrix") is not None for s in systems)
    if peers:
        cols += ["pin C", "pin Γ route"]
    for c in cols:
        t.add_column(c, justify="right")
    for s in systems:
        row = [str(s.dof), str(s.depth), _us(s.get("C", OURS_DATA)), _us(s.get("C", OURS_LOOP)),
               _us(s.get("Gamma", OURS_DATA)), _us(s.get("Gamma", OURS_LOOP))]
        if peers:
            row += [_us(s.get("C", "pinocchio computeCoriolisMatrix")), _us(s.get("Gamma", "pinocchio nv × computeCoriolisMatrix(q, e_k)"))]
        t.add_row(*row)
    return fit_columns(t)


def slope_table(slopes: dict) -> Table:
    t = Table(title="log-log slope of time vs DoF (compiled loop)", title_justify="left",
              caption="the paper's slopes (Echeandia & Wensing, Figs. 2-4): serial chains C ~ 2 (O(N d), d = N) and "
                      "Γ ~ 3 (O(N d²)); binary trees between 1 and 2 (d = log N)", caption_justify="left")
    for c in ("topology", "C slope", "Γ slope"):
        t.add_column(c, justify="right" if "slope" in c else "left")
    for topo, d in slopes.items():
        t.add_row(topo, "—" if d.get("C") is None else f"{d['C']:.2f}", "—" if d.get("Gamma") is None else f"{d['Gamma']:.2f}")
    return fit_columns(t)


def table1(systems) -> Table:
    t = Table(title="Table 1 at 20 DoF: this machine beside the paper (C++/RBDL, i7 3.2 GHz)", title_justify="left",
              caption="C = M, Ṁ and C together. loop: compiled loop over states (how C++ is timed); call: public API with data=",
              caption_justify="left")
    for c in ("system", "C loop µs", "C call µs", "paper C µs", "Γ loop µs", "Γ call µs", "paper Γ µs", "C vs paper", "Γ vs paper"):
        t.add_column(c, justify="left" if c == "system" else "right")
    for s in systems:
        pc, pg = PAPER_TABLE1[s.topology]
        cl, gl = s.get("C", OURS_LOOP), s.get("Gamma", OURS_LOOP)

        def verdict(x, ref):
            if x is None:
                return Text("—")
            return Text(f"{x / ref:.2f}×", style="green" if x <= ref else "red")

        t.add_row(s.topology, _us(cl), _us(s.get("C", OURS_DATA)), f"{pc:g}", _us(gl), _us(s.get("Gamma", OURS_DATA)), f"{pg:g}",
                  verdict(cl, pc), verdict(gl, pg))
    return fit_columns(t)


def sweep_plot(sweeps: dict, fmt: str = "png") -> bytes:
    from .plots import offscreen_pyplot, plain_log_ticks

    plt = offscreen_pyplot()

    fig, ax = plt.subplots(figsize=(7, 5), dpi=120)
    for topo, systems in sweeps.items():
        dofs = [s.dof for s in systems]
        for what, style, name in (("C", "-o", "C"), ("Gamma", "--s", "Γ")):
            ys = [s.get(what, OURS_LOOP) for s in systems]
            if all(y is not None for y in ys):
                ax.loglog(dofs, ys, style, label=f"{topo} {name}", markersize=4)
    ax.set_xlabel("degrees of freedom")
    ax.set_ylabel("time per evaluation (µs)")
    ax.set_title("Algorithm 1 (C) and Algorithm 2 (Γ), cf. Figs. 2-4")
    ax.grid(True, which="both", alpha=0.3)
    plain_log_ticks(ax.xaxis, ax.yaxis)
    ax.legend(fontsize=8, ncol=2)
    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format=fmt)
    plt.close(fig)
    return buf.getvalue()


def table2(rows) -> Table:
    """The paper's Table 2 beside this machine's: seconds to obtain Γ symbolically by each route,
    the code it gives, that code's run time, and Algorithm 2 on numbers."""
    t = Table(title="Table 2: Γ symbolically (CasADi here, MATLAB in the paper), its C code, and Γ numerically",
              title_justify="left",
              caption="eq. (4): M traced symbolically, then ∂M/∂q by CasADi's Jacobians; Alg. 2: Algorithm 2 on symbols. "
                      "s: seconds to obtain Γ; KiB: its C code; µs: that code built with -O1, in a C loop; "
                      "numeric: Algorithm 2 on numbers (public API, data=)", caption_justify="left")
    for c in ("system", "eq. 4 s", "paper", "Alg. 2 s", "paper", "eq. 4 KiB", "Alg. 2 KiB", "eq. 4 µs", "Alg. 2 µs",
              "numeric µs"):
        t.add_column(c, justify="left" if c == "system" else "right", no_wrap=c == "system")
    for r in rows:
        e, a = r.routes["eq4"], r.routes["alg2"]

        def seconds(route):
            return Text(route.note or "?", style="yellow") if route.symbolic_s is None else f"{route.symbolic_s:.2f}"

        def kib(route):
            return "—" if route.code_kib is None else f"{route.code_kib:,.0f}"

        def us(route):
            if route.compiled_us is None:
                return Text(route.note, style="yellow") if route.symbolic_s is not None and route.note else "—"
            return _us(route.compiled_us)

        paper = r.paper_s or (None, None)
        t.add_row(f"{r.topology}:{r.bodies}", seconds(e), "—" if paper[0] is None else f"{paper[0]:g}", seconds(a),
                  "—" if paper[1] is None else f"{paper[1]:g}", kib(e), kib(a), us(e), us(a), _us(r.numeric_us))
    return fit_columns(t)


FRAMEWORK_FUNCTIONS = {"M": "M", "C": "C", "bias": "h = C q̇ + g", "tau": "τ", "dtau_dq": "∂τ/∂q"}
FRAMEWORK_FORMS = {"1": "1", "64": "64", "4096": "4,096", "scan": "1,000 scan", "numpy": "NumPy data="}


def framework_tables(bench):
    """``bench --jax``/``--torch`` for one robot: µs per state by library and number of states, the
    ratio of the faster peer to ours, the first jitted calls, and what the peers' values are."""
    from rich.console import Group

    from ..bench.frameworks import OURS

    name = {"jax": "JAX", "torch": "PyTorch"}[bench.framework]
    libraries = list(dict.fromkeys(t.library for t in bench.timings))
    peers = [lib for lib in libraries if lib != OURS]
    how = ("jit on 1 state, jit(vmap) on a batch, a jitted lax.scan over states one after another; NumPy data=: "
           "the NumPy function on 1 state, its workspace reused"
           if bench.framework == "jax" else "a call on 1 state or a batch; ∂τ/∂q by torch.func.jacrev (vmap on a batch)")
    t = Table(title=f"{name}, {bench.robot} (nv = {bench.nv}{', floating base' if bench.floating_base else ''}): "
                    "µs per state", title_justify="left",
              caption=f"median; {how}" + ("; ×: the faster peer's time / ours; —: no such function" if peers else ""),
              caption_justify="left")
    for column in ("function", "states", *libraries, *("×",) * bool(peers)):
        t.add_column(column, justify="left" if column in ("function", "states") else "right")
    times = {(x.library, x.function, x.form): x for x in bench.timings}
    for function in FRAMEWORK_FUNCTIONS:
        for form in FRAMEWORK_FORMS:
            if (OURS, function, form) not in times:
                continue
            row = {lib: times.get((lib, function, form)) for lib in libraries}
            ours = row[OURS].us_per_state
            theirs = [row[p].us_per_state for p in peers if row[p] is not None]
            t.add_row(FRAMEWORK_FUNCTIONS[function], FRAMEWORK_FORMS[form],
                      *(_us(None if row[lib] is None else row[lib].us_per_state) for lib in libraries),
                      *([f"{min(theirs) / ours:,.1f}" if theirs else "—"] if peers else []))
    parts = [fit_columns(t)]
    if bench.framework == "jax":
        first = Table(title="first jitted call, one state (s, compilation included)", title_justify="left")
        first.add_column("function")
        for lib in libraries:
            first.add_column(lib, justify="right")
        for function in FRAMEWORK_FUNCTIONS:
            cells = [times.get((lib, function, "1")) for lib in libraries]
            if cells[0] is not None:
                first.add_row(FRAMEWORK_FUNCTIONS[function],
                              *("—" if c is None else f"{c.first_call_s:.2f}" for c in cells))
        parts.append(fit_columns(first))
    notes = [f"{peer} agrees with coriolis to {bench.agreement[peer]:.1e} (largest relative difference, 16 states, "
             "every function both have)" for peer in peers if peer in bench.agreement]
    notes += [f"{peer}: {why}" for peer, why in bench.missing.items()]
    fresh = bench.fresh_process_s
    if fresh:
        notes.append(f"a fresh process: import {fresh['import']:.2f} s, load {fresh['load']:.2f} s, first jitted M "
                     f"{fresh['first call']:.2f} s")
    parts += [Text(n) for n in notes]
    return Group(*parts)
