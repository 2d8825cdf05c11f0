"""Values the project writes into SQL as Spark literals (``typed_literal``: the rows of its
system tables, the scheduler's lease, the table functions), and which types are scalar.

A refresh never writes the values of a user's rows into SQL: the keys a change touches are
a relation (refresh/changes.py).
"""

from __future__ import annotations

import datetime
from typing import Any

from sqlglot import exp

# Types whose values compare and write back exactly (the outputs a refresh merges).
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


def typed_literal(value: Any, type_sql: str) -> exp.Expr:
    """``value``, a Python value the project holds itself (a timestamp, a count, a name),
    as a literal of type ``type_sql``: for rows it writes (system tables, the scheduler's
    lease, the table functions' rows).

    Date/time values are written as ``'YYYY-MM-DD HH:MM:SS.ffffff'``; numbers are cast to
    ``type_sql``, so that a row of such literals has the columns' types (a bare ``5`` would
    be an INT).

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
