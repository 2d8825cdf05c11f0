"""Spark's syntax errors for text the shim's parser rejects, or accepts although Spark would not.

sqlglot is more lenient than Spark's grammar (``SELEC *`` is a product of two columns, an
unknown statement becomes a ``Command``) and words its errors in its own terms. Here each
such case becomes the ``ParseException`` Spark raises, located at the token Spark names::

    [PARSE_SYNTAX_ERROR] Syntax error at or near 'SELEC'.(line 1, pos 0)

    == SQL ==
    SELEC *
    ^^^

A call with the wrong number of arguments is Spark's ``WRONG_NUM_ARGS``, as Spark reports
it (an ``AnalysisException``). Only the user's own text is ever quoted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import pairwise

from sqlglot import exp
from sqlglot.dialects.spark import Spark
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokenizer_core import Token, TokenType

from sparkshim.errors import AnalysisException, ParseException, UnsupportedSqlError
from sparkshim.spark_functions import DATETIME_UNITS, SPARK_ARITIES, UNIT_FIRST_CALLS
from sparkshim.spark_parser import reads_as_operator

# The words a Spark 3.5 (or Delta) statement can begin with; a statement beginning with
# any other word is a syntax error at that word, whatever sqlglot made of it.
STATEMENT_STARTS = frozenset(
    """
    ADD ALTER ANALYZE CACHE CLEAR COMMENT CONVERT CREATE DECLARE DELETE DESC DESCRIBE DFS
    DROP EXECUTE EXPLAIN FROM GENERATE INSERT LIST LOAD MAP MERGE MSCK OPTIMIZE REDUCE
    REFRESH REORG REPAIR REPLACE RESET RESTORE SELECT SET SHOW TABLE TRUNCATE UNCACHE
    UPDATE USE VACUUM VALUES WITH
    """.split()  # noqa: SIM905
)

# For the statements whose second word Spark's grammar restricts, the words allowed
# there: any other is a syntax error at the second word (``CREATE DYNAMC TABLE``).
_SECOND_WORDS = {
    "CREATE": frozenset(
        """OR TABLE TEMPORARY TEMP VIEW GLOBAL EXTERNAL DATABASE SCHEMA NAMESPACE FUNCTION
        INDEX ROLE""".split()  # noqa: SIM905
    ),
    "DROP": frozenset(
        [
            "TABLE",
            "VIEW",
            "DATABASE",
            "SCHEMA",
            "NAMESPACE",
            "FUNCTION",
            "TEMPORARY",
            "INDEX",
            "ROLE",
        ]
    ),
    "ALTER": frozenset(["TABLE", "VIEW", "DATABASE", "SCHEMA", "NAMESPACE"]),
}

_WORD_OR_SYMBOL = re.compile(r"\s*(?:(?:--[^\n]*(?:\n|$)|/\*.*?\*/)\s*)*([A-Za-z_]\w*|\S)?", re.S)
_QUOTED_OR_QUOTE = re.compile(r"""'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|`[^`]*`|(['"`])""", re.S)
_ARGUMENT_COUNT = re.compile(r"The number of provided arguments \((?P<count>\d+)\)")
_MISSING_ARGUMENT = re.compile(
    r"Required keyword: '\w+' missing for <class '[\w.]+\.(?P<node>\w+)'>"
)
_FUNCTIONS_REFERENCE = "https://spark.apache.org/docs/latest/sql-ref-functions.html"


@dataclass(frozen=True)
class _Word:
    """A word (or symbol) of the statement text and its character offset."""

    text: str
    offset: int


def syntax_error(sql: str, offset: int | None, detail: str = "") -> ParseException:
    """Spark's PARSE_SYNTAX_ERROR at character ``offset`` of ``sql`` (the end of the input
    when None), naming the token there, with Spark's excerpt of the statement."""
    if offset is None:
        near = "end of input"
        offset = len(sql.rstrip())
    else:
        word = _word_at(sql, offset)
        near = f"'{word.text}'" if word is not None else "end of input"
    line, pos = _line_and_pos(sql, offset)
    return ParseException(
        message=f"[PARSE_SYNTAX_ERROR] Syntax error at or near {near}{detail}."
        f"(line {line}, pos {pos})\n\n== SQL ==\n{_excerpt(sql, line, pos)}"
    )


