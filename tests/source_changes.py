"""Hypothesis strategies for batches of source changes, shared by the refresh property
tests of both tiers: inserts (duplicate rows, NULL keys and amounts), updates of a filtered
column, of an aggregated column and of a join/group key, deletes, and updates of a
dimension's column, on the tables

    orders (order_id INT, customer_id INT, amount DECIMAL(8, 2), status STRING)
    customers (customer_id INT, region STRING)
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

customer_ids = st.one_of(st.none(), st.integers(min_value=1, max_value=3))
# Amounts are whole or half units: DOUBLE sums of them are exact in any order.
amounts = st.one_of(
    st.none(), st.builds(lambda units: f"{units}.50", st.integers(min_value=0, max_value=300))
)
statuses = st.sampled_from(["paid", "returned", "open"])


def _sql_value(value: int | str | None) -> str:
    return "NULL" if value is None else str(value)


def insert_order(max_order_id: int) -> st.SearchStrategy[str]:
    """One INSERT of one or two identical orders."""
    return st.builds(
        lambda o, c, a, s, copies: (
            "INSERT INTO orders VALUES "
            + ", ".join([f"({o}, {_sql_value(c)}, {_sql_value(a)}, '{s}')"] * copies)
        ),
        st.integers(min_value=1, max_value=max_order_id),
        customer_ids,
        amounts,
        statuses,
        st.integers(min_value=1, max_value=2),
    )


def source_change(max_order_id: int) -> st.SearchStrategy[str]:
    """One statement changing ``orders`` or ``customers``."""
    order_ids = st.integers(min_value=1, max_value=max_order_id)
    update_status = st.builds(
        lambda o, s: f"UPDATE orders SET status = '{s}' WHERE order_id = {o}", order_ids, statuses
    )
    move_order = st.builds(
        lambda o, c: f"UPDATE orders SET customer_id = {_sql_value(c)} WHERE order_id = {o}",
        order_ids,
        customer_ids,
    )
    update_amount = st.builds(
        lambda o, a: f"UPDATE orders SET amount = {_sql_value(a)} WHERE order_id = {o}",
        order_ids,
        amounts,
    )
    delete_order = st.builds(lambda o: f"DELETE FROM orders WHERE order_id = {o}", order_ids)
    move_customer = st.builds(
        lambda c, r: f"UPDATE customers SET region = {r} WHERE customer_id = {c}",
        st.integers(min_value=1, max_value=3),
        st.sampled_from(["'north'", "'south'", "NULL"]),
    )
    return st.one_of(
        insert_order(max_order_id),
        update_status,
        update_amount,
        move_order,
        delete_order,
        move_customer,
    )


def create_sources(dt: Any) -> None:
    """The two tables on a ``DynamicTables`` (embedded), with rows that have duplicates and
    NULL keys."""
    dt.sql(
        "CREATE TABLE orders (order_id INT, customer_id INT, amount DECIMAL(8, 2), status STRING)"
    )
    dt.sql("CREATE TABLE customers (customer_id INT, region STRING)")
    dt.sql("INSERT INTO customers VALUES (1, 'north'), (2, 'south'), (3, NULL)")
    dt.sql(
        "INSERT INTO orders VALUES (1, 1, 110.00, 'paid'), (2, 2, 5.00, 'open'),"
        " (2, 2, 5.00, 'open'), (3, NULL, 150.00, 'paid')"
    )
