"""IcebergFormat on real Spark 3.5 with Iceberg 1.10.2: write-audit-publish refreshes,
watermarks read back from history, time travel, property commits, changelogs, and the
commits of incremental refresh (append, replace_where)."""

from __future__ import annotations

import itertools
from collections import Counter
from typing import Any

import pytest
from pyspark.sql import SparkSession
from sqlglot import exp, parse_one

from dyntables.errors import (
    CannotRefreshIncrementallyError,
    ConcurrentRefreshError,
    DynamicTableError,
)
from dyntables.formats import session_settings
from dyntables.formats.iceberg import (
    COPY_ON_WRITE,
    KEPT_CHANGE_VIEWS,
    PUBLISH_BRANCH,
    WAP_ID_CONF,
    IcebergFormat,
    _snapshots,
    _staged_snapshot,
)

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


def bag(session: SparkSession, table: exp.Table | str) -> Counter[tuple[Any, ...]]:
    """The multiset of rows (NULLs and all, which ``rows`` cannot sort)."""
    name = table if isinstance(table, str) else table.sql("spark")
    return Counter(tuple(row) for row in session.sql(f"SELECT * FROM {name}").collect())


def refs(session: SparkSession, table: exp.Table) -> list[str]:
    return [row[0] for row in session.sql(f"SELECT name FROM {table.sql('spark')}.refs").collect()]


def branches(session: SparkSession, table: exp.Table) -> dict[str, int]:
    """Each branch of the table and its snapshot."""
    query = f"SELECT name, snapshot_id FROM {table.sql('spark')}.refs"
    return {row[0]: int(row[1]) for row in session.sql(query).collect()}


def published_only(session: SparkSession, table: exp.Table) -> None:
    """The table's branches are ``main`` and the publish branch, at one snapshot: a publish
    leaves no snapshot but ``main``'s held by a branch."""
    held = branches(session, table)
    assert set(held) == {"main", PUBLISH_BRANCH}
    assert held[PUBLISH_BRANCH] == held["main"]


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


def test_compact_counts_and_rewrites_the_data_files(
    iceberg_spark: SparkSession, table: exp.Table
) -> None:
    create(iceberg_spark, table)
    name = table.sql("spark")
    for row in ("(1, 'a')", "(2, 'b')", "(3, NULL)"):
        iceberg_spark.sql(f"INSERT INTO {name} VALUES {row}")
    before = rows(iceberg_spark, table)
    assert FMT.data_file_count(iceberg_spark, table) == 3
    FMT.compact(iceberg_spark, table)
    assert FMT.data_file_count(iceberg_spark, table) == 1
    assert bag(iceberg_spark, table) == Counter(before)
    newest = FMT.history(iceberg_spark, table, limit=1)[0]
    assert (newest.operation, newest.changes_data) == ("replace", False)


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
    FMT.recommit_watermark(iceberg_spark, table, "w1", version)
    newest, refresh = FMT.history(iceberg_spark, table)
    assert refresh.version == version
    assert (newest.user_metadata, newest.changes_data) == ("w1", False)
    assert newest.version != version
    assert rows(iceberg_spark, table) == [(1, "a")]
    assert iceberg_spark.conf.get(WAP_ID_CONF, None) is None


def test_recommit_watermark_over_a_moved_table_changes_nothing(
    iceberg_spark: SparkSession, table: exp.Table
) -> None:
    create(iceberg_spark, table)
    FMT.overwrite(iceberg_spark, table, query("SELECT 1 AS id, 'a' AS v"), "w1", None)
    read = FMT.current_version(iceberg_spark, table)
    iceberg_spark.sql(f"INSERT INTO {table.sql('spark')} VALUES (2, 'b')")
    moved = FMT.current_version(iceberg_spark, table)
    with pytest.raises(ConcurrentRefreshError, match="changed while it was being refreshed"):
        FMT.recommit_watermark(iceberg_spark, table, "w0", read)
    assert FMT.current_version(iceberg_spark, table) == moved
    assert "w0" not in [commit.user_metadata for commit in FMT.history(iceberg_spark, table)]


# ---- incremental refresh: changes, append, replace_where ----


def signed_changes(
    session: SparkSession, table: exp.Table, old: int, new: int
) -> Counter[tuple[Any, ...]]:
    """The net signed multiset ``changes`` returns (values with a zero net left out)."""
    change = FMT.changes(session, table, ["id", "v"], old, new, "sign")
    net: Counter[tuple[Any, ...]] = Counter()
    for row in session.sql(change.sql("spark")).collect():
        net[(row["id"], row["v"])] += row["sign"]
    return Counter({value: count for value, count in net.items() if count})


def difference(
    session: SparkSession, table: exp.Table, old: int, new: int
) -> Counter[tuple[Any, ...]]:
    """The oracle: the rows at ``new`` minus the rows at ``old``, signed."""
    before = bag(session, FMT.pinned(table, old).sql("spark"))
    after = bag(session, FMT.pinned(table, new).sql("spark"))
    net = Counter(after)
    net.subtract(before)
    return Counter({value: count for value, count in net.items() if count})


def test_changes_are_the_signed_difference(iceberg_spark: SparkSession, table: exp.Table) -> None:
    create(iceberg_spark, table)
    name = table.sql("spark")
    versions = []
    for statement in (
        f"INSERT INTO {name} VALUES (1, 'a'), (1, 'a'), (2, 'b'), (NULL, 'n')",
        f"INSERT INTO {name} VALUES (1, 'a'), (3, 'c')",  # a third copy of (1, 'a')
        f"DELETE FROM {name} WHERE id = 2",  # rewrites a file: carry-over rows
        f"UPDATE {name} SET v = 'z' WHERE id = 3 OR id IS NULL",
        f"INSERT OVERWRITE {name} SELECT 1, 'a' UNION ALL SELECT 4, 'd'",  # 3 copies -> 1
    ):
        iceberg_spark.sql(statement)
        versions.append(FMT.current_version(iceberg_spark, table))
    iceberg_spark.sql(
        f"CALL lake.system.rewrite_data_files(table => 'db.{table.name}',"
        " options => map('min-input-files', '1'))"
    ).collect()
    compacted = FMT.current_version(iceberg_spark, table)
    versions.append(compacted)
    v1, v2, v3, v4, v5, v6 = (version for version in versions if version is not None)
    assert len(set(versions)) == 6
    assert signed_changes(iceberg_spark, table, v2, v3) == Counter({(2, "b"): -1})
    assert signed_changes(iceberg_spark, table, v3, v4) == Counter(
        {(3, "c"): -1, (3, "z"): 1, (None, "n"): -1, (None, "z"): 1}
    )
    overwritten = difference(iceberg_spark, table, v4, v5)
    assert overwritten[(1, "a")] == -2
    assert signed_changes(iceberg_spark, table, v4, v5) == overwritten
    # A range of several snapshots, a compaction (no change) at its end.
    assert signed_changes(iceberg_spark, table, v1, v6) == difference(iceberg_spark, table, v1, v6)
    assert signed_changes(iceberg_spark, table, v5, v6) == Counter()


def test_changes_refuse_a_range_they_cannot_read(
    iceberg_spark: SparkSession, table: exp.Table
) -> None:
    create(iceberg_spark, table)
    name = table.sql("spark")
    # One data file, so that deleting one of its rows writes a delete file.
    iceberg_spark.sql(
        f"INSERT INTO {name} SELECT /*+ REPARTITION(1) */ * FROM VALUES (1, 'a'), (2, 'b')"
    )
    first = FMT.current_version(iceberg_spark, table)
    iceberg_spark.sql(f"INSERT INTO {name} VALUES (3, 'c')")
    second = FMT.current_version(iceberg_spark, table)
    assert first is not None
    assert second is not None
    with pytest.raises(CannotRefreshIncrementallyError, match="not an ancestor"):
        FMT.changes(iceberg_spark, table, ["id", "v"], second, first, "sign")
    FMT.set_properties(iceberg_spark, table, {"write.delete.mode": "merge-on-read"})
    iceberg_spark.sql(f"DELETE FROM {name} WHERE id = 1")
    third = FMT.current_version(iceberg_spark, table)
    assert third is not None
    with pytest.raises(CannotRefreshIncrementallyError, match="merge-on-read"):
        FMT.changes(iceberg_spark, table, ["id", "v"], first, third, "sign")


def test_append_publishes_with_watermark(iceberg_spark: SparkSession, table: exp.Table) -> None:
    create(iceberg_spark, table)
    FMT.overwrite(iceberg_spark, table, query("SELECT 1 AS id, 'a' AS v"), "w1", None)
    v1 = FMT.current_version(iceberg_spark, table)
    FMT.append(
        iceberg_spark, table, query("SELECT 1 AS id, 'a' AS v UNION ALL SELECT 2, 'b'"), "w2", v1
    )
    assert rows(iceberg_spark, table) == [(1, "a"), (1, "a"), (2, "b")]
    newest = FMT.history(iceberg_spark, table)[0]
    assert (newest.operation, newest.user_metadata, newest.changes_data) == ("append", "w2", True)
    assert iceberg_spark.conf.get(WAP_ID_CONF, None) is None
    published_only(iceberg_spark, table)


