# ruff: noqa: N803 - F and W are the names PySpark code gives functions and Window
"""The DataFrame API of sparkshim against real PySpark 3.5: each case is one function of
(session, functions module, Window) run on both engines over the same rows; the results
must have the same column names, the same Spark types and the same rows."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.errors import AnalysisException
from pyspark.sql import SparkSession
from pyspark.sql import functions as spark_functions
from pyspark.sql.window import Window as SparkWindow

from dyntables import DynamicTables
from sparkshim import sql_functions as shim_functions
from sparkshim.session import ShimSession
from sparkshim.window import Window as ShimWindow

pytestmark = pytest.mark.embedded

PEOPLE = """
    SELECT * FROM VALUES
      (1, 'ann', 'eng', 100.5D, DATE'2024-01-02'),
      (2, 'bob', 'eng', 80.0D, DATE'2023-05-06'),
      (3, 'cy', 'ops', NULL, NULL),
      (4, NULL, 'ops', 55.25D, DATE'2020-02-29'),
      (5, 'dee', NULL, 70.0D, DATE'2024-12-31')
    AS people(id, name, dept, salary, hired)"""
DEPTS = """
    SELECT * FROM VALUES ('eng', 'Engineering', 10), ('ops', 'Operations', 20),
      ('hr', 'People', 30)
    AS depts(dept, title, floor)"""

Case = Callable[[Any, ModuleType, Any], Any]


@pytest.fixture(scope="module")
def engines(
    pyspark_session: SparkSession, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Any, ShimSession]]:
    shim = ShimSession(warehouse=tmp_path_factory.mktemp("shim"))
    for session in (pyspark_session, shim):
        session.sql(PEOPLE).createOrReplaceTempView("people")
        session.sql(DEPTS).createOrReplaceTempView("depts")
    yield pyspark_session, shim
    shim.stop()
    for view in ("people", "depts"):
        pyspark_session.catalog.dropTempView(view)


def _value(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    if isinstance(value, list):
        return [_value(v) for v in value]
    return value


def _rows(frame: Any, ordered: bool) -> list[tuple[Any, ...]]:
    rows = [tuple(_value(v) for v in row) for row in frame.collect()]
    return rows if ordered else sorted(rows, key=repr)


def _schema(frame: Any) -> list[tuple[str, str]]:
    return [(f.name, f.dataType.simpleString()) for f in frame.schema.fields]


def run_both(engines: tuple[Any, ShimSession], case: Case, ordered: bool = False) -> None:
    spark, shim = engines
    expected = case(spark, spark_functions, SparkWindow)
    actual = case(shim, shim_functions, ShimWindow)
    assert _schema(actual) == _schema(expected)
    assert _rows(actual, ordered) == _rows(expected, ordered)


def _people(s: Any) -> Any:
    return s.table("people")


CASES: dict[str, Case] = {
    "select_names_and_star": lambda s, F, W: _people(s).select("*", "name"),
    "select_columns": lambda s, F, W: _people(s).select(
        F.col("id") + 1,
        (F.col("salary") * 1.5).alias("raised"),
        F.lit(2.5),
        F.lit("x"),
        F.lit(None),
        -F.col("id"),
        F.col("id") % 2,
        F.col("id") / 2,
        F.col("salary") > 60,
        (F.col("id") > 1) & ~(F.col("dept") == "ops") | F.col("name").isNull(),
    ),
    "select_by_frame_columns": lambda s, F, W: (lambda df: df.select(df.id, df["name"]))(
        _people(s)
    ),
    "select_expr": lambda s, F, W: _people(s).selectExpr("id * 2 AS twice", "upper(name)"),
    "filter_column": lambda s, F, W: _people(s).filter(F.col("salary") >= 70),
    "where_string": lambda s, F, W: _people(s).where("dept = 'eng' OR name IS NULL"),
    "filter_then_frame_column": lambda s, F, W: (
        lambda df: df.filter(df.id > 1).select(df.name).filter(df.name != "cy")
    )(_people(s)),
    "with_column_new_and_replaced": lambda s, F, W: (
        _people(s).withColumn("bonus", F.col("salary") / 10).withColumn("id", F.col("id") * 100)
    ),
    "with_column_renamed_and_drop": lambda s, F, W: (
        _people(s)
        .withColumnRenamed("name", "who")
        .withColumnRenamed("absent", "x")
        .drop("hired", "absent")
    ),
    "group_by_agg": lambda s, F, W: (
        _people(s)
        .groupBy("dept")
        .agg(
            F.count("*"),
            F.count("name"),
            F.sum("salary"),
            F.avg("salary").alias("mean_salary"),
            F.min("hired"),
            F.max("name"),
            F.countDistinct("name"),
        )
    ),
    "group_by_dict_agg": lambda s, F, W: _people(s).groupBy("dept").agg({"salary": "max"}),
    "grouped_shortcuts": lambda s, F, W: _people(s).groupBy("dept").count(),
    "grouped_sum_avg": lambda s, F, W: _people(s).groupBy(F.col("dept")).avg("salary", "id"),
    "grouped_min_max_all": lambda s, F, W: _people(s).groupBy("dept").max(),
    "global_agg": lambda s, F, W: _people(s).agg(F.sum("id"), F.mean("salary")),
    "order_by": lambda s, F, W: _people(s).orderBy(F.desc("dept"), "id"),
    "sort_ascending_list": lambda s, F, W: _people(s).sort(
        ["dept", "salary"], ascending=[True, False]
    ),
    "order_by_nulls_last": lambda s, F, W: _people(s).orderBy(F.col("salary").asc_nulls_last()),
    "limit": lambda s, F, W: _people(s).orderBy("id").limit(2),
    "distinct": lambda s, F, W: _people(s).select("dept").distinct(),
    "drop_duplicates_all": lambda s, F, W: _people(s).union(_people(s)).dropDuplicates(),
    "drop_duplicates_subset": lambda s, F, W: _people(s).dropDuplicates(["dept"]).select("dept"),
    "union": lambda s, F, W: _people(s).union(_people(s).filter("id < 3")),
    "union_by_name": lambda s, F, W: _people(s).unionByName(
        _people(s).select("salary", "hired", "dept", "name", "id")
    ),
    "union_by_name_missing": lambda s, F, W: (
        _people(s)
        .select("id", "name")
        .unionByName(_people(s).select("dept", "id"), allowMissingColumns=True)
    ),
    "when_otherwise": lambda s, F, W: _people(s).select(
        F.when(F.col("salary") > 90, "high").when(F.col("salary") > 60, "mid").otherwise("low"),
        F.when(F.col("dept") == "eng", 1),
    ),
    "column_methods": lambda s, F, W: _people(s).select(
        F.col("id").isin(1, 3),
        F.col("id").between(2, 4),
        F.col("name").isNotNull(),
        F.col("id").cast("string"),
        F.col("salary").cast("int").alias("whole"),
        F.col("name").like("a%"),
        F.col("name").startswith("b"),
        F.col("name").substr(1, 2),
        F.col("name").eqNullSafe(None),
    ),
    "scalar_functions": lambda s, F, W: _people(s).select(
        F.upper("name"),
        F.lower(F.col("dept")),
        F.length("name"),
        F.concat_ws("-", "name", "dept"),
        F.coalesce("name", "dept"),
        F.round("salary", 1),
        F.year("hired"),
        F.month("hired"),
        F.substring("name", 1, 2),
        F.abs(F.col("id") - 3),
        F.greatest("id", F.lit(3)),
        F.expr("id + 1"),
    ),
    "window_functions": lambda s, F, W: _people(s).select(
        "id",
        F.row_number().over(W.partitionBy("dept").orderBy("id")),
        F.sum("salary").over(W.partitionBy("dept")),
        F.lag("id").over(W.orderBy("id")),
    ),
    "self_join_with_aliases": lambda s, F, W: (
        _people(s)
        .alias("a")
        .join(_people(s).alias("b"), F.col("a.id") == F.col("b.id") - 1)
        .select("a.id", F.col("b.name"))
    ),
}

JOIN_TYPES = ["inner", "left", "right", "full", "outer", "left_semi", "left_anti"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_agrees_with_pyspark(engines: tuple[Any, ShimSession], name: str) -> None:
    ordered = name.startswith(("order_by", "sort", "limit"))
    run_both(engines, CASES[name], ordered=ordered)


@pytest.mark.parametrize("how", JOIN_TYPES)
def test_join_on_names_agrees(engines: tuple[Any, ShimSession], how: str) -> None:
    run_both(engines, lambda s, F, W: _people(s).join(s.table("depts"), "dept", how))
    run_both(engines, lambda s, F, W: _people(s).join(s.table("depts"), ["dept"], how))


@pytest.mark.parametrize("how", JOIN_TYPES)
def test_join_on_a_condition_agrees(engines: tuple[Any, ShimSession], how: str) -> None:
    def case(s: Any, F: ModuleType, W: Any) -> Any:
        people, depts = _people(s), s.table("depts")
        return people.join(depts, people.dept == depts.dept, how)

    run_both(engines, case)


def test_columns_of_both_sides_after_a_join(engines: tuple[Any, ShimSession]) -> None:
    def case(s: Any, F: ModuleType, W: Any) -> Any:
        people, depts = _people(s), s.table("depts")
        joined = people.join(depts, people.dept == depts.dept, "left")
        return joined.filter(depts.floor.isNotNull()).select(people.name, depts.dept, "title")

    run_both(engines, case)


def test_cross_join_agrees(engines: tuple[Any, ShimSession]) -> None:
    run_both(engines, lambda s, F, W: _people(s).crossJoin(s.table("depts")))


def test_transformations_of_a_sql_result_agree(engines: tuple[Any, ShimSession]) -> None:
    run_both(
        engines,
        lambda s, F, W: s.sql(PEOPLE).filter(F.col("id") > 2).groupBy("dept").agg(F.sum("id")),
    )


@pytest.mark.parametrize(
    "build",
    [
        lambda df, F: df.select("nope"),
        lambda df, F: df.filter(F.col("nope") > 1),
        lambda df, F: df.withColumn("x", F.col("nope")),
        lambda df, F: df.groupBy("nope").count(),
    ],
)
def test_an_unknown_column_fails_when_the_transformation_is_called(
    engines: tuple[Any, ShimSession], build: Callable[[Any, ModuleType], Any]
) -> None:
    spark, shim = engines
    with pytest.raises(AnalysisException, match="UNRESOLVED_COLUMN"):
        build(_people(spark), spark_functions)
    with pytest.raises(AnalysisException, match="UNRESOLVED_COLUMN"):
        build(_people(shim), shim_functions)


def test_an_unknown_join_type_is_refused_as_in_pyspark(engines: tuple[Any, ShimSession]) -> None:
    spark, shim = engines
    for session in (spark, shim):
        with pytest.raises(Exception, match="Unsupported join type 'sideways'"):
            _people(session).join(session.table("depts"), "dept", "sideways")


@pytest.mark.parametrize("read", ["table", "read.table"])
def test_table_reads_the_table_again_at_each_action(
    engines: tuple[Any, ShimSession], read: str
) -> None:
    _, shim = engines
    shim.sql("CREATE TABLE `grows` (n INT) USING delta")
    try:
        table = shim.table if read == "table" else shim.read.table
        frame = table("default.`grows`").filter("n > 0")
        assert frame.count() == 0
        shim.sql("INSERT INTO grows VALUES (1), (2)")
        assert frame.count() == 2
        assert sorted(frame.collect()) == [(1,), (2,)]
    finally:
        shim.sql("DROP TABLE grows")


def _write_steps(s: Any, fmt: str, name: str) -> list[list[tuple[Any, ...]]]:
    """saveAsTable in each mode and insertInto, with the table read after each step."""
    rows = s.sql("SELECT * FROM VALUES (1, 'a'), (2, 'b') AS t(k, v)")
    seen = []
    rows.write.format(fmt).saveAsTable(name)
    seen.append(sorted(s.table(name).collect()))
    rows.filter("k = 1").write.format(fmt).mode("append").saveAsTable(name)
    seen.append(sorted(s.table(name).collect()))
    rows.select("v", "k").write.format(fmt).mode("append").saveAsTable(name)  # by name
    seen.append(sorted(s.table(name).collect()))
    rows.write.format(fmt).mode("ignore").saveAsTable(name)
    seen.append(sorted(s.table(name).collect()))
    rows.filter("k = 2").write.format(fmt).mode("overwrite").saveAsTable(name)
    seen.append(sorted(s.table(name).collect()))
    rows.write.insertInto(name)
    seen.append(sorted(s.table(name).collect()))
    rows.filter("k = 1").write.insertInto(name, overwrite=True)
    seen.append(sorted(s.table(name).collect()))
    return seen


def test_writes_agree_with_pyspark(engines: tuple[Any, ShimSession]) -> None:
    spark, shim = engines
    # No Delta jars here (DESIGN.md §4): Spark writes parquet tables, whose save modes
    # mean the same.
    try:
        expected = _write_steps(spark, "parquet", "written")
    finally:
        spark.sql("DROP TABLE IF EXISTS written")
    assert _write_steps(shim, "delta", "written") == expected
    for session in (spark, shim):
        fmt = "parquet" if session is spark else "delta"
        session.sql(f"CREATE TABLE IF NOT EXISTS taken (k INT) USING {fmt}")
    try:
        for session, fmt in ((spark, "parquet"), (shim, "delta")):
            with pytest.raises(AnalysisException, match="TABLE_OR_VIEW_ALREADY_EXISTS"):
                session.sql("SELECT 1 AS k").write.format(fmt).saveAsTable("taken")
    finally:
        spark.sql("DROP TABLE IF EXISTS taken")


def _save_steps(s: Any, fmt: str, path: str) -> list[list[tuple[Any, ...]]]:
    """save(path) in each mode, with the data at the path read after each step."""
    rows = s.sql("SELECT * FROM VALUES (1, 'a'), (2, 'b') AS t(k, v)")
    seen = []
    rows.write.format(fmt).save(path)
    seen.append(sorted(s.read.format(fmt).load(path).collect()))
    rows.filter("k = 1").write.format(fmt).mode("append").save(path)
    seen.append(sorted(s.read.format(fmt).load(path).collect()))
    rows.write.format(fmt).mode("ignore").save(path)
    seen.append(sorted(s.read.format(fmt).load(path).collect()))
    rows.filter("k = 2").write.format(fmt).mode("overwrite").save(path)
    seen.append(sorted(s.read.format(fmt).load(path).collect()))
    with pytest.raises(AnalysisException, match=r"PATH_ALREADY_EXISTS|DELTA_PATH_EXISTS"):
        rows.write.format(fmt).save(path)
    return seen


def test_save_agrees_with_pyspark(engines: tuple[Any, ShimSession], tmp_path: Path) -> None:
    spark, shim = engines
    # No Delta jars in the PySpark session: Spark saves parquet, whose save modes mean
    # the same as Delta's.
    expected = _save_steps(spark, "parquet", str(tmp_path / "spark"))
    assert _save_steps(shim, "delta", str(tmp_path / "shim")) == expected
    assert (tmp_path / "shim" / "_delta_log").is_dir()


def test_save_appends_by_name_and_reads_back_in_sql(
    engines: tuple[Any, ShimSession], tmp_path: Path
) -> None:
    _, shim = engines
    target = str(tmp_path / "saved")
    shim.sql("SELECT 1 AS k, 'a' AS v").write.save(target)  # delta is the default
    shim.sql("SELECT 'b' AS v, 2 AS k").write.mode("append").save(target)
    assert sorted(shim.sql(f"SELECT * FROM delta.`{target}`").collect()) == [(1, "a"), (2, "b")]
    assert shim.read.format("delta").load(target).columns == ["k", "v"]


def test_create_table_at_a_delta_path(engines: tuple[Any, ShimSession], tmp_path: Path) -> None:
    _, shim = engines
    target = tmp_path / "made"
    shim.sql(f"CREATE TABLE delta.`{target}` AS SELECT 1 AS k")
    shim.sql(f"CREATE TABLE IF NOT EXISTS delta.`{target}` AS SELECT 2 AS k")
    with pytest.raises(AnalysisException, match=r"DELTA_TABLE_ALREADY_EXISTS.*CREATE OR REPLACE"):
        shim.sql(f"CREATE TABLE delta.`{target}` (k INT) USING delta")
    shim.sql(f"CREATE OR REPLACE TABLE delta.`{target}` AS SELECT 'x' AS s")
    assert shim.sql(f"SELECT * FROM delta.`{target}`").collect() == [("x",)]
    assert not shim.catalog.tableExists("made")


@pytest.mark.parametrize("fmt", ["parquet", "csv", "json"])
def test_writing_other_formats_is_refused_by_name(
    engines: tuple[Any, ShimSession], tmp_path: Path, fmt: str
) -> None:
    _, shim = engines
    with pytest.raises(AnalysisException, match=f"writing {fmt} files.*format\\('delta'\\)"):
        getattr(shim.sql("SELECT 1 AS k").write, fmt)(str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()


def test_a_notebook_flow_through_dyntables(
    engines: tuple[Any, ShimSession], tmp_path: Path
) -> None:
    """What a notebook user does on the embedded engine, all through ``DynamicTables``:
    read files with ``dt.session.read``, save them as a table, transform ``dt.sql``'s
    DataFrame (as PySpark does), and keep a dynamic table over the table, refreshed
    incrementally after a DataFrame append."""
    spark, _ = engines
    files = tmp_path / "files"
    files.mkdir()
    pq.write_table(
        pa.table({"region": ["n", "s", "n", "e"], "amount": [10, 3, 7, 12]}),
        files / "sales.parquet",
    )
    pq.write_table(pa.table({"region": ["s", "w"], "amount": [9, 4]}), files / "more.parquet")
    dt = DynamicTables(warehouse=tmp_path / "warehouse")
    dt.session.read.parquet(str(files / "sales.parquet")).write.saveAsTable("sales")

    def totals(frame: Any, F: ModuleType) -> Any:
        big = frame.filter(F.col("amount") > 5)
        return big.groupBy("region").agg(F.sum("amount").alias("total"), F.count("*"))

    actual = totals(dt.sql("SELECT * FROM sales"), shim_functions)
    expected = totals(spark.read.parquet(str(files / "sales.parquet")), spark_functions)
    assert _schema(actual) == _schema(expected)
    assert _rows(actual, ordered=False) == _rows(expected, ordered=False)

    dt.sql(
        "CREATE DYNAMIC TABLE region_totals TARGET_LAG = '1 minute' REFRESH_MODE = INCREMENTAL"
        " AS SELECT region, sum(amount) AS total, count(*) AS n FROM sales GROUP BY region"
    )
    more = dt.session.read.parquet(str(files / "more.parquet"))
    more.write.mode("append").saveAsTable("sales")
    refreshed = dt.sql("ALTER DYNAMIC TABLE region_totals REFRESH").collect()[0]
    assert refreshed.action == "INCREMENTAL"
    assert sorted(dt.sql("SELECT * FROM region_totals").collect()) == [
        ("e", 12, 1),
        ("n", 17, 2),
        ("s", 12, 2),
        ("w", 4, 1),
    ]
