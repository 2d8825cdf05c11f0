"""Misspelt keywords of our statements, caught before the statement reaches Spark.

A statement that is not ours goes to Spark unchanged, so ``CREATE DYNAMC TABLE t ...``
would get Spark's (or the embedded engine's) error about a statement it never heard of.
Here a statement whose leading words are one of our statement heads with exactly one
keyword misspelt (one or two letters off, as ``DYNAMC``, ``TABEL``, ``CREAT``) is
reported as a syntax error at that word, with the keyword it most likely meant. A
statement Spark could run is never caught: every other keyword of the head must be
exact, a word that is itself a Spark statement's first keyword is never a misspelling,
and a head must be followed by a name (except ``SHOW DYNAMIC TABLES``), so that
``DESC dynamic tabl`` (column ``tabl`` of table ``dynamic``) still goes to Spark.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dyntables.parser.splitter import leading_tokens

# Our statement heads, one slot a position: the keywords allowed there, and whether the
# slot may be absent. The grammar (grammar/DynamicTablesParser.g4) is the reference.
_Slot = tuple[frozenset[str], bool]


def _slot(*words: str, optional: bool = False) -> _Slot:
    return frozenset(words), optional


_OR_WORD = _slot("OR", optional=True)
_HEADS: tuple[tuple[_Slot, ...], ...] = (
    (
        _slot("EXPLAIN", optional=True),
        _slot("CREATE"),
        _OR_WORD,
        _slot("REPLACE", "ALTER", optional=True),
        _slot("TRANSIENT", optional=True),
        _slot("DYNAMIC"),
        _slot("TABLE"),
    ),
    (
        _slot("CREATE"),
        _OR_WORD,
        _slot("REPLACE", optional=True),
        _slot("MATERIALIZED"),
        _slot("VIEW"),
    ),
    (_slot("ALTER", "DROP", "DESCRIBE", "DESC", "EXPLAIN"), _slot("DYNAMIC"), _slot("TABLE")),
    (_slot("SHOW"), _slot("FULL", optional=True), _slot("DYNAMIC"), _slot("TABLES")),
    (_slot("DROP", "REFRESH"), _slot("MATERIALIZED"), _slot("VIEW")),
)
# The last keyword of the one head that makes a whole statement (SHOW DYNAMIC TABLES).
_COMPLETE_HEAD_END = "TABLES"

# First keywords of Spark statements: such a word is meant, never a misspelling.
_SPARK_FIRST_WORDS = frozenset(
    """ADD ALTER ANALYZE CACHE CLEAR COMMENT CREATE DELETE DESC DESCRIBE DROP EXPLAIN FROM
    INSERT LIST LOAD MERGE MSCK OPTIMIZE REFRESH REPAIR REPLACE RESET RESTORE SELECT SET
    SHOW TABLE TRUNCATE UNCACHE UPDATE USE VACUUM VALUES WITH""".split()  # noqa: SIM905
)
_FIRST_KEYWORDS = frozenset(word for head in _HEADS for word in head[0][0] | head[1][0])

_LEADING_TOKEN = re.compile(r"[ \t\n\r\f\v]+|--[^\r\n]*|/\*|[A-Za-z_][A-Za-z0-9_]*|\S")
_MAX_WORDS = 8
_NAME_STARTS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_`")


@dataclass(frozen=True)
class Misspelling:
    """A misspelt keyword: the word as written, where it starts in the statement, and the
    keyword it most likely meant."""

    word: str
    offset: int
    keyword: str


def find_misspelt_keyword(sql: str) -> Misspelling | None:
    """The misspelt keyword of a statement that is one of ours but for it, else None.

    >>> find_misspelt_keyword("CREATE DYNAMC TABLE t TARGET_LAG = '1 hour' AS SELECT 1")
    Misspelling(word='DYNAMC', offset=7, keyword='DYNAMIC')
    >>> find_misspelt_keyword("CREATE TABLE dynamic_x (id INT)") is None
    True
    """
    first = _words(sql, 1)
    if not first or not _may_start_ours(first[0][0].upper()):
        return None  # the common case, decided by the first word
    words = _words(sql, _MAX_WORDS)
    for head in _HEADS:
        found = _match(head, words, 0, None)
        if found is not None:
            return found
    return None


def _may_start_ours(word: str) -> bool:
    if word in _FIRST_KEYWORDS:
        return True
    if word in _SPARK_FIRST_WORDS:
        return False
    return any(_near(word, keyword) for keyword in _FIRST_KEYWORDS)


def _match(
    slots: tuple[_Slot, ...],
    words: list[tuple[str, int]],
    position: int,
    misspelling: Misspelling | None,
) -> Misspelling | None:
    """The one misspelling with which ``words[position:]`` begin with ``slots`` (followed
    by a name unless the head is complete), or None."""
    if not slots:
        followed = position < len(words) and words[position][0][0] in _NAME_STARTS
        return misspelling if followed else None
    (keywords, optional), rest = slots[0], slots[1:]
    if optional:
        skipped = _match(rest, words, position, misspelling)
        if skipped is not None:
            return skipped
    if position >= len(words):
        if misspelling is not None and not rest and _is_complete(keywords):
            return misspelling
        return None
    text, offset = words[position]
    word = text.upper()
    if word in keywords:
        if not rest and misspelling is not None and _is_complete(keywords):
            return misspelling
        return _match(rest, words, position + 1, misspelling)
    if misspelling is not None or (position == 0 and word in _SPARK_FIRST_WORDS):
        return None
    near = [keyword for keyword in sorted(keywords) if _near(word, keyword)]
    if not near:
        return None
    guess = Misspelling(text, offset, near[0])
    if not rest and _is_complete(keywords):
        return guess
    return _match(rest, words, position + 1, guess)


def _is_complete(last_keywords: frozenset[str]) -> bool:
    return _COMPLETE_HEAD_END in last_keywords


def _near(word: str, keyword: str) -> bool:
    """Whether ``word`` is ``keyword`` with a letter or two wrong, missing, extra or
    swapped (one for keywords of four letters or fewer)."""
    if word == keyword:
        return False
    allowed = 1 if len(keyword) <= 4 else 2
    return abs(len(word) - len(keyword)) <= allowed and _distance(word, keyword) <= allowed


def _distance(a: str, b: str) -> int:
    """The optimal string alignment distance: insertions, deletions, substitutions and
    swaps of two neighbouring letters."""
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, char_a in enumerate(a, 1):
        current = [i] + [0] * len(b)
        for j, char_b in enumerate(b, 1):
            cost = 0 if char_a == char_b else 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and char_a == b[j - 2] and a[i - 2] == char_b:
                current[j] = min(current[j], previous2[j - 2] + 1)
        previous2, previous = previous, current
    return previous[-1]


def _words(sql: str, limit: int) -> list[tuple[str, int]]:
    """Up to ``limit`` leading words (or other characters) of ``sql`` with their offsets,
    skipping blanks and comments."""
    words: list[tuple[str, int]] = []
    for word in leading_tokens(sql, _LEADING_TOKEN):
        if len(words) >= limit:
            break
        words.append(word)
    return words
