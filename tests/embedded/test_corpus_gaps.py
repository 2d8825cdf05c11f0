"""Statements beyond single queries that Spark's own SQL tests use: views with a column
list, the range() table function, the legacy HAVING and set-operation settings. The
expected answers are PySpark 3.5's (checked by hand; queries.yaml holds the plain ones)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.errors import AnalysisException
from pyspark.sql import Row

from sparkshim.errors import UnsupportedSqlError
from sparkshim.session import ShimSession

pytestmark = pytest.mark.embedded


@pytest.fixture
def spark(tmp_path: Path) -> ShimSession:
    return ShimSession(warehouse=tmp_path / "warehouse")


def test_a_view_column_list_renames_the_query_columns(spark: ShimSession) -> None:
    spark.sql("CREATE TEMPORARY VIEW v(a, b COMMENT 'second') AS SELECT 1 AS x, 'y'")
    spark.sql("CREATE OR REPLACE TEMP VIEW w(k, v) AS VALUES (1, 'a'), (2, 'b') tbl(p, q)")
    spark.sql("CREATE VIEW p(n) AS SELECT 7")
    assert spark.sql("SELECT * FROM v").collect() == [Row(a=1, b="y")]
    assert spark.sql("SELECT * FROM w ORDER BY k").columns == ["k", "v"]
    assert spark.sql("SELECT * FROM p").collect() == [Row(n=7)]


@pytest.mark.parametrize(
    ("columns", "reason"),
    [("a, b, c", "NOT_ENOUGH_DATA_COLUMNS"), ("a", "TOO_MANY_DATA_COLUMNS")],
)
def test_a_view_column_list_of_another_width_is_spark_s_error(
    spark: ShimSession, columns: str, reason: str
) -> None:
    with pytest.raises(AnalysisException, match=f"CREATE_VIEW_COLUMN_ARITY_MISMATCH.{reason}"):
        spark.sql(f"CREATE TEMPORARY VIEW v({columns}) AS SELECT 1 AS x, 2")


def test_a_parenthesized_join_of_views_keeps_both_sides(spark: ShimSession) -> None:
    spark.sql("CREATE TEMPORARY VIEW l(a, va) AS VALUES ('one', 1), ('two', 2)")
    spark.sql("CREATE TEMPORARY VIEW r(b, vb) AS VALUES ('one', 10)")
    rows = spark.sql("SELECT * FROM (l JOIN r ON (a = b))").collect()
    assert rows == [Row(a="one", va=1, b="one", vb=10)]


def test_range_table_function(spark: ShimSession) -> None:
    assert [r.id for r in spark.sql("SELECT * FROM range(10, 0, -3)").collect()] == [10, 7, 4, 1]
    assert spark.sql("SELECT count(*) AS n FROM range(5, 1)").collect() == [Row(n=0)]
    with pytest.raises(AnalysisException, match="FAILED_FUNCTION_CALL"):
        spark.sql("SELECT * FROM range(1, 10, 0)").collect()
    with pytest.raises(UnsupportedSqlError, match="non-literal"):
        spark.sql("SELECT * FROM range(1 + 1)").collect()


def test_legacy_having_without_group_by_is_a_where(spark: ShimSession) -> None:
    assert spark.sql("SELECT 1 AS one FROM range(10) HAVING true").count() == 1
    spark.sql("SET spark.sql.legacy.parser.havingWithoutGroupByAsWhere=true")
    assert spark.sql("SELECT id FROM range(10) HAVING id > 6").count() == 3


def test_legacy_set_operation_precedence_refuses_what_it_changes(spark: ShimSession) -> None:
    spark.sql("SET spark.sql.legacy.setopsPrecedence.enabled=true")
    chain = "SELECT 1 AS k UNION ALL SELECT 2 EXCEPT SELECT 2"  # the same either way
    assert spark.sql(chain).collect() == [Row(k=1)]
    with pytest.raises(UnsupportedSqlError, match="setopsPrecedence"):
        spark.sql("SELECT 1 AS k UNION ALL SELECT 2 INTERSECT SELECT 2").collect()
