"""Incremental refresh rules with a visible effect beyond the result (which the property
tests compare with a full recompute): what a refresh reads, and when it falls back."""

from __future__ import annotations

import re
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from dyntables import DynamicTables

pytestmark = pytest.mark.embedded

BY_STATUS = (
    "SELECT status, count(*) AS n, sum(amount) AS total, min(amount) AS lo,"
    " max(amount) AS hi, count(note) AS noted FROM orders GROUP BY status"
)


@pytest.fixture
def dt(tmp_path: Path) -> DynamicTables:
    tables = DynamicTables(warehouse=tmp_path / "warehouse")
    tables.sql(
        "CREATE TABLE orders (order_id INT, amount DECIMAL(8, 2), status STRING, note STRING)"
    )
    tables.sql(
        "INSERT INTO orders VALUES (1, 10.00, 'paid', NULL), (2, NULL, 'open', NULL),"
        " (3, 7.00, 'paid', 'x')"
    )
    tables.sql(f"CREATE DYNAMIC TABLE by_status TARGET_LAG = '1 minute' AS {BY_STATUS}")
    return tables


@pytest.fixture
def statements(dt: DynamicTables, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every statement the refreshes run, as text."""
    return _recorded(dt, monkeypatch)


def _recorded(dt: DynamicTables, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The statements ``dt``'s refreshes run from now on, as text (a list that grows)."""
    session = dt.engine.refresh_session
    seen: list[str] = []
    real = session.sql

    def recording(text: str, *args: Any, **kwargs: Any) -> Any:
        seen.append(text)
        return real(text, *args, **kwargs)

    monkeypatch.setattr(session, "sql", recording)
    return seen


def _reads_a_version(statement: str) -> bool:
    return re.search(r"orders`? VERSION AS OF", statement) is not None


def _rows(dt: DynamicTables, sql: str) -> Counter[tuple[Any, ...]]:
    return Counter(tuple(row) for row in dt.sql(sql).collect())


def test_auto_makes_every_keyed_operator_incremental(dt: DynamicTables) -> None:
    """Seed 000's list under AUTO: a GROUP BY with any aggregate, windows with PARTITION BY,
    outer joins, a GROUP BY in a CTE, DISTINCT: all INCREMENTAL (whether one refresh is
    cheaper in full is decided at that refresh)."""
    shown = dt.sql("SHOW DYNAMIC TABLES LIKE 'by_status'").collect()[0]
    assert shown.refresh_mode == "INCREMENTAL"
    for name, query in {
        "means": "SELECT status, avg(order_id) AS mean, count(DISTINCT note) AS notes"
        " FROM orders GROUP BY status",
        "ranks": "SELECT order_id, rank() OVER (PARTITION BY status ORDER BY order_id) AS r"
        " FROM orders",
        "pairs": "SELECT a.order_id, b.order_id AS other FROM orders a"
        " LEFT JOIN orders b ON a.status = b.status",
        "in_cte": "WITH g AS (SELECT status, max(amount) AS top FROM orders GROUP BY status)"
        " SELECT o.order_id, g.top FROM orders o JOIN g ON o.status = g.status",
        "kinds": "SELECT DISTINCT status FROM orders",
    }.items():
        dt.sql(f"CREATE DYNAMIC TABLE {name} TARGET_LAG = '1 minute' AS {query}")
        shown = dt.sql(f"SHOW DYNAMIC TABLES LIKE '{name}'").collect()[0]
        assert shown.refresh_mode == "INCREMENTAL", (name, shown.refresh_mode_reason)
        dt.sql("UPDATE orders SET amount = amount + 1 WHERE order_id = 1")
        dt.sql(f"INSERT INTO orders VALUES ({len(name) + 10}, 2.00, 'open', NULL)")
        refreshed = dt.sql(f"ALTER DYNAMIC TABLE {name} REFRESH").collect()[0]
        assert refreshed.action == "INCREMENTAL", (name, refreshed.reason)
        assert _rows(dt, f"SELECT * FROM {name}") == _rows(dt, query), name


def test_appends_merge_into_their_groups_without_reading_the_sources(
    dt: DynamicTables, statements: list[str]
) -> None:
    # A new group, a group whose SUM/MIN/MAX were NULL, a group that grows.
    dt.sql(
        "INSERT INTO orders VALUES (4, 1.00, 'new', 'y'), (5, 3.00, 'open', NULL),"
        " (6, 12.50, 'paid', NULL), (7, NULL, 'paid', 'z')"
    )
    refreshed = dt.sql("ALTER DYNAMIC TABLE by_status REFRESH").collect()[0]
    assert refreshed.action == "INCREMENTAL"
    assert _rows(dt, "SELECT * FROM by_status") == _rows(dt, BY_STATUS)
    assert not [text for text in statements if _reads_a_version(text)], statements


def test_a_group_that_lost_rows_is_recomputed_from_the_sources(
    dt: DynamicTables, statements: list[str]
) -> None:
    dt.sql("DELETE FROM orders WHERE order_id = 3")
    dt.sql("INSERT INTO orders VALUES (8, 2.00, 'open', NULL)")
    refreshed = dt.sql("ALTER DYNAMIC TABLE by_status REFRESH").collect()[0]
    assert refreshed.action == "INCREMENTAL"
    assert _rows(dt, "SELECT * FROM by_status") == _rows(dt, BY_STATUS)
    assert [text for text in statements if _reads_a_version(text)], statements


def test_many_touched_keys_refresh_incrementally_without_writing_them_into_sql(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """6,000 touched partitions (more than the 5,000 keys a refresh once wrote into its SQL
    as literals, and then refreshed in full): a relation of keys, semi-joined."""
    dt = DynamicTables(warehouse=tmp_path / "warehouse")
    dt.sql("CREATE TABLE events (id BIGINT, p BIGINT)")
    dt.sql(
        "INSERT INTO events SELECT id, id % 10000 FROM (SELECT explode(sequence(1, 40000)) AS id)"
    )
    query = "SELECT id, p, rank() OVER (PARTITION BY p ORDER BY id DESC) AS r FROM events"
    dt.sql(
        f"CREATE DYNAMIC TABLE ranked TARGET_LAG = '1 minute' REFRESH_MODE = INCREMENTAL AS {query}"
    )
    seen = _recorded(dt, monkeypatch)
    # One new row in each of 6,000 partitions (a NULL one among them), and a deleted row.
    dt.sql(
        "INSERT INTO events SELECT 100000 + id, CASE WHEN id = 1 THEN NULL ELSE id END"
        " FROM (SELECT explode(sequence(1, 6000)) AS id)"
    )
    dt.sql("DELETE FROM events WHERE id = 7")
    refreshed = dt.sql("ALTER DYNAMIC TABLE ranked REFRESH").collect()[0]
    assert refreshed.action == "INCREMENTAL"
    assert _rows(dt, "SELECT * FROM ranked") == _rows(dt, query)
    assert max(len(text) for text in seen) < 5000  # no key written in as a literal


@pytest.mark.parametrize("deletion_vectors", [False, True])
def test_a_change_of_a_large_part_of_the_sources_refreshes_in_full(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, deletion_vectors: bool
) -> None:
    dt = DynamicTables(warehouse=tmp_path / "warehouse")
    vectors = "true" if deletion_vectors else "false"
    dt.sql(
        "CREATE TABLE events (id BIGINT, kind STRING)"
        f" TBLPROPERTIES (delta.enableDeletionVectors = {vectors})"
    )
    dt.sql(
        "INSERT INTO events SELECT id, CASE WHEN id % 2 = 0 THEN 'a' ELSE 'b' END"
        " FROM (SELECT explode(sequence(1, 21000)) AS id)"
    )
    dt.sql("DELETE FROM events WHERE id > 20000")  # marked by a vector, where enabled
    query = "SELECT id, kind FROM events WHERE kind = 'a'"
    dt.sql(f"CREATE DYNAMIC TABLE evens TARGET_LAG = '1 minute' AS {query}")
    dt.sql("INSERT INTO events VALUES (20001, 'a')")
    assert dt.sql("ALTER DYNAMIC TABLE evens REFRESH").collect()[0].action == "INCREMENTAL"
    # 6,000 rows updated: 12,000 change-feed rows (pre- and post-images) of 20,001.
    dt.sql("UPDATE events SET kind = 'c' WHERE id <= 6000")
    seen = _recorded(dt, monkeypatch)
    refreshed = dt.sql("ALTER DYNAMIC TABLE evens REFRESH").collect()[0]
    assert refreshed.action == "FULL"
    assert refreshed.reason == (
        "FULL instead of INCREMENTAL: the sources' change feeds hold 12,000 rows, 60% of"
        " their 20,001 rows: above 20% a full refresh is cheaper"
    )
    # The sources' rows from the Delta log's statistics (less the rows vectors remove).
    assert not [s for s in seen if "count(" in s.lower() and "events" in s.lower()]
    history = dt.sql(
        "SELECT refresh_action, refresh_action_reason FROM"
        " TABLE(information_schema.dynamic_table_refresh_history(name => 'evens'))"
        " ORDER BY refresh_start_time DESC LIMIT 1"
    ).collect()[0]
    assert (history.refresh_action, history.refresh_action_reason) == ("FULL", refreshed.reason)
    assert _rows(dt, "SELECT * FROM evens") == _rows(dt, query)


@pytest.mark.parametrize("deletion_vectors", [False, True])
def test_the_cost_rule_moves_the_count_it_made_by_the_commits_since(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, deletion_vectors: bool
) -> None:
    """The sources' rows, once read, follow the commits' metrics: a later refresh reads
    no metadata for them, unless a commit does not say what it changed (an overwrite)."""
    dt = DynamicTables(warehouse=tmp_path / "warehouse")
    vectors = "true" if deletion_vectors else "false"
    dt.sql(
        "CREATE TABLE events (id BIGINT, kind STRING)"
        f" TBLPROPERTIES (delta.enableDeletionVectors = {vectors})"
    )
    dt.sql("INSERT INTO events SELECT id, 'a' FROM (SELECT explode(sequence(1, 20000)) AS id)")
    query = "SELECT id, kind FROM events WHERE kind <> 'z'"
    dt.sql(f"CREATE DYNAMIC TABLE kept TARGET_LAG = '1 minute' AS {query}")
    fmt = dt.engine.table_format
    counted: list[str] = []
    real_count = fmt.row_count

    def row_count(session: Any, table: Any, version: int | None = None) -> int | None:
        if table.name == "events":
            counted.append(table.name)
        return real_count(session, table, version)

    monkeypatch.setattr(fmt, "row_count", row_count)

    def refreshed_reason() -> str:
        row = dt.sql("ALTER DYNAMIC TABLE kept REFRESH").collect()[0]
        assert _rows(dt, "SELECT * FROM kept") == _rows(dt, query)
        return str(row.reason)

    dt.sql("UPDATE events SET kind = 'b' WHERE id <= 6000")
    assert "12,000 rows, 60% of their 20,000 rows" in refreshed_reason()
    assert counted == ["events"]
    # Appends, deletes, updates and a compaction since: the count moves by their metrics.
    dt.sql("INSERT INTO events SELECT id, 'c' FROM (SELECT explode(sequence(20001, 21000)) AS id)")
    dt.sql("DELETE FROM events WHERE id > 18000")
    dt.sql("OPTIMIZE events")
    dt.sql("UPDATE events SET kind = 'd' WHERE id <= 5000")
    assert "14,000 rows, 78% of their 18,000 rows" in refreshed_reason()
    assert counted == ["events"]
    # An overwrite does not say what it removed: no decision, then the count is read again.
    dt.sql("INSERT OVERWRITE events SELECT id, 'e' FROM (SELECT explode(sequence(1, 25000)) AS id)")
    assert refreshed_reason() == "None"
    dt.sql("DELETE FROM events WHERE id <= 6000")
    assert "6,000 rows, 32% of their 19,000 rows" in refreshed_reason()
    assert counted == ["events", "events"]
    dt.sql("DELETE FROM events WHERE id <= 10000")
    assert "4,000 rows, 27% of their 15,000 rows" in refreshed_reason()
    assert counted == ["events", "events"]


def test_appends_to_the_sources_of_a_join_are_appended_without_netting(
    dt: DynamicTables, statements: list[str]
) -> None:
    dt.sql("CREATE TABLE notes (order_id INT, text STRING)")
    dt.sql("INSERT INTO notes VALUES (1, 'a'), (1, 'a'), (3, NULL)")
    query = (
        "SELECT o.order_id, o.amount, n.text FROM orders o JOIN notes n"
        " ON o.order_id = n.order_id WHERE o.status <> 'void'"
    )
    dt.sql(f"CREATE DYNAMIC TABLE noted TARGET_LAG = '1 minute' AS {query}")
    # New rows on both sides (a duplicate, a NULL, one filtered out), and a second
    # append to one side: every commit since the last refresh only inserted rows.
    dt.sql("INSERT INTO orders VALUES (4, 5.00, 'paid', NULL), (5, 1.00, 'void', NULL)")
    dt.sql("INSERT INTO notes VALUES (4, 'b'), (1, 'a'), (5, 'c')")
    dt.sql("INSERT INTO notes VALUES (4, NULL)")
    statements.clear()
    refreshed = dt.sql("ALTER DYNAMIC TABLE noted REFRESH").collect()[0]
    # Order 1 with its new note, order 4 with its two notes.
    assert (refreshed.action, refreshed.rows_inserted, refreshed.rows_deleted) == (
        "INCREMENTAL",
        3,
        0,
    )
    assert _rows(dt, "SELECT * FROM noted") == _rows(dt, query)
    # One INSERT: no MERGE, no netting GROUP BY over the change, no read of the table.
    writes = [text for text in statements if re.match(r"(INSERT|MERGE)", text)]
    assert len(writes) == 1, writes
    assert writes[0].startswith("INSERT INTO default.noted"), writes
    assert not [text for text in statements if "GROUP BY" in text], statements


@pytest.mark.parametrize("native", [True, False], ids=["counted-write", "merge"])
def test_an_update_in_the_sources_is_netted_and_written(
    dt: DynamicTables, statements: list[str], native: bool
) -> None:
    """The embedded engine writes the netted change itself: the copies removed found
    through the row index, no MERGE, no join of the change with the table, and a change
    feed of exactly the rows that changed; without that writer (as on Spark) one MERGE
    replaces every copy of each touched value."""
    if not native:
        dt.engine.table_format.counted_writer = None  # type: ignore[attr-defined]
    query = "SELECT order_id, amount FROM orders WHERE status = 'paid'"
    dt.sql(f"CREATE DYNAMIC TABLE paid TARGET_LAG = '1 minute' AS {query}")
    dt.sql("INSERT INTO orders VALUES (4, 5.00, 'paid', NULL)")
    dt.sql("UPDATE orders SET amount = 11.00 WHERE order_id = 1")
    statements.clear()
    refreshed = dt.sql("ALTER DYNAMIC TABLE paid REFRESH").collect()[0]
    assert (refreshed.action, refreshed.rows_inserted, refreshed.rows_deleted) == (
        "INCREMENTAL",
        2,
        1,
    )
    assert _rows(dt, "SELECT * FROM paid") == _rows(dt, query)
    merges = [text for text in statements if text.startswith("MERGE INTO default.paid")]
    reads_table = [text for text in statements if re.search(r"default\.paid\b", text)]
    if native:
        assert not merges, statements
        assert not reads_table, statements
        version = dt.sql("DESCRIBE HISTORY paid LIMIT 1").collect()[0].version
        feed = _rows(
            dt,
            f"SELECT order_id, amount, _change_type FROM table_changes('paid', {version})",
        )
        assert feed == Counter(
            [
                (1, Decimal("10.00"), "delete"),
                (1, Decimal("11.00"), "insert"),
                (4, Decimal("5.00"), "insert"),
            ]
        )
    else:
        assert merges, statements


def test_a_counted_write_removes_only_the_copies_the_change_loses(
    dt: DynamicTables, statements: list[str]
) -> None:
    """Equal rows are copies: an update that moves one of three away removes exactly one,
    and a delete of two more leaves none; the table matches the query each time."""
    query = "SELECT status, amount FROM orders"
    dt.sql(
        "INSERT INTO orders VALUES (5, 7.00, 'paid', 'y'), (6, 7.00, 'paid', 'z'),"
        " (7, NULL, 'open', 'w')"
    )
    dt.sql(f"CREATE DYNAMIC TABLE copies TARGET_LAG = '1 minute' AS {query}")
    assert _rows(dt, "SELECT * FROM copies")[("paid", Decimal("7.00"))] == 3
    for change in (
        "UPDATE orders SET amount = 8.00 WHERE order_id = 5",
        "DELETE FROM orders WHERE order_id IN (3, 6, 7)",
    ):
        dt.sql(change)
        statements.clear()
        refreshed = dt.sql("ALTER DYNAMIC TABLE copies REFRESH").collect()[0]
        assert refreshed.action == "INCREMENTAL"
        assert _rows(dt, "SELECT * FROM copies") == _rows(dt, query)
        assert not [text for text in statements if text.startswith("MERGE")], statements
    assert refreshed.rows_deleted == 3  # two 7.00 copies and one of the NULLs


def test_updates_and_deletes_are_merged_by_change_arithmetic_where_it_decides(
    dt: DynamicTables, statements: list[str]
) -> None:
    query = (
        "SELECT status, count(*) AS n, count(note) AS noted, sum(amount) AS total,"
        " max(amount) AS hi FROM orders GROUP BY status"
    )
    dt.sql(f"CREATE DYNAMIC TABLE sizes TARGET_LAG = '1 minute' AS {query}")
    # An amount updated below the maximum, a NULL amount set, a group emptied, a new
    # group: COUNT and an exact SUM follow from the signed change, MAX keeps its value.
    dt.sql("UPDATE orders SET amount = 8.00 WHERE order_id = 3")
    dt.sql("UPDATE orders SET note = 'n', amount = NULL WHERE order_id = 2")
    dt.sql("DELETE FROM orders WHERE order_id = 2")
    dt.sql("INSERT INTO orders VALUES (9, 4.00, 'held', NULL)")
    statements.clear()
    refreshed = dt.sql("ALTER DYNAMIC TABLE sizes REFRESH").collect()[0]
    assert refreshed.action == "INCREMENTAL"
    assert _rows(dt, "SELECT * FROM sizes") == _rows(dt, query)
    assert not [text for text in statements if _reads_a_version(text)], statements
    # The maximum raised: the updated row's new amount is the new maximum.
    dt.sql("UPDATE orders SET amount = 12.00 WHERE order_id = 1")
    statements.clear()
    dt.sql("ALTER DYNAMIC TABLE sizes REFRESH")
    assert _rows(dt, "SELECT * FROM sizes") == _rows(dt, query)
    assert not [text for text in statements if _reads_a_version(text)], statements
    # Raised and lowered again within the range: the added maximum was removed too, so
    # the group is recomputed.
    dt.sql("UPDATE orders SET amount = 50.00 WHERE order_id = 1")
    dt.sql("UPDATE orders SET amount = 6.00 WHERE order_id = 1")
    statements.clear()
    dt.sql("ALTER DYNAMIC TABLE sizes REFRESH")
    assert _rows(dt, "SELECT * FROM sizes") == _rows(dt, query)
    assert [text for text in statements if _reads_a_version(text)], statements


@pytest.mark.parametrize("vectors", [True, False], ids=["counted-write", "merge"])
def test_affected_groups_are_written_as_a_counted_change(
    dt: DynamicTables, statements: list[str], vectors: bool
) -> None:
    """On the embedded engine a GROUP BY's affected groups are written as counted rows (the
    old row loses a copy, the new row gains one): no MERGE; a group whose row is unchanged
    writes nothing, and a recomputed group is written the same way. A table whose removed
    rows are not marked (deletion vectors turned off) gets the same rows by a MERGE on
    the keys of the groups whose row changed."""
    query = "SELECT status, count(*) AS n, sum(amount) AS total, max(amount) AS hi FROM orders"
    query += " GROUP BY status"
    dt.sql(f"CREATE DYNAMIC TABLE totals TARGET_LAG = '1 minute' AS {query}")
    if not vectors:  # (dyntables refuses ALTER TABLE on its tables: the engine's own)
        dt.session.sql(
            "ALTER TABLE totals SET TBLPROPERTIES ('delta.enableDeletionVectors' = 'false')"
        )
    recomputed = []
    for change, inserted, deleted in (
        # 'paid' changes; 'open' (a column the query does not read updated) keeps its row.
        (
            "UPDATE orders SET amount = IF(order_id = 3, 8.00, amount), note = 'n'"
            " WHERE order_id IN (2, 3)",
            1,
            1,
        ),
        ("INSERT INTO orders VALUES (9, 4.00, 'held', NULL)", 1, 0),
        ("DELETE FROM orders WHERE status = 'held'", 0, 1),
        ("UPDATE orders SET amount = 1.00 WHERE order_id = 1", 1, 1),  # its max recomputed
        # Every affected group unchanged: nothing written, the watermark moves on.
        ("UPDATE orders SET note = 'm' WHERE order_id = 1", 0, 0),
        ("UPDATE orders SET amount = 2.00 WHERE order_id = 1", 1, 1),
    ):
        dt.sql(change)
        statements.clear()
        refreshed = dt.sql("ALTER DYNAMIC TABLE totals REFRESH").collect()[0]
        assert refreshed.action == "INCREMENTAL"
        assert (refreshed.rows_inserted, refreshed.rows_deleted) == (inserted, deleted), change
        assert _rows(dt, "SELECT * FROM totals") == _rows(dt, query)
        merged = [text for text in statements if text.startswith("MERGE")]
        assert bool(merged) == (not vectors and inserted + deleted > 0), statements
        if any(_reads_a_version(text) for text in statements):
            recomputed.append(change)
    # The maximum lowered, and a SUM that may have lost its last value: recomputed.
    assert recomputed == [
        "DELETE FROM orders WHERE status = 'held'",
        "UPDATE orders SET amount = 1.00 WHERE order_id = 1",
    ]


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ("UPDATE orders SET amount = 9.00 WHERE order_id = 1", "the maximum was removed"),
        ("UPDATE orders SET amount = 8.00 WHERE order_id = 3", "a DOUBLE was subtracted"),
        ("DELETE FROM orders WHERE order_id = 3", "a SUM may have lost its last value"),
    ],
)
def test_groups_the_arithmetic_cannot_decide_are_recomputed(
    dt: DynamicTables, statements: list[str], change: str, why: str
) -> None:
    query = (
        "SELECT status, sum(amount) AS total, max(amount) AS hi,"
        " sum(CAST(amount AS DOUBLE)) AS approximate FROM orders GROUP BY status"
    )
    dt.sql(f"CREATE DYNAMIC TABLE sums TARGET_LAG = '1 minute' AS {query}")
    dt.sql(change)
    statements.clear()
    refreshed = dt.sql("ALTER DYNAMIC TABLE sums REFRESH").collect()[0]
    assert refreshed.action == "INCREMENTAL"
    assert _rows(dt, "SELECT * FROM sums") == _rows(dt, query)
    assert [text for text in statements if _reads_a_version(text)], why


