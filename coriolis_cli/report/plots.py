"""Pictures of a robot's structure: M, Ṁ, C heatmaps with the Γ sparsity pattern (compute --plot)
and the kinematic tree (info --plot). Each returns PNG bytes."""

from __future__ import annotations

import io

import numpy as np

MAX_LABELS = 60  # DoF names along each axis of a heatmap
ZERO_COLOUR = "#d9d9d9"  # exact zeros (branch-induced sparsity), distinct from every value's colour


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    _pyplot().close(fig)
    return buf.getvalue()


def _heatmap(ax, X, names, title, fontsize):
    from matplotlib.colors import SymLogNorm

    plt = _pyplot()
    big = float(np.max(np.abs(X), initial=0.0)) or 1.0
    cmap = plt.get_cmap("coolwarm").copy()
    cmap.set_bad(ZERO_COLOUR)
    img = ax.imshow(np.ma.masked_equal(X, 0.0), cmap=cmap,
                    norm=SymLogNorm(linthresh=1e-3 * big, vmin=-big, vmax=big, base=10), interpolation="nearest")
    n = len(names)
    step = -(-n // MAX_LABELS)  # every DoF named up to MAX_LABELS, then every step-th
    ticks = range(0, n, step)
    ax.set_xticks(ticks, [names[k] for k in ticks], rotation=90, fontsize=fontsize)
    ax.set_yticks(ticks, [names[k] for k in ticks], fontsize=fontsize)
    ax.set_title(title, fontsize=10)
    return img


def gamma_montage(Gamma: np.ndarray, related: np.ndarray, tiny: float) -> np.ndarray:
    """Γ[:, :, k] for every k side by side (a grid of slices, one cell apart): 0 where the triple
    (i, j, k) is structurally zero (not on one root-to-leaf path), 1 where it may be nonzero but is
    below ``tiny``, 2 where it is nonzero; -1 between slices."""
    n = Gamma.shape[0]
    cols = int(np.ceil(np.sqrt(n)))
    rows = int(np.ceil(n / cols))
    out = np.full((rows * (n + 1) - 1, cols * (n + 1) - 1), -1.0)
    for k in range(n):
        allowed = related & related[:, k][:, None] & related[:, k][None, :]
        cell = np.where(allowed, 1.0, 0.0)
        cell[np.abs(Gamma[:, :, k]) > tiny] = 2.0
        r, c = divmod(k, cols)
        out[r * (n + 1) : r * (n + 1) + n, c * (n + 1) : c * (n + 1) + n] = cell
    return out


def structure_plot(robot_name: str, names, M, Mdot, C, Gamma, related, factorization: str) -> bytes:
    """Heatmaps of M, Ṁ, C (symmetric log scale, exact zeros grey) and, when Γ is given, the
    pattern of its (i, j, k) entries that can be nonzero (Featherstone's branch-induced sparsity)."""
    from matplotlib.colors import ListedColormap

    plt = _pyplot()
    n = len(names)
    fontsize = max(4, min(9, int(200 / max(min(n, MAX_LABELS), 1))))
    fig = plt.figure(figsize=(16, 11 if Gamma is not None else 5.8), dpi=100)
    grid = fig.add_gridspec(2 if Gamma is not None else 1, 3, height_ratios=[1, 1.15] if Gamma is not None else [1])
    for col, (X, title) in enumerate(((M, "M"), (Mdot, "Ṁ"), (C, f"C ({factorization})"))):
        ax = fig.add_subplot(grid[0, col])
        img = _heatmap(ax, X, names, title, fontsize)
        fig.colorbar(img, ax=ax, shrink=0.8)
    if Gamma is not None:
        ax = fig.add_subplot(grid[1, :])
        big = float(np.max(np.abs(Gamma), initial=0.0))
        pattern = gamma_montage(Gamma, related, 1e-12 * max(big, float(np.max(np.abs(M), initial=0.0))))
        cmap = ListedColormap(["white", "#f4f4f4", "#c6dbef", "#08306b"])
        ax.imshow(pattern, cmap=cmap, vmin=-1.5, vmax=2.5, interpolation="nearest")
        ax.set_xticks([])
        ax.set_yticks([])
        possible = int(sum((related & related[:, k][:, None] & related[:, k][None, :]).sum() for k in range(n)))
        ax.set_title(f"Γ[:, :, k] for k = 1…{n}, row by row: dark = nonzero, light blue = may be nonzero, "
                     f"grey = structurally zero ({possible:,} of {n**3:,} triples can be nonzero)", fontsize=10)
    fig.suptitle(f"{robot_name}: M, Ṁ, C at this state (symmetric log colour scale; grey = exact zero)", fontsize=12)
    fig.tight_layout()
    return _png(fig)


def tree_plot(robot) -> bytes:
    """The kinematic tree: bodies as nodes (layers by depth), joints as labelled edges."""
    plt = _pyplot()
    bodies = robot.bodies
    N = len(bodies)
    children = {i: [] for i in range(-1, N)}
    for i, b in enumerate(bodies):
        children[b.parent].append(i)
    x, depth = {}, {-1: 0}
    next_leaf = [0.0]

    def place(i):  # leaves get consecutive x, a parent the middle of its children
        if i >= 0:
            depth[i] = depth[bodies[i].parent] + 1
        kids = children[i]
        if not kids:
            x[i] = next_leaf[0]
            next_leaf[0] += 1.0
            return
        for c in kids:
            place(c)
        x[i] = 0.5 * (x[kids[0]] + x[kids[-1]])

    place(-1)
    width = max(next_leaf[0], 1.0)
    levels = max(depth.values()) + 1
    fig, ax = plt.subplots(figsize=(min(max(6.0, 1.5 * width + 2), 24), min(max(4.0, 1.1 * levels + 1), 16)), dpi=100)
    fontsize = 8 if width <= 20 else 6
    for i, b in enumerate(bodies):
        p = b.parent
        ax.plot([x[p], x[i]], [-depth[p], -depth[i]], color="#888888", lw=1.2, zorder=1)
        # the label near the child, where sibling edges have spread apart
        ax.text(x[p] + 0.62 * (x[i] - x[p]), -(depth[p] + 0.62 * (depth[i] - depth[p])), f"{b.joint.name}\n[{b.joint.type}]",
                fontsize=fontsize - 1, ha="center", va="center", color="#444444",
                bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none", alpha=0.85), zorder=2)
    root_label = ("world" if robot.floating_base else f"{robot.base_link}\n(fixed to the world)")
    nodes = [(-1, root_label, "#eeeeee")] + [(i, f"{b.name}\n{b.mass:.3g} kg", "#c6dbef") for i, b in enumerate(bodies)]
    for i, label, colour in nodes:
        ax.text(x[i], -depth[i], label, fontsize=fontsize, ha="center", va="center",
                bbox=dict(boxstyle="round,pad=0.3", fc=colour, ec="#08306b", lw=0.8), zorder=3)
    ax.set_xlim(-1, width)
    ax.set_ylim(-levels + 0.4, 0.6)
    ax.set_yticks([-d for d in range(levels)], [f"depth {d}" for d in range(levels)], fontsize=8)
    ax.set_xticks([])
    for side in ("top", "right", "bottom"):
        ax.spines[side].set_visible(False)
    ax.set_title(f"{robot.name}: {N} bodies, nv = {robot.nv}, depth d = {robot.depth}", fontsize=11)
    fig.tight_layout()
    return _png(fig)
