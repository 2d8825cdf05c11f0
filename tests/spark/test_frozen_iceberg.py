"""Frozen regions and BACKFILL FROM on real Spark with Apache Iceberg: the refresh of the
active region is a MERGE there (no row-level REPLACE WHERE), and a backfill reads a
snapshot of the source."""

from __future__ import annotations

import pytest
from lifecycle_scenario import Env, spark_env
from pyspark.sql import SparkSession
from sqlglot import exp

pytestmark = pytest.mark.spark

QUERY = "SELECT order_id, order_day, total FROM orders WHERE status <> 'returned'"
ROWS = "(1, 1, 10, 'paid'), (2, 1, 20, 'paid'), (3, 2, 30, 'paid'), (4, 3, 40, 'returned')"


@pytest.fixture
def env(iceberg_spark: SparkSession) -> Env:
    env = spark_env(iceberg_spark, "iceberg")
    env.source("orders", "order_id BIGINT, order_day INT, total INT, status STRING", ROWS)
    return env


@pytest.mark.parametrize("mode", ["INCREMENTAL", "FULL"])
def test_refreshes_touch_only_the_active_region(env: Env, mode: str) -> None:
    env.sql(
        f"CREATE DYNAMIC TABLE days TARGET_LAG = '1 minute' REFRESH_MODE = {mode}"
        f" FROZEN WHERE (order_day <= 1) AS {QUERY}"
    )
    frozen = env.rows("SELECT * FROM days WHERE order_day <= 1")
    env.sql("UPDATE orders SET total = total + 1")
    env.sql("INSERT INTO orders VALUES (5, 1, 50, 'paid'), (6, 4, 60, 'paid')")
    env.sql("DELETE FROM orders WHERE order_id = 3")
    refreshed = env.sql("ALTER DYNAMIC TABLE days REFRESH").collect()[0]
    assert refreshed.action == mode
    assert env.rows("SELECT * FROM days WHERE METADATA$IS_FROZEN") == frozen
    assert env.rows("SELECT * FROM days WHERE NOT METADATA$IS_FROZEN") == env.rows(
        f"SELECT * FROM ({QUERY}) WHERE order_day > 1"
    )


def test_backfill_at_a_snapshot(env: Env) -> None:
    env.source("snapshot", "order_id BIGINT, order_day INT, total INT", "(9, 1, 90)")
    snapshot = env.dt.engine.qualify(exp.to_table("snapshot"))
    version = env.dt.engine.table_format.current_version(env.dt.session, snapshot)
    env.sql("INSERT INTO snapshot VALUES (8, 1, 80)")
    env.sql(
        "CREATE DYNAMIC TABLE days TARGET_LAG = '1 minute' FROZEN WHERE (order_day <= 1)"
        f" BACKFILL FROM snapshot AT (VERSION => {version}) AS {QUERY}"
    )
    assert env.rows("SELECT * FROM days WHERE METADATA$IS_FROZEN") == env.rows(
        "SELECT 9 AS order_id, 1 AS order_day, 90 AS total"
    )
    assert env.rows("SELECT * FROM days WHERE NOT METADATA$IS_FROZEN") == env.rows(
        f"SELECT * FROM ({QUERY}) WHERE order_day > 1"
    )
