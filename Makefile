# The README's two commands: `make demo` (harvest the news-site simulator) and `make test` (ruff,
# then pytest, which also checks the import contracts and that nothing is left in the checkout).
# Both create the virtual environment on first use and refresh it when a pyproject.toml changes.
# The tooling (bench/: benchmarks, fuzzers, the crawl harness, hostile input, fault injectors) is
# its own distribution, installed editable beside the product: the tests use it.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
INSTALLED := $(VENV)/.installed

.PHONY: install demo test lint format

$(INSTALLED): pyproject.toml bench/pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev]' -e './bench[fuzz]'
	@touch $@

install: $(INSTALLED)

demo: $(INSTALLED)
	$(VENV)/bin/newsharvest demo

test: $(INSTALLED)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(PY) -m pytest

lint: $(INSTALLED)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports --no-cache  # the layer contracts (pytest runs them too)

format: $(INSTALLED)
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .
