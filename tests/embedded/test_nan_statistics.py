"""A floating-point NaN in a table's data files: every way sparkshim writes a file, then
the comparisons and aggregates whose answer DuckDB would take from the file's min/max
(which leave NaN out) answer as Spark does, where NaN is above every value.

The expected answers are PySpark's over the same rows as an in-memory relation (no file,
no statistics)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from sparkshim import ShimSession
from sparkshim.delta import open_table

pytestmark = pytest.mark.embedded

ROWS = (
    "(1, 1.5D, CAST(1.5 AS FLOAT)), (2, CAST('NaN' AS DOUBLE), CAST('NaN' AS FLOAT)),"
    " (3, -2.0D, -2.0F)"
)
# A comparison DuckDB folds from the bounds, and filters it skips a file by.
QUERIES = [
    "SELECT id, x <= 9 AS a, x > 9 AS b, f <= 9 AS c, x = x AS d FROM t",
    "SELECT count(*) AS n FROM t WHERE x > 9",
    "SELECT count(*) AS n FROM t WHERE f <> 1.5",
    "SELECT count(*) AS n FROM t WHERE x >= 1.5 AND x < 1e300",
    "SELECT max(x) AS hi, min(x) AS lo, max(f) AS fhi FROM t",
]


def _insert(spark: ShimSession) -> None:
    spark.sql(f"INSERT INTO t VALUES {ROWS}")


def _insert_many(spark: ShimSession) -> None:
    # Above sparkshim.append.MAX_ROWS: delta-rs writes the file.
    spark.sql(f"INSERT INTO t VALUES {ROWS}")
    spark.sql("INSERT INTO t SELECT id + 10, 1.0D, 1.0F FROM range(150000)")
    spark.sql("INSERT INTO t SELECT id + 1000000, CAST('NaN' AS DOUBLE), 0.5F FROM range(150000)")
    spark.sql("DELETE FROM t WHERE id >= 10")


def _update(spark: ShimSession) -> None:
    # A row-level commit marks the old rows and writes the new ones in one file (and a
    # change file).
    spark.sql("ALTER TABLE t SET TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')")
    spark.sql("INSERT INTO t VALUES (1, 0.0D, 0.0F), (2, 0.0D, 0.0F), (3, -2.0D, -2.0F)")
    spark.sql(
        "UPDATE t SET x = CASE WHEN id = 1 THEN 1.5D ELSE CAST('NaN' AS DOUBLE) END,"
        " f = CASE WHEN id = 1 THEN 1.5F ELSE CAST('NaN' AS FLOAT) END WHERE id <= 2"
    )


def _rewrite(spark: ShimSession) -> None:
    # Without deletion vectors a row-level commit rewrites the files holding the rows it
    # changes (delta-rs's MERGE), copying their other rows: the NaN is copied, not written
    # by the statement.
    spark.sql(
        "INSERT INTO t VALUES (1, 0.0D, 0.0F), (2, CAST('NaN' AS DOUBLE), CAST('NaN' AS FLOAT)),"
        " (3, -2.0D, -2.0F)"
    )
    spark.sql("UPDATE t SET x = 1.5D, f = CAST(1.5 AS FLOAT) WHERE id = 1")


def _optimize(spark: ShimSession) -> None:
    spark.sql("INSERT INTO t VALUES (1, 1.5D, CAST(1.5 AS FLOAT))")
    spark.sql("INSERT INTO t VALUES (2, CAST('NaN' AS DOUBLE), CAST('NaN' AS FLOAT))")
    spark.sql("INSERT INTO t VALUES (3, -2.0D, -2.0F)")
    spark.sql("OPTIMIZE t")


def _overwrite(spark: ShimSession) -> None:
    spark.sql("INSERT INTO t VALUES (9, 9.0D, 9.0F)")
    spark.sql(f"INSERT OVERWRITE t VALUES {ROWS}")


WRITES: dict[str, Callable[[ShimSession], None]] = {
    "insert": _insert,
    "insert_many": _insert_many,
    "update": _update,
    "rewrite": _rewrite,
    "optimize": _optimize,
    "overwrite": _overwrite,
}


@pytest.mark.parametrize("write", list(WRITES))
def test_a_nan_in_the_files_is_above_every_value(
    tmp_path: Path, pyspark_session: SparkSession, write: str
) -> None:
    spark = ShimSession(warehouse=tmp_path / "warehouse")
    spark.sql("CREATE TABLE t (id BIGINT, x DOUBLE, f FLOAT) USING delta")
    spark.sql("ALTER TABLE t SET TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true')")
    WRITES[write](spark)
    pyspark_session.sql(
        f"CREATE OR REPLACE TEMPORARY VIEW t AS SELECT * FROM VALUES {ROWS} AS v(id, x, f)"
    )
    try:
        for query in QUERIES:
            expected = sorted(map(str, pyspark_session.sql(query).collect()))
            assert sorted(map(str, spark.sql(query).collect())) == expected, query
    finally:
        pyspark_session.catalog.dropTempView("t")
    if write == "optimize":  # the rewrite ran (one file left)
        assert len(open_table(tmp_path / "warehouse" / "t").file_uris()) == 1


def test_a_join_on_a_nan_key_refreshes_to_its_query(tmp_path: Path) -> None:
    """NaN equals NaN in a Spark join. An UPDATE of the source rewrote its file with bounds
    that left the NaN out, and the incremental refresh's join of the change with the table
    (DuckDB pushes the change's key range into the scan) missed the NaN rows."""
    from collections import Counter

    from dyntables import DynamicTables

    dt = DynamicTables(warehouse=tmp_path / "warehouse")
    dt.sql("CREATE TABLE s (id INT, x DOUBLE)")
    dt.sql("INSERT INTO s VALUES (1, 0.0), (3, CAST('NaN' AS DOUBLE)), (5, 1.5)")
    query = "SELECT a.id, b.id AS other FROM s a JOIN s b ON a.x = b.x"
    dt.sql(f"CREATE DYNAMIC TABLE j TARGET_LAG = '1 minute' REFRESH_MODE = INCREMENTAL AS {query}")
    for change in (
        "UPDATE s SET x = CAST('NaN' AS DOUBLE) WHERE id = 5",
        "DELETE FROM s WHERE id = 3",
        "UPDATE s SET x = 0.0 WHERE id = 5",
    ):
        dt.sql(change)
        assert dt.sql("ALTER DYNAMIC TABLE j REFRESH").collect()[0].action == "INCREMENTAL"
        held = Counter(tuple(row) for row in dt.sql("SELECT * FROM j").collect())
        assert held == Counter(tuple(row) for row in dt.sql(query).collect()), change
