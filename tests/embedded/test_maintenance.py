"""Delta's OPTIMIZE and VACUUM on sparkshim (sparkshim/maintenance.py), and what they mean
for the tables that read them: compaction changes no row, no change-feed row and no
dynamic table; VACUUM deletes only what older versions alone need, and refuses a short
retention unless told; bad statements are refused by name and change nothing."""

from __future__ import annotations

import doctest
import json
import math
import multiprocessing
import shutil
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable, QueryBuilder, TableFeatures, write_deltalake

from dyntables import DynamicTables
from sparkshim import compact, delta, maintenance
from sparkshim.config import EXPECTED_VERSION_CONF
from sparkshim.errors import AnalysisException, IllegalArgumentException, UnsupportedSqlError
from sparkshim.session import ShimSession

pytestmark = pytest.mark.embedded


@pytest.fixture
def spark(tmp_path: Path) -> ShimSession:
    session = ShimSession(warehouse=tmp_path / "warehouse")
    session.sql(
        "CREATE TABLE t (id BIGINT, p STRING, v DOUBLE) USING delta PARTITIONED BY (p)"
        " TBLPROPERTIES (delta.enableChangeDataFeed = true)"
    )
    for i in range(3):  # three files in each of two partitions
        session.sql(f"INSERT INTO t VALUES ({i}, 'a', {i}.5), ({i + 10}, 'b', 1.0)")
    return session


def detail(spark: ShimSession) -> Any:
    return spark.sql("DESCRIBE DETAIL t").collect()[0]


def contents(spark: ShimSession) -> list[tuple[Any, ...]]:
    return sorted(tuple(row) for row in spark.sql("SELECT * FROM t").collect())


def test_optimize_compacts_every_partition_and_changes_no_row(spark: ShimSession) -> None:
    before, version = contents(spark), detail(spark)["version"]
    assert detail(spark)["numFiles"] == 6
    result = spark.sql("OPTIMIZE t").collect()
    assert result[0]["path"] == detail(spark)["location"]
    metrics = result[0]["metrics"]
    assert (metrics["numFilesAdded"], metrics["numFilesRemoved"]) == (2, 6)
    assert metrics["filesRemoved"]["totalFiles"] == 6
    assert metrics["partitionsOptimized"] == 2
    assert (detail(spark)["numFiles"], contents(spark)) == (2, before)
    newest = spark.sql("DESCRIBE HISTORY t LIMIT 1").collect()[0]
    assert (newest["version"], newest["operation"]) == (version + 1, "OPTIMIZE")
    # The change data feed has no row for a commit that changes no row.
    assert spark.sql(f"SELECT * FROM table_changes('t', {version + 1})").collect() == []


def test_optimize_where_compacts_only_the_partitions_it_names(spark: ShimSession) -> None:
    metrics = spark.sql("OPTIMIZE t WHERE p = 'a'").collect()[0]["metrics"]
    assert (metrics["numFilesRemoved"], metrics["partitionsOptimized"]) == (3, 1)
    assert detail(spark)["numFiles"] == 4
    # Either way round, IN lists and NOT IN: 'b' alone is left, and is compacted.
    metrics = spark.sql("OPTIMIZE t WHERE 'a' <> p AND p NOT IN ('c') AND p IN ('a', 'b')")
    assert metrics.collect()[0]["metrics"]["numFilesRemoved"] == 3
    assert detail(spark)["numFiles"] == 2


def test_optimize_zorder_by_rewrites_the_files_in_the_columns_order(spark: ShimSession) -> None:
    before = contents(spark)
    metrics = spark.sql("OPTIMIZE t ZORDER BY (v, id)").collect()[0]["metrics"]
    assert metrics["numFilesRemoved"] == 6
    assert contents(spark) == before


