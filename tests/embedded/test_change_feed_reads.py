"""How often an incremental refresh reads a source's change feed, and the rows it says it
changed (the property tests compare the rows themselves with the query).

A feed that one statement reads once is read inside that statement (not computed into a
view first, which costs a statement); a feed that a statement reads twice (a self-join's
terms, UNION ALL of one source) is computed once into a view. Either way each changelog is
read by one statement. The rows inserted and deleted a refresh reports are what it counted
itself (the groups path too): they must equal what its commit's metrics say (Delta reports
them)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from sqlglot import exp
from statement_counts import counting

from dyntables import DynamicTables

pytestmark = pytest.mark.embedded

FEED = "TABLE_CHANGES('default.src'"
OTHER_FEED = "TABLE_CHANGES('default.other'"


@pytest.fixture
def dt(tmp_path: Path) -> DynamicTables:
    tables = DynamicTables(warehouse=tmp_path / "warehouse")
    tables.sql("CREATE TABLE src (k INT, g STRING, v BIGINT)")
    tables.sql("INSERT INTO src SELECT id, CAST(id % 4 AS STRING), id FROM range(40)")
    tables.sql("CREATE TABLE other (g STRING, label STRING)")
    tables.sql("INSERT INTO other VALUES ('0', 'zero'), ('1', 'one'), ('2', 'two')")
    return tables


def _create(dt: DynamicTables, name: str, query: str) -> None:
    dt.sql(
        f"CREATE DYNAMIC TABLE {name} TARGET_LAG = '1 minute' REFRESH_MODE = INCREMENTAL AS {query}"
    )


def _refresh(dt: DynamicTables, name: str, query: str) -> list[str]:
    """The statements of an incremental refresh of ``name``, checked against ``query``."""
    with counting(dt) as seen:
        refreshed = dt.sql(f"ALTER DYNAMIC TABLE {name} REFRESH").collect()[0]
    assert refreshed.action == "INCREMENTAL", refreshed
    assert _rows(dt, f"SELECT * FROM {name}") == _rows(dt, query)
    return seen


def _rows(dt: DynamicTables, sql: str) -> Counter[tuple[Any, ...]]:
    return Counter(tuple(row) for row in dt.sql(sql).collect())


def _reading(statements: list[str], feed: str) -> list[str]:
    return [statement for statement in statements if feed in statement]


def _is_feed_alone(statement: str) -> bool:
    """The change feed computed into a view: the feed's query and nothing around it but
    its netting on the columns the query reads (changes.cancelled_out)."""
    netted = re.fullmatch(
        r"SELECT .* FROM \(SELECT \*, SUM\(__dt_sign\) OVER \(PARTITION BY [^)]*\) AS __dt_net"
        r" FROM \((?P<feed>.*)\) AS f\) AS f WHERE __dt_net <> 0",
        statement,
    )
    feed = netted.group("feed") if netted else statement
    alone = re.fullmatch(r"SELECT .* FROM TABLE_CHANGES\('[^']*', \d+, \d+\)", feed)
    return alone is not None and feed.count(" FROM ") == 1


@pytest.mark.parametrize(
    ("query", "reader"),
    [
        # the net change of the filter
        ("SELECT k, v FROM src WHERE v % 2 = 0", "__dt_net"),
        # the affected groups (change arithmetic)
        ("SELECT g, count(*) AS n, sum(v) AS s FROM src GROUP BY g", "__dt_present"),
        # the affected groups' keys (recomputed)
        ("SELECT g, count(DISTINCT v) AS n FROM src GROUP BY g", "__dt_held"),
        # the keys the change touches (a window recomputed for them)
        ("SELECT k, g, sum(v) OVER (PARTITION BY g) AS t FROM src", "DISTINCT"),
        # the netted input rows of ranking windows, by position (updated in place)
        ("SELECT k, g, rank() OVER (PARTITION BY g ORDER BY v) AS r FROM src", "__dt_in_place"),
    ],
)
def test_a_feed_read_once_is_read_by_the_statement_that_uses_it(
    dt: DynamicTables, query: str, reader: str
) -> None:
    _create(dt, "d", query)
    dt.sql("UPDATE src SET v = v + 1 WHERE k < 10")
    reads = _reading(_refresh(dt, "d", query), FEED)
    assert len(reads) == 1
    assert reader in reads[0]
    assert not _is_feed_alone(reads[0])


@pytest.mark.parametrize(
    "query",
    [
        "SELECT a.k, b.v FROM src a JOIN src b ON a.g = b.g AND a.k < b.k",
        "SELECT k FROM src WHERE v > 30 UNION ALL SELECT k FROM src WHERE v % 3 = 0",
    ],
)
def test_a_feed_read_twice_by_a_statement_is_computed_once(dt: DynamicTables, query: str) -> None:
    _create(dt, "d", query)
    dt.sql("UPDATE src SET v = v + 1 WHERE k < 10")
    seen = _refresh(dt, "d", query)
    reads = _reading(seen, FEED)
    assert len(reads) == 1
    assert _is_feed_alone(reads[0])
    (net,) = [statement for statement in seen if "SUM(__dt_sign) AS __dt_net" in statement]
    assert net.count("__dt_changes_") == 2  # both terms read the view


def test_a_join_of_two_changed_sources_reads_each_changelog_once(dt: DynamicTables) -> None:
    query = "SELECT s.k, o.label FROM src s JOIN other o ON s.g = o.g"
    _create(dt, "d", query)
    dt.sql("UPDATE src SET g = '2' WHERE k < 10")
    dt.sql("UPDATE other SET label = 'ONE' WHERE g = '1'")
    seen = _refresh(dt, "d", query)
    assert _reading(seen, FEED) == _reading(seen, OTHER_FEED)  # the same single statement
    (net,) = _reading(seen, FEED)
    assert "__dt_net" in net


@pytest.mark.parametrize(
    "query",
    [
        "SELECT k, v FROM src WHERE v % 2 = 0",
        "SELECT g, count(*) AS n, sum(v) AS s FROM src GROUP BY g",
        "SELECT g, max(v) AS hi FROM src GROUP BY g",  # a removed maximum: recomputed
        "SELECT g, count(DISTINCT v) AS n FROM src GROUP BY g",  # keys only: recomputed
        "SELECT DISTINCT g FROM src",
        "SELECT a.k, b.v FROM src a JOIN src b ON a.g = b.g AND a.k < b.k",
    ],
)
def test_the_rows_a_refresh_reports_are_those_its_commit_changed(
    dt: DynamicTables, query: str
) -> None:
    _create(dt, "d", query)
    fmt, session = dt.engine.table_format, dt.engine.refresh_session
    for change in (
        "UPDATE src SET v = v + 1 WHERE k < 10",
        "DELETE FROM src WHERE k > 35",
        "INSERT INTO src VALUES (100, 'z', 5), (101, '1', 7), (102, '1', 7)",
        "DELETE FROM src WHERE g = 'z' OR k = 101",
    ):
        dt.sql(change)
        refreshed = dt.sql("ALTER DYNAMIC TABLE d REFRESH").collect()[0]
        assert refreshed.action == "INCREMENTAL", (change, refreshed)
        assert _rows(dt, "SELECT * FROM d") == _rows(dt, query), change
        commit = fmt.history(session, exp.to_table("default.d"), limit=1)[0]
        reported = (refreshed.rows_inserted, refreshed.rows_deleted)
        assert reported == (commit.rows_inserted or 0, commit.rows_deleted or 0), change


def test_groups_with_a_frozen_region_count_only_their_active_rows(dt: DynamicTables) -> None:
    query = "SELECT g, count(*) AS n, sum(v) AS s FROM src GROUP BY g"
    dt.sql(
        "CREATE DYNAMIC TABLE d TARGET_LAG = '1 minute' REFRESH_MODE = INCREMENTAL"
        f" FROZEN WHERE (g < '2') AS {query}"
    )
    fmt, session = dt.engine.table_format, dt.engine.refresh_session
    for change in (
        "UPDATE src SET v = v + 1 WHERE k < 10",  # every group: 0 and 1 frozen
        "INSERT INTO src VALUES (100, 'z', 5), (101, '1', 7)",
        "DELETE FROM src WHERE g = 'z'",
    ):
        dt.sql(change)
        refreshed = dt.sql("ALTER DYNAMIC TABLE d REFRESH").collect()[0]
        assert refreshed.action == "INCREMENTAL", (change, refreshed)
        active = _rows(dt, "SELECT * FROM d WHERE NOT METADATA$IS_FROZEN")
        assert active == _rows(dt, f"SELECT * FROM ({query}) WHERE g >= '2'"), change
        commit = fmt.history(session, exp.to_table("default.d"), limit=1)[0]
        reported = (refreshed.rows_inserted, refreshed.rows_deleted)
        assert reported == (commit.rows_inserted or 0, commit.rows_deleted or 0), change
