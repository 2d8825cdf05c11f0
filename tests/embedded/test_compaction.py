"""Tables stay cheap to read as refreshes add files to them (compaction.py): the refresh
history and the dynamic tables themselves are compacted once they reach
``COMPACT_AT_FILES`` files, with every row kept and every refresh still exact, downstream
ones included; a compaction that fails never fails the refresh."""

from __future__ import annotations

import logging
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from dyntables import DynamicTables, compaction, history
from sparkshim.metadata import DeltaMetadata

pytestmark = pytest.mark.embedded

HISTORY = f"{history.SYSTEM_SCHEMA}.{history.REFRESH_HISTORY}"
FILTERED = "SELECT id, a FROM src WHERE a >= 0"
GROUPED = "SELECT a, count(*) AS n FROM filtered GROUP BY a"


@pytest.fixture
def dt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> DynamicTables:
    monkeypatch.setattr(compaction, "COMPACT_AT_FILES", 4)
    monkeypatch.setattr(compaction, "CHECK_EVERY", 3)
    tables = DynamicTables(warehouse=tmp_path / "warehouse")
    tables.sql("CREATE TABLE src (id BIGINT, a BIGINT) USING delta")
    tables.sql("INSERT INTO src VALUES (1, 1)")
    for name, query in (("filtered", FILTERED), ("grouped", GROUPED)):
        tables.sql(
            f"CREATE DYNAMIC TABLE {name} TARGET_LAG = '1 hour' REFRESH_MODE = INCREMENTAL"
            f" AS {query}"
        )
    return tables


def refresh(dt: DynamicTables, name: str = "filtered") -> Any:
    return dt.sql(f"ALTER DYNAMIC TABLE {name} REFRESH").collect()[0]


def refresh_rows(dt: DynamicTables, name: str = "filtered") -> int:
    query = f"SELECT count(*) AS n FROM {HISTORY} WHERE name = '{name}'"
    return int(dt.sql(query).collect()[0]["n"])


def files(dt: DynamicTables, table: str = HISTORY) -> int:
    return int(dt.sql(f"DESCRIBE DETAIL {table}").collect()[0]["numFiles"])


def operations(dt: DynamicTables, table: str = HISTORY) -> list[str]:
    return [row["operation"] for row in dt.sql(f"DESCRIBE HISTORY {table}").collect()]


def bag(dt: DynamicTables, query: str) -> Counter[tuple[Any, ...]]:
    return Counter(tuple(row) for row in dt.sql(query).collect())


def test_refresh_history_is_compacted_and_keeps_every_row(dt: DynamicTables) -> None:
    before = refresh_rows(dt)
    for _ in range(12):
        refresh(dt)
    assert refresh_rows(dt) == before + 12
    assert "OPTIMIZE" in operations(dt)
    # Checked every third append: never past the threshold plus a check's worth.
    assert files(dt) < compaction.COMPACT_AT_FILES + compaction.CHECK_EVERY
    assert {row["name"] for row in dt.sql("SHOW DYNAMIC TABLES").collect()} == {
        "filtered",
        "grouped",
    }


def test_dynamic_tables_are_compacted_and_stay_exact(dt: DynamicTables) -> None:
    """Each incremental refresh of ``filtered`` appends a file; ``grouped`` reads its change
    feed, in which a compaction is no change."""
    for i in range(10):
        dt.sql(f"INSERT INTO src VALUES ({i + 10}, {i % 3})")
        if i % 4 == 3:
            dt.sql(f"UPDATE src SET a = a + 1 WHERE id = {i + 9}")
        assert refresh(dt)["action"] == "INCREMENTAL"
        assert refresh(dt, "grouped")["action"] == "INCREMENTAL"
        assert bag(dt, "SELECT * FROM filtered") == bag(dt, FILTERED)
        assert bag(dt, "SELECT * FROM grouped") == bag(
            dt, f"SELECT a, count(*) AS n FROM ({FILTERED}) AS f GROUP BY a"
        )
    assert "OPTIMIZE" in operations(dt, "filtered")
    assert files(dt, "filtered") < compaction.COMPACT_AT_FILES + compaction.CHECK_EVERY
    # Nothing changed since: the compaction is no data to refresh.
    assert (refresh(dt)["action"], refresh(dt, "grouped")["action"]) == ("NO_DATA", "NO_DATA")


