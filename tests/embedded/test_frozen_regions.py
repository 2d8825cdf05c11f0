"""Frozen regions (seed 001) on the embedded engine: refreshes, full or incremental, touch
only the active region; ALTER grows, reshapes or removes the region; METADATA$IS_FROZEN
tells the two apart; bad predicates are refused and change nothing."""

from __future__ import annotations

import datetime
import os
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dyntables import DynamicTableError, DynamicTables

pytestmark = pytest.mark.embedded

ORDERS = (
    "CREATE TABLE raw_orders (order_id INT, customer_id INT, order_date TIMESTAMP,"
    " order_status STRING, line_total DECIMAL(10, 2))"
)
SEED_ROWS = (
    "INSERT INTO raw_orders VALUES"
    " (1001, 1, TIMESTAMP'2025-01-15 08:30:00', 'shipped', 89.97),"
    " (1002, 2, TIMESTAMP'2025-01-15 09:45:00', 'shipped', 49.99),"
    " (1003, 1, TIMESTAMP'2025-01-15 14:20:00', 'returned', 59.98),"
    " (1004, 3, TIMESTAMP'2025-01-16 10:00:00', 'shipped', 62.50),"
    " (1005, 2, TIMESTAMP'2025-01-16 11:30:00', 'open', 49.99)"
)
QUERY = (
    "SELECT order_id, customer_id, order_date, line_total FROM raw_orders"
    " WHERE order_status != 'returned'"
)


def _rows(dt: DynamicTables, sql: str) -> Counter[tuple[Any, ...]]:
    return Counter(tuple(row) for row in dt.sql(sql).collect())


@pytest.fixture
def dt(tmp_path: Path) -> DynamicTables:
    tables = DynamicTables(warehouse=tmp_path / "warehouse")
    tables.sql(ORDERS)
    tables.sql(SEED_ROWS)
    return tables


def _create(dt: DynamicTables, mode: str, frozen: str = "order_date < '2025-01-16'") -> None:
    dt.sql(
        f"CREATE OR REPLACE DYNAMIC TABLE dt_orders TARGET_LAG = '10 minutes'"
        f" WAREHOUSE = transform_wh REFRESH_MODE = {mode} FROZEN WHERE ({frozen}) AS {QUERY}"
    )


@pytest.mark.parametrize("mode", ["INCREMENTAL", "FULL"])
def test_refreshes_touch_only_the_active_region(dt: DynamicTables, mode: str) -> None:
    _create(dt, mode, "order_date < '2025-01-16'::TIMESTAMP_NTZ")
    shown = dt.sql("SHOW DYNAMIC TABLES LIKE 'dt_orders'").collect()[0]
    assert shown.immutable_where == "order_date < CAST('2025-01-16' AS TIMESTAMP_NTZ)"
    frozen_before = _rows(dt, "SELECT * FROM dt_orders WHERE order_date < '2025-01-16'")
    # Changes on both sides of the boundary: updates, inserts and deletes.
    dt.sql("UPDATE raw_orders SET line_total = 1.00")
    dt.sql(
        "INSERT INTO raw_orders VALUES (1006, 4, TIMESTAMP'2025-01-10 00:00:00', 'shipped', 5.00),"
        " (1007, 4, TIMESTAMP'2025-01-20 00:00:00', 'shipped', 7.00)"
    )
    dt.sql("DELETE FROM raw_orders WHERE order_id IN (1001, 1004)")
    refreshed = dt.sql("ALTER DYNAMIC TABLE dt_orders REFRESH").collect()[0]
    assert refreshed.action == mode
    frozen = _rows(dt, "SELECT * FROM dt_orders WHERE METADATA$IS_FROZEN")
    assert frozen == frozen_before  # untouched: 1001 kept, 1002 not updated, 1006 not added
    active = _rows(dt, "SELECT * FROM dt_orders WHERE NOT METADATA$IS_FROZEN")
    assert active == _rows(dt, f"SELECT * FROM ({QUERY}) WHERE order_date >= '2025-01-16'")
    counts = dt.sql(
        "SELECT COUNT_IF(METADATA$IS_FROZEN) AS frozen_rows,"
        " COUNT_IF(NOT METADATA$IS_FROZEN) AS active_rows FROM dt_orders"
    ).collect()[0]
    assert (counts.frozen_rows, counts.active_rows) == (2, 2)


