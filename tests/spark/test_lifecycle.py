"""The lifecycle scenario on real Spark with Apache Iceberg (PySpark 3.5, Iceberg 1.10.2)."""

from __future__ import annotations

import itertools

import pytest
from lifecycle_scenario import Env, LifecycleScenario
from pyspark.sql import SparkSession

from dyntables import DynamicTables

pytestmark = pytest.mark.spark

_databases = itertools.count()


class TestIcebergLifecycle(LifecycleScenario):
    @pytest.fixture
    def env(self, iceberg_spark: SparkSession) -> Env:
        database = f"shop_{next(_databases)}"
        dt = DynamicTables(iceberg_spark)
        assert dt.engine.table_format.name == "iceberg"  # detected from the session
        iceberg_spark.sql(f"CREATE DATABASE {database}")
        iceberg_spark.sql(f"USE {database}")
        self.session = iceberg_spark
        return Env(dt=dt, database=database, using="iceberg")

    def new_dynamic_tables(self, env: Env) -> DynamicTables:
        return DynamicTables(self.session, table_format="iceberg")
