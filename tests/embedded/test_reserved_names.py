"""Names starting with ``__dt_`` are the refresh's own (a change's sign, its net count,
touched keys): a query naming its output ``__dt_sign`` was refreshed into wrong rows (the
change's sign column was taken for it), ``__dt_net`` failed every refresh with an internal
message. CREATE now refuses such a name, in the query, its column list or a source, and
creates nothing; a source that gains such a column later is refreshed in full, with the
reason. The first test fails on the code before the check."""

from __future__ import annotations

from pathlib import Path

import pytest
from refresh_checks import check_refreshes, rows

from dyntables import DynamicTableError, DynamicTables

pytestmark = pytest.mark.embedded


@pytest.fixture
def dt(tmp_path: Path) -> DynamicTables:
    dt = DynamicTables(warehouse=tmp_path / "warehouse")
    dt.sql("CREATE TABLE s (k INT, v INT) USING DELTA")
    dt.sql("INSERT INTO s VALUES (1, 2), (2, 5)")
    return dt


@pytest.mark.parametrize(
    "definition",
    [
        "TARGET_LAG = '1 hour' AS SELECT k, v AS __dt_sign FROM s",
        "TARGET_LAG = '1 hour' AS SELECT k, sum(v) AS __DT_NET FROM s GROUP BY k",
        "TARGET_LAG = '1 hour' AS WITH __dt_groups AS (SELECT k FROM s)"
        " SELECT DISTINCT k FROM __dt_groups",
        "(k, __dt_key0) TARGET_LAG = '1 hour' AS SELECT k, v FROM s",
    ],
)
def test_reserved_names_are_refused(dt: DynamicTables, definition: str) -> None:
    with pytest.raises(DynamicTableError, match="names starting with __dt_ are reserved"):
        dt.sql(f"CREATE DYNAMIC TABLE x {definition}")
    assert not dt.sql("SHOW TABLES LIKE 'x'").collect()


def test_a_source_with_a_reserved_column_is_refused(dt: DynamicTables) -> None:
    dt.sql("CREATE TABLE r (k INT, __dt_sign INT) USING DELTA")
    with pytest.raises(DynamicTableError, match=r"source default\.r has a column __dt_sign"):
        dt.sql("CREATE DYNAMIC TABLE x TARGET_LAG = '1 hour' AS SELECT k FROM r")
    assert not dt.sql("SHOW TABLES LIKE 'x'").collect()


def test_a_source_gaining_a_reserved_column_is_refreshed_in_full(dt: DynamicTables) -> None:
    query = "SELECT k, v FROM s WHERE v > 1"
    dt.sql(f"CREATE DYNAMIC TABLE x TARGET_LAG = '1 hour' AS {query}")
    check_refreshes(dt, "x", query, ["INSERT INTO s VALUES (3, 4)"])
    dt.sql("ALTER TABLE s ADD COLUMNS (__dt_sign INT)")
    dt.sql("INSERT INTO s VALUES (4, 9, -1)")
    dt.sql("ALTER DYNAMIC TABLE x REFRESH")
    dt.sql("UPDATE s SET v = 7 WHERE k = 1")
    refreshed = dt.sql("ALTER DYNAMIC TABLE x REFRESH").collect()[0]
    assert refreshed.action == "FULL"
    assert "reserves for its own columns" in refreshed.reason
    assert rows(dt, "SELECT * FROM x") == rows(dt, query)