@pytest.mark.parametrize(
    ("statement", "error", "message"),
    [
        ("OPTIMIZE t WHERE v = 1", AnalysisException, "non-partition column 'v'"),
        ("OPTIMIZE t WHERE p = 'a' OR p = 'b'", UnsupportedSqlError, "joined by AND"),
        ("OPTIMIZE t WHERE upper(p) = 'A'", UnsupportedSqlError, "partition columns"),
        ("OPTIMIZE t ZORDER BY (p)", AnalysisException, "p is a partition column"),
        ("OPTIMIZE t ZORDER BY (nope)", AnalysisException, "nope does not exist"),
        ("OPTIMIZE missing", AnalysisException, "TABLE_OR_VIEW_NOT_FOUND"),
    ],
)
def test_a_bad_optimize_is_refused_by_name_and_changes_nothing(
    spark: ShimSession, statement: str, error: type[Exception], message: str
) -> None:
    version = detail(spark)["version"]
    with pytest.raises(error, match=message):
        spark.sql(statement)
    assert (detail(spark)["version"], detail(spark)["numFiles"]) == (version, 6)


def test_a_dynamic_table_over_an_optimized_source_stays_exact(tmp_path: Path) -> None:
    """Compaction is no change of the source: the next refresh has no data to take in,
    and later changes apply on top of the compacted files."""
    dt = DynamicTables(warehouse=tmp_path / "warehouse")
    dt.sql("CREATE TABLE orders (id BIGINT, amount INT) USING delta")
    for i in range(3):
        dt.sql(f"INSERT INTO orders VALUES ({i}, {i * 10}), ({i + 10}, 5)")
    query = "SELECT amount, count(*) AS n FROM orders GROUP BY amount"
    dt.sql(f"CREATE DYNAMIC TABLE d TARGET_LAG = '1 hour' REFRESH_MODE = INCREMENTAL AS {query}")
    dt.sql("OPTIMIZE orders")
    assert dt.sql("ALTER DYNAMIC TABLE d REFRESH").collect()[0]["action"] == "NO_DATA"
    dt.sql("UPDATE orders SET amount = 7 WHERE id = 10")
    dt.sql("INSERT INTO orders VALUES (20, 0)")
    assert dt.sql("ALTER DYNAMIC TABLE d REFRESH").collect()[0]["action"] == "INCREMENTAL"

    def rows(sql: str) -> list[tuple[Any, ...]]:
        return sorted(tuple(row) for row in dt.sql(sql).collect())

    assert rows("SELECT * FROM d") == rows(query)


RETENTION_CHECK = "spark.databricks.delta.retentionDurationCheck.enabled"


def on_disk(uri: str) -> Path:
    return Path(unquote(urlparse(uri).path))


def test_vacuum_deletes_only_what_older_versions_alone_need(spark: ShimSession) -> None:
    spark.sql("OPTIMIZE t")  # the six small files are now needed by older versions only
    before, location = contents(spark), detail(spark)["location"]
    # Within the week's retention nothing is deleted.
    assert spark.sql("VACUUM t DRY RUN").collect() == []
    assert spark.sql("VACUUM t").collect()[0]["path"] == location
    spark.conf.set(RETENTION_CHECK, "false")
    try:
        listed = [row["path"] for row in spark.sql("VACUUM t RETAIN 0 HOURS DRY RUN").collect()]
        assert len([p for p in listed if "_change_data" not in p]) == 6
        assert all(on_disk(path).is_file() for path in listed)  # a dry run deletes nothing
        spark.sql("VACUUM t RETAIN 0 HOURS")
    finally:
        spark.conf.unset(RETENTION_CHECK)
    assert not any(on_disk(path).exists() for path in listed)
    assert contents(spark) == before
    with pytest.raises(AnalysisException, match=r"DELTA_FILE_NOT_FOUND_DETAILED.*VACUUM"):
        spark.sql("SELECT * FROM t VERSION AS OF 1").collect()  # its files are gone


def test_a_vacuumed_version_of_a_plain_table_names_the_missing_file(tmp_path: Path) -> None:
    """A plain table is scanned by DuckDB (the partitioned one above, through delta-rs);
    its change feed is read by delta-rs."""
    spark = ShimSession(warehouse=tmp_path / "warehouse")
    spark.sql(
        "CREATE TABLE u (id BIGINT) USING delta TBLPROPERTIES (delta.enableChangeDataFeed = true)"
    )
    spark.sql("INSERT INTO u VALUES (1)")
    spark.sql("INSERT INTO u VALUES (2)")
    spark.sql("UPDATE u SET id = 3 WHERE id = 2")  # its change feed is a file of its own
    spark.sql("OPTIMIZE u")
    spark.conf.set(RETENTION_CHECK, "false")
    spark.sql("VACUUM u RETAIN 0 HOURS")
    for read in ("SELECT * FROM u VERSION AS OF 1", "SELECT * FROM table_changes('u', 2, 3)"):
        with pytest.raises(AnalysisException, match=r"DELTA_FILE_NOT_FOUND_DETAILED.*part-"):
            spark.sql(read).collect()
    assert spark.sql("SELECT count(*) AS n FROM u").collect()[0]["n"] == 2


