"""Tables with deletion vectors on the embedded engine: every read path drops the rows
the vectors remove, and every write keeps them removed (copy-on-write: a file that is
written again holds only its live rows, and its ``remove`` action names its vector).

The oracle is delta-rs's own query engine (DataFusion), an independent reader of the
vectors: the tables Delta on Spark wrote (tests/fixtures/delta-golden) read as it reads
them, at every version, and after each statement sparkshim runs on them both readers
agree with the rows computed here in Python."""

from __future__ import annotations

import json
import os
import shutil
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from delta_readers import delta_rs_rows, multiset, session_rows
from deltalake import DeltaTable
from pyroaring import BitMap64

from sparkshim import deletion_vectors, delta, live_files
from sparkshim.errors import AnalysisException, UnsupportedSqlError
from sparkshim.metadata import DeltaMetadata
from sparkshim.session import ShimSession

pytestmark = pytest.mark.embedded

GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "delta-golden"
TABLES = ("dv-partitioned-with-checkpoint", "dv-with-columnmapping")


def golden_table(tmp_path: Path, name: str) -> tuple[ShimSession, Path]:
    """A session whose table ``t`` is a copy of the golden table ``name`` (a folder in
    the warehouse is a table of the default database). Each commit file is dated as its
    commit, as the table's writer left it (a copy is dated now): Delta finds the version
    of a timestamp by these dates."""
    warehouse = tmp_path / "warehouse"
    warehouse.mkdir()
    location = Path(shutil.copytree(GOLDEN / name, warehouse / "t"))
    for actions_file in (location / "_delta_log").glob("*.json"):
        info = json.loads(actions_file.read_text().splitlines()[0])["commitInfo"]
        os.utime(actions_file, ns=(info["timestamp"] * 1_000_000,) * 2)
    return ShimSession(warehouse=str(warehouse)), location


def theirs(location: Path, version: int | None = None) -> Counter[str]:
    return delta_rs_rows(location, version)


def ours(session: ShimSession, sql: str = "SELECT * FROM t") -> Counter[str]:
    return session_rows(session, sql)


def commits(location: Path) -> dict[int, list[dict[str, Any]]]:
    return {
        int(path.stem): [json.loads(line) for line in path.read_text().splitlines()]
        for path in (location / "_delta_log").glob("*.json")
    }


# --- reads --------------------------------------------------------------------------


@pytest.mark.parametrize("name", TABLES)
def test_golden_tables_read_as_delta_rs_reads_them(tmp_path: Path, name: str) -> None:
    session, location = golden_table(tmp_path, name)
    latest = theirs(location)
    assert sum(latest.values()) == 35
    assert ours(session) == latest
    for version in range(16):
        assert ours(session, f"SELECT * FROM t VERSION AS OF {version}") == theirs(
            location, version
        ), version
    # Aggregates and projections read only some columns of the same rows.
    counts = session.sql("SELECT part, count(*) AS n FROM t GROUP BY part").collect()
    assert sum(row["n"] for row in counts) == 35
    assert session.sql("SELECT count(*) AS n FROM t WHERE col1 >= 40").collect()[0]["n"] == sum(
        n for row, n in latest.items() if json.loads(row)["col1"] >= 40
    )


@pytest.mark.parametrize("name", TABLES)
def test_the_change_feed_of_an_overwrite_deletes_the_rows_the_golden_table_held(
    tmp_path: Path, name: str
) -> None:
    """Spark wrote vectors to files of a partitioned and of a column-mapped table: an
    INSERT OVERWRITE removes those files without ``cdc`` files, and its deletes are the
    rows the table held (each file less its vector's rows), with their partition values
    and logical column names. delta-rs's ``load_cdf`` gives 33 rows of the partitioned
    table's 35 and refuses the column-mapped one."""
    session, _ = golden_table(tmp_path, name)
    session.sql("ALTER TABLE t SET TBLPROPERTIES (delta.enableChangeDataFeed = true)")
    held = ours(session)
    version = int(session.sql("DESCRIBE HISTORY t LIMIT 1").collect()[0]["version"])
    session.sql("INSERT OVERWRITE t SELECT part, col1 + 1000, col2 FROM t WHERE col1 = 31")
    feed = f"table_changes('t', {version + 1}, {version + 1})"
    columns = "part, col1, col2"
    deleted = ours(session, f"SELECT {columns} FROM {feed} WHERE _change_type = 'delete'")
    inserted = ours(session, f"SELECT {columns} FROM {feed} WHERE _change_type = 'insert'")
    assert deleted == held
    assert inserted == ours(session)


