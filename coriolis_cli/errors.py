"""Typed exceptions: the library raises these, the CLI maps them to one-line messages.

Exit codes used by the CLI: 2 for bad input (any ``InputError``), 1 for a failed check.
"""


class CoriolisError(Exception):
    """Base class of every error coriolis raises on purpose.

    Derives from `Exception`. Every error the library raises deliberately is one of its subclasses,
    so ``except CoriolisError`` catches bad input and failed checks while letting programming errors
    through. The ``coriolis`` command prints such an error as one line (its message, then its hint)
    and exits with its `exit_code`: 2 for bad input ([InputError][coriolis_cli.InputError] and its
    subclasses), 1 for a failed check ([CheckFailed][coriolis_cli.CheckFailed]).

    Parameters
    ----------
    message : str, optional
        What went wrong, in one line.
    hint : str or None, optional
        What a command-line user can do about it (an option to pass). It is kept out of the message,
        which speaks of the Python API only; the command line prints it after the message.

    Attributes
    ----------
    hint : str or None
        The hint given, or None.
    exit_code : int
        The exit status of the ``coriolis`` command when this error ends it: 2 (bad input), 1 for
        [CheckFailed][coriolis_cli.CheckFailed].

    Examples
    --------
    >>> import coriolis_cli as cc
    >>> try:
    ...     cc.load_robot("serial:0")
    ... except cc.CoriolisError as e:
    ...     print(type(e).__name__, e.exit_code)
    SpecError 2
    """

    exit_code = 2

    def __init__(self, message: str = "", hint: str | None = None):
        super().__init__(message)
        self.hint = hint


class InputError(CoriolisError):
    """Raised when something the user gave cannot be used: a robot, a state, an option or a path.

    Derives from [CoriolisError][coriolis_cli.CoriolisError]; the ``coriolis`` command exits with
    code 2. Its subclasses say what was wrong: [ModelError][coriolis_cli.ModelError] (a robot
    description, and [SpecError][coriolis_cli.SpecError] for a generated-robot spec),
    [StateError][coriolis_cli.StateError] (a state or numeric argument),
    [SizeError][coriolis_cli.SizeError] (a result too large to hold),
    [OutputError][coriolis_cli.OutputError] (an output file) and
    [SingularMassMatrixError][coriolis_cli.SingularMassMatrixError] (M⁻¹ undefined). A recording that
    cannot be read or does not fit the robot ([load_recording][coriolis_cli.load_recording]) raises
    an InputError too.

    Examples
    --------
    >>> import coriolis_cli as cc
    >>> try:
    ...     cc.set_num_threads(0)
    ... except cc.InputError as e:
    ...     print(type(e).__name__, e.exit_code)
    StateError 2
    """


class ModelError(InputError):
    """Raised when a robot description is missing, malformed or physically inconsistent.

    [load_robot][coriolis_cli.load_robot] raises it for a file that does not exist or cannot be
    parsed, a description that is not one tree, options that do not apply to the robot, and (with
    ``strict=True``) inertias that no rigid body has or joints that move no mass. Functions that
    need something the robot lacks raise it too, such as [to_mujoco][coriolis_cli.to_mujoco] for a
    robot not loaded from MJCF. Derives from [InputError][coriolis_cli.InputError]; the ``coriolis``
    command exits with code 2.

    Examples
    --------
    >>> import coriolis_cli as cc
    >>> try:
    ...     cc.load_robot("missing.urdf")
    ... except cc.ModelError as e:
    ...     print(e)
    missing.urdf: no such file ...
    """


class SpecError(ModelError):
    """Raised when a generated-robot spec such as ``"quadruped:20"`` is not valid.

    A spec is ``TOPOLOGY:DOF`` or ``TOPOLOGY:DOF:SEED`` with a topology among ``serial``, ``binary``,
    ``biped`` and ``quadruped``, a positive number of DoF and a non-negative seed. Derives from
    [ModelError][coriolis_cli.ModelError]; the ``coriolis`` command exits with code 2.

    Examples
    --------
    >>> import coriolis_cli as cc
    >>> try:
    ...     cc.load_robot("serial:0")
    ... except cc.SpecError as e:
    ...     print(e)
    'serial:0': the number of DoF must be positive, got 0
    """


class StateError(InputError):
    """Raised when a state or a numeric argument is malformed.

    A configuration, velocity, acceleration or torque of the wrong length or shape, with a NaN or
    an infinite entry, text instead of numbers, or an unknown DoF name; also inertial parameters of
    the wrong length, an observer's bandwidth or time step out of range, and a thread count out of
    range. The message names the argument and, where one entry is at fault, its DoF. Derives from
    [InputError][coriolis_cli.InputError]; the ``coriolis`` command exits with code 2.

    Examples
    --------
    >>> import coriolis_cli as cc
    >>> robot = cc.load_robot("panda")
    >>> try:
    ...     cc.mass_matrix(robot, [0.0, 0.0, 0.0])
    ... except cc.StateError as e:
    ...     print(e)
    q has 3 values per state, the robot needs 7 (panda_joint1, ...)
    """


