"""Spark 3.5's datetime pattern letters in date_format, from_unixtime and the parsing
functions: the embedded engine prints what Spark prints (standalone months, quarters,
K/k hours, any number of S, UTC's zone letters, quoted quotes, optional sections) and
raises Spark's error where Spark refuses the pattern (week-based letters, runs too long,
unknown letters); it had refused the first and refused the second with its own error,
or printed it. Each query runs on PySpark too: columns, rows and error classes must be
Spark's."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from spark_outcomes import shim_session, spark_and_shim_outcomes

from sparkshim import ShimSession
from sparkshim.errors import IllegalArgumentException, UnsupportedSqlError

pytestmark = pytest.mark.embedded

TABLE = [
    "CREATE TABLE moments (id INT, ts TIMESTAMP, d DATE) USING {fmt}",
    "INSERT INTO moments VALUES"
    " (1, TIMESTAMP'2024-02-29 13:04:05.678901', DATE'2024-02-29'),"
    " (2, TIMESTAMP'2024-01-01 00:00:00', DATE'2024-01-01'),"
    " (3, TIMESTAMP'1969-12-31 12:00:00.5', DATE'1969-12-31'),"
    " (4, TIMESTAMP'2099-07-04 23:59:59.000123', DATE'2099-07-04'),"
    " (5, NULL, NULL)",
]

# Printed as Spark prints them (each was refused or printed otherwise).
ANSWERED = [
    "LLL",
    "LLLL",
    "L/LL",
    "Q QQ QQQ QQQQ",
    "qqqq",
    "K KK k kk",
    "S SS SSSS SSSSS",
    "SSSSSSS SSSSSSSSS",
    "DD",
    "yyy yyyyy",
    "EE",
    "VV z zzzz v vvvv",
    "X XX XXX XXXX XXXXX",
    "x xx xxx xxxx xxxxx",
    "Z ZZZ ZZZZ ZZZZZ O OOOO",
    "yyyy-MM-dd'T'HH:mm:ss.SSSXXX",
    "'o''clock' h",
    "yyyy[-MM][ zzz]",
    "",
]

# Spark's upgrade error (the legacy parser read them).
SPARK_REFUSED = ["Y", "YYYY", "w", "W", "u", "MMMMM", "EEEEE", "ddd", "aa", "yyyy]", "#"]


@pytest.fixture
def shim(tmp_path: Path) -> Iterator[Any]:
    yield from shim_session(tmp_path)


@pytest.mark.parametrize("pattern", ANSWERED + SPARK_REFUSED)
def test_date_format_prints_as_spark(pattern: str, shim: Any, pyspark_session: Any) -> None:
    # Patterns between double quotes: they hold single ones.
    query = f'SELECT id, date_format(ts, "{pattern}"), date_format(d, "{pattern}") FROM moments'
    expected, actual = spark_and_shim_outcomes(pyspark_session, shim, ("moments",), TABLE, query)
    assert actual == expected


@pytest.mark.parametrize("pattern", ["QQQ yyyy", "K:mm a, z", "LLLL", "Y"])
def test_from_unixtime_prints_as_date_format(pattern: str, shim: Any, pyspark_session: Any) -> None:
    query = f'SELECT id, from_unixtime(unix_timestamp(ts), "{pattern}") FROM moments'
    expected, actual = spark_and_shim_outcomes(pyspark_session, shim, ("moments",), TABLE, query)
    assert actual == expected


@pytest.mark.parametrize(
    "query",
    [
        # the seconds are cut towards zero: 1969-12-31 12:00:00.5 is -43199
        "SELECT id, unix_timestamp(ts), to_unix_timestamp(ts) FROM moments",
        # Spark's parser refuses the day of the week and the week-based year
        "SELECT to_timestamp('Thu 2024-02-29', 'EEE yyyy-MM-dd') FROM moments",
        "SELECT unix_timestamp('2024', 'YYYY') FROM moments",
    ],
)
def test_parsing_patterns_are_sparks(query: str, shim: Any, pyspark_session: Any) -> None:
    expected, actual = spark_and_shim_outcomes(pyspark_session, shim, ("moments",), TABLE, query)
    assert actual == expected


@pytest.mark.parametrize(
    "pattern", ["e", "c", "n", "B", "QQQQQ", "VVV", "OO", "vv", "XXXXXX", "b", "a'b"]
)
def test_patterns_java_refuses_raise_sparks_message(
    pattern: str, shim: Any, pyspark_session: Any
) -> None:
    query = f"SELECT date_format(TIMESTAMP'2024-01-01 00:00:00', \"{pattern}\")"
    with pytest.raises(IllegalArgumentException) as spark_error:
        pyspark_session.sql(query).collect()
    with pytest.raises(IllegalArgumentException) as shim_error:
        shim.sql(query).collect()
    assert str(shim_error.value) == str(spark_error.value).split("\n")[0]


def test_zone_letters_outside_utc_are_refused(shim: ShimSession) -> None:
    """Zone names and offsets are printed for UTC (Spark's session zone here) only."""
    shim.conf.set("spark.sql.session.timeZone", "America/New_York")
    query = "SELECT date_format(TIMESTAMP'2024-01-01 10:00:00', 'HH:mm z')"
    with pytest.raises(UnsupportedSqlError, match=r"'z' in date_format .* other than UTC"):
        shim.sql(query).collect()
