"""`coriolis compute`: M, Ṁ, C, Γ, g or τ at one state, as a table, JSON, CSV or NPZ."""

from __future__ import annotations

import click
import numpy as np

from ...errors import StateError
from ..common import FORMATS, check_outputs, cli, emit, load, parse_list, resolve_format, robot_argument, robot_options

# the derivatives as tables title them ([i, j] = ∂y_i/∂x_j)
DERIVATIVE_TITLES = {"dtau_dq": "∂τ/∂q (inverse dynamics)", "dtau_dqd": "∂τ/∂q̇ (inverse dynamics)",
                     "dqdd_dq": "∂q̈/∂q (forward dynamics)", "dqdd_dqd": "∂q̈/∂q̇ (forward dynamics)",
                     "Minv": "M⁻¹ = ∂q̈/∂τ", "dg_dq": "∂g/∂q", "dCTqd_dq": "∂(Cᵀq̇)/∂q", "dCTqd_dqd": "∂(Cᵀq̇)/∂q̇"}
# the nv³ tensors as tables title them: (symbol, entry, caption)
TENSOR_TITLES = {"d2tau_dq2": ("∂²τ/∂q²", "∂/∂q_j ∂τ_i/∂q_k", "q in the tangent space"),
                 "d2tau_dqd2": ("∂²τ/∂q̇²", "∂²τ_i/∂q̇_j∂q̇_k", "= Γ_ijk + Γ_ikj"),
                 "d2tau_dqdqd": ("∂²τ/∂q∂q̇", "∂/∂q_j ∂τ_i/∂q̇_k", "q in the tangent space"),
                 "d2tau_dqdqdd": ("∂²τ/∂q∂q̈", "∂M_ik/∂q_j", "= Γ_ikj + Γ_kij"),
                 "dC_dq": ("∂C/∂q", "∂C_ij/∂q_k", "∂C/∂q̇ is Γ")}


def _state(model, q, qd, qdd, state, random, seed):
    from ...model.state import parse_vector, read_state_file
    from ..common import random_state

    given = sum(x is not None and x is not False for x in (q, state, random or None))
    if given > 1:
        raise StateError("give the state one way: --q/--qd, --state FILE or --random")
    if state is not None and qd is not None:
        raise StateError("--state FILE gives q̇ already; drop --qd, or give the whole state with --q and --qd")
    if random:
        qv, qdv = random_state(model, seed)
        if qd is not None:
            qdv = parse_vector(qd, model.nv, "--qd", model.dof_names)
    elif state is not None:
        qv, qdv = read_state_file(state, model)
    elif q is not None or qd is not None:
        qv = model.neutral_configuration()
        qv = qv if q is None else parse_vector(q, model.nq, "--q", model.config_names, default=qv)
        qdv = np.zeros(model.nv) if qd is None else parse_vector(qd, model.nv, "--qd", model.dof_names)
    else:
        raise StateError("no state given: use --q/--qd (comma lists), --state FILE or --random [--seed S]")
    qddv = np.zeros(model.nv) if qdd is None else parse_vector(qdd, model.nv, "--qdd", model.dof_names)
    return qv, qdv, qddv


def _tables(result, model, drawn=None):
    from rich.console import Group

    from ...report.tables import gamma_table, matrix_table, state_table, tensor_table, vector_table

    titles = {"M": "M (mass matrix)", "Mdot": "Ṁ", "C": f"C ({result.factorization} factorization)",
              "g": "g (generalized gravity)", "tau": "τ (inverse dynamics)", **DERIVATIVE_TITLES}
    parts = [] if drawn is None else [state_table(drawn[0], drawn[1], drawn[2], model.config_names, model.dof_names)]
    for k in result.quantities:
        if k in TENSOR_TITLES:
            entries, nonzero = result.tensors[k]
            title, value, caption = TENSOR_TITLES[k]
            parts.append(tensor_table(title, value, entries, nonzero, model.dof_names, model.nv ** 3, caption))
        elif k == "Gamma":
            g = result.gamma
            parts.append(gamma_table(g.entries, g.nonzero, model.dof_names, g.size))
        elif k in ("g", "tau"):
            parts.append(vector_table(titles[k], result.values[k], model.dof_names))
        else:
            parts.append(matrix_table(titles[k], result.values[k], model.dof_names, model.dof_related))
    return Group(*parts)


MAX_PLOTTED_GAMMA = 100  # nv above which the Γ pattern is left out of --plot (nv² slices of nv² cells)


def _structure_picture(model, q, qd, factorization, fmt: str = "png") -> bytes:
    from ... import engine
    from ...report.plots import structure_plot

    M, Mdot, C = engine.coriolis_matrix(model, q, qd, factorization=factorization)
    Gamma = engine.christoffel(model, q) if model.nv <= MAX_PLOTTED_GAMMA else None
    return structure_plot(model.name, model.dof_names, M, Mdot, C, Gamma, model.dof_related, factorization, fmt)


@cli.command()
@robot_argument
@robot_options
@click.option("--q", help="Configuration: nq values, comma separated (free joint: x,y,z,qx,qy,qz,qw), or name=value "
              "pairs (the rest neutral), e.g. --q elbow=0.5,shoulder=-1.")
