"""Recordings in the robot's coordinates: joints matched by name, stamps and NaN cleaned, missing
velocities and accelerations differentiated, a floating base's state added. Streams: bounded
blocks in, bounded chunks out.

Each mess of a real recording has one answer:
- a message names joints in any order, and any subset: matched by name;
- joints the robot lacks are ignored, one warning names them; joints it needs and the recording
  lacks are refused by name (lock them: --lock), except a mimic joint whose leader is recorded
  (it follows its leader);
- a stamp equal to or before the previous one is dropped and counted (one warning), never
  reordered; a sample that repeats the previous one's values exactly under a new stamp (a sample
  logged twice) is dropped and counted; a sample with a NaN (or no value) where a value is
  needed is dropped and counted, or refused with ``strict``; a row of a table that holds no joint
  value at all (another topic's row in a PlotJuggler export) is not a sample;
- missing velocities are the derivative of the positions, and the accelerations τ needs the
  derivative of the velocities (measured or differentiated): a cubic fitted by least squares on
  the actual stamps of a window around each sample (Savitzky–Golay where the stamps are evenly
  spaced, and right where they jitter or samples were dropped). The window is a duration
  (``window`` seconds, DEFAULT_WINDOW) or a number of samples (an int), the same at 100 Hz and
  1 kHz; the first and last half window are fitted by the edge window's cubic; results are
  delayed by half a window while streaming, never shifted. What was chosen is said in one line, a
  RecordingNote (information, not a problem: Python filters it by its class, the CLI prints it as
  a note);
- a floating base's pose and body-frame twist come from an Odometry topic (zero-order hold: the
  latest odometry sample at or before each joint sample) or from columns; without them the
  recording is refused.
"""

from __future__ import annotations

import os
import sys
import warnings
from dataclasses import dataclass

import numpy as np

from ..errors import ModelWarning, RecordingError, RecordingNote
from .sources import Block

DEFAULT_WINDOW = 0.1  # s: the cubic's −3 dB near 10 Hz, whatever the sample rate
POLYORDER = 3
RATE_SAMPLES = 201  # the median step of the first this many samples fixes the window's length in samples


def said(name: str, value) -> str:
    """An option and its value as its caller gave it: ``window='abc'`` for a parameter (a ``name``
    ending with ``=``), ``--window abc`` for a command-line option."""
    return f"{name}{value!r}" if name.endswith("=") else f"{name} {value}"


def parse_window(value, name: str = "window=") -> tuple[float | None, int | None]:
    """``window`` as (seconds, None) or (None, samples): a float is seconds, an int samples (odd, at
    least 5); text takes a unit (``0.1s``, ``100ms``) or is a whole number of samples. An error
    names the option as ``name`` does: the parameter (``window=``) for the library, the
    command's option (``--window``) for the command line (see :func:`said`)."""
    if isinstance(value, str):
        text = value.strip().lower().replace(" ", "")
        try:
            if text.endswith("ms"):
                value = float(text[:-2]) * 1e-3
            elif text.endswith("s"):
                value = float(text[:-1])
            elif text.isdigit():
                value = int(text)
            else:
                raise ValueError
        except ValueError:
            raise RecordingError(f"{said(name, value)}: give a duration with its unit (0.1s, 100ms) or a number of "
                                 "samples (odd, at least 5)") from None
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise RecordingError(f"{said(name, value)}: a duration in seconds or a number of samples")
    if isinstance(value, (int, np.integer)):
        if value < 5 or value % 2 == 0:
            raise RecordingError(f"{said(name, value)}: a window of samples is an odd number, at least 5")
        return None, int(value)
    if not (np.isfinite(value) and value > 0):
        raise RecordingError(f"{said(name, value)}: a duration is positive and finite")
    return float(value), None


# A note says how to change what it reports in the caller's terms: the parameter for the library,
# the command's option on the command line (cli's _show_warning swaps one for the other).
WINDOW_SETS_IT = ("; window= sets it)", "; --window sets it)")


def for_command_line(note: str) -> str:
    """A RecordingNote's text as the command line says it: its option, not the parameter."""
    python, cli = WINDOW_SETS_IT
    return note[: -len(python)] + cli if note.endswith(python) else note


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # coriolis_cli/


