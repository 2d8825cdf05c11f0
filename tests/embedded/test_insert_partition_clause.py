"""INSERT's PARTITION clause and INSERT ... BY NAME, as Spark runs them.

The embedded engine once ignored both: ``INSERT INTO p PARTITION (Region = 'r') (MyId)
VALUES (7)`` stored NULL for Region, ``INSERT OVERWRITE p PARTITION (Region = 'x') ...``
replaced the whole table (every other partition lost), and ``INSERT INTO t BY NAME``
matched the query's columns by position.

The scripts run on PySpark too (parquet tables there, Delta here): the columns, rows and
error classes must be Spark's. Parquet tables keep their partition columns last, so the
scripts declare them last; the shim's Delta tables keep the declared order, checked apart.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from spark_outcomes import shim_session, spark_and_shim_outcomes

from sparkshim.errors import AnalysisException, ParseException, UnsupportedSqlError

pytestmark = pytest.mark.embedded

PARTITIONED = (
    "CREATE TABLE p USING {fmt} PARTITIONED BY (Region)"
    " AS SELECT 1 AS MyId, 'x' AS Region UNION ALL SELECT 2, 'y'"
)
TWO_LEVELS = "CREATE TABLE p (C INT, A INT, B INT) USING {fmt} PARTITIONED BY (A, B)"

# (statements run in turn, the query whose columns and rows are compared)
SCRIPTS: dict[str, tuple[list[str], str]] = {
    "static value, column list, overwrite of one partition": (
        [
            PARTITIONED,
            "INSERT INTO p PARTITION (Region = 'r') (MyId) VALUES (7)",
            "INSERT OVERWRITE p PARTITION (Region = 'x') (MyId) VALUES (9)",
            "INSERT INTO p PARTITION (region = 'q') SELECT 6",
        ],
        "SELECT * FROM p",
    ),
    "static value cast to the column's type, dynamic column from the query": (
        [TWO_LEVELS, "INSERT INTO p PARTITION (a = '01', B) SELECT 5, 6"],
        "SELECT * FROM p",
    ),
    "static NULL and negative values": (
        [
            TWO_LEVELS,
            "INSERT INTO p PARTITION (A = NULL, B = 2) SELECT 5",
            "INSERT INTO p PARTITION (A = -1, b = 2) VALUES (6)",
        ],
        "SELECT * FROM p",
    ),
    "overwrite of one partition of two levels": (
        [
            TWO_LEVELS,
            "INSERT INTO p VALUES (1, 1, 1), (2, 1, 2), (3, 2, 1), (4, NULL, 1)",
            "INSERT OVERWRITE p PARTITION (A = 1, B = 2) SELECT 20",
            "INSERT OVERWRITE p PARTITION (A = NULL, B = 1) SELECT 40",
        ],
        "SELECT * FROM p",
    ),
    "overwrite of one partition with no rows": (
        [
            TWO_LEVELS,
            "INSERT INTO p VALUES (1, 1, 1), (2, 1, 2)",
            "INSERT OVERWRITE p PARTITION (A = 1, B = 1) SELECT 9 WHERE false",
        ],
        "SELECT * FROM p",
    ),
    "static value that is not the column's type": (
        [TWO_LEVELS, "INSERT INTO p PARTITION (A = '1.5', B = 2) SELECT 5"],
        "SELECT * FROM p",
    ),
    "static values as text of a STRING partition": (
        [
            "CREATE TABLE p (C INT, S STRING) USING {fmt} PARTITIONED BY (S)",
            "INSERT INTO p PARTITION (s = 1.50) SELECT 1",
            "INSERT INTO p PARTITION (s = true) SELECT 2",
        ],
        "SELECT * FROM p",
    ),
    "one partition column twice": (
        [TWO_LEVELS, "INSERT INTO p PARTITION (A = 1, a = 2) SELECT 5"],
        "SELECT * FROM p",
    ),
    "BY NAME in another case, missing columns NULL": (
        [
            "CREATE TABLE p (a INT, B STRING, c INT) USING {fmt}",
            "INSERT INTO p BY NAME SELECT 'x' AS b, 1 AS A",
            "INSERT INTO p BY NAME SELECT 3 AS C, 2 AS a",
        ],
        "SELECT * FROM p",
    ),
    "INSERT OVERWRITE BY NAME": (
        [
            "CREATE TABLE p (a INT, B STRING, c INT) USING {fmt}",
            "INSERT INTO p VALUES (9, 'z', 9)",
            "INSERT OVERWRITE p BY NAME SELECT 'x' AS b, 1 AS A",
        ],
        "SELECT * FROM p",
    ),
    "BY NAME of a column the table lacks": (
        [
            "CREATE TABLE p (a INT, B STRING, c INT) USING {fmt}",
            "INSERT INTO p BY NAME SELECT 'x' AS b, 1 AS nope",
        ],
        "SELECT * FROM p",
    ),
    "BY NAME of one column twice": (
        [
            "CREATE TABLE p (a INT, B STRING, c INT) USING {fmt}",
            "INSERT INTO p BY NAME SELECT 'x' AS b, 1 AS a, 2 AS A",
        ],
        "SELECT * FROM p",
    ),
    "BY NAME of VALUES": (
        [
            "CREATE TABLE p (a INT, B STRING, c INT) USING {fmt}",
            "INSERT INTO p BY NAME VALUES (1, 'x', 3)",
        ],
        "SELECT * FROM p",
    ),
    "BY NAME with a static partition value": (
        [
            "CREATE TABLE p (C INT, D STRING, A INT) USING {fmt} PARTITIONED BY (A)",
            "INSERT INTO p PARTITION (a = 1) BY NAME SELECT 'x' AS d, 3 AS C",
            "INSERT INTO p PARTITION (A = 2) BY NAME SELECT 'y' AS D",
        ],
        "SELECT * FROM p",
    ),
}


@pytest.fixture
def shim(tmp_path: Path) -> Iterator[Any]:
    yield from shim_session(tmp_path)


@pytest.mark.parametrize("name", list(SCRIPTS))
def test_insert_clauses_as_spark(name: str, shim: Any, pyspark_session: Any) -> None:
    expected, actual = spark_and_shim_outcomes(pyspark_session, shim, ("p",), *SCRIPTS[name])
    assert actual == expected


def test_spark_refuses_a_partition_clause_of_a_non_partition_column(pyspark_session: Any) -> None:
    """Spark refuses these; its datasource tables with a legacy message, Delta's (a V2
    table) with NON_PARTITION_COLUMN, which the shim gives (next test)."""
    for create, insert in [
        (
            "CREATE TABLE p (x INT, y STRING) USING parquet",
            "INSERT INTO p PARTITION (y='r') VALUES (1)",
        ),
        (PARTITIONED.format(fmt="parquet"), "INSERT INTO p PARTITION (MyId = 3) SELECT 'z'"),
    ]:
        pyspark_session.sql("DROP TABLE IF EXISTS p")
        try:
            pyspark_session.sql(create)
            with pytest.raises(Exception, match="not a valid partition column"):
                pyspark_session.sql(insert)
        finally:
            pyspark_session.sql("DROP TABLE IF EXISTS p")


def _rows(session: Any, table: str = "p") -> list[tuple[Any, ...]]:
    return sorted((tuple(row) for row in session.sql(f"SELECT * FROM {table}").collect()), key=repr)


def _version(session: Any, table: str = "p") -> int:
    return int(session.sql(f"DESCRIBE HISTORY {table}").collect()[0].version)


@pytest.mark.parametrize(
    ("create", "insert", "column"),
    [
        (
            "CREATE TABLE p (x INT, y STRING) USING delta",
            "INSERT INTO p PARTITION (y='r') VALUES (1)",
            "`y`",
        ),
        (PARTITIONED, "INSERT INTO p PARTITION (MyId = 3) SELECT 'z'", "`MyId`"),
        (PARTITIONED, "INSERT OVERWRITE p PARTITION (nope = 3) SELECT 'z'", "`nope`"),
        (PARTITIONED, "INSERT OVERWRITE p PARTITION (myid) SELECT 1, 'z'", "`myid`"),
    ],
)
def test_a_partition_clause_naming_a_non_partition_column_changes_nothing(
    shim: Any, create: str, insert: str, column: str
) -> None:
    shim.sql(create.format(fmt="delta"))
    shim.sql("INSERT INTO p SELECT * FROM p")  # a second version, rows either way
    before, version = _rows(shim), _version(shim)
    with pytest.raises(AnalysisException, match=rf"\[NON_PARTITION_COLUMN\].*{column}"):
        shim.sql(insert)
    assert (_rows(shim), _version(shim)) == (before, version)


def test_delta_keeps_declared_order_of_partition_columns(shim: Any) -> None:
    """On Delta a partition column keeps its place: the query supplies the columns
    without a static value in the table's order, a dynamic partition column among them."""
    shim.sql(
        "CREATE TABLE p (Region STRING, MyId INT, Note STRING) USING delta PARTITIONED BY (Region)"
    )
    shim.sql("INSERT INTO p PARTITION (REGION = 'r') SELECT 1, 'n'")
    shim.sql("INSERT INTO p PARTITION (region) SELECT 'w', 2, 'm'")
    shim.sql("INSERT INTO p PARTITION (Region = 's') (note) VALUES ('o')")
    assert _rows(shim) == [("r", 1, "n"), ("s", None, "o"), ("w", 2, "m")]
    assert shim.sql("SELECT * FROM p").columns == ["Region", "MyId", "Note"]


