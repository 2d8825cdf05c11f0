"""The shim's ``pyspark.sql.functions``: builders of Columns (``from sparkshim import
sql_functions as F``).

Each function gives the Spark SQL call PySpark's function of that name makes, so the
result is computed, typed and named as in PySpark. A string argument that stands for a
column is a column name (``F.upper("name")``); one that stands for a value is a literal
(the pattern of ``F.regexp_replace``).

>>> upper("name").sql()
'UPPER(`name`)'
>>> when(col("x") > 1, "big").otherwise("small").sql()
"CASE WHEN `x` > 1 THEN 'big' ELSE 'small' END"
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from sparkshim.column import Column, ColumnOrName, col, lit, to_column, to_expression
from sparkshim.dataframe import parse_expression

__all__ = [
    "abs",
    "approx_count_distinct",
    "array",
    "array_contains",
    "asc",
    "avg",
    "ceil",
    "coalesce",
    "col",
    "collect_list",
    "collect_set",
    "column",
    "concat",
    "concat_ws",
    "count",
    "countDistinct",
    "count_distinct",
    "current_date",
    "current_timestamp",
    "date_add",
    "date_format",
    "date_sub",
    "datediff",
    "dayofmonth",
    "dense_rank",
    "desc",
    "explode",
    "expr",
    "first",
    "floor",
    "greatest",
    "hour",
    "isnull",
    "lag",
    "last",
    "lead",
    "least",
    "length",
    "lit",
    "lower",
    "ltrim",
    "max",
    "mean",
    "min",
    "month",
    "rank",
    "regexp_extract",
    "regexp_replace",
    "round",
    "row_number",
    "rtrim",
    "size",
    "split",
    "sqrt",
    "stddev",
    "struct",
    "substring",
    "sum",
    "sum_distinct",
    "to_date",
    "to_timestamp",
    "trim",
    "upper",
    "variance",
    "when",
    "year",
]

column = col


def expr(text: str) -> Column:
    """A Spark SQL expression written as text."""
    return Column(parse_expression(text))


def when(condition: Column, value: Any) -> Column:
    """``CASE WHEN condition THEN value``; chain ``.when(...)`` and ``.otherwise(...)``."""
    return Column(exp.Case().when(condition.expression, to_expression(value)))


def asc(name: ColumnOrName) -> Column:
    return to_column(name).asc()


def desc(name: ColumnOrName) -> Column:
    return to_column(name).desc()


def _call(name: str, *columns: ColumnOrName, values: tuple[Any, ...] = ()) -> Column:
    """``name(columns..., values...)``: columns by name or Column, then literal values."""
    arguments = [to_column(c).expression for c in columns]
    arguments += [to_expression(v) for v in values]
    return Column(exp.Anonymous(this=name, expressions=arguments))


# ---- aggregates ----


def count(name: ColumnOrName) -> Column:
    if isinstance(name, str) and name == "*":
        return Column(exp.Anonymous(this="count", expressions=[exp.Star()]))
    return _call("count", name)


def countDistinct(name: ColumnOrName, *names: ColumnOrName) -> Column:  # noqa: N802
    arguments = [to_column(c).expression for c in (name, *names)]
    return Column(exp.Anonymous(this="count", expressions=[exp.Distinct(expressions=arguments)]))


count_distinct = countDistinct


def sum(name: ColumnOrName) -> Column:
    return _call("sum", name)


def sum_distinct(name: ColumnOrName) -> Column:
    distinct = exp.Distinct(expressions=[to_column(name).expression])
    return Column(exp.Anonymous(this="sum", expressions=[distinct]))


def avg(name: ColumnOrName) -> Column:
    return _call("avg", name)


mean = avg  # PySpark's mean is avg (and names its column so)


def min(name: ColumnOrName) -> Column:
    return _call("min", name)


def max(name: ColumnOrName) -> Column:
    return _call("max", name)


def first(name: ColumnOrName, ignorenulls: bool = False) -> Column:
    return _call("first", name, values=(ignorenulls,)) if ignorenulls else _call("first", name)


def last(name: ColumnOrName, ignorenulls: bool = False) -> Column:
    return _call("last", name, values=(ignorenulls,)) if ignorenulls else _call("last", name)


def collect_list(name: ColumnOrName) -> Column:
    return _call("collect_list", name)


def collect_set(name: ColumnOrName) -> Column:
    return _call("collect_set", name)


def stddev(name: ColumnOrName) -> Column:
    return _call("stddev", name)


def variance(name: ColumnOrName) -> Column:
    return _call("variance", name)


def approx_count_distinct(name: ColumnOrName) -> Column:
    return _call("approx_count_distinct", name)


# ---- window functions ----


def row_number() -> Column:
    return _call("row_number")


def rank() -> Column:
    return _call("rank")


def dense_rank() -> Column:
    return _call("dense_rank")


def lag(name: ColumnOrName, offset: int = 1, default: Any = None) -> Column:
    values = (offset,) if default is None else (offset, default)
    return _call("lag", name, values=values)


def lead(name: ColumnOrName, offset: int = 1, default: Any = None) -> Column:
    values = (offset,) if default is None else (offset, default)
    return _call("lead", name, values=values)


# ---- scalar functions ----


def coalesce(*cols: ColumnOrName) -> Column:
    return _call("coalesce", *cols)


def isnull(name: ColumnOrName) -> Column:
    return _call("isnull", name)


def greatest(*cols: ColumnOrName) -> Column:
    return _call("greatest", *cols)


def least(*cols: ColumnOrName) -> Column:
    return _call("least", *cols)


def abs(name: ColumnOrName) -> Column:
    return _call("abs", name)


def round(name: ColumnOrName, scale: int = 0) -> Column:
    return _call("round", name, values=(scale,))


def floor(name: ColumnOrName) -> Column:
    return _call("FLOOR", name)


def ceil(name: ColumnOrName) -> Column:
    return _call("CEIL", name)


def sqrt(name: ColumnOrName) -> Column:
    return _call("SQRT", name)


def upper(name: ColumnOrName) -> Column:
    return _call("upper", name)


def lower(name: ColumnOrName) -> Column:
    return _call("lower", name)


def length(name: ColumnOrName) -> Column:
    return _call("length", name)


def trim(name: ColumnOrName) -> Column:
    return _call("trim", name)


def ltrim(name: ColumnOrName) -> Column:
    return _call("ltrim", name)


def rtrim(name: ColumnOrName) -> Column:
    return _call("rtrim", name)


def concat(*cols: ColumnOrName) -> Column:
    return _call("concat", *cols)


def concat_ws(sep: str, *cols: ColumnOrName) -> Column:
    arguments = [lit(sep).expression, *(to_column(c).expression for c in cols)]
    return Column(exp.Anonymous(this="concat_ws", expressions=arguments))


def substring(name: ColumnOrName, pos: int, len: int) -> Column:
    return _call("substring", name, values=(pos, len))


def regexp_replace(name: ColumnOrName, pattern: str, replacement: str) -> Column:
    return _call("regexp_replace", name, values=(pattern, replacement))


def regexp_extract(name: ColumnOrName, pattern: str, idx: int) -> Column:
    return _call("regexp_extract", name, values=(pattern, idx))


def split(name: ColumnOrName, pattern: str, limit: int = -1) -> Column:
    return _call("split", name, values=(pattern, limit))


def year(name: ColumnOrName) -> Column:
    return _call("year", name)


def month(name: ColumnOrName) -> Column:
    return _call("month", name)


def dayofmonth(name: ColumnOrName) -> Column:
    return _call("dayofmonth", name)


def hour(name: ColumnOrName) -> Column:
    return _call("hour", name)


def to_date(name: ColumnOrName, format: str | None = None) -> Column:
    return _call("to_date", name, values=(format,)) if format else _call("to_date", name)


def to_timestamp(name: ColumnOrName, format: str | None = None) -> Column:
    if format:
        return _call("to_timestamp", name, values=(format,))
    return _call("to_timestamp", name)


def date_format(name: ColumnOrName, format: str) -> Column:
    return _call("date_format", name, values=(format,))


def current_date() -> Column:
    return _call("current_date")


def current_timestamp() -> Column:
    return _call("current_timestamp")


def datediff(end: ColumnOrName, start: ColumnOrName) -> Column:
    return _call("datediff", end, start)


def date_add(start: ColumnOrName, days: int) -> Column:
    return _call("date_add", start, values=(days,))


def date_sub(start: ColumnOrName, days: int) -> Column:
    return _call("date_sub", start, values=(days,))


def array(*cols: ColumnOrName) -> Column:
    return _call("array", *cols)


def struct(*cols: ColumnOrName) -> Column:
    return _call("struct", *cols)


def size(name: ColumnOrName) -> Column:
    return _call("size", name)


def array_contains(name: ColumnOrName, value: Any) -> Column:
    return _call("array_contains", name, values=(value,))


def explode(name: ColumnOrName) -> Column:
    return _call("explode", name)
