"""Six differences of the embedded engine from Spark 3.5 (ANSI off), each a wrong type,
a wrong answer or a wrong refusal, fixed; the answers below are PySpark 3.5's (its result
types and rows, or its error class), and a last test checks them against PySpark where Java
is present.

* ``nullif(a, b)`` is Spark's ``IF(a = b, NULL, a)``: typed as ``a`` (``nullif(NULL, i)``
  is a NULL, VOID). A NULL given to a function of numbers is a DOUBLE there (Spark's
  default numeric type): ``sum(nullif(NULL, i))`` is a DOUBLE, which the engine typed
  BIGINT, as it did the sum of a CASE, IF or COALESCE of NULLs, of a NULL column of a
  VALUES list or a subquery; ``nullif(d, i) + 1`` is typed by ``d`` alone.
* ``div`` takes two BIGINTs or DECIMALs once Spark has cast its operands (a STRING to a
  DOUBLE, an integral number to a BIGINT, a DECIMAL beside a FLOAT or DOUBLE to a
  DOUBLE): any other pair is Spark's DATATYPE_MISMATCH, which the engine answered
  (``'7' div CAST(7.5 AS FLOAT)`` was 0) or refused with an error of its own.
* ``CASE ... END div (b)``: ``div`` after an operand is the operator, its right operand
  parenthesized; the engine took it for a call of ``div`` with one argument and raised
  WRONG_NUM_ARGS.
* ``x IS TRUE`` and ``x IS FALSE`` are Spark's ``x <=> true`` (``false``): a number is
  compared as one (``2 IS TRUE`` is false), where the engine took any number but zero for
  true.
* ``current_user()`` (and ``user()``) is the user the session runs as (``SPARK_USER`` where
  set, else the system's): the engine gave DuckDB's ``'duckdb'``; ``session_user()`` is no
  function of Spark 3.5 (``UNRESOLVED_ROUTINE``), where the engine answered.
* A CAST written as one (``CAST(3 AS SMALLINT)``) is typed as its type beside a DECIMAL,
  not as a literal of its value's digits (``10L`` is one): the engine typed
  ``1.5 - CAST(3 AS SMALLINT)`` a DECIMAL(3,1) (Spark: DECIMAL(7,1)).
"""

from __future__ import annotations

import getpass
import os
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from spark_outcomes import shim_with_tables, sparks_typed_answers, typed_answer

from sparkshim.errors import AnalysisException

pytestmark = pytest.mark.embedded

TABLE = [
    "CREATE TABLE fixes (i INT, b INT, a INT, d DECIMAL(10, 2), x DOUBLE, s SMALLINT) USING {fmt}",
    "INSERT INTO fixes VALUES (1, 2, 3, 5.50, 2.0, 7), (2, 0, -1, NULL, 0.5, 3)",
]