def test_append_and_replace_where_refuse_a_moved_table(
    iceberg_spark: SparkSession, table: exp.Table
) -> None:
    create(iceberg_spark, table)
    FMT.overwrite(iceberg_spark, table, query("SELECT 1 AS id, 'a' AS v"), "w1", None)
    read_version = FMT.current_version(iceberg_spark, table)
    iceberg_spark.sql(f"INSERT INTO {table.sql('spark')} VALUES (9, 'concurrent')")
    with pytest.raises(DynamicTableError, match="changed while it was being refreshed"):
        FMT.append(iceberg_spark, table, query("SELECT 2 AS id, 'b' AS v"), "w2", read_version)
    with pytest.raises(DynamicTableError, match="changed while it was being refreshed"):
        FMT.replace_where(
            iceberg_spark,
            table,
            parse_one("id = 1", read="spark"),
            query("SELECT 3 AS id, 'c' AS v"),
            "w3",
            read_version,
        )
    assert rows(iceberg_spark, table) == [(1, "a"), (9, "concurrent")]
    assert [commit.user_metadata for commit in FMT.history(iceberg_spark, table)] == [None, "w1"]


def test_a_staged_append_is_not_published_onto_a_moved_table(
    iceberg_spark: SparkSession, table: exp.Table
) -> None:
    """The race the parent check cannot see: the table moves after the append was staged.
    Iceberg would cherry-pick the append onto the new snapshot; the fast-forward refuses."""
    create(iceberg_spark, table)
    name = table.sql("spark")
    iceberg_spark.sql(f"INSERT INTO {name} VALUES (1, 'a')")
    with session_settings(iceberg_spark, {WAP_ID_CONF: "w2"}):
        iceberg_spark.sql(f"INSERT INTO {name} VALUES (2, 'b')")
    current = FMT.current_version(iceberg_spark, table)
    staged = _staged_snapshot(_snapshots(iceberg_spark, table, with_main=True), "w2")
    assert staged is not None
    assert staged.parent_id == current
    iceberg_spark.sql(f"INSERT INTO {name} VALUES (9, 'concurrent')")
    with pytest.raises(DynamicTableError, match="not published"):
        FMT._publish(iceberg_spark, table, staged)
    assert rows(iceberg_spark, table) == [(1, "a"), (9, "concurrent")]
    # The publish branch holds the unpublished snapshot until the next publish moves it.
    assert branches(iceberg_spark, table)[PUBLISH_BRANCH] == staged.snapshot_id


class _MovesTheBranchFirst:
    """A session on which another refresh moves the publish branch to its own staged
    snapshot just before this one's fast-forward (two refreshes publishing at once)."""

    def __init__(self, session: SparkSession, table: exp.Table, other: int) -> None:
        self.session, self.table, self.other = session, table, other
        self.catalog, self.conf = session.catalog, session.conf

    def sql(self, text: str) -> Any:
        if "fast_forward" in text:
            self.session.sql(
                f"ALTER TABLE {self.table.sql('spark')} CREATE OR REPLACE BRANCH"
                f" {PUBLISH_BRANCH} AS OF VERSION {self.other}"
            )
        return self.session.sql(text)


def test_two_publishes_at_once_publish_one_refresh_whole(
    iceberg_spark: SparkSession, table: exp.Table
) -> None:
    """Two refreshes staged on one snapshot share the publish branch: the one that moved it
    last is published (by the other's fast-forward), the other reports a lost race, and
    the table holds exactly one refresh's rows."""
    create(iceberg_spark, table)
    name = table.sql("spark")
    iceberg_spark.sql(f"INSERT INTO {name} VALUES (1, 'a')")
    for wap_id, row in (("w2", "(2, 'b')"), ("w3", "(3, 'c')")):
        with session_settings(iceberg_spark, {WAP_ID_CONF: wap_id}):
            iceberg_spark.sql(f"INSERT INTO {name} VALUES {row}")
    snapshots = _snapshots(iceberg_spark, table, with_main=True)
    first, second = (_staged_snapshot(snapshots, wap_id) for wap_id in ("w2", "w3"))
    assert first is not None
    assert second is not None
    racing = _MovesTheBranchFirst(iceberg_spark, table, second.snapshot_id)
    with pytest.raises(ConcurrentRefreshError, match="another process"):
        FMT._publish(racing, table, first)
    assert rows(iceberg_spark, table) == [(1, "a"), (3, "c")]
    with pytest.raises(ConcurrentRefreshError, match="not published"):
        FMT._publish(iceberg_spark, table, first)  # main moved on: no longer a fast-forward
    assert rows(iceberg_spark, table) == [(1, "a"), (3, "c")]


