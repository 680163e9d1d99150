"""What a robot hands out but the engine computes: its workspaces (``robot.create_data()``), the
solve of closed-loop coordinates and the floating base's velocity transforms.

model/ imports nothing from engine/, as Pinocchio's ``model.hpp`` knows nothing of the algorithms
that use it. The engine provides its makers here when it is imported (``engine/__init__.py``);
the package (``coriolis_cli/__init__.py``) sets ``load_engine``, so that the first robot to need
one imports the engine then, and loading a robot stays without it.
"""

from __future__ import annotations

_provided: dict = {}
load_engine = None  # set by coriolis_cli/__init__.py


def provide(**makers) -> None:
    """The engine's makers by name: create_data, loop_solver, base_transform, base_rate_basis."""
    _provided.update(makers)


def engine(name: str):
    """The engine's maker ``name``, importing the engine on first need."""
    try:
        return _provided[name]
    except KeyError:
        load_engine()
        return _provided[name]
