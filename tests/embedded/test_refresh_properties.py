"""Property test: after any sequence of source changes, each refresh of a set of dynamic
tables leaves every table equal to its defining query over the current sources (the
oracle: the query itself, run directly), and every one of them refreshes incrementally.

The changes include duplicate rows, NULL keys, updates of join and group keys, and rows
moving in and out of filters; the queries cover filters and projections, stars (plain,
qualified, in a subquery and a CTE), inner joins
(a self-join too), UNION ALL, CTEs, DISTINCT, GROUP BY with several aggregates, a dynamic
table reading another one, LEFT/RIGHT/FULL outer joins, windows with PARTITION BY,
LATERAL VIEW explode, a GROUP BY below the top and one whose key is not an output, ranking
windows (updated in place where a change keeps rows where they rank); and batches of
appends only, which GROUP BY applies by change arithmetic."""

from __future__ import annotations

import os
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from source_changes import create_sources, insert_order, source_change

from dyntables import DynamicTables

pytestmark = pytest.mark.embedded

QUERIES = {
    "paid": "SELECT order_id, customer_id, amount * 2 AS doubled FROM orders"
    " WHERE status <> 'returned'",
    "by_region": "SELECT c.region, count(*) AS orders, sum(o.amount) AS revenue,"
    " min(o.amount) AS smallest, max(o.amount) AS largest,"
    " count(DISTINCT o.customer_id) AS buyers"
    " FROM orders o JOIN customers c ON o.customer_id = c.customer_id GROUP BY c.region",
    "either": "SELECT order_id, status FROM orders WHERE status = 'paid'"
    " UNION ALL SELECT order_id, status FROM orders WHERE customer_id = 1",
    "pairs": "SELECT DISTINCT customer_id, status FROM orders",
    "big_by_region": "WITH big AS (SELECT * FROM orders WHERE amount > 100)"
    " SELECT b.order_id, c.region FROM big b JOIN customers c ON b.customer_id = c.customer_id",
    "siblings": "SELECT a.order_id, b.order_id AS other FROM orders a JOIN orders b"
    " ON a.customer_id = b.customer_id AND a.order_id < b.order_id",
    "per_customer": "SELECT customer_id, count(*) AS n, sum(doubled) AS total FROM paid"
    " GROUP BY customer_id",
    # Stars: plain, qualified, in a subquery and in a CTE (a change carries a sign column
    # that a star would pass on twice).
    "all_paid": "SELECT * FROM orders WHERE status = 'paid'",
    "orders_regions": "SELECT o.*, c.region FROM orders o JOIN customers c"
    " ON o.customer_id = c.customer_id",
    "big_orders": "SELECT * FROM (SELECT * FROM orders WHERE amount > 100) big",
    "known_buyers": "WITH o AS (SELECT * FROM orders) SELECT o.* FROM o"
    " WHERE o.customer_id IS NOT NULL",
}

