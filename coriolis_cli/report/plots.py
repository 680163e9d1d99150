"""Pictures of a robot's structure: M, Ṁ, C heatmaps with the Γ sparsity pattern (compute --plot)
and the kinematic tree (info --plot). Each returns PNG bytes."""

from __future__ import annotations

import io
import re

import numpy as np

MAX_LABELS = 120  # DoF names along each axis of a heatmap (every one up to here, then every step-th)
LABEL_POINTS = 7.0  # font size of the DoF labels once the figure grows with nv: legible at 100 dpi
MAX_TREE_BODIES = 400  # beyond, info --plot refuses in one line (a 1,000-link chain is 1,100 in tall)
WIDE = 20  # DoF beyond which the heatmaps stack in one column and the figure grows with nv
ZERO_COLOUR = "#d9d9d9"  # exact zeros (branch-induced sparsity), distinct from every value's colour


def offscreen_pyplot():
    """pyplot off screen, with every text drawn as written: a '$' in a robot's or a joint's name
    is a dollar sign, not the start of matplotlib's math mode."""
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["text.parse_math"] = False
    import matplotlib.pyplot as plt

    return plt


_SUPERSCRIPT = str.maketrans("-0123456789.", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹·")
_MATH = re.compile(r"\$\\mathdefault\{(.*)\}\$")


def _plain(label: str) -> str:
    """A log axis' tick label from matplotlib's math mode (``$\\mathdefault{-2\\times10^{-3}}$``)
    to the text it stands for (−2×10⁻³)."""
    m = _MATH.fullmatch(label)
    if not m:
        return label
    text = re.sub(r"\^\{([^}]*)\}", lambda e: e.group(1).translate(_SUPERSCRIPT), m.group(1).replace("\\times", "×"))
    return "−" + text[1:] if text.startswith("-") else text


def plain_log_ticks(*axes) -> None:
    """Log-scale tick labels in plain text on each of ``axes`` (an Axis such as ax.yaxis, or a
    colour bar): matplotlib writes them in math mode, which offscreen_pyplot turns off, and they
    would show as ``$\\mathdefault{10^{0}}$``."""
    from matplotlib.ticker import Formatter

    class PlainText(Formatter):
        """matplotlib's formatter, its labels through _plain."""

        def __init__(self, inner):
            self.inner = inner

        def set_axis(self, axis):
            super().set_axis(axis)
            self.inner.set_axis(axis)

        def set_locs(self, locs):
            super().set_locs(locs)
            self.inner.set_locs(locs)

        def __call__(self, x, pos=None):
            return _plain(self.inner(x, pos))

    for axis in axes:
        if hasattr(axis, "minorformatter"):  # a colour bar, which keeps its own formatters
            axis.formatter, axis.minorformatter = PlainText(axis.formatter), PlainText(axis.minorformatter)
        else:
            axis.set_major_formatter(PlainText(axis.get_major_formatter()))
            axis.set_minor_formatter(PlainText(axis.get_minor_formatter()))


def _png(fig, fmt: str = "png") -> bytes:
    """The figure as PNG, SVG or PDF bytes."""
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt)
    offscreen_pyplot().close(fig)
    return buf.getvalue()


def _heatmap(ax, X, names, title, fontsize):
    from matplotlib.colors import SymLogNorm

    plt = offscreen_pyplot()
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


def _label_inches(names, points: float) -> float:
    """Room for the longest DoF label at ``points`` (a character is about 0.6 em)."""
    return max((len(str(x)) for x in names), default=1) * points * 0.6 / 72 + 0.3


