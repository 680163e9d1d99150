"""Typed exceptions: the library raises these, the CLI maps them to one-line messages.

Exit codes used by the CLI: 2 for bad input (any ``InputError``), 1 for a failed check.
"""


class CoriolisError(Exception):
    """Base class of every error the library raises on purpose.

    ``hint``: what a command-line user can do about it (a flag to pass), kept out of the message so
    that the library speaks of its own API only; the CLI prints it after the message."""

    exit_code = 2

    def __init__(self, message: str = "", hint: str | None = None):
        super().__init__(message)
        self.hint = hint


class InputError(CoriolisError):
    """The user gave something we cannot use (exit code 2)."""


class ModelError(InputError):
    """A robot description is missing, malformed or physically inconsistent."""


class SpecError(ModelError):
    """A generated-topology spec such as ``quadruped:20`` is not valid."""


class StateError(InputError):
    """A configuration or velocity vector is malformed (length, NaN, unknown DoF name...)."""


class RecordingError(InputError):
    """A recording cannot be read or does not fit the robot (a corrupt file, a missing topic or
    joint, no samples)."""


class OutputError(InputError):
    """An output file cannot be written (exists without --force, unwritable directory...)."""


class SizeError(InputError):
    """A requested result would be too large to hold in memory (Γ holds nv³ doubles)."""


class SingularMassMatrixError(InputError):
    """M(q) is singular, so what needs M⁻¹ (forward dynamics, simulation) is not defined: some
    joints move no mass. ``joints`` names them; locking them (``load_robot(..., lock=...)``)
    makes the robot computable."""

    def __init__(self, message: str = "", joints: tuple[str, ...] = (), hint: str | None = None):
        super().__init__(message, hint)
        self.joints = tuple(joints)


class MissingToolError(CoriolisError):
    """A tool a feature needs is not installed (CasADi for code generation, a C compiler to
    build generated code); the message says how to get it (exit code 2)."""


class CheckFailed(CoriolisError):
    """A verification check did not meet its tolerance (exit code 1)."""

    exit_code = 1


class Note(UserWarning):
    """What a command chose or used where the user did not say (how a recording was differentiated,
    the friction a robot file gives), said once in one line; the command line prints it as a note
    after the output of a run that succeeds."""


class ModelWarning(UserWarning):
    """A robot can be computed but something about it is wrong (inertias that no rigid body has,
    a joint that moves no mass, an ignored attribute). ``strict=True`` turns the inertia and mass
    problems into :class:`ModelError`."""
