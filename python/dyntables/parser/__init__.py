"""The front-end: text → typed statements.

``parse`` splits a script into statements, sends the ones that begin with a
dynamic-table form through the ANTLR grammar (``grammar/*.g4``) and returns every other
statement untouched as a ``PassThrough``. It needs no catalog and no engine.
"""

from __future__ import annotations

from dyntables.errors import DynamicTableError, line_and_column, syntax_error_at
from dyntables.parser.ddl import parse_dynamic_table_statement
from dyntables.parser.misspelling import find_misspelt_keyword
from dyntables.parser.recognizer import is_dynamic_table_statement
from dyntables.parser.splitter import split_statements
from dyntables.statements import PassThrough, Span, Statement


def parse(text: str) -> list[Statement]:
    """The statements of ``text``, in order.

    Ordinary SQL comes back as ``PassThrough`` with its exact text; our statements as
    typed dataclasses. Only ``DynamicTableError`` (usually ``DynamicTableSyntaxError``)
    is ever raised.

    >>> [type(s).__name__ for s in parse("SELECT 1; DROP DYNAMIC TABLE IF EXISTS t")]
    ['PassThrough', 'DropDynamicTable']
    >>> parse("SELECT 1; DROP DYNAMIC TABLE IF EXISTS t")[0].sql
    'SELECT 1'
    """
    if not isinstance(text, str):
        raise DynamicTableError(f"parse expects SQL text (str), got {type(text).__name__}")
    statements: list[Statement] = []
    for piece in split_statements(text):
        sql = text[piece.start : piece.stop]
        if not is_dynamic_table_statement(sql):
            _check_spelling(text, piece.start, sql)
            span = Span(piece.start, piece.stop, *line_and_column(text, piece.start))
            statements.append(PassThrough(sql, span))
            continue
        try:
            statements.append(parse_dynamic_table_statement(text, piece.start, piece.stop))
        except DynamicTableError:
            raise
        except Exception as problem:  # a defect of ours: still a DynamicTableError
            raise syntax_error_at(
                f"internal error while parsing this statement ({type(problem).__name__}:"
                f" {problem}); please report it",
                text,
                piece.start,
            ) from problem
    return statements


def _check_spelling(text: str, start: int, sql: str) -> None:
    """Raise a syntax error for a statement that would be ours but for a misspelt keyword
    (``CREATE DYNAMC TABLE``), rather than let it reach Spark, whose error would not
    mention dynamic tables."""
    misspelling = find_misspelt_keyword(sql)
    if misspelling is not None:
        raise syntax_error_at(
            f"syntax error at or near '{misspelling.word}': did you mean {misspelling.keyword}?",
            text,
            start + misspelling.offset,
        )


__all__ = ["parse"]
