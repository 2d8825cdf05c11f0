"""Differential conformance: the same tables and queries on real PySpark 3.5 and on sparkshim.

Tables come from ``setup.sql`` (run on both engines; parquet in Spark, Delta in the shim) and
the queries from ``queries.yaml`` (grouped by category; an entry is a query string, or a
mapping with ``sql`` and ``xfail``: a known wrong answer, strict). Every query must either
give Spark's rows (multiset unless it ends in a top-level ORDER BY; floats to 1e-9 relative;
Python types compared strictly; column names compared, and in the categories of
``TYPED_CATEGORIES`` the Spark types of the columns too) or be refused by the shim with
``UnsupportedSqlError``. The counts and the match
rate are printed at the end; the issue requires at least 90% matches.
"""

from __future__ import annotations

import decimal
import math
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

pyspark = pytest.importorskip("pyspark")
from pyspark.sql import Row, SparkSession  # noqa: E402

from sparkshim import ShimSession  # noqa: E402
from sparkshim.errors import UnsupportedSqlError  # noqa: E402

pytestmark = pytest.mark.embedded

HERE = Path(__file__).parent
SETUP = [s.strip() for s in (HERE / "setup.sql").read_text().split(";\n") if s.strip()]


# Categories whose queries' column types (``DataFrame.dtypes``) must be Spark's as well.
TYPED_CATEGORIES = frozenset({"names", "types"})
TYPED_QUERIES: set[str] = set()


def _load_queries() -> list[Any]:
    data = yaml.safe_load((HERE / "queries.yaml").read_text())
    params = []
    for category, entries in data.items():
        for index, entry in enumerate(entries, 1):
            if isinstance(entry, str):
                sql, xfail = entry, None
            else:
                sql, xfail = entry["sql"], entry.get("xfail")
            marks = [pytest.mark.xfail(strict=True, reason=xfail)] if xfail else []
            if category in TYPED_CATEGORIES:
                TYPED_QUERIES.add(sql.strip())
            params.append(pytest.param(sql.strip(), id=f"{category}-{index:03d}", marks=marks))
    return params


QUERIES = _load_queries()
OUTCOMES: Counter[str] = Counter()
REFUSALS: list[tuple[str, str]] = []


@pytest.fixture(scope="module")
def spark(pyspark_session: SparkSession) -> Iterator[SparkSession]:
    for statement in SETUP:
        pyspark_session.sql(statement.format(fmt="parquet"))
    yield pyspark_session
    for table in ("customers", "orders", "order_lines", "events", "amounts"):
        pyspark_session.sql(f"DROP TABLE IF EXISTS {table}")


@pytest.fixture(scope="module")
def shim(tmp_path_factory: pytest.TempPathFactory):
    session = ShimSession(warehouse=str(tmp_path_factory.mktemp("shim-warehouse")))
    for statement in SETUP:
        session.sql(statement.format(fmt="delta"))
    yield session
    session.stop()


def _top_level_order_by(sql: str) -> bool:
    from sqlglot import exp

    from sparkshim.translate import parse_spark

    tree = parse_spark(sql)
    return isinstance(tree, exp.Query) and tree.args.get("order") is not None


def _normal(value: Any) -> Any:
    """A hashable, type-tagged form of a value; floats kept for tolerant comparison."""
    if isinstance(value, Row):
        return ("Row", tuple(value.__fields__), tuple(_normal(v) for v in value))
    if isinstance(value, (list, tuple)):
        return ("list", tuple(_normal(v) for v in value))
    if isinstance(value, dict):
        return ("map", tuple(sorted((_normal(k), _normal(v)) for k, v in value.items())))
    if isinstance(value, float) and math.isnan(value):
        return ("float", "nan")
    return (type(value).__name__, value)


def _sort_key(value: Any) -> str:
    return repr(_round_floats(value))


