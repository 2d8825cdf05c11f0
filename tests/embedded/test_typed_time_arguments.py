"""timestampadd of a DATE or STRING column, lag/lead defaults that are columns, and the
names of unaliased timestampadd/timestampdiff columns, as Spark 3.5 gives them (each value
below checked against PySpark 3.5, session time zone UTC, ANSI off).

The typing pass knows a column's type: timestampadd of a DATE column is Spark's TIMESTAMP
(DuckDB's DATE plus an interval is a TIMESTAMP_NTZ), and lag/lead cast a default column to
the value's type with Spark's CAST (truncated; DuckDB's cast rounded), refusing a pair of
types Spark does not cast implicitly (its DATATYPE_MISMATCH) and, where a type is unknown,
a default whose type differs from the value's at run time. Spark names timestampadd and
timestampdiff by their unit as written (sqlglot's tree has it in capitals)."""

from __future__ import annotations

import datetime
from decimal import Decimal
from pathlib import Path

import pytest

from sparkshim.errors import UnsupportedSqlError
from sparkshim.session import ShimSession

pytestmark = pytest.mark.embedded


@pytest.fixture
def spark(tmp_path: Path) -> ShimSession:
    return ShimSession(warehouse=tmp_path / "warehouse")


def _schema(spark: ShimSession, sql: str) -> list[tuple[str, str]]:
    return [(f.name, f.dataType.simpleString()) for f in spark.sql(sql).schema.fields]


def test_timestampadd_of_a_date_column_is_a_timestamp(spark: ShimSession) -> None:
    sql = (
        "SELECT timestampadd(DAY, 1, d) AS a, timestampadd(HOUR, 2, d) AS b"
        " FROM VALUES (DATE'2024-01-31') AS t(d)"
    )
    assert _schema(spark, sql) == [("a", "timestamp"), ("b", "timestamp")]
    assert [tuple(row) for row in spark.sql(sql).collect()] == [
        (datetime.datetime(2024, 2, 1), datetime.datetime(2024, 1, 31, 2))
    ]


def test_timestampadd_of_a_table_date_column(spark: ShimSession) -> None:
    spark.sql("CREATE TABLE dates (d DATE, s STRING) USING delta")
    spark.sql("INSERT INTO dates VALUES (DATE'2024-01-31', '2024-01-31 10:00:00')")
    sql = "SELECT timestampadd(MONTH, 1, d) AS a, timestampadd(MINUTE, 5, s) AS b FROM dates"
    assert _schema(spark, sql) == [("a", "timestamp"), ("b", "timestamp")]
    assert [tuple(row) for row in spark.sql(sql).collect()] == [
        (datetime.datetime(2024, 2, 29), datetime.datetime(2024, 1, 31, 10, 5))
    ]


def test_timestampadd_of_date_add_is_a_timestamp(spark: ShimSession) -> None:
    sql = (
        "SELECT timestampadd(WEEK, n, date_add(d, 1)) AS a, timestampadd(DAY, 1, date_sub(d, 1))"
        " AS b FROM VALUES (DATE'2024-01-31', 2) AS t(d, n)"
    )
    assert _schema(spark, sql) == [("a", "timestamp"), ("b", "timestamp")]
    assert [tuple(row) for row in spark.sql(sql).collect()] == [
        (datetime.datetime(2024, 2, 15), datetime.datetime(2024, 1, 31))
    ]


def test_lag_lead_cast_a_default_column_as_spark(spark: ShimSession) -> None:
    sql = (
        "SELECT id, lag(i, 1, dd) OVER (ORDER BY id) AS a, lead(i, 1, s) OVER (ORDER BY id) AS b,"
        " lag(i, 1, dec) OVER (ORDER BY id) AS c, lag(t, 1, i2) OVER (ORDER BY id) AS e,"
        " lag(b, 1, dd) OVER (ORDER BY id) AS f"
        " FROM VALUES (1, 5, 2.7D, '3.9', CAST(-2.75 AS DECIMAL(5,2)), CAST(1 AS TINYINT), 300,"
        " CAST(7 AS BIGINT)), (2, 6, -2.7D, 'x', CAST(9.99 AS DECIMAL(5,2)), CAST(2 AS TINYINT),"
        " 301, CAST(8 AS BIGINT)) AS t(id, i, dd, s, dec, t, i2, b)"
    )
    assert _schema(spark, sql) == [
        ("id", "int"),
        ("a", "int"),
        ("b", "int"),
        ("c", "int"),
        ("e", "tinyint"),
        ("f", "bigint"),
    ]
    rows = sorted(tuple(row) for row in spark.sql(sql).collect())
    assert rows == [(1, 2, 6, -2, 44, 2), (2, 5, None, 5, 1, 7)]


