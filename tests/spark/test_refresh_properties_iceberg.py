"""Property test on real Spark with Apache Iceberg: after any batch of source changes, an
incremental refresh leaves every dynamic table equal to its defining query over the current
sources (the oracle: the query itself, run directly), and every refresh is incremental.

The model is tests/embedded/test_refresh_properties.py, cut down to what a real Iceberg
commit costs (0.5-7 s a statement): filters and projections, stars (plain, qualified, in a
CTE and a subquery), UNION ALL of a filter and an
inner join, DISTINCT, a LEFT JOIN whose touched keys' rows are replaced, and a GROUP BY
over another dynamic table (whose changes are then the
changelog of its own refresh commits). The changes include duplicate rows, NULL keys,
updates of join and group keys, and rows moving in and out of filters; each UPDATE and
DELETE rewrites data files (copy-on-write), so the changelogs carry carry-over rows.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lifecycle_scenario import spark_env
from pyspark.sql import SparkSession
from source_changes import source_change

pytestmark = pytest.mark.spark

# In refresh order: ``per_customer`` reads ``paid``.
QUERIES = {
    "paid": "SELECT order_id, customer_id, amount * 2 AS doubled FROM orders"
    " WHERE status <> 'returned'",
    # UNION ALL of a filter and an inner join (one table, as each costs a few commits).
    "paid_or_placed": "SELECT order_id, status AS label FROM orders WHERE status = 'paid'"
    " UNION ALL SELECT o.order_id, c.region FROM orders o"
    " JOIN customers c ON o.customer_id = c.customer_id",
    "pairs": "SELECT DISTINCT customer_id, status FROM orders",
    "per_customer": "SELECT customer_id, count(*) AS n, sum(doubled) AS total FROM paid"
    " GROUP BY customer_id",
    # Stars (a change carries a sign column that a star would pass on twice): plain and
    # qualified, in a CTE and a subquery.
    "all_paid": "SELECT * FROM orders WHERE status = 'paid'",
    "star_mix": "WITH o AS (SELECT * FROM orders) SELECT b.*, c.region"
    " FROM (SELECT * FROM o WHERE amount > 100) b JOIN customers c"
    " ON b.customer_id = c.customer_id",
    # A keyed outer join whose key is an output column: the touched keys' rows replaced.
    "customer_lines": "SELECT o.customer_id, o.order_id, c.region FROM orders o"
    " LEFT JOIN customers c ON o.customer_id = c.customer_id",
}

# Each example creates its dynamic tables and refreshes each after every batch, on real
# Iceberg commits: two short examples in CI, many more under HYPOTHESIS_PROFILE=long.
_LONG = os.environ.get("HYPOTHESIS_PROFILE", "ci") != "ci"
_EXAMPLES = 25 if _LONG else 2
_BATCHES = 3 if _LONG else 2
_STATEMENTS = 4 if _LONG else 3

changes = st.lists(
    st.lists(
        source_change(max_order_id=5),
        min_size=1,
        max_size=_STATEMENTS,
    ),
    min_size=1,
    max_size=_BATCHES,
)


@settings(max_examples=_EXAMPLES)
@given(batches=changes)
def test_every_refresh_is_incremental_and_equals_the_query(
    iceberg_spark: SparkSession, batches: list[list[str]]
) -> None:
    env = spark_env(iceberg_spark, "iceberg")  # a database of its own for each example
    env.sql(
        "CREATE TABLE orders (order_id INT, customer_id INT, amount DECIMAL(8, 2), status STRING)"
        " USING iceberg"
    )
    env.sql("CREATE TABLE customers (customer_id INT, region STRING) USING iceberg")
    env.sql("INSERT INTO customers VALUES (1, 'north'), (2, 'south'), (3, NULL)")
    env.sql(
        "INSERT INTO orders VALUES (1, 1, 110.00, 'paid'), (2, 2, 5.00, 'open'),"
        " (2, 2, 5.00, 'open'), (3, NULL, 150.00, 'paid')"
    )
    for name, query in QUERIES.items():
        env.sql(
            f"CREATE DYNAMIC TABLE {name} TARGET_LAG = '1 minute'"
            f" REFRESH_MODE = INCREMENTAL AS {query}"
        )
        assert env.show(name)["refresh_mode"] == "INCREMENTAL", name
    for batch in batches:
        for statement in batch:
            env.sql(statement)
        for name, query in QUERIES.items():  # upstream (paid) before per_customer
            refreshed = env.sql(f"ALTER DYNAMIC TABLE {name} REFRESH").collect()[0]
            assert refreshed.action in ("INCREMENTAL", "NO_DATA"), (name, refreshed)
            assert env.rows(f"SELECT * FROM {name}") == env.rows(query), name
