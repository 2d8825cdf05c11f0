"""``Column``: PySpark's column expression, held as a Spark SQL expression (a sqlglot tree).

A Column never computes anything: DataFrame operations place its expression in the Spark
SQL query they build, and the shim runs that query as it runs any other (so a Column
names its result as Spark SQL names the same expression, which is how PySpark names it).

>>> (col("a") + 1).sql()
'`a` + 1'
>>> (col("t.a").isin(1, 2) & ~col("b")).sql()
'(`t`.`a` IN (1, 2)) AND (NOT `b`)'
>>> lit(1.5).sql(), lit("x").sql(), lit(None).sql()
('1.5D', "'x'", 'NULL')
"""

from __future__ import annotations

import datetime
import decimal
import math
from collections.abc import Iterable
from typing import Any, Protocol, runtime_checkable

from pyspark.errors import PySparkValueError
from pyspark.sql.types import DataType
from sqlglot import exp

from sparkshim.translate import ShimSpark

__all__ = ["Column", "ColumnOrName", "col", "lit", "to_column", "to_expression"]


class Column:
    """One column expression, with PySpark's operators and methods."""

    def __init__(self, expression: exp.Expr) -> None:
        self._expression = expression

    @property
    def expression(self) -> exp.Expr:
        """A copy of the Spark SQL expression (sqlglot tree)."""
        return self._expression.copy()

    def sql(self) -> str:
        """The expression as Spark SQL text."""
        return self._expression.sql(dialect=ShimSpark)

    def __repr__(self) -> str:
        return f"Column<'{self.sql()}'>"

    def __bool__(self) -> bool:
        raise PySparkValueError(
            error_class="CANNOT_CONVERT_COLUMN_INTO_BOOL",
            message_parameters={},
        )

    # ---- operators ----

    def _binary(self, kind: type[exp.Binary], other: Any, reverse: bool = False) -> Column:
        left, right = self.expression, to_expression(other)
        if reverse:
            left, right = right, left
        return Column(kind(this=_wrapped(left), expression=_wrapped(right)))

    def __add__(self, other: Any) -> Column:
        return self._binary(exp.Add, other)

    def __radd__(self, other: Any) -> Column:
        return self._binary(exp.Add, other, reverse=True)

    def __sub__(self, other: Any) -> Column:
        return self._binary(exp.Sub, other)

    def __rsub__(self, other: Any) -> Column:
        return self._binary(exp.Sub, other, reverse=True)

    def __mul__(self, other: Any) -> Column:
        return self._binary(exp.Mul, other)

    def __rmul__(self, other: Any) -> Column:
        return self._binary(exp.Mul, other, reverse=True)

    def __truediv__(self, other: Any) -> Column:
        return self._binary(exp.Div, other)

    def __rtruediv__(self, other: Any) -> Column:
        return self._binary(exp.Div, other, reverse=True)

    def __mod__(self, other: Any) -> Column:
        return self._binary(exp.Mod, other)

    def __rmod__(self, other: Any) -> Column:
        return self._binary(exp.Mod, other, reverse=True)

    def __neg__(self) -> Column:
        return Column(exp.Neg(this=_wrapped(self.expression)))

    def __eq__(self, other: Any) -> Column:  # type: ignore[override]
        return self._binary(exp.EQ, other)

    def __ne__(self, other: Any) -> Column:  # type: ignore[override]
        return self._binary(exp.NEQ, other)

    def __lt__(self, other: Any) -> Column:
        return self._binary(exp.LT, other)

    def __le__(self, other: Any) -> Column:
        return self._binary(exp.LTE, other)

    def __gt__(self, other: Any) -> Column:
        return self._binary(exp.GT, other)

    def __ge__(self, other: Any) -> Column:
        return self._binary(exp.GTE, other)

    def __and__(self, other: Any) -> Column:
        return self._binary(exp.And, other)

    def __rand__(self, other: Any) -> Column:
        return self._binary(exp.And, other, reverse=True)

    def __or__(self, other: Any) -> Column:
        return self._binary(exp.Or, other)

    def __ror__(self, other: Any) -> Column:
        return self._binary(exp.Or, other, reverse=True)

    def __invert__(self) -> Column:
        return Column(exp.Not(this=_wrapped(self.expression)))

    __hash__ = None  # type: ignore[assignment]  # == builds a Column, as in PySpark

    def eqNullSafe(self, other: Any) -> Column:  # noqa: N802 - PySpark's name
        return self._binary(exp.NullSafeEQ, other)

    # ---- methods ----

    def alias(self, *names: str) -> Column:
        if len(names) != 1:
            raise PySparkValueError(
                error_class="ONLY_ALLOWED_FOR_SINGLE_COLUMN",
                message_parameters={"arg_name": "alias"},
            )
        return Column(exp.alias_(_unaliased(self.expression), names[0], quoted=True))

    name = alias

    def cast(self, dataType: DataType | str) -> Column:  # noqa: N803 - PySpark's name
        text = dataType.simpleString() if isinstance(dataType, DataType) else dataType
        return Column(exp.cast(self.expression, exp.DataType.build(text, dialect=ShimSpark)))

    astype = cast

    def isNull(self) -> Column:  # noqa: N802 - PySpark's name
        return Column(exp.Is(this=_wrapped(self.expression), expression=exp.null()))

    def isNotNull(self) -> Column:  # noqa: N802 - PySpark's name
        return Column(exp.not_(self.isNull().expression))

    def isin(self, *values: Any) -> Column:
        flat = list(values[0]) if len(values) == 1 and isinstance(values[0], list) else values
        return Column(
            exp.In(this=_wrapped(self.expression), expressions=[to_expression(v) for v in flat])
        )

    def between(self, lowerBound: Any, upperBound: Any) -> Column:  # noqa: N803
        # PySpark builds the two comparisons, and names the column after them.
        return self.__ge__(lowerBound) & self.__le__(upperBound)

    def like(self, other: str) -> Column:
        return self._binary(exp.Like, other)

    def ilike(self, other: str) -> Column:
        return self._binary(exp.ILike, other)

    def rlike(self, other: str) -> Column:
        return self._binary(exp.RegexpLike, other)

    def startswith(self, other: Any) -> Column:
        return Column(exp.Anonymous(this="startswith", expressions=self._with(other)))

    def endswith(self, other: Any) -> Column:
        return Column(exp.Anonymous(this="endswith", expressions=self._with(other)))

    def contains(self, other: Any) -> Column:
        return Column(exp.Anonymous(this="contains", expressions=self._with(other)))

    def substr(self, startPos: Any, length: Any) -> Column:  # noqa: N803
        return Column(exp.Anonymous(this="substring", expressions=self._with(startPos, length)))

    def getItem(self, key: Any) -> Column:  # noqa: N802 - PySpark's name
        return Column(exp.Bracket(this=self.expression, expressions=[to_expression(key)]))

    def getField(self, name: str) -> Column:  # noqa: N802 - PySpark's name
        return Column(exp.Dot(this=self.expression, expression=exp.to_identifier(name, True)))

    def __getitem__(self, key: Any) -> Column:
        return self.getField(key) if isinstance(key, str) else self.getItem(key)

    def _with(self, *others: Any) -> list[exp.Expr]:
        return [self.expression, *(to_expression(o) for o in others)]

    # ---- CASE WHEN ----

    def when(self, condition: Column, value: Any) -> Column:
        case = self._expression
        if not isinstance(case, exp.Case) or case.args.get("default") is not None:
            raise PySparkValueError(
                error_class="INVALID_WHEN_USAGE",
                message_parameters={},
            )
        return Column(case.copy().when(condition.expression, to_expression(value)))

    def otherwise(self, value: Any) -> Column:
        case = self._expression
        if not isinstance(case, exp.Case) or case.args.get("default") is not None:
            raise PySparkValueError(
                error_class="INVALID_WHEN_USAGE",
                message_parameters={},
            )
        return Column(case.copy().else_(to_expression(value)))

    # ---- ordering and windows ----

    def asc(self) -> Column:
        return self._ordered(desc=False, nulls_first=True)

    def asc_nulls_first(self) -> Column:
        return self._ordered(desc=False, nulls_first=True)

    def asc_nulls_last(self) -> Column:
        return self._ordered(desc=False, nulls_first=False)

    def desc(self) -> Column:
        return self._ordered(desc=True, nulls_first=False)

    def desc_nulls_first(self) -> Column:
        return self._ordered(desc=True, nulls_first=True)

    def desc_nulls_last(self) -> Column:
        return self._ordered(desc=True, nulls_first=False)

    def _ordered(self, desc: bool, nulls_first: bool) -> Column:
        return Column(
            exp.Ordered(this=_unordered(self.expression), desc=desc, nulls_first=nulls_first)
        )

    def over(self, window: Any) -> Column:
        """This (window or aggregate) function over ``window`` (a ``sparkshim.window.Window``
        specification)."""
        if not isinstance(window, WindowSpecLike):
            raise PySparkValueError(
                error_class="NOT_WINDOWSPEC",
                message_parameters={"arg_name": "window", "arg_type": type(window).__name__},
            )
        return Column(window.over(self.expression))