@pytest.mark.parametrize("name", TABLES)
def test_timestamp_travel_reads_each_versions_vectors(tmp_path: Path, name: str) -> None:
    session, location = golden_table(tmp_path, name)
    for version, actions in sorted(commits(location).items()):
        stamp = next(a["commitInfo"]["timestamp"] for a in actions if "commitInfo" in a)
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(stamp / 1000))
        when += f".{stamp % 1000:03d}"
        read = ours(session, f"SELECT * FROM t TIMESTAMP AS OF '{when}'")
        assert read == theirs(location, version), version


@pytest.mark.parametrize("name", TABLES)
def test_metadata_counts_live_rows_and_files(tmp_path: Path, name: str) -> None:
    """``numRecords`` counts the rows a vector removes too; the row count does not."""
    session, location = golden_table(tmp_path, name)
    assert DeltaMetadata(session).row_count("t") == 35
    files = len(DeltaTable(str(location)).file_uris())
    assert DeltaMetadata(session).data_file_count("t") == files
    assert session.sql("DESCRIBE DETAIL t").collect()[0]["numFiles"] == files


def test_a_damaged_vector_is_an_error_not_a_wrong_answer(tmp_path: Path) -> None:
    session, location = golden_table(tmp_path, "dv-partitioned-with-checkpoint")
    vectors = live_files.vectors(location, 15)
    damaged = next(iter(vectors.values())).file_path(location)
    data = bytearray(damaged.read_bytes())
    data[-5] ^= 0xFF
    damaged.write_bytes(bytes(data))
    with pytest.raises(AnalysisException, match="DELTA_DELETION_VECTOR_CHECKSUM_MISMATCH"):
        session.sql("SELECT * FROM t").collect()


@pytest.mark.parametrize("feature", ["typeWidening", "someFutureFeature"])
def test_a_table_asking_more_of_readers_is_refused(tmp_path: Path, feature: str) -> None:
    """A reader feature sparkshim does not implement (type widening, which delta-rs
    opens) or that no one knows (delta-rs refuses to open it): a refusal naming it."""
    session, location = golden_table(tmp_path, "dv-partitioned-with-checkpoint")
    features = ["deletionVectors", feature]
    protocol = {
        "minReaderVersion": 3,
        "minWriterVersion": 7,
        "readerFeatures": features,
        "writerFeatures": features,
    }
    info = {"timestamp": int(time.time() * 1000), "operation": "UPGRADE PROTOCOL"}
    assert delta.put_if_absent(
        location / "_delta_log", 16, [{"commitInfo": info}, {"protocol": protocol}]
    )
    with pytest.raises(UnsupportedSqlError, match=feature):
        session.sql("SELECT * FROM t").collect()


# --- writes on the golden tables ----------------------------------------------------


def _merge_source() -> str:
    return (
        "SELECT 8 AS part, 48 AS col1, 'merged' AS col2"
        " UNION ALL SELECT 6, 36, 'merged' UNION ALL SELECT 3, 100, 'new'"
    )


# Each statement, and what it does to the rows (as delta-rs read them before it).
STATEMENTS: dict[str, tuple[str, Any]] = {
    "delete": (
        "DELETE FROM t WHERE col1 % 4 = 2",
        lambda rows: [r for r in rows if r["col1"] % 4 != 2],
    ),
    "update": (
        "UPDATE t SET col2 = concat(col2, '!') WHERE part IN (6, 8) OR col1 = 1",
        lambda rows: [
            {**r, "col2": r["col2"] + "!"} if r["part"] in (6, 8) or r["col1"] == 1 else r
            for r in rows
        ],
    ),
    "merge": (
        f"MERGE INTO t USING ({_merge_source()}) AS s ON t.col1 = s.col1"
        " WHEN MATCHED THEN UPDATE SET col2 = s.col2 WHEN NOT MATCHED THEN INSERT *",
        lambda rows: (
            [{**r, "col2": "merged"} if r["col1"] in (48, 36) else r for r in rows]
            + [{"part": 3, "col1": 100, "col2": "new"}]
        ),
    ),
    "optimize": ("OPTIMIZE t", lambda rows: rows),
    "zorder": ("OPTIMIZE t ZORDER BY (col1)", lambda rows: rows),
}


@pytest.mark.parametrize("statement", list(STATEMENTS))
@pytest.mark.parametrize("name", TABLES)
def test_writes_keep_removed_rows_removed(tmp_path: Path, name: str, statement: str) -> None:
    """Each statement on a golden table: the rows are the ones computed from what
    delta-rs read before, by both readers after; each file removed that had a vector is
    removed with it (the logical file is the pair)."""
    session, location = golden_table(tmp_path, name)
    sql, apply = STATEMENTS[statement]
    before = [json.loads(row) for row in theirs(location).elements()]
    vectors = live_files.vectors(location, 15)
    assert vectors  # files of the statements' partitions carry vectors
    session.sql(sql)
    expected = multiset(apply(before))
    assert theirs(location) == expected
    assert ours(session) == expected
    assert DeltaMetadata(session).row_count("t") == sum(expected.values())
    new_commits = [actions for version, actions in commits(location).items() if version > 15]
    assert new_commits
    for actions in new_commits:
        for remove in (a["remove"] for a in actions if "remove" in a):
            vector = vectors.get(remove["path"])
            expected_vector = vector.to_json() if vector is not None else None
            assert remove.get("deletionVector") == expected_vector, remove["path"]
    if statement in ("optimize", "zorder"):  # compaction drops the removed rows for good
        assert live_files.vectors(location, max(commits(location))) == {}


