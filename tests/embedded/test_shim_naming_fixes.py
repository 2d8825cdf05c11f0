"""Three differences of the embedded engine from Spark 3.5 in how a query names columns
(``spark.sql.caseSensitive`` off), fixed; the answers below are PySpark 3.5's (its result
schema, so the columns' names and types, and its rows, or its error class), and a last
test checks them against PySpark where Java is present.

* A field of a STRUCT is named in any case: ``SELECT s.aa, count(*) FROM t GROUP BY
  s.Aa`` is grouped by the expression it selects. DuckDB compares the SELECT list, HAVING
  and ORDER BY with the GROUP BY keys as the fields are written, and the engine raised
  MISSING_AGGREGATION; the fields are now written as the struct spells them. An item
  reading a field beside ROLLUP / CUBE / GROUPING SETS keys keeps its name as written
  (the engine named it by the key, as Spark names a column).
* A column between two ``*``s (``SELECT *, myid, * FROM t``) is named as written; the
  engine named it as the table spells it.
* A NATURAL JOIN whose left side holds two columns one name names in any case
  (``(n1 NATURAL JOIN n2) NATURAL JOIN n3`` with ``MyId`` and ``MYID`` on the left) joins
  the exactly equal names, each the first column of a side so named in any case; the
  engine refused it (AMBIGUOUS_REFERENCE, or ``*`` over a NATURAL JOIN) and answered a
  parenthesized NATURAL JOIN with DuckDB's names, matched in any case.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pyspark.sql import Row
from spark_outcomes import shim_with_tables, sparks_typed_answers, typed_answer

pytestmark = pytest.mark.embedded

TABLES = [
    "CREATE TABLE nested USING {fmt} AS SELECT named_struct('aa', 1, 'Bb', named_struct('Cc', 5))"
    " AS s, 1 AS MyId UNION ALL SELECT named_struct('aa', 1, 'Bb', named_struct('Cc', 6)), 2",
    "CREATE TABLE people (MyId INT, Label STRING) USING {fmt}",
    "INSERT INTO people VALUES (1, 'a'), (2, 'b')",
    "CREATE TABLE amounts (MYID INT, Amount INT) USING {fmt}",
    "INSERT INTO amounts VALUES (1, 10)",
    "CREATE TABLE n1 (MyId INT, a INT) USING {fmt}",
    "INSERT INTO n1 VALUES (1, 10), (2, 20)",
    "CREATE TABLE n2 (MYID INT, a INT, b INT) USING {fmt}",
    "INSERT INTO n2 VALUES (1, 10, 100), (3, 10, 300), (2, 99, 200)",
    "CREATE TABLE n3 (MyId INT, b INT, c INT) USING {fmt}",
    "INSERT INTO n3 VALUES (1, 100, 7), (2, 100, 8), (1, 300, 9), (5, 500, 1)",
    "CREATE TABLE n4 (MYID INT, z INT) USING {fmt}",
    "INSERT INTO n4 VALUES (1, 5)",
]
TABLE_NAMES = ("nested", "people", "amounts", "n1", "n2", "n3", "n4")

# (query, PySpark's answer: its schema and sorted rows, or its error class)
STRUCT_FIELDS = [
    (
        "SELECT s.aa, count(*) FROM nested GROUP BY s.Aa",
        ("struct<aa:int,count(1):bigint>", [(1, 2)]),
    ),
    (
        "SELECT s.AA, count(*) FROM nested GROUP BY s.aa HAVING s.Aa > 0",
        ("struct<AA:int,count(1):bigint>", [(1, 2)]),
    ),
    (
        "SELECT s.aa, count(*) FROM nested GROUP BY s.Aa ORDER BY s.AA",
        ("struct<aa:int,count(1):bigint>", [(1, 2)]),
    ),
    (
        "SELECT s.aa, count(*) FROM nested GROUP BY 1 ORDER BY s.AA",
        ("struct<aa:int,count(1):bigint>", [(1, 2)]),
    ),
    (
        "SELECT s.AA, s.aa, count(*) FROM nested GROUP BY s.Aa",
        ("struct<AA:int,aa:int,count(1):bigint>", [(1, 1, 2)]),
    ),
    (
        "SELECT nested.S.BB.cc, count(*) FROM nested GROUP BY s.bb.Cc",
        ("struct<cc:int,count(1):bigint>", [(5, 1), (6, 1)]),
    ),
    (
        "SELECT x.s.bb.cc AS c FROM nested AS x GROUP BY X.S.Bb.cC",
        ("struct<c:int>", [(5,), (6,)]),
    ),
    (
        "SELECT s.aa + myid FROM nested GROUP BY s.AA + MYID",
        ("struct<(s.aa + myid):int>", [(2,), (3,)]),
    ),
    (
        "SELECT s.bb, count(*) FROM nested GROUP BY s.BB",
        ("struct<bb:struct<Cc:int>,count(1):bigint>", [(Row(Cc=5), 1), (Row(Cc=6), 1)]),
    ),
    (
        "SELECT s.bb.cc, count(*) FROM (SELECT * FROM nested) AS d GROUP BY s.BB.CC",
        ("struct<cc:int,count(1):bigint>", [(5, 1), (6, 1)]),
    ),
    ("SELECT * FROM (SELECT s.AA FROM nested GROUP BY s.aa) AS d", ("struct<AA:int>", [(1,)])),
    (
        "WITH c AS (SELECT * FROM nested) SELECT s.AA, count(*) FROM c GROUP BY s.aa",
        ("struct<AA:int,count(1):bigint>", [(1, 2)]),
    ),
    (
        "SELECT s.aa, count(*) FROM nested GROUP BY ROLLUP(s.AA)",
        ("struct<aa:int,count(1):bigint>", [(1, 2), (None, 2)]),
    ),
    (
        "SELECT x.s.aa, x.MYID, count(*) FROM nested AS x GROUP BY ROLLUP(s.AA, myid)",
        (
            "struct<aa:int,myid:int,count(1):bigint>",
            [(1, 1, 1), (1, 2, 1), (1, None, 2), (None, None, 2)],
        ),
    ),
    (
        "SELECT s.bb.CC, count(*) FROM nested GROUP BY CUBE(s.Bb.cc)",
        ("struct<CC:int,count(1):bigint>", [(5, 1), (6, 1), (None, 2)]),
    ),
    (
        "SELECT s.Bb.cc, count(*) FROM nested GROUP BY GROUPING SETS ((s.bb.CC))",
        ("struct<cc:int,count(1):bigint>", [(5, 1), (6, 1)]),
    ),
    # a column (no field) beside a ROLLUP key: named by the key, as before
    (
        "SELECT myid, count(*) FROM nested GROUP BY ROLLUP(MYID)",
        ("struct<MYID:int,count(1):bigint>", [(1, 1), (2, 1), (None, 2)]),
    ),
]

STARS = [
    (
        "SELECT *, myid, * FROM people",
        (
            "struct<MyId:int,Label:string,myid:int,MyId:int,Label:string>",
            [(1, "a", 1, 1, "a"), (2, "b", 2, 2, "b")],
        ),
    ),
    (
        "SELECT *, myid, *, label, * FROM people",
        (
            "struct<MyId:int,Label:string,myid:int,MyId:int,Label:string,label:string,"
            "MyId:int,Label:string>",
            [(1, "a", 1, 1, "a", "a", 1, "a"), (2, "b", 2, 2, "b", "b", 2, "b")],
        ),
    ),
    (
        "SELECT myid, *, label AS L, *, LABEL FROM people",
        (
            "struct<myid:int,MyId:int,Label:string,L:string,MyId:int,Label:string,LABEL:string>",
            [(1, 1, "a", "a", 1, "a", "a"), (2, 2, "b", "b", 2, "b", "b")],
        ),
    ),
    (
        "SELECT t1.*, myid, t2.* FROM people AS t1 JOIN amounts AS t2 USING (myid)",
        ("struct<MyId:int,Label:string,myid:int,MYID:int,Amount:int>", [(1, "a", 1, 1, 10)]),
    ),
    (
        "SELECT people.*, people.MYID, label, amounts.* FROM people JOIN amounts"
        " ON people.myid = amounts.myid",
        (
            "struct<MyId:int,Label:string,MYID:int,label:string,MYID:int,Amount:int>",
            [(1, "a", 1, "a", 1, 10)],
        ),
    ),
    (
        "SELECT *, myid, * FROM people UNION ALL SELECT *, myid, * FROM people",
        (
            "struct<MyId:int,Label:string,myid:int,MyId:int,Label:string>",
            [(1, "a", 1, 1, "a"), (1, "a", 1, 1, "a"), (2, "b", 2, 2, "b"), (2, "b", 2, 2, "b")],
        ),
    ),
]

# n1 NATURAL JOIN n2 joins on a alone and holds MyId and MYID; n3 (MyId, b, c) then joins
# the exactly equal MyId and b, MyId being n1's (the first so named in any case)
NATURAL_JOINS = [
    (
        "SELECT * FROM n1 NATURAL JOIN n2 NATURAL JOIN n3",
        ("struct<MyId:int,b:int,a:int,MYID:int,c:int>", [(1, 100, 10, 1, 7), (1, 300, 10, 3, 9)]),
    ),
    (
        "SELECT * FROM (n1 NATURAL JOIN n2) NATURAL JOIN n3",
        ("struct<MyId:int,b:int,a:int,MYID:int,c:int>", [(1, 100, 10, 1, 7), (1, 300, 10, 3, 9)]),
    ),
    (
        "SELECT count(*) FROM n1 NATURAL JOIN n2 NATURAL JOIN n3",
        ("struct<count(1):bigint>", [(2,)]),
    ),
    ("SELECT count(*) FROM (n1 NATURAL JOIN n2)", ("struct<count(1):bigint>", [(2,)])),
    (
        "SELECT * FROM n2 NATURAL JOIN n1 NATURAL JOIN n3",
        ("struct<b:int,MYID:int,a:int,MyId:int,c:int>", [(100, 1, 10, 1, 7)]),
    ),
    (
        "SELECT * FROM n1 NATURAL JOIN n2 NATURAL LEFT JOIN n3",
        ("struct<MyId:int,b:int,a:int,MYID:int,c:int>", [(1, 100, 10, 1, 7), (1, 300, 10, 3, 9)]),
    ),
    (
        "SELECT * FROM n1 NATURAL JOIN n2 NATURAL FULL JOIN n3",
        (
            "struct<MyId:int,b:int,a:int,MYID:int,c:int>",
            [
                (1, 100, 10, 1, 7),
                (1, 300, 10, 3, 9),
                (2, 100, None, None, 8),
                (5, 500, None, None, 1),
            ],
        ),
    ),
    (
        "SELECT * FROM n1 NATURAL JOIN n2 NATURAL RIGHT JOIN n3",
        (
            "struct<MyId:int,b:int,a:int,MYID:int,c:int>",
            [
                (1, 100, 10, 1, 7),
                (1, 300, 10, 3, 9),
                (2, 100, None, None, 8),
                (5, 500, None, None, 1),
            ],
        ),
    ),
    (
        "SELECT * FROM n1 JOIN n2 ON n1.a = n2.a NATURAL JOIN n3",
        (
            "struct<MyId:int,b:int,a:int,MYID:int,a:int,c:int>",
            [(1, 100, 10, 1, 10, 7), (1, 300, 10, 3, 10, 9)],
        ),
    ),
    (
        "SELECT * FROM n1 JOIN n2 USING (a) NATURAL JOIN n3",
        ("struct<MyId:int,b:int,a:int,MYID:int,c:int>", [(1, 100, 10, 1, 7), (1, 300, 10, 3, 9)]),
    ),
    # MYID is exactly equal to n2's; Spark joins the first column so named in any case, n1's
    (
        "SELECT * FROM n1 NATURAL JOIN n2 NATURAL JOIN n4",
        ("struct<MyId:int,a:int,MYID:int,b:int,z:int>", [(1, 10, 1, 100, 5), (1, 10, 3, 300, 5)]),
    ),
    (
        "SELECT *, b AS bb FROM n1 NATURAL JOIN n2 NATURAL JOIN n3",
        (
            "struct<MyId:int,b:int,a:int,MYID:int,c:int,bb:int>",
            [(1, 100, 10, 1, 7, 100), (1, 300, 10, 3, 9, 300)],
        ),
    ),
    (
        "SELECT n1.*, n3.* FROM n1 NATURAL JOIN n2 NATURAL JOIN n3",
        ("struct<MyId:int,a:int,MyId:int,b:int,c:int>", [(1, 10, 1, 100, 7), (1, 10, 1, 300, 9)]),
    ),
    (
        "SELECT b, c, n3.myid FROM n1 NATURAL JOIN n2 NATURAL FULL JOIN n3 WHERE b > 0",
        ("struct<b:int,c:int,myid:int>", [(100, 7, 1), (100, 8, 2), (300, 9, 1), (500, 1, 5)]),
    ),
    (
        "SELECT b, count(*) FROM n1 NATURAL JOIN n2 NATURAL JOIN n3 GROUP BY b",
        ("struct<b:int,count(1):bigint>", [(100, 1), (300, 1)]),
    ),
    (
        "SELECT c AS b FROM n1 NATURAL JOIN n2 NATURAL JOIN n3 ORDER BY b",
        ("struct<b:int>", [(7,), (9,)]),
    ),
    # MyId (n1's) and MYID (n2's): ambiguous to Spark too
    ("SELECT myid FROM n1 NATURAL JOIN n2 NATURAL JOIN n3", "[AMBIGUOUS_REFERENCE]"),
]

CASES = STRUCT_FIELDS + STARS + NATURAL_JOINS


@pytest.fixture(scope="module")
def shim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    yield from shim_with_tables(tmp_path_factory.mktemp("naming_fixes"), TABLES)


@pytest.mark.parametrize(("query", "expected"), STRUCT_FIELDS)
def test_struct_fields_are_grouped_in_any_case(query: str, expected: Any, shim: Any) -> None:
    assert typed_answer(shim, query) == expected


@pytest.mark.parametrize(("query", "expected"), STARS)
def test_columns_between_stars_are_named_as_written(query: str, expected: Any, shim: Any) -> None:
    assert typed_answer(shim, query) == expected


@pytest.mark.parametrize(("query", "expected"), NATURAL_JOINS)
def test_natural_join_of_a_side_holding_one_name_in_two_cases(
    query: str, expected: Any, shim: Any
) -> None:
    assert typed_answer(shim, query) == expected


def test_recorded_answers_are_sparks(pyspark_session: Any) -> None:
    """The answers above, as PySpark gives them (parquet tables on its side)."""
    assert sparks_typed_answers(pyspark_session, TABLE_NAMES, TABLES, CASES) == CASES
