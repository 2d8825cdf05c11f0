"""Spark's names of unaliased SELECT items (sparkshim.naming), checked against PySpark.

``spark_names.yaml`` holds item → name pairs, each first read off PySpark 3.5.9; the renderer
must give every name, and PySpark must still give it (one query per batch of items). The
shim's results carry the names, duplicates included, and tables created from a query get
them as Spark's do.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from sqlglot import exp

from dyntables import DynamicTables
from sparkshim import ShimSession
from sparkshim.errors import AnalysisException
from sparkshim.naming import spark_column_name, unknown_constructs
from sparkshim.translate import parse_spark

pytestmark = pytest.mark.embedded

NAMES: dict[str, str] = yaml.safe_load((Path(__file__).parent / "spark_names.yaml").read_text())

VIEW = (
    "SELECT 1 AS a, 'x' AS b, CAST(1.50 AS DECIMAL(10,2)) AS d, array(1, 2) AS arr,"
    " map('k', 1) AS m, named_struct('x', 1, 'y', 'z') AS s, DATE'2020-01-01' AS dt,"
    " TIMESTAMP'2020-01-01 00:00:00' AS ts"
)


def _item(sql_item: str) -> exp.Expr:
    tree = parse_spark(f"SELECT {sql_item} FROM t")
    assert isinstance(tree, exp.Select)
    return tree.expressions[0]


@pytest.mark.parametrize(("item", "name"), list(NAMES.items()))
def test_renders_spark_name(item: str, name: str) -> None:
    assert spark_column_name(_item(item)) == name


def test_pyspark_gives_the_recorded_names(pyspark_session: Any) -> None:
    pyspark_session.sql(f"CREATE OR REPLACE TEMPORARY VIEW t AS {VIEW}")
    try:
        spark_names = {
            item: pyspark_session.sql(f"SELECT {item} FROM t").columns[0] for item in NAMES
        }
    finally:
        pyspark_session.sql("DROP VIEW IF EXISTS t")
    assert spark_names == NAMES


# Names that depend on types the renderer cannot see, or on spellings sqlglot does not
# keep: Spark's name, and the one given instead.
KNOWN_DIFFERENCES = {
    "s['x']": ("s.x", "s[x]"),  # a struct field read by subscript; a map's is m[k]
    "dt + INTERVAL 1 DAY": ("date_add(dt, extractansiintervaldays(INTERVAL '1' DAY))", None),
    "+a": ("(+ a)", "a"),
    "dt + a": ("date_add(dt, a)", "(dt + a)"),  # a date column's + is a date_add
}


@pytest.mark.parametrize("item", list(KNOWN_DIFFERENCES))
def test_known_differences(item: str) -> None:
    spark_name, ours = KNOWN_DIFFERENCES[item]
    rendered = spark_column_name(_item(item))
    assert rendered != spark_name
    if ours is not None:
        assert rendered == ours


def test_unknown_constructs_are_named_by_their_sql_and_listed() -> None:
    item = _item("(a, b) IN ((1, 'x'))")
    assert unknown_constructs(item) == ["Tuple"]
    assert all(not unknown_constructs(_item(i)) for i in list(NAMES)[:50])


@pytest.fixture
def shim(tmp_path: Path) -> Any:
    session = ShimSession(warehouse=str(tmp_path / "warehouse"))
    session.sql("CREATE TABLE t (a INT, B STRING) USING delta")
    session.sql("INSERT INTO t VALUES (1, 'x')")
    yield session
    session.stop()


@pytest.mark.parametrize(
    ("query", "columns"),
    [
        ("SELECT a, a FROM t", ["a", "a"]),
        ("SELECT * FROM (SELECT a + 1, a + 1 FROM t)", ["(a + 1)", "(a + 1)"]),
        ("WITH c AS (SELECT a, a FROM t) SELECT * FROM c", ["a", "a"]),
        ("SELECT A, b, t.a FROM t", ["A", "b", "a"]),
        ("SELECT '', ' ', '' FROM t", ["", " ", ""]),
        ("SELECT a + 1 FROM t UNION ALL SELECT a FROM t", ["(a + 1)"]),
        ("SELECT count(*), sum(a) FROM t", ["count(1)", "sum(a)"]),
        (
            "SELECT CAST(a AS STRING), CAST(a AS STRING) || 'x' FROM t",
            ["a", "concat(CAST(a AS STRING), x)"],
        ),
    ],
)
def test_shim_results_carry_spark_names(shim: Any, query: str, columns: list[str]) -> None:
    assert shim.sql(query).columns == columns


def test_a_view_and_a_table_made_from_a_query_keep_its_names(shim: Any) -> None:
    shim.sql("CREATE TEMPORARY VIEW v AS SELECT a + 1, upper(B) FROM t")
    assert shim.sql("SELECT * FROM v").columns == ["(a + 1)", "upper(B)"]
    shim.sql("CREATE TABLE c AS SELECT a * 2, B FROM t")
    assert shim.sql("SELECT * FROM c").columns == ["(a * 2)", "B"]


def test_a_table_from_a_query_with_duplicate_names_is_refused(shim: Any) -> None:
    with pytest.raises(AnalysisException, match=r"\[COLUMN_ALREADY_EXISTS\] The column `a`"):
        shim.sql("CREATE TABLE d AS SELECT a, a FROM t")


def test_a_dynamic_table_gets_spark_names(tmp_path: Path) -> None:
    tables = DynamicTables(warehouse=tmp_path / "warehouse")
    tables.sql("CREATE TABLE src (a INT, b STRING) USING delta")
    tables.sql("INSERT INTO src VALUES (1, 'x')")
    tables.sql(
        "CREATE DYNAMIC TABLE d TARGET_LAG = '1 minute'"
        " AS SELECT a + 1, upper(b), length(b), a FROM src"
    )
    assert tables.sql("SELECT * FROM d").dtypes == [
        ("(a + 1)", "int"),
        ("upper(b)", "string"),
        ("length(b)", "int"),
        ("a", "int"),
    ]


def test_tables_and_columns_named_by_words_sqlglot_reserves_refresh(tmp_path: Path) -> None:
    """Spark reads `qualify`, `values` and `inner` as names; the statements a refresh
    generates quote them, so the embedded engine reads them too."""
    tables = DynamicTables(warehouse=tmp_path / "warehouse")
    tables.sql("CREATE TABLE `values` (`inner` INT, `qualify` STRING) USING delta")
    tables.sql("INSERT INTO `values` VALUES (1, 'x'), (2, 'y')")
    query = "SELECT `qualify`, count(*) AS n FROM `values` WHERE `inner` > 0 GROUP BY `qualify`"
    tables.sql(f"CREATE DYNAMIC TABLE `qualify` TARGET_LAG = '1 minute' AS {query}")
    tables.sql("UPDATE `values` SET `qualify` = 'x' WHERE `inner` = 2")
    refreshed = tables.sql("ALTER DYNAMIC TABLE `qualify` REFRESH").collect()[0]
    assert refreshed.action == "INCREMENTAL"
    rows = sorted(tuple(row) for row in tables.sql("SELECT * FROM `qualify`").collect())
    assert rows == [("x", 2)]
