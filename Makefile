# varfunc kit: needs only python3 >= 3.10 and GNU make; everything else goes into $(VENV).
PYTHON ?= python3
VENV   ?= .venv
# `make e2e` adds the e2e extra (Playwright) to the default set.
ifneq ($(filter e2e,$(MAKECMDGOALS)),)
EXTRAS ?= test,lab,e2e
endif
# `make bench` adds the oracle extra (torch==2.13.0): without torch the PyTorch columns would be n/a.
ifneq ($(filter bench,$(MAKECMDGOALS)),)
EXTRAS ?= test,lab,oracle
endif
EXTRAS ?= test,lab

comma := ,
space := $(subst ,, )
PY    := $(VENV)/bin/python
# One stamp per extras set (sorted: test,lab and lab,test are the same set); reinstalls only when
# pyproject.toml changes.
STAMP := $(VENV)/.installed-$(subst $(space),-,$(sort $(subst $(comma), ,$(EXTRAS))))

# `make test` needs test and lab (the chapters it validates import matplotlib), `make lab` lab, `make e2e`
# all three; fail before installing anything.
needs_test := test lab
needs_lab  := lab
needs_e2e  := test lab e2e
$(foreach t,test lab e2e,$(if $(filter $(t),$(MAKECMDGOALS)),$(foreach x,$(needs_$(t)),\
  $(if $(filter $(x),$(subst $(comma), ,$(EXTRAS))),,$(error make $(t) needs EXTRAS to include $(x))))))

.PHONY: install test e2e lab bench bench-gpu figures lint clean

# install: create the venv and install the package editable with $(EXTRAS)
install: $(STAMP)

# A venv without a working pip (`python3 -m venv` half done, e.g. without Debian's python3-venv) is
# removed and made again; if that fails too, it is removed and make stops saying what to install.
# $(PYTHON) is asked for only when the venv must be made: a working .venv is reused whatever it says.
$(STAMP): pyproject.toml
	@$(PY) -m pip --version >/dev/null 2>&1 || { \
	  command -v $(PYTHON) >/dev/null || \
	    { echo "error: $(PYTHON) not found; name another Python >= 3.10, e.g. make test PYTHON=python3.12" >&2; exit 1; }; \
	  status=0; $(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 10))' || status=$$?; \
	  test $$status != 1 || \
	    { echo "error: $(PYTHON) is older than Python 3.10; name another, e.g. make test PYTHON=python3.12" >&2; exit 1; }; \
	  test $$status = 0 || \
	    { echo "error: $(PYTHON) is on PATH but does not run (exit $$status; a pyenv shim for a version" \
	      "that is not selected?); name the interpreter by its full path, e.g. PYTHON=$$HOME/.pyenv/versions/3.12.N/bin/python3" >&2; exit 1; }; \
	  test ! -e $(VENV) || test -f $(VENV)/pyvenv.cfg || \
	    { echo "error: $(VENV) exists but is not a venv; remove it or pass VENV=another-folder" >&2; exit 1; }; \
	  echo "$(PYTHON) -m venv $(VENV)"; rm -rf $(VENV); \
	  { $(PYTHON) -m venv $(VENV) && $(PY) -m pip --version >/dev/null 2>&1; } || { rm -rf $(VENV); \
	    echo "error: $(PYTHON) -m venv could not make a venv with pip; install Python's venv module" \
	      "(Debian/Ubuntu: apt install python3-venv, or python3.X-venv for your version), then run make again" >&2; \
	    exit 1; }; }
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -e ".[$(EXTRAS)]"
	touch $@

# test: unit tests (nbval plugin off for a fast start), then the notebooks if there are any;
# the browser tests are left to `make e2e`. The chapters are stored as run without a GPU (as in CI):
# VARFUNC_FORCE_CPU makes a GPU machine tell chapter 09 the same way, so nbval compares like with
# like (the device tests cover the GPU paths).
test: $(STAMP)
	$(PY) -m pytest -p no:nbval -q -m "not e2e" tests
	@if ls notebooks/*.ipynb >/dev/null 2>&1; then \
	  echo "$(PY) -m pytest --nbval ... notebooks"; \
	  VARFUNC_FORCE_CPU=1 $(PY) -m pytest --nbval --nbval-current-env \
	    --nbval-sanitize-with tests/nbval_sanitize.cfg notebooks; \
	else echo "no notebooks to validate"; fi

# e2e: the chapters in JupyterLab in headless Chromium (needs Debian's chromium; skips without it)
e2e: $(STAMP)
	$(PY) -m pytest -p no:nbval -q -m e2e tests/e2e

# lab: open the chapters in JupyterLab with the kit's settings and kernel (varfunc/lab.py);
# options for `jupyter lab` go in LAB_ARGS, e.g. make lab LAB_ARGS="--no-browser --port 8899"
lab: $(STAMP)
	mkdir -p notebooks
	$(PY) -m varfunc.lab notebooks/ $(LAB_ARGS)

# bench: run the side-by-side timing scripts (EXTRAS defaults to test,lab,oracle: PyTorch is compared)
bench: $(STAMP)
	$(PY) -m benchmarks.run
	$(PY) -m benchmarks.training
	$(PY) -m benchmarks.grading
	$(PY) -m benchmarks.chapters

# bench-gpu: varfunc on CuPy vs PyTorch on CUDA vs varfunc on NumPy (make bench-gpu EXTRAS=test,gpu,oracle);
# without a GPU it says which of CuPy, driver or device is missing and exits 0
bench-gpu: $(STAMP)
	$(PY) -m benchmarks.gpu

# figures: regenerate the README's pictures (needs dot or pygraphviz, from the lab extra)
figures: $(STAMP)
	$(PY) figures/make_figures.py

# lint: ruff over the kit's own files (package, tests, benchmarks, figures, notebooks: the include list
# in pyproject.toml's [tool.ruff]); a course folder kept in the checkout (submissions/, grades/) is left out
lint: $(STAMP)
	$(VENV)/bin/ruff check .

# clean: remove the venv, caches and build outputs
clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .hypothesis .ruff_cache test-artifacts
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
