"""The one sqlglot dialect that reads all SQL embedded in dynamic-table DDL.

The defining query after ``AS``, ``FROZEN WHERE`` predicates, ``REFRESH USING`` bodies and
time points are written in Spark 3.5 SQL plus the Snowflake forms the reference documents
use. sqlglot's Spark dialect already reads almost all of them: ``'…'::TIMESTAMP_NTZ``,
``date_trunc(minute, ts)`` (the bare word becomes the unit), ``* EXCLUDE (…)`` (the star's
except list), ``QUALIFY``, ``COUNT_IF``, ``t CHANGES(INFORMATION => …)`` (``exp.Changes`` on
the table), ``MERGE INTO SELF … USING …`` and ``INSERT INTO SELF SELECT …``. The gaps are
``$`` inside identifiers (``METADATA$ACTION``), which `DynamicTablesDialect` fills, and
``CHANGES()`` with empty parentheses (the DEFAULT information), which `parse_one` fills.

sqlglot may be installed compiled (``sqlglot[c]``): Python code cannot subclass its
compiled parser and generator, so the dialect customizes only what the dialect class and
the (Python) tokenizer offer, and `parse_one` works on the tokens.

Spark 3.5 itself has no ``* EXCEPT``, no ``CHANGES`` clause and no ``$`` in unquoted names;
`to_spark_sql` quotes such names, and rewriting the other two is the planner's job.

>>> tree = parse_one("SELECT * EXCLUDE (METADATA$ACTION) FROM t WHERE NOT METADATA$ISUPDATE")
>>> to_spark_sql(tree)
'SELECT * EXCEPT (`METADATA$ACTION`) FROM t WHERE NOT `METADATA$ISUPDATE`'
"""

from __future__ import annotations

import re
from typing import ClassVar

from sqlglot import exp
from sqlglot.dialects.spark import Spark
from sqlglot.errors import ParseError, TokenError
from sqlglot.parsers.spark import SparkParser
from sqlglot.tokenizer_core import Token, TokenType

from dyntables.errors import syntax_error_at

__all__ = ["DynamicTablesDialect", "comparison_sql", "parse_one", "same_expression", "to_spark_sql"]


class DynamicTablesDialect(Spark):
    """Spark 3.5 SQL that also reads Snowflake's ``$`` in identifiers.

    Defining the class registers it with sqlglot under ``"dynamictablesdialect"``, sqlglot's
    own extension mechanism; nothing in sqlglot's Spark dialect changes.

    >>> import sqlglot
    >>> sqlglot.parse_one("NOT METADATA$ISUPDATE", read=DynamicTablesDialect).this.name
    'METADATA$ISUPDATE'
    """

    class Tokenizer(Spark.Tokenizer):
        # As in Snowflake: "$" inside a word continues it (METADATA$ACTION is one name). A
        # leading "$" still starts a Hive-style ${var} parameter, so Spark SQL, whose
        # unquoted names never contain "$", reads exactly as before.
        VAR_SINGLE_TOKENS: ClassVar[set[str]] = {"$"}

    def can_quote(self, identifier: exp.Identifier, identify: str | bool = "safe") -> bool:
        # Spark's lexer does not accept "$" in an unquoted name, nor sqlglot's Spark
        # parser (the embedded engine's) some words Spark reads as names (a table named
        # `qualify`); backticks make either legal.
        name = identifier.name
        return "$" in name or name.upper() in _KEYWORDS or super().can_quote(identifier, identify)


# The keywords sqlglot's Spark parser does not read as a name where one is expected.
_KEYWORDS = frozenset(
    word
    for word, token in Spark.Tokenizer.KEYWORDS.items()
    if word.isidentifier() and token not in SparkParser.ID_VAR_TOKENS
)


_DIALECT = DynamicTablesDialect()

# sqlglot names expression classes as "<class 'sqlglot.expressions.query.Where'>" in its
# messages; users know the clause, not the module.
_CLASS_REPR = re.compile(r"<class '(?:\w+\.)*(\w+)'>")

# An unterminated quote surfaces as a TokenError caused by "Missing ' from <line>:<offset>",
# with the 0-based offset of the opening quote.
_MISSING_DELIMITER = re.compile(r"^Missing (.+) from \d+:(\d+)$")


def parse_one(sql: str, *, statement: str | None = None, offset: int = 0) -> exp.Expr:
    """Parse exactly one SQL statement (or expression) written in our dialect.

    ``sql`` is often a slice of a larger dynamic-table ``statement`` starting at character
    ``offset``; give both and a `DynamicTableSyntaxError` points into ``statement``
    instead of into ``sql``. The sqlglot error is kept as ``__cause__``.

    >>> parse_one("date_trunc(minute, ts)").args["unit"]
    Var(this=MINUTE)
    >>> from dyntables.errors import DynamicTableSyntaxError
    >>> try:
    ...     parse_one("SELECT a FROM t WHERE")
    ... except DynamicTableSyntaxError as err:
    ...     print(err)
    Required keyword: 'this' missing for Where (line 1, column 17)
      SELECT a FROM t WHERE
                      ^
    """
    text = sql if statement is None else statement
    try:
        tokens = _with_default_information(_DIALECT.tokenize(sql))
        # Context as long as the text makes start_context the whole text before the culprit,
        # so its length is the culprit's offset.
        trees = _DIALECT.parser(error_message_context=len(sql)).parse(tokens, sql)
    except ParseError as err:
        if not err.errors:
            raise syntax_error_at(str(err), text, offset) from err
        first = err.errors[0]
        reason = _CLASS_REPR.sub(r"\1", first["description"])
        raise syntax_error_at(reason, text, offset + len(first["start_context"])) from err
    except TokenError as err:
        # The tokenizer's own error is the cause (the context, where sqlglot is compiled).
        inner = err.__cause__ or err.__context__
        missing = _MISSING_DELIMITER.match(str(inner))
        if missing:
            reason, culprit = f"missing closing {missing.group(1)}", int(missing.group(2))
        else:
            # E.g. an unterminated /* comment: sqlglot only knows it ran off the end.
            reason, culprit = f"cannot tokenize the SQL ({inner or err})", len(sql)
        raise syntax_error_at(reason, text, offset + culprit) from err

    found_trees = [tree for tree in trees if tree is not None]
    if not found_trees:
        raise syntax_error_at("expected a SQL statement", text, offset + len(sql))
    if len(found_trees) > 1:
        second = _second_statement_start(tokens)
        raise syntax_error_at("expected one SQL statement, found more", text, offset + second)
    return found_trees[0]


