"""Rich renderings of result records: the robot tree, joint tables, matrices, Γ entries."""

from __future__ import annotations

import os

import numpy as np
from rich.cells import cell_len
from rich.console import Group
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from ..model.tree import RobotModel



def _fmt_limit(x):
    return "" if x is None else f"{x:g}"


def info_record(robot: RobotModel) -> dict:
    joints = []
    loops = getattr(robot, "map", None)
    loops = loops if hasattr(loops, "solved_angles") else None  # a robot with closed loops
    solved = set(getattr(loops, "dependent_names", ()))  # closed loops' solved coordinates
    for b in robot.bodies:
        j = b.joint
        lim = j.limits
        joints.append(
            {
                "name": j.name,
                "type": j.type,
                "axis": [round(float(a), 12) for a in j.axis] if j.type != "free" else None,
                "parent": robot.bodies[b.parent].name if b.parent >= 0 else robot.base_link if j.type != "free" else "world",
                "child": b.name,
                "lower": None if lim is None else lim.lower,
                "upper": None if lim is None else lim.upper,
                "effort": None if lim is None else lim.effort,
                "velocity": None if lim is None else lim.velocity,
                "mimic": None if j.mimic is None else {"joint": j.mimic.joint, "multiplier": j.mimic.multiplier, "offset": j.mimic.offset,
                                                       "polynomial": list(j.mimic.polynomial) or None},
                "armature": list(j.armature) if any(j.armature) else None,
                # a 1-DoF joint, or the angles of a spherical one (model.loops) the loops solve for
                "solved_by_loops": j.name in solved,
                "solved_angles": (list(loops.solved_angles(j.name)) or None) if loops is not None else None,
            }
        )
    desc = robot.description
    return {
        "robot": robot.name,
        "source": desc.source,
        "floating_base": robot.floating_base,
        "base_link": robot.base_link,
        "n_links": len(desc.links),
        "n_bodies": robot.n_bodies,
        "nq": robot.nq,
        "nv": robot.nv,
        "depth": robot.depth,
        "total_mass": robot.total_mass,
        "coordinates": getattr(robot, "coordinates", None)
        or ("mimic: independent" if any(b.joint.mimic for b in robot.bodies) else "joint coordinates"),
        "dof_order": robot.dof_order,
        "dof_names": list(robot.dof_names),
        "config_names": list(robot.config_names),
        "bodies": [
            {"name": b.name, "parent": b.parent, "mass": b.mass, "merged_links": list(b.merged_links)} for b in robot.bodies
        ],
        "joints": joints,
        "loops": [{"name": c.name, "type": c.type, "parent": c.parent, "child": c.child, "xyz": list(c.xyz),
                   "rpy": list(c.rpy), "child_xyz": list(c.child_xyz), "child_rpy": list(c.child_rpy),
                   "axis": list(c.axis) if c.type == "revolute" else None} for c in desc.loops],
        "fixed_joints_merged": sum(1 for j in desc.joints if j.type == "fixed"),
        "physical_consistency": {
            "consistent": not robot.inertia_issues and not robot.massless_joints,
            "inertia_issues": [{"link": i.link, "problem": i.problem, "principal_moments": list(i.moments),
                                "shortfall": i.shortfall} for i in robot.inertia_issues],
            "massless_joints": list(robot.massless_joints),
        },
    }


def link_tree(robot: RobotModel) -> Tree:
    """The description's link tree, drawn like check_urdf."""
    desc = robot.description
    children: dict[str, list] = {}
    for j in desc.joints:
        children.setdefault(j.parent, []).append(j)
    inertial = {link.name: link.inertial for link in desc.links}

    def label(name, joint=None):
        m = inertial[name]
        mass = "no inertia" if m is None else f"{m.mass:g} kg"
        t = Text(name, style="bold")
        t.append(f"  ({mass})", style="dim")
        if joint is not None:
            style = "dim" if joint.type == "fixed" else "cyan"
            head = Text(f"{joint.name} [{joint.type}] → ", style=style)
            return head + t
        return t

    root_name = robot.base_link
    head = label(root_name)
    if robot.floating_base:
        head = Text("world ", style="dim") + Text("─ base [free] → ", style="cyan") + head
    tree = Tree(head)
    stack = [(root_name, tree)]
    while stack:
        name, node = stack.pop()
        for j in children.get(name, []):
            sub = node.add(label(j.child, j))
            stack.append((j.child, sub))
    return tree


