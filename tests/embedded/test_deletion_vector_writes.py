"""sparkshim writes deletion vectors: on a table with ``delta.enableDeletionVectors``,
DELETE, UPDATE and MERGE mark the rows they remove in per-file vectors and write only new
rows (merge-on-read), with the same results and change data feed as copy-on-write.

Oracles: the same statements on a twin table without the property (copy-on-write, whose
DML is checked against real PySpark elsewhere), and delta-rs's own query engine, an
independent reader of the vectors, at every version of the table."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from delta_readers import delta_rs_rows, location_of, session_rows
from deltalake import DeltaTable

from dyntables import DynamicTables
from sparkshim import deletion_vectors, live_files
from sparkshim.session import ShimSession

pytestmark = pytest.mark.embedded

COLUMNS = "k INT, g STRING, v DOUBLE"
ENABLED = "'delta.enableDeletionVectors' = 'true', 'delta.enableChangeDataFeed' = 'true'"
COPY_ON_WRITE = "'delta.enableChangeDataFeed' = 'true'"


def log_actions(location: Path, version: int) -> list[dict[str, Any]]:
    path = location / "_delta_log" / f"{version:020d}.json"
    return [json.loads(line) for line in path.read_text().splitlines()]


def metrics(session: ShimSession, name: str) -> dict[str, str]:
    return dict(session.sql(f"DESCRIBE HISTORY {name} LIMIT 1").collect()[0]["operationMetrics"])


@pytest.fixture
def session(tmp_path: Path) -> ShimSession:
    spark = ShimSession(warehouse=str(tmp_path / "warehouse"))
    for name, properties in (("mor", ENABLED), ("cow", COPY_ON_WRITE)):
        spark.sql(f"CREATE TABLE {name} ({COLUMNS}) USING delta TBLPROPERTIES ({properties})")
        # Two files, with duplicate rows and NULLs: vectors mark every copy a statement
        # touches, by position.
        spark.sql(
            f"INSERT INTO {name} SELECT CAST(id AS INT), CAST(id % 7 AS STRING), id / 4.0"
            " FROM range(400)"
        )
        spark.sql(
            f"INSERT INTO {name} SELECT CAST(id % 50 AS INT), NULL, CAST(NULL AS DOUBLE)"
            " FROM range(200)"
        )
    spark.sql("CREATE TABLE src (k INT, g STRING, v DOUBLE) USING delta")
    return spark


STATEMENTS = [
    "DELETE FROM {t} WHERE k % 10 = 3",
    "UPDATE {t} SET v = v + 1, g = 'u' WHERE k % 10 = 4",
    "DELETE FROM {t} WHERE g IS NULL AND k < 20",
    "MERGE INTO {t} USING src ON {t}.k = src.k WHEN MATCHED THEN DELETE"
    " WHEN NOT MATCHED THEN INSERT *",
    "MERGE INTO {t} USING src ON {t}.k = src.k WHEN MATCHED AND src.v > 0 THEN UPDATE SET *"
    " WHEN MATCHED THEN DELETE WHEN NOT MATCHED THEN INSERT *",
    "UPDATE {t} SET k = k + 1000 WHERE k % 10 = 4",
    "INSERT INTO {t} REPLACE WHERE k >= 1000 SELECT 1000, 'r', 1.0",
    "DELETE FROM {t}",
]


def test_row_level_statements_match_copy_on_write_and_delta_rs(session: ShimSession) -> None:
    mor, cow = location_of(session, "mor"), location_of(session, "cow")
    generator = random.Random(7)
    for number, statement in enumerate(STATEMENTS):
        keys = generator.sample(range(420), 30)
        values = ", ".join(f"({k}, 's', {generator.choice(['-1.0', '2.5'])})" for k in keys)
        session.sql("DELETE FROM src")
        session.sql(f"INSERT INTO src VALUES {values}")
        for name in ("mor", "cow"):
            session.sql(statement.format(t=name))
        assert session_rows(session, "SELECT * FROM mor") == session_rows(
            session, "SELECT * FROM cow"
        ), statement
        assert session_rows(session, "SELECT * FROM mor") == delta_rs_rows(mor), statement
        if number < len(STATEMENTS) - 1:  # (the last one empties every file)
            assert _vectors(mor), "merge-on-read marks rows in vectors"
    assert not _vectors(cow)
    latest = DeltaTable(str(mor)).version()
    for version in range(latest + 1):
        read = session_rows(session, f"SELECT * FROM mor VERSION AS OF {version}")
        assert read == delta_rs_rows(mor, version), version
    # The change data feed is the same, commit by commit.
    feed = "SELECT * EXCEPT (_commit_timestamp) FROM table_changes('{t}', 1)"
    assert session_rows(session, feed.format(t="mor")) == session_rows(
        session, feed.format(t="cow")
    )


def _vectors(location: Path) -> dict[str, deletion_vectors.Descriptor]:
    return live_files.vectors(location, DeltaTable(str(location)).version())


def test_a_delete_marks_rows_and_writes_no_data_file(session: ShimSession) -> None:
    location = location_of(session, "mor")
    files_before = set(DeltaTable(str(location)).file_uris())
    session.sql("DELETE FROM mor WHERE k = 5")  # k = 5 is in both files
    version = DeltaTable(str(location)).version()
    actions = log_actions(location, version)
    added = [a["add"] for a in actions if "add" in a]
    assert {a["path"] for a in added} == {Path(f).name for f in files_before}
    assert all(a["deletionVector"]["storageType"] == "u" for a in added)
    assert sum(a["deletionVector"]["cardinality"] for a in added) == 5  # one, then four copies
    assert set(DeltaTable(str(location)).file_uris()) == files_before
    assert all(json.loads(a["stats"])["tightBounds"] is False for a in added)
    assert metrics(session, "mor") == {
        "numAddedFiles": "2",
        "numRemovedFiles": "2",
        "numCopiedRows": "0",
        "numDeletedRows": "5",
        "numDeletionVectorsAdded": "2",
        "numDeletionVectorsRemoved": "0",
        "numDeletionVectorsUpdated": "0",
    }
    # A second statement on the same files merges each file's vector with the new rows.
    session.sql("DELETE FROM mor WHERE k = 6")
    assert metrics(session, "mor")["numDeletionVectorsUpdated"] == "2"
    assert sum(v.cardinality for v in _vectors(location).values()) == 10
    # One vector file per commit holds every vector of that commit.
    stored = {v.file_path(location) for v in _vectors(location).values()}
    assert len(stored) == 1
    assert session.sql("SELECT count(*) AS n FROM mor").collect()[0]["n"] == 590


def test_a_file_whose_rows_are_all_removed_is_removed(session: ShimSession) -> None:
    location = location_of(session, "mor")
    session.sql("DELETE FROM mor WHERE g IS NULL")  # the whole second file
    version = DeltaTable(str(location)).version()
    actions = log_actions(location, version)
    assert len([a for a in actions if "remove" in a]) == 1
    assert not [a for a in actions if "add" in a]
    assert len(DeltaTable(str(location)).file_uris()) == 1
    assert session_rows(session, "SELECT * FROM mor") == delta_rs_rows(location)


def test_an_update_writes_only_the_new_rows(session: ShimSession) -> None:
    location = location_of(session, "mor")
    session.sql("UPDATE mor SET v = -v WHERE k = 7")
    actions = log_actions(location, DeltaTable(str(location)).version())
    new_files = [a["add"] for a in actions if "add" in a and "deletionVector" not in a["add"]]
    assert [json.loads(f["stats"])["numRecords"] for f in new_files] == [5]
    assert metrics(session, "mor")["numUpdatedRows"] == "5"
    changes = session.sql(
        "SELECT _change_type, count(*) AS n FROM table_changes('mor', 3) GROUP BY 1"
    ).collect()
    assert {r["_change_type"]: r["n"] for r in changes} == {
        "update_preimage": 5,
        "update_postimage": 5,
    }


def test_purge_vacuum_and_detail(session: ShimSession) -> None:
    location = location_of(session, "mor")
    session.sql("DELETE FROM mor WHERE k % 3 = 0")
    session.sql("UPDATE mor SET v = 0 WHERE k % 3 = 1")
    before = session_rows(session, "SELECT * FROM mor")
    detail = session.sql("DESCRIBE DETAIL mor").collect()[0]
    removed = sum(v.cardinality for v in _vectors(location).values())
    assert dict(detail["statistics"]) == {
        "numRowsDeletedByDeletionVectors": removed,
        "numDeletionVectors": 2,
    }
    assert "deletionVectors" in detail["tableFeatures"]
    assert (detail["minReaderVersion"], detail["minWriterVersion"]) == (3, 7)
    old_vector_files = {p.name for p in location.glob("deletion_vector_*.bin")}
    assert len(old_vector_files) == 2

    session.sql("REORG TABLE mor APPLY (PURGE)")
    assert not _vectors(location)
    assert session_rows(session, "SELECT * FROM mor") == before == delta_rs_rows(location)
    assert session.sql("DESCRIBE HISTORY mor LIMIT 1").collect()[0]["operation"] == "REORG"

    # Time travel before the purge still reads the vectors until VACUUM removes them.
    session.sql("DELETE FROM mor WHERE k = 1")  # a vector the current version needs
    needed = {v.file_path(location).name for v in _vectors(location).values()}
    session.conf.set("spark.databricks.delta.retentionDurationCheck.enabled", "false")
    listed = {str(r["path"]) for r in session.sql("VACUUM mor RETAIN 0 HOURS DRY RUN").collect()}
    assert {Path(p).name for p in listed} >= old_vector_files
    assert not {Path(p).name for p in listed} & needed
    session.sql("VACUUM mor RETAIN 0 HOURS")
    assert {p.name for p in location.glob("deletion_vector_*.bin")} == needed
    assert session_rows(session, "SELECT * FROM mor") == delta_rs_rows(location)


def test_vacuum_keeps_vectors_within_the_retention_period(session: ShimSession) -> None:
    location = location_of(session, "mor")
    session.sql("DELETE FROM mor WHERE k = 1")
    session.sql("REORG TABLE mor APPLY (PURGE)")
    session.sql("VACUUM mor")  # a week's retention: the vector older versions read stays
    assert len(list(location.glob("deletion_vector_*.bin"))) == 1
    version = DeltaTable(str(location)).version() - 1
    read = session_rows(session, f"SELECT * FROM mor VERSION AS OF {version}")
    assert read == delta_rs_rows(location, version)


def test_vectors_survive_delta_rs_checkpoints(tmp_path: Path) -> None:
    session = ShimSession(warehouse=str(tmp_path / "warehouse"))
    session.sql(
        f"CREATE TABLE t ({COLUMNS}) USING delta TBLPROPERTIES ({ENABLED},"
        " 'delta.checkpointInterval' = '3')"
    )
    session.sql("INSERT INTO t SELECT CAST(id AS INT), 'a', id * 1.0 FROM range(100)")
    for k in range(6):
        session.sql(f"DELETE FROM t WHERE k % 10 = {k}")
    location = location_of(session, "t")
    assert list((location / "_delta_log").glob("*.checkpoint.parquet"))
    assert session.sql("SELECT count(*) AS n FROM t").collect()[0]["n"] == 40
    assert session_rows(session, "SELECT * FROM t") == delta_rs_rows(location)


def test_dynamic_tables_refresh_by_marking_rows(tmp_path: Path) -> None:
    """A dynamic table on Delta is created with deletion vectors, so an incremental
    refresh under updates marks rows instead of writing its files again; it equals a
    full recompute, and compaction (OPTIMIZE) purges the vectors."""
    dt = DynamicTables(warehouse=str(tmp_path / "warehouse"))
    dt.sql("CREATE TABLE src (k INT, v INT) USING delta")
    dt.sql("INSERT INTO src SELECT CAST(id AS INT), CAST(id % 13 AS INT) FROM range(3000)")
    dt.sql(
        "CREATE DYNAMIC TABLE f TARGET_LAG = '1 minute' REFRESH_MODE = INCREMENTAL"
        " AS SELECT k, v FROM src WHERE v > 2"
    )
    dt.sql(
        "CREATE DYNAMIC TABLE g TARGET_LAG = '1 minute' REFRESH_MODE = INCREMENTAL"
        " AS SELECT v, count(*) AS n, sum(k) AS s FROM src GROUP BY v"
    )
    session = dt.engine.session
    properties = {r["key"]: r["value"] for r in dt.sql("SHOW TBLPROPERTIES f").collect()}
    assert properties["delta.enableDeletionVectors"] == "true"
    for round_number in range(3):
        dt.sql(f"UPDATE src SET v = (v + {round_number + 1}) % 13 WHERE k % 97 = {round_number}")
        dt.sql(f"INSERT INTO src VALUES ({5000 + round_number}, 7)")
        for name in ("f", "g"):
            result = dt.sql(f"ALTER DYNAMIC TABLE {name} REFRESH").collect()[0]
            assert result["action"] == "INCREMENTAL"
    for name, query in (
        ("f", "SELECT k, v FROM src WHERE v > 2"),
        ("g", "SELECT v, count(*) AS n, sum(k) AS s FROM src GROUP BY v"),
    ):
        assert session_rows(session, f"SELECT * FROM {name}") == session_rows(session, query)
        location = location_of(session, name)
        assert session_rows(session, f"SELECT * FROM {name}") == delta_rs_rows(location)
    f_location = location_of(session, "f")
    assert _vectors(f_location), "the refreshes marked rows"
    session.sql("OPTIMIZE f")  # what compaction runs (compaction.py)
    assert not _vectors(f_location)
    assert session_rows(session, "SELECT * FROM f") == session_rows(
        session, "SELECT k, v FROM src WHERE v > 2"
    )


def test_setting_the_property_later_turns_vectors_on(tmp_path: Path) -> None:
    session = ShimSession(warehouse=str(tmp_path / "warehouse"))
    session.sql("CREATE TABLE t (a INT) USING delta")
    session.sql("INSERT INTO t VALUES (1), (2), (3)")
    session.sql("ALTER TABLE t SET TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')")
    session.sql("DELETE FROM t WHERE a = 2")
    detail = session.sql("DESCRIBE DETAIL t").collect()[0]
    assert "deletionVectors" in detail["tableFeatures"]
    assert dict(detail["statistics"])["numDeletionVectors"] == 1
    assert session_rows(session, "SELECT * FROM t") == delta_rs_rows(location_of(session, "t"))


def test_a_dynamic_table_created_without_vectors_stays_copy_on_write(tmp_path: Path) -> None:
    dt = DynamicTables(warehouse=str(tmp_path / "warehouse"))
    dt.sql("CREATE TABLE src (k INT, v INT) USING delta")
    dt.sql("INSERT INTO src SELECT CAST(id AS INT), CAST(id % 5 AS INT) FROM range(100)")
    dt.sql(
        "CREATE DYNAMIC TABLE f TARGET_LAG = '1 minute' REFRESH_MODE = INCREMENTAL"
        " TBLPROPERTIES ('delta.enableDeletionVectors' = 'false') AS SELECT k, v FROM src"
    )
    dt.sql("UPDATE src SET v = v + 1 WHERE k % 10 = 0")
    assert dt.sql("ALTER DYNAMIC TABLE f REFRESH").collect()[0]["action"] == "INCREMENTAL"
    session = dt.engine.session
    assert session_rows(session, "SELECT * FROM f") == session_rows(session, "SELECT k, v FROM src")
    assert not _vectors(location_of(session, "f"))