def test_a_partial_static_spec_takes_the_other_partition_columns_from_the_query(
    shim: Any,
) -> None:
    """Delta (a V2 table in Spark) needs no value for every partition column; parquet
    tables do, so this is checked on the shim alone."""
    shim.sql(TWO_LEVELS.format(fmt="delta"))
    shim.sql("INSERT INTO p PARTITION (A = 1) SELECT 5, 6")
    shim.sql("INSERT INTO p PARTITION (b = 3) SELECT 7, 8")
    assert _rows(shim) == [(5, 1, 6), (7, 8, 3)]


def test_overwrite_of_a_partition_is_one_commit_and_keeps_the_others(shim: Any) -> None:
    shim.sql(PARTITIONED.format(fmt="delta"))
    shim.sql("INSERT INTO p VALUES (3, 'x'), (4, 'z')")
    version = _version(shim)
    shim.sql("INSERT OVERWRITE p PARTITION (region = 'x') SELECT 10 UNION ALL SELECT 11")
    assert _rows(shim) == [(10, "x"), (11, "x"), (2, "y"), (4, "z")]
    assert _version(shim) == version + 1


def test_a_static_partition_column_in_the_column_list_is_refused(shim: Any) -> None:
    shim.sql(PARTITIONED.format(fmt="delta"))
    with pytest.raises(AnalysisException, match=r"STATIC_PARTITION_COLUMN_IN_INSERT_COLUMN_LIST"):
        shim.sql("INSERT INTO p PARTITION (Region = 'r') (MyId, region) VALUES (7, 's')")
    with pytest.raises(AnalysisException, match=r"STATIC_PARTITION_COLUMN_IN_INSERT_COLUMN_LIST"):
        shim.sql("INSERT INTO p PARTITION (Region = 'r') BY NAME SELECT 7 AS MyId, 's' AS region")
    assert _rows(shim) == [(1, "x"), (2, "y")]


