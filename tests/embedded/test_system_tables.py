"""The system tables stay cheap to read as they grow (history.py): each refresh appends a
file to ``refresh_history``, and a table that reaches ``COMPACT_AT_FILES`` files is
compacted, with every row kept; a compaction that fails never fails the refresh."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from dyntables import DynamicTables, history

pytestmark = pytest.mark.embedded

HISTORY = f"{history.SYSTEM_SCHEMA}.{history.REFRESH_HISTORY}"


@pytest.fixture
def dt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> DynamicTables:
    monkeypatch.setattr(history, "COMPACT_AT_FILES", 4)
    monkeypatch.setattr(history, "CHECK_EVERY", 3)
    tables = DynamicTables(warehouse=tmp_path / "warehouse")
    tables.sql("CREATE TABLE src (a BIGINT) USING delta")
    tables.sql("INSERT INTO src VALUES (1)")
    tables.sql("CREATE DYNAMIC TABLE d TARGET_LAG = '1 hour' AS SELECT a FROM src")
    return tables


def refresh_rows(dt: DynamicTables) -> int:
    return int(dt.sql(f"SELECT count(*) AS n FROM {HISTORY} WHERE name = 'd'").collect()[0][0])


def files(dt: DynamicTables) -> int:
    return int(dt.sql(f"DESCRIBE DETAIL {HISTORY}").collect()[0]["numFiles"])


def operations(dt: DynamicTables) -> list[str]:
    return [row["operation"] for row in dt.sql(f"DESCRIBE HISTORY {HISTORY}").collect()]


def test_refresh_history_is_compacted_and_keeps_every_row(dt: DynamicTables) -> None:
    before = refresh_rows(dt)
    for _ in range(12):
        dt.sql("ALTER DYNAMIC TABLE d REFRESH")
    assert refresh_rows(dt) == before + 12
    assert "OPTIMIZE" in operations(dt)
    # Checked after every third append: it never gets past the threshold plus a check's worth.
    assert files(dt) < history.COMPACT_AT_FILES + history.CHECK_EVERY
    assert dt.sql("SHOW DYNAMIC TABLES").collect()[0]["name"] == "d"


def test_a_new_process_compacts_what_it_finds(dt: DynamicTables, tmp_path: Path) -> None:
    """At first use, before any append of its own (a CLI that refreshes once and exits)."""
    while files(dt) < history.COMPACT_AT_FILES:  # this process checked before that
        dt.sql("ALTER DYNAMIC TABLE d REFRESH")
    assert "OPTIMIZE" not in operations(dt)
    other = DynamicTables(warehouse=tmp_path / "warehouse")
    other.sql("SHOW DYNAMIC TABLES").collect()
    assert files(other) == 1


def test_a_failed_compaction_does_not_fail_the_refresh(
    dt: DynamicTables, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def lost_race(session: Any, table: Any) -> None:
        raise RuntimeError("another writer compacted those files first")

    monkeypatch.setattr(dt.engine.table_format, "compact", lost_race)
    before = refresh_rows(dt)
    with caplog.at_level(logging.WARNING, logger="dyntables.history"):
        for _ in range(6):
            row = dt.sql("ALTER DYNAMIC TABLE d REFRESH").collect()[0]
            assert row["state"] == "SUCCEEDED"
    assert refresh_rows(dt) == before + 6
    assert "OPTIMIZE" not in operations(dt)
    assert "could not compact dyntables_system.refresh_history" in caplog.text
    assert "another writer compacted those files first" in caplog.text
