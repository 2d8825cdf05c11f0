"""Crashes and concurrent refreshers on real Spark with Delta Lake: the same checks as
tests/spark/test_reliability_iceberg.py (the reliability harness's workload and
invariants, tests/reliability), on the spark_delta tier's session.

Four kills: twice at a random moment after the child's first refresh starts, once right
after a refresh commit (before its history row), once right after a refresh-history
append. Skipped, with the tier's reason, where the Delta jars are absent
(tests/conftest.py).
The child process starts Delta on Spark as the tier does and registers the test's tables
by location: the tier's catalog lives in the test's process.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from pyspark.sql import SparkSession
from reliability.report import publish, violation_report
from reliability.spark_tier import concurrent_round, kill_trials, prepare

pytestmark = pytest.mark.spark_delta


def child_arguments(spark: SparkSession) -> list[str]:
    """Where a child process finds the tables: the session's warehouse folder."""
    warehouse = str(spark.conf.get("spark.sql.warehouse.dir"))
    return ["--warehouse-dir", warehouse.removeprefix("file:")]


def test_concurrent_refreshers_on_delta(
    delta_spark: SparkSession, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    seed = random.SystemRandom().randrange(1 << 31)
    run = prepare(delta_spark, "delta", random.Random(seed), child_arguments(delta_spark))
    figures, violations = concurrent_round(run)
    report = {"seed": seed, "rounds": 1, **figures.to_json()}
    publish(request.config, "delta on spark: concurrency round", report, tmp_path / "round.json")
    assert not violations.distinct, violation_report(violations.distinct, violations.seen)


def test_sigkills_of_a_refreshing_spark_process_on_delta(
    delta_spark: SparkSession, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    seed = random.SystemRandom().randrange(1 << 31)
    run = prepare(delta_spark, "delta", random.Random(seed), child_arguments(delta_spark))
    figures, violations = kill_trials(run, tmp_path / "children")
    report = {"seed": seed, **figures.to_json()}
    publish(request.config, "delta on spark: kills", report, tmp_path / "kills.json")
    assert not violations.distinct, violation_report(violations.distinct, violations.seen)
    assert figures.kills_done == figures.kills_planned
