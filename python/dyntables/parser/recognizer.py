"""The cheap check that decides whether a statement is ours or Spark's.

A statement is ours when its leading keywords (after comments and whitespace) are one of
the dynamic-table or materialized-view forms; it then goes to the ANTLR parser and either
parses or raises a ``DynamicTableSyntaxError``. Everything else is ordinary SQL and never
touches ANTLR, so pass-through statements cost a few microseconds.
"""

from __future__ import annotations

import re

from dyntables.parser.splitter import leading_tokens

# Statements that are ours all start with one of these words.
_FIRST_WORDS = frozenset(
    {"CREATE", "ALTER", "DROP", "SHOW", "DESCRIBE", "DESC", "EXPLAIN", "REFRESH", "CALL"}
)
_LEADING_TOKEN = re.compile(r"[ \t\n\r\f\v]+|--[^\r\n]*|/\*|[A-Za-z_][A-Za-z0-9_]*|\.")
_MAX_LEADING_WORDS = 8

# Matched against the leading words, upper-cased and joined by single spaces. CREATE
# allows any OR-word and one modifier word (TRANSIENT, TEMPORARY ...), and DYNAMIC ICEBERG
# TABLE, so that unsupported variants (CREATE OR REFRESH MATERIALIZED VIEW, CREATE
# TEMPORARY DYNAMIC TABLE) get our clear error rather than Spark's. A name "dynamic"
# never matches: in Spark it is followed by a column list, AS or a clause, not TABLE.
_CREATE_DYNAMIC = r"CREATE(?: OR \w+)?(?: \w+)? DYNAMIC(?: ICEBERG)? TABLE\b"
_OUR_FORMS = re.compile(
    "|".join(
        (
            rf"(?:EXPLAIN )?{_CREATE_DYNAMIC}",
            r"CREATE(?: OR \w+)?(?: \w+)? MATERIALIZED VIEW\b",
            r"(?:ALTER|DROP|DESCRIBE|DESC|EXPLAIN) DYNAMIC TABLE\b",
            r"SHOW(?: \w+)? DYNAMIC TABLES\b",
            r"(?:DROP|REFRESH) MATERIALIZED VIEW\b",
            r"CALL BQ \. REFRESH_MATERIALIZED_VIEW\b",
        )
    )
)


def is_dynamic_table_statement(sql: str) -> bool:
    """Whether ``sql`` (one statement) begins with one of our forms.

    >>> is_dynamic_table_statement("/* hi */ create or replace dynamic table t ...")
    True
    >>> is_dynamic_table_statement("CREATE TABLE dynamic (id INT)")
    False
    """
    words = leading_words(sql)
    return bool(words) and words[0] in _FIRST_WORDS and bool(_OUR_FORMS.match(" ".join(words)))


def leading_words(sql: str, limit: int = _MAX_LEADING_WORDS) -> list[str]:
    """Up to ``limit`` leading words (and dots) of ``sql``, upper-cased, skipping comments.

    Stops at the first token that is neither a word nor a dot (a quote, a parenthesis).
    """
    words: list[str] = []
    for text, _ in leading_tokens(sql, _LEADING_TOKEN):
        if len(words) >= limit:
            break
        words.append(text.upper())
        if len(words) == 1 and words[0] not in _FIRST_WORDS:
            break  # the common case: ordinary SQL, decided by its first word
    return words
