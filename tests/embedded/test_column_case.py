"""Column names keep the case they were written in and are named in any case, as on
Spark (``spark.sql.caseSensitive`` off): column lists, PARTITIONED BY, ALTER TABLE ADD
COLUMNS, INSERT column lists, UPDATE and MERGE, and dynamic tables named by aliases or a
column list. The embedded engine once stored such names in lower case, and an INSERT
whose list named a mixed-case column wrote NULLs into it.

The table statements run on PySpark too (parquet tables there, Delta here): the columns,
rows and errors must be Spark's.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from spark_outcomes import shim_session, spark_and_shim_outcomes

from dyntables import DynamicTables
from sparkshim.errors import AnalysisException, UnsupportedSqlError

pytestmark = pytest.mark.embedded

# (statements run in turn, the query whose columns and rows are compared)
SCRIPTS: dict[str, tuple[list[str], str]] = {
    "column list keeps case": (
        ["CREATE TABLE t (MyId INT, Amount INT) USING {fmt}", "INSERT INTO t VALUES (1, 10)"],
        "SELECT * FROM t",
    ),
    "INSERT column list in another case": (
        [
            "CREATE TABLE t (MyId INT, Amount INT) USING {fmt}",
            "INSERT INTO t (myid, AMOUNT) VALUES (1, 10)",
            "INSERT INTO t (amount, MYID) VALUES (20, 2)",
            "INSERT INTO t (Amount) VALUES (30)",
        ],
        "SELECT * FROM t",
    ),
    "INSERT column list into a table made from a query": (
        [
            "CREATE TABLE t USING {fmt} AS SELECT 1 AS MyId, 'a' AS Label",
            "INSERT INTO t (MyId, Label) VALUES (2, 'b')",
            "INSERT INTO t (label, myid) VALUES ('c', 3)",
        ],
        "SELECT * FROM t",
    ),
    "INSERT column list naming a missing column": (
        ["CREATE TABLE t (MyId INT) USING {fmt}", "INSERT INTO t (nope) VALUES (1)"],
        "SELECT * FROM t",
    ),
    "INSERT column list naming a column twice": (
        ["CREATE TABLE t (MyId INT) USING {fmt}", "INSERT INTO t (myid, MYID) VALUES (1, 2)"],
        "SELECT * FROM t",
    ),
    "two columns differing in case": (
        ["CREATE TABLE t (A INT, a INT) USING {fmt}"],
        "SELECT 1",
    ),
    "ADD COLUMNS keeps case": (
        [
            "CREATE TABLE t (MyId INT) USING {fmt}",
            "INSERT INTO t VALUES (1)",
            "ALTER TABLE t ADD COLUMNS (NewCol STRING)",
            "INSERT INTO t (newcol, myid) VALUES ('x', 2)",
        ],
        "SELECT * FROM t",
    ),
    "ADD COLUMNS of one name twice": (
        ["CREATE TABLE t (MyId INT) USING {fmt}", "ALTER TABLE t ADD COLUMNS (B INT, b INT)"],
        "SELECT * FROM t",
    ),
    "PARTITIONED BY in another case": (
        [
            "CREATE TABLE t (Id INT, Region STRING) USING {fmt} PARTITIONED BY (REGION)",
            "INSERT INTO t VALUES (1, 'eu'), (2, 'us')",
        ],
        "SELECT id, region FROM t WHERE REGION = 'eu'",
    ),
    "PARTITIONED BY of a query's column in another case": (
        [
            "CREATE TABLE t USING {fmt} PARTITIONED BY (Region) AS SELECT 1 AS Id, 'eu' AS region",
        ],
        "SELECT * FROM t",
    ),
    # A column beside a *: named as written, the *'s columns as the table spells them.
    "a column before a star": (
        ["CREATE TABLE t (MyId INT, Region STRING) USING {fmt}", "INSERT INTO t VALUES (1, 'eu')"],
        "SELECT myid, * FROM t",
    ),
    "columns around a qualified star": (
        ["CREATE TABLE t (MyId INT, Region STRING) USING {fmt}", "INSERT INTO t VALUES (1, 'eu')"],
        "SELECT t.MYID, t.*, region, upper(REGION) FROM t",
    ),
    "PARTITIONED BY a missing column": (
        ["CREATE TABLE t (Id INT, Region STRING) USING {fmt} PARTITIONED BY (nope)"],
        "SELECT 1",
    ),
}


@pytest.fixture
def shim(tmp_path: Path) -> Iterator[Any]:
    yield from shim_session(tmp_path)


@pytest.mark.parametrize("name", list(SCRIPTS))
def test_table_statements_name_columns_as_spark(name: str, shim: Any, pyspark_session: Any) -> None:
    expected, actual = spark_and_shim_outcomes(pyspark_session, shim, ("t",), *SCRIPTS[name])
    assert actual == expected


# NATURAL JOIN joins on the names exactly equal on both sides: ``MyId`` and ``MYID`` are
# two columns to Spark (the embedded engine once joined on them).
NATURAL_TABLES = [
    "CREATE TABLE t (MyId INT, label STRING) USING {fmt}",
    "INSERT INTO t VALUES (1, 'one'), (3, 'three')",
    "CREATE TABLE o (MYID INT, x INT) USING {fmt}",
    "INSERT INTO o VALUES (1, 10), (2, 20), (3, 30)",
    "CREATE TABLE q (k INT, MyId INT, z INT) USING {fmt}",
    "INSERT INTO q VALUES (1, 1, 7), (2, 3, 8)",
]
NATURAL_QUERIES = [
    "SELECT count(*) FROM t NATURAL JOIN o",
    "SELECT label, x FROM t NATURAL LEFT JOIN o",
    "SELECT label, x FROM t NATURAL FULL JOIN o",
    "SELECT * FROM t NATURAL JOIN o",
    "SELECT count(*) FROM o NATURAL JOIN q",  # MYID beside MyId; k on one side only
    "SELECT label, z FROM t NATURAL JOIN q",  # MyId on both sides, exactly
    "SELECT count(*) FROM t NATURAL JOIN (SELECT MYID, x FROM o) AS s",
    "SELECT count(*) FROM t NATURAL JOIN (SELECT * FROM o) AS s(myid, x)",
]


@pytest.mark.parametrize("query", NATURAL_QUERIES)
def test_natural_join_joins_exactly_equal_names(
    query: str, shim: Any, pyspark_session: Any
) -> None:
    expected, actual = spark_and_shim_outcomes(
        pyspark_session, shim, ("t", "o", "q"), NATURAL_TABLES, query
    )
    assert actual == expected


def test_partition_columns_are_stored_as_the_schema_spells_them(shim: Any) -> None:
    shim.sql("CREATE TABLE t (Id INT, Region STRING) USING delta PARTITIONED BY (region)")
    detail = shim.sql("DESCRIBE DETAIL t").collect()[0]
    assert detail.partitionColumns == ["Region"]


@pytest.fixture
def orders(shim: Any) -> Any:
    shim.sql("CREATE TABLE o (OrderId INT, Amount INT, Note STRING) USING delta")
    shim.sql("INSERT INTO o VALUES (1, 10, 'a'), (2, 20, 'b')")
    return shim


def _rows(session: Any, table: str) -> list[tuple[Any, ...]]:
    return sorted((tuple(row) for row in session.sql(f"SELECT * FROM {table}").collect()), key=repr)


def test_update_sets_a_column_named_in_another_case(orders: Any) -> None:
    orders.sql("UPDATE o SET AMOUNT = amount + 1, note = 'x' WHERE orderid = 1")
    assert _rows(orders, "o") == [(1, 11, "x"), (2, 20, "b")]
    assert orders.sql("SELECT * FROM o").columns == ["OrderId", "Amount", "Note"]


def test_update_of_a_missing_column_is_refused(orders: Any) -> None:
    with pytest.raises(AnalysisException, match=r"UNRESOLVED_COLUMN.*`nope`.*`OrderId`"):
        orders.sql("UPDATE o SET nope = 1")
    assert _rows(orders, "o") == [(1, 10, "a"), (2, 20, "b")]


def test_update_of_a_struct_field_is_refused_naming_it(shim: Any) -> None:
    shim.sql("CREATE TABLE s USING delta AS SELECT 1 AS Id, named_struct('InnerA', 1) AS St")
    with pytest.raises(UnsupportedSqlError, match=r"field St\.InnerA of the STRUCT column `St`"):
        shim.sql("UPDATE s SET St.InnerA = 99")
    shim.sql("UPDATE s AS x SET x.ID = 2")  # an alias's column is no struct field
    assert _rows(shim, "s") == [(2, (1,))]


def test_merge_star_matches_source_columns_in_any_case(orders: Any) -> None:
    orders.sql(
        "MERGE INTO o USING (SELECT 2 AS orderid, 25 AS AMOUNT, 'B' AS note"
        " UNION ALL SELECT 3, 30, 'c') s ON o.OrderId = s.ORDERID"
        " WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
    )
    assert _rows(orders, "o") == [(1, 10, "a"), (2, 25, "B"), (3, 30, "c")]
    assert orders.sql("SELECT * FROM o").columns == ["OrderId", "Amount", "Note"]


def test_merge_names_target_columns_in_any_case(orders: Any) -> None:
    orders.sql(
        "MERGE INTO o USING (SELECT 1 AS k, 5 AS v UNION ALL SELECT 4, 40) s ON o.orderid = s.k"
        " WHEN MATCHED THEN UPDATE SET AMOUNT = s.v"
        " WHEN NOT MATCHED THEN INSERT (orderID, amount) VALUES (s.k, s.v)"
    )
    assert _rows(orders, "o") == [(1, 5, "a"), (2, 20, "b"), (4, 40, None)]


def test_merge_insert_of_a_column_twice_is_refused(orders: Any) -> None:
    with pytest.raises(AnalysisException, match=r"COLUMN_ALREADY_EXISTS"):
        orders.sql(
            "MERGE INTO o USING (SELECT 4 AS k) s ON o.OrderId = s.k"
            " WHEN NOT MATCHED THEN INSERT (OrderId, orderid) VALUES (s.k, s.k)"
        )
    assert _rows(orders, "o") == [(1, 10, "a"), (2, 20, "b")]


@pytest.mark.parametrize(
    ("create", "columns"),
    [
        (
            "CREATE DYNAMIC TABLE d TARGET_LAG = '1 minute' AS SELECT Region AS SalesRegion,"
            " count(*) AS OrderCount, sum(amount) AS TotalAmount FROM src GROUP BY region",
            ["SalesRegion", "OrderCount", "TotalAmount"],
        ),
        (
            "CREATE DYNAMIC TABLE d (RegionName, Orders, Total) TARGET_LAG = '1 minute'"
            " AS SELECT region, count(*), sum(Amount) FROM src GROUP BY Region",
            ["RegionName", "Orders", "Total"],
        ),
        (
            "CREATE DYNAMIC TABLE d TARGET_LAG = '1 minute'"
            " AS SELECT OrderId AS Id, REGION, Amount FROM src WHERE amount > 0",
            ["Id", "REGION", "Amount"],
        ),
    ],
)
def test_dynamic_tables_keep_their_column_names_through_refreshes(
    tmp_path: Path, create: str, columns: list[str]
) -> None:
    tables = DynamicTables(warehouse=tmp_path / "warehouse")
    tables.sql("CREATE TABLE src (OrderId INT, Region STRING, Amount INT) USING delta")
    tables.sql("INSERT INTO src VALUES (1, 'eu', 10), (2, 'us', 20), (3, 'eu', 5)")
    tables.sql(create)
    tables.sql("UPDATE src SET amount = AMOUNT + 1 WHERE orderid = 1")
    tables.sql("INSERT INTO src (region, ORDERID, amount) VALUES ('us', 4, 7)")
    tables.sql("DELETE FROM src WHERE OrderID = 2")
    refreshed = tables.sql("ALTER DYNAMIC TABLE d REFRESH").collect()[0]
    assert refreshed.action == "INCREMENTAL"
    assert tables.sql("SELECT * FROM d").columns == columns
    query = create[create.index(" AS SELECT ") + 4 :]
    expected = sorted((tuple(row) for row in tables.sql(query).collect()), key=repr)
    assert _rows(tables, "d") == expected


VARIED_CASE_QUERIES = {
    # windows sharing a PARTITION BY column spelled two ways
    "windows": "SELECT OrderId, sum(Amount) OVER (PARTITION BY Region) AS RegionTotal,"
    " count(*) OVER (PARTITION BY region) AS RegionOrders FROM src",
    # an outer join among other joins on one key spelled two ways
    "outer joins": "SELECT a.OrderId, b.Amount AS Other, c.Amount AS Third FROM src a"
    " LEFT JOIN src b ON a.OrderId = b.OrderId FULL JOIN src c ON a.orderid = c.OrderId + 0",
    # a GROUP BY key spelled otherwise than in the SELECT list
    "group by": "SELECT Region, count(*) AS Cnt, sum(Amount) AS Total FROM src GROUP BY REGION",
}


@pytest.mark.parametrize("shape", list(VARIED_CASE_QUERIES))
def test_names_in_varied_case_refresh_incrementally(tmp_path: Path, shape: str) -> None:
    """A query naming one column in several cases is planned as with one spelling: the
    planner once compared names case-sensitively, so these were refused as INCREMENTAL (or
    made FULL by AUTO)."""
    query = VARIED_CASE_QUERIES[shape]
    tables = DynamicTables(warehouse=tmp_path / "warehouse")
    tables.sql("CREATE TABLE src (OrderId INT, Region STRING, Amount INT) USING delta")
    tables.sql("INSERT INTO src VALUES (1, 'eu', 10), (2, 'us', 20), (3, 'eu', 5)")
    tables.sql(
        f"CREATE DYNAMIC TABLE d TARGET_LAG = '1 minute' REFRESH_MODE = INCREMENTAL AS {query}"
    )
    tables.sql("UPDATE src SET amount = amount + 1 WHERE orderid = 1")
    tables.sql("INSERT INTO src VALUES (4, 'us', 7)")
    tables.sql("DELETE FROM src WHERE OrderId = 2")
    _refreshed_incrementally_as_recomputed(tables, query)


@pytest.mark.parametrize(
    "query",
    [
        # joined on k alone: MyId and MYID are two columns
        "SELECT a.MyId, count(*) AS n, sum(w) AS sw FROM a NATURAL JOIN b GROUP BY a.MyId",
        "SELECT a.MyId AS left_id, b.MYID AS right_id, v, w FROM a NATURAL JOIN b",
    ],
)
def test_natural_join_refreshes_as_it_recomputes(tmp_path: Path, query: str) -> None:
    """An incremental refresh of a NATURAL JOIN joins the names a full one joins (the
    planner and the engine once matched names in any case for a change's side only, and
    the refresh differed from the recompute)."""
    tables = DynamicTables(warehouse=tmp_path / "warehouse")
    tables.sql("CREATE TABLE a (k INT, MyId INT, v INT) USING delta")
    tables.sql("CREATE TABLE b (k INT, MYID INT, w INT) USING delta")
    tables.sql("INSERT INTO a VALUES (1, 1, 10), (1, 2, 20)")
    tables.sql("INSERT INTO b VALUES (1, 1, 100), (1, 3, 300)")
    tables.sql(
        f"CREATE DYNAMIC TABLE d TARGET_LAG = '1 minute' REFRESH_MODE = INCREMENTAL AS {query}"
    )
    tables.sql("INSERT INTO b VALUES (1, 2, 200)")
    tables.sql("INSERT INTO a VALUES (1, 5, 50), (2, 5, 60)")
    expected = _refreshed_incrementally_as_recomputed(tables, query)
    assert len(expected) == (3 if "GROUP BY" in query else 9)  # as Spark joins them


def _refreshed_incrementally_as_recomputed(tables: DynamicTables, query: str) -> list[Any]:
    """Refresh ``d`` (defined by ``query``): it must refresh incrementally and hold the
    rows a recompute gives (those rows, sorted)."""
    refreshed = tables.sql("ALTER DYNAMIC TABLE d REFRESH").collect()[0]
    assert refreshed.action == "INCREMENTAL"
    expected = sorted((tuple(row) for row in tables.sql(query).collect()), key=repr)
    assert _rows(tables, "d") == expected
    return expected