def test_rows_where_the_predicate_is_null_are_active(dt: DynamicTables) -> None:
    dt.sql("INSERT INTO raw_orders VALUES (1008, 5, NULL, 'shipped', 3.00)")
    _create(dt, "INCREMENTAL")
    dt.sql("UPDATE raw_orders SET line_total = 4.00 WHERE order_id = 1008")
    dt.sql("ALTER DYNAMIC TABLE dt_orders REFRESH")
    row = dt.sql(
        "SELECT line_total, METADATA$IS_FROZEN AS f FROM dt_orders WHERE order_id = 1008"
    ).collect()[0]
    assert (str(row.line_total), row.f) == ("4.00", False)


def test_a_predicate_on_the_current_time_binds_to_the_refresh(dt: DynamicTables) -> None:
    now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    old, recent = now - datetime.timedelta(days=40), now - datetime.timedelta(days=1)
    dt.sql(
        f"INSERT INTO raw_orders VALUES (2001, 9, TIMESTAMP'{old:%Y-%m-%d %H:%M:%S}', 'o', 1.00)"
    )
    dt.sql(
        f"INSERT INTO raw_orders VALUES (2002, 9, TIMESTAMP'{recent:%Y-%m-%d %H:%M:%S}', 'o', 1.00)"
    )
    _create(dt, "INCREMENTAL", "order_date < CURRENT_TIMESTAMP() - INTERVAL '30 days'")
    dt.sql("UPDATE raw_orders SET line_total = 2.00 WHERE customer_id = 9")
    dt.sql("ALTER DYNAMIC TABLE dt_orders REFRESH")
    totals = {
        row.order_id: (str(row.line_total), row.f)
        for row in dt.sql(
            "SELECT order_id, line_total, METADATA$IS_FROZEN AS f FROM dt_orders"
            " WHERE customer_id = 9"
        ).collect()
    }
    assert totals == {2001: ("1.00", True), 2002: ("2.00", False)}


def test_growing_the_region_costs_nothing(dt: DynamicTables) -> None:
    _create(dt, "INCREMENTAL", "order_date < '2025-01-16'")
    dt.sql("ALTER DYNAMIC TABLE dt_orders SET FROZEN WHERE (order_date < '2025-01-17')")
    dt.sql("UPDATE raw_orders SET line_total = 1.00 WHERE order_id = 1004")
    refreshed = dt.sql("ALTER DYNAMIC TABLE dt_orders REFRESH").collect()[0]
    assert refreshed.action == "INCREMENTAL"
    assert str(dt.sql("SELECT line_total FROM dt_orders WHERE order_id = 1004").first()[0]) == (
        "62.50"  # now frozen: not updated
    )


def test_shrinking_the_region_recomputes_the_active_region(dt: DynamicTables) -> None:
    _create(dt, "INCREMENTAL", "order_date < '2025-01-17'")
    dt.sql("UPDATE raw_orders SET line_total = 1.00")
    dt.sql("ALTER DYNAMIC TABLE dt_orders SET IMMUTABLE WHERE (order_date < '2025-01-16')")
    refreshed = dt.sql("ALTER DYNAMIC TABLE dt_orders REFRESH").collect()[0]
    assert (refreshed.action, refreshed.reason) == ("REINITIALIZE", "FROZEN_REGION_CHANGED")
    totals = {
        r[0]: str(r[1]) for r in dt.sql("SELECT order_id, line_total FROM dt_orders").collect()
    }
    # Rows that stay frozen keep their values; the rows that became active are recomputed.
    assert totals == {1001: "89.97", 1002: "49.99", 1004: "1.00", 1005: "1.00"}
    assert dt.sql("ALTER DYNAMIC TABLE dt_orders REFRESH").collect()[0].action == "NO_DATA"


