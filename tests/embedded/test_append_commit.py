"""Small appends committed by sparkshim itself (sparkshim/append.py), checked with readers
that did not write them: delta-rs, its change data feed, real PySpark on the data files,
and delta-rs writing on top of them."""

from __future__ import annotations

import json
import threading
from collections import Counter
from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path
from urllib.parse import urlparse

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake
from pyspark.errors import AnalysisException
from pyspark.sql import SparkSession

from sparkshim import delta
from sparkshim.session import ShimSession

pytestmark = pytest.mark.embedded

VALUES = (
    "(1, 'a', CAST('2024-01-02 03:04:05.123456' AS TIMESTAMP), 12.34, array(1, 2)),"
    " (2, NULL, NULL, NULL, NULL)"
)


@pytest.fixture
def spark(tmp_path: Path) -> ShimSession:
    session = ShimSession(warehouse=tmp_path / "warehouse")
    session.sql(
        "CREATE TABLE t (id INT, name STRING, ts TIMESTAMP, amount DECIMAL(12, 2),"
        " tags ARRAY<INT>) TBLPROPERTIES (delta.enableChangeDataFeed = true)"
    )
    return session


def location(spark: ShimSession, name: str = "t") -> Path:
    uri = str(spark.sql(f"DESCRIBE DETAIL {name}").collect()[0]["location"])
    return Path(urlparse(uri).path)


def engines(path: Path) -> list[str]:
    """Each commit's engineInfo, oldest first."""
    commits = sorted((path / "_delta_log").glob("*.json"))
    infos = [json.loads(commit.read_text().splitlines()[0])["commitInfo"] for commit in commits]
    return [str(info.get("engineInfo", "")) for info in infos]


def test_an_insert_is_committed_by_the_shim_and_read_alike_by_delta_rs(
    spark: ShimSession,
) -> None:
    spark.sql(f"INSERT INTO t VALUES {VALUES}")
    path = location(spark)
    assert engines(path)[-1] == "sparkshim"
    read = DeltaTable(str(path)).to_pyarrow_table().to_pylist()
    assert sorted(read, key=lambda row: row["id"]) == [
        {
            "id": 1,
            "name": "a",
            "ts": datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=timezone.utc),
            "amount": Decimal("12.34"),
            "tags": [1, 2],
        },
        {"id": 2, "name": None, "ts": None, "amount": None, "tags": None},
    ]
    assert [tuple(row) for row in spark.sql("SELECT id, name FROM t ORDER BY id").collect()] == [
        (1, "a"),
        (2, None),
    ]


def test_the_commit_reports_its_rows_and_feeds_the_change_data_feed(spark: ShimSession) -> None:
    spark.sql(f"INSERT INTO t VALUES {VALUES}")
    latest = spark.sql("DESCRIBE HISTORY t LIMIT 1").collect()[0]
    assert latest["operation"] == "WRITE"
    assert latest["operationMetrics"]["numOutputRows"] == "2"
    feed = DeltaTable(str(location(spark))).load_cdf(starting_version=1).read_all()
    changes = zip(feed["id"].to_pylist(), feed["_change_type"].to_pylist(), strict=True)
    assert Counter(changes) == Counter({(1, "insert"): 1, (2, "insert"): 1})


def test_its_data_files_are_read_alike_by_pyspark(
    spark: ShimSession, pyspark_session: SparkSession
) -> None:
    spark.sql(f"INSERT INTO t VALUES {VALUES}")
    files = DeltaTable(str(location(spark))).file_uris()
    read = pyspark_session.read.parquet(*files).orderBy("id").collect()
    assert [(r.id, r.name, r.amount, r.tags) for r in read] == [
        (1, "a", Decimal("12.34"), [1, 2]),
        (2, None, None, None),
    ]
    assert read[0].ts is not None
    assert read[1].ts is None


def test_delta_rs_writes_and_merges_on_top_of_it(spark: ShimSession) -> None:
    spark.sql(f"INSERT INTO t VALUES {VALUES}")
    path = location(spark)
    schema = pa.schema(DeltaTable(str(path)).schema().to_arrow())
    write_deltalake(str(path), pa.Table.from_pylist([{"id": 3}], schema=schema), mode="append")
    spark.sql("MERGE INTO t USING (SELECT 1 AS id) s ON t.id = s.id WHEN MATCHED THEN DELETE")
    assert sorted(DeltaTable(str(path)).to_pyarrow_table()["id"].to_pylist()) == [2, 3]


