"""A UNION ALL whose branches have different column types (a STRING beside a BIGINT: Spark
makes the union's column a STRING) when only one branch changed. The change of the other
branches alone kept their own type (BIGINT 2), so the GROUP BY's change arithmetic
matched it with the table's group '02' (Spark compares a STRING with a BIGINT as numbers)
and merged two groups into one. An unchanged branch now still types the change. Found by
the refresh fuzzer; the test fails on the old code."""

from __future__ import annotations

from pathlib import Path

import pytest
from refresh_checks import check_refreshes

from dyntables import DynamicTables

pytestmark = pytest.mark.embedded

UNION = "SELECT s AS x FROM a UNION ALL SELECT k FROM b"
QUERIES = (
    f"SELECT x, count(*) AS n FROM ({UNION}) u GROUP BY x",
    f"SELECT DISTINCT x FROM ({UNION}) u",
    UNION,
)


@pytest.mark.parametrize("query", QUERIES)
def test_one_branch_changed_keeps_the_union_types(tmp_path: Path, query: str) -> None:
    dt = DynamicTables(warehouse=tmp_path / "warehouse")
    dt.sql("CREATE TABLE a (id BIGINT, s STRING) USING DELTA")
    dt.sql("CREATE TABLE b (id BIGINT, k BIGINT) USING DELTA")
    dt.sql("INSERT INTO a VALUES (1, '02'), (2, '7.0')")
    dt.sql("INSERT INTO b VALUES (1, 5)")
    dt.sql(f"CREATE DYNAMIC TABLE x TARGET_LAG = '1 hour' REFRESH_MODE = INCREMENTAL AS {query}")
    changes = (
        "INSERT INTO b VALUES (2, 2), (3, 7)",
        "DELETE FROM b WHERE id = 1",
        "INSERT INTO a VALUES (3, '2')",
        "UPDATE b SET k = 8 WHERE id = 3",
    )
    check_refreshes(dt, "x", query, changes)
