"""Reads of a Delta log's newest commits without delta-rs (sparkshim/log.py): the history
and the latest version equal delta-rs's, and the state an append checks follows every
kind of commit, by any writer, across log cleanup and a table recreated in place."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake

from sparkshim import delta, log
from sparkshim.errors import UnsupportedSqlError
from sparkshim.metadata import DeltaMetadata
from sparkshim.session import ShimSession

pytestmark = pytest.mark.embedded


@pytest.fixture
def spark(tmp_path: Path) -> ShimSession:
    return ShimSession(warehouse=tmp_path / "warehouse")


def location(spark: ShimSession, name: str = "t") -> Path:
    return delta_path(str(spark.sql(f"DESCRIBE DETAIL {name}").collect()[0]["location"]))


def delta_path(uri: str) -> Path:
    return Path(uri.removeprefix("file://"))


def test_the_history_equals_delta_rs_after_every_kind_of_commit(spark: ShimSession) -> None:
    spark.sql(
        "CREATE TABLE t (id INT, name STRING) TBLPROPERTIES (delta.enableChangeDataFeed = true)"
    )
    spark.sql("INSERT INTO t VALUES (1, 'a'), (2, 'b')")  # committed by sparkshim
    path = location(spark)
    write_deltalake(
        str(path), pa.table({"id": pa.array([3], pa.int32()), "name": ["c"]}), mode="append"
    )
    spark.sql("UPDATE t SET name = 'z' WHERE id = 1")
    spark.sql("MERGE INTO t USING (SELECT 2 AS id) s ON t.id = s.id WHEN MATCHED THEN DELETE")
    spark.sql("DELETE FROM t WHERE id = 3")
    spark.sql("ALTER TABLE t SET TBLPROPERTIES (owner = 'me')")
    spark.sql("ALTER TABLE t UNSET TBLPROPERTIES (owner)")
    spark.conf.set("spark.databricks.delta.commitInfo.userMetadata", "marked")
    spark.sql("INSERT INTO t VALUES (4, 'd')")
    expected = DeltaTable(str(path)).history()
    for limit in (1, 4, len(expected), len(expected) + 5):
        assert log.history(path, limit) == expected[:limit]
    assert log.latest_version(path) == DeltaTable(str(path)).version()
    assert spark.sql("DESCRIBE HISTORY t LIMIT 1").collect()[0]["userMetadata"] == "marked"
    # The metadata reader's rows (dicts, no DataFrame made) are DESCRIBE HISTORY's.
    for limit in (None, 3):
        described = spark.sql("DESCRIBE HISTORY t" + (f" LIMIT {limit}" if limit else "")).collect()
        assert DeltaMetadata(spark).history("t", limit) == [row.asDict() for row in described]


def test_the_history_stops_at_commits_removed_by_log_cleanup(spark: ShimSession) -> None:
    spark.sql(
        "CREATE TABLE t (id INT) TBLPROPERTIES (delta.checkpointInterval = 2,"
        " delta.logRetentionDuration = 'interval 0 seconds')"
    )
    for value in range(5):
        spark.sql(f"INSERT INTO t VALUES ({value})")
    path = location(spark)
    assert not (path / "_delta_log" / f"{0:020d}.json").exists()
    delta_rs = DeltaTable(str(path)).history(10)
    assert log.history(path, 10) == delta_rs
    assert [commit["version"] for commit in delta_rs] == list(range(5, 5 - len(delta_rs), -1))


def test_an_append_follows_a_schema_change_made_by_another_writer(spark: ShimSession) -> None:
    spark.sql("CREATE TABLE t (id INT)")
    spark.sql("INSERT INTO t VALUES (1)")  # the state is kept from here on
    path = location(spark)
    write_deltalake(
        str(path),
        pa.table({"id": pa.array([2], pa.int32()), "extra": ["x"]}),
        mode="append",
        schema_mode="merge",
    )
    spark.sql("INSERT INTO t VALUES (3, 'y')")
    latest = json.loads((path / "_delta_log" / f"{3:020d}.json").read_text().splitlines()[0])
    assert latest["commitInfo"]["engineInfo"] == "sparkshim"
    rows = sorted(DeltaTable(str(path)).to_pyarrow_table().to_pylist(), key=lambda r: r["id"])
    assert rows == [
        {"id": 1, "extra": None},
        {"id": 2, "extra": "x"},
        {"id": 3, "extra": "y"},
    ]


def test_an_append_after_a_new_check_constraint_goes_through_delta_rs(spark: ShimSession) -> None:
    spark.sql("CREATE TABLE t (id INT)")
    spark.sql("INSERT INTO t VALUES (1)")
    path = location(spark)
    DeltaTable(str(path)).alter.add_constraint({"positive": "id > 0"})
    with pytest.raises(Exception, match="failed validation check"):
        spark.sql("INSERT INTO t VALUES (-1)")
    assert spark.sql("SELECT count(*) FROM t").collect()[0][0] == 1


def test_a_table_recreated_in_place_is_not_read_with_the_old_state(spark: ShimSession) -> None:
    spark.sql("CREATE TABLE t (id INT)")
    for value in range(3):
        spark.sql(f"INSERT INTO t VALUES ({value})")
    path = location(spark)
    assert delta.table_state(path) is not None  # kept at version 3
    shutil.rmtree(path)
    # Another table in the same place, with more commits than the first had.
    write_deltalake(str(path), pa.table({"name": ["a"]}))
    for _ in range(4):
        write_deltalake(str(path), pa.table({"name": ["b"]}), mode="append")
    state = delta.table_state(path)
    assert state is not None
    assert state.version == 4
    assert json.loads(state.schema_json)["fields"][0]["name"] == "name"


def test_a_conditional_append_sees_the_latest_version_written_by_another_writer(
    spark: ShimSession,
) -> None:
    spark.sql("CREATE TABLE t (id INT)")
    spark.sql("INSERT INTO t VALUES (1)")
    path = location(spark)
    write_deltalake(str(path), pa.table({"id": pa.array([2], pa.int32())}), mode="append")
    with pytest.raises(delta.TableMovedError, match="version 2, not 1"):
        delta.write(
            path,
            pa.table({"id": pa.array([3], pa.int32())}),
            overwrite=False,
            options=delta.CommitOptions(expected_version=1),
        )
    delta.write(
        path,
        pa.table({"id": pa.array([3], pa.int32())}),
        overwrite=False,
        options=delta.CommitOptions(expected_version=2),
    )
    assert sorted(DeltaTable(str(path)).to_pyarrow_table()["id"].to_pylist()) == [1, 2, 3]


def test_the_change_feed_of_appends_equals_delta_rs(spark: ShimSession) -> None:
    spark.sql(
        "CREATE TABLE t (id INT, name STRING, ts TIMESTAMP)"
        " TBLPROPERTIES (delta.enableChangeDataFeed = true)"
    )
    spark.sql(
        "INSERT INTO t VALUES (1, 'a', CAST('2024-01-02 03:04:05' AS TIMESTAMP)), (2, NULL, NULL)"
    )
    path = location(spark)
    write_deltalake(  # another writer's append, and a column added on the way
        str(path),
        pa.table({"id": pa.array([3, 4], pa.int32()), "name": ["c", "d"], "extra": [1.5, None]}),
        mode="append",
        schema_mode="merge",
    )
    spark.sql("ALTER TABLE t SET TBLPROPERTIES (owner = 'me')")  # no change of rows
    spark.sql("INSERT INTO t VALUES (5, 'e', NULL, 2.5)")
    ours = delta.changes(path, 1, None)
    theirs = delta.changes_by_delta_rs(path, 1, None)
    # delta-rs gives strings as Arrow's string_view; the values are what is compared.
    assert ours.schema.names == theirs.schema.names
    assert sorted(ours.cast(theirs.schema).to_pylist(), key=lambda r: r["id"]) == sorted(
        theirs.to_pylist(), key=lambda r: r["id"]
    )
    shown = spark.sql("SELECT id, _change_type, _commit_version FROM table_changes('t', 2, 4)")
    assert sorted(tuple(row) for row in shown.collect()) == [
        (3, "insert", 2),
        (4, "insert", 2),
        (5, "insert", 4),
    ]


@pytest.mark.parametrize("vectors", [False, True], ids=["copy-on-write", "deletion-vectors"])
def test_the_change_feed_of_row_level_changes_equals_delta_rs(
    spark: ShimSession, vectors: bool
) -> None:
    """A commit that wrote ``cdc`` files has its changes read from them (its adds and
    removes ignored, as Delta's protocol says); they equal delta-rs's feed, commit by
    commit and over the run, also where delta-rs wrote the commit."""
    properties = f"delta.enableChangeDataFeed = true, delta.enableDeletionVectors = {vectors}"
    spark.sql(
        f"CREATE TABLE t (id INT, name STRING, amount DECIMAL(10, 2)) TBLPROPERTIES ({properties})"
    )
    spark.sql("INSERT INTO t VALUES (1, 'a', 1.50), (2, 'b', NULL), (3, 'c', 3.25), (4, 'd', 4)")
    spark.sql("UPDATE t SET amount = amount + 1 WHERE id IN (1, 3)")
    spark.sql("DELETE FROM t WHERE id = 2")
    spark.sql("INSERT INTO t VALUES (5, 'e', 5)")
    spark.sql(
        "MERGE INTO t USING (SELECT 4 AS id, 'D' AS name UNION ALL SELECT 6, 'f') AS s"
        " ON t.id = s.id WHEN MATCHED THEN UPDATE SET name = s.name"
        " WHEN NOT MATCHED THEN INSERT (id, name, amount) VALUES (s.id, s.name, 0)"
    )
    spark.sql("OPTIMIZE t")  # files rearranged, no row changed
    path = location(spark)
    DeltaTable(str(path)).update({"name": "'z'"}, predicate="id = 5")  # delta-rs's own DML
    latest = DeltaTable(str(path)).version()
    files = log.change_files(path, 1, latest)
    assert files is not None, "every commit's changes are in files the log names"
    assert {f.kind for f in files if f.version == 2} == {log.CDC}, "an UPDATE's cdc files"
    ranges = [(v, v) for v in range(1, latest + 1)] + [(1, latest), (2, None)]
    for start, end in ranges:
        ours = delta.changes(path, start, end)
        theirs = delta.changes_by_delta_rs(path, start, end)
        assert ours.schema.names == theirs.schema.names
        assert _feed_rows(ours.cast(theirs.schema)) == _feed_rows(theirs), (start, end)
    shown = spark.sql("SELECT id, name, _change_type FROM table_changes('t', 2, 3)").collect()
    assert sorted(tuple(row) for row in shown) == [
        (1, "a", "update_postimage"),
        (1, "a", "update_preimage"),
        (2, "b", "delete"),
        (3, "c", "update_postimage"),
        (3, "c", "update_preimage"),
    ]


def test_the_change_feed_of_a_partitioned_table_equals_delta_rs(
    spark: ShimSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A partitioned table's change files do not hold the partition values: they are
    added from the log's ``partitionValues`` (a NULL partition too), in each column's
    type; the feed equals delta-rs's, commit by commit and over the run."""
    spark.sql(
        "CREATE TABLE t (id INT, name STRING, day DATE, bucket INT) USING delta"
        " PARTITIONED BY (day, bucket) TBLPROPERTIES (delta.enableChangeDataFeed = true)"
    )
    spark.sql(
        "INSERT INTO t VALUES (1, 'a', DATE'2024-01-05', 1), (2, 'b', DATE'2024-01-05', 2),"
        " (3, 'c', NULL, 1), (4, 'd', DATE'2024-02-29', NULL)"
    )
    spark.sql("UPDATE t SET name = 'z' WHERE id IN (1, 3)")
    spark.sql("DELETE FROM t WHERE id = 2")
    spark.sql("INSERT INTO t VALUES (5, 'e', DATE'2024-03-01', 3)")
    spark.sql("INSERT OVERWRITE t VALUES (6, 'f', DATE'2024-01-05', 1)")
    path = location(spark)
    latest = DeltaTable(str(path)).version()
    by_delta_rs = delta.changes_by_delta_rs

    def not_read_here(*args: object) -> None:
        raise AssertionError("the feed was left to delta-rs")

    monkeypatch.setattr(delta, "changes_by_delta_rs", not_read_here)
    for start, end in [(v, v) for v in range(1, latest + 1)] + [(1, latest)]:
        ours = delta.changes(path, start, end)
        theirs = by_delta_rs(path, start, end)
        assert ours.schema.names == theirs.schema.names
        assert _feed_rows(ours.cast(theirs.schema)) == _feed_rows(theirs), (start, end)
    shown = spark.sql(
        f"SELECT id, day, bucket, _change_type FROM table_changes('t', {latest})"
    ).collect()
    assert sorted((row.id, str(row.day), row.bucket, row._change_type) for row in shown) == [
        (1, "2024-01-05", 1, "delete"),
        (3, "None", 1, "delete"),
        (4, "2024-02-29", None, "delete"),
        (5, "2024-03-01", 3, "delete"),
        (6, "2024-01-05", 1, "insert"),
    ]


def test_a_feed_the_engine_cannot_read_exactly_is_refused(spark: ShimSession) -> None:
    """An overwrite of a file with a deletion vector, committed without ``commitInfo``
    (it is optional; its time then comes from the file, as delta-rs reads it): the
    embedded engine leaves such a commit to delta-rs, whose ``load_cdf`` gives the
    vector's rows as the deletes, so the feed is refused with a way out instead."""
    properties = "delta.enableChangeDataFeed = true, delta.enableDeletionVectors = true"
    spark.sql(f"CREATE TABLE t (id INT) TBLPROPERTIES ({properties})")
    spark.sql("INSERT INTO t SELECT id FROM (SELECT explode(sequence(1, 10)) AS id)")
    spark.sql("DELETE FROM t WHERE id = 3")  # the file gets a vector
    spark.sql("INSERT OVERWRITE t VALUES (20)")
    path = location(spark)
    version = DeltaTable(str(path)).version()
    commit = log.commit_path(path, version)
    actions = [json.loads(line) for line in commit.read_text().splitlines()]
    assert any("deletionVector" in action.get("remove", {}) for action in actions)
    kept = [action for action in actions if "commitInfo" not in action]
    commit.write_text("\n".join(json.dumps(action) for action in kept) + "\n")
    with pytest.raises(UnsupportedSqlError, match=f"change data feed of version {version}"):
        spark.sql(f"SELECT * FROM table_changes('t', {version}, {version})").collect()
    # The commits before it read as they are.
    before = spark.sql(f"SELECT count(*) FROM table_changes('t', 1, {version - 1})")
    assert before.collect()[0][0] == 11  # ten inserts, one delete
    assert spark.sql("SELECT count(*) FROM table_changes('t', 0, 0)").collect()[0][0] == 0


def _feed_rows(feed: pa.Table) -> list[tuple[object, ...]]:
    """A change feed's rows, in an order of their own (a feed's order is not promised)."""
    return sorted((tuple(row.values()) for row in feed.to_pylist()), key=repr)


@pytest.mark.parametrize("vectors", [False, True], ids=["copy-on-write", "deletion-vectors"])
def test_the_change_feed_of_an_overwrite_deletes_the_rows_the_table_held(
    spark: ShimSession, vectors: bool
) -> None:
    """A commit without ``cdc`` files that removes files (an overwrite): its deletes are
    the removed files' rows less those their deletion vectors had removed, that is the
    rows the table held (delta-rs's ``load_cdf`` gives other rows for a file with a
    vector)."""
    properties = f"delta.enableChangeDataFeed = true, delta.enableDeletionVectors = {vectors}"
    spark.sql(f"CREATE TABLE t (id INT, kind STRING) TBLPROPERTIES ({properties})")
    spark.sql("INSERT INTO t SELECT id, 'a' FROM (SELECT explode(sequence(1, 20)) AS id)")
    spark.sql("UPDATE t SET kind = 'b' WHERE id <= 5")
    spark.sql("DELETE FROM t WHERE id IN (7, 20)")
    held = sorted(tuple(row) for row in spark.sql("SELECT id, kind FROM t").collect())
    version = DeltaTable(str(location(spark))).version()
    spark.sql("INSERT OVERWRITE t VALUES (1, 'c'), (30, 'c')")
    feed = spark.sql(
        f"SELECT id, kind, _change_type FROM table_changes('t', {version + 1}, {version + 1})"
    ).collect()
    deleted = sorted((row.id, row.kind) for row in feed if row._change_type == "delete")
    inserted = sorted((row.id, row.kind) for row in feed if row._change_type == "insert")
    assert len(held) == 18
    assert deleted == held
    assert inserted == [(1, "c"), (30, "c")]
    assert len(feed) == 20


def test_the_change_feed_of_a_delete_equals_delta_rs(spark: ShimSession) -> None:
    spark.sql("CREATE TABLE t (id INT) TBLPROPERTIES (delta.enableChangeDataFeed = true)")
    spark.sql("INSERT INTO t VALUES (1), (2)")
    spark.sql("DELETE FROM t WHERE id = 1")
    spark.sql("INSERT INTO t VALUES (3)")
    shown = spark.sql("SELECT id, _change_type FROM table_changes('t', 1, 3)").collect()
    assert sorted(tuple(row) for row in shown) == [
        (1, "delete"),
        (1, "insert"),
        (2, "insert"),
        (3, "insert"),
    ]
    path = location(spark)
    ours, theirs = delta.changes(path, 1, 3), delta.changes_by_delta_rs(path, 1, 3)
    assert _feed_rows(ours.cast(theirs.schema)) == _feed_rows(theirs)


def test_a_kept_table_is_reopened_from_each_new_checkpoint(spark: ShimSession) -> None:
    """delta-rs replays every commit since a table object was opened when it brings it
    up to date; a kept table is opened again from each new checkpoint instead."""
    spark.sql("CREATE TABLE t (id INT) TBLPROPERTIES (delta.checkpointInterval = 3)")
    path = location(spark)
    kept = delta.open_table(path)
    spark.sql("INSERT INTO t VALUES (1)")  # version 1: no checkpoint yet
    assert delta.open_table(path) is kept
    assert kept.version() == 1
    for value in (2, 3):  # version 3 writes a checkpoint
        spark.sql(f"INSERT INTO t VALUES ({value})")
    assert (path / "_delta_log" / "00000000000000000003.checkpoint.parquet").exists()
    reopened = delta.open_table(path)
    assert reopened is not kept
    assert reopened.version() == 3
    assert len(reopened.file_uris()) == 3
    assert delta.open_table(path) is reopened


def test_a_version_read_while_the_kept_latest_table_moves_on(spark: ShimSession) -> None:
    # The kept latest table stands for a version while it is at it; once newer commits
    # land, each version is read as it was, by this writer's commits or another's.
    spark.sql("CREATE TABLE t (id INT)")
    spark.sql("INSERT INTO t VALUES (1)")  # version 1
    path = location(spark)
    assert delta.open_table(path).version() == 1  # kept, at version 1
    assert delta.open_table(path, 1) is delta.open_table(path)  # no log replayed again
    write_deltalake(str(path), pa.table({"id": pa.array([2], pa.int32())}), mode="append")

    def ids(version: int) -> list[int]:
        table = delta.open_table(path, version)
        assert table.version() == version
        return sorted(table.to_pyarrow_table().column("id").to_pylist())

    assert ids(1) == [1]  # the kept latest table, not yet moved on
    assert ids(2) == [1, 2]
    assert delta.open_table(path).version() == 2  # the kept latest table moves on
    assert ids(1) == [1]
    assert ids(2) == [1, 2]
    counts = spark.sql(
        "SELECT (SELECT count(*) FROM t VERSION AS OF 1), (SELECT count(*) FROM t)"
    ).collect()
    assert list(counts[0]) == [1, 2]
