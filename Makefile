# varfunc kit: needs only python3 >= 3.10 and GNU make; everything else goes into $(VENV).
PYTHON ?= python3
VENV   ?= .venv
EXTRAS ?= test,lab

comma := ,
PY    := $(VENV)/bin/python
# One stamp per extras set; reinstalls only when pyproject.toml changes.
STAMP := $(VENV)/.installed-$(subst $(comma),-,$(EXTRAS))

# `make test` / `make lab` need their extra in EXTRAS; fail before installing anything.
$(foreach t,test lab,$(if $(filter $(t),$(MAKECMDGOALS)),$(if $(filter $(t),$(subst $(comma), ,$(EXTRAS))),,\
  $(error make $(t) needs EXTRAS to include $(t)))))

.PHONY: install test lab bench figures lint clean

# install: create the venv and install the package editable with $(EXTRAS)
install: $(STAMP)

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 10))' || \
	  { echo "error: $(PYTHON) must be Python >= 3.10" >&2; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -e ".[$(EXTRAS)]"
	touch $@

# test: unit tests (nbval plugin off for a fast start), then the notebooks if there are any
test: $(STAMP)
	$(PY) -m pytest -p no:nbval -q tests
	@if ls notebooks/*.ipynb >/dev/null 2>&1; then \
	  echo "$(PY) -m pytest --nbval ... notebooks"; \
	  $(PY) -m pytest --nbval --nbval-current-env \
	    --nbval-sanitize-with tests/nbval_sanitize.cfg notebooks; \
	else echo "no notebooks to validate"; fi

# lab: open the chapters in JupyterLab
lab: $(STAMP)
	mkdir -p notebooks
	$(VENV)/bin/jupyter lab notebooks/

# bench: run the side-by-side timing scripts
bench: $(STAMP)
	$(PY) -m benchmarks.run
	$(PY) -m benchmarks.training

# figures: regenerate the README's pictures (needs dot or pygraphviz, from the lab extra)
figures: $(STAMP)
	$(PY) figures/make_figures.py

# lint: ruff over the package, tests and benchmarks
lint: $(STAMP)
	$(VENV)/bin/ruff check varfunc tests benchmarks

# clean: remove the venv, caches and build outputs
clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .hypothesis .ruff_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
