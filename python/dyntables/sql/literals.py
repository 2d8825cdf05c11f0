"""Row values as Spark SQL literals, and predicates that match given row values.

An incremental refresh collects the few values a change touches (row values, group keys,
partition keys) and writes them back into SQL: as literals that reproduce the value exactly,
compared null-safely (``<=>``), so NULL keys are matched like any other value.
"""

from __future__ import annotations

import datetime
import decimal
import math
from typing import Any

from sqlglot import exp

# Types whose values collect into Python and write back as literals exactly.
SCALAR_TYPES = (
    "boolean",
    "tinyint",
    "smallint",
    "int",
    "bigint",
    "float",
    "double",
    "string",
    "date",
    "timestamp",
    "timestamp_ntz",
    "binary",
)


def is_scalar(type_sql: str) -> bool:
    return type_sql in SCALAR_TYPES or type_sql.startswith(("decimal", "varchar", "char"))


def collectable(column: str, type_sql: str) -> exp.Expr:
    """How to select a column so that its value can be written back as a literal exactly:
    date/time values as text in the session's time zone, binary as hex."""
    value = exp.column(column, quoted=True)
    if type_sql in ("date", "timestamp", "timestamp_ntz"):
        return exp.alias_(exp.cast(value, exp.DataType.build("STRING")), column, quoted=True)
    if type_sql == "binary":
        return exp.alias_(exp.func("hex", value), column, quoted=True)
    return value


def literal(value: Any, type_sql: str) -> exp.Expr:
    """A Spark literal for ``value`` (as ``collectable`` selected it) of type ``type_sql``."""
    data_type = exp.DataType.build(type_sql, dialect="spark")
    if value is None:
        return exp.cast(exp.Null(), data_type)
    if type_sql == "binary":
        return exp.func("unhex", exp.Literal.string(str(value)))
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, int) and type_sql in ("int", "bigint"):
        return exp.Literal.number(value)  # an integer literal widens as the column needs
    if isinstance(value, str) and type_sql == "string":
        return exp.Literal.string(value)
    if isinstance(value, float):
        text = (
            repr(value)
            if math.isfinite(value)
            else ("NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity"))
        )
        return exp.cast(exp.Literal.string(text), data_type)
    if isinstance(value, (int, decimal.Decimal)):
        return exp.cast(exp.Literal.string(str(value)), data_type)
    if isinstance(value, (datetime.date, datetime.datetime)):
        raise AssertionError("date/time values are collected as text")
    return exp.cast(exp.Literal.string(str(value)), data_type)


def typed_literal(value: Any, type_sql: str) -> exp.Expr:
    """``value``, a Python value the project holds itself (a timestamp, a count, a name),
    as a literal of type ``type_sql``: for rows it writes (system tables, the scheduler's
    lease, the table functions' rows).

    Unlike `literal`, the value is not text collected by `collectable`: date/time values
    are written as ``'YYYY-MM-DD HH:MM:SS.ffffff'``; and numbers are cast to ``type_sql``,
    so that a row of such literals has the columns' types (a bare ``5`` would be an INT).

    >>> from dyntables.sql.dialect import to_spark_sql
    >>> at = datetime.datetime(2025, 4, 1, 12, 0)
    >>> for value, type_sql in [(None, "BIGINT"), (7, "BIGINT"), (at, "TIMESTAMP"),
    ...                         ("x", "STRING"), (True, "BOOLEAN"), ("1.5", "DECIMAL(3,1)")]:
    ...     print(to_spark_sql(typed_literal(value, type_sql)))
    CAST(NULL AS BIGINT)
    CAST(7 AS BIGINT)
    CAST('2025-04-01 12:00:00.000000' AS TIMESTAMP)
    'x'
    TRUE
    CAST('1.5' AS DECIMAL(3, 1))
    """
    kind = exp.DataType.build(type_sql, dialect="spark")
    if value is None:
        return exp.cast(exp.Null(), kind)
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, datetime.date):  # a datetime too
        return exp.cast(exp.Literal.string(value.strftime("%Y-%m-%d %H:%M:%S.%f")), kind)
    if isinstance(value, (int, float)):
        return exp.cast(exp.Literal.number(value), kind)
    if kind.is_type(exp.DataType.Type.TEXT):
        return exp.Literal.string(str(value))
    return exp.cast(exp.Literal.string(str(value)), kind)


def null_safe_match(keys: list[tuple[exp.Expr, str]], values: tuple[Any, ...]) -> exp.Expr:
    """``k1 <=> v1 AND k2 <=> v2 …`` for one value of the key expressions ``keys`` (each
    with its type)."""
    conditions = [
        exp.NullSafeEQ(this=key.copy(), expression=literal(value, type_sql))
        for (key, type_sql), value in zip(keys, values, strict=True)
    ]
    return exp.and_(*conditions) if conditions else exp.true()


def any_of(conditions: list[exp.Expr]) -> exp.Expr:
    return (
        exp.or_(*[exp.paren(condition) for condition in conditions]) if conditions else exp.false()
    )


def matching(keys: list[tuple[exp.Expr, str]], values: list[tuple[Any, ...]]) -> exp.Expr:
    """A predicate true exactly where the key expressions ``keys`` equal (null-safe) one of
    ``values``.

    It leads with an IN list on the first key, which engines evaluate as a hash lookup, so
    that the per-value comparisons run only for the few rows that pass it.
    """
    first, type_sql = keys[0]
    firsts = {value[0] for value in values}
    present = sorted(firsts - {None}, key=repr)
    lead: exp.Expr = (
        first.copy().isin(*[literal(v, type_sql) for v in present]) if present else exp.false()
    )
    if None in firsts:
        lead = exp.or_(lead, first.copy().is_(exp.null()))
    if len(keys) == 1:
        return lead
    exact = any_of([null_safe_match(keys, value) for value in values])
    return exp.and_(exp.paren(lead), exp.paren(exact))
