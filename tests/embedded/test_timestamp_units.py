"""timestampdiff, timestampadd and lag/lead defaults as Spark 3.5 answers them (each value
below checked against PySpark 3.5, session time zone UTC, ANSI off; the differential
fuzzer found the differences).

timestampdiff counts the whole units elapsed (Java's ChronoUnit.between on the local
date-times), where DuckDB's date_diff counted the unit boundaries crossed; timestampadd
casts its amount to INT as Spark casts (truncated) and gives Spark's TIMESTAMP for a DATE;
lag/lead cast their default to the value's type with Spark's CAST (truncated), where
DuckDB's cast rounded."""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import pytest

from sparkshim.errors import UnsupportedSqlError
from sparkshim.session import ShimSession

pytestmark = pytest.mark.embedded


@pytest.fixture
def spark(tmp_path: Path) -> ShimSession:
    return ShimSession(warehouse=tmp_path / "warehouse")


def _one_row(spark: ShimSession, sql: str) -> tuple[list[str], tuple[Any, ...]]:
    frame = spark.sql(sql)
    types = [field.dataType.simpleString() for field in frame.schema.fields]
    (row,) = frame.collect()
    return types, tuple(row)


@pytest.mark.parametrize(
    ("unit", "start", "end", "expected"),
    [
        ("MONTH", "DATE'2024-01-31'", "DATE'2024-02-29'", 0),
        ("MONTH", "DATE'2024-02-29'", "DATE'2024-01-31'", 0),
        ("MONTH", "DATE'2024-03-31'", "DATE'2024-02-29'", -1),
        ("MONTH", "DATE'2024-02-29'", "DATE'2024-03-31'", 1),
        ("MONTH", "TIMESTAMP'2024-01-31 12:00:00'", "TIMESTAMP'2024-03-01 00:00:00'", 0),
        ("MONTH", "TIMESTAMP'2024-03-01 00:00:00'", "TIMESTAMP'2024-01-31 12:00:00'", -1),
        ("MONTH", "TIMESTAMP'2024-01-15 10:00:00'", "TIMESTAMP'2024-02-15 09:59:59'", 0),
        ("MONTH", "DATE'0001-01-01'", "DATE'9999-12-31'", 119987),
        ("YEAR", "DATE'2023-12-31'", "DATE'2024-01-01'", 0),
        ("YEAR", "DATE'2024-02-29'", "DATE'2025-02-28'", 0),
        ("YEAR", "DATE'2025-02-28'", "DATE'2024-02-29'", 0),
        ("YEAR", "TIMESTAMP'2020-06-01 00:00:01'", "TIMESTAMP'2024-06-01 00:00:00'", 3),
        ("QUARTER", "DATE'2024-01-01'", "DATE'2023-09-01'", -1),
        ("QUARTER", "DATE'2023-01-01'", "DATE'2024-06-30'", 5),
        ("WEEK", "DATE'2024-01-14'", "DATE'2024-01-01'", -1),
        ("DAY", "TIMESTAMP'2024-01-01 12:00:00'", "TIMESTAMP'2024-01-02 11:00:00'", 0),
        ("DAY", "TIMESTAMP'2024-01-02 11:00:00'", "TIMESTAMP'2024-01-01 12:00:00'", 0),
        ("DAY", "TIMESTAMP'1969-12-31 23:00:00'", "TIMESTAMP'1970-01-01 22:00:00'", 0),
        ("DAY", "'2024-01-01'", "'2024-03-01 10:00:00'", 60),
        ("HOUR", "TIMESTAMP'2024-01-01 00:30:00'", "TIMESTAMP'2024-01-01 02:29:00'", 1),
        ("HOUR", "TIMESTAMP'2024-01-01 02:29:00'", "TIMESTAMP'2024-01-01 00:30:00'", -1),
        ("SECOND", "TIMESTAMP'2024-01-01 00:00:00.9'", "TIMESTAMP'2024-01-01 00:00:02.1'", 1),
        ("MILLISECOND", "TIMESTAMP'2024-01-01 00:00:00.0019'", "TIMESTAMP'2024-01-01'", -1),
        ("MICROSECOND", "TIMESTAMP'2024-01-01'", "TIMESTAMP'2024-01-01 00:00:01.000001'", 1000001),
    ],
)
def test_timestampdiff_counts_whole_units(
    spark: ShimSession, unit: str, start: str, end: str, expected: int
) -> None:
    types, row = _one_row(spark, f"SELECT timestampdiff({unit}, {start}, {end}) AS d")
    assert (types, row) == (["bigint"], (expected,))


