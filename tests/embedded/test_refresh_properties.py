"""Property test: after any sequence of source changes, each refresh of a pipeline of
dynamic tables leaves every table equal to its defining query over the current sources
(the oracle: the query itself, run directly). A dynamic table reading another one sees
the upstream's refreshed rows."""

from __future__ import annotations

import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dyntables import DynamicTables

pytestmark = pytest.mark.embedded

PAID = "SELECT order_id, customer_id, amount FROM orders WHERE status <> 'returned'"
TOTALS = (
    "SELECT c.region, count(*) AS orders, sum(p.amount) AS revenue"
    " FROM paid p JOIN customers c ON p.customer_id = c.customer_id GROUP BY c.region"
)

order_ids = st.integers(min_value=1, max_value=8)
customer_ids = st.integers(min_value=1, max_value=3)
amounts = st.integers(min_value=0, max_value=500)
statuses = st.sampled_from(["paid", "returned", "open"])

insert_order = st.builds(
    lambda o, c, a, s: f"INSERT INTO orders VALUES ({o}, {c}, {a}.50, '{s}')",
    order_ids,
    customer_ids,
    amounts,
    statuses,
)
update_order = st.builds(
    lambda o, s: f"UPDATE orders SET status = '{s}' WHERE order_id = {o}", order_ids, statuses
)
delete_order = st.builds(lambda o: f"DELETE FROM orders WHERE order_id = {o}", order_ids)
move_customer = st.builds(
    lambda c, r: f"UPDATE customers SET region = '{r}' WHERE customer_id = {c}",
    customer_ids,
    st.sampled_from(["north", "south"]),
)
changes = st.lists(
    st.lists(st.one_of(insert_order, update_order, delete_order, move_customer), max_size=4),
    min_size=1,
    max_size=3,
)


def _rows(dt: DynamicTables, sql: str) -> Counter[tuple[Any, ...]]:
    return Counter(tuple(row) for row in dt.sql(sql).collect())


@given(batches=changes)
def test_every_refresh_equals_the_query_over_the_current_sources(
    batches: list[list[str]],
) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        dt = DynamicTables(warehouse=Path(scratch) / "warehouse")
        dt.sql(
            "CREATE TABLE orders"
            " (order_id INT, customer_id INT, amount DECIMAL(8, 2), status STRING)"
        )
        dt.sql("CREATE TABLE customers (customer_id INT, region STRING)")
        dt.sql("INSERT INTO customers VALUES (1, 'north'), (2, 'south'), (3, 'north')")
        dt.sql("INSERT INTO orders VALUES (1, 1, 10.00, 'paid'), (2, 2, 5.00, 'open')")
        dt.sql(f"CREATE DYNAMIC TABLE paid TARGET_LAG = '1 minute' AS {PAID}")
        dt.sql(f"CREATE DYNAMIC TABLE totals TARGET_LAG = '1 minute' AS {TOTALS}")
        for batch in batches:
            for statement in batch:
                dt.sql(statement)
            dt.sql("ALTER DYNAMIC TABLE paid REFRESH")
            dt.sql("ALTER DYNAMIC TABLE totals REFRESH")
            assert _rows(dt, "SELECT * FROM paid") == _rows(dt, PAID)
            assert _rows(dt, "SELECT * FROM totals") == _rows(dt, TOTALS)
