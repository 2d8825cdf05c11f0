"""How the shim reads a Delta snapshot: a direct scan of its parquet files where they alone
hold the rows, the materialized snapshot otherwise; either way the rows Delta defines."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake
from pyspark.sql import Row

from sparkshim import delta
from sparkshim.session import ShimSession

pytestmark = pytest.mark.embedded


@pytest.fixture
def spark(tmp_path: Path) -> ShimSession:
    return ShimSession(warehouse=tmp_path / "warehouse")


def test_a_column_added_after_a_file_was_written_reads_as_null(
    spark: ShimSession, tmp_path: Path
) -> None:
    spark.sql("CREATE TABLE t (id BIGINT) USING delta")
    spark.sql("INSERT INTO t VALUES (1)")
    location = tmp_path / "warehouse" / "t"
    later = pa.table({"id": pa.array([2], pa.int64()), "note": ["new"]})
    write_deltalake(str(location), later, mode="append", schema_mode="merge")
    assert delta.plain_data_files(DeltaTable(str(location))) is not None
    rows = spark.sql("SELECT id, note FROM t ORDER BY id").collect()
    assert rows == [Row(id=1, note=None), Row(id=2, note="new")]
    assert spark.sql("SELECT * FROM t").columns == ["id", "note"]


def test_a_partitioned_table_reads_its_partition_columns(spark: ShimSession) -> None:
    spark.sql("CREATE TABLE p (id INT, day STRING) USING delta PARTITIONED BY (day)")
    spark.sql("INSERT INTO p VALUES (1, 'mon'), (2, 'tue'), (3, NULL)")
    rows = spark.sql("SELECT day, id FROM p ORDER BY id").collect()
    assert rows == [Row(day="mon", id=1), Row(day="tue", id=2), Row(day=None, id=3)]


def test_an_empty_table_and_an_old_version_read_right(spark: ShimSession) -> None:
    spark.sql("CREATE TABLE t (id INT) USING delta")
    assert spark.sql("SELECT count(*) AS n FROM t").collect() == [Row(n=0)]
    spark.sql("INSERT INTO t VALUES (1)")
    spark.sql("DELETE FROM t WHERE id = 1")
    assert spark.sql("SELECT id FROM t VERSION AS OF 1").collect() == [Row(id=1)]
    assert spark.sql("SELECT id FROM t").collect() == []


def test_a_query_leaves_nothing_registered_behind(spark: ShimSession) -> None:
    spark.sql("CREATE TABLE t (id INT) USING delta")
    spark.sql("INSERT INTO t VALUES (1), (2)")
    spark.createDataFrame([(1,)], "id INT").createOrReplaceTempView("v")
    spark.sql("SELECT * FROM t JOIN v USING (id)").collect()
    with pytest.raises(Exception, match="UNRESOLVED_COLUMN"):
        spark.sql("SELECT missing FROM t").collect()
    leftovers = spark.cursor().sql(
        "SELECT view_name FROM duckdb_views() WHERE view_name LIKE '__shim_%'"
    )
    assert leftovers.fetchall() == []


def test_files_storing_a_column_in_other_types_read_in_the_table_types(
    spark: ShimSession, tmp_path: Path
) -> None:
    """Each file's stored types are kept (read once per file); files that disagree are
    read through DuckDB's union of them. Either way the rows come in the table's types."""
    from sparkshim import append

    spark.sql("CREATE TABLE t (id BIGINT, amount DOUBLE) USING delta")
    spark.sql("INSERT INTO t VALUES (1, 1.5)")
    location = tmp_path / "warehouse" / "t"
    assert spark.sql("SELECT sum(id) AS s FROM t").collect() == [Row(s=1)]
    # Another writer stores id as INT and amount as FLOAT.
    narrow = pa.table({"id": pa.array([2], pa.int32()), "amount": pa.array([2.5], pa.float32())})
    add = append.data_file(location, narrow)
    info = append.commit_info(1, {})
    assert delta.put_if_absent(location / "_delta_log", 2, [info, add])
    rows = spark.sql("SELECT id, amount FROM t ORDER BY id")
    assert rows.dtypes == [("id", "bigint"), ("amount", "double")]
    assert [tuple(r) for r in rows.collect()] == [(1, 1.5), (2, 2.5)]
    spark.sql("INSERT INTO t VALUES (3, 3.5)")
    assert spark.sql("SELECT sum(id) AS s, sum(amount) AS a FROM t").collect() == [Row(s=6, a=7.5)]


def test_files_storing_their_columns_in_another_order_are_matched_by_name(
    spark: ShimSession, tmp_path: Path
) -> None:
    """Files that all store the same columns are read without matching each file's
    columns by name (DuckDB then reads only the first footer to bind the scan); a file
    that stores them in another order is matched by name."""
    from sparkshim import append
    from sparkshim.query import parquet_scan

    spark.sql("CREATE TABLE t (id BIGINT, name STRING) USING delta")
    spark.sql("INSERT INTO t VALUES (1, 'a')")
    spark.sql("INSERT INTO t VALUES (2, 'b')")
    location = tmp_path / "warehouse" / "t"
    table = delta.open_table(location)
    schema, files = delta.arrow_schema(table), tuple(delta.plain_data_files(table) or ())
    assert "union_by_name = false" in parquet_scan(spark.cursor(), files, schema)
    reordered = pa.table({"name": ["c"], "id": pa.array([3], pa.int64())})
    info = append.commit_info(2, {})
    assert delta.put_if_absent(
        location / "_delta_log", 3, [info, append.data_file(location, reordered)]
    )
    table = delta.open_table(location)
    files = tuple(delta.plain_data_files(table) or ())
    assert "union_by_name = true" in parquet_scan(spark.cursor(), files, schema)
    rows = spark.sql("SELECT id, name FROM t ORDER BY id").collect()
    assert [tuple(r) for r in rows] == [(1, "a"), (2, "b"), (3, "c")]