def check_statement_start(sql: str) -> None:
    """Raise Spark's syntax error when ``sql`` does not begin with a statement's first word
    (a bare expression, a misspelt SELECT ...)."""
    first = first_word(sql)
    if first is None:
        return
    if first.text == "(" or first.text.upper() in STATEMENT_STARTS:
        return
    raise syntax_error(sql, first.offset)


def check_statement(sql: str, tree: exp.Expr) -> None:
    """Raise Spark's error for a statement the shim has no handler for, when Spark's
    grammar would not parse it either: an unknown statement (a sqlglot ``Command``) whose
    second word cannot follow its first is a syntax error at that word, any other is a
    statement the shim does not support; a parenthesized bare expression is a syntax
    error."""
    if isinstance(tree, exp.Command):
        words = _leading_words(sql, 2)
        head = words[0].text.upper()
        if len(words) > 1 and head in _SECOND_WORDS:
            second = words[1]
            if second.text.upper() not in _SECOND_WORDS[head]:
                raise syntax_error(sql, second.offset)
        raise UnsupportedSqlError(f"the statement {statement_words(sql)}")
    if not isinstance(tree, exp.Query | exp.DDL | exp.DML) and sql.lstrip().startswith("("):
        first = first_word(sql)
        raise syntax_error(sql, first.offset if first is not None else None)


def wrong_argument_count(sql: str, tokens: list[Token] | None = None) -> AnalysisException | None:
    """Spark's WRONG_NUM_ARGS for the first call of a built-in function with a number of
    arguments Spark does not accept (sqlglot parses some: ``round(1, 2, 3)`` drops the
    third, ``count()`` counts rows), else None. ``tokens``: the statement's, when the
    caller has them."""
    tokens = _tokens(sql) if tokens is None else tokens
    for index, token in enumerate(tokens[:-1]):
        name = token.text.lower()
        if name not in SPARK_ARITIES or tokens[index + 1].token_type != TokenType.L_PAREN:
            continue
        if name in _NOT_CALLS or (index and tokens[index - 1].token_type in _NOT_CALL_AFTER):
            continue
        if reads_as_operator(tokens, index):
            continue  # CASE ... END div (b): the operator, its right operand parenthesized
        count = _argument_count(tokens, index + 1)
        accepted, required = SPARK_ARITIES[name]
        if count is None or _accepts(accepted, count) or _unit_first(tokens, index, count):
            continue
        line, pos = _line_and_pos(sql, token.start)
        stated = f"The `{name}` requires {required} parameters but the actual number is {count}."
        if name == "count" and count == 0:  # Spark names the legacy setting that allows it
            return AnalysisException(
                message=f"[WRONG_NUM_ARGS.WITH_SUGGESTION] {stated} If you have to call this "
                "function with 0 parameters, set the legacy configuration "
                '"spark.sql.legacy.allowParameterlessCount" to "true".'
            )
        return AnalysisException(
            message=f"[WRONG_NUM_ARGS.WITHOUT_SUGGESTION] {stated} Please, refer to "
            f"'{_FUNCTIONS_REFERENCE}' for a fix.; line {line} pos {pos}"
        )
    return None


def _unit_first(tokens: list[Token], name: int, count: int) -> bool:
    """Whether the call named at ``name`` is Spark's timestampadd / timestampdiff form of
    ``dateadd``, ``datediff`` ...: three arguments, a datetime unit first."""
    if tokens[name].text.lower() not in UNIT_FIRST_CALLS or count != 3:
        return False
    unit, comma = tokens[name + 2], tokens[name + 3]
    return unit.text.upper() in DATETIME_UNITS and comma.token_type == TokenType.COMMA