# Keyed operators (recomputed for the keys a change touches), LATERAL VIEW, and the GROUP
# BY shapes that change arithmetic does and does not cover.
KEYED_QUERIES = {
    "with_region": "SELECT o.order_id, o.amount, c.region FROM orders o"
    " LEFT JOIN customers c ON o.customer_id = c.customer_id",
    "customer_orders": "SELECT c.customer_id AS cid, c.region, o.order_id FROM orders o"
    " RIGHT JOIN customers c ON o.customer_id = c.customer_id",
    "paid_pairs": "SELECT o.order_id, c.customer_id AS cid FROM orders o FULL OUTER JOIN"
    " customers c ON o.customer_id = c.customer_id AND o.status = 'paid'",
    # Outer joins among other joins, all on the customer (a class of ON equalities).
    "earlier_orders": "SELECT o.order_id, c.region, p.order_id AS earlier FROM orders o"
    " LEFT JOIN customers c ON o.customer_id = c.customer_id"
    " LEFT JOIN orders p ON p.customer_id = c.customer_id AND p.order_id < o.order_id",
    "region_orders": "SELECT c.region, o.order_id, p.amount FROM customers c"
    " JOIN orders o ON o.customer_id = c.customer_id"
    " FULL JOIN orders p ON p.customer_id = o.customer_id AND p.status = 'paid'",
    # Joins on several keys: recomputed by the last join's key, its prefix by its own.
    "status_peers": "SELECT o.order_id, c.region, p.order_id AS peer FROM orders o"
    " LEFT JOIN customers c ON o.customer_id = c.customer_id"
    " LEFT JOIN orders p ON p.status = o.status AND p.order_id <> o.order_id",
    "region_peers": "SELECT c.region, o.order_id, r.customer_id AS peer FROM orders o"
    " JOIN customers c ON o.customer_id = c.customer_id"
    " LEFT JOIN customers r ON r.region <=> c.region",
    "status_buyers": "SELECT p.order_id, p.status, c.region FROM orders o"
    " LEFT JOIN customers c ON o.customer_id = c.customer_id"
    " RIGHT JOIN orders p ON p.status = o.status",
    "region_pairs": "SELECT o.order_id, r.customer_id AS peer FROM orders o"
    " JOIN customers c ON o.customer_id = c.customer_id"
    " FULL JOIN customers r ON r.region = c.region",
    "ranked": "SELECT order_id, customer_id,"
    " row_number() OVER (PARTITION BY customer_id ORDER BY order_id, amount, status) AS rn,"
    " sum(amount) OVER (PARTITION BY customer_id) AS customer_total FROM orders",
    # Keys in output columns: the table's rows of each touched key are replaced.
    "customer_lines": "SELECT o.customer_id, o.order_id, c.region FROM orders o"
    " LEFT JOIN customers c ON o.customer_id = c.customer_id",
    # A CTE's GROUP BY restricted to the touched keys inside, before it groups; with its
    # key in the output (replaced) and without (netted).
    "paid_counts": "WITH paid AS (SELECT customer_id, count(*) AS paid FROM orders"
    " WHERE status = 'paid' GROUP BY customer_id) SELECT c.customer_id, c.region, p.paid"
    " FROM customers c LEFT JOIN paid p ON p.customer_id = c.customer_id",
    "region_counts": "SELECT c.region, p.n, p.hi FROM customers c LEFT JOIN"
    " (SELECT customer_id, count(*) AS n, max(amount) AS hi FROM orders GROUP BY customer_id)"
    " p ON p.customer_id = c.customer_id",
    "tags": "SELECT order_id, tag FROM orders LATERAL VIEW explode(array(status, 'any')) t AS tag",
    "repeat_buyers": "SELECT q.customer_id FROM (SELECT customer_id, count(*) AS n FROM orders"
    " GROUP BY customer_id) q WHERE q.n > 1",
    "status_sizes": "SELECT count(*) AS n, sum(amount) AS total FROM orders GROUP BY status",
    "by_status": "SELECT status, count(customer_id) AS with_customer, min(amount) AS lo,"
    " max(amount) AS hi, sum(amount) AS total FROM orders GROUP BY status",
    # COUNT(*) with MIN/MAX: a group that lost its extreme and gained no value is
    # recomputed (its survival is known from the count).
    "extremes": "SELECT customer_id, count(*) AS n, min(amount) AS lo, max(amount) AS hi"
    " FROM orders GROUP BY customer_id",
    "busy_status": "SELECT status, count(DISTINCT customer_id) AS buyers FROM orders"
    " GROUP BY status HAVING count(*) > 1",
    # Keys computed from the input rows: a recompute reads only the rows of those keys.
    "initials": "SELECT upper(substr(status, 1, 1)) AS initial, count(*) AS n,"
    " sum(amount) AS total FROM orders GROUP BY upper(substr(status, 1, 1))",
    "parities": "SELECT DISTINCT customer_id % 2 AS parity, status FROM orders",
    # DISTINCT over stars: the columns they stand for are the keys.
    "distinct_orders": "SELECT DISTINCT * FROM orders",
    "distinct_regions": "SELECT DISTINCT o.*, c.region FROM orders o JOIN customers c"
    " ON o.customer_id = c.customer_id",
    # A DOUBLE sum: change arithmetic only adds to it (removals recompute the group).
    "float_totals": "SELECT customer_id, count(*) AS n, sum(CAST(amount AS DOUBLE)) AS total,"
    " max(amount) AS hi FROM orders GROUP BY customer_id",
}

# Ranking windows: updates that keep a row where it ranks are applied in place, other
# changes recompute their partitions (refresh/windows.py). Ties in ORDER BY are broken
# where the function's value depends on the order among them (row_number, ntile).
RANKING_QUERIES = {
    "positions": "SELECT order_id, customer_id, amount, status,"
    " rank() OVER (PARTITION BY customer_id ORDER BY order_id) AS r,"
    " dense_rank() OVER (PARTITION BY customer_id ORDER BY order_id DESC) AS dr,"
    " percent_rank() OVER (PARTITION BY customer_id ORDER BY order_id) AS pr,"
    " cume_dist() OVER (PARTITION BY customer_id, status ORDER BY order_id) AS cd FROM orders",
    "numbered": "SELECT *, row_number() OVER"
    " (PARTITION BY customer_id ORDER BY order_id, status, amount) AS rn FROM orders",
    # The positions are not outputs: a row's old version is found by its amount.
    "amount_ranks": "SELECT amount, rank() OVER (PARTITION BY customer_id ORDER BY order_id)"
    " AS r FROM orders WHERE status <> 'returned'",
    # Over a join, with partitions of their own per window (no shared one past region).
    "regional": "SELECT o.order_id, o.amount, c.region, dense_rank() OVER (PARTITION BY"
    " c.region ORDER BY o.order_id) AS dr, ntile(2) OVER (PARTITION BY c.region, o.status"
    " ORDER BY o.order_id, o.amount, o.customer_id) AS half FROM orders o JOIN customers c"
    " ON o.customer_id = c.customer_id",
}

