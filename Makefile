# Two entry points for a new user: `make demo` and `make test`.
PYTHON ?= python3
CXX    ?= c++
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# the engine's C++ core, compiled by the install: a change to it installs again
CORE   := CMakeLists.txt coriolis_cli/engine/bindings.cpp $(wildcard coriolis_cli/engine/core/*.hpp)

.PHONY: demo test bench clean compiler sanitize docs

# the install compiles the engine's core: say what is missing before pip says it at length
compiler:
	@printf '#include <optional>\nint main() { std::optional<int> x; return x ? 1 : 0; }\n' \
	  | $(CXX) -std=c++17 -x c++ - -o /dev/null 2>/dev/null \
	  || { echo "coriolis builds a C++17 core: install a C++17 compiler (Debian/Ubuntu: apt-get install g++; macOS: xcode-select --install), or set CXX"; exit 1; }

$(STAMP): pyproject.toml $(CORE) | compiler
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	CXX='$(CXX)' $(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/coriolis info robots/panda.urdf
	$(BIN)/coriolis compute robots/panda.urdf --random --seed 1 --what M,C
	$(BIN)/coriolis verify robots/panda.urdf --trials 20

# two workers, one test file each: most of a fresh clone's run is compiling the kernels, which two
# processes do side by side (cold cache: about 2 min instead of 4 on 2 cores)
test: $(STAMP)
	$(BIN)/python -m pytest -n 2 --dist loadfile

# The runs behind BENCHMARKS.md (about 20 minutes); run them on a quiet machine.
bench: $(STAMP)
	$(BIN)/coriolis bench --table1 --peers
	$(BIN)/coriolis bench robots/panda.urdf --what C,Gamma,fd,slotine --peers --batch --codegen
	$(BIN)/coriolis bench robots/quadruped.urdf robots/humanoid.urdf --floating-base --what C,Gamma,fd,slotine --peers --batch
	$(BIN)/coriolis bench --dofs 5:40:5 --plot docs/bench-sweep.png --force
	$(BIN)/coriolis bench --topology serial --dofs 25:300:25
	$(BIN)/coriolis bench --topology binary --dofs 25:300:25
	$(BIN)/coriolis bench --table2

# The engine's tests against a core built with AddressSanitizer and UBSan (.ci/sanitize).
sanitize: $(STAMP)
	CXX='$(CXX)' bash .ci/sanitize

clean:
	rm -rf $(VENV) build *.egg-info

# The documentation site (MkDocs), built strictly into build/site: warnings are errors.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict
