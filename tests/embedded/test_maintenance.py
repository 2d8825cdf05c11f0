"""Delta's OPTIMIZE and VACUUM on sparkshim (sparkshim/maintenance.py), and what they mean
for the tables that read them: compaction changes no row, no change-feed row and no
dynamic table; VACUUM deletes only what older versions alone need, and refuses a short
retention unless told; bad statements are refused by name and change nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pytest

from dyntables import DynamicTables
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
    """A plain table is scanned by DuckDB (the partitioned one above, through delta-rs)."""
    spark = ShimSession(warehouse=tmp_path / "warehouse")
    spark.sql("CREATE TABLE u (id BIGINT) USING delta")
    spark.sql("INSERT INTO u VALUES (1)")
    spark.sql("INSERT INTO u VALUES (2)")
    spark.sql("OPTIMIZE u")
    spark.conf.set(RETENTION_CHECK, "false")
    spark.sql("VACUUM u RETAIN 0 HOURS")
    with pytest.raises(AnalysisException, match=r"DELTA_FILE_NOT_FOUND_DETAILED.*part-"):
        spark.sql("SELECT * FROM u VERSION AS OF 1").collect()
    assert spark.sql("SELECT count(*) AS n FROM u").collect()[0]["n"] == 2


def test_a_short_retention_is_refused_unless_the_check_is_off(spark: ShimSession) -> None:
    spark.sql("OPTIMIZE t")
    version = detail(spark)["version"]
    with pytest.raises(IllegalArgumentException, match=RETENTION_CHECK):
        spark.sql("VACUUM t RETAIN 1 HOURS")
    assert detail(spark)["version"] == version
    assert spark.sql("SELECT count(*) AS n FROM t VERSION AS OF 1").collect()[0]["n"] == 2