@pytest.mark.parametrize("vectors", [True, False], ids=["counted-write", "merge"])
@pytest.mark.parametrize(
    "change",
    [
        "DELETE FROM orders WHERE order_id = 1",  # the paid group's maximum
        "DELETE FROM orders WHERE order_id = 3",  # its minimum
        "DELETE FROM orders WHERE order_id IN (1, 3)",  # the whole group
        "UPDATE orders SET status = 'open' WHERE order_id = 3",  # moved to another group
    ],
)
def test_a_group_that_lost_its_extreme_and_gained_nothing_keeps_its_other_rows(
    dt: DynamicTables, change: str, vectors: bool
) -> None:
    """With COUNT(*) the group's survival is known; its MIN or MAX lost its value and no
    value was added (a comparison with the NULL added extreme): the group is recomputed,
    not dropped."""
    query = (
        "SELECT status, count(*) AS n, min(amount) AS lo, max(amount) AS hi FROM orders"
        " GROUP BY status"
    )
    dt.sql(f"CREATE DYNAMIC TABLE extremes TARGET_LAG = '1 minute' AS {query}")
    if not vectors:
        dt.session.sql(
            "ALTER TABLE extremes SET TBLPROPERTIES ('delta.enableDeletionVectors' = 'false')"
        )
    dt.sql(change)
    refreshed = dt.sql("ALTER DYNAMIC TABLE extremes REFRESH").collect()[0]
    assert refreshed.action == "INCREMENTAL"
    assert _rows(dt, "SELECT * FROM extremes") == _rows(dt, query)


