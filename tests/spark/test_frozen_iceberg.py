"""Frozen regions and BACKFILL FROM (seed 001) on real Spark with Apache Iceberg: the
refresh of the active region is a MERGE there (no row-level REPLACE WHERE), ALTER grows,
reshapes or removes the region, RELY keys and Iceberg identifier fields bound the
predicate's columns, and a backfill reads a snapshot of the source chosen by snapshot id,
commit time or statement."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from lifecycle_scenario import Env, spark_env
from pyspark.sql import SparkSession
from sqlglot import exp

from dyntables import DynamicTableError

pytestmark = pytest.mark.spark

QUERY = "SELECT order_id, order_day, total FROM orders WHERE status <> 'returned'"
# Order 7 has no day: its rows are where the frozen predicates are NULL.
ROWS = (
    "(1, 1, 10, 'paid'), (2, 1, 20, 'paid'), (3, 2, 30, 'paid'), (4, 3, 40, 'returned'),"
    " (7, NULL, 70, 'paid')"
)


@pytest.fixture
def env(iceberg_spark: SparkSession) -> Env:
    env = spark_env(iceberg_spark, "iceberg")
    env.source("orders", "order_id BIGINT, order_day INT, total INT, status STRING", ROWS)
    return env


def _create(env: Env, clauses: str, mode: str = "INCREMENTAL", replace: bool = False) -> None:
    env.sql(
        f"CREATE {'OR REPLACE ' if replace else ''}DYNAMIC TABLE days TARGET_LAG = '1 minute'"
        f" REFRESH_MODE = {mode} {clauses} AS {QUERY}"
    )


def _active(env: Env, predicate: str) -> Counter[tuple[Any, ...]]:
    """The oracle of the active region: the query's rows where ``predicate`` is not TRUE."""
    return env.rows(f"SELECT * FROM ({QUERY}) WHERE NOT coalesce({predicate}, false)")


def _refreshes(env: Env) -> list[tuple[str, str | None]]:
    """(action, reason) of each refresh of ``days`` in this test's database, oldest first."""
    rows = env.sql(
        "SELECT refresh_action, refresh_action_reason, refresh_start_time FROM"
        f" information_schema.dynamic_table_refresh_history(NAME => '{env.database}.days')"
    ).collect()
    return [(row[0], row[1]) for row in sorted(rows, key=lambda row: row[2])]


def _table(env: Env, name: str) -> exp.Table:
    return env.dt.engine.qualify(exp.to_table(name))


@pytest.mark.parametrize("mode", ["INCREMENTAL", "FULL"])
def test_refreshes_touch_only_the_active_region(env: Env, mode: str) -> None:
    _create(env, "FROZEN WHERE (order_day <= 1)", mode)
    frozen = env.rows("SELECT * FROM days WHERE order_day <= 1")
    assert frozen == env.rows(f"SELECT * FROM ({QUERY}) WHERE order_day <= 1")  # computed once
    # Updates, inserts and deletes on both sides of the boundary and where it is NULL.
    env.sql("UPDATE orders SET total = total + 1")
    env.sql("INSERT INTO orders VALUES (5, 1, 50, 'paid'), (6, 4, 60, 'paid'), (8, NULL, 80, 'x')")
    env.sql("DELETE FROM orders WHERE order_id IN (1, 3)")
    refreshed = env.sql("ALTER DYNAMIC TABLE days REFRESH").collect()[0]
    assert refreshed.action == mode
    # Untouched: 1 kept though deleted, 2 not updated, 5 not added.
    assert env.rows("SELECT * FROM days WHERE METADATA$IS_FROZEN") == frozen
    assert env.rows("SELECT * FROM days WHERE NOT METADATA$IS_FROZEN") == _active(
        env, "order_day <= 1"
    )
    # Rows whose predicate is NULL are active: refreshed, and not flagged frozen.
    assert env.rows(
        "SELECT order_id, total, METADATA$IS_FROZEN FROM days WHERE order_day IS NULL"
    ) == Counter({(7, 71, False): 1, (8, 80, False): 1})
    counts = env.sql(
        "SELECT COUNT_IF(METADATA$IS_FROZEN) AS frozen_rows,"
        " COUNT_IF(NOT METADATA$IS_FROZEN) AS active_rows FROM days"
    ).collect()[0]
    assert (counts.frozen_rows, counts.active_rows) == (2, 3)  # (1, 2) and (6, 7, 8)


