"""Column names inside derived queries, checked against PySpark.

Spark names a column reference as written, not as the table spells it, in a subquery, a
CTE or a view as at the top (``SELECT * FROM (SELECT myid FROM t)`` has a column ``myid``
of a table's ``MyId``); DuckDB names it by the table's spelling. An unaliased column of a
SELECT grouped by ROLLUP, CUBE or GROUPING SETS is named by the grouping key's spelling
(``SELECT region ... GROUP BY ROLLUP(REGION)`` has a column ``REGION``).

PySpark reads temporary views, the shim Delta tables of the same columns and rows.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dyntables import DynamicTables
from sparkshim import ShimSession

pytestmark = pytest.mark.embedded

TABLES = {
    "t": "SELECT * FROM VALUES (1, 'x', 10), (2, 'y', 20), (3, 'x', 30) AS v(MyId, Region, Amount)",
    "o": "SELECT * FROM VALUES (1, 'a'), (5, 'b') AS v(MYID, Note)",
}

DERIVED = [
    "SELECT * FROM (SELECT myid, region FROM t)",
    "SELECT * FROM (SELECT myid, region FROM t) s",
    "WITH c AS (SELECT myid FROM t) SELECT * FROM c",
    "WITH c AS (SELECT region, sum(amount) AS total FROM t GROUP BY region) SELECT * FROM c",
    "SELECT * FROM (SELECT * FROM (SELECT myid FROM t))",
    "SELECT * FROM (SELECT t.myid, AMOUNT FROM t)",
    "SELECT * FROM (SELECT myid, MYID FROM t)",
    "SELECT * FROM (SELECT myid FROM t UNION ALL SELECT myid FROM o)",
    "SELECT * FROM o JOIN (SELECT myid, region FROM t) s ON o.MYID = s.myid",
    "SELECT * FROM o JOIN (SELECT myid AS k, region FROM t) s ON o.MYID = s.k",
    # a * inside keeps the table's spelling; a qualified outer column is named as written
    "SELECT * FROM (SELECT * FROM t) a JOIN (SELECT region AS r, myid FROM t) b ON a.MyId = b.myid",
    "SELECT * FROM (SELECT s.MYID, region FROM (SELECT myid, region FROM t) s)",
]

GROUPING_SETS = [
    "SELECT region, count(*) FROM t GROUP BY ROLLUP(REGION)",
    "SELECT t.region, count(*) FROM t GROUP BY CUBE(REGION)",
    "SELECT region, count(*) FROM t GROUP BY CUBE(Region)",
    "SELECT region, count(*) FROM t GROUP BY GROUPING SETS ((REGION), ())",
    "SELECT region, count(*) FROM t GROUP BY GROUPING SETS (REGION, (Region))",
    "SELECT region, myid, count(*) FROM t GROUP BY REGION, MYID WITH ROLLUP",
    "SELECT region, myid, count(*) FROM t GROUP BY Region, ROLLUP(MYID)",
    "SELECT region, region, (region), upper(region) FROM t GROUP BY ROLLUP(REGION)",
    # an alias, a cast and a position keep their names
    "SELECT region AS region, CAST(region AS STRING), myid, Region FROM t"
    " GROUP BY ROLLUP(REGION, 3)",
    "SELECT * FROM (SELECT region, count(*) FROM t GROUP BY ROLLUP(REGION))",
]


def _outcome(session: Any, query: str) -> Any:
    result = session.sql(query)
    return result.columns, sorted((tuple(row) for row in result.collect()), key=repr)


@pytest.fixture
def shim(tmp_path: Path) -> Iterator[Any]:
    session = ShimSession(warehouse=str(tmp_path / "warehouse"))
    for name, query in TABLES.items():
        session.sql(f"CREATE TABLE {name} USING delta AS {query}")
    yield session
    session.stop()


@pytest.fixture
def spark(pyspark_session: Any) -> Iterator[Any]:
    for name, query in TABLES.items():
        pyspark_session.sql(f"CREATE OR REPLACE TEMPORARY VIEW {name} AS {query}")
    yield pyspark_session
    for name in TABLES:
        pyspark_session.sql(f"DROP VIEW IF EXISTS {name}")


@pytest.mark.parametrize("query", DERIVED)
def test_a_derived_querys_column_is_named_as_written(query: str, shim: Any, spark: Any) -> None:
    assert _outcome(shim, query) == _outcome(spark, query)


@pytest.mark.parametrize("query", GROUPING_SETS)
def test_a_grouping_sets_key_is_named_as_the_group_by_writes_it(
    query: str, shim: Any, spark: Any
) -> None:
    assert _outcome(shim, query) == _outcome(spark, query)


def test_a_temporary_views_columns_are_named_as_written(shim: Any, spark: Any) -> None:
    view = "CREATE OR REPLACE TEMPORARY VIEW v AS SELECT myid, region FROM t"
    outcomes = []
    for session in (shim, spark):
        session.sql(view)
        try:
            described = [tuple(row)[:2] for row in session.sql("DESCRIBE v").collect()]
            outcomes.append((_outcome(session, "SELECT * FROM v"), described))
        finally:
            session.sql("DROP VIEW IF EXISTS v")
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][1] == [("myid", "int"), ("region", "string")]


def test_a_view_keeps_the_names_as_written(shim: Any) -> None:
    shim.sql("CREATE VIEW pv AS SELECT myid, REGION FROM t")
    assert shim.sql("SELECT * FROM pv").columns == ["myid", "REGION"]
    assert [row.col_name for row in shim.sql("DESCRIBE pv").collect()] == ["myid", "REGION"]


def test_a_table_made_from_a_derived_query_stores_the_names_as_written(shim: Any) -> None:
    shim.sql("CREATE TABLE x USING delta AS SELECT * FROM (SELECT myid, amount FROM t)")
    assert shim.sql("SELECT * FROM x").columns == ["myid", "amount"]
    assert shim.sql("SELECT MYID FROM x WHERE AMOUNT = 20").collect()[0][0] == 2


def test_a_dynamic_table_over_a_cte_gets_spark_names(tmp_path: Path) -> None:
    tables = DynamicTables(warehouse=tmp_path / "warehouse")
    tables.sql("CREATE TABLE orders (CustomerId INT, Amount INT) USING delta")
    tables.sql("INSERT INTO orders VALUES (1, 10), (1, 5), (2, 7)")
    tables.sql(
        "CREATE DYNAMIC TABLE d TARGET_LAG = '1 minute' AS WITH c AS (SELECT customerid,"
        " sum(amount) AS total FROM orders GROUP BY customerid) SELECT * FROM c"
    )
    assert tables.sql("SELECT * FROM d").columns == ["customerid", "total"]
    tables.sql("INSERT INTO orders VALUES (2, 1), (3, 4)")
    tables.sql("ALTER DYNAMIC TABLE d REFRESH")
    result = tables.sql("SELECT * FROM d")
    assert result.columns == ["customerid", "total"]
    assert sorted(tuple(row) for row in result.collect()) == [(1, 15), (2, 8), (3, 4)]
