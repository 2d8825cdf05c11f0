"""Splitting a script into statements: ``split_statements`` and what ``parse`` makes of it.

A statement runs from the first non-blank character after the previous top-level ``;``
(leading comments kept) up to, not including, the next top-level ``;`` (or the end of
the text). Pieces holding only comments and whitespace are dropped.
"""

from __future__ import annotations

import pytest

from dyntables import parse
from dyntables.parser.splitter import Piece, split_statements
from dyntables.statements import (
    CreateDynamicTable,
    DropDynamicTable,
    PassThrough,
    TableName,
    TargetLag,
)


def pieces(text: str) -> list[str]:
    return [text[piece.start : piece.stop] for piece in split_statements(text)]


# ---- where a ';' does not end a statement ------------------------------------------------


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        pytest.param("SELECT ';'; SELECT 2", ["SELECT ';'", "SELECT 2"], id="single_quotes"),
        pytest.param('SELECT ";"; SELECT 2', ['SELECT ";"', "SELECT 2"], id="double_quotes"),
        pytest.param(
            "SELECT `a;b` FROM t; SELECT 2", ["SELECT `a;b` FROM t", "SELECT 2"], id="backticks"
        ),
        pytest.param(
            "SELECT 'it\\'s; ok'; SELECT 2",
            ["SELECT 'it\\'s; ok'", "SELECT 2"],
            id="backslash_escaped_quote",
        ),
        pytest.param(
            "SELECT 'it''s; ok'; SELECT 2",
            ["SELECT 'it''s; ok'", "SELECT 2"],
            id="doubled_single_quote",
        ),
        pytest.param(
            'SELECT "say ""hi;"""; SELECT 2',
            ['SELECT "say ""hi;"""', "SELECT 2"],
            id="doubled_double_quote",
        ),
        pytest.param(
            'SELECT "a\\";b"; SELECT 2', ['SELECT "a\\";b"', "SELECT 2"], id="escaped_double_quote"
        ),
        pytest.param(
            "SELECT `a``;b`; SELECT 2", ["SELECT `a``;b`", "SELECT 2"], id="doubled_backtick"
        ),
        pytest.param(
            "SELECT `a\\`; SELECT 2",
            ["SELECT `a\\`", "SELECT 2"],
            id="backslash_does_not_escape_in_backticks",
        ),
        pytest.param(
            "SELECT 'a\\\\'; SELECT 2",
            ["SELECT 'a\\\\'", "SELECT 2"],
            id="escaped_backslash_before_closing_quote",
        ),
        pytest.param(
            "SELECT 1 -- a; b\n, 2; SELECT 3",
            ["SELECT 1 -- a; b\n, 2", "SELECT 3"],
            id="line_comment",
        ),
        pytest.param(
            "SELECT 1 /* a; b */ , 2; SELECT 3",
            ["SELECT 1 /* a; b */ , 2", "SELECT 3"],
            id="block_comment",
        ),
        pytest.param(
            "SELECT /* a /* b; */ c; */ 1; SELECT 2",
            ["SELECT /* a /* b; */ c; */ 1", "SELECT 2"],
            id="nested_block_comment",
        ),
        pytest.param(
            "SELECT /*/ ; */ 1; SELECT 2",
            ["SELECT /*/ ; */ 1", "SELECT 2"],
            id="slash_right_after_comment_start",
        ),
        pytest.param("SELECT (1; 2); SELECT 3", ["SELECT (1; 2)", "SELECT 3"], id="parentheses"),
        pytest.param(
            "SELECT ((1); (2;)); SELECT 3",
            ["SELECT ((1); (2;))", "SELECT 3"],
            id="nested_parentheses",
        ),
        pytest.param(
            "SELECT ')' , (';'); SELECT 2",
            ["SELECT ')' , (';')", "SELECT 2"],
            id="parenthesis_inside_a_string",
        ),
        pytest.param(
            "SELECT (1 /* ) */ ; 2); SELECT 3",
            ["SELECT (1 /* ) */ ; 2)", "SELECT 3"],
            id="parenthesis_inside_a_comment",
        ),
    ],
)
def test_semicolon_that_does_not_end_a_statement(script: str, expected: list[str]) -> None:
    assert pieces(script) == expected


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        pytest.param("SELECT '--'; SELECT 2", ["SELECT '--'", "SELECT 2"], id="dashes_in_string"),
        pytest.param(
            "SELECT '/*'; SELECT 2", ["SELECT '/*'", "SELECT 2"], id="comment_start_in_string"
        ),
        pytest.param(
            "SELECT 1 /* it's */; SELECT 2",
            ["SELECT 1 /* it's */", "SELECT 2"],
            id="quote_in_block_comment",
        ),
        pytest.param(
            "-- it's\nSELECT 1; SELECT 2",
            ["-- it's\nSELECT 1", "SELECT 2"],
            id="quote_in_line_comment",
        ),
        pytest.param(
            "SELECT 4/2; SELECT 3-1; SELECT 5*2",
            ["SELECT 4/2", "SELECT 3-1", "SELECT 5*2"],
            id="division_and_minus",
        ),
        pytest.param(
            "SELECT 1 */ 2; SELECT 3", ["SELECT 1 */ 2", "SELECT 3"], id="stray_comment_end"
        ),
        pytest.param(
            "SELECT 1); SELECT 2", ["SELECT 1)", "SELECT 2"], id="stray_closing_parenthesis"
        ),
    ],
)
def test_things_that_look_special_but_are_not(script: str, expected: list[str]) -> None:
    assert pieces(script) == expected