changes = st.lists(
    st.lists(
        source_change(max_order_id=6),
        min_size=1,
        max_size=4,
    ),
    min_size=1,
    max_size=3,
)
# Batches of inserts only, which change arithmetic applies without a rescan.
appends = st.lists(
    st.lists(insert_order(max_order_id=6), min_size=1, max_size=3), min_size=1, max_size=3
)


def _rows(dt: DynamicTables, sql: str) -> Counter[tuple[Any, ...]]:
    return Counter(tuple(row) for row in dt.sql(sql).collect())


# Each example builds seven dynamic tables and refreshes each after every batch: a few
# examples in CI, many under `make test-long`.
_EXAMPLES = 5 if os.environ.get("HYPOTHESIS_PROFILE", "ci") == "ci" else 150


def _check_every_refresh(
    queries: dict[str, str], batches: list[list[str]], maintenance: list[str] | None = None
) -> None:
    """``maintenance``: after each batch's refreshes, that statement (``{t}`` each table,
    sources too) on the engine's own session."""
    with tempfile.TemporaryDirectory() as scratch:
        dt = DynamicTables(warehouse=Path(scratch) / "warehouse")
        create_sources(dt)
        for name, query in queries.items():
            dt.sql(
                f"CREATE DYNAMIC TABLE {name} TARGET_LAG = '1 minute'"
                f" REFRESH_MODE = INCREMENTAL AS {query}"
            )
            mode = dt.sql(f"SHOW DYNAMIC TABLES LIKE '{name}'").collect()[0].refresh_mode
            assert mode == "INCREMENTAL", name
        session = dt.engine.session
        session.conf.set("spark.databricks.delta.retentionDurationCheck.enabled", "false")
        for number, batch in enumerate(batches):
            for statement in batch:
                dt.sql(statement)
            for name, query in queries.items():  # upstream (paid) before per_customer
                refreshed = dt.sql(f"ALTER DYNAMIC TABLE {name} REFRESH").collect()[0]
                assert refreshed.action in ("INCREMENTAL", "NO_DATA"), (name, refreshed)
                assert _rows(dt, f"SELECT * FROM {name}") == _rows(dt, query), name
            chosen = maintenance[number % len(maintenance)] if maintenance else ""
            for name in [*queries, "orders", "customers"] if chosen else []:
                session.sql(chosen.format(t=name))


@settings(max_examples=_EXAMPLES)
@given(batches=changes)
def test_every_refresh_is_incremental_and_equals_the_query(batches: list[list[str]]) -> None:
    _check_every_refresh(QUERIES, batches)


@settings(max_examples=_EXAMPLES)
@given(batches=changes)
def test_keyed_operators_refresh_incrementally_and_equal_the_query(
    batches: list[list[str]],
) -> None:
    _check_every_refresh(KEYED_QUERIES, batches)


@settings(max_examples=_EXAMPLES)
@given(batches=changes)
def test_ranking_windows_refresh_in_place_and_equal_the_query(batches: list[list[str]]) -> None:
    _check_every_refresh(RANKING_QUERIES, batches)


@settings(max_examples=_EXAMPLES)
@given(batches=appends)
def test_appends_merge_into_groups_and_equal_the_query(batches: list[list[str]]) -> None:
    merged = {
        "per_customer": "SELECT customer_id, count(*) AS n, sum(amount) AS total FROM orders"
        " GROUP BY customer_id",
        "by_status": KEYED_QUERIES["by_status"],
        "pairs": QUERIES["pairs"],
        # Outer joins: orders preserved (appended as they come), or padded (merged).
        "with_region": KEYED_QUERIES["with_region"],
        "customer_lines": KEYED_QUERIES["customer_lines"],
        "status_peers": KEYED_QUERIES["status_peers"],
        "customer_orders": KEYED_QUERIES["customer_orders"],
    }
    _check_every_refresh(merged, batches)


# What runs on every table after a batch's refreshes: dynamic tables on Delta mark the rows
# a refresh removes in deletion vectors, which OPTIMIZE and REORG purge and VACUUM cleans.
MAINTENANCE = st.lists(
    st.sampled_from(
        ["", "OPTIMIZE {t}", "REORG TABLE {t} APPLY (PURGE)", "VACUUM {t} RETAIN 0 HOURS"]
    ),
    min_size=1,
    max_size=3,
)


@settings(max_examples=_EXAMPLES)
@given(batches=changes, maintenance=MAINTENANCE)
def test_refreshes_with_deletion_vectors_purged_and_vacuumed_equal_the_query(
    batches: list[list[str]], maintenance: list[str]
) -> None:
    chosen = {name: QUERIES[name] for name in ("paid", "pairs", "per_customer", "all_paid")}
    chosen["by_status"] = KEYED_QUERIES["by_status"]
    _check_every_refresh(chosen, batches, maintenance)