def structure_plot(robot_name: str, names, M, Mdot, C, Gamma, related, factorization: str, fmt: str = "png") -> bytes:
    """Heatmaps of M, Ṁ, C (symmetric log scale, exact zeros grey) and, when Γ is given, the
    pattern of its (i, j, k) entries that can be nonzero (Featherstone's branch-induced sparsity).
    Up to WIDE DoF the three heatmaps share a row of a 16 x 11 in figure; beyond, they stack and the
    figure grows so that every DoF label keeps LABEL_POINTS (a 44-DoF humanoid: 2,000 px wide)."""
    from matplotlib.colors import ListedColormap

    plt = offscreen_pyplot()
    n = len(names)
    heatmaps = ((M, "M"), (Mdot, "Ṁ"), (C, f"C ({factorization})"))
    if n <= WIDE:
        fontsize = max(4, min(9, int(200 / max(n, 1))))
        fig = plt.figure(figsize=(16, 11 if Gamma is not None else 5.8), dpi=100)
        grid = fig.add_gridspec(2 if Gamma is not None else 1, 3, height_ratios=[1, 1.15] if Gamma is not None else [1])
        places = [grid[0, col] for col in range(3)]
        gamma_place = grid[1, :] if Gamma is not None else None
    else:
        fontsize = LABEL_POINTS
        shown = min(n, MAX_LABELS)
        axis = max(5.0, shown * fontsize * 1.7 / 72)  # one label per DoF, 1.7 line heights apart
        side = axis + _label_inches(names, fontsize) + 1.6  # labels, the axis, the colour bar
        fig = plt.figure(figsize=(2 * side, 2 * side), dpi=100)  # M, Ṁ above; C, Γ below
        grid = fig.add_gridspec(2, 2)
        places = [grid[0, 0], grid[0, 1], grid[1, 0]]
        gamma_place = grid[1, 1] if Gamma is not None else None
    for place, (X, title) in zip(places, heatmaps):
        ax = fig.add_subplot(place)
        img = _heatmap(ax, X, names, title, fontsize)
        plain_log_ticks(fig.colorbar(img, ax=ax, shrink=0.8))
    if Gamma is not None:
        ax = fig.add_subplot(gamma_place)
        big = float(np.max(np.abs(Gamma), initial=0.0))
        pattern = gamma_montage(Gamma, related, 1e-12 * max(big, float(np.max(np.abs(M), initial=0.0))))
        cmap = ListedColormap(["white", "#f4f4f4", "#c6dbef", "#08306b"])
        ax.imshow(pattern, cmap=cmap, vmin=-1.5, vmax=2.5, interpolation="nearest")
        ax.set_xticks([])
        ax.set_yticks([])
        _label_slices(fig, ax, names)
        possible = int(sum((related & related[:, k][:, None] & related[:, k][None, :]).sum() for k in range(n)))
        ax.set_title(f"Γ[:, :, k] for k = 0…{n - 1}, row by row: dark = nonzero, light blue = may be nonzero,\n"
                     f"grey = structurally zero ({possible:,} of {n**3:,} triples can be nonzero)", fontsize=10, pad=14)
    fig.suptitle(f"{robot_name}: M, Ṁ, C at this state (symmetric log colour scale; grey = exact zero)", fontsize=12)
    fig.tight_layout(rect=(0, 0, 1, 0.97))  # the title above the panels' own
    return _png(fig, fmt)


def _label_slices(fig, ax, names) -> None:
    """Each slice of the Γ montage labelled by k above it: 'k name' where the name fits the
    slice's width at a legible size, else k alone (the heatmaps' axes name every k)."""
    n = len(names)
    cols = int(np.ceil(np.sqrt(n)))
    fig.canvas.draw()
    slice_points = ax.get_window_extent().width / fig.dpi * 72 / cols
    labels = [f"{k} {name}" for k, name in enumerate(names)]
    size = min(8.0, 0.9 * slice_points / (0.6 * max(len(x) for x in labels)))
    if size < 5.0:  # names do not fit: indices, at one size for all
        labels = [f"k = {k}" for k in range(n)]
        size = min(8.0, max(5.0, 0.9 * slice_points / (0.6 * len(labels[-1]))))
    for k, label in enumerate(labels):
        r, c = divmod(k, cols)
        ax.text(c * (n + 1), r * (n + 1) - 0.3, label, fontsize=size, ha="left", va="bottom", color="#08306b")