def test_refresh_using_with_semicolons_stays_one_statement() -> None:
    script = (
        "CREATE DYNAMIC TABLE t (a INT) TARGET_LAG = '1 minute'\n"
        "  REFRESH USING (INSERT INTO SELF SELECT 1; INSERT INTO SELF SELECT 2);\n"
        "SELECT 3"
    )

    assert pieces(script) == [
        "CREATE DYNAMIC TABLE t (a INT) TARGET_LAG = '1 minute'\n"
        "  REFRESH USING (INSERT INTO SELF SELECT 1; INSERT INTO SELF SELECT 2)",
        "SELECT 3",
    ]


def test_unbalanced_opening_parenthesis_runs_to_the_end() -> None:
    assert pieces("SELECT (1; SELECT 2; SELECT 3") == ["SELECT (1; SELECT 2; SELECT 3"]


# ---- the extent of each statement -----------------------------------------------------------


def test_statement_starts_at_first_non_blank_and_keeps_trailing_blanks() -> None:
    script = "  SELECT 1  ;\n\t SELECT 2 \n; SELECT 3\n"

    assert split_statements(script) == [Piece(2, 12), Piece(16, 26), Piece(28, 37)]
    assert pieces(script) == ["SELECT 1  ", "SELECT 2 \n", "SELECT 3\n"]


def test_leading_comments_are_kept() -> None:
    script = "SELECT 1; -- first\n/* second */ SELECT 2; /* a */ -- b\n  SELECT 3"

    assert pieces(script) == [
        "SELECT 1",
        "-- first\n/* second */ SELECT 2",
        "/* a */ -- b\n  SELECT 3",
    ]


def test_comment_only_and_blank_pieces_are_dropped() -> None:
    script = "SELECT 1; -- only a comment\n; /* only ; this */ ;   \n\t; ;; SELECT 2;  -- trailing"

    assert pieces(script) == ["SELECT 1", "SELECT 2"]


def test_trailing_text_without_semicolon() -> None:
    assert pieces("SELECT 1; SELECT 2") == ["SELECT 1", "SELECT 2"]
    assert pieces("SELECT 1") == ["SELECT 1"]