class RecordingError(InputError):
    """Raised when a recording cannot be read or does not fit the robot.

    A file that is not a recording or is corrupt, a topic or a joint of the robot that it lacks, no
    samples, or an option that does not fit it (a window longer than the recording, say).
    [load_recording][coriolis_cli.load_recording] and
    [stream_recording][coriolis_cli.stream_recording] raise it. Derives from
    [InputError][coriolis_cli.InputError]; the ``coriolis`` command exits with code 2.

    Examples
    --------
    >>> import coriolis_cli as cc
    >>> robot = cc.load_robot("panda")
    >>> with open("run.npz", "wb") as f:  # not a recording
    ...     _ = f.write(b"not a zip archive")
    >>> try:
    ...     cc.load_recording("run.npz", robot)
    ... except cc.RecordingError as e:
    ...     print(type(e).__name__)
    RecordingError
    """


class OutputError(InputError):
    """Raised by the ``coriolis`` commands when an output file cannot be written.

    The path exists and ``--force`` was not given, its directory does not exist or cannot be
    written, it is not a regular file, it names an input of the run or is given twice, or its
    extension names no format the command writes. Every output path is checked before any work is
    done. Derives from [InputError][coriolis_cli.InputError]; the command exits with code 2 and
    leaves no file behind.

    Examples
    --------
    >>> import subprocess, sys
    >>> open("out.json", "w").close()
    >>> run = subprocess.run([sys.executable, "-m", "coriolis_cli.cli",
    ...                       "compute", "panda", "-o", "out.json"],
    ...                      capture_output=True, text=True)
    >>> run.returncode, run.stderr.strip()
    (2, 'error: out.json: already exists (pass --force to overwrite)')
    """


class SizeError(InputError):
    """Raised when a requested result would be too large to hold in memory.

    Γ, ∂C/∂q and the second-order derivatives hold nv³ doubles per state: above 256 MiB they are
    refused unless ``force=True`` is passed (the ``coriolis`` commands: ``--allow-large``), and any
    allocation larger than the memory the machine has available is refused before it is made. The
    error is raised before anything is computed; its ``hint`` says how to proceed (``force=True``,
    or [christoffel_largest][coriolis_cli.christoffel_largest] for Γ's largest entries). Derives
    from [InputError][coriolis_cli.InputError]; the ``coriolis`` command exits with code 2.

    Examples
    --------
    >>> import textwrap
    >>> import numpy as np
    >>> import coriolis_cli as cc
    >>> robot = cc.load_robot("serial:400")
    >>> try:
    ...     cc.christoffel(robot, np.zeros(robot.nq))
    ... except cc.SizeError as e:
    ...     print(textwrap.fill(str(e)))
    Γ of this robot holds nv³ = 400³ = 64,000,000 doubles (488 MiB), above
    the 256 MiB limit
    """


class SingularMassMatrixError(InputError):
    """Raised when M(q) is singular, so that what needs M⁻¹ is not defined.

    Forward dynamics, its derivatives and simulation need M⁻¹; when some joints move no mass (the
    links they carry have no mass or inertia about their axes), M is singular and they raise this
    error instead of returning infinities. Loading such a robot only warns
    ([ModelWarning][coriolis_cli.ModelWarning]), since M, C and Γ are still defined. Locking the
    joints named (``load_robot(..., lock=...)``) or giving their links an inertia makes the robot
    computable. Derives from [InputError][coriolis_cli.InputError]; the ``coriolis`` command exits
    with code 2.

    Parameters
    ----------
    message : str, optional
        What went wrong, in one line.
    joints : tuple of str, optional
        The joints that move no mass.
    hint : str or None, optional
        What a command-line user can do about it.

    Attributes
    ----------
    joints : tuple of str
        The names of the joints that move no mass.
    hint : str or None
        What a command-line user can do about it.

    Examples
    --------
    >>> import warnings
    >>> import coriolis_cli as cc
    >>> from pathlib import Path
    >>> _ = Path("arm.yaml").write_text(  # link b, carried by joint j2, has no mass
    ...     "{name: arm, links: [{name: base},"
    ...     " {name: a, mass: 1.0, com: [0.5, 0, 0],"
    ...     " inertia: [0.01, 0, 0, 0.1, 0, 0.1]}, {name: b}],"
    ...     " joints: [{name: j1, type: continuous, parent: base, child: a,"
    ...     " axis: [0, 0, 1]},"
    ...     " {name: j2, type: continuous, parent: a, child: b, xyz: [1, 0, 0],"
    ...     " axis: [0, 0, 1]}]}")
    >>> with warnings.catch_warnings():
    ...     # "M is singular: joint 'j2' moves no mass"
    ...     warnings.simplefilter("ignore", cc.ModelWarning)
    ...     robot = cc.load_robot("arm.yaml")
    >>> try:
    ...     cc.forward_dynamics(robot, [0.0, 0.0], [0.0, 0.0], [1.0, 0.0])
    ... except cc.SingularMassMatrixError as e:
    ...     print(e.joints)
    ('j2',)
    """

    def __init__(self, message: str = "", joints: tuple[str, ...] = (), hint: str | None = None):
        super().__init__(message, hint)
        self.joints = tuple(joints)