def tree_plot(robot, fmt: str = "png") -> bytes:
    """The kinematic tree: bodies as nodes (layers by depth), joints as labelled edges."""
    plt = offscreen_pyplot()
    bodies = robot.bodies
    N = len(bodies)
    children = {i: [] for i in range(-1, N)}
    for i, b in enumerate(bodies):
        children[b.parent].append(i)
    if N > MAX_TREE_BODIES:
        from ..errors import SizeError

        raise SizeError(f"info --plot draws trees of up to {MAX_TREE_BODIES} bodies; this one has {N:,} "
                        "(the table and --format json list every body)")
    fontsize = 8
    root_label = ("world" if robot.floating_base else f"{robot.base_link}\n(fixed to the world)")
    labels = {-1: root_label, **{i: f"{b.name}\n{b.mass:.3g} kg" for i, b in enumerate(bodies)}}
    edge_labels = {i: f"{b.joint.name}\n[{b.joint.type}]" for i, b in enumerate(bodies)}
    # one slot per leaf, as wide as the widest box or joint label, so that no two overlap
    widest = max(max(len(line) for line in t.split("\n")) for t in [*labels.values(), *edge_labels.values()])
    slot = widest * fontsize * 0.6 / 72 + 0.35  # inches
    x, depth = {}, {-1: 0}
    next_leaf = 0.0
    stack = [(-1, False)]
    while stack:  # leaves get consecutive x, a parent the middle of its children (iterative: any depth)
        i, done = stack.pop()
        if i >= 0 and i not in depth:
            depth[i] = depth[bodies[i].parent] + 1
        kids = children[i]
        if not kids:
            x[i] = next_leaf
            next_leaf += 1.0
        elif done:
            x[i] = 0.5 * (x[kids[0]] + x[kids[-1]])
        else:
            stack.append((i, True))
            stack.extend((c, False) for c in reversed(kids))
    width = max(next_leaf, 1.0)
    levels = max(depth.values()) + 1
    fig, ax = plt.subplots(figsize=(max(6.0, slot * width + 1.5), max(4.0, 1.4 * levels + 1)), dpi=100)
    for i, b in enumerate(bodies):
        p = b.parent
        ax.plot([x[p], x[i]], [-depth[p], -depth[i]], color="#888888", lw=1.2, zorder=1)
        # the label near the child, where sibling edges have spread apart
        ax.text(x[p] + 0.7 * (x[i] - x[p]), -(depth[p] + 0.7 * (depth[i] - depth[p])), edge_labels[i],
                fontsize=fontsize - 1, ha="center", va="center", color="#444444",
                bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none", alpha=0.85), zorder=2)
    nodes = [(-1, labels[-1], "#eeeeee")] + [(i, labels[i], "#c6dbef") for i in range(N)]
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
    return _png(fig, fmt)


def panel_grid(count: int):
    """A figure of ``count`` panels against time sharing their x axis, one column up to 8, then
    two: (fig, axes as a 2-D array)."""
    plt = offscreen_pyplot()
    cols = 1 if count <= 8 else 2
    rows = max(1, int(np.ceil(count / cols)))
    fig, axes = plt.subplots(rows, cols, figsize=(9 if cols == 1 else 12, 1.6 * rows + 1.0), sharex=True, squeeze=False)
    return fig, axes


def finish_panels(fig, axes, used: int, title: str, fmt: str = "png") -> bytes:
    """panel_grid's figure with its unused panels hidden, the time axis labelled and ``title``."""
    for ax in axes.ravel()[used:]:
        ax.set_visible(False)
    for ax in axes[-1]:
        ax.set_xlabel("t (s, from the first sample)", fontsize=8)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return _png(fig, fmt)


def residual_plot(observation, fmt: str = "png", max_panels: int = 24) -> bytes:
    """The momentum observer's residual per DoF against time, its threshold band, the events
    shaded; one panel per DoF (the first ``max_panels``, ranked by their largest |r| / θ)."""
    obs = observation
    t = obs.t - obs.t[0]
    n = obs.r.shape[1]
    measured = obs.r if obs.baseline is None else obs.r - obs.baseline
    order = np.argsort(-(np.abs(measured) / obs.threshold).max(axis=0))[:max_panels] if n > max_panels else np.arange(n)
    fig, axes = panel_grid(len(order))
    for ax, j in zip(axes.ravel(), order):
        middle = obs.baseline[:, j] if obs.baseline is not None else 0.0  # the band around the baseline
        ax.fill_between(t, middle - obs.threshold[:, j], middle + obs.threshold[:, j], color="#d9e6f2", lw=0,
                        label="threshold")
        ax.plot(t, obs.r[:, j], color="#1f4e79", lw=0.9, label="residual r")
        for e in obs.events:
            ax.axvspan(e.start - obs.t[0], e.end - obs.t[0], color="#f4b183", alpha=0.5, lw=0)
        ax.set_ylabel(obs.dof_names[j], fontsize=8, rotation=0, ha="right", va="center")
        ax.tick_params(labelsize=7)
    title = f"momentum observer, bandwidth {obs.bandwidth[0]:g} 1/s: {len(obs.events)} event{'s' if len(obs.events) != 1 else ''}"
    if n > max_panels:
        title += f" ({max_panels} of {n} DoF, largest first)"
    return finish_panels(fig, axes, len(order), title, fmt)
