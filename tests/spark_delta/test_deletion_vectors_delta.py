"""Deletion vectors both ways between sparkshim and Delta on Spark (skipped where the jars
are absent: Maven is unreachable here, so this file has not run here): a table sparkshim
writes with vectors reads the same on Spark at every version, and a table Delta on Spark
writes with vectors (DELETE, UPDATE, MERGE) reads the same on sparkshim at every version."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from sparkshim.session import ShimSession

pytestmark = pytest.mark.spark_delta

STATEMENTS = [
    "DELETE FROM {t} WHERE k % 10 = 3",
    "UPDATE {t} SET v = v + 1 WHERE k % 10 = 4",
    "MERGE INTO {t} USING (SELECT CAST(id * 7 AS INT) AS k, 'm' AS g, 0.5D AS v FROM range(30))"
    " AS s ON {t}.k = s.k WHEN MATCHED THEN DELETE WHEN NOT MATCHED THEN INSERT *",
    "MERGE INTO {t} USING (SELECT CAST(id * 5 AS INT) AS k, 'n' AS g, 1.5D AS v FROM range(30))"
    " AS s ON {t}.k = s.k WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *",
]
CREATE = (
    "CREATE TABLE {t} (k INT, g STRING, v DOUBLE) USING delta {location}"
    " TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')"
)
FILL = "INSERT INTO {t} SELECT CAST(id AS INT), CAST(id % 7 AS STRING), id / 4.0 FROM range(300)"


def multiset(rows: list[dict[str, Any]]) -> Counter[str]:
    return Counter(json.dumps(row, sort_keys=True, default=str) for row in rows)


def read(session: Any, sql: str) -> Counter[str]:
    return multiset([row.asDict() for row in session.sql(sql).collect()])


def test_tables_sparkshim_writes_read_the_same_on_spark(
    delta_spark: SparkSession, tmp_path: Path
) -> None:
    shim = ShimSession(warehouse=str(tmp_path / "warehouse"))
    shim.sql(CREATE.format(t="t", location=""))
    shim.sql(FILL.format(t="t"))
    for statement in STATEMENTS:
        shim.sql(statement.format(t="t"))
    path = tmp_path / "warehouse" / "t"
    versions = len(list((path / "_delta_log").glob("*.json")))
    for version in range(versions):
        ours = read(shim, f"SELECT * FROM t VERSION AS OF {version}")
        spark = read(delta_spark, f"SELECT * FROM delta.`{path}` VERSION AS OF {version}")
        assert ours == spark, version


def test_tables_spark_writes_read_the_same_on_sparkshim(
    delta_spark: SparkSession, tmp_path: Path
) -> None:
    path = tmp_path / "warehouse" / "t"
    delta_spark.sql(CREATE.format(t="spark_written", location=f"LOCATION '{path}'"))
    delta_spark.sql(FILL.format(t="spark_written"))
    for statement in STATEMENTS:
        delta_spark.sql(statement.format(t="spark_written"))
    shim = ShimSession(warehouse=str(tmp_path / "warehouse"))  # a folder there is a table
    versions = len(list((path / "_delta_log").glob("*.json")))
    for version in range(versions):
        spark = read(delta_spark, f"SELECT * FROM spark_written VERSION AS OF {version}")
        assert read(shim, f"SELECT * FROM t VERSION AS OF {version}") == spark, version
    # sparkshim's own statements on Spark's vectors, read back by Spark.
    shim.sql("DELETE FROM t WHERE k % 10 = 5")
    assert read(delta_spark, "SELECT * FROM spark_written") == read(shim, "SELECT * FROM t")
