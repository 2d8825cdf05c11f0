"""Which statements are ours (parsed into typed statements) and which go to Spark unchanged.

``is_dynamic_table_statement`` looks only at the leading keywords, so ordinary SQL that
merely mentions our words must pass through, and every spelling of our forms (any case,
comments between the keywords) must be recognised.
"""

from __future__ import annotations

import pytest

from dyntables import DynamicTableSyntaxError, UnsupportedStatementError, parse
from dyntables.parser.recognizer import is_dynamic_table_statement, leading_words
from dyntables.statements import (
    AlterDynamicTable,
    CreateDynamicTable,
    CreateMaterializedView,
    DescribeDynamicTable,
    DropDynamicTable,
    DropMaterializedView,
    ExplainCreateDynamicTable,
    ExplainDynamicTable,
    PassThrough,
    RefreshMaterializedView,
    ShowDynamicTables,
    Statement,
)

PASS_THROUGH = [
    "CREATE TABLE dynamic (id INT)",
    "CREATE TABLE dynamic_table (id INT) USING delta",
    "CREATE TABLE IF NOT EXISTS dynamic AS SELECT 1",
    "CREATE OR REPLACE TABLE dynamic USING delta AS SELECT 1",
    "CREATE TABLE dynamic.t (id INT)",
    "CREATE EXTERNAL TABLE dynamic LOCATION '/tmp/x'",
    "CREATE SCHEMA dynamic",
    "CREATE DATABASE IF NOT EXISTS dynamic COMMENT 'x'",
    "CREATE VIEW dynamic_view AS SELECT * FROM dynamic_table",
    "CREATE OR REPLACE TEMP VIEW v AS SELECT * FROM dynamic",
    "CREATE OR REPLACE TEMPORARY VIEW dynamic AS SELECT 1",
    "CREATE TABLE t AS SELECT 'CREATE DYNAMIC TABLE x' AS s",
    "SELECT * FROM dynamic_table",
    "SELECT 'DROP DYNAMIC TABLE t'",
    "WITH dynamic AS (SELECT 1) SELECT * FROM dynamic",
    "(SELECT 1)",
    "INSERT INTO sales.daily_totals VALUES (1)",
    "MERGE INTO dynamic USING s ON dynamic.id = s.id WHEN MATCHED THEN DELETE",
    "DROP TABLE dt",
    "DROP TABLE IF EXISTS dynamic",
    "DROP VIEW materialized",
    "DROP SCHEMA dynamic CASCADE",
    "ALTER TABLE dt_orders ADD CONSTRAINT pk_orders PRIMARY KEY (order_id, order_date) RELY",
    "ALTER TABLE dynamic SET TBLPROPERTIES ('a' = 'b')",
    "ALTER VIEW dynamic AS SELECT 1",
    "ALTER MATERIALIZED VIEW v SET TBLPROPERTIES ('a' = 'b')",
    "SHOW TABLES",
    "SHOW TABLES IN dynamic",
    "SHOW TABLES LIKE 'dynamic*'",
    "SHOW VIEWS",
    "SHOW MATERIALIZED VIEWS",
    "SHOW TBLPROPERTIES dynamic",
    "SHOW CREATE TABLE dynamic",
    "DESC dynamic",
    "DESCRIBE dynamic",
    "DESCRIBE TABLE dynamic",
    "DESC EXTENDED dynamic_table",
    "EXPLAIN SELECT 1",
    "EXPLAIN EXTENDED SELECT * FROM dynamic",
    "EXPLAIN CREATE TABLE t AS SELECT 1",
    "REFRESH TABLE dynamic",
    "REFRESH dynamic",
    "CALL my_proc()",
    "CALL BQ.OTHER_PROCEDURE('x')",
    "CALL system.rewrite_data_files('db.t')",
    "CACHE TABLE dynamic",
    "USE dynamic",
    "SET spark.sql.shuffle.partitions = 4",
    "-- CREATE DYNAMIC TABLE x\nSELECT 1",
    "/* DROP DYNAMIC TABLE t */ SELECT 1",
    "OPTIMIZE dynamic ZORDER BY (id)",
    "VACUUM dynamic",
    # Spark's `TABLE src` is a whole query: these are a view and tables named "dynamic".
    "CREATE VIEW dynamic AS TABLE src",
    "CREATE OR REPLACE VIEW dynamic AS TABLE src",
    "CREATE TABLE dynamic AS TABLE src",
    "EXPLAIN CREATE TABLE dynamic AS TABLE src",
]


