"""sparkshim reads Spark SQL with sqlglot's own Spark parser, compiled or not
(spark_parser.py): names and some arguments as written, PIVOT aggregates of any shape, and
nothing of its own left in the tree. The whole suite runs on the build installed (the
compiled one, with the tested pins); the last test runs this file and the naming tests on
the pure-Python build too."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from sqlglot import exp

from sparkshim.naming import FUNCTION_NAME_KEY
from sparkshim.spark_parser import parse_statements, tokenize

pytestmark = pytest.mark.embedded

ROOT = Path(__file__).resolve().parents[2]


def _one(sql: str) -> exp.Expr:
    (tree,) = parse_statements(sql)
    return tree


def _written(tree: exp.Expr, kind: type[exp.Expr]) -> str:
    # (A CASE's WHEN branches are If nodes: the call is the first If elsewhere.)
    node = next((n for n in tree.find_all(kind) if n.arg_key != "ifs"), None)
    assert node is not None, f"no {kind.__name__} in {tree.sql('spark')}"
    return str(node.meta.get(FUNCTION_NAME_KEY))


@pytest.mark.parametrize(
    ("sql", "kind", "written"),
    [
        ("SELECT nvl(a, 1) FROM t", exp.Coalesce, "nvl"),
        ("SELECT ifnull(a, 1) AS x FROM t", exp.Coalesce, "ifnull"),
        ("SELECT Sum(a) OVER (PARTITION BY b) AS w FROM t", exp.Sum, "Sum"),
        ("SELECT sum(a) FILTER (WHERE a > 0) FROM t", exp.Sum, "sum"),
        ("SELECT substr(s FROM 2) FROM t", exp.Substring, "substring"),
        ("SELECT substr(s, 2) FROM t", exp.Substring, "substr"),
        ("SELECT position('a' IN s) FROM t", exp.StrPosition, "locate"),
        ("SELECT try_cast(a AS INT) AS c FROM t", exp.TryCast, "try_cast"),
        ("SELECT CAST(a AS INT) FROM t", exp.Cast, "CAST"),
        ("SELECT current_date FROM t", exp.CurrentDate, "current_date"),
        ("SELECT element_at(arr, 1) FROM t", exp.Bracket, "element_at"),
        ("SELECT upper(lower(s)) FROM t", exp.Lower, "lower"),
        ("SELECT date_format(ts, 'yyyy-MM') FROM t", exp.Anonymous, "date_format"),
        ("SELECT if(a > 1, 'x', 'y') FROM t", exp.If, "if"),
        ("SELECT CASE WHEN a > 1 THEN 0 END, if(b, 1, 2) FROM t", exp.If, "if"),
        ("SELECT transform(arr, x -> x + 1) FROM t", exp.Transform, "transform"),
        ("SELECT any(a > 1) FROM t", exp.Any, "any"),
        ("SELECT div(a, 2) FROM t", exp.Paren, "div"),  # sqlglot's builder wraps it
    ],
)
def test_a_call_keeps_its_name_as_written(sql: str, kind: type[exp.Expr], written: str) -> None:
    assert _written(_one(sql), kind) == written


@pytest.mark.parametrize(
    ("sql", "kind"),
    [
        ("SELECT a DIV (b + 1) FROM t", exp.IntDiv),
        ("SELECT a = 1 AND (b OR c) FROM t", exp.And),
        ("SELECT a LIKE ('x%') FROM t", exp.Like),
    ],
)
def test_an_operator_before_a_parenthesis_is_no_call(sql: str, kind: type[exp.Expr]) -> None:
    node = _one(sql).find(kind)
    assert node is not None
    assert FUNCTION_NAME_KEY not in node.meta


def test_trim_from_is_spark_s_trim_both() -> None:
    trim = _one("SELECT trim('x' FROM s) FROM t").find(exp.Trim)
    assert trim is not None
    assert trim.args.get("position") == "BOTH"
    assert trim.meta[FUNCTION_NAME_KEY] == "trim"


def test_functions_read_as_written() -> None:
    tree = _one(
        "SELECT date_format(ts, 'yyyy-MM'), first(a, true), last(a, false), corr(DISTINCT a, b)"
        " FROM t"
    )
    first, ignored, respected, corr = tree.selects
    assert isinstance(first, exp.Anonymous)
    assert first.name == "DATE_FORMAT"
    assert first.expressions[1] == exp.Literal.string("yyyy-MM")  # not a strftime pattern
    assert isinstance(ignored, exp.IgnoreNulls)
    assert isinstance(ignored.this, exp.First)
    assert ignored.this.meta[FUNCTION_NAME_KEY] == "first"
    assert isinstance(respected, exp.RespectNulls)
    assert isinstance(respected.this, exp.Last)
    assert isinstance(corr, exp.Corr)
    assert isinstance(corr.this, exp.Distinct)


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        (
            "SELECT * FROM t PIVOT (avg(x) + 1 AS a, count(*) c FOR k IN (1, 2))",
            ["AVG(x) + 1 AS a", "COUNT(*) AS c"],
        ),
        ("SELECT * FROM t PIVOT (sum(a), b FOR c IN (1))", ["SUM(a)", "b"]),
        ("SELECT * FROM t PIVOT (ceil(sum(x)) AS c FOR k IN (1))", ["CEIL(SUM(x)) AS c"]),
    ],
)
def test_pivot_aggregates_of_any_shape(sql: str, expected: list[str]) -> None:
    pivot = _one(sql).find(exp.Pivot)
    assert pivot is not None
    assert [e.sql("spark") for e in pivot.expressions] == expected


def test_nothing_of_the_reader_is_left_in_the_tree() -> None:
    sql = (
        "SELECT /* kept */ nvl(a, 1) AS n, date_format(ts, 'y') FROM t"
        " PIVOT (avg(x) + 1 AS a FOR k IN (1))"
    )
    tree = _one(sql)
    written = tree.sql("spark")
    assert "__sparkshim" not in written
    assert "/* kept */" in written
    assert all(
        "__sparkshim" not in comment for node in tree.walk() for comment in node.comments or []
    )


def test_the_caller_s_tokens_are_left_as_they_are() -> None:
    sql = "SELECT date_format(ts, 'y'), sum(a) FROM t"
    tokens = tokenize(sql)
    before = [(token.text, list(token.comments)) for token in tokens]
    parse_statements(sql, tokens)
    assert [(token.text, list(token.comments)) for token in tokens] == before


def test_a_name_followed_by_a_parenthesis_that_is_no_call_is_untouched() -> None:
    (create,) = parse_statements("CREATE TABLE t (a INT, b STRING) USING delta")
    assert "__sparkshim" not in create.sql("spark")
    (insert,) = parse_statements("INSERT INTO t (a, b) VALUES (1, 'x')")
    assert insert.sql("spark") == "INSERT INTO t (a, b) VALUES (1, 'x')"


@pytest.mark.parametrize(
    ("sql", "grouped"),
    [
        # Spark: comparisons on one level, left to right; a predicate after a chain of them,
        # its last operand a chain too. (Checked against PySpark's analyzed plans.)
        ("SELECT s LIKE 'p' = true", "SELECT s LIKE ('p' = TRUE)"),
        ("SELECT a = b LIKE c", "SELECT (a = b) LIKE c"),
        ("SELECT NOT s LIKE 'p' = true", "SELECT NOT s LIKE ('p' = TRUE)"),
        ("SELECT a = b NOT LIKE c ESCAPE '!'", "SELECT (a = b) NOT LIKE c ESCAPE '!'"),
        ("SELECT s RLIKE 'p' = x, s ILIKE 'p' = x", "SELECT s RLIKE ('p' = x), s ILIKE ('p' = x)"),
        ("SELECT a = b NOT BETWEEN c AND d = e", "SELECT NOT (a = b) BETWEEN c AND (d = e)"),
        ("SELECT a = b IN (1)", "SELECT (a = b) IN (1)"),
        ("SELECT a = 1 < 2", "SELECT (a = 1) < 2"),
        ("SELECT a = b = c LIKE d = e < f", "SELECT ((a = b) = c) LIKE ((d = e) < f)"),
        (
            "SELECT f(a = b LIKE c) FROM t WHERE a LIKE b = c",
            "SELECT F((a = b) LIKE c) FROM t WHERE a LIKE (b = c)",
        ),
        # Already Spark's grouping: left as it is.
        (
            "SELECT (a LIKE b) = c, a LIKE b AND c = d, a = b = c",
            "SELECT (a LIKE b) = c, a LIKE b AND c = d, a = b = c",
        ),
        ("SELECT a = b IS NULL", "SELECT (a = b) IS NULL"),
    ],
)
def test_comparisons_and_predicates_are_grouped_as_spark_groups_them(
    sql: str, grouped: str
) -> None:
    assert _one(sql).sql("spark") == grouped


def _pure_python_run() -> str:
    """A script that imports sqlglot from its source modules, not its compiled ones (as if
    sqlglotc were not installed), then runs pytest on the given files."""
    return (
        "import importlib.machinery as m, sys\n"
        "class PureSqlglot:\n"
        "    @classmethod\n"
        "    def find_spec(cls, name, path=None, target=None):\n"
        "        if name != 'sqlglot' and not name.startswith('sqlglot.'):\n"
        "            return None\n"
        "        for entry in path or sys.path:\n"
        "            source = (m.SourceFileLoader, m.SOURCE_SUFFIXES)\n"
        "            spec = m.FileFinder(entry, source).find_spec(name)\n"
        "            if spec is not None:\n"
        "                return spec\n"
        "        return None\n"
        "sys.meta_path.insert(0, PureSqlglot)\n"
        "import sqlglot.parser, sqlglot.expressions.core\n"
        "assert sqlglot.parser.__file__.endswith('.py'), sqlglot.parser.__file__\n"
        "assert sqlglot.expressions.core.__file__.endswith('.py')\n"
        "import pytest\n"
        "sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', *sys.argv[1:]]))\n"
    )


def test_the_pure_python_build_reads_the_same() -> None:
    files = [
        "tests/embedded/test_spark_parser.py",
        "tests/embedded/test_naming.py",
        "tests/unit/test_dialect.py",
    ]
    run = subprocess.run(
        [sys.executable, "-c", _pure_python_run(), *files, "-k", "not pure_python and not pyspark"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