def info_renderable(robot: RobotModel):
    rec = info_record(robot)
    summary = Table.grid(padding=(0, 2))
    summary.add_column(style="bold", no_wrap=True)
    summary.add_column(overflow="fold")  # a long source path folds, never cut
    for k, v in (
        ("robot", rec["robot"]),
        ("source", rec["source"]),
        ("base", f"{rec['base_link']} ({'floating: free joint' if rec['floating_base'] else 'fixed to the world'})"),
        ("links", f"{rec['n_links']} ({rec['fixed_joints_merged']} fixed joint{'s' if rec['fixed_joints_merged'] != 1 else ''} "
                  f"merged into {rec['n_bodies']} bodies)"),
        ("DoF", f"nq = {rec['nq']}, nv = {rec['nv']}, in {rec['dof_order']} order"
                + (" (children by joint name)" if rec["dof_order"] == "pinocchio" else " (children as written)")),
        ("coordinates", rec["coordinates"]),
        ("depth d", str(rec["depth"])),
        ("total mass", f"{rec['total_mass']:.6g} kg"),
    ):
        summary.add_row(k, str(v))
    joints = JointTable(rec["joints"])
    parts = [link_tree(robot), Text(""), summary, Text(""), joints, Text("")]
    if rec["loops"]:
        loops = Table(title="loop closures (the joints marked solved follow from the others)",
                      title_justify="left")
        for col in ("closure", "type", "parent", "child", "axis"):
            loops.add_column(col)
        for c in rec["loops"]:
            axis = "—" if c["axis"] is None else "(" + ", ".join(f"{a:.3g}" for a in c["axis"]) + ")"
            loops.add_row(c["name"], c["type"], c["parent"], c["child"], axis)
        parts += [fit_columns(loops), Text("")]
    return Group(*parts, consistency_renderable(robot))


class JointTable:
    """The joints, every column where the console is wide enough; else the columns that tell
    them apart (index, name, type, axis, limits), the tree above giving parents and children."""

    FULL = ("#", "joint", "type", "axis", "parent", "child", "lower", "upper", "effort", "velocity")
    NARROW = ("#", "joint", "type", "axis", "lower", "upper")

    def __init__(self, joints: list[dict]):
        self.rows = []
        for i, j in enumerate(joints):
            axis = "—" if j["axis"] is None else "(" + ", ".join(f"{a:.3g}" for a in j["axis"]) + ")"
            kind = j["type"] + (f" (mimics {j['mimic']['joint']})" if j["mimic"] else "") + \
                (" (solved)" if j["solved_by_loops"] else "") + \
                (f" (solved: {', '.join(j['solved_angles'])})" if j.get("solved_angles") else "")
            armature = "" if j["armature"] is None else ", ".join(f"{a:g}" for a in j["armature"])
            self.rows.append({"#": str(i), "joint": j["name"], "type": kind, "axis": axis, "parent": j["parent"],
                              "child": j["child"], "lower": _fmt_limit(j["lower"]), "upper": _fmt_limit(j["upper"]),
                              "effort": _fmt_limit(j["effort"]), "velocity": _fmt_limit(j["velocity"]),
                              "armature": armature})
        if any(r["armature"] for r in self.rows):  # rotor inertia on M's diagonal (MJCF)
            self.FULL = self.FULL + ("armature",)
            self.NARROW = self.NARROW + ("armature",)

    def table(self, columns, caption=None) -> Table:
        t = Table(title="joints", title_justify="left", caption=caption, caption_justify="left")
        for col in columns:
            t.add_column(col, justify="right" if col in ("#", "lower", "upper", "effort", "velocity", "armature") else "left")
        for row in self.rows:
            t.add_row(*(Text(row[c]) for c in columns))
        return fit_columns(t)

    def natural_width(self, columns) -> int:
        return 1 + sum(3 + max([cell_len(c)] + [cell_len(r[c]) for r in self.rows]) for c in columns)

    def __rich_console__(self, console, options):
        if self.natural_width(self.FULL) <= options.max_width:
            yield self.table(self.FULL)
        else:
            yield self.table(self.NARROW, "parents and children: the tree above; effort and velocity limits: "
                                          "--format json or a wider terminal")


