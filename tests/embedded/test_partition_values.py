"""Partition values as the Delta log spells them, read and written by the embedded engine.

* An empty STRING partition value is a NULL (Spark writes '' so; delta-rs's scan reads it
  so): the change data feed read it as '', so an incremental refresh disagreed with the
  table (a row kept as '' where the query has NULL, a GROUP BY group missing).
* delta-rs spells a negative DECIMAL partition value with a fraction wrongly (``-5.-25``)
  and cannot read the table back: such writes are refused before anything is written.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from dyntables import DynamicTables

pytestmark = pytest.mark.embedded


@pytest.fixture
def dt(tmp_path: Path) -> DynamicTables:
    return DynamicTables(warehouse=tmp_path / "warehouse")


def _rows(dt: DynamicTables, sql: str) -> Counter[tuple[Any, ...]]:
    return Counter(tuple(row) for row in dt.sql(sql).collect())


def test_an_empty_string_partition_is_null_in_the_table_and_its_changes(dt: DynamicTables) -> None:
    dt.sql("CREATE TABLE t (id BIGINT, g STRING, v INT) USING DELTA PARTITIONED BY (g)")
    dt.sql("INSERT INTO t VALUES (1, 'a', 1)")
    queries = {
        "copied": "SELECT * FROM t",
        "grouped": "SELECT g, avg(v) AS a, count(*) AS n FROM t GROUP BY g",
        "joined": "SELECT l.id, r.id AS other FROM t l JOIN t r ON l.g = r.g",
    }
    for name, query in queries.items():
        dt.sql(
            f"CREATE DYNAMIC TABLE {name} TARGET_LAG = '1 hour' REFRESH_MODE = INCREMENTAL"
            f" AS {query}"
        )
    dt.sql("INSERT INTO t VALUES (2, '', 5), (3, '', 6), (4, NULL, 7)")
    assert _rows(dt, "SELECT id, g FROM t WHERE id > 1") == Counter(
        [(2, None), (3, None), (4, None)]
    )
    changes = _rows(dt, "SELECT id, g FROM table_changes('t', 2)")
    assert changes == Counter([(2, None), (3, None), (4, None)])
    for name, query in queries.items():
        refreshed = dt.sql(f"ALTER DYNAMIC TABLE {name} REFRESH").collect()[0]
        assert refreshed.action == "INCREMENTAL"
        assert _rows(dt, f"SELECT * FROM {name}") == _rows(dt, query), name


@pytest.mark.parametrize(
    "statement",
    [
        "INSERT INTO t VALUES (2, -5.25)",
        "INSERT INTO t VALUES (2, -0.5)",
        "UPDATE t SET p = -1.5",
        "MERGE INTO t USING (SELECT 3 AS id, CAST(-0.05 AS DECIMAL(10,2)) AS p) s"
        " ON t.id = s.id WHEN NOT MATCHED THEN INSERT *",
    ],
)
def test_a_negative_decimal_partition_with_a_fraction_is_refused_unwritten(
    dt: DynamicTables, statement: str
) -> None:
    dt.sql("CREATE TABLE t (id INT, p DECIMAL(10,2)) USING DELTA PARTITIONED BY (p)")
    dt.sql("INSERT INTO t VALUES (1, 5.25), (1, -3)")  # whole negative values are spelled right
    versions = dt.sql("DESCRIBE HISTORY t").count()
    with pytest.raises(Exception, match=r"negative DECIMAL with a fraction.*partition column p"):
        dt.sql(statement)
    assert _rows(dt, "SELECT * FROM t") == Counter([(1, 5.25), (1, -3)])
    assert dt.sql("DESCRIBE HISTORY t").count() == versions


def test_a_create_as_select_with_such_a_partition_creates_nothing(dt: DynamicTables) -> None:
    with pytest.raises(Exception, match="negative DECIMAL with a fraction"):
        dt.sql(
            "CREATE TABLE c USING DELTA PARTITIONED BY (p)"
            " AS SELECT 1 AS id, CAST(-5.25 AS DECIMAL(10,2)) AS p"
        )
    assert dt.sql("SHOW TABLES LIKE 'c'").collect() == []
