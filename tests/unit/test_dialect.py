"""The dialect that reads SQL embedded in dynamic-table DDL: Spark 3.5 plus Snowflake forms."""

from __future__ import annotations

import subprocess
import sys

import pytest
import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from dyntables.errors import DynamicTableSyntaxError
from dyntables.sql.dialect import DynamicTablesDialect, parse_one, to_spark_sql

# --- the Snowflake forms, one test each ----------------------------------------------------


def test_double_colon_is_the_same_cast_as_spark_cast() -> None:
    tree = parse_one("'2025-04-01 12:00:00'::TIMESTAMP_NTZ")

    assert isinstance(tree, exp.Cast)
    assert tree.this == exp.Literal.string("2025-04-01 12:00:00")
    assert tree.to.is_type(exp.DType.TIMESTAMPNTZ)
    assert repr(tree) == repr(
        sqlglot.parse_one("CAST('2025-04-01 12:00:00' AS TIMESTAMP_NTZ)", read="spark")
    )
    # Spark 3.5 has no "::"; the rendering is a plain CAST.
    assert to_spark_sql(tree) == "CAST('2025-04-01 12:00:00' AS TIMESTAMP_NTZ)"


@pytest.mark.parametrize(
    ("sql", "dtype"),
    [("x::DATE", exp.DType.DATE), ("'1'::INT", exp.DType.INT), ("y::STRING", exp.DType.TEXT)],
)
def test_double_colon_casts_to_other_types(sql: str, dtype: exp.DType) -> None:
    tree = parse_one(sql)

    assert isinstance(tree, exp.Cast)
    assert tree.to.is_type(dtype)


def test_date_trunc_bare_word_is_a_unit_not_a_column() -> None:
    tree = parse_one("date_trunc(minute, ts)")

    assert isinstance(tree, exp.TimestampTrunc)
    assert tree.args["unit"] == exp.var("MINUTE")
    assert tree.this == exp.column("ts")
    assert [column.name for column in tree.find_all(exp.Column)] == ["ts"]
    assert tree == parse_one("date_trunc('MINUTE', ts)")
    assert to_spark_sql(tree) == "DATE_TRUNC('MINUTE', ts)"


def test_select_star_exclude_is_the_star_except_list() -> None:
    tree = parse_one("SELECT * EXCLUDE (a, b) FROM t")

    assert isinstance(tree, exp.Select)
    star = tree.expressions[0]
    assert isinstance(star, exp.Star)
    assert [column.name for column in star.args["except_"]] == ["a", "b"]
    assert repr(tree) == repr(sqlglot.parse_one("SELECT * EXCEPT (a, b) FROM t", read="spark"))


def test_qualify_is_kept_as_a_clause() -> None:
    tree = parse_one("SELECT a, b FROM t QUALIFY ROW_NUMBER() OVER (PARTITION BY a ORDER BY b) = 1")

    assert isinstance(tree, exp.Select)
    qualify = tree.args["qualify"]
    assert isinstance(qualify, exp.Qualify)
    assert isinstance(qualify.this, exp.EQ)
    window = qualify.this.this
    assert isinstance(window, exp.Window)
    assert isinstance(window.this, exp.RowNumber)
    assert window.args["partition_by"] == [exp.column("a")]
    # Spark 3.5 has no QUALIFY: sqlglot's Spark generator moves it into a subquery.
    assert to_spark_sql(tree) == (
        "SELECT a, b FROM (SELECT a, b, ROW_NUMBER() OVER (PARTITION BY a ORDER BY b) AS _w"
        " FROM t) AS _t WHERE _w = 1"
    )


@pytest.mark.parametrize("name", ["METADATA$ACTION", "METADATA$ISUPDATE", "METADATA$IS_FROZEN"])
def test_dollar_identifier_is_one_column(name: str) -> None:
    tree = parse_one(f"SELECT {name} FROM t WHERE NOT {name}")

    assert isinstance(tree, exp.Select)
    assert [(column.name, column.table) for column in tree.find_all(exp.Column)] == [
        (name, ""),
        (name, ""),
    ]
    assert isinstance(tree.args["where"].this, exp.Not)
    # Spark 3.5 reads "$" in a name only between backticks.
    assert to_spark_sql(tree) == f"SELECT `{name}` FROM t WHERE NOT `{name}`"


