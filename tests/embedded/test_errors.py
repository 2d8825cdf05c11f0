"""The embedded engine's errors are Spark's: the error class Spark 3.5 raises for the same
statement, its key words, and nothing of DuckDB, sqlglot or Python.

``SPARK_CLASSES`` are statements real PySpark rejects: each must raise the same error class
on the shim and on PySpark (the oracle). ``REFUSALS`` are statements PySpark answers and the
shim refuses, naming the construct and the way out. ``test_no_engine_internals_leak`` runs
every bad statement and checks only that no internal vocabulary reaches the user.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.errors import AnalysisException, ParseException
from pyspark.sql import SparkSession

from sparkshim import ShimSession
from sparkshim.errors import UnsupportedSqlError

pytestmark = pytest.mark.embedded

SETUP = "CREATE OR REPLACE TEMPORARY VIEW t AS SELECT * FROM VALUES (1, 'x'), (2, 'y') AS t(a, b)"

# Words that only DuckDB, sqlglot or Python would say, or names only the translation has.
LEAKED = re.compile(
    r"Binder Error|Catalog Error|Parser Error|Conversion Error|Out of Range Error"
    r"|Invalid Input Error|Not implemented Error|duckdb|sqlglot|Candidate bindings"
    r"|Candidate functions|LINE \d+:|Required keyword|\bMul\b|\bAnonymous\b|__shim_|<class "
    r"|AttributeError|KeyError|TypeError|ValueError|IndexError|Traceback|INTEGER_LITERAL"
    r"|list_value|regexp_full_match",
    re.IGNORECASE,
)

# (statement, Spark's error class, words the message must hold)
SPARK_CLASSES = [
    ("SELEC * FROM t", "PARSE_SYNTAX_ERROR", ["'SELEC'", "(line 1, pos 0)", "== SQL =="]),
    ("SELECT * FRM t", "PARSE_SYNTAX_ERROR", ["'t'", "(line 1, pos 13)"]),
    ("SELECT a b c FROM t", "PARSE_SYNTAX_ERROR", ["'c'", "(line 1, pos 11)"]),
    ("SELECT 1 +", "PARSE_SYNTAX_ERROR", ["end of input", "(line 1, pos 10)"]),
    ("SELECT 'abc", "PARSE_SYNTAX_ERROR", ["'''", "(line 1, pos 7)"]),
    ("SELECT 1\nFROM t WHER a = 1", "PARSE_SYNTAX_ERROR", ["'a'", "(line 2, pos 12)"]),
    ("FOO BAR", "PARSE_SYNTAX_ERROR", ["'FOO'", "(line 1, pos 0)"]),
    ("1 + 2", "PARSE_SYNTAX_ERROR", ["'1'", "(line 1, pos 0)"]),
    ("CREATE DYNAMC TABLE x AS SELECT 1", "PARSE_SYNTAX_ERROR", ["'DYNAMC'", "(line 1, pos 7)"]),
    ("INSERT INTO t SELEC 1", "PARSE_SYNTAX_ERROR", ["'SELEC'", "(line 1, pos 14)"]),
    ("SELECT 1; SELECT 2", "PARSE_SYNTAX_ERROR", ["extra input 'SELECT'", "(line 1, pos 10)"]),
    ("SELECT nosuchfn(1)", "UNRESOLVED_ROUTINE", ["`nosuchfn`", "search path"]),
    ("SELECT abs(1, 2)", "WRONG_NUM_ARGS.WITHOUT_SUGGESTION", ["`abs` requires 1 parameters"]),
    ("SELECT substr()", "WRONG_NUM_ARGS.WITHOUT_SUGGESTION", ["requires [2, 3] parameters"]),
    # sqlglot would parse these and answer: counting rows, dropping or ignoring an argument.
    ("SELECT count()", "WRONG_NUM_ARGS.WITH_SUGGESTION", ["allowParameterlessCount"]),
    ("SELECT if(1 = 1, 2)", "WRONG_NUM_ARGS.WITHOUT_SUGGESTION", ["`if` requires 3"]),
    ("SELECT nvl(1)", "WRONG_NUM_ARGS.WITHOUT_SUGGESTION", ["`nvl` requires 2"]),
    ("SELECT round(1, 2, 3)", "WRONG_NUM_ARGS.WITHOUT_SUGGESTION", ["requires [1, 2]"]),
    ("SELECT map(1, 2, 3)", "WRONG_NUM_ARGS.WITHOUT_SUGGESTION", ["requires 2n (n > 0)"]),
    ("SELECT explode(array(1), 2)", "WRONG_NUM_ARGS.WITHOUT_SUGGESTION", ["`explode`"]),
    ("SELECT to_date('x', 'y', 'z')", "WRONG_NUM_ARGS.WITHOUT_SUGGESTION", ["[1, 2]"]),
    ("SELECT a, b FROM t GROUP BY a", "MISSING_AGGREGATION", ['"b"', "any_value(b)"]),
    ("SELECT a, count(*) FROM t", "MISSING_GROUP_BY", ["GROUP BY"]),
    ("SELECT * FROM nosuch", "TABLE_OR_VIEW_NOT_FOUND", ["table or view `nosuch` cannot"]),
    ("INSERT INTO nosuch VALUES (1)", "TABLE_OR_VIEW_NOT_FOUND", ["view `nosuch` cannot"]),
    ("DESCRIBE nosuch", "TABLE_OR_VIEW_NOT_FOUND", ["view `nosuch` cannot"]),
    ("DROP TABLE nosuch", "TABLE_OR_VIEW_NOT_FOUND", ["`spark_catalog`.`default`.`nosuch`"]),
    ("SELECT zz FROM t", "UNRESOLVED_COLUMN.WITH_SUGGESTION", ["`zz`", "`a`"]),
    ("SELECT t.zz FROM t", "UNRESOLVED_COLUMN.WITHOUT_SUGGESTION", ["`t`.`zz`"]),
    ("SELECT zz.a FROM t", "UNRESOLVED_COLUMN.WITHOUT_SUGGESTION", ["`zz`.`a`"]),
    ("SELECT a FROM t x JOIN t y ON x.a = y.a", "AMBIGUOUS_REFERENCE", ["`x`.`a`", "`y`.`a`"]),
    (
        "SELECT a + array(1) FROM t",
        "DATATYPE_MISMATCH.BINARY_OP_DIFF_TYPES",
        ['"INT"', '"ARRAY<INT>"'],
    ),
    ("SELECT 'a' || array(1)", "DATATYPE_MISMATCH.DATA_DIFF_TYPES", ["`concat`", "ARRAY<INT>"]),
    # greatest/least widen without promoting a STRING (DuckDB answered both)
    (
        "SELECT least(a, '7') FROM t",
        "DATATYPE_MISMATCH.DATA_DIFF_TYPES",
        ["`least`", '["INT", "STRING"]'],
    ),
    (
        "SELECT greatest(true, a) FROM t",
        "DATATYPE_MISMATCH.DATA_DIFF_TYPES",
        ["`greatest`", '["BOOLEAN", "INT"]'],
    ),
    # a window ordered by a DATE with a RANGE frame of a day-time interval (DuckDB answers)
    (
        "SELECT count(*) OVER (ORDER BY d RANGE BETWEEN INTERVAL 1 DAY PRECEDING AND CURRENT"
        " ROW) FROM VALUES (DATE'2024-01-01') AS v(d)",
        "DATATYPE_MISMATCH.RANGE_FRAME_INVALID_TYPE",
        ['"DATE"', "INTERVAL DAY"],
    ),
    ("SELECT sum(a) FROM t WHERE sum(a) > 1", "INVALID_WHERE_CONDITION", ["sum(a)"]),
    ("SELECT max(sum(a)) FROM t", "NESTED_AGGREGATE_FUNCTION", ["sub-query"]),
    ("SELECT row_number() FROM t", "WINDOW_FUNCTION_WITHOUT_OVER_CLAUSE", ["row_number()"]),
    ("SELECT a FROM t GROUP BY 5", "GROUP_BY_POS_OUT_OF_RANGE", ["position 5", "[1, 1]"]),
    ("SELECT a FROM t ORDER BY 5", "ORDER_BY_POS_OUT_OF_RANGE", ["position 5", "[1, 1]"]),
    ("SELECT a FROM t UNION SELECT a, b FROM t", "NUM_COLUMNS_MISMATCH", ["UNION", "has 2"]),
    ("SELECT a FROM t INTERSECT SELECT a, b FROM t", "NUM_COLUMNS_MISMATCH", ["INTERSECT"]),
    (
        "SELECT a FROM t WHERE a IN (SELECT a, b FROM t)",
        "DATATYPE_MISMATCH.IN_SUBQUERY_LENGTH_MISMATCH",
        ["IN subquery"],
    ),
    (
        "SELECT (SELECT a, b FROM t)",
        "INVALID_SUBQUERY_EXPRESSION.SCALAR_SUBQUERY_RETURN_MORE_THAN_ONE_OUTPUT_COLUMN",
        ["but got 2"],
    ),
    ("SELECT * FROM t LIMIT -1", "INVALID_LIMIT_LIKE_EXPRESSION.IS_NEGATIVE", ['"-1"']),
    # Operand types Spark's analyzer refuses, where the typing knows them (DuckDB answered
    # some: 1 > true, 7.5D div 2, SELECT 1 UNION SELECT true, CASE WHEN 1 THEN ...).
    (
        "SELECT a = DATE'2024-01-01' FROM t",
        "DATATYPE_MISMATCH.BINARY_OP_DIFF_TYPES",
        ["\"(a = DATE '2024-01-01')\"", '("INT" and "DATE")', "Cast one operand"],
    ),
    (
        "SELECT a FROM t WHERE a < TIMESTAMP'2024-01-01 00:00:00'",
        "DATATYPE_MISMATCH.BINARY_OP_DIFF_TYPES",
        ['("INT" and "TIMESTAMP")'],
    ),
    ("SELECT a > true FROM t", "DATATYPE_MISMATCH.BINARY_OP_DIFF_TYPES", ['"(a > true)"']),
    (
        "SELECT a FROM t WHERE a BETWEEN DATE'2024-01-01' AND DATE'2024-02-01'",
        "DATATYPE_MISMATCH.BINARY_OP_DIFF_TYPES",
        ["\"(a >= DATE '2024-01-01')\""],
    ),
    (
        "SELECT a IN (1, DATE'2024-01-01') FROM t",
        "DATATYPE_MISMATCH.DATA_DIFF_TYPES",
        ["`in`", '["INT", "INT", "DATE"]', "Cast the values"],
    ),
    (
        "SELECT a FROM t UNION SELECT a > 1 FROM t",
        "INCOMPATIBLE_COLUMN_TYPE",
        ["UNION can only", "first column of the second table", '"BOOLEAN" type', '"INT"'],
    ),
    (
        "SELECT a, b FROM t INTERSECT ALL SELECT a, true FROM t",
        "INCOMPATIBLE_COLUMN_TYPE",
        ["INTERSECT ALL can only", "second column", '"BOOLEAN"', '"STRING"'],
    ),
    (
        "SELECT a, 1 FROM t UNION ALL SELECT a, 2 FROM t EXCEPT SELECT a, DATE'2024-01-01' FROM t",
        "INCOMPATIBLE_COLUMN_TYPE",
        ["EXCEPT can only", "second column", '"DATE"', '"INT"'],
    ),
    (
        "SELECT a div 2.5D FROM t",
        "DATATYPE_MISMATCH.BINARY_OP_DIFF_TYPES",
        ['"(a div 2.5)"', '("BIGINT" and "DOUBLE")', "BIGINT or DECIMAL"],
    ),
    ("SELECT 7.5D div 2.5 FROM t", "DATATYPE_MISMATCH.BINARY_OP_WRONG_TYPE", ['not "DOUBLE"']),
    (
        "SELECT CASE WHEN NULL THEN 1 ELSE 2 END FROM t",
        "DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE",
        ['Parameter 1 requires the "BOOLEAN" type', '"NULL" has the type "VOID"'],
    ),
    (
        "SELECT CASE WHEN a > 1 THEN 1 WHEN a THEN 2 END FROM t",
        "DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE",
        ["Parameter 2", '"a" has the type "INT"'],
    ),
    ("SELECT if(b, 1, 2) FROM t", "DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE", ['"STRING"']),
    (
        "SELECT coalesce(a, true) FROM t",
        "DATATYPE_MISMATCH.DATA_DIFF_TYPES",
        ["`coalesce`", '("INT" or "BOOLEAN")'],
    ),
    (
        "SELECT CASE WHEN a > 1 THEN a ELSE b = 'x' END FROM t",
        "DATATYPE_MISMATCH.DATA_DIFF_TYPES",
        ["`casewhen`", '["INT", "BOOLEAN"]'],
    ),
    (
        "SELECT a, grouping_id() FROM t GROUP BY a",
        "UNSUPPORTED_GROUPING_EXPRESSION",
        ["GroupingSets/Cube/Rollup"],
    ),
    ("SELECT grouping_id() FROM t", "UNSUPPORTED_GROUPING_EXPRESSION", ["grouping_id()"]),
    (
        "SELECT count(DISTINCT a) OVER (PARTITION BY b) FROM t",
        "DISTINCT_WINDOW_FUNCTION_UNSUPPORTED",
        ["count(DISTINCT a)"],
    ),
]

# Statements Spark answers that the shim refuses, and words the refusal must hold.
# A text of 130 distinct characters beyond ASCII (levenshtein's code holds 127).
_MANY_LETTERS = "".join(chr(code) for code in range(0x100, 0x100 + 130))

REFUSALS = [
    (
        f"SELECT levenshtein('{_MANY_LETTERS}', 'é')",
        ["levenshtein of texts with over 127 distinct characters"],
    ),
    ("SELECT CAST(x AS INTERVAL DAY) FROM VALUES (1) AS t(x)", ["CAST to INTERVAL DAY"]),
    # a function the SQL generator cannot write: named, without the engine behind the shim
    ("SELECT soundex(b) FROM t", ["soundex()"]),
    # refusals whose reason names the engine behind the shim only as "the embedded engine"
    ("SELECT array_distinct(array(b, b)) FROM t", ["array_distinct"]),
    ("SELECT array_remove(array(a, 2), 2) FROM t", ["array_remove"]),
    ("SELECT typeof(a) FROM t", ["typeof()"]),
    ("SELECT hash(a) FROM t", ["hash()"]),
    ("SELECT regexp_replace(b, 'x(?=y)', 'z') FROM t", ["Java-only regex feature"]),
    ("SELECT CAST(x AS INTERVAL YEAR TO MONTH) FROM VALUES ('1-2') AS t(x)", ["CAST to INTERVAL"]),
    ("SELECT 2147483647 * 2147483647", ["overflows INT", "wider type"]),
    ("SELECT INTERVAL '1' DAY + INTERVAL '2' HOUR", ["an interval plus or minus an interval"]),
    ("WITH t AS (SELECT 1 AS x) SELECT * FROM t JOIN t USING (x)", ["named t", "alias one"]),
    # Spark 3.5 answers NULL, not 0, for a row no constant (or constant-filtered) row matches
    (
        "SELECT a, (SELECT count(*) FROM t AS u WHERE u.a = t.a AND 1 = 0) AS n FROM t",
        ["a correlated scalar subquery over a count of constant rows", "from a table"],
    ),
    (
        "SELECT a, (SELECT count(c.k) FROM (SELECT CAST(NULL AS INT) AS k) AS c "
        "WHERE c.k = t.a) AS n FROM t",
        ["a correlated scalar subquery over a count of constant rows"],
    ),
    # sqlglot reads to_json as a JSON node of its own, past the refusal by name
    ("SELECT to_json(named_struct('a', a, 'b', b)) FROM t", ["to_json()", "JSON text"]),
]

# Statements that Spark also rejects but the shim reports in other words (still Spark's
# vocabulary), and anything else that once leaked.
OTHER_BAD = [
    "SELECT date_add('2020-01-01', 'x')",
    "SELECT to_date(1, 2, 3)",
    "SELECT from_json('x')",
    "SELECT upper(1, 2)",
    "SELECT sum(b) FROM t",
    "SELECT nanvl(1.0, 2.0)",
    "SELECT next_day('2020-01-01', 'MO')",
    "SELECT interval 1 day to second",
    "SELECT CAST(12345678901234567890 AS DECIMAL(38,0)) * 12345678901234567890 * 1e0",
    "SELECT a FROM t WHERE row_number() OVER (ORDER BY a) = 1",
    "SELECT CAST('x' AS INT) + 1",
    "SELECT CAST(300 AS TINYINT)",
    "CREATE FUNCTION f AS 'x.Y'",
    "SHOW COLUMNS IN t",
    "abc",
    "(1)",
    "SELECT (1",
    "SELECT * FROM t WHERE",
    "DROP DYNAMC TABLE x",
    "ALTER DYNAMIC TABL x REFRESH",
    "SHOW DYNAMIC TABLS",
    "CREAT DYNAMIC TABLE x AS SELECT 1",
    "SELECT * FROM t t1, t t1",
    "SELECT [1][1:2:3:4]",
    "SELECT CAST(array(1) AS MAP<INT, INT>)",
    "SELECT * FROM t PIVOT (sum(a) + max(a) FOR b IN ('x'))",
    "SELECT * FROM t PIVOT (sum(a), max(a) FOR b IN ('x'))",
]


@pytest.fixture(scope="module")
def shim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ShimSession]:
    warehouse: Path = tmp_path_factory.mktemp("errors") / "warehouse"
    session = ShimSession(warehouse=warehouse)
    session.sql(SETUP)
    yield session
    session.stop()


def error_of(session: ShimSession | SparkSession, sql: str) -> AnalysisException:
    with pytest.raises(AnalysisException) as caught:
        session.sql(sql).collect()
    return caught.value


def error_class(error: Exception) -> str | None:
    found = re.search(r"\[([A-Z_.]+)\]", str(error))
    return found.group(1) if found else None


def assert_no_leak(error: BaseException) -> None:
    text = str(error)
    assert LEAKED.search(text) is None, text
    assert type(error).__module__.startswith(("pyspark", "sparkshim")), type(error)


@pytest.mark.parametrize(("sql", "spark_class", "words"), SPARK_CLASSES)
def test_spark_error_classes(
    shim: ShimSession, sql: str, spark_class: str, words: list[str]
) -> None:
    error = error_of(shim, sql)
    assert error_class(error) == spark_class, str(error)
    for word in words:
        assert word in str(error)
    assert_no_leak(error)
    if spark_class.startswith("PARSE_"):
        assert isinstance(error, ParseException)
        assert f"== SQL ==\n{sql}" in str(error)  # the user's own text, never a translation


@pytest.mark.parametrize(("sql", "spark_class", "words"), SPARK_CLASSES)
def test_pyspark_raises_the_same_class(
    pyspark_session: SparkSession, sql: str, spark_class: str, words: list[str]
) -> None:
    pyspark_session.sql(SETUP)
    error = error_of(pyspark_session, sql)
    found = error_class(error)
    # Spark suggests columns for an unknown qualifier too, where the shim has none to list.
    same_family = spark_class.startswith("UNRESOLVED_COLUMN.") and found is not None
    assert found == spark_class or (same_family and found.startswith("UNRESOLVED_COLUMN.")), str(
        error
    )


@pytest.mark.parametrize(("sql", "words"), REFUSALS)
def test_refusals_name_the_construct(shim: ShimSession, sql: str, words: list[str]) -> None:
    with pytest.raises(UnsupportedSqlError) as caught:
        shim.sql(sql).collect()
    for word in words:
        assert word in str(caught.value)
    assert_no_leak(caught.value)


# Chains of comparisons Spark's grammar cannot read (a second predicate, or a comparison after
# IN or ESCAPE, which end a predicate): Spark's syntax error; the shim refuses them
# (sqlglot reads them otherwise), pointing to the parentheses.
UNREADABLE_CHAINS = [
    "SELECT b LIKE 'x%' = b LIKE 'y%' FROM t",
    "SELECT a IN (1, 2) = true FROM t",
    "SELECT a NOT IN (1, 2) = true FROM t",
    "SELECT b LIKE 'x!%' ESCAPE '!' = true FROM t",
]


@pytest.mark.parametrize("sql", UNREADABLE_CHAINS)
def test_a_comparison_chain_spark_cannot_read_is_refused(
    shim: ShimSession, pyspark_session: SparkSession, sql: str
) -> None:
    pyspark_session.sql(SETUP)
    with pytest.raises(ParseException):
        pyspark_session.sql(sql).collect()
    with pytest.raises(UnsupportedSqlError) as caught:
        shim.sql(sql).collect()
    assert "parenthesize" in str(caught.value)
    assert_no_leak(caught.value)


def test_like_before_a_comparison_with_a_boolean_is_answered_as_spark_answers_it(
    shim: ShimSession, pyspark_session: SparkSession
) -> None:
    """``b LIKE 'x%' = true`` is ``b LIKE ('x%' = true)`` in Spark: 'x%' is no boolean, so
    the comparison is NULL, and so is the LIKE (a STRING beside a BOOLEAN is cast to
    BOOLEAN, NULL where it reads as none)."""
    sql = "SELECT b LIKE 'x%' = true AS l, 'yes' = true AS y, b = false AS f FROM t"
    pyspark_session.sql(SETUP)
    expected = [tuple(row) for row in pyspark_session.sql(sql).collect()]
    assert expected == [(None, True, None), (None, True, False)]  # "y" reads as true
    assert [tuple(row) for row in shim.sql(sql).collect()] == expected


def test_legacy_count_setting_refuses_grouped_correlated_counts(tmp_path: Path) -> None:
    """Under Spark's legacy count-bug setting a correlated count with GROUP BY is 0 for no
    group (NULL by default): refused while the setting is true, answered once unset."""
    session = ShimSession(warehouse=tmp_path / "warehouse")
    session.sql(SETUP)
    grouped = "SELECT a, (SELECT count(*) FROM t AS u WHERE u.a = t.a + 1 GROUP BY u.a) FROM t"
    setting = "spark.sql.optimizer.decorrelateSubqueryLegacyIncorrectCountHandling.enabled"
    session.sql(f"SET {setting} = true")
    with pytest.raises(UnsupportedSqlError) as caught:
        session.sql(grouped).collect()
    assert setting in str(caught.value)
    assert_no_leak(caught.value)
    session.sql(f"SET {setting} = false")
    assert [tuple(row) for row in session.sql(grouped).collect()] == [(1, 1), (2, None)]
    session.stop()


@pytest.mark.parametrize("sql", [case[0] for case in SPARK_CLASSES + REFUSALS] + OTHER_BAD)
def test_no_engine_internals_leak(shim: ShimSession, sql: str) -> None:
    error = raised(shim, sql)
    if error is not None:
        assert_no_leak(error)
        assert isinstance(error, AnalysisException), type(error)


def raised(session: ShimSession, sql: str) -> Exception | None:
    """The error running ``sql`` raises, if any (some of these statements run)."""
    try:
        session.sql(sql).collect()
    except Exception as error:
        return error
    return None


# Calls whose arguments are separated by keywords, or that are not calls: never counted.
NOT_COUNTED = [
    "SELECT substring('abc' FROM 2 FOR 1) AS s",
    "SELECT position('b' IN 'abc') AS p",
    "SELECT trim(BOTH 'x' FROM 'xax') AS t",
    "SELECT overlay('abc' PLACING 'x' FROM 2) AS o",
    "SELECT CAST(1 AS DECIMAL(10, 2)) AS d",
    "SELECT * FROM VALUES (1, 2) AS e(a, b)",
    "SELECT EXISTS (SELECT 1) AS x",
    "SELECT 1 IN (1, 2) AS i",
    "SELECT count(*) FILTER (WHERE a > 1) AS c FROM t",
    "SELECT transform(array(1), x -> x + 1) AS t",
    "SELECT upper('from') AS u",
]


@pytest.mark.parametrize("sql", NOT_COUNTED)
def test_argument_counts_skip_keyword_syntax(shim: ShimSession, sql: str) -> None:
    assert len(shim.sql(sql).collect()) >= 1


def test_duplicate_cte_names_are_spark_s_parse_error(
    shim: ShimSession, pyspark_session: SparkSession
) -> None:
    sql = "WITH t AS (SELECT 1), t AS (SELECT 2) SELECT * FROM t"
    expected = "CTE definition can't have duplicate names: 't'."
    assert isinstance(error_of(shim, sql), ParseException)
    assert str(error_of(shim, sql)).startswith(expected)
    assert expected in str(error_of(pyspark_session, sql))


def test_a_python_error_in_the_translation_is_a_refusal_with_its_cause(
    shim: ShimSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sparkshim.commands as commands

    def broken(session: ShimSession, tree: object) -> object:
        raise AttributeError("'Interval' object has no attribute 'value'")

    monkeypatch.setattr(commands, "_HANDLERS", ((commands.exp.Query, broken),))
    with pytest.raises(UnsupportedSqlError) as caught:
        shim.sql("SELECT 1")
    assert "this query" in str(caught.value)
    assert isinstance(caught.value.__cause__, AttributeError)
    assert_no_leak(caught.value)


def test_a_window_aggregate_with_a_filter_is_refused_as_spark_refuses_it(
    shim: ShimSession, pyspark_session: SparkSession
) -> None:
    sql = "SELECT a, sum(a) FILTER (WHERE b = 'x') OVER (PARTITION BY b) AS w FROM t"
    pyspark_session.sql(SETUP)
    message = "Window aggregate function with filter predicate is not supported yet"
    for session in (shim, pyspark_session):
        error = error_of(session, sql)
        assert isinstance(error, AnalysisException), type(error)
        assert message in str(error)
    assert_no_leak(error_of(shim, sql))


@pytest.mark.parametrize(
    ("function", "partition"),
    [
        ("row_number()", "PARTITION BY b"),
        ("rank()", ""),
        ("ntile(2)", "PARTITION BY b"),
        ("lag(a)", "PARTITION BY b"),
        ("lead(a, 2, 0)", ""),
        ("nth_value(a, 2)", "PARTITION BY b"),
    ],
)
def test_a_ranking_or_offset_window_without_order_is_refused_as_spark_refuses_it(
    shim: ShimSession, pyspark_session: SparkSession, function: str, partition: str
) -> None:
    sql = f"SELECT a, {function} OVER ({partition}) AS w FROM t"
    pyspark_session.sql(SETUP)
    for session in (shim, pyspark_session):
        error = error_of(session, sql)
        assert isinstance(error, AnalysisException), type(error)
        assert "requires window to be ordered, please add ORDER BY clause" in str(error)
    assert_no_leak(error_of(shim, sql))
    # Over an ordered window, or one the WINDOW clause orders, both answer alike.
    ordered = f"SELECT a, {function} OVER ({partition} ORDER BY a) AS w FROM t"
    named = f"SELECT a, {function} OVER w AS w FROM t WINDOW w AS ({partition} ORDER BY a)"
    for statement in (ordered, named):
        assert sorted(map(tuple, shim.sql(statement).collect())) == sorted(
            map(tuple, pyspark_session.sql(statement).collect())
        )


def test_an_overflowing_negation_names_no_type_it_does_not_have(shim: ShimSession) -> None:
    """DuckDB's message for an overflowing negation names no type ("of numeric value"); the
    refusal named DECIMAL(18,3), which the operand (a BIGINT) is not."""
    with pytest.raises(UnsupportedSqlError) as caught:
        shim.sql("SELECT -l FROM VALUES (CAST(-9223372036854775808 AS BIGINT)) AS v(l)").collect()
    assert "a negation that overflows its type" in str(caught.value)
    assert "DECIMAL" not in str(caught.value).split(":")[0]
    assert_no_leak(caught.value)
