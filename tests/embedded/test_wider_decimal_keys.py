"""An outer join on DECIMAL keys of different scales (DECIMAL(38, 2) = DECIMAL(18, 4))
after another join. An incremental refresh keeps the rows of the touched join keys, the
key being ``coalesce`` of both sides' columns: Spark types that DECIMAL(38, 4), but the
engine chose between the two values in DuckDB's common type, DECIMAL(38, 2), so 282.3233
became 282.32, matched no touched key, and the refresh lost the new row (the refresh
fuzzer found it). CASE, IF, COALESCE, nvl and nvl2 now cast each value to Spark's wider
type before choosing."""

from __future__ import annotations

from pathlib import Path

import pytest
from refresh_checks import check_refreshes

from dyntables import DynamicTables

pytestmark = pytest.mark.embedded

QUERY = "SELECT s.v, s.k, t.g FROM t LEFT JOIN u ON t.g = u.g FULL OUTER JOIN s ON t.v = s.v"


def test_rows_of_keys_wider_than_one_side_are_kept(tmp_path: Path) -> None:
    dt = DynamicTables(warehouse=tmp_path / "warehouse")
    dt.sql("CREATE TABLE t (g STRING, v DECIMAL(38, 2)) USING DELTA")
    dt.sql("INSERT INTO t VALUES ('a', 282.32), ('b', 1.50)")
    dt.sql("CREATE TABLE u (g STRING) USING DELTA")
    dt.sql("INSERT INTO u VALUES ('a')")
    dt.sql("CREATE TABLE s (k INT, v DECIMAL(18, 4)) USING DELTA")
    dt.sql("INSERT INTO s VALUES (1, 1.5000)")
    dt.sql(f"CREATE DYNAMIC TABLE x TARGET_LAG = '1 hour' REFRESH_MODE = INCREMENTAL AS {QUERY}")
    changes = (
        "INSERT INTO s VALUES (6, 282.3233), (7, -0.0001)",
        "UPDATE s SET v = 282.3201 WHERE k = 1",
        "DELETE FROM s WHERE k = 6",
    )
    check_refreshes(dt, "x", QUERY, changes)
