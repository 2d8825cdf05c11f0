"""What a refresh reads of the tables' histories and schemas (refresh/context.py): the newest pages
of a history only, and a source's schema once per version, without missing a watermark
further back, a source's older commits, or a source replaced by another."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dyntables import DynamicTables

pytestmark = pytest.mark.embedded


@pytest.fixture
def dt(tmp_path: Path) -> DynamicTables:
    tables = DynamicTables(warehouse=tmp_path / "warehouse")
    tables.sql("CREATE TABLE orders (order_id BIGINT, amount INT) USING delta")
    tables.sql("INSERT INTO orders VALUES (1, 10), (2, 20)")
    tables.sql(
        "CREATE DYNAMIC TABLE big TARGET_LAG = '1 minute' REFRESH_MODE = INCREMENTAL"
        " AS SELECT order_id, amount FROM orders WHERE amount > 5"
    )
    return tables


def refresh(dt: DynamicTables, name: str = "big") -> Any:
    return dt.sql(f"ALTER DYNAMIC TABLE {name} REFRESH").collect()[0]


def history_limits(dt: DynamicTables, monkeypatch: pytest.MonkeyPatch) -> list[int | None]:
    """Record the ``limit`` of every history read from now on."""
    limits: list[int | None] = []
    fmt = dt.engine.table_format
    read = fmt.history

    def recorded(session: Any, table: Any, limit: int | None = None) -> Any:
        limits.append(limit)
        return read(session, table, limit)

    monkeypatch.setattr(fmt, "history", recorded)
    return limits


def test_a_refresh_reads_only_the_newest_commits(
    dt: DynamicTables, monkeypatch: pytest.MonkeyPatch
) -> None:
    for value in range(10):
        dt.sql(f"INSERT INTO orders VALUES ({value + 10}, 30)")
    refresh(dt)
    dt.sql("INSERT INTO orders VALUES (100, 30)")
    limits = history_limits(dt, monkeypatch)
    assert refresh(dt).action == "INCREMENTAL"
    assert None not in limits  # no read of a whole history


def test_a_source_s_commits_beyond_the_first_pages_are_all_applied(dt: DynamicTables) -> None:
    for value in range(70):  # more than the first two pages (4 and 64 commits)
        dt.sql(f"INSERT INTO orders VALUES ({value + 10}, {value % 9})")
    assert refresh(dt).action == "INCREMENTAL"
    expected = dt.sql("SELECT order_id, amount FROM orders WHERE amount > 5").collect()
    assert sorted(dt.sql("SELECT * FROM big").collect()) == sorted(expected)


def test_a_watermark_behind_property_commits_is_found(dt: DynamicTables) -> None:
    for _ in range(3):  # six commits that only change properties
        dt.sql("ALTER DYNAMIC TABLE big SUSPEND")
        dt.sql("ALTER DYNAMIC TABLE big RESUME")
    assert refresh(dt).action == "NO_DATA"
    dt.sql("INSERT INTO orders VALUES (3, 30)")
    assert refresh(dt).action == "INCREMENTAL"


def test_a_source_replaced_up_to_the_same_version_is_seen(dt: DynamicTables) -> None:
    version = dt.sql("DESCRIBE HISTORY orders LIMIT 1").collect()[0].version
    refresh(dt)  # the schema of orders at this version is now known
    dt.sql("DROP TABLE orders")
    dt.sql("CREATE TABLE orders (order_id BIGINT, amount BIGINT) USING delta")  # version 0
    for value in range(version):  # the same version again, with another schema
        dt.sql(f"INSERT INTO orders VALUES ({value}, 70)")
    assert dt.sql("DESCRIBE HISTORY orders LIMIT 1").collect()[0].version == version
    refreshed = refresh(dt)
    assert refreshed.action == "REINITIALIZE"
    assert sorted(dt.sql("SELECT * FROM big").collect()) == [(v, 70) for v in range(version)]
