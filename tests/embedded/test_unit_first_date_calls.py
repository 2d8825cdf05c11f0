"""``dateadd``, ``date_add``, ``datediff`` and ``date_diff`` with a datetime unit first are
Spark 3.5's timestampadd and timestampdiff (``datediff(HOUR, a, b)`` counts whole hours,
``dateadd(MONTH, 1, ts)`` keeps the time of day), named as such; with two arguments they
are the day arithmetic of dates. The embedded engine once refused the three-argument
form with WRONG_NUM_ARGS. Each query runs on PySpark too: columns, rows and errors must
be Spark's."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from spark_outcomes import shim_session, spark_and_shim_outcomes

pytestmark = pytest.mark.embedded

TABLE = [
    "CREATE TABLE moments (id INT, a TIMESTAMP, b TIMESTAMP, d DATE) USING {fmt}",
    "INSERT INTO moments VALUES"
    " (1, TIMESTAMP'2024-01-01 10:00:00', TIMESTAMP'2024-03-01 09:00:00', DATE'2024-01-31'),"
    " (2, TIMESTAMP'2024-03-01 09:30:00', TIMESTAMP'2024-01-01 10:00:00', DATE'2024-02-29'),"
    " (3, NULL, TIMESTAMP'2024-01-01 00:00:00', NULL)",
]

QUERIES = [
    "SELECT id, datediff(DAY, a, b) FROM moments",
    "SELECT id, date_diff(HOUR, a, b) AS hours FROM moments",
    "SELECT id, datediff(month, a, b), datediff(YEAR, a, b) FROM moments",
    "SELECT id, datediff(MINUTE, d, b) FROM moments",
    "SELECT id, dateadd(MONTH, 1, a) FROM moments",
    "SELECT id, date_add(DAY, -3, d), dateadd(hour, 5, d) FROM moments",
    "SELECT id, datediff(b, a), date_add(d, 1) FROM moments",  # two arguments: days
    "SELECT id FROM moments WHERE datediff(DAY, a, b) > 0",
    "SELECT datediff(id, a, b) FROM moments",  # not a unit: three arguments refused
]


@pytest.fixture
def shim(tmp_path: Path) -> Iterator[Any]:
    yield from shim_session(tmp_path)


@pytest.mark.parametrize("query", QUERIES)
def test_unit_first_calls_are_sparks(query: str, shim: Any, pyspark_session: Any) -> None:
    expected, actual = spark_and_shim_outcomes(pyspark_session, shim, ("moments",), TABLE, query)
    assert actual == expected
