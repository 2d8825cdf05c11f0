"""QUALIFY in a dynamic table's query (a Snowflake form Spark 3.5 lacks): stored as a
derived table filtered on the condition, giving the query's own columns. It was stored as
sqlglot rewrites it: ``SELECT * … QUALIFY`` (the usual way to keep one row per key) gained
the rewrite's helper column ``_w``; an output alias named like an input column was read
in the condition even where qualified (``ORDER BY t.v`` became the alias ``v``), so the
table kept other rows than the query from its first refresh; and a qualified column
outside the window was left out of the derived table's scope (CREATE failed). The refresh
fuzzer found them."""

from __future__ import annotations

from pathlib import Path

import pytest
from refresh_checks import check_refreshes, rows

from dyntables import DynamicTableError, DynamicTables

pytestmark = pytest.mark.embedded

QUERIES = (
    "SELECT * FROM t QUALIFY row_number() OVER (PARTITION BY k ORDER BY v DESC) = 1",
    "SELECT id, t.w AS v FROM t QUALIFY row_number() OVER (PARTITION BY t.k ORDER BY t.v DESC) = 1",
    "SELECT id, t.w FROM t QUALIFY max(t.v) OVER (PARTITION BY t.k) = t.v",
    "SELECT id, k, row_number() OVER (PARTITION BY k ORDER BY v, id) AS rn FROM t QUALIFY rn <= 2",
    "SELECT DISTINCT k FROM t QUALIFY count(*) OVER (PARTITION BY k) > 1",
    "SELECT k, sum(v) AS total FROM t GROUP BY k QUALIFY rank() OVER (ORDER BY sum(v) DESC) <= 2",
    "WITH latest AS (SELECT id, k, v FROM t"
    " QUALIFY row_number() OVER (PARTITION BY k ORDER BY id DESC) = 1) SELECT k, v FROM latest",
)


@pytest.mark.parametrize("query", QUERIES)
def test_a_qualify_keeps_the_query_columns_and_rows(tmp_path: Path, query: str) -> None:
    dt = DynamicTables(warehouse=tmp_path / "warehouse")
    dt.sql("CREATE TABLE t (id BIGINT, k INT, v INT, w INT) USING DELTA")
    dt.sql("INSERT INTO t VALUES (1, 1, 10, 2), (2, 1, 20, 1), (3, 2, 5, 7), (4, NULL, 1, 1)")
    dt.sql(f"CREATE DYNAMIC TABLE x TARGET_LAG = '1 hour' REFRESH_MODE = AUTO AS {query}")
    assert dt.sql("SELECT * FROM x").columns == dt.sql(query).columns
    assert rows(dt, "SELECT * FROM x") == rows(dt, query)
    changes = (
        "INSERT INTO t VALUES (5, 1, 30, 0), (6, 2, 6, 3)",
        "UPDATE t SET v = 40 WHERE id = 1",
        "DELETE FROM t WHERE id = 5",
    )
    check_refreshes(dt, "x", query, changes, action=None)


def test_a_nested_qualify_over_a_star_asks_for_names(tmp_path: Path) -> None:
    dt = DynamicTables(warehouse=tmp_path / "warehouse")
    dt.sql("CREATE TABLE t (id BIGINT, k INT) USING DELTA")
    query = (
        "SELECT k FROM (SELECT * FROM t QUALIFY row_number() OVER (PARTITION BY k ORDER BY id) = 1)"
    )
    with pytest.raises(DynamicTableError, match="must name each of its columns"):
        dt.sql(f"CREATE DYNAMIC TABLE x TARGET_LAG = '1 hour' AS {query}")
    assert "x" not in [row[1] for row in dt.sql("SHOW TABLES").collect()]
