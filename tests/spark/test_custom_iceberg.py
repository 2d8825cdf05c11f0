"""Custom incrementalization (seed 003) on real Spark with Apache Iceberg."""

from __future__ import annotations

import datetime
from collections import Counter

import pytest
from custom_scenario import DELETIONS_LOG, PLAYER_SCORES, CustomScenario
from lifecycle_scenario import Env, spark_env
from pyspark.sql import SparkSession

from dyntables import DynamicTableError

pytestmark = pytest.mark.spark


class TestIcebergCustom(CustomScenario):
    @pytest.fixture
    def env(self, iceberg_spark: SparkSession) -> Env:
        return spark_env(iceberg_spark, "iceberg")

    def expire_changes(self, env: Env, table: str) -> None:
        """Expire every snapshot but the current one: the last refresh's is gone."""
        later = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=1)
        env.sql(
            f"CALL system.expire_snapshots(table => '{env.database}.{table}',"
            f" older_than => TIMESTAMP '{later.strftime('%Y-%m-%d %H:%M:%S')}', retain_last => 1)"
        )


def test_changes_with_default_information_need_a_key(iceberg_spark: SparkSession) -> None:
    env = spark_env(iceberg_spark, "iceberg")
    env.source("users", "id INT, name STRING, email STRING", "(1, 'ann', 'a@x')")
    with pytest.raises(DynamicTableError, match="needs a key") as raised:
        env.sql(DELETIONS_LOG)
    assert "APPEND_ONLY" in str(raised.value)
    assert "PRIMARY KEY" in str(raised.value)
    assert not iceberg_spark.catalog.tableExists(f"{env.database}.dt_deletions_log")


def test_a_source_schema_change_fails_the_refresh(iceberg_spark: SparkSession) -> None:
    env = spark_env(iceberg_spark, "iceberg")
    env.source("match_results", "match_id INT, player_id INT, score INT", "(1, 1, 10)")
    env.sql(PLAYER_SCORES)
    env.sql("ALTER TABLE match_results ADD COLUMN note STRING")
    env.sql("INSERT INTO match_results VALUES (2, 1, 5, 'x')")
    with pytest.raises(DynamicTableError, match="changed its schema") as raised:
        env.sql("ALTER DYNAMIC TABLE dt_player_scores REFRESH")
    assert "CREATE OR REPLACE" in str(raised.value)
    assert [tuple(r) for r in env.sql("SELECT * FROM dt_player_scores").collect()] == [(1, 10)]


def test_a_crash_between_staging_and_publishing_applies_each_change_once(
    iceberg_spark: SparkSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = spark_env(iceberg_spark, "iceberg")
    env.source("match_results", "match_id INT, player_id INT, score INT", "(1, 1, 10)")
    env.sql(PLAYER_SCORES)
    env.sql("INSERT INTO match_results VALUES (2, 1, 5), (2, 2, 7)")
    fmt = env.dt.engine.table_format

    def crash(*args: object) -> None:
        raise RuntimeError("the process stopped before publishing")

    monkeypatch.setattr(fmt, "_publish", crash)
    with pytest.raises(DynamicTableError, match="before publishing"):
        env.sql("ALTER DYNAMIC TABLE dt_player_scores REFRESH")
    monkeypatch.undo()
    assert env.rows("SELECT * FROM dt_player_scores") == Counter([(1, 10)])
    env.sql("ALTER DYNAMIC TABLE dt_player_scores REFRESH")  # the staged snapshot is left
    assert env.rows("SELECT * FROM dt_player_scores") == Counter([(1, 15), (2, 7)])