class MissingToolError(CoriolisError):
    """A tool a feature needs is not installed (CasADi for code generation, a C compiler to
    build generated code); the message says how to get it (exit code 2)."""


class CheckFailed(CoriolisError):
    """Raised when a verification check does not meet its tolerance.

    ``coriolis codegen`` raises it when the generated C code differs from the engine by more than
    its tolerance. Derives from [CoriolisError][coriolis_cli.CoriolisError], not from
    [InputError][coriolis_cli.InputError]: the input was fine, the result was not. The ``coriolis``
    command exits with code 1 and keeps the report it wrote.

    Examples
    --------
    >>> import coriolis_cli as cc
    >>> try:
    ...     raise cc.CheckFailed(
    ...         "the generated code differs from the engine by more than 1e-12")
    ... except cc.CoriolisError as e:
    ...     print(e.exit_code, isinstance(e, cc.InputError))
    1 False
    """

    exit_code = 1


class Note(UserWarning):
    """What a command chose or used where the user did not say (how a recording was differentiated,
    the friction a robot file gives), said once in one line; the command line prints it as a note
    after the output of a run that succeeds."""


class RecordingNote(Note):
    """Warned when reading a recording, to say how its missing derivatives were taken.

    Velocities a recording lacks, and the accelerations asked for (``accelerations=True``), are
    differentiated by a cubic fitted on the stamps over a window.
    [load_recording][coriolis_cli.load_recording] and
    [stream_recording][coriolis_cli.stream_recording] say which, once per recording and in one line:
    the window in samples and in seconds, the sample rate, the −3 dB frequency of the smoothing, and
    the parameter that sets it (``window=``). It is information, not a problem: the recording was
    read as documented. It points at the line that read the recording; Python shows it once per
    recording and line, and ``warnings.simplefilter("ignore", cc.RecordingNote)`` silences it.
    Derives from `UserWarning`; the ``coriolis`` commands print it as a one-line note after their
    output, naming their option (``--window``).

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> import coriolis_cli as cc
    >>> robot = cc.load_robot("planar_2link")
    >>> t = np.linspace(0.0, 2.0, 201)  # 2 s at 100 Hz of positions, no velocities
    >>> np.savez("run.npz", t=t, q=np.stack([np.sin(t), np.cos(t)], axis=1),
    ...          dof_names=robot.dof_names, config_names=robot.config_names)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     rec = cc.load_recording("run.npz", robot)
    >>> print(caught[0].category.__name__, caught[0].message)
    RecordingNote run.npz: q̇ fitted on the stamps: cubic over 11 samples
    (0.11 s at 100 Hz; −3 dB at 9.88 Hz; window= sets it)
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", cc.RecordingNote)  # nothing is said
    ...     rec = cc.load_recording("run.npz", robot, window="50ms")
    >>> rec.qd.shape
    (201, 2)
    """


class ModelWarning(UserWarning):
    """Warned when a robot can be computed but something about it is wrong.

    [load_robot][coriolis_cli.load_robot] warns, once per robot and listing every case, about links
    whose inertia no rigid body has (not positive semi-definite, or principal moments breaking the
    triangle inequality), joints that move no mass (M singular), and parts of a file that are left
    out or ignored (an MJCF model's contacts, a mimic of a joint that does not exist, loop closures
    opened with ``loops="open"``). The robot is computed as given. ``strict=True`` turns the inertia
    and mass problems into a [ModelError][coriolis_cli.ModelError]. Derives from `UserWarning`; the
    ``coriolis`` command prints it as a one-line warning and goes on.

    Examples
    --------
    >>> import warnings
    >>> import coriolis_cli as cc
    >>> from pathlib import Path
    >>> _ = Path("rod.yaml").write_text(
    ...     "{name: rod, links: [{name: base},"
    ...     " {name: rod, mass: 1.0, inertia: [0.001, 0, 0, 0.001, 0, 0.01]}],"
    ...     " joints: [{name: hinge, type: continuous, parent: base, child: rod,"
    ...     " axis: [0, 1, 0]}]}")
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     # principal moments 0.001, 0.001, 0.01: a + b < c
    ...     robot = cc.load_robot("rod.yaml")
    >>> [w.category.__name__ for w in caught]
    ['ModelWarning']
    """
