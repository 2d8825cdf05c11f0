"""Changes a source's change data feed did not record.

Delta records a commit's changes only while the table property
``delta.enableChangeDataFeed`` is true. Reading a range that holds a commit made while it
was off is refused with Delta's DELTA_MISSING_CHANGE_DATA (Delta on Spark's rule): the
embedded engine used to read such a copy-on-write commit as its files' rows and to fail on
a deletion-vector one with a delta-rs message. A dynamic table whose source has such a gap
recomputes in full and says why; one whose source was recreated without the feed (a dbt
full refresh drops and creates its tables) turns it back on when it reinitializes, so the
refreshes after it are incremental again.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from dyntables import DynamicTables

pytestmark = pytest.mark.embedded

QUERY = "SELECT k % 2 AS g, count(*) AS n, sum(v) AS total FROM src GROUP BY k % 2"


@pytest.fixture
def dt(tmp_path: Path) -> DynamicTables:
    return DynamicTables(warehouse=tmp_path / "warehouse")


def _source(dt: DynamicTables, vectors: bool, feed: bool = True) -> None:
    dt.sql(
        "CREATE TABLE src (k INT, v INT) USING DELTA TBLPROPERTIES"
        f" ('delta.enableDeletionVectors' = '{str(vectors).lower()}',"
        f" 'delta.enableChangeDataFeed' = '{str(feed).lower()}')"
    )
    dt.sql("INSERT INTO src VALUES (1, 10), (2, 20), (3, 30)")


def _feed_off_then_on(dt: DynamicTables) -> None:
    """Commits made while the feed is off, then the feed turned on again."""
    dt.sql("ALTER TABLE src SET TBLPROPERTIES ('delta.enableChangeDataFeed' = 'false')")
    dt.sql("UPDATE src SET v = v + 1 WHERE k = 1")
    dt.sql("DELETE FROM src WHERE k = 2")
    dt.sql("ALTER TABLE src SET TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true')")


def _version(dt: DynamicTables) -> int:
    return int(dt.sql("DESCRIBE HISTORY src LIMIT 1").collect()[0]["version"])


def _rows(dt: DynamicTables, sql: str) -> Counter[tuple[Any, ...]]:
    return Counter(tuple(row) for row in dt.sql(sql).collect())


def _refresh(dt: DynamicTables) -> Any:
    refreshed = dt.sql("ALTER DYNAMIC TABLE totals REFRESH").collect()[0]
    assert _rows(dt, "SELECT * FROM totals") == _rows(dt, QUERY)
    return refreshed


@pytest.mark.parametrize("vectors", [False, True], ids=["copy-on-write", "deletion-vectors"])
def test_a_range_with_commits_the_feed_did_not_record_is_refused(
    dt: DynamicTables, vectors: bool
) -> None:
    _source(dt, vectors)
    before = _version(dt)
    _feed_off_then_on(dt)
    dt.sql("INSERT INTO src VALUES (5, 50)")
    latest = _version(dt)
    unrecorded = rf"DELTA_MISSING_CHANGE_DATA.*version {before + 1} "
    with pytest.raises(Exception, match=unrecorded) as refused:
        dt.sql(f"SELECT * FROM table_changes('src', {before + 1}, {latest})").collect()
    assert "delta-rs" not in str(refused.value)
    assert "External error" not in str(refused.value)
    # The commits after the feed was turned on again are read as usual.
    after = dt.sql(f"SELECT k, v, _change_type FROM table_changes('src', {latest})").collect()
    assert [tuple(row) for row in after] == [(5, 50, "insert")]


def test_a_table_without_the_feed_is_refused_with_the_same_error(dt: DynamicTables) -> None:
    _source(dt, vectors=False, feed=False)
    with pytest.raises(Exception, match="DELTA_MISSING_CHANGE_DATA"):
        dt.sql("SELECT * FROM table_changes('src', 1)").collect()


@pytest.mark.parametrize("vectors", [False, True], ids=["copy-on-write", "deletion-vectors"])
def test_a_gap_in_a_source_feed_makes_one_refresh_full(dt: DynamicTables, vectors: bool) -> None:
    _source(dt, vectors)
    dt.sql(
        f"CREATE DYNAMIC TABLE totals TARGET_LAG = '1 minute' REFRESH_MODE = INCREMENTAL AS {QUERY}"
    )
    _feed_off_then_on(dt)
    dt.sql("INSERT INTO src VALUES (5, 50)")
    refreshed = _refresh(dt)
    assert refreshed.action == "FULL"
    assert "DELTA_MISSING_CHANGE_DATA" in refreshed.reason
    dt.sql("UPDATE src SET v = 0 WHERE k = 3")
    assert _refresh(dt).action == "INCREMENTAL"


def test_a_recreated_source_gets_its_feed_back_when_the_table_reinitializes(
    dt: DynamicTables,
) -> None:
    _source(dt, vectors=True)
    dt.sql(
        f"CREATE DYNAMIC TABLE totals TARGET_LAG = '1 minute' REFRESH_MODE = INCREMENTAL AS {QUERY}"
    )
    dt.sql("DROP TABLE src")
    _source(dt, vectors=True, feed=False)
    assert _refresh(dt).action == "REINITIALIZE"
    properties = dict((row[0], row[1]) for row in dt.sql("SHOW TBLPROPERTIES src").collect())
    assert properties.get("delta.enableChangeDataFeed") == "true"
    dt.sql("INSERT OVERWRITE src VALUES (7, 70)")
    assert _refresh(dt).action == "INCREMENTAL"
    dt.sql("DELETE FROM src WHERE k = 7")
    assert _refresh(dt).action == "INCREMENTAL"