@pytest.mark.parametrize(
    "query",
    [
        # Keys that are predicates: the recompute's filter compares the key with them.
        "SELECT amount IS NULL AS k, avg(order_id) AS a FROM orders GROUP BY amount IS NULL",
        "SELECT status = 'paid' AND amount > 8 AS k, avg(order_id) AS a FROM orders"
        " GROUP BY status = 'paid' AND amount > 8",
        "SELECT note <=> 'x' AS k, avg(order_id) AS a FROM orders GROUP BY note <=> 'x'",
        "SELECT order_id, sum(order_id) OVER (PARTITION BY amount IS NULL) AS s FROM orders",
        # A key read from a column whose name the refresh's own queries could use as an
        # alias (an engine may take a relation of that name for the column).
        "SELECT CAST(w AS INT) + 1 AS k, avg(order_id) AS a FROM"
        " (SELECT order_id, amount AS w FROM orders) GROUP BY CAST(w AS INT) + 1",
    ],
)
def test_groups_and_partitions_keyed_by_expressions_are_recomputed_by_them(
    dt: DynamicTables, query: str
) -> None:
    changes = [
        "UPDATE orders SET order_id = order_id + 10",
        "UPDATE orders SET amount = NULL WHERE order_id = 11",
        "DELETE FROM orders WHERE order_id = 13",
    ]
    _refreshes_incrementally(dt, query, changes)


