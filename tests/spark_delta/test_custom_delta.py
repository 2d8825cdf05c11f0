"""Custom incrementalization (seed 003) on real Spark with Delta Lake (skipped where the
jars are absent: Maven is unreachable here, so this file has not run here)."""

from __future__ import annotations

import pytest
from custom_scenario import CustomScenario
from lifecycle_scenario import Env, spark_env
from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark_delta


class TestDeltaCustom(CustomScenario):
    @pytest.fixture
    def env(self, delta_spark: SparkSession) -> Env:
        self.session = delta_spark
        return spark_env(delta_spark, "delta")

    def expire_changes(self, env: Env, table: str) -> None:
        """Vacuum every file the current version does not need (the change data files
        and the data files the update rewrote)."""
        check = "spark.databricks.delta.retentionDurationCheck.enabled"
        self.session.conf.set(check, "false")
        try:
            env.sql(f"VACUUM {table} RETAIN 0 HOURS")
        finally:
            self.session.conf.unset(check)