def test_a_checkpoint_is_written_at_the_checkpoint_interval(spark: ShimSession) -> None:
    spark.sql("ALTER TABLE t SET TBLPROPERTIES (delta.checkpointInterval = 3)")  # version 1
    for value in range(4):  # versions 2 to 5
        spark.sql(f"INSERT INTO t (id) VALUES ({value})")
    log = location(spark) / "_delta_log"
    assert engines(location(spark))[-1] == "sparkshim"
    assert (log / f"{3:020d}.checkpoint.parquet").exists()
    assert not (log / f"{5:020d}.checkpoint.parquet").exists()
    assert DeltaTable(str(location(spark))).to_pyarrow_table().num_rows == 4


def test_commits_past_the_log_retention_are_removed_at_a_checkpoint(spark: ShimSession) -> None:
    spark.sql(
        "ALTER TABLE t SET TBLPROPERTIES (delta.checkpointInterval = 2,"
        " delta.logRetentionDuration = 'interval 0 seconds')"
    )  # version 1
    for value in range(3):  # versions 2 to 4, a checkpoint at 2 and at 4
        spark.sql(f"INSERT INTO t (id) VALUES ({value})")
    log = location(spark) / "_delta_log"
    assert not (log / f"{0:020d}.json").exists()
    assert (log / f"{4:020d}.checkpoint.parquet").exists()
    assert DeltaTable(str(location(spark))).to_pyarrow_table().num_rows == 3
    assert spark.sql("SELECT count(*) FROM t").collect()[0][0] == 3
    path = location(spark)
    assert delta.open_table(path) is delta.open_table(path)  # still kept open, not replayed


def test_concurrent_appends_all_land(spark: ShimSession, tmp_path: Path) -> None:
    path = location(spark)
    sessions = [ShimSession(warehouse=tmp_path / "warehouse") for _ in range(4)]

    def append(session: ShimSession, base: int) -> None:
        for value in range(base, base + 5):
            session.sql(f"INSERT INTO t (id) VALUES ({value})")

    threads = [
        threading.Thread(target=append, args=(session, 100 * number))
        for number, session in enumerate(sessions)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    ids = DeltaTable(str(path)).to_pyarrow_table()["id"].to_pylist()
    assert sorted(ids) == sorted(100 * n + v for n in range(4) for v in range(5))


def test_a_conditional_append_fails_when_the_table_moved_and_leaves_no_file(
    spark: ShimSession,
) -> None:
    path = location(spark)
    names_before = {file.name for file in path.glob("*.parquet")}
    options = delta.CommitOptions(expected_version=0)
    spark.sql("INSERT INTO t (id) VALUES (1)")  # the table moves to version 1
    with pytest.raises(delta.TableMovedError, match="version 1, not 0"):
        delta.write(path, pa.table({"id": [2]}), overwrite=False, options=options)
    new_names = {file.name for file in path.glob("*.parquet")} - names_before
    live = {Path(urlparse(uri).path).name for uri in DeltaTable(str(path)).file_uris()}
    assert len(new_names) == 1  # the first insert's file: the failed append left none
    assert new_names <= live


def test_a_table_with_a_check_constraint_is_written_by_delta_rs(spark: ShimSession) -> None:
    # sparkshim has no ADD CONSTRAINT; delta-rs adds it.
    DeltaTable(str(location(spark))).alter.add_constraint({"positive": "id > 0"})
    spark.sql("INSERT INTO t (id) VALUES (1)")
    assert engines(location(spark))[-1].startswith("delta-rs")
    with pytest.raises(Exception, match="failed validation check"):
        spark.sql("INSERT INTO t (id) VALUES (-1)")
    assert spark.sql("SELECT count(*) FROM t").collect()[0][0] == 1


def test_a_null_in_a_not_null_column_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    spark = ShimSession(warehouse=tmp_path / "warehouse")
    spark.sql("CREATE TABLE n (id INT NOT NULL, name STRING)")
    spark.sql("INSERT INTO n VALUES (1, 'a')")
    with pytest.raises((AnalysisException, Exception)):
        spark.sql("INSERT INTO n VALUES (NULL, 'b')")
    assert [tuple(r) for r in spark.sql("SELECT * FROM n").collect()] == [(1, "a")]
