"""Parses kept: a statement that reads a table's versions is not parsed again.

Parsing a long statement costs milliseconds of Python (a dynamic table's incremental
refresh statement, 2-3 KB of SQL: about 2.5 ms; copying a kept tree: under 1 ms). A
refresh runs the same statements every time but for the versions they read: the numbers
in ``TABLE_CHANGES('t', start, end)`` and ``VERSION AS OF n``. So a statement's tree is
kept under its text with those numbers masked, and a statement differing only there takes
a copy of the kept tree with its own numbers set. A statement without such a number is
parsed every time (keeping it would copy its tree, a third of a parse, for texts such as a
one-row INSERT of a fresh temporary view that never come again).

A text is kept that way only when each masked number is, in its tree, the literal argument
of ``TABLE_CHANGES`` or of ``VERSION AS OF`` found at that place of the text (a number
inside a string or a comment, or one the parser reads otherwise, keeps the text from
being kept). Two texts with the same key differ only in the digits of those numbers, of
the same length each (so every node's recorded position in the text holds for both), and
so parse alike but for those literals.

>>> kept = Parses(capacity=2)
>>> first = kept.parse("SELECT * FROM TABLE_CHANGES('t', 5, 6)")
>>> kept.parse("SELECT * FROM TABLE_CHANGES('t', 7, 8)").sql("spark")
"SELECT * FROM TABLE_CHANGES('t', 7, 8)"
>>> kept.hits
1
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass

from sqlglot import exp

from sparkshim.translate import parse_spark

__all__ = ["Parses"]

# The version numbers of a statement: TABLE_CHANGES's start and end, VERSION AS OF's.
_VERSION_NUMBERS = re.compile(
    r"\bTABLE_CHANGES\s*\(\s*'[^'\\]*'\s*,\s*(\d+)(?:\s*,\s*(\d+))?\s*\)"
    r"|\bVERSION\s+AS\s+OF\s+(\d+)",
    re.IGNORECASE,
)
_GROUPS = (1, 2, 3)

Span = tuple[int, int]  # a number's start and end in a statement's text


@dataclass(frozen=True)
class _Kept:
    tree: exp.Expr
    # The version literals' positions in the text (each node's ``meta["start"]``), in the
    # order of the spans masked.
    starts: tuple[int, ...]


class Parses:
    """The trees of the statements parsed lately (at most ``capacity``, the least recently
    used dropped first), safe to share between threads."""

    def __init__(self, capacity: int = 256) -> None:
        self._capacity = capacity
        self._kept: OrderedDict[tuple[str, tuple[Span, ...]], _Kept] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0

    def parse(self, sql: str) -> exp.Expr:
        """``parse_spark(sql)``: a tree of the caller's own."""
        spans = tuple(
            match.span(group)
            for match in _VERSION_NUMBERS.finditer(sql)
            for group in _GROUPS
            if match.start(group) >= 0
        )
        if not spans:  # nothing masked: no other text shares it (no copy kept)
            return parse_spark(sql)
        key = (_masked(sql, spans), spans)
        with self._lock:
            kept = self._kept.get(key)
            if kept is not None:
                self._kept.move_to_end(key)
                self.hits += 1
        if kept is not None:
            return _with_numbers(kept, [sql[start:end] for start, end in spans])
        tree = parse_spark(sql)
        starts = _version_literals(tree, sql, spans)
        if starts is not None:
            with self._lock:
                self._kept[key] = _Kept(_without_positions(tree.copy()), starts)
                while len(self._kept) > self._capacity:
                    self._kept.popitem(last=False)
        return tree

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()


def _masked(sql: str, spans: tuple[Span, ...]) -> str:
    """``sql`` with the digits of each span replaced by as many zeros."""
    parts, at = [], 0
    for start, end in spans:
        parts.append(sql[at:start])
        parts.append("0" * (end - start))
        at = end
    parts.append(sql[at:])
    return "".join(parts)


def _version_literals(tree: exp.Expr, sql: str, spans: tuple[Span, ...]) -> tuple[int, ...] | None:
    """The start of each span, where each is a version literal of ``tree`` (see the
    module's docstring) holding the span's digits; else None (the text is not kept)."""
    at_start = {_position(literal, "start"): literal for literal in _version_literals_of(tree)}
    for start, end in spans:
        literal = at_start.get(start)
        if literal is None or _position(literal, "end") != end - 1:
            return None
        if literal.this != sql[start:end]:
            return None
    return tuple(start for start, _ in spans)


def _version_literals_of(tree: exp.Expr) -> list[exp.Literal]:
    return [literal for literal in tree.find_all(exp.Literal) if _is_version(literal)]


def _position(node: exp.Expr, key: str) -> int | None:
    """Where the parser found ``node`` in the text (``meta``'s ``start`` or ``end``), read
    without giving every node an empty ``meta``."""
    meta = node._meta
    return meta.get(key) if meta else None


def _is_version(literal: exp.Literal) -> bool:
    """Whether ``literal`` is a number read as a version: an argument of TABLE_CHANGES after
    its first, or what VERSION AS OF names."""
    parent = literal.parent
    if literal.is_string:
        return False
    if isinstance(parent, exp.Version):
        return literal.arg_key == "expression"
    return (
        isinstance(parent, exp.Anonymous)
        and parent.name.upper() == "TABLE_CHANGES"
        and literal.arg_key == "expressions"
        and (literal.index or 0) > 0
    )


# What the parser records of a node's place in the text (``meta``): read only to find the
# version literals, and costly to copy (a kept tree's copies take four times as long).
_POSITION_KEYS = ("line", "col", "start", "end")


def _without_positions(tree: exp.Expr) -> exp.Expr:
    """``tree`` without the parser's positions but the version literals' starts (which
    ``_with_numbers`` finds them by); other ``meta`` entries (the translation's) kept."""
    for node in tree.walk():
        meta = node._meta  # read without creating an empty dict on every node
        if not meta:
            continue
        version = isinstance(node, exp.Literal) and _is_version(node)
        for key in _POSITION_KEYS:
            if not (version and key == "start"):
                meta.pop(key, None)
        if not meta:
            node._meta = None
    return tree


def _with_numbers(kept: _Kept, numbers: list[str]) -> exp.Expr:
    """A copy of the kept tree with its version literals set to ``numbers``, in order."""
    tree = kept.tree.copy()
    wanted = dict(zip(kept.starts, numbers, strict=True))
    for literal in _version_literals_of(tree):
        number = wanted.get(_position(literal, "start") or -1)
        if number is not None:
            literal.set("this", number)
    return tree