def test_change_feed_of_a_delete_on_files_with_vectors(tmp_path: Path) -> None:
    """A DELETE of whole files that carry vectors: the change data feed lists the rows
    they still held, not the ones their vectors had removed."""
    session, location = golden_table(tmp_path, "dv-partitioned-with-checkpoint")
    session.sql("ALTER TABLE t SET TBLPROPERTIES (delta.enableChangeDataFeed = true)")
    version = DeltaTable(str(location)).version()
    live = [json.loads(row) for row in theirs(location).elements()]
    session.sql("DELETE FROM t WHERE part IN (6, 8)")
    changes = session.sql(
        f"SELECT part, col1, col2, _change_type FROM table_changes('t', {version + 1})"
    ).collect()
    assert multiset([row.asDict() for row in changes]) == multiset(
        [{**r, "_change_type": "delete"} for r in live if r["part"] in (6, 8)]
    )
    assert ours(session) == theirs(location)


# --- a table whose vectors are written here (unpartitioned, file and inline) --------


def mark_deleted(location: Path, positions: dict[str, list[int]], *, inline: bool) -> int:
    """Commit what Delta on Spark commits for a DELETE that writes vectors: for each
    file (by log path), an ``add`` of it with its vector grown by ``positions`` and a
    ``remove`` of it with its old vector; and, the table recording its change data feed,
    a change file of the rows removed. The version committed."""
    table = DeltaTable(str(location))
    version = table.version()
    adds = pa.table(table.get_add_actions(flatten=True)).to_pylist()
    old = live_files.vectors(location, version)
    now = int(time.time() * 1000)
    actions: list[dict[str, Any]] = [{"commitInfo": {"timestamp": now, "operation": "DELETE"}}]
    removed_rows = []
    for add in adds:
        path = add["path"]
        if path not in positions:
            continue
        previous = old.get(path)
        bitmap = BitMap64(positions[path])
        if previous is not None:
            bitmap |= deletion_vectors.read(location, previous)
        vector = (
            deletion_vectors.inline(bitmap)
            if inline
            else deletion_vectors.write_file(location, bitmap)
        )
        stats = {"numRecords": add["num_records"]}
        actions.append(
            {
                "add": {
                    "path": path,
                    "partitionValues": {},
                    "size": add["size_bytes"],
                    "modificationTime": add["modification_time"],
                    "dataChange": True,
                    "stats": json.dumps(stats),
                    "deletionVector": vector.to_json(),
                }
            }
        )
        remove: dict[str, Any] = {
            "path": path,
            "deletionTimestamp": now,
            "dataChange": True,
            "extendedFileMetadata": True,
            "partitionValues": {},
            "size": add["size_bytes"],
        }
        if previous is not None:
            remove["deletionVector"] = previous.to_json()
        actions.append({"remove": remove})
        rows = pq.read_table(location / path)
        newly = [
            p
            for p in positions[path]
            if previous is None or p not in BitMap64(deletion_vectors.read(location, previous))
        ]
        removed_rows.append(rows.take(pa.array(newly, pa.int64())))
    change = pa.concat_tables(removed_rows)
    change = change.append_column("_change_type", pa.array(["delete"] * change.num_rows))
    name = f"_change_data/cdc-{uuid.uuid4()}.snappy.parquet"
    (location / "_change_data").mkdir(exist_ok=True)
    pq.write_table(change, location / name)
    size = (location / name).stat().st_size
    cdc = {"path": name, "partitionValues": {}, "size": size, "dataChange": False}
    actions.append({"cdc": cdc})
    assert delta.put_if_absent(location / "_delta_log", version + 1, actions)
    return version + 1


def plain_table(tmp_path: Path) -> tuple[ShimSession, Path]:
    session = ShimSession(warehouse=str(tmp_path / "warehouse"))
    session.sql(
        "CREATE TABLE t (id INT, name STRING) TBLPROPERTIES"
        " (delta.enableDeletionVectors = true, delta.enableChangeDataFeed = true)"
    )
    session.sql("INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd')")
    session.sql("INSERT INTO t VALUES (5, 'e'), (6, 'f'), (7, 'g')")
    session.sql("INSERT INTO t VALUES (8, 'h'), (9, 'i')")
    location = tmp_path / "warehouse" / "t"
    return session, location


