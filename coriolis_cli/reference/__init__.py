"""The algorithms as short, readable reference code that runs on NumPy floats and on CasADi
symbols alike (spatial_v2's style: one algorithm per module, the paper's listing line by line).

They are not the engine: the compiled kernels (engine/) are what users call. This package earns
its place twice: the tests hold the kernels against it, and ``coriolis codegen`` traces it with
CasADi ``SX`` symbols to write C code (codegen/). Everything is in the computation frame (world
axes; the base frame for a free root), angular-first, as docs/algorithms.md
(Spatial conventions) fixes it.
"""

from .christoffel import christoffel
from .coriolis import coriolis_matrix
from .kinematics import Backend, NUMERIC, Tree
from .rnea import inverse_dynamics
from .slotine_li import slotine_li

__all__ = ["Backend", "NUMERIC", "Tree", "christoffel", "coriolis_matrix", "inverse_dynamics", "slotine_li"]