@pytest.mark.parametrize(
    "query",
    [
        "SELECT k FROM (SELECT order_id % 2 AS k FROM orders) WHERE k > 0",
        "SELECT k, count(*) AS n FROM (SELECT order_id % 2 AS k FROM orders) GROUP BY k",
        "SELECT DISTINCT status FROM (SELECT * FROM orders WHERE amount > 5)",
        "SELECT a.order_id, s FROM (SELECT * FROM orders) a JOIN"
        " (SELECT order_id AS id, status AS s FROM orders WHERE note IS NULL) ON a.order_id = id",
    ],
)
def test_derived_tables_without_a_name_refresh_incrementally(dt: DynamicTables, query: str) -> None:
    """Spark reads ``FROM (SELECT …)`` without a name (its columns unqualified)."""
    changes = [
        "UPDATE orders SET order_id = order_id + 10",
        "DELETE FROM orders WHERE order_id = 13",
    ]
    _refreshes_incrementally(dt, query, changes)


def _refreshes_incrementally(dt: DynamicTables, query: str, changes: list[str]) -> None:
    """A dynamic table of ``query`` refreshes incrementally after each of ``changes``, and
    then equals the query."""
    dt.sql(f"CREATE DYNAMIC TABLE checked TARGET_LAG = '1 minute' AS {query}")
    for change in changes:
        dt.sql(change)
        refreshed = dt.sql("ALTER DYNAMIC TABLE checked REFRESH").collect()[0]
        assert refreshed.action == "INCREMENTAL", change
        assert _rows(dt, "SELECT * FROM checked") == _rows(dt, query), change


