"""The dynamics engine: the C++ core (engine/core, compiled when the package is built, bound in
engine/bindings.cpp as ``engine.compiled``) and the one calling layer over it: the public functions
described in ``api``, made and sent to their kernels by ``algorithms``, with ``coordinates`` for
robots in other coordinates. The CLI imports it lazily so that ``coriolis --help`` and ``coriolis info``
start without it.
"""

from . import coordinates  # noqa: F401 (registers each function's form for robots in other coordinates)
from .algorithms import NAMED  # every public function by its key (Names)
from .api import *  # api.__all__: every public function, described there
from .api import (GAMMA_MAX_BYTES, check_gamma_size, check_memory, gamma_bytes, largest_entries,  # noqa: F401
                  positive_definite, singular_mass_matrix)  # the package's own, not public
from .calls import get_num_threads, set_num_threads, single_state  # noqa: F401 (single_state: the package's own)
from .conventions import FACTORIZATIONS, MomentumRegressors
from .coordinates import integrate, random_configuration

__all__ = api.__all__ + ["MomentumRegressors", "get_num_threads", "set_num_threads", "integrate", "random_configuration"]