# (query, PySpark's answer: its schema and sorted rows, or its error class)
NULL_TYPED = [
    (
        "SELECT sum(nullif(NULL, i)) FROM fixes",
        ("struct<sum(nullif(NULL, i)):double>", [(None,)]),
    ),
    ("SELECT nullif(NULL, i) FROM fixes", ("struct<nullif(NULL, i):void>", [(None,), (None,)])),
    (
        "SELECT avg(nullif(NULL, i)), sum(nullif(NULL, d)), sum(DISTINCT nullif(NULL, x))"
        " FROM fixes",
        (
            "struct<avg(nullif(NULL, i)):double,sum(nullif(NULL, d)):double,"
            "sum(DISTINCT nullif(NULL, x)):double>",
            [(None, None, None)],
        ),
    ),
    (
        "SELECT i, sum(nullif(NULL, i)) OVER (PARTITION BY i) FROM fixes",
        (
            "struct<i:int,sum(nullif(NULL, i)) OVER (PARTITION BY i ROWS BETWEEN UNBOUNDED"
            " PRECEDING AND UNBOUNDED FOLLOWING):double>",
            [(1, None), (2, None)],
        ),
    ),
    (
        "SELECT sum(if(i > 0, NULL, NULL)), sum(CASE WHEN i > 5 THEN NULL END),"
        " sum(coalesce(NULL, NULL)) FROM fixes",
        (
            "struct<sum((IF((i > 0), NULL, NULL))):double,sum(CASE WHEN (i > 5) THEN NULL END)"
            ":double,sum(coalesce(NULL, NULL)):double>",
            [(None, None, None)],
        ),
    ),
    ("SELECT sum(v) FROM VALUES (NULL), (NULL) AS w(v)", ("struct<sum(v):double>", [(None,)])),
    (
        "SELECT sum(n) FROM (SELECT nullif(NULL, i) AS n FROM fixes)",
        ("struct<sum(n):double>", [(None,)]),
    ),
    (
        "SELECT coalesce(sum(nullif(NULL, i)), 0) AS total FROM fixes",
        ("struct<total:double>", [(0.0,)]),
    ),
    (
        "SELECT -nullif(NULL, i), abs(nullif(NULL, i)), round(nullif(NULL, i), 1) FROM fixes",
        (
            "struct<(- nullif(NULL, i)):double,abs(nullif(NULL, i)):double,"
            "round(nullif(NULL, i), 1):double>",
            [(None, None, None), (None, None, None)],
        ),
    ),
    (
        "SELECT nullif(NULL, i) + d, nullif(NULL, i) + x, nullif(NULL, i) + i FROM fixes",
        (
            "struct<(nullif(NULL, i) + d):decimal(11,2),(nullif(NULL, i) + x):double,"
            "(nullif(NULL, i) + i):int>",
            [(None, None, None), (None, None, None)],
        ),
    ),
    (
        "SELECT if(i > 0, nullif(NULL, i), 1.5) FROM fixes",
        ("struct<(IF((i > 0), nullif(NULL, i), 1.5)):decimal(2,1)>", [(None,), (None,)]),
    ),
    (
        "SELECT nullif(d, i) + 1, nullif(i, x) + 1, sum(nullif(d, i)) OVER () FROM fixes",
        (
            "struct<(nullif(d, i) + 1):decimal(11,2),(nullif(i, x) + 1):int,"
            "sum(nullif(d, i)) OVER (ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)"
            ":decimal(20,2)>",
            [(Decimal("6.50"), 2, Decimal("5.50")), (None, 3, Decimal("5.50"))],
        ),
    ),
    (
        "SELECT nullif(d, 1) / 3, avg(nullif(d, 1)) OVER () FROM fixes",
        (
            "struct<(nullif(d, 1) / 3):decimal(14,6),avg(nullif(d, 1)) OVER (ROWS BETWEEN"
            " UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING):decimal(14,6)>",
            [(Decimal("1.833333"), Decimal("5.500000")), (None, Decimal("5.500000"))],
        ),
    ),
    (
        "SELECT sum(x), sum(CAST(x AS FLOAT)) FROM fixes",
        ("struct<sum(x):double,sum(CAST(x AS FLOAT)):double>", [(2.5, 2.5)]),
    ),
]