@pytest.mark.parametrize(
    "query",
    [
        "SELECT u.status, u.total FROM (SELECT status, amount AS total FROM orders"
        " UNION ALL SELECT status, amount FROM refunds) u WHERE u.total > 1",
        "WITH u AS (SELECT status, amount AS total FROM orders"
        " UNION ALL SELECT status, amount FROM refunds)"
        " SELECT status, count(*) AS n, sum(total) AS total FROM u GROUP BY status",
    ],
)
def test_a_union_inside_the_query_names_its_columns_by_its_first_branch(
    dt: DynamicTables, query: str
) -> None:
    """A change of the second branch alone is named as the union is (Spark names a union's
    columns by its first branch)."""
    dt.sql("CREATE TABLE refunds (status STRING, amount DECIMAL(8, 2))")
    dt.sql("INSERT INTO refunds VALUES ('paid', 3.00)")
    _refreshes_incrementally(dt, query, ["UPDATE refunds SET amount = 40.00"])


@pytest.mark.parametrize(
    ("query", "maintenance"),
    [
        # The change feed of the update is gone.
        ("SELECT order_id, amount FROM orders WHERE amount > 1", ["VACUUM orders RETAIN 0 HOURS"]),
        # The version the last refresh read is gone (a ranking window reads it).
        (
            "SELECT order_id, status, rank() OVER (PARTITION BY status ORDER BY order_id) AS r"
            " FROM orders",
            ["OPTIMIZE orders", "VACUUM orders RETAIN 0 HOURS"],
        ),
    ],
)
def test_a_refresh_whose_changes_were_vacuumed_recomputes_in_full(
    dt: DynamicTables, query: str, maintenance: list[str]
) -> None:
    """VACUUM may remove the files of the versions and changes the last refresh read: the
    next refresh recomputes from the current version and says why, instead of failing
    (and the one after it is incremental again)."""
    dt.sql(f"CREATE DYNAMIC TABLE kept TARGET_LAG = '1 minute' AS {query}")
    session = dt.engine.session
    session.conf.set("spark.databricks.delta.retentionDurationCheck.enabled", "false")
    if maintenance[0].startswith("OPTIMIZE"):  # compacted after the refresh read them
        dt.sql("UPDATE orders SET order_id = 4 WHERE order_id = 1")
    else:  # an inserted row's file rewritten by an update: the insert's rows are gone
        dt.sql("INSERT INTO orders VALUES (5, 50.00, 'open', NULL)")
        dt.sql("UPDATE orders SET amount = 51.00 WHERE order_id = 5")
    for statement in maintenance:
        session.sql(statement)
    refreshed = dt.sql("ALTER DYNAMIC TABLE kept REFRESH").collect()[0]
    assert refreshed.action == "FULL"
    assert "can no longer be read" in refreshed.reason
    assert _rows(dt, "SELECT * FROM kept") == _rows(dt, query)
    dt.sql("UPDATE orders SET amount = 31.00 WHERE order_id = 3")
    refreshed = dt.sql("ALTER DYNAMIC TABLE kept REFRESH").collect()[0]
    assert refreshed.action == "INCREMENTAL"
    assert _rows(dt, "SELECT * FROM kept") == _rows(dt, query)