# Names of functions that are also keywords or types, whose "name (" is not always a
# call (x IN (...), EXISTS (subquery), DECIMAL(10, 2) ...), and CAST/EXTRACT, written with
# keywords between their arguments.
_NOT_CALLS = frozenset(
    """any some exists filter not and or like ilike rlike regexp between case when in cast
    try_cast extract boolean tinyint smallint int bigint float double decimal string binary
    date timestamp char varchar""".split()  # noqa: SIM905
)
# Tokens after which a name followed by "(" is not a call: a type (AS, ::), a qualified
# name, a table or its alias with a column list.
_NOT_CALL_AFTER = frozenset(
    {
        TokenType.ALIAS,
        TokenType.DCOLON,
        TokenType.DOT,
        TokenType.INTO,
        TokenType.TABLE,
        TokenType.FROM,
        TokenType.JOIN,
        TokenType.VIEW,
        TokenType.UPDATE,
        TokenType.USING,
        TokenType.R_PAREN,
        TokenType.VAR,
        TokenType.IDENTIFIER,
        TokenType.STRING,
        TokenType.NUMBER,
    }
)
# Keywords that separate the arguments of TRIM(BOTH 'x' FROM s), POSITION(a IN b),
# SUBSTRING(s FROM 1 FOR 2), OVERLAY(s PLACING t FROM 1): such a call is not counted.
_ARGUMENT_KEYWORDS = frozenset({"FROM", "FOR", "IN", "PLACING"})
# Tokens that open something else than an argument list: a subquery, a FILTER or window.
_NOT_ARGUMENTS = frozenset(
    {TokenType.SELECT, TokenType.WITH, TokenType.WHERE, TokenType.ORDER_BY, TokenType.PARTITION_BY}
)


def _argument_count(tokens: list[Token], open_index: int) -> int | None:
    """How many arguments the parenthesis at ``open_index`` holds; None when it holds
    something else, or does not close."""
    depth = 0
    commas = 0
    for position in range(open_index, len(tokens)):
        kind = tokens[position].token_type
        if position == open_index + 1 and kind in _NOT_ARGUMENTS:
            return None
        if kind == TokenType.L_PAREN:
            depth += 1
        elif kind == TokenType.R_PAREN:
            depth -= 1
            if depth == 0:
                empty = position == open_index + 1
                return 0 if empty else commas + 1
        elif kind == TokenType.COMMA and depth == 1:
            commas += 1
        elif (
            depth == 1
            and kind != TokenType.STRING
            and tokens[position].text.upper() in _ARGUMENT_KEYWORDS
        ):
            return None
    return None


def _accepts(accepted: str, count: int) -> bool:
    """Whether ``accepted`` (SPARK_ARITIES' pattern for 0 to 6 arguments) takes ``count``;
    beyond 6 the pattern of 5 and 6 repeats."""
    if count < len(accepted):
        return accepted[count] == "1"
    last = len(accepted) - 1
    return accepted[last if (count - last) % 2 == 0 else last - 1] == "1"


def parse_error(sql: str, failure: ParseError) -> AnalysisException:
    """Spark's error for text sqlglot could not parse: a call with the wrong number of
    arguments, else a syntax error at the offending token."""
    first = failure.errors[0] if failure.errors else {}
    description = str(first.get("description", ""))
    tokens = _tokens(sql)
    token = _token_at(tokens, int(first.get("line") or 0), int(first.get("col") or 0))
    if token is not None and _is_argument_count_error(description):
        wrong = _wrong_number_of_arguments(sql, tokens, token)
        if wrong is not None:
            return wrong
    if token is None:
        return syntax_error(sql, None)
    at_end = token is tokens[-1]
    if at_end and (description.startswith("Expecting") or not token.text[:1].isalnum()):
        return syntax_error(sql, None)
    return syntax_error(sql, token.start)


def extra_statement_error(sql: str) -> ParseException:
    """Spark's error for text holding more than one statement: at the second one."""
    tokens = _tokens(sql)
    for before, token in pairwise(tokens):
        if before.token_type == TokenType.SEMICOLON and token.token_type != TokenType.SEMICOLON:
            return syntax_error(sql, token.start, f": extra input '{token.text}'")
    return syntax_error(sql, None)


