"""The delete-and-insert MERGE committed by sparkshim itself (sparkshim/rewrite.py),
checked against the same MERGE applied by delta-rs, and with readers that did not write
it: delta-rs, its change data feed, and real PySpark on the data and change files."""

from __future__ import annotations

import json
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable, write_deltalake
from pyspark.sql import SparkSession

from sparkshim import delta, rewrite
from sparkshim.config import EXPECTED_VERSION_CONF
from sparkshim.session import ShimSession

pytestmark = pytest.mark.embedded

COLUMNS = "id INT, name STRING, ts TIMESTAMP, amount DECIMAL(12, 2), tags ARRAY<INT>"
# Duplicates, NULLs in every column, and one row per batch in a file of its own.
BATCHES = (
    "(1, 'a', CAST('2024-01-02 03:04:05.123456' AS TIMESTAMP), 12.34, array(1, 2)),"
    " (1, 'a', CAST('2024-01-02 03:04:05.123456' AS TIMESTAMP), 12.34, array(1, 2)),"
    " (2, NULL, NULL, NULL, NULL), (3, 'c', NULL, 0.50, array())",
    "(4, 'd', CAST('2025-06-01 00:00:00' AS TIMESTAMP), 4.00, NULL), (2, NULL, NULL, NULL, NULL)",
    "(5, 'e', NULL, 5.00, array(5))",
)
# Each MERGE deletes the rows whose id is in a `delete` row of the source and inserts the
# source's `insert` rows, as an incremental refresh applies a change.
MERGES = (
    "SELECT 1 AS id, 'delete' AS kind UNION ALL SELECT 7, 'insert'",
    "SELECT 2 AS id, 'delete' AS kind UNION ALL SELECT 2, 'insert' UNION ALL SELECT 2, 'insert'",
    "SELECT 4 AS id, 'delete' AS kind UNION ALL SELECT 5, 'delete' UNION ALL SELECT 3, 'delete'",
    "SELECT 99 AS id, 'delete' AS kind UNION ALL SELECT 8, 'insert'",
    "SELECT CAST(NULL AS INT) AS id, 'delete' AS kind",
)

# Other ON conditions: a range (one source row matching many target rows), null-safe
# equality matching NULLs, and a condition on the target alone.
OTHER_MERGES = (
    "MERGE INTO t USING (SELECT 8 AS low) AS s ON t.id >= s.low AND t.amount IS NULL"
    " WHEN MATCHED THEN DELETE",
    "MERGE INTO t AS target USING (SELECT CAST(NULL AS STRING) AS name, 10 AS id) AS s"
    " ON target.name <=> s.name WHEN MATCHED THEN DELETE"
    " WHEN NOT MATCHED THEN INSERT (id, name) VALUES (s.id, 'ten')",
    "MERGE INTO t USING (SELECT 1 AS one) AS s ON t.id = 7 WHEN MATCHED THEN DELETE",
)


def merge(source: str) -> str:
    return (
        f"MERGE INTO t USING ({source}) AS s ON s.kind = 'delete' AND t.id = s.id"
        " WHEN MATCHED THEN DELETE"
        " WHEN NOT MATCHED AND s.kind = 'insert' THEN INSERT (id, name) VALUES (s.id, 'new')"
    )


def make_table(warehouse: Path, change_feed: bool = True) -> ShimSession:
    session = ShimSession(warehouse=warehouse)
    properties = " TBLPROPERTIES (delta.enableChangeDataFeed = true)" if change_feed else ""
    session.sql(f"CREATE TABLE t ({COLUMNS}){properties}")
    for batch in BATCHES:
        session.sql(f"INSERT INTO t VALUES {batch}")
    return session


def location(session: ShimSession) -> Path:
    uri = str(session.sql("DESCRIBE DETAIL t").collect()[0]["location"])
    return Path(urlparse(uri).path)


def engine_of_latest_commit(path: Path) -> str:
    latest = max((path / "_delta_log").glob("*.json"))
    return str(json.loads(latest.read_text().splitlines()[0])["commitInfo"]["engineInfo"])