def test_timestampdiff_of_columns_and_nulls(spark: ShimSession) -> None:
    rows = spark.sql(
        "SELECT timestampdiff(MONTH, s, e) AS m, timestampdiff(DAY, s, e) AS d"
        " FROM VALUES (1, DATE'2024-01-31', DATE'2024-02-29'),"
        " (2, DATE'2023-05-31', DATE'2023-06-30'), (3, NULL, DATE'2024-01-01') AS t(i, s, e)"
        " ORDER BY i"
    ).collect()
    assert [tuple(row) for row in rows] == [(0, 29), (0, 30), (None, None)]
    _, row = _one_row(
        spark,
        "SELECT timestampdiff(DAY, NULL, DATE'2024-01-01'),"
        " timestampdiff(YEAR, CAST(NULL AS TIMESTAMP), TIMESTAMP'2024-01-01 00:00:00')",
    )
    assert row == (None, None)


def test_timestampadd_of_a_date_is_a_timestamp(spark: ShimSession) -> None:
    types, row = _one_row(
        spark,
        "SELECT timestampadd(DAY, 1, DATE'2024-01-01'), timestampadd(MONTH, 1, DATE'2024-01-31'),"
        " timestampadd(HOUR, 25, DATE'2024-01-01'), timestampadd(DAY, 1, '2024-01-01'),"
        " timestampadd(DAY, NULL, DATE'2024-01-01'),"
        " timestampadd(DAY, 1, TIMESTAMP_NTZ'2024-01-01 00:00:00')",
    )
    assert types == ["timestamp"] * 5 + ["timestamp_ntz"]
    day = datetime.datetime(2024, 1, 2)
    assert row == (
        day,
        datetime.datetime(2024, 2, 29),
        datetime.datetime(2024, 1, 2, 1),
        day,
        None,
        day,
    )


def test_timestampadd_truncates_the_amount(spark: ShimSession) -> None:
    types, row = _one_row(
        spark,
        "SELECT timestampadd(SECOND, 1.5, TIMESTAMP'2024-03-01 00:00:00'),"
        " timestampadd(SECOND, -1.5, TIMESTAMP'2024-03-01 00:00:00'),"
        " timestampadd(MINUTE, '2.9', TIMESTAMP'2024-03-01 00:00:00'),"
        " timestampadd(DAY, 2.9D, DATE'2024-03-01'),"
        " timestampadd(MILLISECOND, 1.9, DATE'2024-01-01'),"
        # An INT amount: 3000000000 wraps around to -1294967296.
        " timestampadd(SECOND, 3000000000, TIMESTAMP'2024-03-01 00:00:00')",
    )
    assert types == ["timestamp"] * 6
    assert row == (
        datetime.datetime(2024, 3, 1, 0, 0, 1),
        datetime.datetime(2024, 2, 29, 23, 59, 59),
        datetime.datetime(2024, 3, 1, 0, 2),
        datetime.datetime(2024, 3, 3),
        datetime.datetime(2024, 1, 1, 0, 0, 0, 1000),
        datetime.datetime(1983, 2, 16, 22, 51, 44),
    )


