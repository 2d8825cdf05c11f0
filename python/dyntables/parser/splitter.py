"""Split a script into statements on top-level semicolons.

A ``;`` ends a statement only outside quotes (``'…'``, ``"…"``, backticks, with
backslash-escaped and doubled quotes), outside ``--`` and (nested) ``/* */`` comments,
and outside parentheses, so that ``REFRESH USING ( … ; … )`` stays one statement and the
parser can report the stray ``;`` precisely. Each statement runs from the first non-blank
character after the previous ``;`` (leading comments kept) up to, not including, the next
``;``; pieces holding only comments and whitespace are dropped (an unterminated comment
is kept, for the engine to report).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

# Everything that can hide or end a semicolon, each matched whole so that one finditer
# pass does the work in C: quoted strings and names (an unterminated one runs to the end
# of the text, even when it ends in a lone backslash), comments, parentheses, semicolons.
# Only a comment with a nested "/*" inside, or an unterminated one, leaves the fast path.
_TOKEN = re.compile(
    r"""
      '[^'\\]*(?:\\.[^'\\]*)*(?:'|\\?\Z)
    | "[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)
    | `[^`]*(?:`|\Z)
    | --[^\r\n]*
    | /\*(?:[^*/]|\*(?!/)|/(?!\*))*\*/
    | /\*
    | [();]
    """,
    re.VERBOSE | re.DOTALL,
)
# Blanks are ASCII ones, as for Spark's lexer.
_BLANKS = " \t\n\r\f\v"
_COMMENT_DELIMITER = re.compile(r"/\*|\*/")


@dataclass(frozen=True)
class Piece:
    """One statement's character range ``[start, stop)`` in the script."""

    start: int
    stop: int


def split_statements(text: str) -> list[Piece]:
    """The statements of ``text``, as character ranges.

    >>> script = "SELECT ';' ; -- note\\n/* only a comment */ ; SELECT (1;2)"
    >>> [script[p.start:p.stop] for p in split_statements(script)]
    ["SELECT ';' ", 'SELECT (1;2)']
    """
    if ";" not in text:  # the common case, one statement: no need to scan it
        code_start = len(text) - len(text.lstrip(_BLANKS))
        if code_start < len(text) and not text.startswith(("--", "/*"), code_start):
            return [Piece(code_start, len(text))]
    pieces: list[Piece] = []
    start: int | None = None  # first non-blank character of the current statement
    holds_code = False
    depth = 0
    position = 0  # where the text not yet looked at begins
    while position < len(text):
        resume_at = None
        for match in _TOKEN.finditer(text, position):
            token_start = match.start()
            if not holds_code or start is None:
                # Plain code between two tokens makes the piece hold code.
                gap = text[position:token_start]
                if gap.strip(_BLANKS):
                    holds_code = True
                    if start is None:
                        start = position + len(gap) - len(gap.lstrip(_BLANKS))
            if start is None:
                start = token_start
            position = match.end()
            token = match.group()
            if token == ";":
                if depth == 0:
                    if holds_code:
                        pieces.append(Piece(start, token_start))
                    start, holds_code = None, False
            elif token.startswith(("--", "/*")):
                if token == "/*":  # nested or unterminated: find its end the slow way
                    resume_at = skip_bracketed_comment(text, position)
                    if resume_at is None:  # unterminated: keep it, for the engine to report
                        holds_code, resume_at = True, len(text)
                    break
            else:
                holds_code = True
                if token == "(":
                    depth += 1
                elif token == ")":
                    depth = max(0, depth - 1)  # a stray ")" is the parser's business
        else:  # no more tokens: the rest is plain code or blanks
            if text[position:].strip(_BLANKS):
                holds_code = True
                if start is None:
                    start = len(text) - len(text[position:].lstrip(_BLANKS))
            position = len(text)
        if resume_at is not None:
            position = resume_at
    if start is not None and holds_code:
        pieces.append(Piece(start, len(text)))
    return pieces


def leading_tokens(text: str, token: re.Pattern[str]) -> Iterator[tuple[str, int]]:
    """The tokens ``token`` matches one after another from the start of ``text``, with their
    offsets, skipping blanks and comments (``token`` matches those too); ends at the first
    text it does not match."""
    position = 0
    while (match := token.match(text, position)) is not None:
        found = match.group()
        position = match.end()
        if found == "/*":
            position = skip_bracketed_comment(text, position) or len(text)
        elif not found[0].isspace() and not found.startswith("--"):
            yield found, match.start()


def skip_bracketed_comment(text: str, position: int) -> int | None:
    """The position after the ``*/`` closing a comment whose ``/*`` ends at ``position``,
    or ``None`` when the comment is never closed. Comments nest, as in Spark.
    """
    depth = 1
    while depth and (delimiter := _COMMENT_DELIMITER.search(text, position)) is not None:
        depth += 1 if delimiter.group() == "/*" else -1
        position = delimiter.end()
    return position if depth == 0 else None
