# dlhack: two commands on a fresh machine with python3 (3.11):
#   make demo   # create .venv, install, train the translator data-parallel on the embedded corpus
#   make test   # the system packages the tests need (as root or with sudo; otherwise one
#               # message says what to install), the same bootstrap, then every test
PYTHON ?= python3
VENV := .venv
TEST_WORKERS ?= 2
BIN := $(VENV)/bin
# reveal.js for offline slides, installed from the npm registry (`make slides`; tests/course)
REVEAL := build/slides/node_modules/reveal.js/dist/reveal.js
# Every install goes through constraints.txt (setuptools<74, numpy<2); Chainer's sdist is built
# against the venv's own setuptools (--no-build-isolation), since its setup.py needs pkg_resources.
PIP := $(BIN)/python -m pip install --disable-pip-version-check -c constraints.txt
# One BLAS thread per MPI rank, or the ranks fight over the cores.
# The venv first on PATH: its mpiexec (from the mpich wheel) matches its mpi4py.
export PATH := $(CURDIR)/$(BIN):$(PATH)
export OMP_NUM_THREADS ?= 1
export OPENBLAS_NUM_THREADS ?= 1

.PHONY: venv system-packages demo test test-slow lab labs lessons slides bench lint clean

venv: $(BIN)/.installed

$(BIN)/.installed: pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP) --upgrade pip setuptools wheel
	$(PIP) --no-build-isolation -e '.[dev]'
	$(BIN)/python deploy/kernelspec.py $(VENV) >/dev/null
	$(BIN)/python -c 'import sys; from dlhack.grade.pmpi import main; sys.exit(main())' \
		>/dev/null || true  # the grader's MPI shim: says why not
	touch $@

# bubblewrap, Chromium, Slurm + munge, sudo, git, configurable-http-proxy: installed when root or
# passwordless sudo allows; otherwise one message with the command, and make stops here.
system-packages:
	deploy/system-packages.sh

demo: venv
	$(BIN)/dlhack demo --out result/demo

# Two workers: half the suite waits on jobs, daemons and browsers, not on a core.
test: system-packages venv $(REVEAL)
	$(BIN)/python -m pytest -n $(TEST_WORKERS)

test-slow: venv
	$(BIN)/python -m pytest -m slow

# JupyterLab on your own copy of lessons/ and labs/ (mywork/, made when missing); e.g.
# make lab LAB_ARGS="--no-browser --port 8890" on a remote machine.
lab: venv
	$(BIN)/dlhack lab -- $(LAB_ARGS)

labs: venv
	$(BIN)/dlhack labs generate

# Run every lesson at full size from a clean checkout of the last commit and keep its outputs,
# stamped with this machine and the commit (slow: minutes per lesson; commit the lessons first);
# one lesson: $(BIN)/python -m dlhack.tools.render 09. Then the mentors' guides and the README
# quote the new renders (dlhack.tools.mentors).
lessons: venv
	$(BIN)/python -m dlhack.tools.render
	$(BIN)/python -m dlhack.tools.mentors

# The lessons as reveal.js slides that project offline: reveal.js (and MathJax, RequireJS) from
# the npm registry into build/slides/, then one .slides.html per lesson (dlhack.tools.slides).
$(REVEAL): etc/slides/package.json
	mkdir -p build/slides
	cp etc/slides/package.json build/slides/
	cd build/slides && npm install --no-audit --no-fund --loglevel=error
	touch $@

slides: venv $(REVEAL)
	$(BIN)/python -m dlhack.tools.slides --out build/slides

bench: venv
	$(BIN)/dlhack bench model
	$(BIN)/dlhack bench allreduce
	$(BIN)/dlhack bench scaling
	$(BIN)/dlhack bench grade

lint: venv
	$(BIN)/ruff check src tests graded

clean:
	rm -rf $(VENV) result .pytest_cache
