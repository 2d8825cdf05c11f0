"""The pure parts of benchmarks/spark_sql_corpus.py: how a test file is split into statements,
how values are compared and how an error is judged. No engine runs here."""

from __future__ import annotations

import importlib.util
import math
import sys
from decimal import Decimal
from pathlib import Path
from types import ModuleType

import pytest

HARNESS = Path(__file__).parents[2] / "benchmarks" / "spark_sql_corpus.py"


@pytest.fixture(scope="module")
def harness() -> ModuleType:
    spec = importlib.util.spec_from_file_location("spark_sql_corpus", HARNESS)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_statements_end_at_semicolons_outside_quotes_and_comments(harness: ModuleType) -> None:
    text = (
        "-- a comment line; with a semicolon\n"
        "--CONFIG_DIM1 spark.sql.codegen.wholeStage=true\n"
        "SELECT 'a;b', \"c;d\", `e;f` FROM t; -- trailing; comment\n"
        "SELECT 1 /* block; comment */\n"
        "  + 2;\n"
        "SELECT 'it\\'s;'\n"
    )
    statements = harness.split_statements(text)
    assert [s.sql for s in statements] == [
        "SELECT 'a;b', \"c;d\", `e;f` FROM t",
        "SELECT 1 /* block; comment */\n  + 2",
        "SELECT 'it\\'s;'",
    ]
    assert [s.line for s in statements] == [3, 4, 6]


def test_directives_set_options_and_import_files(harness: ModuleType, tmp_path: Path) -> None:
    (tmp_path / "base.sql").write_text("CREATE TEMPORARY VIEW v AS SELECT 1 AS x;\n")
    (tmp_path / "main.sql").write_text(
        "--SET spark.sql.a=1,spark.sql.b=two\n--IMPORT base.sql\nSELECT x FROM v;\n"
    )
    test = harness.read_test_file(tmp_path, "main.sql")
    assert test.settings == {"spark.sql.a": "1", "spark.sql.b": "two"}
    assert [s.sql for s in test.statements] == [
        "CREATE TEMPORARY VIEW v AS SELECT 1 AS x",
        "SELECT x FROM v",
    ]
    assert [s.is_query for s in test.statements] == [False, True]


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        (Decimal("1.0"), Decimal("1.0"), True),
        (Decimal("1.0"), Decimal("1.00"), False),  # the scale is part of the type
        (1, 1.0, False),
        (math.nan, math.nan, True),
        (0.1 + 0.2, 0.3, True),
        (1.0, 1.001, False),
        (("array", (1, None)), ("array", (1, None)), True),
        (("array", (1, 2)), ("array", (2, 1)), False),
    ],
)
def test_values_compare_strictly(harness: ModuleType, a: object, b: object, same: bool) -> None:
    assert harness.same_value(a, b) is same


def test_rows_are_a_multiset_unless_ordered(harness: ModuleType) -> None:
    from pyspark.sql import Row

    shim = [Row(a=2), Row(a=1), Row(a=1)]
    spark = [Row(a=1), Row(a=1), Row(a=2)]
    assert harness.same_rows(shim, spark, ordered=False)
    assert not harness.same_rows(shim, spark, ordered=True)
    assert not harness.same_rows(shim[:2], spark[:2], ordered=False)


def test_an_error_is_spark_style_only_with_a_class_and_no_engine_text(harness: ModuleType) -> None:
    def style(message: str, pyspark_error: bool = True) -> str:
        return str(harness.Failure("AnalysisException", message, pyspark_error).style)

    assert style("[TABLE_OR_VIEW_NOT_FOUND] The table `t` cannot be found.") == "spark-style"
    assert style("Binder Error: No function matches ...") == "internal"
    assert style("[PARSE_SYNTAX_ERROR] Required keyword: 'expression' missing") == "internal"
    assert style("[X] fine", pyspark_error=False) == "internal"


def test_order_keys_are_appended_and_positions_kept(harness: ModuleType) -> None:
    keyed = harness.order_keys_query("SELECT k, v FROM t ORDER BY length(k), 2")
    assert keyed is not None
    sql, positions = keyed
    assert "corpus_order_key_0" in sql
    assert positions == [1]
    assert harness.order_keys_query("SELECT DISTINCT k FROM t ORDER BY k") is None
