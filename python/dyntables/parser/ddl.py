"""Run the ANTLR lexer and parser on one of our statements and report errors our way.

ANTLR's default error handling prints to stderr and recovers; we stop at the first error
and raise a ``DynamicTableSyntaxError`` located in the original text, worded in user
terms ("expected '=' but found '10 minutes'") rather than in token names.
"""

from __future__ import annotations

from typing import Any, NoReturn

from antlr4 import CommonTokenStream, InputStream, Token
from antlr4.error.ErrorListener import ErrorListener
from antlr4.error.Errors import NoViableAltException

from dyntables.errors import syntax_error_at
from dyntables.parser._generated.DynamicTablesLexer import DynamicTablesLexer as Lexer
from dyntables.parser._generated.DynamicTablesParser import DynamicTablesParser as Parser
from dyntables.parser.builder import StatementBuilder
from dyntables.statements import DynamicTableStatement

# How expected tokens are named in messages, where their grammar name would not help.
_TOKEN_DESCRIPTIONS = {
    Lexer.STRING: "a quoted string",
    Lexer.INTEGER_VALUE: "an integer",
    Lexer.DECIMAL_VALUE: "a number",
    Lexer.IDENTIFIER: "a name",
    Lexer.BACKQUOTED_IDENTIFIER: "a `quoted name`",
    Lexer.EQ: "'='",
    Token.EOF: "the end of the statement",
}
_MAX_LISTED = 8
# Where many tokens are valid, a phrase says more than a truncated token list.
_CONTEXT_EXPECTATIONS = {
    Parser.CreateDynamicTableStatementContext: "a property (TARGET_LAG, WAREHOUSE, ...),"
    " AS <query> or REFRESH USING ( <statement> )",
    Parser.CreateMaterializedViewContext: "COMMENT, TBLPROPERTIES or AS <query>",
}
# Rules that take any tokens: listing "expected" tokens there would list them all.
_EXPRESSION_CONTEXTS = (
    Parser.TimePointExpressionContext,
    Parser.ExpressionContext,
    Parser.BalancedTokenContext,
)
_USAGE = {
    "CREATE": "CREATE [OR REPLACE] [TRANSIENT] DYNAMIC TABLE [IF NOT EXISTS] <name> ..."
    " or CREATE [OR REPLACE] MATERIALIZED VIEW [IF NOT EXISTS] <name> AS <query>",
    "ALTER": "ALTER DYNAMIC TABLE [IF EXISTS] <name> {SUSPEND | RESUME | REFRESH | SET ..."
    " | UNSET FROZEN WHERE | RENAME TO <name>}",
    "DROP": "DROP {DYNAMIC TABLE | MATERIALIZED VIEW} [IF EXISTS] <name>",
    "SHOW": "SHOW [FULL] DYNAMIC TABLES [LIKE '<pattern>'] [IN {ACCOUNT | SCHEMA <schema>}]",
    "DESCRIBE": "DESCRIBE DYNAMIC TABLE <name>",
    "DESC": "DESC DYNAMIC TABLE <name>",
    "EXPLAIN": "EXPLAIN DYNAMIC TABLE <name> or EXPLAIN CREATE DYNAMIC TABLE ...",
    "REFRESH": "REFRESH MATERIALIZED VIEW <name>",
    "CALL": "CALL BQ.REFRESH_MATERIALIZED_VIEW('<view>')",
}


def parse_dynamic_table_statement(text: str, start: int, stop: int) -> DynamicTableStatement:
    """Parse ``text[start:stop]``, which the recognizer found to be one of ours.

    Positions in errors and spans are relative to the whole ``text``.
    """
    piece = text[start:stop]
    listener = _RaisingErrorListener(text, start, stop)
    lexer = Lexer(InputStream(piece))
    lexer.removeErrorListeners()
    lexer.addErrorListener(listener)
    parser = Parser(CommonTokenStream(lexer))
    parser.removeErrorListeners()
    parser.addErrorListener(listener)
    try:
        tree = parser.singleStatement()
    except RecursionError:
        raise syntax_error_at("the statement nests parentheses too deeply", text, start) from None
    return StatementBuilder(text, start).build(tree)


