"""Crashes and concurrent refreshers on real Spark with Apache Iceberg: the reliability
harness's workload and invariants (tests/reliability), in a small profile.

* one round of two ``DynamicTables`` on the tier's session refreshing and compacting the
  same tables from two threads while the test lands source changes;
* four kills of a child process that starts its own Spark on the same Hadoop catalog and
  refreshes, its driver and JVM SIGKILLed together: twice at a random moment after its
  first refresh starts, once right after a refresh's publish (``fast_forward``, before the
  history row), once right after a staged WAP write (before its publish).
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from pyspark.sql import SparkSession
from reliability.report import publish, violation_report
from reliability.spark_tier import concurrent_round, kill_trials, prepare

pytestmark = pytest.mark.spark


def child_arguments(spark: SparkSession) -> list[str]:
    """Where a child process finds the same catalog: ``start_iceberg_spark``'s scratch."""
    catalog = spark.conf.get("spark.sql.defaultCatalog")
    warehouse = str(spark.conf.get(f"spark.sql.catalog.{catalog}.warehouse"))
    return ["--scratch", str(Path(warehouse.removeprefix("file:")).parent)]


def test_concurrent_refreshers_on_iceberg(
    iceberg_spark: SparkSession, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    seed = random.SystemRandom().randrange(1 << 31)
    run = prepare(iceberg_spark, "iceberg", random.Random(seed), child_arguments(iceberg_spark))
    figures, violations = concurrent_round(run)
    report = {"seed": seed, "rounds": 1, **figures.to_json()}
    publish(request.config, "iceberg: concurrency round", report, tmp_path / "round.json")
    assert not violations.distinct, violation_report(violations.distinct, violations.seen)


def test_sigkills_of_a_refreshing_spark_process_on_iceberg(
    iceberg_spark: SparkSession, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    seed = random.SystemRandom().randrange(1 << 31)
    run = prepare(iceberg_spark, "iceberg", random.Random(seed), child_arguments(iceberg_spark))
    figures, violations = kill_trials(run, tmp_path / "children")
    publish(
        request.config,
        "iceberg: kills",
        {"seed": seed, **figures.to_json()},
        tmp_path / "kills.json",
    )
    assert not violations.distinct, violation_report(violations.distinct, violations.seen)
    assert figures.kills_done == figures.kills_planned