def test_alter_grows_shrinks_and_removes_the_region(env: Env) -> None:
    _create(env, "FROZEN WHERE (order_day <= 1)")
    created = env.rows("SELECT * FROM days")
    # Growing the region costs nothing: the rows that become frozen keep their values.
    env.sql("UPDATE orders SET total = total + 1")
    env.sql("ALTER DYNAMIC TABLE days SET FROZEN WHERE (order_day <= 2)")
    assert env.sql("ALTER DYNAMIC TABLE days REFRESH").collect()[0].action == "INCREMENTAL"
    kept = Counter({row: n for row, n in created.items() if row[1] is not None and row[1] <= 2})
    assert env.rows("SELECT * FROM days") == kept + _active(env, "order_day <= 2")
    # Shrinking it recomputes the active region; rows that stay frozen keep their values.
    env.sql("UPDATE orders SET total = total + 1")
    env.sql("ALTER DYNAMIC TABLE days SET IMMUTABLE WHERE (order_day <= 1)")
    env.sql("ALTER DYNAMIC TABLE days REFRESH")
    kept = Counter({row: n for row, n in created.items() if row[1] == 1})
    assert env.rows("SELECT * FROM days") == kept + _active(env, "order_day <= 1")
    # Removing it recomputes everything, the old frozen rows included.
    env.sql("ALTER DYNAMIC TABLE days UNSET FROZEN WHERE")
    env.sql("ALTER DYNAMIC TABLE days REFRESH")
    assert env.rows("SELECT * FROM days") == env.rows(QUERY)
    assert env.rows("SELECT DISTINCT METADATA$IS_FROZEN FROM days") == Counter({(False,): 1})
    assert env.show("days")["immutable_where"] is None
    assert [action for action, _ in _refreshes(env)][1:] == [
        "INCREMENTAL",
        "REINITIALIZE",
        "REINITIALIZE",
    ]
    assert [reason for _, reason in _refreshes(env)][2:] == [
        "FROZEN_REGION_CHANGED",
        "FROZEN_REGION_REMOVED",
    ]


BAD_PREDICATES = [
    ("order_id IN (SELECT 1)", "subquer"),
    ("rand() < 0.5", "nondeterministic"),
    ("status = 'paid'", "status"),  # a source column, not one of the table's
]


def test_bad_predicates_are_refused_and_change_nothing(env: Env) -> None:
    for predicate, message in BAD_PREDICATES:
        with pytest.raises(DynamicTableError, match=message):
            _create(env, f"FROZEN WHERE ({predicate})")
    assert not env.dt.session.catalog.tableExists("days")
    _create(env, "FROZEN WHERE (order_day <= 1)")
    fmt, table = env.dt.engine.table_format, _table(env, "days")
    before = (env.rows("SELECT * FROM days"), fmt.properties(env.dt.session, table))
    for predicate, message in BAD_PREDICATES:
        with pytest.raises(DynamicTableError, match=message):
            env.sql(f"ALTER DYNAMIC TABLE days SET FROZEN WHERE ({predicate})")
        with pytest.raises(DynamicTableError, match=message):
            _create(env, f"FROZEN WHERE ({predicate})", replace=True)
    # Same rows, same snapshot (the current-snapshot-id property), same definition.
    assert (env.rows("SELECT * FROM days"), fmt.properties(env.dt.session, table)) == before


def _set_identifier_field(session: SparkSession, table: str, column: str) -> None:
    """Make ``column`` required and the table's identifier field, through Iceberg's Java
    API: Spark SQL cannot make a column of an existing table NOT NULL, and a dynamic
    table's columns are nullable."""
    jvm = session.sparkContext._jvm
    assert jvm is not None
    iceberg = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(
        session._jsparkSession, table
    )
    names = jvm.java.util.ArrayList()
    names.add(column)
    schema = iceberg.updateSchema().allowIncompatibleChanges().requireColumn(column)
    schema.setIdentifierFields(names).commit()