def test_dollar_identifier_can_be_qualified_and_aliased() -> None:
    tree = parse_one("SELECT s.METADATA$ACTION AS action FROM t AS s")

    column = tree.find(exp.Column)
    assert column is not None
    assert (column.table, column.name) == ("s", "METADATA$ACTION")
    assert tree.expressions[0].alias == "action"


def test_count_if() -> None:
    tree = parse_one("SELECT COUNT_IF(METADATA$IS_FROZEN), COUNT_IF(NOT METADATA$IS_FROZEN) FROM t")

    frozen, active = tree.expressions
    assert isinstance(frozen, exp.CountIf)
    # Built by hand: exp.column() would quote a name containing "$".
    is_frozen = exp.Column(this=exp.Identifier(this="METADATA$IS_FROZEN", quoted=False))
    assert frozen.this == is_frozen
    assert isinstance(active, exp.CountIf)
    assert active.this == exp.Not(this=is_frozen)


@pytest.mark.parametrize("information", ["DEFAULT", "APPEND_ONLY"])
def test_changes_clause_hangs_on_the_table(information: str) -> None:
    tree = parse_one(f"SELECT * FROM clicks CHANGES(INFORMATION => {information}) AS c")

    table = tree.args["from_"].this
    assert isinstance(table, exp.Table)
    assert table.name == "clicks"
    assert table.alias == "c"
    changes = table.args["changes"]
    assert isinstance(changes, exp.Changes)
    assert changes.args["information"] == exp.var(information)


def test_changes_clause_without_alias() -> None:
    table = parse_one("SELECT * FROM users CHANGES(INFORMATION => DEFAULT)").find(exp.Table)

    assert table is not None
    assert table.alias == ""
    assert isinstance(table.args["changes"], exp.Changes)


def test_merge_into_self() -> None:
    tree = parse_one(
        "MERGE INTO SELF AS tgt USING (SELECT a, y FROM s) AS src ON tgt.a = src.a"
        " WHEN MATCHED THEN UPDATE SET tgt.x = tgt.x + src.y"
        " WHEN NOT MATCHED THEN INSERT (a, b) VALUES (src.a, src.b)"
    )

    assert isinstance(tree, exp.Merge)
    assert (tree.this.name, tree.this.alias) == ("SELF", "tgt")
    using = tree.args["using"]
    assert isinstance(using, exp.Subquery)
    assert using.alias == "src"
    assert tree.args["on"] == exp.column("a", "tgt").eq(exp.column("a", "src"))
    matched, not_matched = tree.args["whens"].expressions
    assert matched.args["matched"] is True
    assert matched.args["then"].expressions == [
        exp.EQ(
            this=exp.column("x", "tgt"),
            expression=exp.Add(this=exp.column("x", "tgt"), expression=exp.column("y", "src")),
        )
    ]
    assert not_matched.args["matched"] is False
    insert = not_matched.args["then"]
    assert [column.name for column in insert.this.expressions] == ["a", "b"]
    assert insert.expression.expressions == [exp.column("a", "src"), exp.column("b", "src")]


def test_insert_into_self_select() -> None:
    tree = parse_one("INSERT INTO SELF SELECT a FROM t")

    assert isinstance(tree, exp.Insert)
    assert isinstance(tree.this, exp.Table)
    assert tree.this.name == "SELF"
    assert isinstance(tree.expression, exp.Select)
    assert not tree.args.get("overwrite")


def test_current_timestamp_minus_interval() -> None:
    tree = parse_one("CURRENT_TIMESTAMP() - INTERVAL '30 days'")

    assert isinstance(tree, exp.Sub)
    assert isinstance(tree.this, exp.CurrentTimestamp)
    interval = tree.expression
    assert isinstance(interval, exp.Interval)
    assert (interval.this, interval.unit) == (exp.Literal.string("30"), exp.var("DAYS"))
    assert to_spark_sql(tree) == "CURRENT_TIMESTAMP() - INTERVAL '30' DAYS"


# --- the seed snippets ---------------------------------------------------------------------

