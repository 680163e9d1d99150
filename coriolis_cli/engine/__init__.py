"""The dynamics engine: the C++ core (engine/core, compiled when the package is built, bound in
engine/bindings.cpp as ``engine.compiled``) and the one calling layer over it: the public functions
described in ``api``, made and sent to their kernels by ``algorithms``, with ``coordinates`` for
robots in other coordinates. The CLI imports it lazily so that ``coriolis --help`` and ``coriolis info``
start without it.
"""

from . import coordinates  # noqa: F401 (registers each function's form for robots in other coordinates)
from .algorithms import NAMED  # every public function by its key (Names)
from .api import *  # api.__all__: every public function, described there
from .calls import get_num_threads, set_num_threads
from .conventions import MomentumRegressors
from .coordinates import integrate, random_configuration
# helpers the package's other modules reach as engine.NAME; not public (not in __all__)
from .api import check_gamma_size, gamma_bytes  # noqa: F401
from .calls import positive_definite, single_state, singular_mass_matrix  # noqa: F401
from .conventions import FACTORIZATIONS  # noqa: F401
from .data import GAMMA_MAX_BYTES, check_memory  # noqa: F401
from .selection import largest_entries  # noqa: F401

__all__ = api.__all__ + ["MomentumRegressors", "get_num_threads", "set_num_threads", "integrate", "random_configuration"]