@pytest.mark.parametrize("sql", PASS_THROUGH)
def test_ordinary_sql_is_not_ours(sql: str) -> None:
    assert is_dynamic_table_statement(sql) is False
    assert parse(sql) == [PassThrough(sql)]


# ---- ours, in every spelling ----------------------------------------------------------------

OURS: list[tuple[str, type[Statement]]] = [
    ("CREATE DYNAMIC TABLE t TARGET_LAG = '1 minute' AS SELECT 1", CreateDynamicTable),
    ("create dynamic table t target_lag = '1 minute' as select 1", CreateDynamicTable),
    ("CrEaTe Or RePlAcE dYnAmIc TaBlE t TARGET_LAG = DOWNSTREAM AS SELECT 1", CreateDynamicTable),
    ("CREATE TRANSIENT DYNAMIC TABLE t TARGET_LAG = '1 minute' AS SELECT 1", CreateDynamicTable),
    (
        "CREATE TRANSIENT DYNAMIC TABLE IF NOT EXISTS x TARGET_LAG = '1 hour' AS SELECT 1",
        CreateDynamicTable,
    ),
    (
        "CREATE /* a */ OR -- b\n REPLACE\tDYNAMIC\n\nTABLE t TARGET_LAG = '1 day' AS SELECT 1",
        CreateDynamicTable,
    ),
    (
        "/* leading */ -- comment\n  CREATE /* x /* nested */ y */ DYNAMIC TABLE t"
        " TARGET_LAG = '1 day' AS SELECT 1",
        CreateDynamicTable,
    ),
    ("ALTER DYNAMIC TABLE t SUSPEND", AlterDynamicTable),
    ("alter /* c */ dynamic -- c\n table if exists t resume", AlterDynamicTable),
    ("DROP DYNAMIC TABLE t", DropDynamicTable),
    ("Drop Dynamic Table If Exists t", DropDynamicTable),
    ("SHOW DYNAMIC TABLES", ShowDynamicTables),
    ("show /* all */ dynamic tables like 'x%'", ShowDynamicTables),
    ("DESCRIBE DYNAMIC TABLE t", DescribeDynamicTable),
    ("desc dynamic table t", DescribeDynamicTable),
    ("EXPLAIN DYNAMIC TABLE t", ExplainDynamicTable),
    ("explain -- why\ndynamic table t", ExplainDynamicTable),
    (
        "EXPLAIN CREATE DYNAMIC TABLE t TARGET_LAG = '1 minute' AS SELECT 1",
        ExplainCreateDynamicTable,
    ),
    (
        "EXPLAIN CREATE OR REPLACE TRANSIENT DYNAMIC TABLE t TARGET_LAG = '1 minute' AS SELECT 1",
        ExplainCreateDynamicTable,
    ),
    (
        "Explain /* 1 */ Create /* 2 */ Or /* 3 */ Replace /* 4 */ Transient /* 5 */ Dynamic"
        " /* 6 */ Table /* 7 */ t TARGET_LAG = '1 minute' AS SELECT 1",
        ExplainCreateDynamicTable,
    ),
    ("CREATE MATERIALIZED VIEW v AS SELECT 1", CreateMaterializedView),
    ("create or replace materialized view v as select 1", CreateMaterializedView),
    ("CREATE /* mv */ MATERIALIZED\nVIEW IF NOT EXISTS v AS SELECT 1", CreateMaterializedView),
    ("REFRESH MATERIALIZED VIEW v", RefreshMaterializedView),
    ("refresh -- now\n materialized view v", RefreshMaterializedView),
    ("CALL BQ.REFRESH_MATERIALIZED_VIEW('p.d.v')", RefreshMaterializedView),
    ("call bq.refresh_materialized_view('p.d.v')", RefreshMaterializedView),
    ("CALL bq . /* dot */ Refresh_Materialized_View ('p.d.v')", RefreshMaterializedView),
    ("DROP MATERIALIZED VIEW v", DropMaterializedView),
    ("drop materialized view if exists v", DropMaterializedView),
]