# (seed, root node type, Spark rendering). Renderings marked "not Spark 3.5" keep a
# Snowflake form that the planner must rewrite before the SQL reaches Spark.
SEEDS = [
    (
        "SELECT order_id, customer_id, order_date FROM raw_orders WHERE order_status != 'returned'",
        exp.Select,
        "SELECT order_id, customer_id, order_date FROM raw_orders WHERE order_status <> 'returned'",
    ),
    (
        "order_date < CURRENT_TIMESTAMP() - INTERVAL '30 days'",
        exp.LT,
        "order_date < CURRENT_TIMESTAMP() - INTERVAL '30' DAYS",
    ),
    ("order_date < '2025-01-01'", exp.LT, "order_date < '2025-01-01'"),
    (
        "'2025-04-01 12:00:00'::TIMESTAMP_NTZ",
        exp.Cast,
        "CAST('2025-04-01 12:00:00' AS TIMESTAMP_NTZ)",
    ),
    (
        "SELECT order_id, order_date, line_total, METADATA$IS_FROZEN AS is_frozen FROM dt_orders"
        " ORDER BY order_date DESC LIMIT 5",
        exp.Select,
        "SELECT order_id, order_date, line_total, `METADATA$IS_FROZEN` AS is_frozen FROM dt_orders"
        " ORDER BY order_date DESC LIMIT 5",
    ),
    (
        "SELECT COUNT_IF(METADATA$IS_FROZEN) AS frozen_rows,"
        " COUNT_IF(NOT METADATA$IS_FROZEN) AS active_rows FROM dt_orders",
        exp.Select,
        "SELECT COUNT_IF(`METADATA$IS_FROZEN`) AS frozen_rows,"
        " COUNT_IF(NOT `METADATA$IS_FROZEN`) AS active_rows FROM dt_orders",
    ),
    (
        "SELECT date_trunc(minute, ts), sum(c1) FROM table GROUP BY 1",
        exp.Select,
        "SELECT DATE_TRUNC('MINUTE', ts), SUM(c1) FROM table GROUP BY 1",
    ),
    (
        "SELECT date_trunc(minute, ts) ts_min, c1 FROM table",
        exp.Select,
        "SELECT DATE_TRUNC('MINUTE', ts) AS ts_min, c1 FROM table",
    ),
    (
        "SELECT ts_min, sum(c1) FROM intermediate GROUP BY 1",
        exp.Select,
        "SELECT ts_min, SUM(c1) FROM intermediate GROUP BY 1",
    ),
    (
        "INSERT INTO SELF SELECT c.click_id, c.user_id, p.page_title, p.section, c.click_ts"
        " FROM clicks CHANGES(INFORMATION => APPEND_ONLY) AS c"
        " LEFT OUTER JOIN pages AS p ON c.page_id = p.page_id",
        exp.Insert,
        # not Spark 3.5: CHANGES
        "INSERT INTO SELF SELECT c.click_id, c.user_id, p.page_title, p.section, c.click_ts"
        " FROM clicks CHANGES (INFORMATION => APPEND_ONLY) AS c"
        " LEFT OUTER JOIN pages AS p ON c.page_id = p.page_id",
    ),
    (
        "INSERT INTO SELF SELECT * EXCLUDE (METADATA$ISUPDATE, METADATA$ACTION)"
        " FROM users CHANGES(INFORMATION => DEFAULT)"
        " WHERE NOT METADATA$ISUPDATE AND METADATA$ACTION = 'DELETE'",
        exp.Insert,
        # not Spark 3.5: * EXCEPT and CHANGES
        "INSERT INTO SELF SELECT * EXCEPT (`METADATA$ISUPDATE`, `METADATA$ACTION`)"
        " FROM users CHANGES (INFORMATION => DEFAULT)"
        " WHERE NOT `METADATA$ISUPDATE` AND `METADATA$ACTION` = 'DELETE'",
    ),
    (
        "MERGE INTO SELF AS tgt USING (SELECT player_id, SUM(score) AS batch_score"
        " FROM match_results CHANGES(INFORMATION => APPEND_ONLY) GROUP BY player_id) AS src"
        " ON tgt.player_id = src.player_id"
        " WHEN MATCHED THEN UPDATE SET tgt.total_score = tgt.total_score + src.batch_score"
        " WHEN NOT MATCHED THEN INSERT (player_id, total_score)"
        " VALUES (src.player_id, src.batch_score)",
        exp.Merge,
        # not Spark 3.5: CHANGES
        "MERGE INTO SELF AS tgt USING (SELECT player_id, SUM(score) AS batch_score"
        " FROM match_results CHANGES (INFORMATION => APPEND_ONLY) GROUP BY player_id) AS src"
        " ON tgt.player_id = src.player_id"
        " WHEN MATCHED THEN UPDATE SET tgt.total_score = tgt.total_score + src.batch_score"
        " WHEN NOT MATCHED THEN INSERT (player_id, total_score)"
        " VALUES (src.player_id, src.batch_score)",
    ),
]