def test_a_new_process_compacts_at_its_first_commit(
    dt: DynamicTables, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A CLI that refreshes once and exits still compacts what earlier processes left."""
    monkeypatch.setattr(compaction, "CHECK_EVERY", 1000)  # this process checks no more
    while files(dt) < compaction.COMPACT_AT_FILES:
        refresh(dt)
    assert "OPTIMIZE" not in operations(dt)
    other = DynamicTables(warehouse=tmp_path / "warehouse")
    other.sql("SHOW DYNAMIC TABLES").collect()  # a read compacts nothing
    assert "OPTIMIZE" not in operations(other)
    refresh(other)
    assert files(other) == 1


def test_a_failed_compaction_does_not_fail_the_refresh(
    dt: DynamicTables, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def lost_race(session: Any, table: Any) -> None:
        raise RuntimeError("another writer compacted those files first")

    monkeypatch.setattr(dt.engine.table_format, "compact", lost_race)
    before = refresh_rows(dt)
    with caplog.at_level(logging.WARNING, logger="dyntables.compaction"):
        for i in range(6):
            dt.sql(f"INSERT INTO src VALUES ({i + 10}, 1)")
            assert refresh(dt)["state"] == "SUCCEEDED"
    assert refresh_rows(dt) == before + 6
    assert "OPTIMIZE" not in operations(dt) + operations(dt, "filtered")
    assert "could not compact dyntables_system.refresh_history" in caplog.text
    assert "could not compact default.filtered" in caplog.text
    assert "another writer compacted those files first" in caplog.text
    assert bag(dt, "SELECT * FROM filtered") == bag(dt, FILTERED)


def removed_share(dt: DynamicTables, table: str) -> float:
    share = DeltaMetadata(dt.session).removed_row_share(table)
    assert share is not None
    return share


def test_a_table_whose_deletion_vectors_grow_is_purged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A refresh's MERGE adds the rows it removes to the table's deletion vectors; once they
    remove PURGE_AT_SHARE of the stored rows, OPTIMIZE writes the files again without
    them, and the table still equals its query. A refresh that removed many rows checks
    at once (not at the next of every CHECK_EVERY commits)."""
    monkeypatch.setattr(compaction, "PURGE_AT_SHARE", 0.25)
    monkeypatch.setattr(compaction, "CHECK_AT_REMOVED_ROWS", 30)
    dt = DynamicTables(warehouse=tmp_path / "warehouse")
    dt.sql("CREATE TABLE src (id BIGINT, k BIGINT, a BIGINT) USING delta")
    dt.sql("INSERT INTO src SELECT id, id % 10, id FROM range(100)")
    # Each partition's rows replaced whole: an update changes every row's total.
    query = "SELECT id, k, sum(a) OVER (PARTITION BY k) AS total FROM src"
    dt.sql(f"CREATE DYNAMIC TABLE totals TARGET_LAG = '1 hour' AS {query}")
    dt.sql("UPDATE src SET a = a + 1 WHERE id = 1")  # one partition: 10 rows of 100
    refresh(dt, "totals")
    assert 0 < removed_share(dt, "totals") < 0.25  # 10 of 110 stored rows
    assert "OPTIMIZE" not in operations(dt, "totals")
    dt.sql("UPDATE src SET a = a + 1 WHERE id IN (2, 3, 4)")  # 40 of 140
    refresh(dt, "totals")
    assert "OPTIMIZE" in operations(dt, "totals")
    assert removed_share(dt, "totals") == 0
    assert bag(dt, "SELECT * FROM totals") == bag(dt, query)