DIV_OPERANDS = [
    ("SELECT d div x FROM fixes", "[DATATYPE_MISMATCH.BINARY_OP_WRONG_TYPE]"),
    ("SELECT '7' div CAST(7.5 AS FLOAT)", "[DATATYPE_MISMATCH.BINARY_OP_DIFF_TYPES]"),
    ("SELECT i div '7' FROM fixes", "[DATATYPE_MISMATCH.BINARY_OP_DIFF_TYPES]"),
    ("SELECT '7' div d FROM fixes", "[DATATYPE_MISMATCH.BINARY_OP_WRONG_TYPE]"),
    ("SELECT d div true FROM fixes", "[DATATYPE_MISMATCH.BINARY_OP_DIFF_TYPES]"),
    ("SELECT DATE'2024-01-01' div i FROM fixes", "[DATATYPE_MISMATCH.BINARY_OP_DIFF_TYPES]"),
    (
        "SELECT TIMESTAMP'2024-01-01 00:00:00' div TIMESTAMP'2024-01-01 00:00:00'",
        "[DATATYPE_MISMATCH.BINARY_OP_WRONG_TYPE]",
    ),
    ("SELECT x div NULL FROM fixes", "[DATATYPE_MISMATCH.BINARY_OP_DIFF_TYPES]"),
    # floor and ceil of a NULL are BIGINTs (of a DOUBLE NULL)
    ("SELECT x div floor(nullif(NULL, i)) FROM fixes", "[DATATYPE_MISMATCH.BINARY_OP_DIFF_TYPES]"),
    (
        "SELECT 2.5D div floor(nullif(NULL, i)) FROM fixes",
        "[DATATYPE_MISMATCH.BINARY_OP_DIFF_TYPES]",
    ),
    (
        "SELECT floor(nullif(NULL, i)), ceil(NULL), floor(CASE WHEN i > 5 THEN NULL END),"
        " i div ceil(nullif(NULL, s)) FROM fixes",
        (
            "struct<FLOOR(nullif(NULL, i)):bigint,CEIL(NULL):bigint,"
            "FLOOR(CASE WHEN (i > 5) THEN NULL END):bigint,(i div CEIL(nullif(NULL, s))):bigint>",
            [(None, None, None, None), (None, None, None, None)],
        ),
    ),
    (
        "SELECT s div d, d div s, i div NULL, NULL div d, NULL div NULL FROM fixes",
        (
            "struct<(s div d):bigint,(d div s):bigint,(i div NULL):bigint,(NULL div d):bigint,"
            "(NULL div NULL):bigint>",
            [(1, 0, None, None, None), (None, None, None, None, None)],
        ),
    ),
]

PARENTHESIZED_DIV = [
    (
        "SELECT IF(a > 0, (CASE WHEN b > 1 THEN 10 ELSE 20 END div (CAST(7 AS SMALLINT) % b)),"
        " 0) FROM fixes",
        (
            "struct<(IF((a > 0), (CASE WHEN (b > 1) THEN 10 ELSE 20 END div"
            " (CAST(7 AS SMALLINT) % b)), 0)):bigint>",
            [(0,), (10,)],
        ),
    ),
    (
        "SELECT CASE WHEN b > 1 THEN 10 ELSE 20 END div (7 % b) FROM fixes",
        (
            "struct<(CASE WHEN (b > 1) THEN 10 ELSE 20 END div (7 % b)):bigint>",
            [(10,), (None,)],
        ),
    ),
    (
        "SELECT CASE b WHEN 2 THEN 10 END div (3) AS q FROM fixes",
        ("struct<q:bigint>", [(3,), (None,)]),
    ),
    (
        "SELECT array(7, 8)[0] div (2), NULL div (2), 5L div (2) FROM fixes",
        (
            "struct<(array(7, 8)[0] div 2):bigint,(NULL div 2):bigint,(5 div 2):bigint>",
            [(3, None, 2), (3, None, 2)],
        ),
    ),
    (
        "SELECT i FROM fixes WHERE CASE WHEN b > 1 THEN 10 ELSE 20 END div (b + 1) > 1",
        ("struct<i:int>", [(1,), (2,)]),
    ),
    (
        "SELECT CASE WHEN b > 1 THEN 10 ELSE 20 END DIV(i) div (2) FROM fixes",
        (
            "struct<((CASE WHEN (b > 1) THEN 10 ELSE 20 END div i) div 2):bigint>",
            [(5,), (5,)],
        ),
    ),
    # div(...) where no operand comes before is a call
    ("SELECT div(i, 2) FROM fixes", ("struct<(i div 2):bigint>", [(0,), (1,)])),
    ("SELECT div(i) FROM fixes", "[WRONG_NUM_ARGS.WITHOUT_SUGGESTION]"),
]

# x IS TRUE (FALSE) is Spark's x <=> true (false): a number is compared as one, 5 <=> 1
TRUTH_TESTS = [
    (
        "SELECT i, b IS TRUE, b IS FALSE, b IS NOT TRUE, b IS NOT FALSE, x IS TRUE, d IS TRUE"
        " FROM fixes",
        (
            "struct<i:int,(b <=> true):boolean,(b <=> false):boolean,(NOT (b <=> true)):boolean,"
            "(NOT (b <=> false)):boolean,(x <=> true):boolean,(d <=> true):boolean>",
            [
                (1, False, False, True, True, False, False),
                (2, False, True, True, False, False, False),
            ],
        ),
    ),
    ("SELECT i FROM fixes WHERE b IS NOT TRUE", ("struct<i:int>", [(1,), (2,)])),
    (
        "SELECT count_if(s IS TRUE), count_if(a IS FALSE) FROM fixes",
        ("struct<count_if((s <=> true)):bigint,count_if((a <=> false)):bigint>", [(0, 0)]),
    ),
]