def rows(path: Path) -> Counter[tuple[Any, ...]]:
    table = DeltaTable(str(path)).to_pyarrow_table()
    return Counter(_hashable(row) for row in table.to_pylist())


def changes(path: Path, version: int) -> Counter[tuple[Any, ...]]:
    feed = pa.table(
        DeltaTable(str(path)).load_cdf(starting_version=version, ending_version=version)
    )
    feed = feed.drop_columns(["_commit_version", "_commit_timestamp"])
    return Counter(_hashable(row) for row in feed.to_pylist())


def _hashable(row: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(tuple(v) if isinstance(v, list) else v for v in row.values())


@pytest.fixture
def twins(tmp_path: Path) -> tuple[ShimSession, ShimSession]:
    """Two equal tables; MERGEs into the second go through delta-rs."""
    return make_table(tmp_path / "rewritten"), make_table(tmp_path / "by_delta_rs")


def test_each_merge_equals_delta_rs_in_rows_change_feed_and_metrics(
    twins: tuple[ShimSession, ShimSession], monkeypatch: pytest.MonkeyPatch
) -> None:
    rewritten, by_delta_rs = twins
    real_rewrite = rewrite.delete_and_insert
    for source in [merge(source) for source in MERGES] + list(OTHER_MERGES):
        rewritten.sql(source)
        monkeypatch.setattr(rewrite, "delete_and_insert", lambda *args: False)
        by_delta_rs.sql(source)
        monkeypatch.setattr(rewrite, "delete_and_insert", real_rewrite)
        ours, theirs = location(rewritten), location(by_delta_rs)
        assert engine_of_latest_commit(ours) == "sparkshim"
        assert engine_of_latest_commit(theirs).startswith("delta-rs")
        assert rows(ours) == rows(theirs), source
        version = DeltaTable(str(ours)).version()
        assert changes(ours, version) == changes(theirs, version), source
        ours_metrics, theirs_metrics = (
            session.sql("DESCRIBE HISTORY t LIMIT 1").collect()[0]["operationMetrics"]
            for session in (rewritten, by_delta_rs)
        )
        for name in ("numTargetRowsInserted", "numTargetRowsDeleted", "numTargetRowsUpdated"):
            assert ours_metrics[name] == theirs_metrics[name], (source, name)
    final = rewritten.sql("SELECT id, name FROM t ORDER BY id").collect()
    assert [tuple(row) for row in final] == [(2, "new"), (2, "new"), (10, "ten")]


def test_only_files_holding_a_deleted_row_are_rewritten(tmp_path: Path) -> None:
    session = make_table(tmp_path / "warehouse")
    path = location(session)
    before = {Path(urlparse(uri).path).name for uri in DeltaTable(str(path)).file_uris()}
    session.sql(merge("SELECT 5 AS id, 'delete' AS kind"))  # only in the third batch's file
    commit = max((path / "_delta_log").glob("*.json")).read_text().splitlines()
    removed = [json.loads(line)["remove"]["path"] for line in commit if '"remove"' in line]
    assert len(removed) == 1
    assert removed[0] in before
    after = {Path(urlparse(uri).path).name for uri in DeltaTable(str(path)).file_uris()}
    assert len(after & before) == len(before) - 1


def test_data_and_change_files_are_read_alike_by_pyspark(
    tmp_path: Path, pyspark_session: SparkSession
) -> None:
    session = make_table(tmp_path / "warehouse")
    session.sql(merge(MERGES[0]))
    path = location(session)
    read = pyspark_session.read.parquet(*DeltaTable(str(path)).file_uris())
    assert Counter(row.id for row in read.collect()) == Counter({2: 2, 3: 1, 4: 1, 5: 1, 7: 1})
    commit = max((path / "_delta_log").glob("*.json")).read_text().splitlines()
    (cdc,) = [json.loads(line)["cdc"]["path"] for line in commit if '"cdc"' in line]
    feed = pyspark_session.read.parquet(str(path / cdc)).collect()
    assert Counter((row.id, row._change_type) for row in feed) == Counter(
        {(1, "delete"): 2, (7, "insert"): 1}
    )
    deleted = next(row for row in feed if row.id == 1)
    assert deleted.amount == Decimal("12.34")
    assert deleted.tags == [1, 2]
    assert deleted.ts is not None


def test_without_a_change_feed_no_change_file_is_written(tmp_path: Path) -> None:
    session = make_table(tmp_path / "warehouse", change_feed=False)
    session.sql(merge(MERGES[0]))
    path = location(session)
    assert engine_of_latest_commit(path) == "sparkshim"
    assert not (path / "_change_data").exists()
    assert sorted(DeltaTable(str(path)).to_pyarrow_table()["id"].to_pylist()) == [2, 2, 3, 4, 5, 7]


def test_a_table_moved_since_the_merge_read_it_refuses_the_merge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The MERGE's rows were computed from the version it read: applied to a newer one
    they could undo or repeat the other commit, so it fails, as Delta's conflict check
    fails a MERGE whose read files changed, and writes nothing."""
    session = make_table(tmp_path / "warehouse")
    path = location(session)
    real_rewrite = rewrite.delete_and_insert

    def another_writer_first(*args: Any) -> bool:
        schema = DeltaTable(str(path)).schema().to_arrow()
        appended = pa.Table.from_pylist([{"id": 1, "name": "late"}], schema=pa.schema(schema))
        write_deltalake(str(path), appended, mode="append")
        return real_rewrite(*args)

    monkeypatch.setattr(rewrite, "delete_and_insert", another_writer_first)
    files_before = set(path.rglob("*.parquet"))
    version = DeltaTable(str(path)).version()
    with pytest.raises(delta.TableMovedError, match="DELTA_CONCURRENT_WRITE"):
        session.sql(merge(MERGES[0]))
    assert DeltaTable(str(path)).version() == version + 1  # the other writer's commit only
    live = {Path(urlparse(uri).path) for uri in DeltaTable(str(path)).file_uris()}
    assert all(f in live for f in set(path.rglob("*.parquet")) - files_before)


def test_a_lost_race_for_the_version_leaves_no_file_and_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = make_table(tmp_path / "warehouse")
    path = location(session)
    before = rows(path)
    files_before = set(path.rglob("*.parquet"))
    monkeypatch.setattr(delta, "put_if_absent", lambda *args: False)
    with pytest.raises(delta.TableMovedError, match="nothing was written"):
        session.sql(merge(MERGES[0]))
    assert set(path.rglob("*.parquet")) == files_before
    assert rows(path) == before


def test_a_conditional_merge_on_a_moved_table_is_refused_and_changes_nothing(
    tmp_path: Path,
) -> None:
    session = make_table(tmp_path / "warehouse")
    path = location(session)
    before = rows(path)
    session.conf.set(EXPECTED_VERSION_CONF, str(DeltaTable(str(path)).version() - 1))
    with pytest.raises(delta.TableMovedError):
        session.sql(merge(MERGES[0]))
    assert rows(path) == before


def test_a_table_with_a_check_constraint_is_merged_by_delta_rs(tmp_path: Path) -> None:
    session = make_table(tmp_path / "warehouse")
    path = location(session)
    DeltaTable(str(path)).alter.add_constraint({"positive": "id > 0"})
    session.sql(merge(MERGES[0]))
    assert engine_of_latest_commit(path).startswith("delta-rs")
    assert sorted(DeltaTable(str(path)).to_pyarrow_table()["id"].to_pylist()) == [2, 2, 3, 4, 5, 7]


def test_a_checkpoint_is_written_at_the_checkpoint_interval(tmp_path: Path) -> None:
    session = make_table(tmp_path / "warehouse")  # versions 0 to 3
    session.sql("ALTER TABLE t SET TBLPROPERTIES (delta.checkpointInterval = 5)")  # 4
    session.sql(merge(MERGES[0]))  # 5
    path = location(session)
    assert engine_of_latest_commit(path) == "sparkshim"
    assert (path / "_delta_log" / f"{5:020d}.checkpoint.parquet").exists()
    checkpointed = DeltaTable(str(path))
    assert sorted(checkpointed.to_pyarrow_table()["id"].to_pylist()) == [2, 2, 3, 4, 5, 7]
    assert pq.read_table(path / "_delta_log" / f"{5:020d}.checkpoint.parquet").num_rows > 0