def consistency_renderable(robot: RobotModel):
    """What is physically wrong with the robot but computed as given (see build_model)."""
    if not robot.inertia_issues and not robot.massless_joints:
        return Text("physical consistency: every link's inertia is that of a rigid body, and every joint moves mass",
                    style="green")
    t = Table(title="physical consistency (computed as given; --strict refuses)", title_justify="left")
    for col in ("link or joint", "problem", "principal moments", "shortfall"):
        t.add_column(col, justify="right" if col == "shortfall" else "left")
    for i in robot.inertia_issues:
        t.add_row(Text(i.link), Text(i.problem), Text(", ".join(i.moment_texts())),
                  f"{100 * i.shortfall:.3g} %")
    for sentence in robot.massless_joints:
        t.add_row(Text("—"), Text(sentence), Text(""), Text("M singular"))
    return fit_columns(t)


class MatrixBlocks:
    """A labelled matrix printed in column blocks that fit the console, as NumPy and MATLAB print
    wide arrays: no number and no name is ever cut. Rows and columns are labelled by the DoF's
    name where every name is short, else by its index, with a legend of the names above; entries
    that vanish by branch sparsity are shown as '·'."""

    def __init__(self, title: str, A: np.ndarray, names, related: np.ndarray | None = None):
        self.title, self.A, self.names, self.related = title, A, [str(n) for n in names], related
        n = A.shape[0]
        self.cells = [[("·" if related is not None and not related[i, j] else f"{A[i, j]: .5g}") for j in range(n)]
                      for i in range(n)]
        number = max((len(c) for row in self.cells for c in row), default=1)
        self.by_name = max((len(x) for x in self.names), default=0) <= max(number, SHORT_NAME)
        self.headers = self.names if self.by_name else [str(j) for j in range(n)]
        self.labels = self.headers
        self.widths = [max(len(self.headers[j]), max((len(self.cells[i][j]) for i in range(n)), default=1))
                       for j in range(n)]

    def blocks(self, width: int) -> list[range]:
        """Column ranges whose table fits in ``width`` (at least one column each)."""
        label = max((len(x) for x in self.labels), default=0)
        used, start, out = 4 + label, 0, []
        for j, w in enumerate(self.widths):
            if j > start and used + w + 3 > width:
                out.append(range(start, j))
                start, used = j, 4 + label
            used += w + 3
        out.append(range(start, len(self.widths)))
        return out

    def legend(self, width: int) -> Table:
        """index → name, in as many columns as fit."""
        entries = [f"{j} {x}" for j, x in enumerate(self.names)]
        cell = max(len(e) for e in entries) + 2
        per_row = max(1, width // cell)
        rows = -(-len(entries) // per_row)
        grid = Table.grid(padding=(0, 2))
        for _ in range(min(per_row, len(entries))):
            grid.add_column(no_wrap=True)
        for r in range(rows):
            grid.add_row(*(entries[c * rows + r] if c * rows + r < len(entries) else "" for c in range(per_row)))
        return grid

    def __rich_console__(self, console, options):
        blocks = self.blocks(options.max_width)
        n = len(self.names)
        if not self.by_name:
            yield Text(f"{self.title}: DoF indices", style="bold")
            yield self.legend(options.max_width)
        for b, cols in enumerate(blocks):
            title = self.title
            if len(blocks) > 1:
                title += f" (columns {cols.start}-{cols.stop - 1} of {n}, block {b + 1} of {len(blocks)})"
            t = Table(title=title, title_justify="left")
            t.add_column("", style="bold", no_wrap=True)
            for j in cols:
                t.add_column(self.headers[j], justify="right", no_wrap=True, min_width=self.widths[j])
            for i in range(n):
                t.add_row(self.labels[i], *(Text(self.cells[i][j], style="dim") if self.cells[i][j] == "·"
                                            else self.cells[i][j] for j in cols))
            yield t


# Names up to this long head the columns of a matrix; longer ones put the DoF index there.
SHORT_NAME = 14


# Above this many DoF a matrix is not printed whole in a table (at 300 DoF, 90,000 cells took 7 s
# and 1,500 DoF 4 minutes and 36 MB of text, which nobody reads): its largest entries are
# listed, and -o writes every entry.
MAX_TABLE_DOF = 100
LARGEST_SHOWN = 20


def matrix_table(title: str, A: np.ndarray, names, related: np.ndarray | None = None):
    """A labelled matrix in column blocks (see MatrixBlocks), or above MAX_TABLE_DOF its largest
    entries (see largest_entries_table)."""
    if A.shape[0] > MAX_TABLE_DOF:
        return largest_entries_table(title, A, names, related)
    return MatrixBlocks(title, A, names, related)


def largest_entries_table(title: str, A: np.ndarray, names, related: np.ndarray | None = None,
                          top: int = LARGEST_SHOWN):
    """The ``top`` largest |A_ij| of a matrix too large to print (i, j and the value, largest
    first; for a symmetric A, i ≤ j), and how many entries are nonzero."""
    n = A.shape[0]
    magnitude = np.abs(A)
    if related is not None:
        magnitude = np.where(related, magnitude, 0.0)
    symmetric = np.array_equal(A, A.T)
    if symmetric:
        magnitude = np.triu(magnitude)
    flat = magnitude.ravel()
    k = min(top, int(np.count_nonzero(flat)))
    picked = np.argpartition(-flat, k - 1)[:k] if k else np.zeros(0, dtype=int)
    picked = picked[np.lexsort((picked, -flat[picked]))]  # largest first, ties in index order
    nonzero = int(np.count_nonzero(A))
    heading = Text(f"{title}: {n} x {n}, {nonzero:,} nonzero entries; the {k} largest"
                   f"{' (i ≤ j: symmetric)' if symmetric else ''}", style="italic")
    t = Table()
    pairs = [divmod(int(index), n) for index in picked]
    shown = sorted({k for pair in pairs for k in pair})
    by_name = max((len(str(names[k])) for k in shown), default=0) <= SHORT_NAME  # else indices and a legend
    for col in ("i", "j", "value"):
        t.add_column(col, justify="right" if col == "value" else "left", no_wrap=col != "value")
    for i, j in pairs:
        t.add_row(*((str(names[i]), str(names[j])) if by_name else (str(i), str(j))), f"{A[i, j]: .6g}")
    note = Text(f"above {MAX_TABLE_DOF} DoF a table lists a matrix's largest entries; -o FILE (.json, .csv, .npz) "
                "writes every entry", style="dim")
    if by_name:
        return Group(heading, fit_columns(t), note)
    legend = Text("\n".join(f"{k} {names[k]}" for k in shown))
    return Group(heading, fit_columns(t), legend, note)


def fit_columns(table: Table) -> Table:
    """Columns that never cut: those holding numbers keep their full width and do not wrap, the
    others fold onto further lines where the console is narrow."""
    for column in table.columns:
        texts = [c.plain if isinstance(c, Text) else str(c) for c in column._cells]
        header = column.header.plain if isinstance(column.header, Text) else str(column.header)
        if texts and all(_numeric(x) for x in texts):
            # the numbers whole on one line; a long header folds at its spaces instead
            column.min_width = max(len(x) for x in texts)
            column.no_wrap = len(header) <= column.min_width
            column.overflow = "fold"
        else:
            # words kept whole down to a readable width; only longer ones fold
            words = [w for x in texts + [header] for w in x.split()]
            column.min_width = min(max((len(w) for w in words), default=1), 8)
            column.overflow = "fold"
    return table


def _numeric(text: str) -> bool:
    t = text.strip().rstrip("%").strip()
    if t in ("", "—", "·", "exact"):
        return True
    try:
        float(t)
    except ValueError:
        return False
    return True


def vector_table(title: str, x: np.ndarray, names) -> Table:
    t = Table(title=title, title_justify="left")
    t.add_column("DoF", style="bold")
    t.add_column("value", justify="right")
    for name, v in zip(names, x):
        t.add_row(str(name), f"{v: .6g}")
    return fit_columns(t)


def state_table(title: str, q: np.ndarray, qd: np.ndarray, config_names, dof_names):
    """The state a result was computed at: one table (DoF, q, q̇) when q and q̇ share their
    names, else q by coordinate and q̇ by DoF (free, planar, spherical joints)."""
    if tuple(config_names) == tuple(dof_names):
        t = Table(title=title, title_justify="left")
        t.add_column("DoF", style="bold")
        t.add_column("q", justify="right")
        t.add_column("q̇", justify="right")
        for name, a, b in zip(dof_names, q, qd):
            t.add_row(str(name), f"{a: .6g}", f"{b: .6g}")
        return fit_columns(t)
    tq = vector_table("q, " + title, q, config_names)
    tv = vector_table("q̇", qd, dof_names)
    tq.columns[0].header, tv.columns[0].header = "coordinate", "DoF"
    return Group(tq, tv)


def gamma_table(entries, total: int, names, size: int) -> Table:
    return tensor_table("Γ", "Γ_ijk", entries, total, names, size, "C[i, j] = Σ_k Γ[i, j, k] q̇_k")


def tensor_table(title: str, value: str, entries, total: int, names, size: int, caption: str) -> Table:
    """The largest entries (i, j, k, value) of an nv³ tensor, largest first."""
    t = Table(title=f"{title} (i, j, k): {total} nonzero of {size} entries, largest first", title_justify="left",
              caption=caption, caption_justify="left")
    for col in ("i", "j", "k", value):
        t.add_column(col, justify="right" if col == value else "left")
    for i, j, k, v in entries:
        t.add_row(str(names[i]), str(names[j]), str(names[k]), f"{v: .6g}")
    return fit_columns(t)


def bundled_record() -> list[dict]:
    """The bundled robots: name, file, DoF and a line on each."""
    import os
    import warnings

    from ..model import load_robot
    from ..model.bundled import DESCRIPTIONS, bundled_files

    out = []
    for path in bundled_files():
        name = os.path.splitext(os.path.basename(path))[0]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            robot = load_robot(path)
        out.append({"name": name, "file": path, "nv": robot.nv, "description": DESCRIPTIONS.get(name, "")})
    return out


def bundled_table(rec: list[dict]) -> Table:
    t = Table(title="robots installed with coriolis (give the name: coriolis info panda)", title_justify="left",
              caption=f"in {os.path.dirname(rec[0]['file'])}" if rec else None, caption_justify="left")
    for col in ("name", "DoF", "what"):
        t.add_column(col, justify="right" if col == "DoF" else "left")
    for r in rec:
        t.add_row(r["name"], str(r["nv"]), r["description"])
    return fit_columns(t)


CODEGEN_OUTPUTS = {"coriolis": "M, Ṁ, C", "christoffel": "Γ", "inverse_dynamics": "τ (RNEA)",
                   "slotine_li": "τ (Slotine–Li)", "inverse_dynamics_derivatives": "∂τ/∂q, ∂τ/∂q̇",
                   "gravity_derivatives": "∂g/∂q", "slotine_li_derivatives": "∂τ_SL/∂q, ∂q̇, ∂q̇_r, ∂q̈_r",
                   "coriolis_product_derivatives": "∂(C v)/∂q, ∂q̇", "coriolis_transpose_derivatives": "∂(Cᵀq̇)/∂q, ∂q̇"}


def codegen_renderable(generated, comparison=None):
    """What `coriolis codegen` wrote, and (with --check) how close the compiled code is to the engine."""
    from rich.console import Group

    table = fit_columns(Table(title=f"{generated.header_path}, {generated.source_path}", title_justify="left"))
    table.add_column("function")
    table.add_column("computes")
    table.add_column("operations", justify="right")
    if comparison is not None:
        table.add_column("vs engine", justify="right")
    for name in generated.functions:
        row = [f"{generated.prefix}_{name}", CODEGEN_OUTPUTS[name], f"{generated.operations[name]:,}"]
        if comparison is not None:
            e = comparison.errors[name]
            row.append(Text(f"{e:.1e}", style="green" if e <= comparison.tolerance else "red"))
        table.add_row(*row)
    lines = [f"nq = {generated.nq}, nv = {generated.nv}; {generated.source_bytes / 1024:,.0f} KiB of C written in "
             f"{generated.seconds:.1f} s"]
    if comparison is not None:
        lines.append(f"compiled and compared with the engine at {comparison.trials} random states: largest relative "
                     f"difference per function, tolerance {comparison.tolerance:.0e}")
    return Group(table, *lines)