def test_a_decimal_sum_of_products_is_merged_exactly(
    dt: DynamicTables, statements: list[str]
) -> None:
    # A DECIMAL(38, 4) sum: the old sum plus the change's, to the last digit, without a
    # rescan.
    query = "SELECT status, sum(amount * amount) AS squares FROM orders GROUP BY status"
    dt.sql(f"CREATE DYNAMIC TABLE squares TARGET_LAG = '1 minute' AS {query}")
    dt.sql("UPDATE orders SET amount = 10.01 WHERE order_id = 1")
    statements.clear()
    refreshed = dt.sql("ALTER DYNAMIC TABLE squares REFRESH").collect()[0]
    assert refreshed.action == "INCREMENTAL"
    assert _rows(dt, "SELECT * FROM squares") == _rows(dt, query)
    assert not [text for text in statements if _reads_a_version(text)], statements


def test_a_decimal_sum_spark_cannot_add_exactly_is_recomputed(
    dt: DynamicTables, statements: list[str]
) -> None:
    # A sum of DECIMAL(35, 8) values is a DECIMAL(38, 8); Spark adds two of them at scale
    # 7, so the old sum plus the change's would lose the last digit: such a table
    # recomputes its touched groups.
    query = (
        "SELECT status, sum(amount * amount * amount * amount) AS fourth FROM orders"
        " GROUP BY status"
    )
    dt.sql(f"CREATE DYNAMIC TABLE fourths TARGET_LAG = '1 minute' AS {query}")
    assert dict(dt.sql("SELECT * FROM fourths").dtypes)["fourth"] == "decimal(38,8)"
    shown = dt.sql("SHOW DYNAMIC TABLES LIKE 'fourths'").collect()[0]
    assert shown.refresh_mode == "INCREMENTAL"
    dt.sql(
        "CREATE DYNAMIC TABLE fourths_kept TARGET_LAG = '1 minute' REFRESH_MODE = INCREMENTAL"
        f" AS {query}"
    )
    dt.sql("UPDATE orders SET amount = 10.01 WHERE order_id = 1")
    statements.clear()
    refreshed = dt.sql("ALTER DYNAMIC TABLE fourths_kept REFRESH").collect()[0]
    assert refreshed.action == "INCREMENTAL"
    assert _rows(dt, "SELECT * FROM fourths_kept") == _rows(dt, query)
    assert [text for text in statements if _reads_a_version(text)], statements


def test_unaliased_outputs_refresh_incrementally_by_the_names_the_engine_gave_them(
    dt: DynamicTables,
) -> None:
    # Spark names `count(*)` as `count(1)` and `sum(amount)` as is; the change rules refer
    # to outputs by those names (they failed with UNRESOLVED_COLUMN `count(1)` before).
    grouped = "SELECT status, count(*), sum(amount) FROM orders GROUP BY status"
    linear = "SELECT order_id + 1, upper(status) FROM orders WHERE amount > 0"
    dt.sql(f"CREATE DYNAMIC TABLE grouped TARGET_LAG = '1 minute' AS {grouped}")
    dt.sql(f"CREATE DYNAMIC TABLE linear TARGET_LAG = '1 minute' AS {linear}")
    dt.sql("INSERT INTO orders VALUES (4, 5.00, 'paid', NULL)")
    dt.sql("DELETE FROM orders WHERE order_id = 1")
    for table, query in (("grouped", grouped), ("linear", linear)):
        (result,) = dt.sql(f"ALTER DYNAMIC TABLE {table} REFRESH").collect()
        assert result.action == "INCREMENTAL", result
        assert dt.sql(f"SELECT * FROM {table}").columns == dt.sql(query).columns
        assert _rows(dt, f"SELECT * FROM {table}") == _rows(dt, query)


@pytest.mark.parametrize(("inserted", "passing"), [(0, 0), (3, 2)])
def test_appended_rows_are_counted_where_the_commit_does_not_say(
    dt: DynamicTables, monkeypatch: pytest.MonkeyPatch, inserted: int, passing: int
) -> None:
    # Iceberg's snapshot summaries do not give a MERGE's or an append's logical row counts,
    # so the refresh counts what it appends; here the Delta commit's are hidden likewise.
    dt.sql(
        "CREATE DYNAMIC TABLE big TARGET_LAG = '1 minute' REFRESH_MODE = INCREMENTAL"
        " AS SELECT order_id, amount FROM orders WHERE amount > 8"
    )
    monkeypatch.setattr(dt.engine.table_format, "reports_row_counts", False)
    dt.sql(
        "INSERT INTO orders SELECT id + 10, CAST(id * 5 AS DECIMAL(8, 2)), 'open', NULL"
        f" FROM (SELECT explode(sequence(1, {inserted})) AS id) WHERE {inserted} > 0"
    )
    refreshed = dt.sql("ALTER DYNAMIC TABLE big REFRESH").collect()[0]
    assert (refreshed.action, refreshed.rows_inserted) == ("INCREMENTAL", passing)
    assert _rows(dt, "SELECT * FROM big") == _rows(
        dt, "SELECT order_id, amount FROM orders WHERE amount > 8"
    )


# An outer join is linear in each input it never pads: a change of only such inputs is
# netted (or appended) as for a filter, without recomputing the keys it touches.
OUTER_JOINS = {
    "LEFT": "SELECT o.order_id, o.status, n.text FROM orders o LEFT JOIN notes n"
    " ON o.order_id = n.order_id",
    "RIGHT": "SELECT n.order_id AS noted, n.text, o.status FROM orders o RIGHT JOIN notes n"
    " ON o.order_id = n.order_id",
    "FULL": "SELECT o.order_id, n.order_id AS noted, n.text FROM orders o FULL JOIN notes n"
    " ON o.order_id = n.order_id",
}


@pytest.fixture
def noted(dt: DynamicTables) -> DynamicTables:
    dt.sql("CREATE TABLE notes (order_id INT, text STRING)")
    dt.sql("INSERT INTO notes VALUES (1, 'a'), (1, 'a'), (3, NULL), (NULL, 'lost'), (9, 'z')")
    dt.sql("INSERT INTO orders VALUES (NULL, 2.00, 'open', NULL), (1, 10.00, 'paid', NULL)")
    for join, query in OUTER_JOINS.items():
        dt.sql(f"CREATE DYNAMIC TABLE {join.lower()}_joined TARGET_LAG = '1 minute' AS {query}")
    return dt


