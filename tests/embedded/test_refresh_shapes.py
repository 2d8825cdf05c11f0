"""Property test over generated queries: a dynamic table of a query composed from parts a
data engineer combines (a GROUP BY, window or join keyed by a column or by an expression —
a predicate, arithmetic, a coalesce —, any mix of aggregates, inputs that are derived
tables with or without a name, a UNION ALL whose branches name their columns differently,
joins of two and three inputs) equals its query after every batch of source changes.

The fixed queries of test_refresh_properties.py cover each rule; these cover how the
rules meet: each shape found a wrong answer or a failed refresh once (a group that lost
its minimum, a key that is a predicate, a FULL JOIN on a coalesce after another join, a
derived table without a name, a UNION ALL's second branch)."""

from __future__ import annotations

import os
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from source_changes import create_sources, source_change

from dyntables import DynamicTables

pytestmark = pytest.mark.embedded

# Keys over orders' columns: plain, predicates, arithmetic, a coalesce.
KEYS = [
    "customer_id",
    "status",
    "amount IS NULL",
    "status = 'paid' AND amount > 100",
    "customer_id % 2",
    "coalesce(customer_id, 0)",
    "status <=> 'open'",
]
AGGREGATES = [
    "count(*)",
    "count(customer_id)",
    "sum(amount)",
    "min(amount)",
    "max(amount)",
    "avg(amount)",
    "count(DISTINCT status)",
    "sum(CAST(amount AS DOUBLE))",
    "min(order_id)",
]
# What a query reads orders through: the table, a derived table (named or not), a UNION
# ALL whose second branch names its columns otherwise.
INPUTS = [
    "orders",
    "(SELECT * FROM orders WHERE amount > 50 OR amount IS NULL) AS big",
    "(SELECT order_id, customer_id, amount, status FROM orders)",
    "(SELECT order_id, customer_id, amount, status FROM orders WHERE status <> 'paid'"
    " UNION ALL SELECT order_id + 100 AS id, customer_id AS c, amount AS a, 'again' AS s"
    " FROM orders WHERE status = 'paid') AS u",
]
# Join conditions between orders (o) and customers (c), and a third input's (p: orders).
ON = ["o.customer_id = c.customer_id", "coalesce(o.customer_id, 0) = coalesce(c.customer_id, 0)"]
THIRD_ON = [
    "p.customer_id = c.customer_id",
    "coalesce(p.customer_id, 0) = coalesce(c.customer_id, 0)",
]
JOINS = ["JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN"]


def _grouped(key: str, aggregates: list[str], source: str, having: bool) -> str:
    listed = ", ".join(f"{a} AS a{i}" for i, a in enumerate(aggregates))
    query = f"SELECT {key} AS k, {listed} FROM {source} GROUP BY {key}"
    return query + (" HAVING count(*) > 1" if having else "")


def _windowed(key: str, source: str) -> str:
    return (
        f"SELECT order_id, amount, rank() OVER (PARTITION BY {key} ORDER BY order_id, amount)"
        f" AS r, sum(amount) OVER (PARTITION BY {key}) AS total FROM {source}"
    )


def _joined(join: str, on: str, third: str | None, third_on: str) -> str:
    query = f"SELECT o.order_id, c.region FROM orders o {join} customers c ON {on}"
    if third is None:
        return query
    return (
        f"SELECT o.order_id, c.region, p.order_id AS other FROM orders o JOIN customers c"
        f" ON {on} {third} orders p ON {third_on}"
    )


queries = st.one_of(
    st.builds(
        _grouped,
        st.sampled_from(KEYS),
        st.lists(st.sampled_from(AGGREGATES), min_size=1, max_size=4, unique=True),
        st.sampled_from(INPUTS),
        st.booleans(),
    ),
    st.builds(_windowed, st.sampled_from(KEYS), st.sampled_from(INPUTS)),
    st.builds(
        _joined,
        st.sampled_from(JOINS),
        st.sampled_from(ON),
        st.one_of(st.none(), st.sampled_from(JOINS)),
        st.sampled_from(THIRD_ON),
    ),
)
changes = st.lists(
    st.lists(source_change(max_order_id=6), min_size=1, max_size=4), min_size=1, max_size=3
)


def _rows(dt: DynamicTables, sql: str) -> Counter[tuple[Any, ...]]:
    return Counter(tuple(row) for row in dt.sql(sql).collect())


# One dynamic table an example: 25 in CI (about 30 s), many more under `make test-long`.
_EXAMPLES = 25 if os.environ.get("HYPOTHESIS_PROFILE", "ci") == "ci" else 300


@settings(max_examples=_EXAMPLES)
@given(query=queries, batches=changes)
def test_a_generated_query_refreshes_to_its_rows(query: str, batches: list[list[str]]) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        dt = DynamicTables(warehouse=Path(scratch) / "warehouse")
        create_sources(dt)
        dt.sql(f"CREATE DYNAMIC TABLE shaped TARGET_LAG = '1 minute' AS {query}")
        mode = dt.sql("SHOW DYNAMIC TABLES LIKE 'shaped'").collect()[0].refresh_mode
        for batch in batches:
            for statement in batch:
                dt.sql(statement)
            refreshed = dt.sql("ALTER DYNAMIC TABLE shaped REFRESH").collect()[0]
            if mode == "INCREMENTAL":  # AUTO keeps a shape it cannot refresh so FULL
                assert refreshed.action in ("INCREMENTAL", "NO_DATA"), refreshed
            assert _rows(dt, "SELECT * FROM shaped") == _rows(dt, query)
