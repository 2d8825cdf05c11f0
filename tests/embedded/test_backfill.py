"""BACKFILL FROM (seed 001) on the embedded engine: the first rows come from the backfill
source at a point in time instead of the definition; with a frozen region only the frozen
rows do; later refreshes apply only the changes made after creation."""

from __future__ import annotations

import datetime
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from dyntables import DynamicTableError, DynamicTables

pytestmark = pytest.mark.embedded

QUERY = "SELECT order_id, order_date, line_total FROM raw_orders WHERE order_status != 'returned'"


def _rows(dt: DynamicTables, sql: str) -> Counter[tuple[Any, ...]]:
    return Counter(tuple(row) for row in dt.sql(sql).collect())


@pytest.fixture
def dt(tmp_path: Path) -> DynamicTables:
    tables = DynamicTables(warehouse=tmp_path / "warehouse")
    tables.sql(
        "CREATE TABLE raw_orders (order_id INT, order_date DATE, order_status STRING,"
        " line_total DECIMAL(10, 2))"
    )
    tables.sql(
        "INSERT INTO raw_orders VALUES (1, DATE'2024-12-30', 'shipped', 10.00),"
        " (2, DATE'2025-01-02', 'shipped', 20.00), (3, DATE'2025-01-03', 'returned', 30.00)"
    )
    # A snapshot whose rows differ from what the query computes: (1) was corrected there.
    tables.sql(
        "CREATE TABLE dt_orders_snapshot (order_id INT, order_date DATE, line_total DECIMAL(8, 2))"
    )
    tables.sql(
        "INSERT INTO dt_orders_snapshot VALUES (1, DATE'2024-12-30', 11.00),"
        " (9, DATE'2024-12-31', 90.00)"
    )
    return tables


def _create(dt: DynamicTables, clauses: str, mode: str = "INCREMENTAL") -> Any:
    return dt.sql(
        f"CREATE OR REPLACE DYNAMIC TABLE dt_orders TARGET_LAG = '10 minutes'"
        f" WAREHOUSE = transform_wh REFRESH_MODE = {mode} {clauses} AS {QUERY}"
    )


def test_the_whole_table_comes_from_the_backfill(dt: DynamicTables) -> None:
    _create(dt, "BACKFILL FROM dt_orders_snapshot")
    assert _rows(dt, "SELECT * FROM dt_orders") == _rows(dt, "SELECT * FROM dt_orders_snapshot")
    history = dt.sql(
        "SELECT refresh_action, refresh_action_reason FROM"
        " information_schema.dynamic_table_refresh_history(NAME => 'dt_orders')"
    ).collect()[0]
    assert (history.refresh_action, history.refresh_action_reason) == ("FULL", "BACKFILL")
    # Later refreshes apply only what changed after creation.
    dt.sql("INSERT INTO raw_orders VALUES (4, DATE'2025-01-04', 'shipped', 40.00)")
    assert dt.sql("ALTER DYNAMIC TABLE dt_orders REFRESH").collect()[0].action == "INCREMENTAL"
    expected = _rows(dt, "SELECT * FROM dt_orders_snapshot")
    expected[(4, datetime.date(2025, 1, 4), Decimal("40.00"))] += 1
    assert _rows(dt, "SELECT * FROM dt_orders") == expected


def test_with_a_frozen_region_only_frozen_rows_come_from_the_backfill(dt: DynamicTables) -> None:
    _create(dt, "FROZEN WHERE (order_date < '2025-01-01') BACKFILL FROM dt_orders_snapshot")
    frozen = _rows(dt, "SELECT * FROM dt_orders WHERE METADATA$IS_FROZEN")
    assert frozen == _rows(dt, "SELECT * FROM dt_orders_snapshot WHERE order_date < '2025-01-01'")
    active = _rows(dt, "SELECT * FROM dt_orders WHERE NOT METADATA$IS_FROZEN")
    assert active == _rows(dt, f"SELECT * FROM ({QUERY}) WHERE order_date >= '2025-01-01'")


def test_backfill_at_a_version_a_timestamp_and_before_a_statement(dt: DynamicTables) -> None:
    before = dt.session.sql("DESCRIBE HISTORY dt_orders_snapshot LIMIT 1").collect()[0]
    dt.sql("INSERT INTO dt_orders_snapshot VALUES (8, DATE'2024-12-01', 80.00)")
    insert_id = dt.last_statement_id
    old_rows = Counter(
        {k: n for k, n in _rows(dt, "SELECT * FROM dt_orders_snapshot").items() if k[0] != 8}
    )
    _create(dt, f"BACKFILL FROM dt_orders_snapshot AT (VERSION => {before.version})")
    assert _rows(dt, "SELECT * FROM dt_orders") == old_rows
    _create(dt, f"BACKFILL FROM dt_orders_snapshot BEFORE (STATEMENT => '{insert_id}')")
    assert _rows(dt, "SELECT * FROM dt_orders") == old_rows
    _create(dt, f"BACKFILL FROM dt_orders_snapshot AT (STATEMENT => '{insert_id}')")
    assert (8,) in {row[:1] for row in _rows(dt, "SELECT * FROM dt_orders")}
    moment = before.timestamp.strftime("%Y-%m-%d %H:%M:%S.%f")
    _create(dt, f"BACKFILL FROM dt_orders_snapshot AT (TIMESTAMP => '{moment}'::TIMESTAMP_NTZ)")
    assert _rows(dt, "SELECT * FROM dt_orders") == old_rows


@pytest.mark.parametrize(
    ("snapshot", "message"),
    [
        ("(order_id INT, line_total DECIMAL(10, 2), order_date DATE)", "column 2 of the backfill"),
        ("(order_id INT, order_date DATE)", "has 2 columns"),
        ("(order_id INT, order_date DATE, line_total STRING)", "does not convert"),
    ],
)
def test_a_backfill_source_of_another_shape_is_refused(
    dt: DynamicTables, snapshot: str, message: str
) -> None:
    dt.sql(f"CREATE TABLE other {snapshot}")
    with pytest.raises(DynamicTableError, match=message):
        _create(dt, "BACKFILL FROM other")
    assert not dt.session.catalog.tableExists("dt_orders")


def test_backfill_is_create_only(dt: DynamicTables) -> None:
    _create(dt, "")
    with pytest.raises(DynamicTableError):
        dt.sql("ALTER DYNAMIC TABLE dt_orders SET BACKFILL FROM dt_orders_snapshot")
