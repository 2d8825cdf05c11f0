"""The lifecycle scenario on real Spark with Delta Lake (skipped where the jars are absent)."""

from __future__ import annotations

import pytest
from lifecycle_scenario import Env, LifecycleScenario, spark_env
from pyspark.sql import SparkSession

from dyntables import DynamicTables

pytestmark = pytest.mark.spark_delta


class TestDeltaLifecycle(LifecycleScenario):
    @pytest.fixture
    def env(self, delta_spark: SparkSession) -> Env:
        self.session = delta_spark
        return spark_env(delta_spark, "delta")

    def new_dynamic_tables(self, env: Env) -> DynamicTables:
        return DynamicTables(self.session, table_format="delta")