def _refresh_each(
    dt: DynamicTables, queries: dict[str, str], statements: list[str]
) -> dict[str, list[str]]:
    """Each table's refresh (``queries``: its query by its name), incremental and checked
    against its query, with the statements it ran."""
    ran: dict[str, list[str]] = {}
    for name, query in queries.items():
        statements.clear()
        refreshed = dt.sql(f"ALTER DYNAMIC TABLE {name} REFRESH").collect()[0]
        assert refreshed.action == "INCREMENTAL", (name, refreshed)
        assert _rows(dt, f"SELECT * FROM {name}") == _rows(dt, query), name
        ran[name] = list(statements)
    return ran


def _refresh_all(dt: DynamicTables, statements: list[str]) -> dict[str, list[str]]:
    """Each outer join's refresh (checked against its query), with its statements."""
    tables = {f"{join.lower()}_joined": query for join, query in OUTER_JOINS.items()}
    ran = _refresh_each(dt, tables, statements)
    return {join: ran[f"{join.lower()}_joined"] for join in OUTER_JOINS}


def _recomputing_keys(ran: dict[str, list[str]]) -> set[str]:
    """The joins whose refresh recomputed the keys a change touched."""
    return {join for join, texts in ran.items() if any("__dt_key0" in t for t in texts)}


def test_a_full_join_after_other_joins_on_expressions_says_how_to_make_it_incremental(
    dt: DynamicTables,
) -> None:
    """A row of one side alone pads the other's columns with NULLs; coalesce(c.n, 0) on
    the padded side is not NULL, so the row's key cannot be told from it: such a join is
    FULL under AUTO, and the reason says to join on a derived table's column, which is
    incremental."""
    dt.sql("CREATE TABLE tiers (order_id INT, tier INT)")
    dt.sql("INSERT INTO tiers VALUES (1, 2), (3, NULL)")
    on_expressions = (
        "SELECT o.order_id, t.tier, n.order_id AS other FROM orders o"
        " JOIN tiers t ON t.order_id = o.order_id"
        " FULL JOIN orders n ON coalesce(t.tier, 0) = coalesce(n.order_id, 0)"
    )
    dt.sql(f"CREATE DYNAMIC TABLE on_expressions TARGET_LAG = '1 minute' AS {on_expressions}")
    shown = dt.sql("SHOW DYNAMIC TABLES LIKE 'on_expressions'").collect()[0]
    assert shown.refresh_mode == "FULL"
    assert "compute it as a column of a derived table" in shown.refresh_mode_reason
    on_columns = (
        "SELECT o.order_id, t.tier, n.order_id AS other FROM orders o"
        " JOIN (SELECT order_id, coalesce(tier, 0) AS tier FROM tiers) t"
        " ON t.order_id = o.order_id"
        " FULL JOIN (SELECT order_id, coalesce(order_id, 0) AS k FROM orders) n ON t.tier = n.k"
    )
    dt.sql(f"CREATE DYNAMIC TABLE on_columns TARGET_LAG = '1 minute' AS {on_columns}")
    for change in (
        "INSERT INTO orders VALUES (2, 1.00, 'open', NULL), (7, 1.00, 'open', NULL)",
        "UPDATE tiers SET tier = 7 WHERE order_id = 1",
    ):
        dt.sql(change)
        refreshed = dt.sql("ALTER DYNAMIC TABLE on_columns REFRESH").collect()[0]
        assert refreshed.action == "INCREMENTAL", change
        assert _rows(dt, "SELECT * FROM on_columns") == _rows(dt, on_columns), change


def test_an_outer_join_whose_preserved_side_changed_nets_that_change(
    noted: DynamicTables, statements: list[str]
) -> None:
    # Orders: an update (its key too), a delete, a duplicate and a NULL key: the preserved
    # side of the LEFT join, a padded side of the RIGHT and the FULL joins.
    noted.sql("UPDATE orders SET status = 'void', order_id = 3 WHERE order_id = 2")
    noted.sql("DELETE FROM orders WHERE order_id IS NULL")
    noted.sql("INSERT INTO orders VALUES (1, 10.00, 'paid', NULL), (NULL, 1.00, 'x', NULL)")
    assert _recomputing_keys(_refresh_all(noted, statements)) == {"RIGHT", "FULL"}
    # Notes: the preserved side of the RIGHT join.
    noted.sql("UPDATE notes SET text = 'b' WHERE order_id = 1")
    noted.sql("DELETE FROM notes WHERE order_id = 9")
    assert _recomputing_keys(_refresh_all(noted, statements)) == {"LEFT", "FULL"}
    # Both sides changed: each join recomputes the keys its padded side's change and its
    # preserved side's change touch.
    noted.sql("UPDATE notes SET text = 'c' WHERE order_id = 3")
    noted.sql("INSERT INTO orders VALUES (9, 1.00, 'paid', NULL)")
    assert _recomputing_keys(_refresh_all(noted, statements)) == {"LEFT", "RIGHT", "FULL"}


@pytest.mark.parametrize("native", [True, False], ids=["counted-write", "merge"])
def test_recomputed_keys_replace_only_the_rows_that_changed(
    noted: DynamicTables, statements: list[str], native: bool
) -> None:
    """A LEFT JOIN whose padded side changed recomputes the keys the change touches. The
    embedded engine writes the difference between the table's rows of those keys (found
    by the keys) and the recomputed rows as counted rows: no MERGE, and a key recomputed
    to the rows it had writes nothing. Without that writer (as on Spark) a MERGE on the
    keys replaces every row of each touched key."""
    if not native:
        noted.engine.table_format.counted_writer = None  # type: ignore[attr-defined]
    # Key 1 touched but recomputed to the same four rows; key 3's one row changes.
    noted.sql("DELETE FROM notes WHERE order_id = 1")
    noted.sql("INSERT INTO notes VALUES (1, 'a'), (1, 'a')")
    noted.sql("UPDATE notes SET text = 'q' WHERE order_id = 3")
    statements.clear()
    refreshed = noted.sql("ALTER DYNAMIC TABLE left_joined REFRESH").collect()[0]
    assert refreshed.action == "INCREMENTAL"
    assert _rows(noted, "SELECT * FROM left_joined") == _rows(noted, OUTER_JOINS["LEFT"])
    assert any("__dt_key0" in text for text in statements), "the touched keys recomputed"
    merges = [text for text in statements if text.startswith("MERGE")]
    if not native:
        assert merges, statements
        return
    assert not merges, statements
    assert (refreshed.rows_inserted, refreshed.rows_deleted) == (1, 1)
    version = noted.sql("DESCRIBE HISTORY left_joined LIMIT 1").collect()[0].version
    feed = _rows(
        noted,
        f"SELECT order_id, status, text, _change_type FROM table_changes('left_joined', {version})",
    )
    assert feed == Counter([(3, "paid", None, "delete"), (3, "paid", "q", "insert")])