ColumnOrName = Column | str


@runtime_checkable
class WindowSpecLike(Protocol):
    """What ``Column.over`` takes: a window specification (``sparkshim.window.WindowSpec``,
    which imports this module, so it is named here by what it does)."""

    def over(self, function: exp.Expr) -> exp.Window: ...

    def rowsBetween(self, start: int, end: int) -> Any: ...  # noqa: N802 - PySpark's name


def col(name: str) -> Column:
    """The column ``name``: ``a``, ``t.a`` (qualified, or a struct field), ``*``, ``t.*``;
    backticks quote a part that holds a dot.

    >>> col("`a.b`.c").sql()
    '`a.b`.`c`'
    """
    parts = _name_parts(name)
    if parts[-1] == "*":
        table = exp.to_identifier(parts[-2], quoted=True) if len(parts) > 1 else None
        return Column(exp.Column(this=exp.Star(), table=table) if table else exp.Star())
    identifiers = [exp.to_identifier(part, quoted=True) for part in parts]
    node: exp.Expr = exp.Column(this=identifiers[0])
    if len(identifiers) > 1:
        node = exp.Column(this=identifiers[1], table=identifiers[0])
    for identifier in identifiers[2:]:
        node = exp.Dot(this=node, expression=identifier)
    return Column(node)


