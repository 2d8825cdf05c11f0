"""What users read back on the embedded engine: SHOW's two column sets, the materialized
views listing with a broken view in it, EXPLAIN in each refresh mode, the graph's text."""

from __future__ import annotations

from pathlib import Path

import pytest

from dyntables import DynamicTables

pytestmark = pytest.mark.embedded


@pytest.fixture
def dt(tmp_path: Path) -> DynamicTables:
    tables = DynamicTables(warehouse=tmp_path / "warehouse")
    tables.sql("CREATE TABLE orders (order_id BIGINT, status STRING) USING delta")
    tables.sql("INSERT INTO orders VALUES (1, 'paid'), (2, 'returned')")
    return tables


def test_explain_of_a_full_table_says_it_recomputes_the_whole_query(dt: DynamicTables) -> None:
    query = "SELECT status, count(*) AS n FROM orders WHERE order_id > 0 GROUP BY status"
    dt.sql(f"CREATE DYNAMIC TABLE whole TARGET_LAG = '1 minute' REFRESH_MODE = FULL AS {query}")
    dt.sql(f"CREATE DYNAMIC TABLE parts TARGET_LAG = '1 minute' AS {query}")
    whole = [tuple(row) for row in dt.sql("EXPLAIN DYNAMIC TABLE whole").collect()]
    assert whole[0] == ("refresh_mode", "", "FULL")
    assert whole[2:] == [
        ("FROM default.orders", "SOURCE", "read in full"),
        ("WHERE order_id > 0", "PROJECT_FILTER", "recomputed over all its input rows"),
        ("GROUP BY status", "GROUP_BY", "recomputed over all its input rows"),
    ]
    parts = [tuple(row) for row in dt.sql("EXPLAIN DYNAMIC TABLE parts").collect()]
    assert parts[0] == ("refresh_mode", "", "INCREMENTAL")
    assert parts[2][2] == "changed rows only, read from the change feed"
    assert parts[4][2] == "recompute the affected groups from their input rows"