def test_a_short_retention_is_refused_unless_the_check_is_off(spark: ShimSession) -> None:
    spark.sql("OPTIMIZE t")
    version = detail(spark)["version"]
    with pytest.raises(IllegalArgumentException, match=RETENTION_CHECK):
        spark.sql("VACUUM t RETAIN 1 HOURS")
    assert detail(spark)["version"] == version
    assert spark.sql("SELECT count(*) AS n FROM t VERSION AS OF 1").collect()[0]["n"] == 2


# ---- OPTIMIZE commits only on top of the version it read (compact.py) ----


def table_location(spark: ShimSession, name: str = "t") -> Path:
    return on_disk(spark.sql(f"DESCRIBE DETAIL {name}").collect()[0]["location"])


def log_actions(location: Path) -> list[tuple[int, dict[str, Any]]]:
    """Every action of every commit file, with its version."""
    actions = []
    for commit in sorted((location / "_delta_log").glob("*.json")):
        version = int(commit.name.split(".")[0])
        actions.extend((version, json.loads(line)) for line in commit.read_text().splitlines())
    return actions


def optimize_versions(location: Path) -> list[int]:
    return [
        version
        for version, action in log_actions(location)
        if action.get("commitInfo", {}).get("operation") == "OPTIMIZE"
    ]


def stray_files(location: Path) -> set[str]:
    """Data files on disk that no commit added: what a failed compaction left behind."""
    added = {unquote(a["add"]["path"]) for _, a in log_actions(location) if "add" in a}
    on_disk_files = {str(p.relative_to(location)) for p in location.rglob("*.parquet")}
    return {p for p in on_disk_files - added if not p.startswith("_")}  # not _change_data


def _compact_when_told(
    warehouse: str, barrier: Any, tasks: Any, outcomes: Any
) -> None:  # pragma: no cover - runs in a spawned process
    """A process that, for each task, waits with the other one at ``barrier`` and then
    runs OPTIMIZE, reporting what happened."""
    spark = ShimSession(warehouse=warehouse)
    while tasks.get() is not None:
        barrier.wait(timeout=60)
        try:
            metrics = spark.sql("OPTIMIZE t").collect()[0]["metrics"]
            outcomes.put(f"compacted {metrics['numFilesRemoved']}")
        except AnalysisException as failure:
            outcomes.put(f"failed {failure}")


def test_two_processes_optimizing_at_once_commit_one_compaction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """delta-rs's optimize committed both and every row was there twice: one of the two
    must commit, the other change nothing (the same instant, three times)."""
    spark = ShimSession(warehouse=tmp_path)
    spark.sql("CREATE TABLE t (id BIGINT, tag STRING)")
    location = table_location(spark)
    context = multiprocessing.get_context("spawn")  # delta-rs must not be forked
    barrier = context.Barrier(2)
    tasks = [context.Queue(), context.Queue()]
    outcomes = context.Queue()
    workers = [
        context.Process(target=_compact_when_told, args=(str(tmp_path), barrier, q, outcomes))
        for q in tasks
    ]
    for process in workers:
        process.start()
    losses = 0
    try:
        for round_ in range(3):
            for i in range(40):
                spark.sql(f"INSERT INTO t VALUES ({round_ * 100 + i}, 'r{round_}')")
            before = Counter(contents_of(spark, "t"))
            compactions = len(optimize_versions(location))
            for queue in tasks:
                queue.put(round_)
            results = sorted(outcomes.get(timeout=120) for _ in workers)
            assert len(optimize_versions(location)) == compactions + 1
            assert Counter(contents_of(spark, "t")) == before
            assert detail_of(spark, "t")["numFiles"] == 1
            assert any(r.startswith("compacted ") and r != "compacted 0" for r in results)
            loser = next(r for r in results if r == "compacted 0" or r.startswith("failed"))
            if loser.startswith("failed"):
                assert "DELTA_CONCURRENT_DELETE_DELETE" in loser
                assert "nothing was changed" in loser
                losses += 1
            assert stray_files(location) == set()
    finally:
        for queue in tasks:
            queue.put(None)
        for process in workers:
            process.join(timeout=120)
    assert all(process.exitcode == 0 for process in workers)
    # Both read the table at the same version (the other outcome, the loser finding the
    # winner's commit and nothing to do, needs it to start 50 ms late).
    assert losses >= 1


def contents_of(spark: ShimSession, name: str) -> list[tuple[Any, ...]]:
    return sorted(tuple(row) for row in spark.sql(f"SELECT * FROM {name}").collect())


def detail_of(spark: ShimSession, name: str) -> Any:
    return spark.sql(f"DESCRIBE DETAIL {name}").collect()[0]


def test_a_compaction_of_a_stale_read_changes_nothing(spark: ShimSession) -> None:
    """A DELETE lands between the compaction's read and its commit: the compaction must
    not bring the deleted rows back, nor leave its files behind."""
    location = table_location(spark)
    stale = DeltaTable(str(location))
    spark.sql("DELETE FROM t WHERE id = 0")
    after_delete, version = contents(spark), detail(spark)["version"]
    with pytest.raises(delta.TableMovedError, match=r"DELTA_CONCURRENT_DELETE_DELETE.*version"):
        compact.optimize(
            location,
            stale,
            filters=None,
            zorder_columns=[],
            predicate=None,
            options=delta.CommitOptions(),
        )
    assert (contents(spark), detail(spark)["version"]) == (after_delete, version)
    assert stray_files(location) == set()


def test_optimize_honours_the_version_the_writer_read(spark: ShimSession) -> None:
    version = detail(spark)["version"]
    spark.conf.set(EXPECTED_VERSION_CONF, str(version - 1))
    with pytest.raises(delta.TableMovedError, match="DELTA_CONCURRENT_WRITE"):
        spark.sql("OPTIMIZE t")
    assert (detail(spark)["version"], detail(spark)["numFiles"]) == (version, 6)
    spark.conf.set(EXPECTED_VERSION_CONF, str(version))
    spark.sql("OPTIMIZE t")
    assert detail(spark)["version"] == version + 1


def test_nothing_to_compact_commits_nothing(spark: ShimSession) -> None:
    spark.sql("OPTIMIZE t")
    version = detail(spark)["version"]
    metrics = spark.sql("OPTIMIZE t").collect()[0]["metrics"]
    assert (metrics["numFilesAdded"], metrics["numFilesRemoved"]) == (0, 0)
    assert (metrics["totalConsideredFiles"], metrics["totalFilesSkipped"]) == (2, 2)
    assert metrics["filesAdded"].asDict() == {
        "min": 0,
        "max": 0,
        "avg": 0.0,
        "totalFiles": 0,
        "totalSize": 0,
    }
    assert detail(spark)["version"] == version


def test_the_optimize_commit_is_delta_shaped(spark: ShimSession) -> None:
    """Removes and adds of no data change, each with its partition values; the new files
    in their partition's folder, with exact row and NULL counts; the history as delta-rs
    records an OPTIMIZE."""
    spark.conf.set("spark.databricks.delta.commitInfo.userMetadata", "nightly")
    spark.sql("OPTIMIZE t WHERE p = 'a'")
    location = table_location(spark)
    version = detail(spark)["version"]
    actions = [a for v, a in log_actions(location) if v == version]
    info = actions[0]["commitInfo"]
    assert (info["operation"], info["readVersion"], info["isBlindAppend"]) == (
        "OPTIMIZE",
        version - 1,
        False,
    )
    assert info["operationParameters"] == {"predicate": "[\"p = 'a'\"]", "zOrderBy": "[]"}
    assert info["userMetadata"] == "nightly"
    assert info["operationMetrics"]["numFilesRemoved"] == 3
    removes = [a["remove"] for a in actions if "remove" in a]
    adds = [a["add"] for a in actions if "add" in a]
    assert len(removes) == 3
    assert all(r["partitionValues"] == {"p": "a"} and not r["dataChange"] for r in removes)
    assert all(r["path"].startswith("p=a/") and r["extendedFileMetadata"] for r in removes)
    [add] = adds
    assert (add["partitionValues"], add["dataChange"]) == ({"p": "a"}, False)
    assert add["path"].startswith("p=a/part-00000-")
    assert add["path"].endswith(".snappy.parquet")
    stats = json.loads(add["stats"])
    assert stats["numRecords"] == 3
    assert stats["nullCount"] == {"id": 0, "v": 0}
    assert (stats["minValues"], stats["maxValues"]) == ({"id": 0}, {"id": 2})
    history = spark.sql("DESCRIBE HISTORY t LIMIT 1").collect()[0]
    assert history["operationMetrics"]["numFilesAdded"] == "1"