def test_removing_the_region_recomputes_everything(dt: DynamicTables) -> None:
    _create(dt, "FULL")
    dt.sql("UPDATE raw_orders SET line_total = 1.00")
    dt.sql("ALTER DYNAMIC TABLE dt_orders UNSET FROZEN WHERE")
    refreshed = dt.sql("ALTER DYNAMIC TABLE dt_orders REFRESH").collect()[0]
    assert (refreshed.action, refreshed.reason) == ("REINITIALIZE", "FROZEN_REGION_REMOVED")
    assert _rows(dt, "SELECT * FROM dt_orders") == _rows(dt, QUERY)
    assert dt.sql("SHOW DYNAMIC TABLES LIKE 'dt_orders'").collect()[0].immutable_where is None
    flags = dt.sql("SELECT DISTINCT METADATA$IS_FROZEN AS f FROM dt_orders").collect()
    assert [row.f for row in flags] == [False]


@pytest.mark.parametrize(
    ("predicate", "message"),
    [
        ("order_id IN (SELECT 1)", "subquer"),
        ("rand() < 0.5", "nondeterministic"),
        ("order_status = 'shipped'", "order_status"),
        ("my_udf(order_id)", "my_udf"),
        ("METADATA$IS_FROZEN", "METADATA"),
    ],
)
def test_bad_predicates_are_refused_and_change_nothing(
    dt: DynamicTables, predicate: str, message: str
) -> None:
    with pytest.raises(DynamicTableError, match=message):
        _create(dt, "INCREMENTAL", predicate)
    assert not dt.session.catalog.tableExists("dt_orders")
    _create(dt, "INCREMENTAL")
    before = dt.sql("SHOW DYNAMIC TABLES LIKE 'dt_orders'").collect()[0].immutable_where
    with pytest.raises(DynamicTableError, match=message):
        dt.sql(f"ALTER DYNAMIC TABLE dt_orders SET FROZEN WHERE ({predicate})")
    after = dt.sql("SHOW DYNAMIC TABLES LIKE 'dt_orders'").collect()[0].immutable_where
    assert after == before


# ---- property: DT = rows frozen at creation + the query's active rows ----

order_ids = st.integers(min_value=1, max_value=6)
days = st.one_of(st.none(), st.integers(min_value=1, max_value=4))
statements = st.one_of(
    st.builds(
        lambda o, d, t: f"INSERT INTO src VALUES ({o}, {'NULL' if d is None else d}, {t})",
        order_ids,
        days,
        st.integers(min_value=0, max_value=9),
    ),
    st.builds(
        lambda o, t: f"UPDATE src SET total = {t} WHERE id = {o}", order_ids, st.integers(0, 9)
    ),
    st.builds(
        lambda o, d: f"UPDATE src SET day = {'NULL' if d is None else d} WHERE id = {o}",
        order_ids,
        days,
    ),
    st.builds(lambda o: f"DELETE FROM src WHERE id = {o}", order_ids),
)
FROZEN_QUERIES = {
    "rows": "SELECT id, day, total FROM src WHERE total > 2",
    "per_day": "SELECT day, count(*) AS n, sum(total) AS total FROM src GROUP BY day",
    "days": "SELECT DISTINCT day, total FROM src",
}
_EXAMPLES = 4 if os.environ.get("HYPOTHESIS_PROFILE", "ci") == "ci" else 100


