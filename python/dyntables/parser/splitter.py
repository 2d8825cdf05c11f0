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
from dataclasses import dataclass

# Where something interesting may start: a quote, a comment, a parenthesis, a
# semicolon, or any other non-blank character (which makes the piece hold code).
_NEXT_TOKEN = re.compile(r"""['"`();]|--|/\*|[^\s'"`();/-]+|[/-]""")
# The rest of a quoted string or name; an unterminated one (even ending in a lone
# backslash) runs to the end of the text.
_QUOTED_END = {
    "'": re.compile(r"(?:[^'\\]|\\.)*(?:'|\\?\Z)", re.DOTALL),
    '"': re.compile(r'(?:[^"\\]|\\.)*(?:"|\\?\Z)', re.DOTALL),
    "`": re.compile(r"[^`]*(?:`|\Z)"),
}
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
    pieces: list[Piece] = []
    start: int | None = None  # first non-blank character of the current statement
    holds_code = False
    depth = 0
    position = 0
    while (match := _NEXT_TOKEN.search(text, position)) is not None:
        token = match.group()
        if start is None:
            start = match.start()
        position = match.end()
        if token == ";" and depth == 0:
            if holds_code:
                pieces.append(Piece(start, match.start()))
            start, holds_code = None, False
            continue
        if token == "--":
            newline = text.find("\n", position)
            position = len(text) if newline < 0 else newline + 1
            continue
        if token == "/*":
            comment_end = skip_bracketed_comment(text, position)
            if comment_end is None:  # unterminated: keep it, so the engine reports it
                holds_code, position = True, len(text)
            else:
                position = comment_end
            continue
        holds_code = True
        if token in _QUOTED_END:
            quoted_end = _QUOTED_END[token].match(text, position)
            assert quoted_end is not None  # every pattern can match the empty string
            position = quoted_end.end()
        elif token == "(":
            depth += 1
        elif token == ")":
            depth = max(0, depth - 1)  # a stray ")" is the parser's business, not ours
    if start is not None and holds_code:
        pieces.append(Piece(start, len(text)))
    return pieces


def skip_bracketed_comment(text: str, position: int) -> int | None:
    """The position after the ``*/`` closing a comment whose ``/*`` ends at ``position``,
    or ``None`` when the comment is never closed. Comments nest, as in Spark.
    """
    depth = 1
    while depth and (delimiter := _COMMENT_DELIMITER.search(text, position)) is not None:
        depth += 1 if delimiter.group() == "/*" else -1
        position = delimiter.end()
    return position if depth == 0 else None