def test_partition_values_are_kept_as_written(tmp_path: Path) -> None:
    """NULL, a value the path must escape, and a number: each partition is compacted on
    its own and keeps its value as the log spelled it."""
    spark = ShimSession(warehouse=tmp_path)
    spark.sql("CREATE TABLE t (id BIGINT, s STRING, n INT) USING delta PARTITIONED BY (s, n)")
    for i in range(2):
        spark.sql(
            f"INSERT INTO t VALUES ({i}, 'a b:c/d%e', 1), ({i + 10}, NULL, NULL),"
            f" ({i + 20}, 'x', 2)"
        )
    before = contents_of(spark, "t")
    metrics = spark.sql("OPTIMIZE t").collect()[0]["metrics"]
    assert (metrics["numFilesRemoved"], metrics["partitionsOptimized"]) == (6, 3)
    assert contents_of(spark, "t") == before
    location = table_location(spark)
    adds = [a["add"] for _, a in log_actions(location) if "add" in a and not a["add"]["dataChange"]]
    assert sorted(json.dumps(a["partitionValues"], sort_keys=True) for a in adds) == sorted(
        json.dumps(v, sort_keys=True)
        for v in ({"s": "a b:c/d%e", "n": "1"}, {"s": None, "n": None}, {"s": "x", "n": "2"})
    )
    for add in adds:
        assert (location / unquote(add["path"])).is_file()
    assert spark.sql("SELECT id FROM t WHERE s IS NULL ORDER BY id").collect()[0]["id"] == 10