def token_error(sql: str, failure: TokenError) -> ParseException:
    """Spark's error for text that does not even split into tokens: an unterminated quote
    (at that quote) or comment."""
    quote = _unterminated_quote(sql)
    return syntax_error(sql, quote)


def statement_words(sql: str, limit: int = 2) -> str:
    """The first ``limit`` words of the statement, upper-cased: ``SHOW COLUMNS``."""
    return " ".join(word.text.upper() for word in _leading_words(sql, limit))


def first_word(sql: str) -> _Word | None:
    """The first word or symbol of ``sql`` after blanks and comments."""
    words = _leading_words(sql, 1)
    return words[0] if words else None


# ---- helpers ----


def _leading_words(sql: str, limit: int) -> list[_Word]:
    words: list[_Word] = []
    position = 0
    while len(words) < limit:
        match = _WORD_OR_SYMBOL.match(sql, position)
        if match is None or match.group(1) is None:
            break
        words.append(_Word(match.group(1), match.start(1)))
        position = match.end()
    return words


def _word_at(sql: str, offset: int) -> _Word | None:
    match = _WORD_OR_SYMBOL.match(sql, offset)
    if match is None or match.group(1) is None:
        return None
    return _Word(match.group(1), match.start(1))


def _line_and_pos(sql: str, offset: int) -> tuple[int, int]:
    """Spark's 1-based line and 0-based position in that line of character ``offset``."""
    line = sql.count("\n", 0, offset) + 1
    return line, offset - (sql.rfind("\n", 0, offset) + 1)


def _excerpt(sql: str, line: int, pos: int) -> str:
    """The statement's lines, with Spark's ``---^^^`` marker under position ``pos`` of
    line ``line``."""
    lines = sql.split("\n")
    marked = [*lines[:line], "-" * pos + "^^^", *lines[line:]]
    return "\n".join(marked) + "\n"


def _tokens(sql: str) -> list[Token]:
    try:
        return Spark().tokenize(sql)
    except TokenError:
        return []


def _token_at(tokens: list[Token], line: int, col: int) -> Token | None:
    """The token sqlglot's error points at (its line and 1-based last column)."""
    for token in tokens:
        if token.line == line and token.col == col:
            return token
    return None


def _is_argument_count_error(description: str) -> bool:
    if _ARGUMENT_COUNT.search(description):
        return True
    missing = _MISSING_ARGUMENT.search(description)
    if missing is None:
        return False
    node = getattr(exp, missing["node"], None)
    return isinstance(node, type) and issubclass(node, exp.Func)


def _wrong_number_of_arguments(
    sql: str, tokens: list[Token], at: Token
) -> AnalysisException | None:
    """Spark's WRONG_NUM_ARGS for the call whose arguments sqlglot found too many or too
    few: the call is the innermost one open at (or closed by) token ``at``."""
    index = tokens.index(at)
    if at.token_type != TokenType.R_PAREN:
        index -= 1
    depth = 0
    arguments = 0
    seen_argument = False
    for position in range(index, 0, -1):
        kind = tokens[position].token_type
        if kind == TokenType.R_PAREN and position != index:
            depth += 1
        elif kind == TokenType.L_PAREN:
            if depth == 0:
                name = tokens[position - 1]
                count = arguments + 1 if seen_argument else 0
                line, pos = _line_and_pos(sql, name.start)
                return AnalysisException(
                    message=f"[WRONG_NUM_ARGS.WITHOUT_SUGGESTION] The `{name.text}` requires "
                    f"another number of parameters but the actual number is {count}. Please, "
                    f"refer to '{_FUNCTIONS_REFERENCE}' for a fix.; line {line} pos {pos}"
                )
            depth -= 1
        elif depth == 0 and kind == TokenType.COMMA:
            arguments += 1
        elif kind != TokenType.R_PAREN:
            seen_argument = True
    return None


def _unterminated_quote(sql: str) -> int | None:
    for match in _QUOTED_OR_QUOTE.finditer(sql):
        if match.group(1) is not None:
            return match.start(1)
    return None