@pytest.mark.parametrize(("sql", "statement_type"), OURS)
def test_our_forms_are_recognised_and_parsed(sql: str, statement_type: type[Statement]) -> None:
    assert is_dynamic_table_statement(sql) is True
    (statement,) = parse(sql)
    assert type(statement) is statement_type


def test_misspelled_if_not_exists_is_an_error_not_a_name() -> None:
    """``IF NOT EXISTS_X`` is not ``IF NOT EXISTS``, and not a name either."""
    with pytest.raises(DynamicTableSyntaxError):
        parse("CREATE DYNAMIC TABLE IF NOT EXISTS_X TARGET_LAG = '1 hour' AS SELECT 1")


# Recognised as ours although we do not support them, so that the user gets our error
# rather than Spark's puzzling one.
UNSUPPORTED_BUT_OURS = [
    (
        "CREATE TEMPORARY DYNAMIC TABLE t TARGET_LAG = '1 minute' AS SELECT 1",
        DynamicTableSyntaxError,
    ),
    ("CREATE DYNAMIC ICEBERG TABLE t TARGET_LAG = '1 minute' AS SELECT 1", DynamicTableSyntaxError),
    ("SHOW TERSE DYNAMIC TABLES", DynamicTableSyntaxError),
    ("CREATE SECURE MATERIALIZED VIEW v AS SELECT 1", DynamicTableSyntaxError),
    ("CREATE OR REFRESH MATERIALIZED VIEW v AS SELECT 1", DynamicTableSyntaxError),
    (
        "CREATE OR ALTER DYNAMIC TABLE t TARGET_LAG = '1 minute' AS SELECT 1",
        UnsupportedStatementError,
    ),
    ("create /* x */ or alter dynamic table t", UnsupportedStatementError),
    ("CREATE OR ALTER MATERIALIZED VIEW v AS SELECT 1", UnsupportedStatementError),
    (
        "EXPLAIN CREATE TEMPORARY DYNAMIC TABLE t TARGET_LAG = '1 minute' AS SELECT 1",
        DynamicTableSyntaxError,
    ),
]


@pytest.mark.parametrize(("sql", "error"), UNSUPPORTED_BUT_OURS)
def test_unsupported_variants_are_ours_and_rejected(
    sql: str, error: type[DynamicTableSyntaxError]
) -> None:
    assert is_dynamic_table_statement(sql) is True
    with pytest.raises(DynamicTableSyntaxError) as caught:
        parse(sql)
    assert type(caught.value) is error


# ---- leading_words ----------------------------------------------------------------------------


def test_leading_words_skip_comments_and_upper_case() -> None:
    sql = "/* a /* b */ c */ -- d\n create\tOr  replace -- e\n Dynamic TABLE `x` t"

    assert leading_words(sql) == ["CREATE", "OR", "REPLACE", "DYNAMIC", "TABLE"]


def test_leading_words_stop_at_the_first_word_that_is_not_ours() -> None:
    assert leading_words("SELECT a, b FROM dynamic table") == ["SELECT"]


def test_leading_words_keep_dots_and_respect_the_limit() -> None:
    assert leading_words("CALL bq.refresh_materialized_view('x')") == [
        "CALL",
        "BQ",
        ".",
        "REFRESH_MATERIALIZED_VIEW",
    ]
    assert leading_words("CREATE a b c d e f g h i j", limit=3) == ["CREATE", "A", "B"]


def test_statements_of_a_script_are_recognised_one_by_one() -> None:
    script = (
        "CREATE TABLE dynamic (id INT);\n"
        "-- now ours\n"
        "create dynamic table dt target_lag = '1 minute' as select * from dynamic;\n"
        "SELECT * FROM dt;\n"
        "DROP DYNAMIC TABLE dt"
    )

    assert [type(statement) for statement in parse(script)] == [
        PassThrough,
        CreateDynamicTable,
        PassThrough,
        DropDynamicTable,
    ]