@pytest.mark.parametrize(("seed", "root", "spark_sql"), SEEDS)
def test_seed_parses_and_renders(seed: str, root: type[exp.Expr], spark_sql: str) -> None:
    tree = parse_one(seed)

    assert isinstance(tree, root)
    assert to_spark_sql(tree) == spark_sql
    # The rendering reads back to the same rendering: nothing is lost on the way.
    assert to_spark_sql(parse_one(spark_sql)) == spark_sql


def test_seed_table_named_table() -> None:
    # The seed names a table `table`. Spark 3.5 accepts it unquoted (TABLE is non-reserved
    # unless spark.sql.ansi.enforceReservedKeywords is on; checked with Spark 3.5.9's parser),
    # so it is an ordinary table name here too.
    tree = parse_one("SELECT date_trunc(minute, ts), sum(c1) FROM table GROUP BY 1")

    table = tree.args["from_"].this
    assert isinstance(table, exp.Table)
    assert (table.name, table.this.quoted) == ("table", False)
    assert tree.args["group"].expressions == [exp.Literal.number(1)]


# --- plain Spark SQL reads exactly as with read="spark" ------------------------------------

SPARK_SQL = [
    "SELECT o.id, c.name FROM orders AS o JOIN customers AS c ON o.cid = c.id",
    "SELECT a.x FROM a LEFT OUTER JOIN b USING (k) CROSS JOIN c FULL OUTER JOIN d ON a.k = d.k",
    "SELECT id, ROW_NUMBER() OVER (PARTITION BY cid ORDER BY ts DESC) AS rn,"
    " SUM(amount) OVER (PARTITION BY cid ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING"
    " AND CURRENT ROW) AS running FROM orders",
    "SELECT id, item FROM orders LATERAL VIEW explode(items) exploded AS item",
    "SELECT id, item FROM orders LATERAL VIEW OUTER explode(items) t AS item",
    "WITH recent AS (SELECT * FROM orders WHERE ts > '2025-01-01') SELECT cid, COUNT(*)"
    " FROM recent GROUP BY cid HAVING COUNT(*) > 1",
    "SELECT cid, SUM(x) AS total FROM t GROUP BY cid",
    "SELECT a FROM t1 UNION ALL SELECT a FROM t2 UNION ALL SELECT a FROM t3",
    "SELECT `weird col`, `select`, `a$b` FROM `my db`.`my table`",
    "SELECT date_add(order_date, 7), date_sub(order_date, 1), datediff(a, b) FROM t",
    "SELECT s.field, s.nested.deep, arr[0], m['key'], element_at(arr, 1) FROM t",
    "SELECT DISTINCT a FROM t WHERE b IN (1, 2) AND c IS NOT NULL AND d LIKE 'x%'",
    "SELECT CAST(a AS DECIMAL(10, 2)), CASE WHEN a > 0 THEN 'p' ELSE 'n' END FROM t",
    "SELECT named_struct('a', 1, 'b', 2).a, array(1, 2)[1], map('k', 1)['k']",
    "SELECT * FROM t WHERE x = ${hivevar:threshold}",
    "SELECT 1 AS one, 2L, 3.5D, 'it''s', \"dq\", r'raw\\n' FROM t",
    "INSERT OVERWRITE TABLE t PARTITION (ds = '2025-01-01') SELECT a FROM s",
    "MERGE INTO tgt USING src ON tgt.k = src.k WHEN MATCHED THEN DELETE"
    " WHEN NOT MATCHED THEN INSERT *",
]


@pytest.mark.parametrize("sql", SPARK_SQL)
def test_plain_spark_sql_reads_as_spark_does(sql: str) -> None:
    ours = parse_one(sql)
    spark = sqlglot.parse_one(sql, read="spark")

    # repr, not ==: sqlglot's equality ignores the case of names.
    assert repr(ours) == repr(spark)
    assert to_spark_sql(ours) == spark.sql(dialect="spark")


def test_names_sqlglot_reads_as_keywords_are_quoted() -> None:
    """Spark reads ``qualify`` or ``inner`` as names; sqlglot's Spark parser (the embedded
    engine's) does not, so the SQL the product generates quotes them."""
    tree = parse_one("SELECT s.`inner`, `values` FROM `qualify`")

    rendered = to_spark_sql(tree)

    assert rendered == "SELECT s.`inner`, `values` FROM `qualify`"
    assert repr(sqlglot.parse_one(rendered, read="spark")) == repr(tree)