def test_zorder_sorts_the_rows_along_the_curve(tmp_path: Path) -> None:
    """Two columns of four values each (ranked, so 0, 10, 20, 30 are 0 to 3): the rows
    come out in Z order, the first column's bit first in each pair."""
    spark = ShimSession(warehouse=tmp_path)
    spark.sql("CREATE TABLE t (x INT, y INT, s STRING)")
    cells = [(x, y) for x in range(4) for y in range(4)]
    for part in (cells[::3], cells[1::3], cells[2::3]):  # three files, out of order
        values = ", ".join(f"({x * 10}, {y}, 'c{x}{y}')" for x, y in reversed(part))
        spark.sql(f"INSERT INTO t VALUES {values}")
    before = contents_of(spark, "t")
    metrics = spark.sql("OPTIMIZE t ZORDER BY (x, y)").collect()[0]["metrics"]
    assert (metrics["numFilesRemoved"], metrics["numFilesAdded"]) == (3, 1)
    assert metrics["preserveInsertionOrder"] is False
    assert contents_of(spark, "t") == before
    location = table_location(spark)
    [newest] = [
        a["add"]["path"]
        for v, a in log_actions(location)
        if "add" in a and v == max(optimize_versions(location))
    ]
    rows = pq.read_table(location / newest).to_pylist()
    order = [(r["x"] // 10, r["y"]) for r in rows]
    assert order == [
        (0, 0), (0, 1), (1, 0), (1, 1), (0, 2), (0, 3), (1, 2), (1, 3),
        (2, 0), (2, 1), (3, 0), (3, 1), (2, 2), (2, 3), (3, 2), (3, 3),
    ]  # fmt: skip
    history = spark.sql("DESCRIBE HISTORY t LIMIT 1").collect()[0]
    assert history["operationParameters"]["zOrderBy"] == '["x", "y"]'


def test_files_of_different_schemas_are_not_merged(tmp_path: Path) -> None:
    """Files written before a column was added store fewer columns: they are compacted
    among themselves, the newer ones among themselves."""
    location = tmp_path / "t"
    for i in range(2):
        write_deltalake(location, pa.table({"id": [i]}), mode="append")
    for i in range(2):
        data = pa.table({"id": [i + 10], "extra": [f"e{i}"]})
        write_deltalake(location, data, mode="append", schema_mode="merge")
    before = sorted(DeltaTable(str(location)).to_pyarrow_table().to_pylist(), key=str)
    result = maintenance.optimize(location, None, [], delta.CommitOptions())
    metrics = result.column("metrics")[0].as_py()
    assert (metrics["numFilesRemoved"], metrics["numFilesAdded"]) == (4, 2)
    table = DeltaTable(str(location))
    assert sorted(table.to_pyarrow_table().to_pylist(), key=str) == before
    widths = sorted(pq.read_schema(location / p).names.__len__() for p in table.file_uris())
    assert widths == [1, 2]


GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "delta-golden"


def golden_copy(name: str, tmp_path: Path) -> Path:
    return Path(shutil.copytree(GOLDEN / name, tmp_path / name))


def rows_of(location: Path) -> list[dict[str, Any]]:
    """The table's rows as delta-rs's query engine reads them (deletion vectors applied)."""
    query = QueryBuilder().register("t", DeltaTable(str(location))).execute("SELECT * FROM t")
    return sorted(pa.table(query.read_all()).to_pylist(), key=str)


@pytest.mark.parametrize("name", ["dv-partitioned-with-checkpoint", "dv-with-columnmapping"])
def test_files_with_deletion_vectors_are_compacted_without_their_rows(
    tmp_path: Path, name: str
) -> None:
    """Tables Spark wrote with deletion vectors (one of them with column mapping): every
    file with a vector is rewritten without the rows it removes (alone in its bin too),
    each removed with its vector, and the rows stay the 35 Spark left."""
    location = golden_copy(name, tmp_path)
    before = rows_of(location)
    assert len(before) == 35
    table = DeltaTable(str(location))
    with_vectors = pa.table(table.deletion_vectors()).column("filepath").to_pylist()
    assert with_vectors
    result = maintenance.optimize(location, None, [], delta.CommitOptions())
    metrics = result.column("metrics")[0].as_py()
    assert metrics["numFilesRemoved"] > 0
    assert rows_of(location) == before
    after = DeltaTable(str(location))
    assert pa.table(after.deletion_vectors()).num_rows == 0
    removed = [a["remove"] for _, a in log_actions(location) if "remove" in a]
    compacted = [r for r in removed if not r["dataChange"]]
    assert sum(1 for r in compacted if r.get("deletionVector")) == len(with_vectors)
    # Partition values and folders as Spark wrote them (physical names under mapping).
    newest = max(optimize_versions(location))
    for add in (a["add"] for v, a in log_actions(location) if v == newest and "add" in a):
        [(key, value)] = add["partitionValues"].items()
        assert add["path"].startswith(f"{key}={value}/")
    # Z-order by a logical name reaches the physical column.
    result = maintenance.optimize(location, None, ["col1"], delta.CommitOptions())
    assert result.column("metrics")[0].as_py()["numFilesAdded"] > 0
    assert rows_of(location) == before


def test_a_table_whose_commits_need_more_is_refused(tmp_path: Path) -> None:
    location = tmp_path / "t"
    for i in range(2):
        write_deltalake(location, pa.table({"id": [i]}), mode="append")
    DeltaTable(str(location)).alter.add_feature(
        TableFeatures.DomainMetadata, allow_protocol_versions_increase=True
    )
    with pytest.raises(UnsupportedSqlError, match=r"domain metadata.*Spark"):
        maintenance.optimize(location, None, [], delta.CommitOptions())
    assert len(DeltaTable(str(location)).file_uris()) == 2


def test_the_change_feed_reads_across_an_optimize(tmp_path: Path) -> None:
    """An append, an OPTIMIZE, an append: the feed has the two inserts and nothing of the
    compaction."""
    spark = ShimSession(warehouse=tmp_path)
    spark.sql("CREATE TABLE c (id BIGINT) TBLPROPERTIES (delta.enableChangeDataFeed = true)")
    spark.sql("INSERT INTO c VALUES (1)")
    spark.sql("INSERT INTO c VALUES (2)")
    first = detail_of(spark, "c")["version"] - 1
    spark.sql("OPTIMIZE c")
    spark.sql("INSERT INTO c VALUES (3)")
    last = detail_of(spark, "c")["version"]
    feed = spark.sql(
        f"SELECT id, _change_type, _commit_version FROM table_changes('c', {first}, {last})"
    )
    assert sorted(tuple(row) for row in feed.collect()) == [
        (1, "insert", first),
        (2, "insert", first + 1),
        (3, "insert", last),
    ]


def test_the_compact_module_examples_run() -> None:
    failures, tried = doctest.testmod(compact)
    assert tried > 0
    assert failures == 0


def test_files_of_different_writers_are_merged(tmp_path: Path) -> None:
    """sparkshim's appends (pyarrow) store a DECIMAL as bytes and name a list's element
    ``element``; delta-rs stores it as an integer and names it ``item``: the same values,
    compacted together."""
    spark = ShimSession(warehouse=tmp_path)
    spark.sql("CREATE TABLE m (id BIGINT, d DECIMAL(10, 2), tags ARRAY<STRING>)")
    spark.sql("INSERT INTO m VALUES (1, 1.25, array('a')), (2, NULL, NULL)")
    spark.sql("INSERT INTO m VALUES (3, -7.5, array('b', NULL))")
    location = table_location(spark, "m")
    schema = DeltaTable(str(location)).schema().to_arrow()
    data = pa.table({"id": [4], "d": [Decimal("9.99")], "tags": [["c"]]})
    write_deltalake(location, data.cast(pa.schema(schema)), mode="append")
    before = contents_of(spark, "m")
    metrics = spark.sql("OPTIMIZE m").collect()[0]["metrics"]
    assert (metrics["numFilesRemoved"], metrics["numFilesAdded"]) == (3, 1)
    assert contents_of(spark, "m") == before


def test_the_target_file_size_bounds_the_new_files(tmp_path: Path) -> None:
    """Ten files of equal size under a target of two and a half of them: compaction
    packs neighbours two by two; Z-order writes the rows again in files of about it."""
    spark = ShimSession(warehouse=tmp_path)
    spark.sql("CREATE TABLE t (id BIGINT, s STRING)")
    for i in range(10):
        spark.sql(f"INSERT INTO t VALUES ({i}, 'v{i}')")
    sizes = {p.stat().st_size for p in table_location(spark).glob("*.parquet")}
    target = max(sizes) * 5 // 2
    spark.sql(f"ALTER TABLE t SET TBLPROPERTIES (delta.targetFileSize = {target})")
    before = contents_of(spark, "t")
    metrics = spark.sql("OPTIMIZE t").collect()[0]["metrics"]
    assert (metrics["numFilesRemoved"], metrics["numFilesAdded"], metrics["numBatches"]) == (
        10,
        5,
        5,
    )
    assert metrics["filesAdded"]["max"] < target
    metrics = spark.sql("OPTIMIZE t ZORDER BY (s)").collect()[0]["metrics"]
    assert metrics["numFilesRemoved"] == 5
    assert metrics["numFilesAdded"] == math.ceil(metrics["filesRemoved"]["totalSize"] / target)
    assert contents_of(spark, "t") == before


def test_an_optimize_at_the_checkpoint_interval_writes_a_checkpoint(tmp_path: Path) -> None:
    spark = ShimSession(warehouse=tmp_path)
    spark.sql("CREATE TABLE t (id BIGINT) TBLPROPERTIES (delta.checkpointInterval = 3)")
    spark.sql("INSERT INTO t VALUES (1)")
    spark.sql("INSERT INTO t VALUES (2)")
    spark.sql("OPTIMIZE t")
    location = table_location(spark)
    assert optimize_versions(location) == [3]
    last = json.loads((location / "_delta_log" / "_last_checkpoint").read_text())
    assert last["version"] == 3
    assert DeltaTable(str(location)).to_pyarrow_table().num_rows == 2
