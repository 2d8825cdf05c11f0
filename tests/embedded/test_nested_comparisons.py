"""STRUCTs and ARRAYs compared, chosen and sorted in Spark's order, a NULL field or
element below every value (DuckDB puts it above), as PySpark 3.5 answers (the answers
below are PySpark's): ``<``, ``<=``, ``>``, ``>=``, greatest, least, sort_array,
array_sort, max_by and min_by. Where the values' type is not known before the query
runs, the shim refuses rather than answer in DuckDB's order."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparkshim import ShimSession, UnsupportedSqlError

pytestmark = pytest.mark.embedded


@pytest.fixture
def spark(tmp_path: Path) -> ShimSession:
    session = ShimSession(warehouse=str(tmp_path / "warehouse"))
    session.sql(
        "CREATE TABLE t (id INT, s STRUCT<a: INT, b: STRING>, a ARRAY<INT>,"
        " l ARRAY<STRUCT<a: INT>>) USING delta"
    )
    session.sql(
        "INSERT INTO t VALUES"
        " (1, named_struct('a', NULL, 'b', 'x'), array(NULL, 2),"
        " array(named_struct('a', 1), named_struct('a', NULL), NULL)),"
        " (2, named_struct('a', 1, 'b', NULL), array(1),"
        " array(named_struct('a', 2), named_struct('a', NULL))),"
        " (3, NULL, NULL, NULL),"
        " (4, named_struct('a', 1, 'b', 'y'), array(1, NULL), array())"
    )
    return session


def test_literals_compare_a_null_inside_below_every_value(spark: ShimSession) -> None:
    row = spark.sql(
        "SELECT named_struct('a', NULL) < named_struct('a', 1),"
        " named_struct('a', NULL) = named_struct('a', NULL), array(1, NULL) < array(1, 2),"
        " array(NULL) > array(1), named_struct('a', 1, 'b', NULL) >= named_struct('a', 1, 'b', 2)"
    ).collect()[0]
    assert tuple(row) == (True, True, True, False, False)


def test_columns_compare_in_sparks_order(spark: ShimSession) -> None:
    rows = spark.sql(
        "SELECT id, s < named_struct('a', 1, 'b', 'a'), s >= named_struct('a', 1, 'b', 'x'),"
        " a < array(1, 2), a > array(1), array(0) <= a FROM t ORDER BY id"
    ).collect()
    assert [tuple(row) for row in rows] == [
        (1, True, False, True, False, False),
        (2, True, False, True, False, True),
        (3, None, None, None, None, None),
        (4, False, True, True, True, True),
    ]
    # One side's type known (t's rows agree on it): both keyed by it.
    values = spark.sql(
        "SELECT s < t FROM VALUES (named_struct('x', 1), named_struct('x', 2)),"
        " (named_struct('x', NULL), named_struct('x', 2)) AS v(s, t)"
    )
    assert [row[0] for row in values.collect()] == [True, True]
    joined = spark.sql("SELECT x.id, y.id FROM t x JOIN t y ON x.s < y.s ORDER BY 1, 2")
    assert [tuple(row) for row in joined.collect()] == [(1, 2), (1, 4), (2, 4)]


def test_greatest_and_least_of_nested_values(spark: ShimSession) -> None:
    row = spark.sql(
        "SELECT greatest(named_struct('a', NULL), named_struct('a', 1)),"
        " least(named_struct('a', NULL), named_struct('a', 1)),"
        " greatest(array(NULL, 1), array(1)), least(array(1), array(NULL))"
    ).collect()[0]
    assert tuple(row) == ((1,), (None,), [1], [None])
    rows = spark.sql(
        "SELECT greatest(a, array(1)), least(s, named_struct('a', 1, 'b', 'b')) FROM t ORDER BY id"
    ).collect()
    assert [(row[0], tuple(row[1])) for row in rows] == [
        ([1], (None, "x")),
        ([1], (1, None)),
        ([1], (1, "b")),
        ([1, None], (1, "b")),
    ]


def test_sorts_of_nested_elements(spark: ShimSession) -> None:
    rows = spark.sql(
        "SELECT sort_array(l), sort_array(l, false), array_sort(l) FROM t ORDER BY id"
    ).collect()

    def fields(values: list[object] | None) -> list[object] | None:
        return None if values is None else [v if v is None else tuple(v) for v in values]

    assert [tuple(fields(value) for value in row) for row in rows] == [
        ([None, (None,), (1,)], [(1,), (None,), None], [(None,), (1,), None]),
        ([(None,), (2,)], [(2,), (None,)], [(None,), (2,)]),
        (None, None, None),
        ([], [], []),
    ]


def test_max_by_and_min_by_of_a_nested_ordering(spark: ShimSession) -> None:
    row = spark.sql("SELECT max_by(id, s), min_by(id, s), max_by(id, a), min_by(id, a) FROM t")
    assert tuple(row.collect()[0]) == (4, 1, 4, 1)


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT sort_array(array(array(1), array(NULL), array(2)))",
        "SELECT max_by(x, s) FROM VALUES (1, named_struct('a', NULL)), (2, named_struct('a', 1))"
        " AS t(x, s)",
        "SELECT s < t FROM VALUES (named_struct('x', 1), named_struct('x', NULL)),"
        " (named_struct('x', NULL), named_struct('x', 2)) AS v(s, t)",
    ],
)
def test_values_of_a_type_not_known_are_refused(spark: ShimSession, sql: str) -> None:
    with pytest.raises(UnsupportedSqlError, match="STRUCT or ARRAY values"):
        spark.sql(sql).collect()