def test_trailing_semicolon_and_blanks_add_nothing() -> None:
    assert pieces("SELECT 1;") == ["SELECT 1"]
    assert pieces("SELECT 1;  \n\n") == ["SELECT 1"]


@pytest.mark.parametrize(
    "script", ["", "   ", "\n\t\r\n", ";", " ; ;; ", "-- c", "/* c */", "/* a */ -- b\n;"]
)
def test_nothing_to_run(script: str) -> None:
    assert split_statements(script) == []
    assert parse(script) == []


def test_crlf_line_endings() -> None:
    script = "SELECT 1;\r\n-- note\r\nSELECT 2 -- x; y\r\n;\r\nSELECT 3\r\n"

    assert pieces(script) == ["SELECT 1", "-- note\r\nSELECT 2 -- x; y\r\n", "SELECT 3\r\n"]


# ---- unterminated quotes and comments --------------------------------------------------------


@pytest.mark.parametrize(
    "script",
    [
        pytest.param("SELECT 'abc; SELECT 2", id="single_quote"),
        pytest.param('SELECT "abc; SELECT 2', id="double_quote"),
        pytest.param("SELECT `abc; SELECT 2", id="backtick"),
        pytest.param("SELECT 'it\\'s; SELECT 2", id="escaped_quote_then_no_close"),
        pytest.param("SELECT 1 /* abc; SELECT 2", id="block_comment"),
        pytest.param("SELECT 1 /* a /* b */ c; SELECT 2", id="nested_block_comment"),
    ],
)
def test_unterminated_quote_or_comment_runs_to_the_end(script: str) -> None:
    assert pieces(script) == [script]


def test_unterminated_comment_after_the_last_statement_is_not_dropped() -> None:
    """``/* oops`` opens a comment that never closes: the text is malformed, so it must
    reach something that reports it (Spark says "Unclosed bracketed comment"), not vanish
    as if it were a complete comment."""
    assert pieces("SELECT 1; /* oops") == ["SELECT 1", "/* oops"]


# ---- what parse makes of the pieces ---------------------------------------------------------


def test_parse_gives_pass_through_with_the_exact_text_and_position() -> None:
    script = "SELECT ';' AS a ;\n  -- lead\n  SELECT `odd;name` FROM t\n;\n"

    first, second = parse(script)

    assert first == PassThrough("SELECT ';' AS a ")
    assert second == PassThrough("-- lead\n  SELECT `odd;name` FROM t\n")
    assert first.span is not None
    assert second.span is not None
    assert (first.span.start, first.span.stop, first.span.line, first.span.column) == (0, 16, 1, 1)
    assert (second.span.start, second.span.line, second.span.column) == (20, 2, 3)
    assert script[second.span.start : second.span.stop] == second.sql


def test_parse_mixes_ours_and_pass_through_in_order() -> None:
    script = (
        "SELECT 1;\n"
        "CREATE DYNAMIC TABLE t TARGET_LAG = '1 minute' AS SELECT ';' FROM s;\n"
        "/* c */ INSERT INTO s VALUES (';');\n"
        "DROP DYNAMIC TABLE t"
    )

    assert parse(script) == [
        PassThrough("SELECT 1"),
        CreateDynamicTable(
            TableName(("t",)), target_lag=TargetLag(seconds=60), query="SELECT ';' FROM s"
        ),
        PassThrough("/* c */ INSERT INTO s VALUES (';')"),
        DropDynamicTable(TableName(("t",))),
    ]


def test_parse_with_crlf_keeps_carriage_returns_in_pass_through() -> None:
    script = "SELECT 1\r\n;\r\nDROP DYNAMIC TABLE t\r\n"

    select, drop = parse(script)

    assert select == PassThrough("SELECT 1\r\n")
    assert drop == DropDynamicTable(TableName(("t",)))
    assert drop.span is not None
    assert (drop.span.line, drop.span.column) == (3, 1)
