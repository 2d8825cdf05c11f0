"""A GROUP BY keyed by an expression Spark rounds (a DECIMAL(38, 8) times 2 is a
DECIMAL(38, 6)), whose groups an incremental refresh recomputes (a MIN that lost its
value). The recompute finds each group's input rows through a correlated subquery over the
touched keys; the engine typed the key expression inside it without the enclosing
query's types, so it was not rounded there, matched no touched key, and the refresh
deleted those groups (the refresh fuzzer found it)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from dyntables import DynamicTables

pytestmark = pytest.mark.embedded

QUERY = (
    "SELECT b.v * 2 AS k, min(a.g) AS first_g, count(*) AS n"
    " FROM (SELECT DISTINCT g FROM t1) a JOIN t0 b ON a.g = b.g GROUP BY b.v * 2"
)


def _rows(dt: DynamicTables, sql: str) -> Counter[tuple[Any, ...]]:
    return Counter(tuple(row) for row in dt.sql(sql).collect())


def test_groups_keyed_by_a_rounded_decimal_are_recomputed(tmp_path: Path) -> None:
    dt = DynamicTables(warehouse=tmp_path / "warehouse")
    dt.sql("CREATE TABLE t0 (id INT, g STRING, v DECIMAL(38, 8)) USING DELTA")
    dt.sql(
        "INSERT INTO t0 VALUES (1, 'a', 465.17831810), (2, 'b', 465.17831810),"
        " (3, 'b', -1.00000005), (4, 'c', 7.12345678)"
    )
    dt.sql("CREATE TABLE t1 (k INT, g STRING) USING DELTA")
    dt.sql("INSERT INTO t1 VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    dt.sql(f"CREATE DYNAMIC TABLE d TARGET_LAG = '1 hour' REFRESH_MODE = INCREMENTAL AS {QUERY}")
    for change in ("DELETE FROM t1 WHERE g = 'a'", "INSERT INTO t1 VALUES (4, 'a'), (5, 'c')"):
        dt.sql(change)
        refreshed = dt.sql("ALTER DYNAMIC TABLE d REFRESH").collect()[0]
        assert refreshed.action == "INCREMENTAL", refreshed
        assert _rows(dt, "SELECT * FROM d") == _rows(dt, QUERY)