# ---- misspelt keywords of our forms ----------------------------------------------------------

# (statement, the misspelt word as written, its 1-based line and column, the keyword meant)
MISSPELT = [
    ("CREATE DYNAMC TABLE t TARGET_LAG = '1 hour' AS SELECT 1", "DYNAMC", 1, 8, "DYNAMIC"),
    ("CREATE DYNAMIC TABEL t TARGET_LAG = '1 hour' AS SELECT 1", "TABEL", 1, 16, "TABLE"),
    ("CREAT DYNAMIC TABLE t TARGET_LAG = '1 hour' AS SELECT 1", "CREAT", 1, 1, "CREATE"),
    ("create or replace dynamc table `t` as select 1", "dynamc", 1, 19, "DYNAMIC"),
    ("CREATE TRANSIENT DYNAMIK TABLE t AS SELECT 1", "DYNAMIK", 1, 18, "DYNAMIC"),
    ("ALTER DYNAMIC TABL t REFRESH", "TABL", 1, 15, "TABLE"),
    ("DROP DYNAMC TABLE t", "DYNAMC", 1, 6, "DYNAMIC"),
    ("DROP DYNAMIC TABLE t", None, 0, 0, ""),  # spelt right: ours, parsed
    ("SHOW DYNAMIC TABLS", "TABLS", 1, 14, "TABLES"),
    ("SHOW DYNAMC TABLES LIKE 'x%'", "DYNAMC", 1, 6, "DYNAMIC"),
    ("SHOW FULL DYNAMIC TABELS", "TABELS", 1, 19, "TABLES"),
    ("DESCRIBE DYNAMIC TABL t", "TABL", 1, 18, "TABLE"),
    ("EXPLAIN CREAT DYNAMIC TABLE t AS SELECT 1", "CREAT", 1, 9, "CREATE"),
    ("CREATE MATERIALZED VIEW v AS SELECT 1", "MATERIALZED", 1, 8, "MATERIALIZED"),
    ("REFRESH MATERIALIZD VIEW v", "MATERIALIZD", 1, 9, "MATERIALIZED"),
    ("SELECT 1;\n  /* c */ DROP DYNAMIC TABEL t", "TABEL", 2, 24, "TABLE"),
]


@pytest.mark.parametrize(("sql", "word", "line", "column", "keyword"), MISSPELT)
def test_a_misspelt_keyword_of_our_forms_is_a_located_syntax_error(
    sql: str, word: str | None, line: int, column: int, keyword: str
) -> None:
    if word is None:
        assert type(parse(sql)[-1]) is DropDynamicTable
        return
    with pytest.raises(DynamicTableSyntaxError) as caught:
        parse(sql)
    error = caught.value
    assert (error.line, error.column) == (line, column)
    assert f"'{word}'" in error.reason
    assert f"did you mean {keyword}?" in error.reason


# Ordinary SQL that is a letter or two away from our forms, and runs on Spark.
NEAR_BUT_SPARK = [
    "DESC dynamic tabl",  # column `tabl` of table `dynamic`
    "DESC dynamic table_x",
    "CREATE TABLE dynamc (id INT)",
    "CREATE TABLE dynamic_x (id INT) USING delta",
    "CREATE TEMP VIEW materialzed AS SELECT 1",
    "CREATE OR REPLACE TEMPORARY VIEW v AS SELECT 1",
    "CREATE OR REPLACE TABLE t AS SELECT 1",
    "SHOW TABLES LIKE 'dynamc*'",
    "REFRESH TABLE dynamc",
    "DROP TABLE dynamc",
    "DELETE FROM dynamic WHERE table = 1",
    "SELECT dynamic, table FROM t",
]


@pytest.mark.parametrize("sql", NEAR_BUT_SPARK)
def test_spark_statements_near_our_forms_pass_through(sql: str) -> None:
    assert parse(sql) == [PassThrough(sql)]
