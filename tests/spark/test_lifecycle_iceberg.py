"""The lifecycle scenario on real Spark with Apache Iceberg (PySpark 3.5, Iceberg 1.10.2)."""

from __future__ import annotations

import pytest
from lifecycle_scenario import Env, LifecycleScenario, spark_env
from pyspark.sql import SparkSession

from dyntables import DynamicTableError, DynamicTables

pytestmark = pytest.mark.spark


class TestIcebergLifecycle(LifecycleScenario):
    @pytest.fixture
    def env(self, iceberg_spark: SparkSession) -> Env:
        self.session = iceberg_spark
        return spark_env(iceberg_spark, "iceberg")

    def new_dynamic_tables(self, env: Env) -> DynamicTables:
        return DynamicTables(self.session, table_format="iceberg")

    def test_a_session_scoped_udf_is_refused_at_create(self, env: Env) -> None:
        env.source("orders", "order_id BIGINT", "(1), (2)")
        self.session.udf.register("double_it", lambda value: value * 2, "bigint")
        with pytest.raises(DynamicTableError, match="temporary view or function"):
            env.sql(
                "CREATE DYNAMIC TABLE doubled TARGET_LAG = '1 minute'"
                " AS SELECT double_it(order_id) AS twice FROM orders"
            )
        assert not self.session.catalog.tableExists(f"{env.database}.doubled")