def test_offset_defaults_are_cast_as_spark_casts(spark: ShimSession) -> None:
    frame = spark.sql(
        "SELECT i, lag(v, 1, 2.7) OVER (ORDER BY i) AS a, lead(v, 1, -2.7) OVER (ORDER BY i) AS b,"
        " lag(v, 1, '3.9') OVER (ORDER BY i) AS c, lag(v, 1, 1.5D) OVER (ORDER BY i) AS d,"
        " lag(v, 1, 'x') OVER (ORDER BY i) AS e, lag(v, 2, 7) OVER (ORDER BY i) AS f,"
        " lag(v, 1, NULL) OVER (ORDER BY i) AS g"
        " FROM VALUES (1, 10), (2, 20) AS t(i, v) ORDER BY i"
    )
    assert [f.dataType.simpleString() for f in frame.schema.fields] == ["int"] * 8
    rows = [tuple(row) for row in frame.collect()]
    assert rows == [(1, 2, 20, 3, 1, None, 7, None), (2, 10, -2, 10, 10, 10, 7, 10)]


def test_offset_defaults_of_other_types(spark: ShimSession) -> None:
    # A BIGINT value; a TINYINT one (300.5 wraps around to 44); a DOUBLE and a STRING one,
    # whose defaults are kept.
    cases = [
        ("10L", "2.7", "bigint", 2),
        ("CAST(1 AS TINYINT)", "300.5", "tinyint", 44),
        ("1.5D", "2.7", "double", 2.7),
        ("1.5D", "'3.9'", "double", 3.9),
        ("'a'", "2.7", "string", "2.7"),
    ]
    for value, default, spark_type, expected in cases:
        types, row = _one_row(
            spark, f"SELECT lag(v, 1, {default}) OVER (ORDER BY v) FROM VALUES ({value}) AS t(v)"
        )
        assert (types, row) == ([spark_type], (expected,)), (value, default)


def test_from_unixtime_reads_its_java_pattern(spark: ShimSession) -> None:
    """from_unixtime's pattern is translated as date_format's: sqlglot's parser had turned
    it into strftime's, copying the letters strftime lacks (PySpark 3.5's answers)."""
    query = (
        "SELECT from_unixtime(1709251199L, 'yyyy-MM-dd HH:mm:ss.SSS'),"
        " from_unixtime(1709251199L, 'DDD'), from_unixtime(1709251199L)"
    )
    _, row = _one_row(spark, query)
    assert row == ("2024-02-29 23:59:59.000", "060", "2024-02-29 23:59:59")
    assert spark.sql(query).columns[0] == "from_unixtime(1709251199, yyyy-MM-dd HH:mm:ss.SSS)"
    with pytest.raises(UnsupportedSqlError, match="'G' in from_unixtime"):
        spark.sql("SELECT from_unixtime(1709251199L, 'yyyy G')").collect()


def test_milliseconds_and_microseconds_in_a_pattern(spark: ShimSession) -> None:
    """``SSS`` and ``SSSSSS`` are the fraction of the second, truncated (PySpark 3.5)."""
    _, row = _one_row(
        spark,
        "SELECT date_format(TIMESTAMP'2024-01-02 03:04:05.678901', 'HH:mm:ss.SSS'),"
        " date_format(TIMESTAMP'2024-01-02 03:04:05.678901', 'ss.SSSSSS'),"
        " to_timestamp('2024-01-02 03:04:05.678', 'yyyy-MM-dd HH:mm:ss.SSS')",
    )
    assert row[:2] == ("03:04:05.678", "05.678901")
    assert row[2] == datetime.datetime(2024, 1, 2, 3, 4, 5, 678000)


def test_offset_defaults_that_are_no_numbers_are_left_as_they_are(spark: ShimSession) -> None:
    """A DATE default (DuckDB binds every branch of the integral casts, and a DATE has no
    cast to an integer: the query was refused) and a plain integer default."""
    _, row = _one_row(
        spark,
        "SELECT lag(dt, 1, DATE'2000-01-01') OVER (ORDER BY id), lead(v, 1, 0) OVER (ORDER BY id)"
        " FROM VALUES (1, DATE'2024-01-01', 5) AS t(id, dt, v)",
    )
    assert row == (datetime.date(2000, 1, 1), 0)