def test_dialect_is_usable_by_sqlglot_directly() -> None:
    tree = sqlglot.parse_one("SELECT METADATA$ACTION FROM t", read=DynamicTablesDialect)

    assert tree.sql(dialect=DynamicTablesDialect) == "SELECT `METADATA$ACTION` FROM t"
    # Spark's own dialect is untouched: it still cannot read the name.
    with pytest.raises(ParseError):
        sqlglot.parse_one("SELECT 1 FROM t WHERE NOT METADATA$ISUPDATE", read="spark")


# --- errors --------------------------------------------------------------------------------


def test_broken_query_raises_located_syntax_error() -> None:
    text = "SELECT a,\n       b\nFROM t\nWHERE a = = 1"

    with pytest.raises(DynamicTableSyntaxError) as caught:
        parse_one(text)

    error = caught.value
    assert (error.line, error.column) == (4, 11)  # the second "="
    assert "missing for EQ" in error.reason
    assert "<class" not in error.reason
    assert error.excerpt == "  WHERE a = = 1\n            ^"
    assert isinstance(error.__cause__, ParseError)


def test_unclosed_parenthesis_points_at_the_unexpected_token() -> None:
    with pytest.raises(DynamicTableSyntaxError) as caught:
        parse_one("SELECT (a FROM t")

    assert (caught.value.reason, caught.value.line, caught.value.column) == ("Expecting )", 1, 11)


def test_error_in_a_slice_points_into_the_whole_statement() -> None:
    statement = "CREATE DYNAMIC TABLE d\n  TARGET_LAG = '1 minute'\nAS SELECT a FROM t WHERE"
    body = statement[statement.index("SELECT") :]

    with pytest.raises(DynamicTableSyntaxError) as caught:
        parse_one(body, statement=statement, offset=statement.index("SELECT"))

    assert (caught.value.line, caught.value.column) == (3, 20)  # WHERE
    assert caught.value.excerpt.startswith("  AS SELECT a FROM t WHERE\n")


def test_unterminated_string_points_at_its_opening_quote() -> None:
    with pytest.raises(DynamicTableSyntaxError) as caught:
        parse_one("SELECT a,\n  'oops FROM t")

    error = caught.value
    assert (error.reason, error.line, error.column) == ("missing closing '", 2, 3)
    assert isinstance(error.__cause__, TokenError)


@pytest.mark.parametrize("sql", ["", "   ", "-- only a comment", ";"])
def test_no_statement_is_a_syntax_error(sql: str) -> None:
    with pytest.raises(DynamicTableSyntaxError, match="expected a SQL statement"):
        parse_one(sql)


def test_two_statements_point_at_the_second() -> None:
    with pytest.raises(DynamicTableSyntaxError, match="expected one SQL statement") as caught:
        parse_one("INSERT INTO SELF SELECT a FROM t;\nDELETE FROM SELF")

    assert (caught.value.line, caught.value.column) == (2, 1)


def test_trailing_semicolon_is_fine() -> None:
    assert isinstance(parse_one("SELECT a FROM t;"), exp.Select)


# --- import ------------------------------------------------------------------------------


def test_import_is_cheap() -> None:
    code = "import sys, dyntables.sql.dialect; print('pyspark' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )

    assert result.stdout.strip() == "False"


@pytest.mark.parametrize(
    "call",
    [
        "percentile_cont(0.5) WITHIN GROUP (ORDER BY d)",
        "percentile_cont(0.25) WITHIN GROUP (ORDER BY d DESC)",
        "percentile_disc(0.9) WITHIN GROUP (ORDER BY d)",
    ],
)
def test_ordered_set_percentiles_keep_their_name_and_order(call: str) -> None:
    # sqlglot's Spark generator alone writes PERCENTILE_APPROX(d, p): an approximation, its
    # order dropped. The query the engine runs must be the one the user wrote.
    sql = f"SELECT g, {call} AS p FROM t GROUP BY g"
    tree = parse_one(sql)
    written = to_spark_sql(tree)
    assert "APPROX" not in written
    assert written.upper() == sql.upper()
    assert parse_one(written) == tree
    assert tree.find(exp.WithinGroup).this.key.startswith("percentile")  # the tree is intact