def test_lag_default_column_of_other_types(spark: ShimSession) -> None:
    sql = (
        "SELECT lag(s, 1, i) OVER (ORDER BY i) AS a, lag(dec, 1, dd) OVER (ORDER BY i) AS b,"
        " lag(dd, 1, s) OVER (ORDER BY i) AS c, lag(dt, 1, s2) OVER (ORDER BY i) AS d,"
        " lag(ts, 1, dt) OVER (ORDER BY i) AS e"
        " FROM VALUES (1, 'a', CAST(1.25 AS DECIMAL(5,2)), 1.005D, ' 2024-02-03 ',"
        " DATE'2024-01-01', TIMESTAMP'2024-02-03 10:00:00') AS t(i, s, dec, dd, s2, dt, ts)"
    )
    assert _schema(spark, sql) == [
        ("a", "string"),
        ("b", "decimal(5,2)"),
        ("c", "double"),
        ("d", "date"),
        ("e", "timestamp"),
    ]
    assert [tuple(row) for row in spark.sql(sql).collect()] == [
        ("1", Decimal("1.01"), None, datetime.date(2024, 2, 3), datetime.datetime(2024, 1, 1))
    ]


@pytest.mark.parametrize("default", ["dt", "bo"])
def test_lag_default_spark_does_not_cast_is_refused(spark: ShimSession, default: str) -> None:
    # Spark: DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE (a DATE or BOOLEAN for an INT).
    with pytest.raises(UnsupportedSqlError, match="lag/lead with a default of type"):
        spark.sql(
            f"SELECT lag(i, 1, {default}) OVER (ORDER BY i) AS a"
            " FROM VALUES (1, DATE'2024-01-01', true) AS t(i, dt, bo)"
        ).collect()


def test_lag_default_of_unknown_type(spark: ShimSession) -> None:
    # The typing does not know a map value's type: the default must have the value's type
    # at run time (Spark: 2 and 5 for the DOUBLE default, where DuckDB's cast rounds).
    rows = spark.sql(
        "SELECT id, lag(m['k'], 1, ii) OVER (ORDER BY id) AS a"
        " FROM VALUES (1, map('k', 5), 9), (2, map('k', 6), 8) AS t(id, m, ii)"
    ).collect()
    assert sorted(tuple(row) for row in rows) == [(1, 9), (2, 5)]
    with pytest.raises(UnsupportedSqlError, match="lag/lead with a default of another type"):
        spark.sql(
            "SELECT id, lag(m['k'], 1, dd) OVER (ORDER BY id) AS a"
            " FROM VALUES (1, map('k', 5), 2.7D), (2, map('k', 6), 1.5D) AS t(id, m, dd)"
        ).collect()


def test_timestamp_arithmetic_names_include_the_unit(spark: ShimSession) -> None:
    sql = (
        "SELECT timestampadd(DAY, 1, d), timestampdiff(MONTH, d, ts), timestampadd(MINUTE, n, ts),"
        " timestampadd(microsecond, 1, ts), timestampdiff(week, ts, d),"
        " TIMESTAMPADD(quarter, 1, ts), timestampadd(day, -n, ts),"
        " timestampdiff(SECOND, ts + INTERVAL 1 DAY, ts)"
        " FROM VALUES (DATE'2024-01-31', TIMESTAMP'2024-03-01 10:00:00', 3) AS t(d, ts, n)"
    )
    assert [name for name, _ in _schema(spark, sql)] == [
        "timestampadd(DAY, 1, d)",
        "timestampdiff(MONTH, d, ts)",
        "timestampadd(MINUTE, n, ts)",
        "timestampadd(microsecond, 1, ts)",
        "timestampdiff(week, ts, d)",
        "timestampadd(quarter, 1, ts)",
        "timestampadd(day, (- n), ts)",
        "timestampdiff(SECOND, ts + INTERVAL '1' DAY, ts)",
    ]
