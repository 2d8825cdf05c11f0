"""Rewriting the columns of an expression."""

from __future__ import annotations

from sqlglot import exp

# The prefix of the names a refresh's change queries give their own columns, relations and
# CTEs (a sign, a net count, touched keys, …): a defining query or a source column of such
# a name would be taken for one of them, so CREATE refuses it.
RESERVED_PREFIX = "__dt_"


def qualified(predicate: exp.Expr, table: str) -> exp.Expr:
    """A copy of ``predicate`` with every column read from ``table`` (an alias): a
    predicate written over one table's own columns, used where other inputs are in scope
    too (a MERGE's ON clause, a join), so that its columns keep meaning that table's.

    >>> from dyntables.sql.dialect import parse_one, to_spark_sql
    >>> to_spark_sql(qualified(parse_one("day < '2025-01-01' AND NOT archived"), "t"))
    "t.day < '2025-01-01' AND NOT t.archived"
    """
    copy = predicate.copy()
    for column in copy.find_all(exp.Column):
        column.set("table", exp.to_identifier(table))
    return copy


__all__ = ["RESERVED_PREFIX", "qualified"]
