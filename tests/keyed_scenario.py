"""Keyed recomputes on every engine tier: a window with PARTITION BY (a ranking window's
rows updated in place), an outer join, a GROUP BY below the top, and outer joins among
other joins on one key (a dbt mart's shape) are refreshed by recomputing the keys a change
touches, restricted by a relation of those keys (a null-safe EXISTS, which each engine runs
as a semi join), and joins on several keys by their last join's key. The changes touch
NULL keys, move rows between keys and delete; the oracle of every refresh is the defining
query itself."""

from __future__ import annotations

from lifecycle_scenario import Env
from statement_counts import counting

QUERIES = {
    "ranked": "SELECT order_id, customer_id,"
    " rank() OVER (PARTITION BY customer_id ORDER BY amount DESC, order_id) AS r FROM orders",
    # Ranking windows: an update that keeps its row where it ranks changes that row only.
    "order_rank": "SELECT order_id, customer_id, amount,"
    " dense_rank() OVER (PARTITION BY customer_id ORDER BY order_id) AS r FROM orders",
    "with_region": "SELECT o.order_id, o.amount, c.region FROM orders o"
    " LEFT JOIN customers c ON o.customer_id = c.customer_id",
    "big_customers": "SELECT t.customer_id, t.total, c.region FROM"
    " (SELECT customer_id, sum(amount) AS total FROM orders GROUP BY customer_id) t"
    " JOIN customers c ON t.customer_id = c.customer_id",
    # A GROUP BY at the top with COUNT(*): change arithmetic decides most groups; one whose
    # MIN or MAX lost its value (moved or deleted, nothing added) is recomputed.
    "extremes": "SELECT customer_id, count(*) AS n, min(amount) AS lo, max(amount) AS hi"
    " FROM orders GROUP BY customer_id",
    # A dbt mart's shape: CTEs with GROUP BYs, two LEFT JOINs on one key in one SELECT.
    "customer_summary": "WITH counts AS (SELECT customer_id, count(*) AS n,"
    " min(order_id) AS first_order FROM orders GROUP BY customer_id),"
    " totals AS (SELECT customer_id, sum(amount) AS total FROM orders GROUP BY customer_id)"
    " SELECT c.customer_id, c.region, counts.n, counts.first_order, totals.total"
    " FROM customers c LEFT JOIN counts ON c.customer_id = counts.customer_id"
    " LEFT JOIN totals ON totals.customer_id = c.customer_id",
    # Joins on several keys: the last join, on another key than the earlier one's, is
    # recomputed for its keys (seed 002's factoring), its prefix by its own rules; the key
    # read from a side the earlier LEFT JOIN pads with NULLs, and an inner last join.
    "region_peers": "SELECT o.order_id, c.region, r.customer_id AS peer FROM orders o"
    " LEFT JOIN customers c ON o.customer_id = c.customer_id"
    " LEFT JOIN customers r ON r.region = c.region",
    "same_amount": "SELECT o.order_id, c.region, p.order_id AS twin FROM orders o"
    " LEFT JOIN customers c ON o.customer_id = c.customer_id"
    " JOIN orders p ON p.amount = o.amount",
    # A last FULL join: a row's key from whichever side it has.
    "region_pairs": "SELECT o.order_id, c.region, r.customer_id AS peer FROM orders o"
    " LEFT JOIN customers c ON o.customer_id = c.customer_id"
    " FULL JOIN customers r ON r.region = c.region",
}

CHANGES = (
    "INSERT INTO orders VALUES (10, NULL, 3.00), (11, 12, 8.00), (12, 10, 1.00)",
    "UPDATE orders SET customer_id = 12 WHERE order_id = 1",
    "UPDATE customers SET region = 'south' WHERE customer_id = 11",
    "INSERT INTO customers VALUES (12, 'east'), (NULL, 'nowhere')",
    "DELETE FROM orders WHERE order_id = 3",
    "UPDATE orders SET amount = 9.00 WHERE order_id IN (2, 4)",
)


def run_keyed_recomputes(env: Env) -> None:
    env.source(
        "orders",
        "order_id BIGINT, customer_id BIGINT, amount DECIMAL(10, 2)",
        "(1, 10, 20.00), (2, 10, 5.50), (3, 11, 7.25), (4, NULL, 2.00), (5, 11, 7.25)",
    )
    env.source("customers", "customer_id BIGINT, region STRING", "(10, 'north'), (11, 'west')")
    for name, query in QUERIES.items():
        env.sql(
            f"CREATE DYNAMIC TABLE {name} TARGET_LAG = '1 minute' REFRESH_MODE = INCREMENTAL"
            f" AS {query}"
        )
    for change in CHANGES:
        env.sql(change)
        for name, query in QUERIES.items():
            refreshed = env.sql(f"ALTER DYNAMIC TABLE {name} REFRESH").collect()[0]
            assert refreshed.action in ("INCREMENTAL", "NO_DATA"), (name, change, refreshed)
            assert env.rows(f"SELECT * FROM {name}") == env.rows(query), (name, change)


# Queries over a source with columns they do not read (``note``; ``score`` is read by the
# last two only, a DOUBLE): an update of those columns changes nothing they compute.
UNREAD_QUERIES = {
    # A DOUBLE sum: a group that loses a value is recomputed from the source.
    "double_totals": "SELECT customer_id, sum(score) AS total, count(*) AS n FROM orders"
    " GROUP BY customer_id",
    "ranked_orders": "SELECT order_id, customer_id, score,"
    " rank() OVER (PARTITION BY customer_id ORDER BY order_id) AS r FROM orders",
    "regions": "SELECT c.customer_id, c.region, t.n FROM customers c LEFT JOIN"
    " (SELECT customer_id, count(*) AS n FROM orders GROUP BY customer_id) t"
    " ON t.customer_id = c.customer_id",
    "placed": "SELECT order_id, customer_id FROM orders WHERE customer_id IS NOT NULL",
    "scores": "SELECT DISTINCT customer_id, score FROM orders",
}
# Each change, and whether no refresh after it may read a source (it sets only columns no
# query reads, of a source whose change every query recomputes by key).
UNREAD_CHANGES = (
    ("UPDATE orders SET note = 'checked' WHERE order_id <= 3", True),
    # The customers are the LEFT JOIN's preserved side: their change is linear (joined to
    # the orders' counts, however small it is), not a recompute.
    ("UPDATE customers SET contact = 'x@y.z' WHERE customer_id = 10", False),
    # A row deleted and inserted again, equal on every column but the note.
    ("DELETE FROM orders WHERE order_id = 4", False),
    ("INSERT INTO orders VALUES (4, NULL, 2.5, 'again')", False),
    # 0.0 and -0.0 are equal, but a query shows them apart.
    ("UPDATE orders SET score = -0.0 WHERE order_id = 5", False),
    ("UPDATE orders SET note = NULL, score = 1.5 WHERE order_id = 2", False),
    ("UPDATE orders SET note = 'moved', customer_id = 11 WHERE order_id = 1", False),
)


def run_unread_column_updates(env: Env) -> None:
    """Refreshes after updates of columns their queries do not read recompute nothing:
    no statement reads a source (only change feeds), and the tables still equal their
    queries; other changes beside them refresh as usual."""
    env.source(
        "orders",
        "order_id BIGINT, customer_id BIGINT, score DOUBLE, note STRING",
        "(1, 10, 20.0, 'a'), (2, 10, 5.5, NULL), (3, 11, 7.25, 'b'), (4, NULL, 2.5, 'c'),"
        " (5, 11, 0.0, 'd')",
    )
    env.source(
        "customers",
        "customer_id BIGINT, region STRING, contact STRING",
        "(10, 'north', NULL), (11, 'west', 'w@x.y')",
    )
    for name, query in UNREAD_QUERIES.items():
        env.sql(
            f"CREATE DYNAMIC TABLE {name} TARGET_LAG = '1 minute' REFRESH_MODE = INCREMENTAL"
            f" AS {query}"
        )
    for change, unread_only in UNREAD_CHANGES:
        env.sql(change)
        for name, query in UNREAD_QUERIES.items():
            with counting(env.dt) as statements:
                refreshed = env.sql(f"ALTER DYNAMIC TABLE {name} REFRESH").collect()[0]
            assert refreshed.action in ("INCREMENTAL", "NO_DATA"), (name, change, refreshed)
            if unread_only:
                reads = [s for s in statements if "VERSION AS OF" in s.upper()]
                assert not reads, (name, change, reads)
            assert env.rows(f"SELECT * FROM {name}") == env.rows(query), (name, change)


def run_unread_columns_of_every_type(env: Env) -> None:
    """A window's change feed netted on read columns of nested, binary, timestamp and
    floating types (each engine must partition by them), beside an unread one: the table
    equals its query after updates of the unread column, of a DOUBLE from -0.0 to 0.0, of
    an array, and a delete."""
    env.source(
        "items",
        "k INT, g INT, tags ARRAY<STRING>, st STRUCT<a: INT, b: STRING>, bin BINARY,"
        " ts TIMESTAMP, x DOUBLE, note STRING",
        "(1, 1, array('a', NULL), named_struct('a', 1, 'b', 'x'), X'01',"
        " TIMESTAMP'2024-01-01 00:00:00', -0.0, 'n'),"
        " (2, 1, array(), named_struct('a', NULL, 'b', 'y'), NULL, NULL, 1.5, 'm'),"
        " (3, 2, NULL, NULL, X'02', TIMESTAMP'2024-01-02 00:00:00', NULL, NULL)",
    )
    query = (
        "SELECT k, g, st.a AS sa, st.b AS sb, size(tags) AS n, hex(bin) AS h, ts, x,"
        " rank() OVER (PARTITION BY g ORDER BY k) AS r FROM items"
        " WHERE tags IS NULL OR size(tags) < 3"
    )
    env.sql(
        f"CREATE DYNAMIC TABLE typed_items TARGET_LAG = '1 minute'"
        f" REFRESH_MODE = INCREMENTAL AS {query}"
    )
    for change in (
        "UPDATE items SET note = 'z' WHERE k <= 2",
        "UPDATE items SET x = 0.0 WHERE k = 1",
        "UPDATE items SET tags = array('b') WHERE k = 2",
        "DELETE FROM items WHERE k = 3",
    ):
        env.sql(change)
        refreshed = env.sql("ALTER DYNAMIC TABLE typed_items REFRESH").collect()[0]
        assert refreshed.action in ("INCREMENTAL", "NO_DATA"), (change, refreshed)
        assert env.rows("SELECT * FROM typed_items") == env.rows(query), change


# Outer joins whose equality compares a STRING with a number or a DATE: Spark compares them
# in the other type ('01' = 1, '2024-1-3' = DATE'2024-01-03'); each input restricted to the
# touched keys must be compared so too, or a row matched by another spelling of the key is
# recomputed padded with NULLs (found by the refresh fuzzer).
MIXED_KEY_QUERIES = {
    "left_int": "SELECT a.id AS aid, b.id AS bid, b.v FROM a LEFT JOIN b ON a.k = b.g",
    "right_int": "SELECT a.id AS aid, b.id AS bid, b.v FROM a RIGHT JOIN b ON a.k = b.g",
    "full_int": "SELECT a.id AS aid, b.id AS bid, b.v FROM a FULL JOIN b ON a.k = b.g",
    "left_date": "SELECT a.id AS aid, b.id AS bid FROM b LEFT JOIN a ON b.g = a.d",
    # One key class over an INT, a STRING (grouped in a derived table) and a DECIMAL.
    "three_types": "SELECT a.id AS aid, s.n AS n, c.n AS cn FROM a"
    " LEFT JOIN (SELECT g, count(*) AS n FROM b GROUP BY g) s ON s.g = a.k"
    " LEFT JOIN c ON c.k = a.k",
}
# Both sides change in one refresh (the touched keys are then a STRING), and alone.
MIXED_KEY_CHANGES = (
    ("INSERT INTO a VALUES (3, 1, DATE'2024-01-03')", "INSERT INTO b VALUES (6, '7', 'v')"),
    ("INSERT INTO a VALUES (7, 2, DATE'2024-01-02')",),
    ("INSERT INTO b VALUES (4, '1', 'w'), (5, '2024-01-03', 'u')",),
    ("UPDATE b SET g = '3' WHERE id = 2",),
    ("DELETE FROM a WHERE id = 1",),
    ("INSERT INTO c VALUES (3, 2.0, 'r')", "UPDATE a SET k = 3 WHERE id = 2"),
    ("DELETE FROM b WHERE id = 4",),
)


def run_mixed_type_join_keys(env: Env, names: tuple[str, ...] = tuple(MIXED_KEY_QUERIES)) -> None:
    env.source(
        "a", "id BIGINT, k INT, d DATE", "(1, 1, DATE'2024-01-02'), (2, 2, DATE'2024-01-03')"
    )
    env.source(
        "b", "id BIGINT, g STRING, v STRING", "(1, '01', 'x'), (2, ' 2', 'y'), (3, '2024-1-3', 'z')"
    )
    env.source("c", "id BIGINT, k DECIMAL(5, 1), n STRING", "(1, 1.0, 'p'), (2, 3.0, 'q')")
    for name in names:
        env.sql(
            f"CREATE DYNAMIC TABLE {name} TARGET_LAG = '1 minute' REFRESH_MODE = INCREMENTAL"
            f" AS {MIXED_KEY_QUERIES[name]}"
        )
    for change in MIXED_KEY_CHANGES:
        for statement in change:
            env.sql(statement)
        for name in names:
            refreshed = env.sql(f"ALTER DYNAMIC TABLE {name} REFRESH").collect()[0]
            assert refreshed.action in ("INCREMENTAL", "NO_DATA"), (name, change, refreshed)
            query = MIXED_KEY_QUERIES[name]
            assert env.rows(f"SELECT * FROM {name}") == env.rows(query), (name, change)