# A CAST written as one is typed before Spark folds it: CAST(3 AS SMALLINT) is a SMALLINT
# (a DECIMAL(5,0) beside a DECIMAL), where 3S is a literal (a DECIMAL(1,0))
_WRITTEN_CAST_ROW = tuple(Decimal(v) for v in ("-1.5", "4.5", "3.25", "-1.5", "4.5", "11.5"))
WRITTEN_CASTS = [
    (
        "SELECT 1.5 - CAST(3 AS SMALLINT), 1.5 * CAST(3 AS TINYINT), CAST(2 AS BIGINT) + 1.25,"
        " 1.5 + CAST(-3 AS INT), 1.5 + 3S, 1.5 + 10L FROM fixes",
        (
            "struct<(1.5 - CAST(3 AS SMALLINT)):decimal(7,1),(1.5 * CAST(3 AS TINYINT))"
            ":decimal(6,1),(CAST(2 AS BIGINT) + 1.25):decimal(23,2),(1.5 + CAST(-3 AS INT))"
            ":decimal(12,1),(1.5 + 3):decimal(3,1),(1.5 + 10):decimal(4,1)>",
            [_WRITTEN_CAST_ROW, _WRITTEN_CAST_ROW],
        ),
    ),
]

# session_user() is no function of Spark 3.5 (current_user() and user() are: see below)
SESSION_USER = [("SELECT session_user() FROM fixes", "[UNRESOLVED_ROUTINE]")]

CASES = NULL_TYPED + DIV_OPERANDS + PARENTHESIZED_DIV + TRUTH_TESTS + WRITTEN_CASTS + SESSION_USER
# current_user() and user() are the user the session runs as (DuckDB's is 'duckdb')
USER_QUERY = "SELECT current_user(), user(), current_user FROM fixes WHERE i = 1"


@pytest.fixture(scope="module")
def shim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    yield from shim_with_tables(tmp_path_factory.mktemp("typing_fixes"), TABLE)


@pytest.mark.parametrize(("query", "expected"), CASES)
def test_answers_as_spark(query: str, expected: Any, shim: Any) -> None:
    assert typed_answer(shim, query) == expected


def test_div_refusal_names_the_expression_and_the_way_out(shim: Any) -> None:
    with pytest.raises(AnalysisException) as refused:
        shim.sql("SELECT '7' div d FROM fixes")
    assert str(refused.value) == (
        '[DATATYPE_MISMATCH.BINARY_OP_WRONG_TYPE] Cannot resolve "(7 div d)" due to data type'
        " mismatch: the binary operator requires the input type"
        ' ("BIGINT" or "DECIMAL" or "INTERVAL YEAR TO MONTH" or "INTERVAL DAY TO SECOND"),'
        ' not "DOUBLE". Cast the operands to BIGINT or DECIMAL, or use / and floor().'
    )


def test_current_user_is_the_user_the_session_runs_as(shim: Any) -> None:
    user = os.environ.get("SPARK_USER") or getpass.getuser()
    assert typed_answer(shim, USER_QUERY) == _user_answer(user)


def _user_answer(user: str) -> Any:
    return (
        "struct<current_user():string,current_user():string,current_user():string>",
        [(user, user, user)],
    )


def test_recorded_answers_are_sparks(pyspark_session: Any) -> None:
    """The answers above, as PySpark gives them (parquet tables on its side)."""
    cases = [*CASES, (USER_QUERY, _user_answer(os.environ.get("SPARK_USER") or getpass.getuser()))]
    assert sparks_typed_answers(pyspark_session, ("fixes",), TABLE, cases) == cases
