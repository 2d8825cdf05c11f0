"""Keyed recomputes (tests/keyed_scenario.py) on real Spark with Apache Iceberg."""

from __future__ import annotations

import pytest
from keyed_scenario import (
    run_keyed_recomputes,
    run_mixed_type_join_keys,
    run_unread_column_updates,
    run_unread_columns_of_every_type,
)
from lifecycle_scenario import spark_env
from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark


def test_keyed_recomputes_follow_their_query(iceberg_spark: SparkSession) -> None:
    run_keyed_recomputes(spark_env(iceberg_spark, "iceberg"))


def test_updates_of_unread_columns_recompute_nothing(iceberg_spark: SparkSession) -> None:
    run_unread_column_updates(spark_env(iceberg_spark, "iceberg"))


def test_feeds_netted_on_columns_of_every_type(iceberg_spark: SparkSession) -> None:
    run_unread_columns_of_every_type(spark_env(iceberg_spark, "iceberg"))


def test_outer_joins_on_keys_of_mixed_types(iceberg_spark: SparkSession) -> None:
    # Three of the queries: each refresh on Spark costs seconds.
    run_mixed_type_join_keys(
        spark_env(iceberg_spark, "iceberg"), ("left_int", "full_int", "three_types")
    )
