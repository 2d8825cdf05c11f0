"""Error tests for the DDL front-end: where a syntax error points and what it says.

Each case in ``tests/fixtures/grammar/errors/*.yaml`` holds SQL that must not parse and
the error it must raise::

    - name: lag_missing_equals
      sql: "CREATE DYNAMIC TABLE t TARGET_LAG '10 minutes' AS SELECT 1"
      error:
        line: 1                 # 1-based, in the whole text given to parse
        column: 35              # 1-based
        at: "'10 minutes'"      # the text at line:column ("" = just past the statement)
        message: ["expected '='", "found \\"'10 minutes'\\""]   # fragments of the reason
        type: DynamicTableSyntaxError                           # the default

``at`` checks the fixture itself (that line:column is where the author meant); the error
must then match line, column, type and every message fragment, and ``str(error)`` must
show the offending line with a caret under the column.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from dyntables import (
    DynamicTableError,
    DynamicTableSyntaxError,
    UnsupportedStatementError,
    parse,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "grammar" / "errors"
ERROR_TYPES: dict[str, type[DynamicTableSyntaxError]] = {
    cls.__name__: cls for cls in (DynamicTableSyntaxError, UnsupportedStatementError)
}


def error_cases() -> list[dict[str, Any]]:
    cases = []
    for path in sorted(FIXTURES.glob("*.yaml")):
        cases.extend(yaml.safe_load(path.read_text(encoding="utf-8")))
    return cases


CASES = error_cases()


def expected_excerpt(text: str, line: int, column: int) -> str:
    """The offending line, indented by two, and a caret under ``column`` (short lines
    without tabs only: that is what the fixtures use)."""
    source_line = text.split("\n")[line - 1].rstrip("\r")
    assert "\t" not in source_line, "use a plain test for lines with tabs"
    assert len(source_line) <= 100, "use a plain test for long lines"
    return f"  {source_line}\n  {' ' * (column - 1)}^"


def raised_by(sql: str) -> DynamicTableError:
    with pytest.raises(DynamicTableError) as caught:
        parse(sql)
    return caught.value


def test_error_fixture_names_are_unique() -> None:
    names = [case["name"] for case in CASES]
    assert len(CASES) > 80
    assert sorted(name for name in set(names) if names.count(name) > 1) == []


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_error_fixture_points_where_its_author_meant(case: dict[str, Any]) -> None:
    """Guards the fixtures, not the parser: ``at`` is found at line:column."""
    sql, error = case["sql"], case["error"]
    source_line = sql.split("\n")[error["line"] - 1]
    assert source_line[error["column"] - 1 :].startswith(error["at"])
    if not error["at"]:  # just past the last non-blank character of the statement
        offset = sum(len(line) + 1 for line in sql.split("\n")[: error["line"] - 1])
        assert sql[offset + error["column"] - 1 :].strip() in ("", ";")
        assert not sql[offset + error["column"] - 2].isspace()


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_error(case: dict[str, Any]) -> None:
    sql, error = case["sql"], case["error"]
    fragments = error["message"] if isinstance(error["message"], list) else [error["message"]]

    raised = raised_by(sql)

    assert type(raised) is ERROR_TYPES[error.get("type", "DynamicTableSyntaxError")]
    assert isinstance(raised, DynamicTableSyntaxError)
    assert (raised.line, raised.column) == (error["line"], error["column"])
    for fragment in fragments:
        assert fragment in raised.reason
    assert raised.excerpt == expected_excerpt(sql, error["line"], error["column"])
    assert str(raised) == (
        f"{raised.reason} (line {error['line']}, column {error['column']})\n{raised.excerpt}"
    )


# ---- what the fixture format cannot express -----------------------------------------------


def test_every_error_is_a_dynamic_table_error() -> None:
    assert issubclass(DynamicTableSyntaxError, DynamicTableError)
    assert issubclass(UnsupportedStatementError, DynamicTableSyntaxError)
    assert issubclass(DynamicTableError, Exception)


def test_parse_rejects_text_that_is_not_a_string() -> None:
    with pytest.raises(DynamicTableError) as caught:
        parse(b"DROP DYNAMIC TABLE t")  # type: ignore[arg-type]

    assert type(caught.value) is DynamicTableError
    assert "bytes" in str(caught.value)


def test_an_error_stops_the_whole_script() -> None:
    """Nothing is returned for the statements before the bad one."""
    with pytest.raises(DynamicTableSyntaxError) as caught:
        parse("CREATE DYNAMIC TABLE a TARGET_LAG = '1 minute' AS SELECT 1;\nDROP DYNAMIC TABLE")

    assert (caught.value.line, caught.value.column) == (2, 19)


def test_crlf_line_endings_count_lines_and_columns_like_lf() -> None:
    sql = "SELECT 1;\r\nCREATE DYNAMIC TABLE t\r\n  TARGET_LAG = '2 fortnights'\r\nAS SELECT 1\r\n"

    raised = raised_by(sql)

    assert isinstance(raised, DynamicTableSyntaxError)
    assert (raised.line, raised.column) == (3, 16)
    assert raised.excerpt == "    TARGET_LAG = '2 fortnights'\n                 ^"


def test_crlf_error_just_past_the_statement() -> None:
    sql = "ALTER DYNAMIC TABLE t\r\n  SET\r\n"

    raised = raised_by(sql)

    assert isinstance(raised, DynamicTableSyntaxError)
    assert (raised.line, raised.column) == (2, 6)
    assert raised.excerpt == "    SET\n       ^"


def test_caret_keeps_tabs_so_it_lines_up() -> None:
    sql = "CREATE DYNAMIC TABLE t\n\tTARGET_LAG\t= '3 eons'\nAS SELECT 1"

    raised = raised_by(sql)

    assert isinstance(raised, DynamicTableSyntaxError)
    assert (raised.line, raised.column) == (2, 15)
    assert raised.excerpt == "  \tTARGET_LAG\t= '3 eons'\n  \t          \t  ^"


def test_long_line_is_shown_as_a_window_around_the_caret() -> None:
    columns = ", ".join(f"column_{i}" for i in range(30))
    sql = f"CREATE DYNAMIC TABLE t TARGET_LAG = '1 minute' AS SELECT {columns} FROM s;\n"
    sql += "DROP DYNAMIC TABLE t " + "x" * 150

    raised = raised_by(sql)

    assert isinstance(raised, DynamicTableSyntaxError)
    assert (raised.line, raised.column) == (2, 22)
    assert raised.excerpt == (
        "  DROP DYNAMIC TABLE t " + "x" * 79 + "...\n" + "  " + " " * 21 + "^"
    )


def test_long_line_window_far_into_the_line() -> None:
    padding = "/*" + "-" * 200 + "*/ "
    sql = f"{padding}DROP DYNAMIC TABLE t junk"

    raised = raised_by(sql)

    assert isinstance(raised, DynamicTableSyntaxError)
    assert (raised.line, raised.column) == (1, len(padding) + 22)
    source_line, caret_line = raised.excerpt.split("\n")
    assert source_line.startswith("  ...")
    assert len(source_line) <= 2 + 3 + 100 + 3
    # The caret sits under the 'j' of junk, wherever the window starts.
    assert source_line[caret_line.index("^")] == "j"
    assert source_line[caret_line.index("^") :].startswith("junk")