class _RaisingErrorListener(ErrorListener):  # type: ignore[misc]  # untyped runtime
    """Turns the first lexer or parser error into a ``DynamicTableSyntaxError``."""

    def __init__(self, text: str, start: int, stop: int) -> None:
        super().__init__()
        self.text = text
        self.offset = start
        # "Unexpected end" points just past the last non-blank character of the piece.
        self.end_offset = start + len(text[start:stop].rstrip())

    def syntaxError(  # noqa: N802  (ANTLR's callback name)
        self,
        recognizer: Any,
        offending_symbol: Any,
        line: int,
        column: int,
        msg: str,
        e: Any,
    ) -> NoReturn:
        if offending_symbol is None:  # a lexer error: only a line and column are known
            piece_offset = _offset_of(self.text[self.offset :], line, column)
            raise syntax_error_at(msg, self.text, self.offset + piece_offset)
        position = self.offset + offending_symbol.start
        if offending_symbol.type == Token.EOF:
            position = self.end_offset
        reason = _describe(recognizer, offending_symbol, e)
        raise syntax_error_at(reason, self.text, position)


def _describe(parser: Any, found: Any, error: Any) -> str:
    """A user-facing reason: what was found and what would have been valid there."""
    if found.type == Lexer.UNCLOSED_STRING:
        return "unterminated string literal: add the closing quote"
    if found.type == Lexer.UNCLOSED_COMMENT:
        return "unterminated /* comment: add the closing */"
    found_text = "the end of the statement" if found.type == Token.EOF else repr(found.text)
    if isinstance(error, NoViableAltException):
        # No single token would have fixed it, so there is no useful "expected" set;
        # show the statement's shape instead.
        tokens = parser.getTokenStream().tokens
        first_word = next(t.text for t in tokens if t.channel == Token.DEFAULT_CHANNEL).upper()
        usage = _USAGE.get(first_word)
        return f"unexpected {found_text}" + (f"; the form is {usage}" if usage else "")
    if isinstance(parser._ctx, Parser.QueryContext | Parser.AnyTokenContext):
        return f"expected a query but found {found_text}"
    if isinstance(parser._ctx, _EXPRESSION_CONTEXTS):
        return f"expected an expression but found {found_text}"
    for context_type, expectation in _CONTEXT_EXPECTATIONS.items():
        if isinstance(parser._ctx, context_type):
            return f"expected {expectation} but found {found_text}"
    expected = _expected_tokens(parser)
    if not expected:
        return f"unexpected {found_text}"
    return f"expected {expected} but found {found_text}"


def _expected_tokens(parser: Any) -> str:
    try:
        token_types = sorted(parser.getExpectedTokens())
    except Exception:  # ANTLR cannot always compute the set after a failed prediction
        return ""
    if Lexer.IDENTIFIER in token_types:
        # Every keyword is also a valid name there: "a name" says it all.
        token_types = [t for t in token_types if t in _TOKEN_DESCRIPTIONS]
        token_types = [t for t in token_types if t != Lexer.BACKQUOTED_IDENTIFIER]
    names = [_token_name(parser, token_type) for token_type in token_types]
    if len(names) > _MAX_LISTED:
        names = [*names[:_MAX_LISTED], "..."]
    if len(names) == 1:
        return names[0]
    return "one of " + ", ".join(names)


def _token_name(parser: Any, token_type: int) -> str:
    if token_type in _TOKEN_DESCRIPTIONS:
        return _TOKEN_DESCRIPTIONS[token_type]
    literal = parser.literalNames[token_type] if token_type < len(parser.literalNames) else ""
    if literal and literal != "<INVALID>":
        spelled = literal.strip("'")
        return spelled.upper() if spelled.isalpha() or "_" in spelled else f"'{spelled}'"
    return str(parser.symbolicNames[token_type])


def _offset_of(piece: str, line: int, column: int) -> int:
    """Character offset of ANTLR's 1-based line and 0-based column in ``piece``."""
    offset = 0
    for _ in range(line - 1):
        offset = piece.index("\n", offset) + 1
    return offset + column