@settings(max_examples=_EXAMPLES)
@given(
    batches=st.lists(st.lists(statements, min_size=1, max_size=4), min_size=1, max_size=3),
    mode=st.sampled_from(["INCREMENTAL", "FULL"]),
)
def test_frozen_rows_never_change_and_active_rows_follow_the_query(
    batches: list[list[str]], mode: str
) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        dt = DynamicTables(warehouse=Path(scratch) / "warehouse")
        dt.sql("CREATE TABLE src (id INT, day INT, total INT)")
        dt.sql("INSERT INTO src VALUES (1, 1, 5), (2, 2, 3), (2, 2, 3), (3, 3, 1), (4, NULL, 7)")
        frozen_at_creation = {}
        for name, query in FROZEN_QUERIES.items():
            dt.sql(
                f"CREATE DYNAMIC TABLE {name} TARGET_LAG = '1 minute' REFRESH_MODE = {mode}"
                f" FROZEN WHERE (day <= 2) AS {query}"
            )
            frozen_at_creation[name] = _rows(dt, f"SELECT * FROM ({query}) WHERE day <= 2")
        for batch in batches:
            for statement in batch:
                dt.sql(statement)
            for name, query in FROZEN_QUERIES.items():
                refreshed = dt.sql(f"ALTER DYNAMIC TABLE {name} REFRESH").collect()[0]
                assert refreshed.action in (mode, "NO_DATA"), (name, refreshed)
                active = _rows(dt, f"SELECT * FROM ({query}) WHERE NOT coalesce(day <= 2, false)")
                expected = frozen_at_creation[name] + active
                assert _rows(dt, f"SELECT * FROM {name}") == expected, name


def test_rely_keys_must_hold_the_frozen_predicate_columns(dt: DynamicTables) -> None:
    # Seed 001: succeeds, order_date is part of the RELY primary key.
    _create(dt, "INCREMENTAL", "order_date < '2025-01-01'")
    dt.sql("ALTER TABLE dt_orders ADD CONSTRAINT pk_orders PRIMARY KEY (order_id, order_date) RELY")
    properties = {
        row.key: row.value for row in dt.session.sql("SHOW TBLPROPERTIES dt_orders").collect()
    }
    assert properties["dynamic_table.primary_key"] == '["order_id", "order_date"]'
    # A unique key without order_date breaks the rule: refused, nothing recorded.
    with pytest.raises(DynamicTableError, match="ORDER_DATE is not part of every RELY"):
        dt.sql("ALTER TABLE dt_orders ADD CONSTRAINT u UNIQUE (order_id) RELY")
    # So does a predicate on a column outside the key.
    with pytest.raises(DynamicTableError, match="LINE_TOTAL is not part of every RELY"):
        dt.sql("ALTER DYNAMIC TABLE dt_orders SET FROZEN WHERE (line_total > 10)")
    assert dt.sql("SHOW DYNAMIC TABLES LIKE 'dt_orders'").collect()[0].immutable_where == (
        "order_date < '2025-01-01'"
    )
    with pytest.raises(DynamicTableError, match="add RELY"):
        dt.sql("ALTER TABLE dt_orders ADD CONSTRAINT u UNIQUE (order_date)")
    with pytest.raises(DynamicTableError, match="not a column"):
        dt.sql("ALTER TABLE dt_orders ADD CONSTRAINT u UNIQUE (nope) RELY")


def test_a_predicate_column_outside_the_rely_key_fails_as_in_the_seed(dt: DynamicTables) -> None:
    dt.sql(
        "CREATE OR REPLACE DYNAMIC TABLE dt_orders TARGET_LAG = '10 minutes'"
        " WAREHOUSE = transform_wh FROZEN WHERE (order_status = 'shipped')"
        " AS SELECT order_id, order_date, order_status, line_total FROM raw_orders"
    )
    with pytest.raises(DynamicTableError, match="ORDER_STATUS is not part of every RELY"):
        dt.sql(
            "ALTER TABLE dt_orders ADD CONSTRAINT pk_orders PRIMARY KEY (order_id, order_date) RELY"
        )