def test_by_name_with_a_column_list_is_a_syntax_error(shim: Any) -> None:
    shim.sql("CREATE TABLE p (a INT, b INT) USING delta")
    with pytest.raises(ParseException, match=r"PARSE_SYNTAX_ERROR"):
        shim.sql("INSERT INTO p (a) BY NAME SELECT 1 AS a")
    assert _rows(shim) == []


def test_dynamic_partition_overwrite_is_refused(shim: Any) -> None:
    """With spark.sql.sources.partitionOverwriteMode=dynamic Spark replaces only the
    partitions the rows fall in; the shim would replace the whole table, so it refuses."""
    shim.sql(PARTITIONED.format(fmt="delta"))
    shim.conf.set("spark.sql.sources.partitionOverwriteMode", "DYNAMIC")
    with pytest.raises(UnsupportedSqlError, match=r"partitionOverwriteMode.*PARTITION \("):
        shim.sql("INSERT OVERWRITE p SELECT 5, 'x'")
    with pytest.raises(UnsupportedSqlError, match=r"partitionOverwriteMode"):
        shim.sql("INSERT OVERWRITE p PARTITION (Region) SELECT 5, 'x'")
    assert _rows(shim) == [(1, "x"), (2, "y")]
    shim.sql("INSERT OVERWRITE p PARTITION (Region = 'x') SELECT 5")  # every column static
    assert _rows(shim) == [(2, "y"), (5, "x")]


def test_overwrite_schema_with_a_partition_clause_is_refused(shim: Any) -> None:
    shim.sql(PARTITIONED.format(fmt="delta"))
    shim.conf.set("sparkshim.write.overwriteSchema", "true")
    with pytest.raises(AnalysisException, match=r"overwriteSchema"):
        shim.sql("INSERT OVERWRITE p PARTITION (Region = 'x') SELECT 5")
    assert _rows(shim) == [(1, "x"), (2, "y")]


def test_by_name_into_a_table_at_a_path(shim: Any, tmp_path: Path) -> None:
    path = tmp_path / "by_name"
    shim.sql(f"CREATE TABLE delta.`{path}` (Id INT, Label STRING) USING delta")
    shim.sql(f"INSERT INTO delta.`{path}` BY NAME SELECT 'a' AS LABEL, 1 AS id")
    assert _rows(shim, f"delta.`{path}`") == [(1, "a")]