def files_by_first_id(location: Path) -> dict[int, str]:
    """Each data file's log path, by the id of its first row."""
    paths = pa.table(DeltaTable(str(location)).get_add_actions(flatten=True)).column("path")
    return {pq.read_table(location / p).column("id")[0].as_py(): p for p in paths.to_pylist()}


@pytest.mark.parametrize("inline", [False, True], ids=["file", "inline"])
def test_vectors_written_here_read_alike_by_both_readers(tmp_path: Path, inline: bool) -> None:
    """Vectors this module writes (as Delta does) are read by delta-rs as by sparkshim:
    the encoder agrees with an independent decoder. A second DELETE grows a vector; a
    file without one keeps the direct scan."""
    session, location = plain_table(tmp_path)
    files = files_by_first_id(location)
    first = mark_deleted(location, {files[1]: [0, 2]}, inline=inline)  # ids 1 and 3
    second = mark_deleted(location, {files[1]: [3], files[5]: [1]}, inline=inline)  # 4, 6
    assert theirs(location) == ours(session)
    assert {json.loads(r)["id"] for r in ours(session)} == {2, 5, 7, 8, 9}
    for version in range(second + 1):
        assert ours(session, f"SELECT * FROM t VERSION AS OF {version}") == theirs(
            location, version
        )
    assert DeltaMetadata(session).row_count("t") == 5
    changes = session.sql(
        f"SELECT id, _change_type, _commit_version FROM table_changes('t', {first})"
    ).collect()
    assert sorted((r["id"], r["_change_type"], r["_commit_version"]) for r in changes) == [
        (1, "delete", first),
        (3, "delete", first),
        (4, "delete", second),
        (6, "delete", second),
    ]


def test_the_merge_sparkshim_commits_itself_keeps_removed_rows_removed(tmp_path: Path) -> None:
    """The delete-and-insert MERGE of rewrite.py on files with vectors: the files it
    writes again hold only their live rows, their removes name their vectors, and the
    change data feed lists only rows the table held."""
    session, location = plain_table(tmp_path)
    files = files_by_first_id(location)
    marked = mark_deleted(location, {files[1]: [0, 1], files[5]: [2]}, inline=False)
    vectors = live_files.vectors(location, marked)
    session.sql(
        "MERGE INTO t USING (SELECT 3 AS id, 'delete' AS kind UNION ALL SELECT 2, 'delete'"
        " UNION ALL SELECT 10, 'insert') AS s ON s.kind = 'delete' AND t.id = s.id"
        " WHEN MATCHED THEN DELETE"
        " WHEN NOT MATCHED AND s.kind = 'insert' THEN INSERT (id, name) VALUES (s.id, 'new')"
    )
    merged = marked + 1
    actions = commits(location)[merged]
    assert next(a for a in actions if "commitInfo" in a)["commitInfo"]["engineInfo"] == (
        "sparkshim"
    )
    expected = {4: "d", 5: "e", 6: "f", 8: "h", 9: "i", 10: "new"}
    assert (
        ours(session)
        == theirs(location)
        == multiset([{"id": i, "name": n} for i, n in expected.items()])
    )
    removes = [a["remove"] for a in actions if "remove" in a]
    assert [r["path"] for r in removes] == [files[1]]
    assert removes[0]["deletionVector"] == vectors[files[1]].to_json()
    changes = session.sql(f"SELECT id, _change_type FROM table_changes('t', {merged})").collect()
    # Row 2 matched the MERGE's condition, but the vector had removed it already.
    assert sorted((r["id"], r["_change_type"]) for r in changes) == [(3, "delete"), (10, "insert")]
    assert ours(session, f"SELECT * FROM t VERSION AS OF {marked}") == theirs(location, marked)


def test_dml_through_delta_rs_and_compaction_on_a_table_with_vectors(tmp_path: Path) -> None:
    session, location = plain_table(tmp_path)
    files = files_by_first_id(location)
    mark_deleted(location, {files[1]: [1], files[8]: [0]}, inline=True)
    session.sql("UPDATE t SET name = upper(name) WHERE id IN (1, 3, 9)")
    session.sql("DELETE FROM t WHERE id = 5")
    expected = {1: "A", 3: "C", 4: "d", 6: "f", 7: "g", 9: "I"}
    assert (
        ours(session)
        == theirs(location)
        == multiset([{"id": i, "name": n} for i, n in expected.items()])
    )
    session.sql("OPTIMIZE t")
    latest = DeltaTable(str(location)).version()
    assert live_files.vectors(location, latest) == {}
    assert ours(session) == theirs(location)
    assert DeltaMetadata(session).row_count("t") == len(expected)