def _with_default_information(tokens: list[Token]) -> list[Token]:
    """``t CHANGES()`` means ``CHANGES(INFORMATION => DEFAULT)`` (seed 003); sqlglot's
    Spark parser reads the second form, so the first gets its words, placed where its
    closing parenthesis is."""
    result: list[Token] = []
    for index, token in enumerate(tokens):
        result.append(token)
        empty_changes = (
            token.token_type == TokenType.L_PAREN
            and 0 < index < len(tokens) - 1
            and tokens[index - 1].text.upper() == "CHANGES"
            and tokens[index + 1].token_type == TokenType.R_PAREN
        )
        if empty_changes:
            closing = tokens[index + 1]
            result.extend(
                Token(kind, word, closing.line, closing.col, closing.start, closing.start)
                for kind, word in _DEFAULT_INFORMATION
            )
    return result


_DEFAULT_INFORMATION = [(t.token_type, t.text) for t in _DIALECT.tokenize("INFORMATION => DEFAULT")]


def _second_statement_start(tokens: list[Token]) -> int:
    """Offset of the first token of the second statement (called only when there is one)."""
    in_first = after_first = False
    for token in tokens:
        if token.token_type == TokenType.SEMICOLON:
            after_first = in_first
        elif after_first:
            return token.start
        else:
            in_first = True
    return tokens[-1].start


def to_spark_sql(expression: exp.Expr, *, pretty: bool = False) -> str:
    """Render ``expression`` as Spark SQL, as sqlglot's Spark generator does, for Spark 3.5.

    Differences from plain ``expression.sql("spark")``: names containing ``$`` are quoted,
    and so are the few words sqlglot's Spark parser takes for keywords where Spark reads a
    name (``qualify``, ``inner``, ``values``); ``percentile_cont``/``percentile_disc … WITHIN
    GROUP`` keep their names (sqlglot writes ``PERCENTILE_APPROX``).
    Snowflake forms Spark 3.5 lacks keep sqlglot's Spark spelling (``QUALIFY`` becomes a
    subquery, ``EXCLUDE`` becomes ``EXCEPT``, ``CHANGES (…)`` stays).

    >>> to_spark_sql(parse_one("'2025-04-01 12:00:00'::TIMESTAMP_NTZ"))
    "CAST('2025-04-01 12:00:00' AS TIMESTAMP_NTZ)"
    >>> to_spark_sql(parse_one("SELECT date_trunc(minute, ts) ts_min FROM t"))
    "SELECT DATE_TRUNC('MINUTE', ts) AS ts_min FROM t"
    """
    return _DIALECT.generate(_with_ordered_percentiles(expression), pretty=pretty)


# sqlglot's Spark generator writes ``percentile_cont(p) WITHIN GROUP (ORDER BY x)`` as
# ``PERCENTILE_APPROX(x, p)``: another function (approximate) with the order dropped.
_ORDERED_PERCENTILES = {
    exp.PercentileCont: "PERCENTILE_CONT",
    exp.PercentileDisc: "PERCENTILE_DISC",
}


def _with_ordered_percentiles(expression: exp.Expr) -> exp.Expr:
    """``expression`` with each ordered-set percentile written by its own name (a copy, when
    it has one), as Spark 3.5 reads it back."""
    calls = [
        within
        for within in expression.find_all(exp.WithinGroup)
        if type(within.this) in _ORDERED_PERCENTILES
    ]
    if not calls:
        return expression
    copied = expression.copy()
    for within in copied.find_all(exp.WithinGroup):
        function = within.this
        name = _ORDERED_PERCENTILES.get(type(function))
        if name is not None:
            within.set("this", exp.Anonymous(this=name, expressions=[function.this]))
    return copied


def comparison_sql(expression: exp.Expr) -> str:
    """The Spark SQL of ``expression`` with every name in lower case: two expressions Spark
    reads as one (it resolves names in any case: ``GroupKey`` and ``groupkey``) have the
    same text. For comparing expressions, never for running them.

    >>> comparison_sql(parse_one("a.GroupKey + 'X'"))
    "a.groupkey + 'X'"
    """
    folded = expression.copy()
    for identifier in folded.find_all(exp.Identifier):
        identifier.set("this", identifier.this.lower())
    return to_spark_sql(folded)


def same_expression(first: exp.Expr | None, second: exp.Expr | None) -> bool:
    """Whether Spark reads ``first`` and ``second`` as one expression (see
    :func:`comparison_sql`); None is the same as None only."""
    if first is None or second is None:
        return first is second
    return first == second or comparison_sql(first) == comparison_sql(second)