def _name_parts(name: str) -> list[str]:
    parts: list[str] = []
    current = ""
    quoted = False
    index = 0
    while index < len(name):
        char = name[index]
        if char == "`":
            if quoted and name[index + 1 : index + 2] == "`":
                current += "`"
                index += 1
            else:
                quoted = not quoted
        elif char == "." and not quoted:
            parts.append(current)
            current = ""
        else:
            current += char
        index += 1
    parts.append(current)
    return parts


def lit(value: Any) -> Column:
    """A literal, typed as PySpark types it (a Python float is a DOUBLE, not a DECIMAL)."""
    return Column(_literal(value))


def _literal(value: Any) -> exp.Expr:
    if isinstance(value, Column):
        return value.expression
    if value is None:
        return exp.null()
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, int):
        return _signed(exp.Literal.number(abs(value)), value < 0)
    if isinstance(value, float):
        if math.isfinite(value):
            return _signed(exp.Literal.number(f"{abs(value)!r}D"), math.copysign(1, value) < 0)
        return exp.cast(exp.Literal.string(str(value)), exp.DataType.Type.DOUBLE)
    if isinstance(value, decimal.Decimal):
        return _signed(exp.Literal.number(f"{abs(value)}BD"), value < 0)
    if isinstance(value, str):
        return exp.Literal.string(value)
    if isinstance(value, datetime.datetime):
        return exp.cast(exp.Literal.string(value.isoformat(" ")), exp.DataType.Type.TIMESTAMP)
    if isinstance(value, datetime.date):
        return exp.cast(exp.Literal.string(value.isoformat()), exp.DataType.Type.DATE)
    if isinstance(value, (list, tuple)):
        return exp.Array(expressions=[_literal(v) for v in value])
    raise PySparkValueError(
        error_class="UNSUPPORTED_LITERAL",
        message_parameters={"literal": f"{value!r} of type {type(value).__name__}"},
    )


def _signed(number: exp.Expr, negative: bool) -> exp.Expr:
    return exp.Neg(this=number) if negative else number


def to_column(value: ColumnOrName) -> Column:
    """A Column, or the column a name names."""
    return value if isinstance(value, Column) else col(value)


def to_expression(value: Any) -> exp.Expr:
    """The expression of a Column, else of the literal ``value`` (a string is a literal
    here: comparisons and function arguments take values, as in PySpark)."""
    return value.expression if isinstance(value, Column) else _literal(value)


def column_expressions(values: Iterable[ColumnOrName]) -> list[exp.Expr]:
    return [to_column(value).expression for value in values]


def _wrapped(node: exp.Expr) -> exp.Expr:
    """``node`` in parentheses where an operator around it would otherwise bind into it."""
    if isinstance(node, (exp.Binary, exp.Connector, exp.Not, exp.Is, exp.In, exp.Neg)):
        return exp.paren(node, copy=False)
    return node


def _unaliased(node: exp.Expr) -> exp.Expr:
    return node.this if isinstance(node, exp.Alias) else node


def _unordered(node: exp.Expr) -> exp.Expr:
    return node.this if isinstance(node, exp.Ordered) else node