def test_replace_where_reads_the_table_and_commits_once(
    iceberg_spark: SparkSession, table: exp.Table
) -> None:
    create(iceberg_spark, table)
    name = table.sql("spark")
    iceberg_spark.sql(f"INSERT INTO {name} VALUES (1, 'a'), (2, 'b'), (NULL, 'n')")
    iceberg_spark.sql(f"INSERT INTO {name} VALUES (2, 'b'), (3, 'c')")  # a second file
    FMT.recommit_watermark(iceberg_spark, table, "w1", FMT.current_version(iceberg_spark, table))
    v1 = FMT.current_version(iceberg_spark, table)
    # Replace the (2, 'b') copies and the NULL key with rows computed from the table itself.
    FMT.replace_where(
        iceberg_spark,
        table,
        parse_one("`id` = 2 OR `id` IS NULL", read="spark"),
        query(
            f"SELECT id, upper(v) AS v FROM {name} WHERE id = 2 OR id IS NULL"
            " UNION ALL SELECT 5, 'e'"
        ),
        "w2",
        v1,
    )
    assert bag(iceberg_spark, table) == Counter(
        [(1, "a"), (2, "B"), (2, "B"), (3, "c"), (5, "e"), (None, "N")]
    )
    newest, previous = FMT.history(iceberg_spark, table)[:2]
    assert previous.version == v1
    assert (newest.user_metadata, newest.changes_data) == ("w2", True)
    published_only(iceberg_spark, table)
    # Rows only (the predicate holds for nothing): still one commit with the watermark.
    FMT.replace_where(
        iceberg_spark,
        table,
        parse_one("`id` = 42", read="spark"),
        query("SELECT 6 AS id, 'f' AS v"),
        "w3",
        newest.version,
    )
    assert bag(iceberg_spark, table)[(6, "f")] == 1
    assert FMT.history(iceberg_spark, table)[0].user_metadata == "w3"


def test_change_views_are_reused_and_bounded() -> None:
    """No Spark needed: a session that records statements."""

    class Catalog:
        def __init__(self) -> None:
            self.views: set[str] = set()

        def tableExists(self, name: str) -> bool:  # noqa: N802 (PySpark's name)
            return name in self.views

        def dropTempView(self, name: str) -> bool:  # noqa: N802
            self.views.discard(name)
            return True

    class Session:
        def __init__(self) -> None:
            self.catalog = Catalog()
            self.calls = 0

        def sql(self, text: str) -> Any:
            self.calls += 1
            self.catalog.views.add(text.split("changelog_view => '")[1].split("'")[0])
            return self

        def collect(self) -> list[Any]:
            return []

    session = Session()
    fmt = IcebergFormat()
    source = exp.to_table("lake.db.src", dialect="spark")
    first = fmt._changelog_view(session, source, 1, 2)
    assert fmt._changelog_view(session, source, 1, 2) == first
    assert session.calls == 1
    for new in range(3, 3 + KEPT_CHANGE_VIEWS):
        fmt._changelog_view(session, source, 2, new)
    assert len(session.catalog.views) == KEPT_CHANGE_VIEWS
    assert first not in session.catalog.views  # the oldest was dropped


def test_compaction_drops_the_publish_branch_a_crashed_refresh_left(
    iceberg_spark: SparkSession, table: exp.Table
) -> None:
    """A refresh that stops between its fast-forward and dropping its branch leaves the
    branch (it keeps old files); the next compaction drops it."""
    create(iceberg_spark, table)
    FMT.overwrite(iceberg_spark, table, query("SELECT 1 AS id, 'a' AS v"), "w1", None)
    iceberg_spark.sql(f"INSERT INTO {table.sql('spark')} VALUES (2, 'b')")
    published = FMT.current_version(iceberg_spark, table)
    name = table.sql("spark")
    iceberg_spark.sql(
        f"ALTER TABLE {name} CREATE BRANCH dyntables_publish_{published} AS OF VERSION {published}"
    )

    def branches() -> list[str]:
        return [row[0] for row in iceberg_spark.sql(f"SELECT name FROM {name}.refs").collect()]

    assert f"dyntables_publish_{published}" in branches()
    FMT.compact(iceberg_spark, table)
    assert branches() == ["main"]
    assert rows(iceberg_spark, table) == [(1, "a"), (2, "b")]