def _round_floats(value: Any) -> Any:
    if isinstance(value, tuple):
        return tuple(_round_floats(v) for v in value)
    if isinstance(value, float):
        return float(f"{value:.9g}")
    return value


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float):
        if math.isinf(a) or math.isinf(b):
            return a == b
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(a, decimal.Decimal) and isinstance(b, decimal.Decimal):
        # same value and same scale (the scale is part of Spark's result type)
        return a == b and a.as_tuple().exponent == b.as_tuple().exponent
    return type(a) is type(b) and a == b


def _describe(rows: list[Any]) -> str:
    return "\n".join(f"  {r!r}" for r in rows[:20]) + ("\n  ..." if len(rows) > 20 else "")


@pytest.mark.parametrize("sql", QUERIES)
def test_query(sql: str, spark: SparkSession, shim: ShimSession) -> None:
    expected_rows = spark.sql(sql).collect()
    expected_columns = spark.sql(sql).columns
    try:
        frame = shim.sql(sql)
        actual_rows = frame.collect()
    except UnsupportedSqlError as refusal:
        # Raised at translation, or at run time when it depends on a value's type or value.
        OUTCOMES["REFUSED"] += 1
        REFUSALS.append((sql, str(refusal).splitlines()[0]))
        return
    except Exception:
        OUTCOMES["ERROR"] += 1
        raise
    try:
        assert list(frame.columns) == list(expected_columns), "column names differ"
        if sql in TYPED_QUERIES:
            assert frame.dtypes == spark.sql(sql).dtypes, "column types differ"
        expected = [_normal(r) for r in expected_rows]
        actual = [_normal(r) for r in actual_rows]
        assert len(expected) == len(actual), (
            f"row count {len(actual)} != Spark's {len(expected)}\n"
            f"shim:\n{_describe(actual_rows)}\nspark:\n{_describe(expected_rows)}"
        )
        if not _top_level_order_by(sql):
            expected.sort(key=_sort_key)
            actual.sort(key=_sort_key)
        for got, want in zip(actual, expected, strict=True):
            assert _same(got, want), (
                f"row differs:\n  shim:  {got!r}\n  spark: {want!r}\n"
                f"shim:\n{_describe(actual_rows)}\nspark:\n{_describe(expected_rows)}"
            )
    except AssertionError:
        OUTCOMES["WRONG"] += 1
        raise
    OUTCOMES["MATCH"] += 1
    _assert_run_again_alike(shim, sql, frame.toArrow())


def _assert_run_again_alike(shim: ShimSession, sql: str, first: Any) -> None:
    """The statement run again (its translation kept; a small result fetched from one run
    of it, not from a relation bound first) gives the same columns, types and rows."""
    again = shim.sql(sql).toArrow()
    assert again.schema == first.schema, "a second run's types differ"
    rows, rows_again = (
        [_normal(tuple(row.values())) for row in table.to_pylist()] for table in (first, again)
    )
    if not _top_level_order_by(sql):
        rows.sort(key=_sort_key)
        rows_again.sort(key=_sort_key)
    assert len(rows_again) == len(rows), "a second run's row count differs"
    for got, want in zip(rows_again, rows, strict=True):
        assert _same(got, want), f"a second run differs: {got!r} against {want!r}"


def test_summary() -> None:
    """Runs last (file order): print the counts and check the match rate."""
    total = sum(OUTCOMES.values())
    if total == 0:
        pytest.skip("no conformance query ran")
    rate = OUTCOMES["MATCH"] / len(QUERIES)
    lines = [
        f"conformance: {len(QUERIES)} queries, ran {total}: "
        + ", ".join(f"{k}={v}" for k, v in sorted(OUTCOMES.items()))
        + f"; match rate {rate:.1%}",
        *[f"  refused: {reason}  <- {sql[:80]!r}" for sql, reason in REFUSALS],
    ]
    print("\n" + "\n".join(lines))
    if total == len(QUERIES):
        assert rate >= 0.9, "\n".join(lines)