def caller_level() -> int:
    """The ``stacklevel`` that makes a warning issued by the caller of this function point at the
    first frame outside the package (the user's line that read the recording), not at the library's
    own lines (a generator's frames are those that resumed it)."""
    frame, level = sys._getframe(1), 1
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    return level


def cutoff_hz(samples: int, dt: float) -> float:
    """The −3 dB frequency of the cubic's smoothing over ``samples`` evenly spaced ``dt`` apart."""
    from scipy.signal import freqz, savgol_coeffs

    f, h = freqz(savgol_coeffs(samples, POLYORDER), worN=4096, fs=1.0 / dt)
    below = np.flatnonzero(np.abs(h) < 2**-0.5)
    return float(f[below[0]]) if below.size else float(f[-1])


@dataclass
class Samples:
    """A chunk of a recording in the tree's coordinates."""

    t: np.ndarray  # (k,)
    q: np.ndarray  # (k, nq)
    qd: np.ndarray  # (k, nv)
    qdd: np.ndarray | None  # (k, nv), where asked for
    effort: np.ndarray | None  # (k, nv), where recorded (NaN for DoF without it)


class Aligner:
    """Blocks of one recording in, Samples of ``tree`` (a RobotModel) out (see the module)."""

    def __init__(self, tree, path: str, strict: bool = False, window=None, need_qdd: bool = False, calibration=None):
        # window: None (DEFAULT_WINDOW, shortened to a recording shorter than it), or the user's own
        # (parse_window refuses it naming window=; the CLI checks its --window before it gets here)
        self.explicit = window is not None
        self.seconds, self.window = parse_window(DEFAULT_WINDOW if window is None else window)  # samples: once the rate is known
        self.shortened = False
        self.calibration = calibration  # (scale, offset) per DoF: τ = scale · effort + offset (recordings.calibration)
        self.tree, self.path, self.strict, self.need_qdd = tree, path, strict, need_qdd
        self.joints, self.base, self.mimics = [], None, []
        for i, body in enumerate(tree.bodies):
            j = body.joint
            qs, vs = int(tree.q_start[i]), int(tree.v_start[i])
            if j.type in ("free", "floating") and body.parent < 0:
                self.base = (qs, vs)
            elif j.nq == 1:
                self.joints.append((j.name, qs, vs, j.mimic))
            else:
                raise RecordingError(f"{path}: joint '{j.name}' is {j.type}; a recording carries 1-DoF joints and a "
                                     "floating base only", hint="lock it (--lock)")
        self.unknown: set = set()
        self.dropped_stamps = self.dropped_nan = self.repeated = 0
        self.last_values = None  # the last kept sample's values: a repeat of them is a sample logged twice
        self.fitted = False  # whether anything was differentiated (and so the note of how)
        self.last_t = -np.inf
        self.samples = 0
        self.velocity_measured = None
        self.effort_recorded = False
        self.dt = None
        self.pending = None  # rows [t, q, q̇, effort] held back until their window is complete
        self.context = 0  # how many of them left already (the window before the next one)
        self.started = False

    # ---- one block in the tree's order --------------------------------------------------------
    def _columns(self, block: Block):
        index = {n: k for k, n in enumerate(block.names)}
        self.unknown.update(n for n in block.names if n not in {j[0] for j in self.joints})
        k = len(block.t)
        nq, nv = self.tree.nq, self.tree.nv
        q, qd, eff = np.full((k, nq), np.nan), np.full((k, nv), np.nan), np.full((k, nv), np.nan)
        pos, vel, effort = (block.values.get(x) for x in ("position", "velocity", "effort"))
        if pos is None:
            raise RecordingError(f"{self.path}: the joint states carry no positions")
        missing = []
        for name, qs, vs, mimic in self.joints:
            c = index.get(name)
            if c is None:
                if mimic is not None and mimic.joint in index:
                    continue  # filled from its leader below
                missing.append(name)
                continue
            q[:, qs] = pos[:, c]
            if vel is not None:
                qd[:, vs] = vel[:, c]
            if effort is not None:
                eff[:, vs] = effort[:, c]
        if missing:
            shown = ", ".join(f"'{n}'" for n in missing[:6]) + (", ..." if len(missing) > 6 else "")
            raise RecordingError(f"{self.path}: the recording lacks {len(missing)} joint{'s' if len(missing) > 1 else ''} "
                                 f"the robot needs ({shown})", hint="lock them with --lock NAME=VALUE")
        for name, qs, vs, mimic in self.joints:  # mimic joints the recording leaves out follow their leaders
            if name not in index and mimic is not None:
                x = pos[:, index[mimic.joint]]
                coefficients = np.asarray(mimic.coefficients[::-1], dtype=float)  # highest degree first
                q[:, qs] = np.polyval(coefficients, x)
                if vel is not None:
                    qd[:, vs] = np.polyval(np.polyder(coefficients), x) * vel[:, index[mimic.joint]]
        if self.base is not None:
            if block.base is None:
                raise RecordingError(f"{self.path}: a floating-base robot needs the base's pose and twist",
                                     hint="--base-topic names a nav_msgs/msg/Odometry topic (or the columns' prefix)")
            qs, vs = self.base
            q[:, qs : qs + 7] = block.base[:, 0:7]
            qd[:, vs : vs + 6] = block.base[:, 7:13]
        if self.calibration is not None and effort is not None:
            scale, offset = self.calibration
            eff = eff * scale + offset
        return q, qd, eff, vel is not None, effort is not None

    def feed(self, block: Block) -> Samples | None:
        q, qd, eff, has_velocity, has_effort = self._columns(block)
        t = np.asarray(block.t, float)
        jq = [qs for _, qs, _, _ in self.joints]
        # a table's row of another topic (no joint value at all) is not a sample
        rows = ~np.all(np.isnan(q[:, jq]), axis=1) if jq else np.ones(len(t), bool)
        if self.velocity_measured is None and rows.any():  # decided by the first block that holds a sample:
            # a table's first blocks may be another topic's rows alone, whose velocity is no one's
            self.velocity_measured = bool(has_velocity and not np.all(np.isnan(qd[rows][:, [vs for *_, vs, _ in self.joints]]))) \
                if self.joints else True
            self.effort_recorded = has_effort
        needed = np.concatenate([q, qd], axis=1) if self.velocity_measured else q
        bad = rows & np.any(~np.isfinite(needed), axis=1)
        if self.base is not None:
            bad |= rows & np.any(~np.isfinite(q[:, self.base[0] : self.base[0] + 7]), axis=1)
        if bad.any():
            if self.strict:
                first = int(np.flatnonzero(bad)[0])
                raise RecordingError(f"{self.path}: a sample with a missing or NaN value at t = {t[first]:.9g} s "
                                     "(--strict refuses them)")
            self.dropped_nan += int(bad.sum())
        # stamps must rise: one equal to or before the last kept one is dropped, never reordered. A
        # dropped stamp never exceeds the running maximum, so that maximum is the last kept stamp
        order = np.flatnonzero(rows & ~bad)
        stamps = t[order]
        last = np.fmax.accumulate(np.concatenate([[self.last_t], stamps]))  # fmax: a NaN stamp is dropped
        rising = stamps > last[:-1]
        ok = np.zeros(len(t), bool)
        ok[order[rising]] = True
        self.dropped_stamps += int(len(stamps) - rising.sum())
        self.last_t = float(last[-1])
        t, q, qd, eff = t[ok], q[ok], qd[ok], eff[ok]
        t, q, qd, eff = self._drop_repeats(t, q, qd, eff)
        if self.base is not None:  # unit quaternions, as the kernels would normalize them
            qs = self.base[0]
            norm = np.linalg.norm(q[:, qs + 3 : qs + 7], axis=1, keepdims=True)
            q[:, qs + 3 : qs + 7] /= np.where(norm > 0, norm, 1.0)
        self.samples += len(t)
        return self._differentiate(t, q, qd, eff, final=False)

    def _drop_repeats(self, t, q, qd, eff):
        """Samples whose values (q, and q̇ and effort where recorded) equal the previous kept
        sample's exactly, under a new stamp: logged twice, they would make a step of zero followed
        by a double one. Dropped and counted; the fit on the stamps spans the gap."""
        parts = [q] + ([qd] if self.velocity_measured else []) + ([eff] if self.effort_recorded else [])
        values = np.nan_to_num(np.concatenate(parts, axis=1), nan=np.inf)  # NaN (never recorded) equals NaN
        if not len(values):
            return t, q, qd, eff
        previous = np.concatenate([values[:1] if self.last_values is None else self.last_values, values[:-1]])
        repeat = np.all(values == previous, axis=1)
        if self.last_values is None:
            repeat[0] = False
        keep = ~repeat
        # a run of repeats compares each with the sample kept before the run: the same values
        self.repeated += int(repeat.sum())
        self.last_values = values[-1:].copy()
        return t[keep], q[keep], qd[keep], eff[keep]

    # ---- Savitzky–Golay, streaming ------------------------------------------------------------
    # Rows are [t, q, q̇, effort]. A row leaves once the half window after it has arrived; the
    # buffer keeps the last window − 1 rows that left as context (``self.context`` of them), so
    # that the last rows of the recording can be fitted by the edge polynomial of its last window.
    def _differentiate(self, t, q, qd, eff, final: bool) -> Samples | None:
        nq, nv = self.tree.nq, self.tree.nv
        if self.velocity_measured and not self.need_qdd:
            return Samples(t, q, qd, None, eff if self.effort_recorded else None) if len(t) else None
        rows = np.concatenate([t[:, None], q, qd, eff], axis=1)
        buf = rows if self.pending is None else np.concatenate([self.pending, rows])
        n, lo = len(buf), self.context
        if self.dt is None:  # the median step of the first samples: the same however the stream is cut
            if n < max(RATE_SAMPLES, self.window or 0) and not final:
                self.pending = buf
                return None
            steps = np.diff(buf[:RATE_SAMPLES, 0])
            self.dt = float(np.median(steps)) if len(steps) else 1.0
            if self.window is None:  # the duration's odd number of samples nearest it, at least 5
                self.window = max(5, 2 * int(round(self.seconds / self.dt / 2)) + 1)  # D/dt steps, D/dt + 1 samples
        w, h = self.window, self.window // 2
        if not self.started and n < w and not final:
            self.pending = buf
            return None
        hi = n if final else n - h
        if hi <= lo:
            self.pending = buf
            return None
        out = buf[lo:hi]
        T, Q, QD, E = out[:, 0], out[:, 1 : 1 + nq], out[:, 1 + nq : 1 + nq + nv].copy(), out[:, 1 + nq + nv :]
        angles, rates = self._angle_columns(), self._angle_velocity_columns()
        positions, velocities = buf[:, 1 : 1 + nq][:, angles], buf[:, 1 + nq : 1 + nq + nv]
        QDD = None
        self.fitted = True
        stamps = buf[:, 0]
        if not self.velocity_measured:
            QD[:, rates] = self._savgol(stamps, positions, 1, lo, hi, final)
        if self.need_qdd:
            if self.velocity_measured:
                QDD = self._savgol(stamps, velocities, 1, lo, hi, final)
            else:
                QDD = np.full_like(QD, np.nan)
                QDD[:, rates] = self._savgol(stamps, positions, 2, lo, hi, final)
                if self.base is not None:
                    vs = self.base[1]
                    QDD[:, vs : vs + 6] = self._savgol(stamps, velocities[:, vs : vs + 6], 1, lo, hi, final)
        self.started = True
        keep = min(hi, w - 1)  # context: the last window − 1 rows that left
        self.pending, self.context = (None, 0) if final else (buf[hi - keep :], keep)
        return Samples(T, Q, QD, QDD, E if self.effort_recorded else None)

    def _angle_columns(self):
        return [qs for _, qs, _, _ in self.joints]

    def _angle_velocity_columns(self):
        return [vs for _, _, vs, _ in self.joints]

    def _savgol(self, T, X, deriv, lo, hi, final):
        """The derivative at rows lo..hi of the buffered rows X, stamped T: at each row, the cubic
        fitted by least squares to the window of ``self.window`` rows centred on it, on the rows'
        own stamps; the recording's first and last half windows take the edge window's cubic
        (scipy's mode 'interp'). On evenly spaced stamps this is the Savitzky–Golay filter."""
        n, w = len(X), self.window
        if n < w:  # only when the whole recording is shorter than the window
            if self.explicit or n < POLYORDER + 2:
                raise RecordingError(f"{self.path}: the differentiation window of {w} samples ({w * self.dt:.3g} s) is "
                                     f"longer than the recording's {n} samples",
                                     hint="choose a shorter --window" if n >= POLYORDER + 2 else None)
            self.window, self.shortened = n if n % 2 else n - 1, True  # the default, fitted to what there is
            w = self.window
        h = w // 2
        from ..engine.compiled import local_polynomial  # the loop over rows, compiled (engine/core/local_fit.hpp)

        out = np.empty((hi - lo, X.shape[1]))
        scale = max(h * self.dt, 1e-300)  # offsets in half windows: a well-conditioned fit
        if not local_polynomial(np.ascontiguousarray(T, dtype=float), np.ascontiguousarray(X, dtype=float), w, deriv,
                                lo, hi, scale, out):
            raise RecordingError(f"{self.path}: a window of {w} samples holds fewer than 4 distinct stamps; "
                                 "its derivative is not defined", hint="give a longer --window")
        return out

    def note(self) -> str | None:
        """How the derivatives were taken, in one line (None when nothing was differentiated), naming
        the parameter that sets it (the command line names its option: for_command_line)."""
        if not self.fitted or self.dt is None:
            return None
        what = "q̈" if self.velocity_measured else ("q̇ and q̈" if self.need_qdd else "q̇")
        short = ", the whole recording" if self.shortened else ""
        return (f"{self.path}: {what} fitted on the stamps: cubic over {self.window} samples{short} "
                f"({self.window * self.dt:.3g} s at {1.0 / self.dt:,.4g} Hz; −3 dB at "
                f"{cutoff_hz(self.window, self.dt):.3g} Hz{WINDOW_SETS_IT[0]}")

    def finish(self) -> Samples | None:
        """The held-back rows, then one warning per mess met (unknown joints, stamps, NaN)."""
        last = None
        if self.pending is not None and len(self.pending) > self.context:
            nq, nv = self.tree.nq, self.tree.nv
            empty = np.zeros((0,))
            last = self._differentiate(empty, np.zeros((0, nq)), np.zeros((0, nv)), np.zeros((0, nv)), final=True)
        level = caller_level()  # the user's line that read the recording, not the library's
        if self.unknown:
            names = sorted(self.unknown)
            warnings.warn(ModelWarning(f"{self.path}: {len(names)} joint{'s' if len(names) > 1 else ''} the robot lacks, "
                                       f"ignored ({', '.join(names[:6])}{', ...' if len(names) > 6 else ''})"), stacklevel=level)
        if self.dropped_stamps:
            warnings.warn(ModelWarning(f"{self.path}: {self.dropped_stamps:,} sample{'s' if self.dropped_stamps > 1 else ''} "
                                       "with a stamp equal to or before the previous one, dropped"), stacklevel=level)
        if self.repeated:
            warnings.warn(ModelWarning(f"{self.path}: {self.repeated:,} sample{'s' if self.repeated > 1 else ''} repeating "
                                       "the previous one's values exactly under a new stamp (logged twice), dropped"),
                          stacklevel=level)
        if self.dropped_nan:
            warnings.warn(ModelWarning(f"{self.path}: {self.dropped_nan:,} sample{'s' if self.dropped_nan > 1 else ''} with a "
                                       "missing or NaN value, skipped (--strict refuses them)"), stacklevel=level)
        if self.samples == 0:
            raise RecordingError(f"{self.path}: no samples of the robot's joints")
        note = self.note()
        if note:  # information, not a problem: a RecordingNote, which Python users filter by its class
            warnings.warn(RecordingNote(note), stacklevel=level)
        return last
