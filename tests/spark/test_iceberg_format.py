"""IcebergFormat on real Spark 3.5 with Iceberg 1.10.2: write-audit-publish refreshes,
watermarks read back from history, time travel, property commits and changelogs."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from pyspark.sql import SparkSession
from sqlglot import exp, parse_one

from dyntables.errors import DynamicTableError
from dyntables.formats.iceberg import COPY_ON_WRITE, WAP_ID_CONF, IcebergFormat

pytestmark = pytest.mark.spark

FMT = IcebergFormat()
_names = itertools.count()


@pytest.fixture
def table(iceberg_spark: SparkSession) -> exp.Table:
    """A fresh, not yet created table name in the ``lake`` catalog."""
    iceberg_spark.sql("CREATE NAMESPACE IF NOT EXISTS lake.db")
    return exp.to_table(f"lake.db.t{next(_names)}", dialect="spark")


def query(sql: str) -> exp.Query:
    parsed = parse_one(sql, read="spark")
    assert isinstance(parsed, exp.Query)
    return parsed


def create(session: SparkSession, table: exp.Table) -> None:
    session.sql(FMT.create_table_sql(table, [("id", "INT"), ("v", "STRING")], {"owner.team": "x"}))


def rows(session: SparkSession, table: exp.Table | str) -> list[tuple[Any, ...]]:
    name = table if isinstance(table, str) else table.sql("spark")
    return sorted(tuple(row) for row in session.sql(f"SELECT * FROM {name}").collect())


def test_create_table_sql_sets_wap_and_copy_on_write(
    iceberg_spark: SparkSession, table: exp.Table
) -> None:
    create(iceberg_spark, table)
    properties = FMT.properties(iceberg_spark, table)
    assert properties["write.wap.enabled"] == "true"
    assert all(properties[key] == "copy-on-write" for key in COPY_ON_WRITE)
    assert properties["owner.team"] == "x"
    assert FMT.current_version(iceberg_spark, table) is None
    assert FMT.history(iceberg_spark, table) == []


def test_overwrite_publishes_with_watermark_and_pins(
    iceberg_spark: SparkSession, table: exp.Table
) -> None:
    create(iceberg_spark, table)
    first = '{"refresh_id": "r1", "note": "it\'s a \\\\ test"}'
    FMT.overwrite(iceberg_spark, table, query("SELECT 1 AS id, 'a' AS v"), first, None)
    v1 = FMT.current_version(iceberg_spark, table)
    assert v1 is not None
    assert iceberg_spark.conf.get(WAP_ID_CONF, None) is None  # restored
    FMT.overwrite(
        iceberg_spark, table, query("SELECT 2 AS id, 'b' AS v UNION ALL SELECT 3, 'c'"), "w2", v1
    )
    v2 = FMT.current_version(iceberg_spark, table)
    assert v2 not in (None, v1)
    assert rows(iceberg_spark, table) == [(2, "b"), (3, "c")]
    history = FMT.history(iceberg_spark, table)
    assert [commit.version for commit in history] == [v2, v1]
    assert [FMT.watermark(commit) for commit in history] == ["w2", first]
    assert all(commit.changes_data and commit.operation == "overwrite" for commit in history)
    assert FMT.history(iceberg_spark, table, limit=1) == history[:1]
    assert v1 is not None
    assert rows(iceberg_spark, FMT.pinned(table, v1).sql("spark")) == [(1, "a")]


def test_pinned_keeps_alias() -> None:
    source = parse_one("SELECT * FROM lake.db.t AS s", read="spark").find(exp.Table)
    assert source is not None
    pinned = FMT.pinned(source, 42)
    assert pinned.sql("spark") == "lake.db.t VERSION AS OF 42 AS s"


def test_property_commits_make_no_snapshot(iceberg_spark: SparkSession, table: exp.Table) -> None:
    create(iceberg_spark, table)
    FMT.overwrite(iceberg_spark, table, query("SELECT 1 AS id, 'a' AS v"), "w1", None)
    version = FMT.current_version(iceberg_spark, table)
    FMT.set_properties(iceberg_spark, table, {"dyntables.k": "v", "dyntables.j": "w"})
    FMT.unset_properties(iceberg_spark, table, ["dyntables.j", "dyntables.absent"])
    properties = FMT.properties(iceberg_spark, table)
    assert properties["dyntables.k"] == "v"
    assert "dyntables.j" not in properties
    assert FMT.current_version(iceberg_spark, table) == version
    assert [commit.user_metadata for commit in FMT.history(iceberg_spark, table)] == ["w1"]


def test_compaction_does_not_change_data(iceberg_spark: SparkSession, table: exp.Table) -> None:
    create(iceberg_spark, table)
    name = table.sql("spark")
    iceberg_spark.sql(f"INSERT INTO {name} VALUES (1, 'a')")
    iceberg_spark.sql(f"INSERT INTO {name} VALUES (2, 'b')")
    iceberg_spark.sql(
        f"CALL lake.system.rewrite_data_files(table => 'db.{table.name}',"
        " options => map('min-input-files', '2'))"
    ).collect()
    newest, *older = FMT.history(iceberg_spark, table)
    assert (newest.operation, newest.changes_data) == ("replace", False)
    assert [(commit.operation, commit.changes_data) for commit in older] == [("append", True)] * 2
    assert all(commit.user_metadata is None for commit in older)


def test_stale_expected_version_fails_and_leaves_table(
    iceberg_spark: SparkSession, table: exp.Table
) -> None:
    create(iceberg_spark, table)
    FMT.overwrite(iceberg_spark, table, query("SELECT 1 AS id, 'a' AS v"), "w1", None)
    read_version = FMT.current_version(iceberg_spark, table)
    iceberg_spark.sql(f"INSERT INTO {table.sql('spark')} VALUES (9, 'concurrent')")
    moved = FMT.current_version(iceberg_spark, table)
    with pytest.raises(DynamicTableError, match="changed while it was being refreshed"):
        FMT.overwrite(iceberg_spark, table, query("SELECT 2 AS id, 'b' AS v"), "w2", read_version)
    assert FMT.current_version(iceberg_spark, table) == moved
    assert rows(iceberg_spark, table) == [(1, "a"), (9, "concurrent")]
    assert [commit.user_metadata for commit in FMT.history(iceberg_spark, table)] == [None, "w1"]
    assert iceberg_spark.conf.get(WAP_ID_CONF, None) is None
    # The next refresh, from the version it now reads, goes through.
    FMT.overwrite(iceberg_spark, table, query("SELECT 3 AS id, 'c' AS v"), "w3", moved)
    assert rows(iceberg_spark, table) == [(3, "c")]
    assert FMT.history(iceberg_spark, table)[0].user_metadata == "w3"


def test_overwrite_with_no_rows(iceberg_spark: SparkSession, table: exp.Table) -> None:
    create(iceberg_spark, table)
    FMT.overwrite(iceberg_spark, table, query("SELECT 1 AS id, 'a' AS v"), "w1", None)
    version = FMT.current_version(iceberg_spark, table)
    FMT.overwrite(
        iceberg_spark, table, query("SELECT 1 AS id, 'a' AS v WHERE false"), "w2", version
    )
    assert rows(iceberg_spark, table) == []
    assert FMT.history(iceberg_spark, table)[0].user_metadata == "w2"


def test_replace_schema_keeps_properties_and_watermark(
    iceberg_spark: SparkSession, table: exp.Table
) -> None:
    create(iceberg_spark, table)
    FMT.overwrite(iceberg_spark, table, query("SELECT 1 AS id, 'a' AS v"), "w1", None)
    version = FMT.current_version(iceberg_spark, table)
    FMT.overwrite(
        iceberg_spark,
        table,
        query("SELECT 1 AS id, 'a' AS v, 2.5D AS extra"),
        "w2",
        version,
        replace_schema=True,
    )
    assert rows(iceberg_spark, table) == [(1, "a", 2.5)]
    history = FMT.history(iceberg_spark, table)
    assert [commit.user_metadata for commit in history] == ["w2"]  # a new table's history
    properties = FMT.properties(iceberg_spark, table)
    assert properties["owner.team"] == "x"
    assert properties["write.wap.enabled"] == "true"
    # Refreshes go on by WAP on the replaced table.
    FMT.overwrite(
        iceberg_spark,
        table,
        query("SELECT 5 AS id, 'e' AS v, 0D AS extra"),
        "w3",
        history[0].version,
    )
    assert FMT.history(iceberg_spark, table)[0].user_metadata == "w3"


def test_replace_schema_with_stale_version_fails(
    iceberg_spark: SparkSession, table: exp.Table
) -> None:
    create(iceberg_spark, table)
    FMT.overwrite(iceberg_spark, table, query("SELECT 1 AS id, 'a' AS v"), "w1", None)
    with pytest.raises(DynamicTableError, match="changed while it was being refreshed"):
        FMT.overwrite(
            iceberg_spark, table, query("SELECT 1 AS x"), "w2", 12345, replace_schema=True
        )
    assert rows(iceberg_spark, table) == [(1, "a")]


def test_change_tracking_makes_changelog_work(
    iceberg_spark: SparkSession, table: exp.Table
) -> None:
    name = table.sql("spark")
    iceberg_spark.sql(
        f"CREATE TABLE {name} (id INT, v STRING) USING iceberg TBLPROPERTIES"
        " ('write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read',"
        " 'write.merge.mode'='merge-on-read')"
    )
    assert FMT.enable_change_tracking(iceberg_spark, table) is None
    properties = FMT.properties(iceberg_spark, table)
    assert {key: properties[key] for key in COPY_ON_WRITE} == COPY_ON_WRITE
    assert FMT.enable_change_tracking(iceberg_spark, table) is None  # already on: no-op
    iceberg_spark.sql(f"INSERT INTO {name} VALUES (1, 'a'), (2, 'b')")
    start = FMT.current_version(iceberg_spark, table)
    iceberg_spark.sql(f"DELETE FROM {name} WHERE id = 1")
    view = f"{table.name}_changes"
    iceberg_spark.sql(
        f"CALL lake.system.create_changelog_view(table => 'db.{table.name}',"
        f" options => map('start-snapshot-id', '{start}'), changelog_view => '{view}')"
    ).collect()
    changes = iceberg_spark.sql(f"SELECT id, v, _change_type FROM {view}").collect()
    assert [tuple(row) for row in changes] == [(1, "a", "DELETE")]
    assert FMT.history(iceberg_spark, table)[0].operation in ("delete", "overwrite")


def test_recommit_watermark_is_no_new_data(iceberg_spark: SparkSession, table: exp.Table) -> None:
    create(iceberg_spark, table)
    FMT.overwrite(iceberg_spark, table, query("SELECT 1 AS id, 'a' AS v"), "w1", None)
    version = FMT.current_version(iceberg_spark, table)
    FMT.recommit_watermark(iceberg_spark, table, "w1")
    newest, refresh = FMT.history(iceberg_spark, table)
    assert refresh.version == version
    assert (newest.user_metadata, newest.changes_data) == ("w1", False)
    assert newest.version != version
    assert rows(iceberg_spark, table) == [(1, "a")]
    assert iceberg_spark.conf.get(WAP_ID_CONF, None) is None