@click.option("--qd", help="Velocity: nv values, comma separated, or name=value pairs (the rest zero).")
@click.option("--qdd", help="Acceleration for tau, comma separated (default zero).")
@click.option("--state", type=click.Path(dir_okay=False), help="YAML/JSON file {q: {dof: value}, qd: {dof: value}}.")
@click.option("--random", is_flag=True, help="Random q within the joint limits (else [0, 2π]) and q̇ in [-10, 10].")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed for --random.")
@click.option("--what", default=None, help="Comma list of M, Mdot, C, Gamma, g, tau, and the derivatives dtau_dq, "
              "dtau_dqd (of τ at --qdd), dqdd_dq, dqdd_dqd, Minv (of q̈ at the τ that gives --qdd), dg_dq, dCTqd_dq, "
              "dCTqd_dqd ([i, j] = ∂y_i/∂x_j; q in the tangent space on free, spherical and planar joints), the nv³ "
              "tensors d2tau_dq2, d2tau_dqd2, d2tau_dqdqd, d2tau_dqdqdd and dC_dq (listed largest first, as Gamma) "
              "(default M,C); along a "
              "--recording: g, Cqd, CTqd, p, tau, energy (default g,Cqd,CTqd,p,energy).")
@click.option("--recording", "recording", metavar="FILE", help="Compute along a recording (MCAP, ROS bag folder or .bag, "
              "CSV, Parquet, simulate's NPZ; or a folder or glob of them): a per-sample table to -o FILE "
              "(.parquet, .csv, .npz, .mcap), streamed.")
@click.option("--topic", help="The sensor_msgs/msg/JointState topic of a recording holding several (a CSV's column prefix).")
@click.option("--base-topic", help="A floating base's nav_msgs/msg/Odometry topic (a CSV's column prefix).")
@click.option("--window", default=None, show_default="0.1s", metavar="DURATION|SAMPLES",
              help="Differentiation window for what the recording lacks (q̇, q̈): a cubic fitted on the "
                   "stamps over a duration (0.1s, 50ms) or an odd number of samples.")
@click.option("--no-friction", is_flag=True,
              help="--recording's τ without the joints' friction the robot file gives (b q̇ + c sign q̇).")
@click.option("--workers", type=int, default=None, help="Run many recordings on N local worker processes (Dask).")
@click.option("--scheduler", help="Run many recordings on a running dask.distributed cluster (tcp://HOST:PORT).")
@click.option("--factorization", type=click.Choice(["christoffel", "featherstone"]), default="christoffel", show_default=True,
              help="christoffel: eq. (10), C = Σ Γ q̇ (Ṁ = C + Cᵀ); featherstone: eq. (9), B = v ×* I (admissible only).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default=None, help="Default: from the -o extension, else table.")
@click.option("--top", type=int, default=20, show_default=True, help="Γ entries listed in tables (largest first).")
@click.option("-o", "--output", help="Write to this file instead of standard output.")
@click.option("--force", is_flag=True, help="Overwrite an existing file.")
@click.option("--plot", type=click.Path(dir_okay=False),
              help="Also draw M, Ṁ, C (symmetric log colours, exact zeros grey) and Γ's sparsity pattern to a PNG file.")
@click.option("--allow-large", is_flag=True,
              help="Compute the nv³ quantities above their 256 MiB guard, if the machine has the memory they need: "
              "Gamma and dC_dq (nv > 322), the four d2tau_* together (nv > 203).")
def compute(robot, floating_base, q, qd, qdd, state, random, seed, what, recording, topic, base_topic, window, no_friction,
            workers, scheduler, factorization, fmt, top, output, force, plot, allow_large):
    """Compute M, Ṁ, C, Γ, g or τ of ROBOT at one state, or g, C q̇, Cᵀq̇, p, τ and the energies
    along a recording.

    Example: coriolis compute robots/panda.urdf --random --seed 1 --what M,C,Gamma
    """
    if recording is not None:
        if any(x is not None and x is not False for x in (q, qd, qdd, state, random or None, plot)):
            raise StateError("--recording gives the states: drop --q, --qd, --qdd, --state, --random and --plot")
        from .recording import run_recording

        return run_recording(robot, floating_base, recording, what, topic, base_topic, window, workers, scheduler, fmt,
                             output, force, friction=not no_friction)
    if workers is not None or scheduler is not None or topic is not None or base_topic is not None:
        raise StateError("--topic, --base-topic, --workers and --scheduler go with --recording")
    what = what or "M,C"
    from .evaluation import evaluate
    from ...report.formats import compute_to_csv, to_json, to_npz
    from ...report.output import figure_format

    fmt = resolve_format(fmt, output)
    if fmt == "npz" and not output:
        raise StateError("--format npz needs -o FILE")
    if top < 1:
        raise StateError("--top must be at least 1")
    check_outputs(force, output, plot, inputs=(robot, recording))
    from .evaluation import COMPUTE_QUANTITIES

    quantities = parse_list(what, {n.lower(): n for n in COMPUTE_QUANTITIES}, "--what")
    model = load(robot, floating_base)
    qv, qdv, qddv = _state(model, q, qd, qdd, state, random, seed)
    result = evaluate(model, qv, qdv, qddv, quantities, factorization, top, fmt, allow_large)
    if plot:
        emit(_structure_picture(model, qv, qdv, factorization, figure_format(plot)), plot, force)
    if fmt == "json":
        emit(to_json(result.as_dict()), output, force)
    elif fmt == "csv":
        emit(compute_to_csv(result.as_dict(), quantities), output, force)
    elif fmt == "npz":
        emit(to_npz(result.as_dict()), output, force)
    else:
        drawn = (f"random state (--seed {seed})", qv, qdv) if random else None
        emit(_tables(result, model, drawn), output, force)