def test_rely_keys_and_identifier_fields_hold_the_predicate_columns(env: Env) -> None:
    _create(env, "FROZEN WHERE (order_day <= 1)")
    fmt, table = env.dt.engine.table_format, _table(env, "days")
    env.sql("ALTER TABLE days ADD CONSTRAINT pk PRIMARY KEY (order_id, order_day) RELY")
    assert fmt.properties(env.dt.session, table)["dynamic_table.primary_key"] == (
        '["order_id", "order_day"]'
    )
    with pytest.raises(DynamicTableError, match="ORDER_DAY is not part of every RELY"):
        env.sql("ALTER TABLE days ADD CONSTRAINT u UNIQUE (order_id) RELY")
    with pytest.raises(DynamicTableError, match="TOTAL is not part of every RELY"):
        env.sql("ALTER DYNAMIC TABLE days SET FROZEN WHERE (total > 10)")
    assert fmt.properties(env.dt.session, table)["dynamic_table.unique_keys"] == "[]"
    # Identifier fields are a key too: order_day is in the RELY key, not in this one.
    _set_identifier_field(env.dt.session, f"{env.database}.days", "order_id")
    assert fmt.keys(env.dt.session, table) == [["order_id"]]
    with pytest.raises(DynamicTableError, match="ORDER_DAY is not part of every RELY"):
        env.sql("ALTER DYNAMIC TABLE days SET FROZEN WHERE (order_day <= 2)")
    assert env.show("days")["immutable_where"] == "order_day <= 1"
    env.sql("ALTER DYNAMIC TABLE days SET FROZEN WHERE (order_id <= 2)")  # in both keys
    with pytest.raises(DynamicTableError, match="ORDER_ID is not part of every RELY"):
        env.sql("ALTER TABLE days ADD CONSTRAINT u UNIQUE (order_day) RELY")
    assert fmt.properties(env.dt.session, table)["dynamic_table.unique_keys"] == "[]"
    assert fmt.keys(env.dt.session, _table(env, "orders")) == []


def test_backfill_at_a_snapshot(env: Env) -> None:
    env.source("snapshot", "order_id BIGINT, order_day INT, total INT", "(9, 1, 90)")
    version = env.dt.engine.table_format.current_version(env.dt.session, _table(env, "snapshot"))
    env.sql("INSERT INTO snapshot VALUES (8, 1, 80)")
    _create(env, f"FROZEN WHERE (order_day <= 1) BACKFILL FROM snapshot AT (VERSION => {version})")
    assert env.rows("SELECT * FROM days WHERE METADATA$IS_FROZEN") == Counter({(9, 1, 90): 1})
    assert env.rows("SELECT * FROM days WHERE NOT METADATA$IS_FROZEN") == _active(
        env, "order_day <= 1"
    )


def test_backfill_at_a_time_and_before_a_statement(env: Env) -> None:
    env.source("orders_copy", "order_id BIGINT, order_day INT, total INT", "(9, 1, 90)")
    env.sql("INSERT INTO orders_copy VALUES (8, 1, 80), (6, 3, 60)")
    inserted = env.dt.last_statement_id
    # Each snapshot's commit time, as UTC text (the session time zone is UTC).
    first, second = (
        row[0]
        for row in env.sql(
            "SELECT date_format(committed_at, 'yyyy-MM-dd HH:mm:ss.SSS') AS at"
            f" FROM {env.database}.orders_copy.snapshots ORDER BY committed_at"
        ).collect()
    )
    # Without a frozen region the whole table comes from the copy as it was then.
    _create(env, f"BACKFILL FROM orders_copy AT (TIMESTAMP => '{first}'::TIMESTAMP_NTZ)")
    assert env.rows("SELECT * FROM days") == Counter({(9, 1, 90): 1})
    # With one, only its frozen rows do; the active region is computed.
    _create(
        env,
        "FROZEN WHERE (order_day <= 1)"
        f" BACKFILL FROM orders_copy BEFORE (STATEMENT => '{inserted}')",
        replace=True,
    )
    assert env.rows("SELECT * FROM days WHERE METADATA$IS_FROZEN") == Counter({(9, 1, 90): 1})
    assert env.rows("SELECT * FROM days WHERE NOT METADATA$IS_FROZEN") == _active(
        env, "order_day <= 1"
    )
    # At the second commit's time: the newer snapshot (snapshot ids are not in time order).
    _create(
        env,
        f"FROZEN WHERE (order_day <= 1) BACKFILL FROM orders_copy AT (TIMESTAMP => '{second}')",
        replace=True,
    )
    assert env.rows("SELECT * FROM days WHERE METADATA$IS_FROZEN") == Counter(
        {(9, 1, 90): 1, (8, 1, 80): 1}
    )
    with pytest.raises(DynamicTableError, match="has no version BEFORE"):
        _create(env, f"BACKFILL FROM orders_copy BEFORE (TIMESTAMP => '{first}')", replace=True)


def test_a_backfill_source_of_another_shape_is_refused(env: Env) -> None:
    env.source("other", "order_id BIGINT, total INT, order_day INT", "(9, 90, 1)")
    with pytest.raises(DynamicTableError, match="column 2 of the backfill source"):
        _create(env, "FROZEN WHERE (order_day <= 1) BACKFILL FROM other")
    assert not env.dt.session.catalog.tableExists("days")
