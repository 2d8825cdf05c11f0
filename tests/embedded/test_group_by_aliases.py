"""GROUP BY an output alias (Spark's default ``spark.sql.groupByAliases``): the table was
created (its first refresh is full) and then every incremental refresh failed, the change
query grouping the source rows by a name only the output has. The alias is resolved to its
expression when the table is created, as Spark resolves it: a name that is also an input
column is that column. GROUP BY ALL, refused as a scalar aggregate, is resolved there too:
to the SELECT items without an aggregate."""

from __future__ import annotations

from pathlib import Path

import pytest
from refresh_checks import check_refreshes

from dyntables import DynamicTables

pytestmark = pytest.mark.embedded

QUERIES = [
    "SELECT g AS x, count(*) AS n FROM t GROUP BY x",
    "SELECT upper(g) AS ug, sum(v) AS s, min(v) AS m FROM t GROUP BY ug",
    # An input column of that name wins: grouped by g, shown upper-cased.
    "SELECT upper(g) AS g, count(*) AS n FROM t GROUP BY g",
    "SELECT s.x, s.n, u.v FROM (SELECT g AS x, count(*) AS n FROM t GROUP BY x) s"
    " JOIN t u ON s.x = u.g",
    "WITH b AS (SELECT v % 2 AS parity, g FROM t)"
    " SELECT parity AS p, count(DISTINCT g) AS n FROM b GROUP BY p",
    # GROUP BY ALL: the items without an aggregate (it was refused as a scalar aggregate).
    "SELECT g, upper(g) AS u, max(v) AS m, count(*) + 1 AS n FROM t GROUP BY ALL",
    "SELECT v % 2 AS parity, sum(v) AS s FROM t WHERE v > 0 GROUP BY ALL HAVING sum(v) > 1",
]


@pytest.mark.parametrize("query", QUERIES)
def test_a_group_by_alias_refreshes_incrementally(tmp_path: Path, query: str) -> None:
    dt = DynamicTables(warehouse=tmp_path / "warehouse")
    dt.sql("CREATE TABLE t (id BIGINT, g STRING, v INT) USING DELTA")
    dt.sql("INSERT INTO t VALUES (1, 'a', 1), (2, 'a', 2), (3, 'b', 3), (4, 'A', 4)")
    dt.sql(f"CREATE DYNAMIC TABLE d TARGET_LAG = '1 hour' REFRESH_MODE = INCREMENTAL AS {query}")
    changes = (
        "INSERT INTO t VALUES (5, 'c', 1), (6, 'a', 7)",
        "UPDATE t SET g = 'b' WHERE id = 1",
        "DELETE FROM t WHERE id IN (2, 4)",
    )
    check_refreshes(dt, "d", query, changes)
