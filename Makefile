# The README's two commands: `make demo` (harvest the news-site simulator) and `make test` (ruff,
# then pytest, which also checks the import contracts and that nothing is left in the checkout).
# Both create the virtual environment on first use and refresh it when a pyproject.toml changes.
# The tooling (bench/: benchmarks, fuzzers, the crawl harness, hostile input, fault injectors) is
# its own distribution, installed editable beside the product: the tests use it.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
INSTALLED := $(VENV)/.installed

.PHONY: install demo test test-scrapy lint format

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

# Another Scrapy release (the next one, before pyproject.toml's range grows), in its own venv;
# installed over the pin on purpose (pip warns that newsharvest asks for another range):
#   make test-scrapy SCRAPY=2.20.0 [TESTS=tests/test_crawl.py]
SCRAPY ?=
TESTS ?= tests
SCRAPY_VENV := $(VENV)-scrapy-$(SCRAPY)
test-scrapy:
	@test -n "$(SCRAPY)" || { echo "usage: make test-scrapy SCRAPY=<version> [TESTS=...]"; exit 2; }
	@test -x $(SCRAPY_VENV)/bin/python || $(PYTHON) -m venv $(SCRAPY_VENV)
	$(SCRAPY_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -U pip
	$(SCRAPY_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	$(SCRAPY_VENV)/bin/python -m pip install --quiet --disable-pip-version-check 'scrapy==$(SCRAPY)'
	$(SCRAPY_VENV)/bin/python -m pytest tests/test_scrapy_adapter.py
	$(SCRAPY_VENV)/bin/python -m pytest $(TESTS)

lint: $(INSTALLED)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports --no-cache  # the layer contracts (pytest runs them too)

format: $(INSTALLED)
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .
