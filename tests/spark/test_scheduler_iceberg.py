"""The scheduler on real Spark with Iceberg: one tick refreshes a two-level chain upstream
first at one data timestamp, and the lease admits one holder at a time."""

from __future__ import annotations

import collections
import datetime
import time

import pytest
from lifecycle_scenario import spark_env
from pyspark.sql import SparkSession
from scheduler_sim import SimClock

from dyntables.scheduler.core import Scheduler
from dyntables.scheduler.lease import Lease

pytestmark = pytest.mark.spark


def test_a_tick_refreshes_the_chain_upstream_first_at_one_data_timestamp(
    iceberg_spark: SparkSession,
) -> None:
    env = spark_env(iceberg_spark, "iceberg")
    env.source("src", "id BIGINT", "(1), (2)")
    env.sql("CREATE DYNAMIC TABLE level1 TARGET_LAG = '10 seconds' AS SELECT id FROM src")
    env.sql(
        "CREATE DYNAMIC TABLE level2 TARGET_LAG = '20 seconds' AS SELECT count(*) AS n FROM level1"
    )
    env.sql("INSERT INTO src VALUES (3)")
    while time.time() % 12 > 11:  # keep clear of a tick boundary
        time.sleep(0.2)
    tick = (time.time() // 12 + 1) * 12  # the next tick of both periods (6 s and 12 s)
    while time.time() <= tick:
        time.sleep(0.1)
    report = Scheduler(
        env.dt.scheduler_runner(),
        SimClock(tick),
    ).run_due()
    assert report is not None
    assert report.data_timestamp == tick
    # The scheduler keeps the whole catalog, where earlier test modules left dynamic tables
    # of their own: this test looks at its database's.
    ours = {
        name: outcome
        for name, outcome in report.outcomes.items()
        if name.startswith(f"{env.database}.")
    }
    assert list(ours) == [f"{env.database}.level1", f"{env.database}.level2"]
    assert {o.state for o in ours.values()} == {"SUCCEEDED"}
    assert env.rows("SELECT n FROM level2") == collections.Counter({(3,): 1})
    stamps = {
        row[0]: row[1]
        for row in env.sql(
            "SELECT name, data_timestamp FROM information_schema.dynamic_table_refresh_history()"
            f" WHERE refresh_trigger = 'SCHEDULED' AND schema_name = '{env.database}'"
        ).collect()
    }
    expected = datetime.datetime.fromtimestamp(tick, datetime.timezone.utc).replace(tzinfo=None)
    assert stamps == {"level1": expected, "level2": expected}


def test_the_lease_admits_one_holder_at_a_time(iceberg_spark: SparkSession) -> None:
    env = spark_env(iceberg_spark, "iceberg")
    clock = SimClock(time.time())
    first = Lease(env.dt.engine, env.dt.system, clock, 30, holder="first")
    second = Lease(env.dt.engine, env.dt.system, clock, 30, holder="second")
    assert first.acquire() is None
    holder = second.acquire()
    assert holder is not None
    assert holder.holder == "first"
    first.release()
    assert second.acquire() is None
    second.release()