def test_inserts_into_an_outer_joins_preserved_side_are_appended(
    noted: DynamicTables, statements: list[str]
) -> None:
    noted.sql(
        "INSERT INTO orders VALUES (3, 1.00, 'paid', NULL), (3, 1.00, 'paid', NULL),"
        " (NULL, 4.00, 'open', NULL), (9, 5.00, 'open', NULL), (7, 5.00, 'open', NULL)"
    )
    ran = _refresh_all(noted, statements)
    writes = [text for text in ran["LEFT"] if re.match(r"(INSERT|MERGE)", text)]
    assert len(writes) == 1, writes
    assert writes[0].startswith("INSERT INTO default.left_joined"), writes
    assert not [text for text in ran["LEFT"] if "GROUP BY" in text], ran["LEFT"]
    # Order 9 takes the place of a padded row of the others (note 9 had no order): that
    # row is removed (its key's rows replaced by a MERGE, or the change netted and written
    # by the embedded engine's counted write), not appended to.
    for join in ("RIGHT", "FULL"):
        removes = [t for t in ran[join] if t.startswith("MERGE") or "GROUP BY" in t]
        assert removes, ran[join]
        assert not [t for t in ran[join] if t.startswith("INSERT INTO default.")], ran[join]


RANKED = {
    # Every output a plain column or a ranking window; the positions (customer, order)
    # among the outputs.
    "numbered": "SELECT order_id, customer, amount, row_number() OVER (PARTITION BY customer"
    " ORDER BY order_id) AS rn, percent_rank() OVER (PARTITION BY customer ORDER BY order_id)"
    " AS pr, ntile(2) OVER (PARTITION BY customer, status ORDER BY order_id) AS half FROM orders",
    # The positions are not outputs: an updated row's old version is found by the others.
    "amounts": "SELECT amount, dense_rank() OVER (PARTITION BY customer ORDER BY order_id DESC)"
    " AS dr FROM orders",
    "starred": "SELECT *, rank() OVER (PARTITION BY customer ORDER BY order_id) AS r FROM orders",
}


@pytest.fixture
def ranked(tmp_path: Path) -> DynamicTables:
    tables = DynamicTables(warehouse=tmp_path / "warehouse")
    tables.sql("CREATE TABLE orders (order_id INT, customer INT, amount INT, status STRING)")
    tables.sql(
        "INSERT INTO orders VALUES (1, 1, 10, 'paid'), (2, 1, 20, 'open'), (3, 2, 30, 'paid'),"
        " (4, 2, 30, 'paid'), (5, NULL, 5, 'open'), (6, 3, 7, 'paid')"
    )
    for name, query in RANKED.items():
        tables.sql(f"CREATE DYNAMIC TABLE {name} TARGET_LAG = '1 minute' AS {query}")
    return tables


def _partition_readers(ran: dict[str, list[str]]) -> set[str]:
    """The tables whose refresh read the sources of its touched partitions at a version."""
    return {name for name, texts in ran.items() if any(_reads_a_version(t) for t in texts)}


def test_updates_that_keep_rows_where_they_rank_change_only_those_rows(
    ranked: DynamicTables, monkeypatch: pytest.MonkeyPatch
) -> None:
    statements = _recorded(ranked, monkeypatch)
    # Amounts (not a position): each row keeps its window values; no partition is read.
    ranked.sql("UPDATE orders SET amount = amount + 1 WHERE order_id IN (1, 5, 6)")
    assert _partition_readers(_refresh_each(ranked, RANKED, statements)) == set()
    # A status (a partition of one of numbered's windows) moves its row there: its
    # partitions are recomputed; the other update stays in place.
    ranked.sql("UPDATE orders SET status = 'open' WHERE order_id = 6")
    ranked.sql("UPDATE orders SET amount = 99 WHERE order_id = 2")
    assert _partition_readers(_refresh_each(ranked, RANKED, statements)) == {"numbered"}
    # An insert and a delete move rows within their partitions.
    ranked.sql("INSERT INTO orders VALUES (7, 1, 1, 'paid')")
    ranked.sql("DELETE FROM orders WHERE order_id = 3")
    assert _partition_readers(_refresh_each(ranked, RANKED, statements)) == set(RANKED)


def test_an_update_whose_old_row_is_ambiguous_recomputes_its_partition(
    ranked: DynamicTables, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Orders 3 and 4 hold the same amount in one partition: "amounts" cannot tell which
    # of its two rows with amount 30 was updated, so it recomputes the partition.
    statements = _recorded(ranked, monkeypatch)
    ranked.sql("UPDATE orders SET amount = 31 WHERE order_id = 4")
    assert _partition_readers(_refresh_each(ranked, RANKED, statements)) == {"amounts"}


def test_a_change_query_the_engine_refuses_falls_back_to_a_full_refresh(
    tmp_path: Path,
) -> None:
    """A deleted row's value is subtracted from its group's sum by negating it, which
    overflows for BIGINT's minimum; the embedded engine refuses that (Spark would wrap
    it), where the query itself, over the rows left, is answered. The refresh recomputes
    in full and says why, instead of failing every time."""
    tables = DynamicTables(warehouse=tmp_path / "warehouse")
    tables.sql("CREATE TABLE s (id INT, k STRING, l BIGINT)")
    tables.sql("INSERT INTO s VALUES (1, 'a', -9223372036854775808), (2, 'a', 5), (3, 'b', 1)")
    query = "SELECT k, sum(l) AS total, count(*) AS n FROM s GROUP BY k"
    tables.sql(f"CREATE DYNAMIC TABLE g TARGET_LAG = '1 minute' REFRESH_MODE = AUTO AS {query}")
    tables.sql("DELETE FROM s WHERE id = 1")
    refreshed = tables.sql("ALTER DYNAMIC TABLE g REFRESH").collect()[0]
    assert refreshed.action == "FULL"
    assert "the engine cannot run this refresh's change queries" in refreshed.reason
    assert sorted(tables.sql("SELECT * FROM g").collect()) == [("a", 5, 1), ("b", 1, 1)]
