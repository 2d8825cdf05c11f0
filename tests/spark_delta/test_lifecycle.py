"""The lifecycle scenario on real Spark with Delta Lake (skipped where the jars are absent)."""

from __future__ import annotations

import itertools

import pytest
from lifecycle_scenario import Env, LifecycleScenario
from pyspark.sql import SparkSession

from dyntables import DynamicTables

pytestmark = pytest.mark.spark_delta

_databases = itertools.count()


class TestDeltaLifecycle(LifecycleScenario):
    @pytest.fixture
    def env(self, delta_spark: SparkSession) -> Env:
        database = f"shop_{next(_databases)}"
        dt = DynamicTables(delta_spark)
        assert dt.engine.table_format.name == "delta"  # detected from the session
        delta_spark.sql(f"CREATE DATABASE {database}")
        delta_spark.sql(f"USE {database}")
        self.session = delta_spark
        return Env(dt=dt, database=database, using="delta")

    def new_dynamic_tables(self, env: Env) -> DynamicTables:
        return DynamicTables(self.session, table_format="delta")
