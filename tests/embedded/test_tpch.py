"""TPC-H's 22 queries on real PySpark 3.5 and on sparkshim: the same rows, names and types.

The data comes from ``tpchgen-cli`` (scale factor 0.01, parquet), generated once per run.
Spark reads the parquet files; the shim holds the same rows as Delta tables. Both see the
types tpchgen writes (``test_tables_have_the_same_types``): BIGINT keys; INT line numbers,
part sizes, available quantities and ship priorities; DECIMAL(15,2) prices, quantities,
discounts, taxes and balances; DATE; STRING. The queries are the spec's, with its default
substitution parameters (Q11's FRACTION is the spec's 0.0001, not scaled to the scale
factor; Q15's view is a CTE), in ``tests/fixtures/tpch/qNN.sql``.

Rows are compared in the order of the query's ORDER BY; rows that tie on every ORDER BY
key may come in any order (Spark promises none). Decimals must agree in value and scale,
floats to 1e-9 relative; every other value in value and Python type.
"""

from __future__ import annotations

import decimal
import math
import shutil
import subprocess
import sysconfig
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from pyspark.sql import Row, SparkSession

from sparkshim import ShimSession
from sparkshim.translate import parse_spark

pytestmark = pytest.mark.embedded

QUERIES = Path(__file__).parent.parent / "fixtures" / "tpch"
SCALE_FACTOR = "0.01"
TABLES = ("region", "nation", "supplier", "customer", "part", "partsupp", "orders", "lineitem")


def _tpchgen() -> str | None:
    installed = Path(sysconfig.get_path("scripts")) / "tpchgen-cli"
    return str(installed) if installed.exists() else shutil.which("tpchgen-cli")


@pytest.fixture(scope="session")
def tpch_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding ``<table>.parquet`` for the 8 TPC-H tables."""
    command = _tpchgen()
    if command is None:
        pytest.skip("TPC-H data needs tpchgen-cli (pip install tpchgen-cli)")
    folder = tmp_path_factory.mktemp("tpch")
    options = ["--scale-factor", SCALE_FACTOR, "--output-dir", str(folder), "--num-threads", "1"]
    subprocess.run([command, "parquet", *options, "--quiet"], check=True)
    return folder


@pytest.fixture(scope="module")
def spark(pyspark_session: SparkSession, tpch_data: Path) -> Iterator[SparkSession]:
    # Temporary views, dropped at the end: other modules have tables of the same names.
    for table in TABLES:
        pyspark_session.read.parquet(str(tpch_data / f"{table}.parquet")).createOrReplaceTempView(
            table
        )
    yield pyspark_session
    for table in TABLES:
        pyspark_session.catalog.dropTempView(table)


@pytest.fixture(scope="module")
def shim(tmp_path_factory: pytest.TempPathFactory, tpch_data: Path) -> Iterator[ShimSession]:
    session = ShimSession(warehouse=str(tmp_path_factory.mktemp("tpch-warehouse")))
    for table in TABLES:
        rows = session.createDataFrame(pq.read_table(tpch_data / f"{table}.parquet"))
        rows.createOrReplaceTempView(f"{table}_rows")
        session.sql(f"CREATE TABLE {table} USING DELTA AS SELECT * FROM {table}_rows")
        session.catalog.dropTempView(f"{table}_rows")
    yield session
    session.stop()


def test_tables_have_the_same_types(spark: SparkSession, shim: ShimSession) -> None:
    for table in TABLES:
        assert shim.table(table).dtypes == spark.table(table).dtypes, table


@pytest.mark.parametrize("query", sorted(QUERIES.glob("q*.sql")), ids=lambda path: path.stem)
def test_query(query: Path, spark: SparkSession, shim: ShimSession) -> None:
    sql = query.read_text()
    expected = spark.sql(sql)
    actual = shim.sql(sql)
    assert actual.columns == expected.columns
    assert actual.dtypes == expected.dtypes
    expected_rows, actual_rows = expected.collect(), actual.collect()
    assert len(actual_rows) == len(expected_rows)
    key_positions = [expected.columns.index(name) for name in _order_by_columns(sql)]
    expected_runs = _runs_of_equal_keys(expected_rows, key_positions)
    actual_runs = _runs_of_equal_keys(actual_rows, key_positions)
    assert [len(run) for run in actual_runs] == [len(run) for run in expected_runs]
    for actual_run, expected_run in zip(actual_runs, expected_runs, strict=True):
        _assert_same_rows(actual_run, expected_run)


def test_the_fixtures_hold_the_22_queries() -> None:
    assert [path.stem for path in sorted(QUERIES.glob("q*.sql"))] == [
        f"q{number:02d}" for number in range(1, 23)
    ]


def _order_by_columns(sql: str) -> list[str]:
    """The result columns the query's top-level ORDER BY sorts on (TPC-H orders by result
    columns only)."""
    tree = parse_spark(sql)
    order = tree.args.get("order")
    if order is None:
        return []
    return [ordered.this.output_name for ordered in order.expressions]


def _runs_of_equal_keys(rows: list[Row], key_positions: list[int]) -> list[list[Row]]:
    """``rows`` cut where a sort key changes: the order within a run is unspecified."""
    runs: list[list[Row]] = []
    previous: tuple[Any, ...] | None = None
    for row in rows:
        key = tuple(row[position] for position in key_positions)
        if not runs or key != previous:
            runs.append([])
        runs[-1].append(row)
        previous = key
    return runs


def _assert_same_rows(actual: list[Row], expected: list[Row]) -> None:
    if len(expected) == 1:
        assert _same(tuple(actual[0]), tuple(expected[0])), f"{actual[0]} != {expected[0]}"
        return
    # A run of ties: the same rows in any order (TPC-H's results hold no floats, so the
    # rows of a run compare exactly).
    assert Counter(map(_exact, actual)) == Counter(map(_exact, expected))


def _exact(row: Row) -> tuple[Any, ...]:
    return tuple(
        (type(value).__name__, str(value) if isinstance(value, decimal.Decimal) else value)
        for value in row
    )


def _same(actual: Any, expected: Any) -> bool:
    if isinstance(actual, tuple) and isinstance(expected, tuple):
        return len(actual) == len(expected) and all(
            _same(a, e) for a, e in zip(actual, expected, strict=True)
        )
    if isinstance(actual, float) and isinstance(expected, float):
        return math.isclose(actual, expected, rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(actual, decimal.Decimal) and isinstance(expected, decimal.Decimal):
        # the scale is part of Spark's result type: 1.50 is not 1.5
        return actual == expected and actual.as_tuple().exponent == expected.as_tuple().exponent
    return type(actual) is type(expected) and actual == expected
