"""Spark 3.5's static types for the expressions of a query, as Spark's analyzer derives them.

:func:`annotate` types a resolved query bottom-up, scope by scope (a column of a derived
table or CTE takes its projection's Spark type, a column of a registered relation its
schema's), and records on each node the translation needs (arithmetic, aggregates,
rounding, literals) its Spark type in ``node.meta[SPARK_TYPE]``; a binary arithmetic
node whose result is a DECIMAL also gets its operands' types, as Spark widens them, in
``node.meta[OPERAND_TYPES]`` (an avg of a DECIMAL: the types of its sum and its count,
which Spark divides); an avg of a TIMESTAMP is marked ``node.meta[TIMESTAMP_AVERAGE]``
(Spark averages its seconds as DOUBLE). A comparison of a STRING with a number (``=``,
``<``, BETWEEN, IN, a simple CASE's WHEN) gets the types Spark casts its operands to, pair
by pair, in ``node.meta[COMPARISON_CASTS]`` (Spark's ``PromoteStrings`` and
``InConversion`` with ANSI mode off). A ``concat``, ``||`` or ``concat_ws`` gets the types
of the values it turns into text in ``node.meta[CONCATENATED_TYPES]``; a CASE, IF or
COALESCE whose values Spark widens to STRING (a string beside a number, a DATE or a
TIMESTAMP) gets the types of its values in ``node.meta[CHOSEN_TYPES]``. The outermost
set operation (UNION, INTERSECT, EXCEPT) that widens a column to STRING gets, for each of
its SELECTs (:func:`set_branches`) and each column, the type that SELECT's value has where
Spark turns it into text (or None) in ``node.meta[SET_TEXT_TYPES]``, and each SELECT's
column names, its stars expanded, as Spark spells them (None where not known), in
``node.meta[SET_BRANCH_COLUMNS]``. A node whose type
cannot be derived gets nothing, and the translation then decides at run time (or refuses)
as it would without types. :func:`annotate` returns the types of the whole statement
(:class:`StatementTypes`), which :mod:`sparkshim.type_mismatches` checks.

The DECIMAL rules are Spark's ``DecimalPrecision`` and the arithmetic expressions'
``resultDecimalType`` (``spark.sql.decimalOperations.allowPrecisionLoss`` true by
default):

>>> result_type("+", DecimalType(10, 2), DecimalType(5, 3))
DecimalType(precision=12, scale=3)
>>> result_type("*", DecimalType(38, 18), DecimalType(38, 18))
DecimalType(precision=38, scale=6)
>>> result_type("/", DecimalType(20, 2), DecimalType(20, 0))
DecimalType(precision=38, scale=20)
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from sqlglot import exp
from sqlglot.dialects.spark import Spark
from sqlglot.errors import OptimizeError, SqlglotError
from sqlglot.optimizer.scope import Scope, traverse_scope, walk_in_scope

from sparkshim.naming import FUNCTION_NAME_KEY

__all__ = [
    "ARGUMENT_TYPES",
    "ARITHMETIC_OPERATORS",
    "CHOSEN_TYPES",
    "COMPARISON_CASTS",
    "CONCATENATED_TYPES",
    "COUNT_TYPE",
    "DATE_PARTS",
    "FRACTIONAL_TYPES",
    "INTEGRAL_TYPES",
    "MAX_PRECISION",
    "MINIMUM_ADJUSTED_SCALE",
    "OPERAND_TYPES",
    "SET_BRANCH_COLUMNS",
    "SET_TEXT_TYPES",
    "SET_WIDENED_TYPES",
    "SPARK_TYPE",
    "STRING_OPERANDS",
    "TIMESTAMP_AVERAGE",
    "WRITTEN_NAME",
    "DecimalType",
    "SparkType",
    "StatementTypes",
    "adjust_precision_scale",
    "annotate",
    "as_decimal",
    "avg_type",
    "bounded",
    "chosen",
    "comparison_type",
    "concatenated",
    "grouping_keys",
    "in_list_type",
    "literal_type",
    "mark_typed_nodes",
    "parse_type",
    "result_type",
    "set_branches",
    "sum_type",
    "type_text",
    "wider_decimal",
    "wider_type",
]

MAX_PRECISION = 38
# Spark keeps at least this many fractional digits when a result loses precision.
MINIMUM_ADJUSTED_SCALE = 6

# The meta keys the annotation writes.
SPARK_TYPE = "spark_type"
OPERAND_TYPES = "spark_operand_types"
# Which operands of + - * / % a STRING is (Spark casts it to DOUBLE): (left, right).
STRING_OPERANDS = "spark_string_operands"
TIMESTAMP_AVERAGE = "spark_timestamp_average"
COMPARISON_CASTS = "spark_comparison_casts"
CONCATENATED_TYPES = "spark_concatenated_types"
# The Spark types of the arguments of a function whose translation reads them
# (``typed_arguments``).
ARGUMENT_TYPES = "spark_argument_types"
CHOSEN_TYPES = "spark_chosen_types"
SET_TEXT_TYPES = "spark_set_text_types"
SET_BRANCH_COLUMNS = "spark_set_branch_columns"
SET_WIDENED_TYPES = "spark_set_widened_types"
# An identifier's name as written (:func:`mark_typed_nodes`).
WRITTEN_NAME = "spark_written_name"


@dataclass(frozen=True)
class DecimalType:
    """Spark's DECIMAL(precision, scale)."""

    precision: int
    scale: int

    def sql(self) -> str:
        """The type as DuckDB (and Spark) spell it."""
        return f"DECIMAL({self.precision}, {self.scale})"


# The type Spark's avg casts a count to, to divide a DECIMAL sum by it.
COUNT_TYPE = DecimalType(20, 0)

# A Spark type: a DECIMAL, or the simpleString of any other type ("int", "double", ...).
SparkType = DecimalType | str

# The types the two operands of one comparison are cast to (None: compared as they are).
CastPair = tuple[SparkType | None, SparkType | None]

# Integral types, narrowest first, with the DECIMAL a column of each widens to.
_INTEGRAL_WIDTHS = {"tinyint": 3, "smallint": 5, "int": 10, "bigint": 20}
_INTEGRAL_ORDER = list(_INTEGRAL_WIDTHS)
_FRACTIONAL = ("float", "double")
# Spark's integral and floating-point type names, as this module names types.
INTEGRAL_TYPES = tuple(_INTEGRAL_ORDER)
FRACTIONAL_TYPES = _FRACTIONAL
_SIMPLE_NAMES = {
    "byte": "tinyint",
    "short": "smallint",
    "integer": "int",
    "long": "bigint",
    "real": "float",
}
# The types Spark widens to STRING beside a STRING (its ``stringPromotion``: any atomic
# type but BINARY and BOOLEAN).
_TEXT_WIDENED = (*_INTEGRAL_ORDER, *_FRACTIONAL, "date", "timestamp", "timestamp_ntz")
_DECIMAL_TEXT = re.compile(r"decimal\((\d+),\s*(\d+)\)")


def type_text(spark_type: SparkType) -> str:
    """A Spark type's simpleString (``decimal(10,2)``, ``int``, ``array<int>``)."""
    if isinstance(spark_type, DecimalType):
        return f"decimal({spark_type.precision},{spark_type.scale})"
    return spark_type


# A struct field name a simpleString spells bare (others would need quoting).
_SIMPLE_FIELD_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def parse_type(text: str) -> SparkType:
    """A Spark type from its simpleString (``decimal(10,2)``, ``int``, ...)."""
    lowered = text.strip().lower()
    match = _DECIMAL_TEXT.fullmatch(lowered)
    if match:
        return DecimalType(int(match[1]), int(match[2]))
    if lowered == "decimal":
        return DecimalType(10, 0)
    return _SIMPLE_NAMES.get(lowered, lowered)


def _from_sqlglot(data_type: exp.DataType | None) -> SparkType | None:
    """A sqlglot type (a CAST's target, or a leaf sqlglot typed) as a Spark type."""
    if data_type is None or data_type.this == exp.DType.UNKNOWN:
        return None
    if data_type.this == exp.DType.DECIMAL:
        parameters = [int(p.this.name) for p in data_type.expressions]
        precision = parameters[0] if parameters else 10
        scale = parameters[1] if len(parameters) > 1 else 0
        return DecimalType(precision, scale)
    return parse_type(data_type.sql(dialect=Spark))


def _is_integral(spark_type: SparkType | None) -> bool:
    return isinstance(spark_type, str) and spark_type in _INTEGRAL_WIDTHS


def _is_numeric(spark_type: SparkType | None) -> bool:
    return isinstance(spark_type, DecimalType) or spark_type in (*_INTEGRAL_WIDTHS, *_FRACTIONAL)


def _null_as_double(spark_type: SparkType | None) -> SparkType | None:
    """The type of an argument of a function of numbers (abs, round, sum ...): a NULL's
    is DOUBLE, to which Spark casts it (its default numeric type)."""
    return "double" if spark_type == "void" else spark_type


# ---- DECIMAL result types ----


def adjust_precision_scale(precision: int, scale: int) -> DecimalType:
    """Spark's DecimalType.adjustPrecisionScale: beyond 38 digits, the scale gives way (down
    to 6 digits, or the scale if smaller) so that the integral part keeps its digits."""
    if precision <= MAX_PRECISION:
        return DecimalType(precision, scale)
    integral_digits = precision - scale
    minimum_scale = min(scale, MINIMUM_ADJUSTED_SCALE)
    return DecimalType(MAX_PRECISION, max(MAX_PRECISION - integral_digits, minimum_scale))


def bounded(precision: int, scale: int) -> DecimalType:
    """Spark's DecimalType.bounded."""
    return DecimalType(min(precision, MAX_PRECISION), min(scale, MAX_PRECISION))


def _fit(precision: int, scale: int, allow_precision_loss: bool) -> DecimalType:
    if allow_precision_loss:
        return adjust_precision_scale(precision, scale)
    return bounded(precision, scale)


def result_type(
    operator: str, left: DecimalType, right: DecimalType, allow_precision_loss: bool = True
) -> DecimalType:
    """The DECIMAL type of ``left operator right`` (``+ - * / %``) for DECIMAL operands."""
    p1, s1, p2, s2 = left.precision, left.scale, right.precision, right.scale
    if operator in ("+", "-"):
        scale = max(s1, s2)
        return _fit(max(p1 - s1, p2 - s2) + scale + 1, scale, allow_precision_loss)
    if operator == "*":
        return _fit(p1 + p2 + 1, s1 + s2, allow_precision_loss)
    if operator == "/":
        if allow_precision_loss:
            scale = max(MINIMUM_ADJUSTED_SCALE, s1 + p2 + 1)
            return adjust_precision_scale(p1 - s1 + s2 + scale, scale)
        integral_digits = min(MAX_PRECISION, p1 - s1 + s2)
        fraction_digits = min(MAX_PRECISION, max(6, s1 + p2 + 1))
        excess = integral_digits + fraction_digits - MAX_PRECISION
        if excess > 0:
            fraction_digits -= excess // 2 + 1
            integral_digits = MAX_PRECISION - fraction_digits
        return bounded(integral_digits + fraction_digits, fraction_digits)
    if operator == "%":
        scale = max(s1, s2)
        return _fit(min(p1 - s1, p2 - s2) + scale, scale, allow_precision_loss)
    raise ValueError(operator)


def wider_decimal(left: DecimalType, right: DecimalType) -> DecimalType:
    """Spark's DecimalPrecision.widerDecimalType: holds both (CASE, COALESCE, UNION)."""
    scale = max(left.scale, right.scale)
    integral_digits = max(left.precision - left.scale, right.precision - right.scale)
    return bounded(integral_digits + scale, scale)


def sum_type(argument: DecimalType) -> DecimalType:
    """sum() of a DECIMAL: ten more digits."""
    return DecimalType(min(MAX_PRECISION, argument.precision + 10), argument.scale)


def avg_type(argument: DecimalType) -> DecimalType:
    """avg() of a DECIMAL: four more digits, four of them fractional."""
    return bounded(argument.precision + 4, argument.scale + 4)


def as_decimal(spark_type: SparkType, literal: exp.Expr | None = None) -> DecimalType | None:
    """An operand's type as the DECIMAL Spark widens it to beside a DECIMAL: an integral
    column by its type's width, an integral literal by its value's digits (but a TINYINT
    literal, ``3Y``, by its type's width: Spark's DecimalType.fromLiteral has no case for
    a byte)."""
    if isinstance(spark_type, DecimalType):
        return spark_type
    if not _is_integral(spark_type):
        return None
    byte = str(spark_type) == "tinyint"
    value = _integer_literal_value(literal) if literal is not None and not byte else None
    if value is not None:
        return DecimalType(len(str(abs(value))), 0)
    return DecimalType(_INTEGRAL_WIDTHS[str(spark_type)], 0)


def _integer_literal_value(node: exp.Expr) -> int | None:
    """The value of an integer literal (Spark's parser reads ``-5`` as one literal, and
    ``10L``, ``3S``, ``5Y`` too, which sqlglot reads as a TRY_CAST of the number; a CAST
    written as one, ``CAST(3 AS SMALLINT)``, is no literal: Spark types it before folding
    it, a SMALLINT)."""
    inner = node.this if isinstance(node, exp.Neg) else node
    if isinstance(inner, exp.Paren):
        return None
    if (
        isinstance(inner, exp.TryCast)
        and FUNCTION_NAME_KEY not in inner.meta
        and inner.to.is_type(*exp.DataType.INTEGER_TYPES)
    ):
        inner = inner.this
    if isinstance(inner, exp.Literal) and not inner.is_string and inner.is_int:
        value = int(inner.this)
        return -value if isinstance(node, exp.Neg) else value
    return None


def literal_type(literal: exp.Literal) -> SparkType | None:
    """A literal's Spark type: ``5`` INT, ``5000000000`` BIGINT, a longer integer
    DECIMAL(n, 0), ``1.50`` DECIMAL(3, 2), ``1.5e0`` DOUBLE, a string STRING."""
    if literal.is_string:
        return "string"
    text = str(literal.this)
    if "e" in text.lower():
        return "double"
    if literal.is_int:
        value = int(text)
        if isinstance(literal.parent, exp.Neg):
            value = -value  # Spark reads -9223372036854775808 as one literal, a BIGINT
        if -(2**31) <= value < 2**31:
            return "int"
        if -(2**63) <= value < 2**63:
            return "bigint"
        width = len(str(abs(value)))
        return DecimalType(width, 0) if width <= MAX_PRECISION else None
    _, digits, exponent = Decimal(text).as_tuple()
    if not isinstance(exponent, int):
        return None
    scale = max(-exponent, 0)
    significant = len(str(int("".join(str(digit) for digit in digits) or "0")))
    precision = max(significant + max(exponent, 0), scale)
    return DecimalType(precision, scale) if precision <= MAX_PRECISION else None


# ---- common types of several values ----


def wider_type(types: list[SparkType | None]) -> SparkType | None:
    """The type Spark gives a CASE, COALESCE or UNION of values of ``types`` (NULLs aside;
    of NULLs only, a NULL)."""
    known = [t for t in types if t != "void"]
    if types and not known:
        return "void"
    if not known or any(t is None for t in known):
        return None
    result = known[0]
    for other in known[1:]:
        result = _wider_of_two(result, other)
        if result is None:
            return None
    return result


def _wider_of_two(left: SparkType | None, right: SparkType | None) -> SparkType | None:
    if left is None or right is None:
        return None
    if left == right:
        return left
    for string_side, other in ((left, right), (right, left)):
        if string_side == "string" and (isinstance(other, DecimalType) or other in _TEXT_WIDENED):
            return "string"
    if {left, right} == {"date", "timestamp"}:
        return "timestamp"
    if isinstance(left, DecimalType) or isinstance(right, DecimalType):
        if left in _FRACTIONAL or right in _FRACTIONAL:
            return "double"
        left_decimal, right_decimal = as_decimal(left), as_decimal(right)
        if left_decimal is None or right_decimal is None:
            return None
        return wider_decimal(left_decimal, right_decimal)
    if _is_integral(left) and _is_integral(right):
        order = _INTEGRAL_ORDER
        return order[max(order.index(str(left)), order.index(str(right)))]
    if _is_numeric(left) and _is_numeric(right):
        return "double" if "double" in (left, right) else "float"
    return None


# ---- comparisons of a STRING with a number ----


def comparison_type(left: SparkType | None, right: SparkType | None) -> SparkType | None:
    """The type Spark (ANSI off) compares a STRING and a number, a BOOLEAN, a DATE or a
    TIMESTAMP as: the number's type, DOUBLE beside a DECIMAL, else the other operand's type
    (its ``PromoteStrings``; ``'1.5' = 1`` is true, the string cast to INT; ``'yes' = true``
    is true, ``'abc' = true`` NULL, as ``'21' = DATE'2024-01-01'``); None for any other
    pair, which is compared as it is.

    >>> comparison_type("string", "int"), comparison_type(DecimalType(5, 2), "string")
    ('int', 'double')
    >>> comparison_type("boolean", "string"), comparison_type("string", "string")
    ('boolean', None)
    """
    for string_side, other in ((left, right), (right, left)):
        if string_side == "string" and _is_numeric(other):
            return "double" if isinstance(other, DecimalType) else other
        if string_side == "string" and other in ("boolean", "date", "timestamp"):
            return other
    return None


def in_list_type(types: list[SparkType | None]) -> SparkType | None:
    """The type Spark (ANSI off) compares an IN's value and list as when they mix STRINGs
    with numbers, DATEs or TIMESTAMPs: STRING (its ``InConversion`` widens them to one
    type, and a STRING beside any of those widens to STRING: ``'1.0' IN (1)`` is false,
    ``'7' IN (DATE'2024-01-31')`` false, where a cast of '7' to DATE would fail); None
    otherwise.

    >>> in_list_type(["string", "int", "void"]), in_list_type(["int", "bigint"])
    ('string', None)
    >>> in_list_type(["date", "string"]), in_list_type(["string", "boolean"])
    ('string', None)
    """
    known = [t for t in types if t != "void"]
    if any(t is None for t in known) or "string" not in known:
        return None
    others = [t for t in known if t != "string"]
    widened = all(_is_numeric(t) or t in ("date", "timestamp") for t in others)
    return "string" if others and widened else None


def _cast_pair(left: SparkType | None, right: SparkType | None, target: SparkType) -> CastPair:
    return (None if left == target else target, None if right == target else target)


# The binary comparison operators Spark's PromoteStrings casts the operands of.
_BINARY_COMPARISONS = (
    exp.EQ,
    exp.NEQ,
    exp.NullSafeEQ,
    exp.NullSafeNEQ,
    exp.GT,
    exp.GTE,
    exp.LT,
    exp.LTE,
)


def compared_pairs(node: exp.Expr) -> list[tuple[exp.Expr, exp.Expr]]:
    """The pairs of operands ``node`` compares: a binary comparison (or nullif) its two
    sides, BETWEEN its value with each bound, a simple CASE its value with each WHEN, an IN
    (of a list) its value with each item; none for any other node."""
    if isinstance(node, (*_BINARY_COMPARISONS, exp.Nullif)):  # nullif(a, b): a = b
        return [(node.this, node.expression)]
    if isinstance(node, exp.Between):
        return [(node.this, node.args["low"]), (node.this, node.args["high"])]
    if isinstance(node, exp.Case) and node.this is not None:
        return [(node.this, when.this) for when in node.args.get("ifs") or []]
    if isinstance(node, exp.In) and not node.args.get("query") and not node.args.get("unnest"):
        return [(node.this, item) for item in node.expressions]
    return []


def _greatest_values(node: exp.Expr) -> list[exp.Expr]:
    """The values greatest or least compares; none for any other node."""
    if isinstance(node, exp.Greatest | exp.Least):
        return [node.this, *node.expressions]
    return []


def chosen(node: exp.Expr) -> list[exp.Expr]:
    """The values a CASE, IF, COALESCE or nvl2 chooses from (a CASE's ELSE only if written);
    none for any other node."""
    if isinstance(node, exp.Case):
        default = node.args.get("default")
        return [when.args["true"] for when in node.args.get("ifs") or []] + (
            [default] if default is not None else []
        )
    if isinstance(node, exp.Nvl2) or (
        isinstance(node, exp.If) and not isinstance(node.parent, exp.Case)
    ):
        return [node.args[key] for key in ("true", "false") if node.args.get(key) is not None]
    if isinstance(node, exp.Coalesce):
        return [node.this, *node.expressions]
    return []


def set_branches(query: exp.Expr) -> list[exp.Expr]:
    """The SELECTs (or other queries) a set operation combines, left to right, through
    nested set operations and parentheses."""
    if isinstance(query, exp.SetOperation):
        return set_branches(query.this) + set_branches(query.expression)
    if isinstance(query, exp.Subquery) and not query.alias:
        return set_branches(query.this)
    return [query]


def _is_outermost_set_operation(node: exp.Expr) -> bool:
    parent = node.parent
    while isinstance(parent, exp.Subquery) and not parent.alias:
        parent = parent.parent
    return isinstance(node, exp.SetOperation) and not isinstance(parent, exp.SetOperation)


def concatenated(node: exp.Expr) -> list[exp.Expr]:
    """The values a ``concat``, ``||`` or ``concat_ws`` (after its separator) joins as
    text; none for any other node."""
    if isinstance(node, exp.Concat):
        return list(node.expressions)
    if isinstance(node, exp.DPipe):
        return [node.this, node.expression]
    if isinstance(node, exp.ConcatWs):
        return list(node.expressions[1:])
    return []


# The date and time parts whose argument Spark casts to a DATE or TIMESTAMP first (a STRING
# is read as one: ``_with_text_as_date`` in translate.py).
DATE_PARTS = (
    exp.Year,
    exp.Month,
    exp.Day,
    exp.DayOfMonth,
    exp.Quarter,
    exp.DayOfWeek,
    exp.DayOfYear,
    exp.WeekOfYear,
    exp.Hour,
    exp.Minute,
    exp.Second,
)


def typed_arguments(node: exp.Expr) -> list[exp.Expr]:
    """The arguments of ``node`` whose Spark types its translation reads: hex's value (a
    number other than an integer is cast to BIGINT first), base64's and crc32's value (a
    STRING is encoded as UTF-8 first), a date or time part's value or extract's source (a
    STRING is cast first), try_cast's value (its rules depend on the type it converts),
    a GROUP BY's keys, a SELECT DISTINCT's columns and a set operation's SELECTs' columns
    (a floating one's -0.0 is shown as 0.0),
    the operands of ``<``/``<=``/``>``/``>=``, greatest's and least's values, sort_array's
    array and max_by's ordering (a STRUCT or ARRAY is ordered as Spark orders it),
    timestampadd's timestamp (a DATE is cast to Spark's TIMESTAMP), lag's and lead's value
    and default (the default is cast to the value's type); none for any other node."""
    if isinstance(node, (exp.Hex, exp.ToBase64, exp.TimestampAdd, *DATE_PARTS)):
        return [node.this]
    if isinstance(node, exp.Lag | exp.Lead) and node.args.get("default") is not None:
        return [node.this, node.args["default"]]
    if isinstance(node, exp.Extract):
        return [node.expression]
    if _is_function(node, "DATE_PART") or _is_function(node, "DATEPART"):
        return list(node.expressions[1:2])
    if _is_function(node, "CRC32"):
        return list(node.expressions[:1])
    if isinstance(node, exp.TryCast) or _is_text_cast(node):
        return [node.this]
    if isinstance(node, exp.Array):
        return list(node.expressions)
    if isinstance(node, _ORDERING_COMPARISONS):
        return [node.this, node.expression]
    if isinstance(node, exp.Group):
        return grouping_keys(node)
    if isinstance(node, exp.Distinct) and isinstance(node.parent, exp.Select):
        return list(node.parent.expressions)
    if isinstance(node, exp.SetOperation):
        branches = set_branches(node)
        if all(isinstance(branch, exp.Select) for branch in branches):
            return [value for branch in branches for value in branch.expressions]
    if isinstance(node, exp.ArraySort):
        return [node.this]
    if isinstance(node, exp.Greatest | exp.Least):
        return _greatest_values(node)
    if isinstance(node, exp.ArgMax | exp.ArgMin):
        return [node.expression]
    return []


def grouping_keys(group: exp.Group) -> list[exp.Expr]:
    """A GROUP BY's keys: its expressions (a position, ``GROUP BY 1``, read as the SELECT
    item it names), and those inside its ROLLUP, CUBE and GROUPING SETS."""
    keys: list[exp.Expr] = []
    select = group.parent if isinstance(group.parent, exp.Select) else None
    for item in group.expressions:
        position = int(item.this) if isinstance(item, exp.Literal) and item.is_int else None
        if select is not None and position is not None and 0 < position <= len(select.expressions):
            item = select.expressions[position - 1].unalias()
        if isinstance(item, exp.Rollup | exp.Cube):
            keys.extend(item.expressions)
        elif isinstance(item, exp.GroupingSets):
            for grouping_set in item.expressions:
                inner = grouping_set.this if isinstance(grouping_set, exp.Paren) else grouping_set
                keys.extend(inner.expressions if isinstance(inner, exp.Tuple) else [inner])
        else:
            keys.append(item)
    return keys


# The comparisons that order their operands (a STRUCT or ARRAY in Spark's order:
# nested_order.py); ``=`` and ``<=>`` of nested values DuckDB answers as Spark does.
_ORDERING_COMPARISONS = (exp.GT, exp.GTE, exp.LT, exp.LTE)


def _is_text_cast(node: exp.Expr) -> bool:
    """A CAST to STRING (or VARCHAR, CHAR): one of a value already a STRING is the value."""
    to = node.args.get("to") if isinstance(node, exp.Cast) else None
    return isinstance(to, exp.DataType) and to.is_type(*exp.DataType.TEXT_TYPES)


# ---- the typing rules ----

# Spark's arithmetic operators, by sqlglot node (translate.py emits DECIMAL arithmetic by them).
ARITHMETIC_OPERATORS: dict[type[exp.Expr], str] = {
    exp.Add: "+",
    exp.Sub: "-",
    exp.Mul: "*",
    exp.Div: "/",
    exp.Mod: "%",
}


# Nodes whose type is their first argument's: max_by/min_by, first/last/any_value too.
_TYPE_OF_FIRST_ARGUMENT = (
    exp.Ordered,  # an ORDER BY item: its value's
    exp.Paren,
    exp.Alias,
    # nullif(a, b) is Spark's IF(a = b, NULL, a): a's type (nullif(NULL, i) is a NULL)
    exp.Nullif,
    exp.Max,
    exp.Min,
    exp.ArgMax,
    exp.ArgMin,
    exp.First,
    exp.Last,
    exp.AnyValue,
)


class _Typer:
    """Spark types of one query's nodes, computed bottom-up scope by scope."""

    def __init__(self, schemas: dict[str, dict[str, str]], allow_precision_loss: bool) -> None:
        self.schemas = {
            name.lower(): {column.lower(): text for column, text in columns.items()}
            for name, columns in schemas.items()
        }
        self.allow_precision_loss = allow_precision_loss
        self.types: dict[int, SparkType] = {}  # id(node) -> its Spark type
        self.operands: dict[int, tuple[DecimalType, DecimalType]] = {}
        self.string_operands: dict[int, tuple[bool, bool]] = {}
        self.timestamp_averages: set[int] = set()
        self.comparison_casts: dict[int, tuple[CastPair, ...]] = {}
        self.concatenated_types: dict[int, tuple[SparkType | None, ...]] = {}
        self.argument_types: dict[int, tuple[SparkType | None, ...]] = {}
        self.chosen_types: dict[int, tuple[SparkType | None, ...]] = {}
        self.set_text_types: dict[int, tuple[tuple[SparkType | None, ...], ...]] = {}
        self.set_branch_columns: dict[int, tuple[tuple[str | None, ...], ...]] = {}
        self.set_widened_types: dict[int, tuple[SparkType | None, ...]] = {}
        self.scope: Scope | None = None
        # Each relation's column names as it spells them, by their lower case.
        self.spellings = {
            name.lower(): {column.lower(): column for column in columns}
            for name, columns in schemas.items()
        }
        self.scopes: dict[int, Scope] = {}  # id(a scope's expression) -> the scope

    def type_of(self, node: exp.Expr | None) -> SparkType | None:
        return None if node is None else self.types.get(id(node))

    def case_value_types(self, case: exp.Case) -> list[SparkType | None]:
        """The types of a CASE's values: each THEN's, and its ELSE's (NULL when it has
        none: a CASE without ELSE is typed by its THENs alone)."""
        values = [self.type_of(when.args["true"]) for when in case.args.get("ifs") or []]
        default = case.args.get("default")
        return [*values, "void" if default is None else self.type_of(default)]

    def recorded(self, node: exp.Expr) -> dict[str, object]:
        """What the translation reads of ``node``, by its meta key (empty: nothing)."""
        key = id(node)
        tables: tuple[tuple[str, dict[int, Any]], ...] = (
            (SPARK_TYPE, self.types),
            (OPERAND_TYPES, self.operands),
            (STRING_OPERANDS, self.string_operands),
            (COMPARISON_CASTS, self.comparison_casts),
            (CONCATENATED_TYPES, self.concatenated_types),
            (ARGUMENT_TYPES, self.argument_types),
            (SET_TEXT_TYPES, self.set_text_types),
            (SET_BRANCH_COLUMNS, self.set_branch_columns),
            (SET_WIDENED_TYPES, self.set_widened_types),
            (CHOSEN_TYPES, self.chosen_types),
        )
        found: dict[str, object] = {name: table[key] for name, table in tables if key in table}
        if key in self.timestamp_averages:
            found[TIMESTAMP_AVERAGE] = True
        return found

    def run(self, tree: exp.Expr) -> None:
        scopes = traverse_scope(tree)
        self.scopes = {id(scope.expression): scope for scope in scopes}
        for scope in scopes:
            self.scope = scope
            nodes = list(walk_in_scope(scope.expression))
            for node in reversed(nodes):  # breadth-first, reversed: children first
                spark_type = self.infer(node)
                if spark_type is not None:
                    self.types[id(node)] = spark_type
                casts = self.comparison_casts_of(node)
                if casts is not None:
                    self.comparison_casts[id(node)] = casts
                joined = concatenated(node)
                if joined:
                    self.concatenated_types[id(node)] = tuple(map(self.type_of, joined))
                arguments = typed_arguments(node)
                if arguments:
                    self.argument_types[id(node)] = tuple(map(self.operand_type, arguments))
                if _is_outermost_set_operation(node):
                    self.record_set_text_types(node)
                values = chosen(node) or _greatest_values(node)
                if values and spark_type in ("string", "double"):
                    self.chosen_types[id(node)] = tuple(map(self.type_of, values))

    def infer(self, node: exp.Expr) -> SparkType | None:
        if isinstance(node, exp.Literal):
            return literal_type(node)
        if isinstance(node, exp.Null):
            return "void"
        if isinstance(node, exp.Boolean):
            return "boolean"
        if isinstance(node, exp.Column):
            return self.column_type(node)
        if isinstance(node, _TYPE_OF_FIRST_ARGUMENT):
            return self.type_of(node.this)
        if isinstance(node, exp.Neg | exp.Abs):
            return _null_as_double(self.type_of(node.this))
        if isinstance(node, (exp.Cast, exp.TryCast)):
            return _from_sqlglot(node.args.get("to"))
        if type(node) in ARITHMETIC_OPERATORS:
            operator = ARITHMETIC_OPERATORS[type(node)]
            return self.arithmetic(node, operator, node.this, node.expression)
        if isinstance(node, exp.GenerateSeries):
            return self.sequence_type(node)
        if isinstance(node, exp.IntDiv):
            # "div" is BIGINT; DECIMAL operands (widened as for "/") are recorded.
            widened = self.arithmetic(node, "/", node.this, node.expression)
            return "bigint" if widened is not None else None
        if isinstance(node, exp.Sum):
            return self.aggregate(node, sum_type, "bigint", "double")
        if isinstance(node, exp.Avg):
            return self.aggregate(node, avg_type, "double", "double")
        if isinstance(node, exp.Count):
            return "bigint"
        if isinstance(node, exp.Coalesce):
            return wider_type([self.type_of(v) for v in [node.this, *node.expressions]])
        if isinstance(node, exp.Case):
            return wider_type(self.case_value_types(node))
        if isinstance(node, exp.If | exp.Nvl2):
            return wider_type([self.type_of(node.args.get(k)) for k in ("true", "false")])
        if isinstance(node, exp.Round) or _is_function(node, "BROUND"):
            return self.rounding(node)
        if isinstance(node, exp.Floor | exp.Ceil):
            return self.floor_or_ceil(node)
        if _is_function(node, "PMOD") and len(node.expressions) == 2:
            return self.arithmetic(node, "%", *node.expressions)
        if isinstance(node, exp.Negative):
            return self.type_of(node.this)
        if isinstance(node, exp.Rint):
            return "double"
        if isinstance(node, exp.Greatest | exp.Least):
            return wider_type([self.type_of(v) for v in [node.this, *node.expressions]])
        if isinstance(node, exp.Array):
            return self.array_type(node)
        if isinstance(node, exp.Struct):
            return self.struct_type(node)
        if isinstance(node, exp.Window):
            return self.type_of(node.this)
        if isinstance(node, exp.Subquery) and isinstance(node.this, exp.Select):
            projections = node.this.expressions
            return self.type_of(projections[0]) if len(projections) == 1 else None
        if isinstance(node, exp.Predicate | exp.Connector | exp.Not):
            return "boolean"
        if isinstance(node, DATE_PARTS):
            return "int"  # every one of them (sqlglot types some narrower: day() TINYINT)
        if isinstance(node, exp.TsOrDsAdd):
            return "date"  # date_add / date_sub (timestampadd of one gives a TIMESTAMP)
        if isinstance(node, exp.BitwiseLeftShift | exp.BitwiseRightShift):
            shifted = self.type_of(node.this)  # shiftleft/shiftright take an INT or a BIGINT
            return shifted if shifted == "bigint" else "int" if _is_integral(shifted) else None
        if isinstance(node, exp.TimestampFromParts | exp.AtTimeZone | exp.FromTimeZone) or any(
            _is_function(node, name) for name in _EPOCH_TIMESTAMPS
        ):
            return "timestamp"  # make_timestamp, from/to_utc_timestamp, timestamp_seconds ...
        return self.sqlglot_type(node)

    def comparison_casts_of(self, node: exp.Expr) -> tuple[CastPair, ...] | None:
        """The types each pair of operands ``node`` compares is cast to, when Spark casts
        some operand for comparing a STRING with a number (None when it casts none)."""
        pairs = compared_pairs(node)
        if not pairs:
            return None
        if isinstance(node, exp.In):
            types = [self.operand_type(node.this), *(self.operand_type(r) for _, r in pairs)]
            target = in_list_type(types)
            if target is None:
                return None
            return tuple(_cast_pair(types[0], right, target) for right in types[1:])
        casts: list[CastPair] = []
        for left, right in pairs:
            left_type, right_type = self.operand_type(left), self.operand_type(right)
            target = comparison_type(left_type, right_type)
            casts.append(
                (None, None) if target is None else _cast_pair(left_type, right_type, target)
            )
        return tuple(casts) if any(pair != (None, None) for pair in casts) else None

    def operand_type(self, node: exp.Expr) -> SparkType | None:
        """A compared operand's type: its Spark type, else STRING where sqlglot types it
        as text (a string function's result, which these rules do not type)."""
        spark_type = self.type_of(node)
        if spark_type is not None:
            return spark_type
        text = isinstance(node.type, exp.DataType) and node.type.is_type(*exp.DataType.TEXT_TYPES)
        return "string" if text else None

    def sqlglot_type(self, node: exp.Expr) -> SparkType | None:
        """sqlglot's type for a node these rules do not cover, trusted only when it is an
        integral or fractional number (its DECIMAL types are not Spark's)."""
        spark_type = _from_sqlglot(node.type) if isinstance(node.type, exp.DataType) else None
        if spark_type is None or isinstance(spark_type, DecimalType):
            return None
        if any(isinstance(self.type_of(child), DecimalType) for child in node.iter_expressions()):
            return None
        return spark_type if _is_integral(spark_type) or spark_type in _FRACTIONAL else None

    def column_type(self, column: exp.Column) -> SparkType | None:
        scope = self.scope
        if scope is None or not column.table:
            return None
        source = scope.sources.get(column.table)
        while source is None and scope.parent is not None:
            # A correlated reference (a column of an enclosing query, in a subquery's
            # WHERE): typed as the enclosing scope's source types it.
            scope = scope.parent
            source = scope.sources.get(column.table)
        if isinstance(source, exp.Table):
            columns = self.schemas.get(source.name.lower())
            text = columns.get(column.name.lower()) if columns is not None else None
            return parse_type(text) if text is not None else None
        if isinstance(source, Scope):
            return self.projection_type(source.expression, column.name)
        return None

    def projection_type(self, query: exp.Expr, name: str) -> SparkType | None:
        if isinstance(query, exp.Select):
            for projection in query.expressions:
                if projection.alias_or_name == name:
                    return self.type_of(projection)
            return None
        if isinstance(query, exp.SetOperation):
            left = query.this
            while isinstance(left, exp.SetOperation):
                left = left.this
            if not isinstance(left, exp.Select):
                return None
            names = [projection.alias_or_name for projection in left.expressions]
            if name not in names:
                return None
            return wider_type(self.branch_types(query, names.index(name)))
        if isinstance(query, exp.Values):
            alias = query.args.get("alias")
            names = [column.name for column in alias.columns] if alias is not None else []
            if name not in names:
                return None
            index = names.index(name)
            rows = [row.expressions for row in query.expressions if isinstance(row, exp.Tuple)]
            return wider_type(
                [self.type_of(row[index]) if index < len(row) else None for row in rows]
            )
        return None

    def array_type(self, node: exp.Array) -> SparkType | None:
        """``array(...)``: an array of its elements' wider type (of NULLs: ``array<void>``);
        known so that its order can be Spark's (nested_order.py)."""
        types = [self.type_of(element) for element in node.expressions]
        if not types or any(t is None for t in types):
            return None
        element = "void" if set(types) == {"void"} else wider_type(types)
        return None if element is None else f"array<{type_text(element)}>"

    def struct_type(self, node: exp.Struct) -> SparkType | None:
        """``struct(...)`` / ``named_struct(...)`` of named, typed fields."""
        fields: list[str] = []
        for field in node.expressions:
            if not isinstance(field, exp.PropertyEQ):
                return None
            name, field_type = field.name, self.type_of(field.expression)
            if field_type is None or not _SIMPLE_FIELD_NAME.fullmatch(name):
                return None
            fields.append(f"{name}:{type_text(field_type)}")
        return f"struct<{','.join(fields)}>" if fields else None

    def sequence_type(self, node: exp.Expr) -> SparkType | None:
        """``sequence(start, stop[, step])`` of integers: an array of the wider of the
        start's and stop's types (Spark's; DuckDB's is an array of BIGINTs)."""
        bounds = [self.type_of(node.args.get("start")), self.type_of(node.args.get("end"))]
        element = wider_type(bounds)
        return f"array<{element}>" if element in INTEGRAL_TYPES else None

    def branch_types(self, query: exp.Expr, index: int) -> list[SparkType | None]:
        """The types of the ``index``-th column of each SELECT of a set operation."""
        if isinstance(query, exp.SetOperation):
            return self.branch_types(query.this, index) + self.branch_types(query.expression, index)
        if isinstance(query, exp.Select) and index < len(query.expressions):
            return [self.type_of(query.expressions[index])]
        if isinstance(query, exp.Subquery):
            return self.branch_types(query.this, index)
        return [None]

    def record_set_text_types(self, node: exp.Expr) -> None:
        """The types each SELECT's values have where the set operation ``node`` (or one
        nested in it) widens their column to STRING; nothing when no column widens."""
        branches = set_branches(node)
        if not all(isinstance(branch, exp.Select) for branch in branches):
            return
        widths = {len(branch.expressions) for branch in branches}
        if len(widths) != 1:
            return
        width = widths.pop()
        columns = [self.text_types(node, index) for index in range(width)]
        widened = [self.widened_type(node, index) for index in range(width)]
        texts = any(any(t is not None for t in column) for column in columns)
        if texts:
            self.set_text_types[id(node)] = tuple(zip(*columns, strict=True))
        if any(column_type is not None for column_type in widened):
            self.set_widened_types[id(node)] = tuple(widened)
        if texts or id(node) in self.set_widened_types:
            self.set_branch_columns[id(node)] = tuple(
                tuple(self.spelled(p, self.scopes.get(id(branch))) for p in branch.expressions)
                for branch in branches
            )

    def spelled(self, projection: exp.Expr, scope: Scope | None) -> str | None:
        """A SELECT item's name as Spark spells it (the qualified copy's names are in lower
        case): an alias as written, a column as its relation spells it; None where a
        column's is not known (a column of a set operation)."""
        name = projection.alias_or_name
        alias = projection.args.get("alias") if isinstance(projection, exp.Alias) else None
        written = alias.meta.get(WRITTEN_NAME) if isinstance(alias, exp.Identifier) else None
        # (An identifier the qualification renamed keeps its meta: the written name is
        # taken where it is the same name only.)
        if isinstance(written, str) and written.lower() == name.lower():
            return written
        value = projection.unalias()
        if not isinstance(value, exp.Column) or value.name != name:
            return name
        source = scope.sources.get(value.table) if scope is not None else None
        if isinstance(source, exp.Table):
            return self.spellings.get(source.name.lower(), {}).get(name)
        return self.column_spelled(source, name) if isinstance(source, Scope) else None

    def column_spelled(self, source: Scope, name: str) -> str | None:
        """The spelling of the column ``name`` of a derived table, CTE or VALUES."""
        inner = source.expression
        if isinstance(inner, exp.Select):
            renamed = _written_columns(inner)
            for index, item in enumerate(inner.expressions):
                if item.alias_or_name == name:
                    if renamed is not None and index < len(renamed):
                        return renamed[index]  # AS d(X, y): moved into the SELECT's aliases
                    return self.spelled(item, source)
        if isinstance(inner, exp.Values) and isinstance(inner.args.get("alias"), exp.TableAlias):
            for column in inner.args["alias"].columns:
                if column.name == name and WRITTEN_NAME in column.meta:
                    return str(column.meta[WRITTEN_NAME])
        return None

    def widened_type(self, query: exp.Expr, index: int) -> SparkType | None:
        """The type a set operation widens its ``index``-th column to where DuckDB would
        widen it otherwise: a DECIMAL, when a SELECT's value has another type (DuckDB
        widens a BIGINT as a DECIMAL(19, 0) where Spark takes a DECIMAL(20, 0)), or a
        DOUBLE beside a FLOAT (DuckDB takes a FLOAT for a FLOAT and a DECIMAL); else None."""
        widened = self.set_column_type(query, index)
        own_types = self.branch_types(query, index)
        if widened == "double" and "float" in own_types:
            return widened
        if not isinstance(widened, DecimalType):
            return None
        if all(own == widened for own in own_types):
            return None
        return widened

    def set_column_type(self, query: exp.Expr, index: int) -> SparkType | None:
        """The type of the ``index``-th column of ``query``, widened pair by pair as Spark
        widens nested set operations."""
        if isinstance(query, exp.SetOperation):
            left = self.set_column_type(query.this, index)
            return _wider_of_two(left, self.set_column_type(query.expression, index))
        if isinstance(query, exp.Subquery):
            return self.set_column_type(query.this, index)
        if isinstance(query, exp.Select) and index < len(query.expressions):
            return self.type_of(query.expressions[index])
        return None

    def text_types(
        self, query: exp.Expr, index: int, in_text: bool = False
    ) -> list[SparkType | None]:
        """For each SELECT of ``query``: the type its ``index``-th value has where Spark
        turns it into text, else None; ``in_text`` when the set operation ``query`` belongs
        to widens the column to STRING."""
        own = self.set_column_type(query, index)
        if in_text and own != "string":
            return [own] * len(set_branches(query))
        if isinstance(query, exp.Subquery) and not query.alias:
            return self.text_types(query.this, index, in_text)
        if own == "string" and isinstance(query, exp.SetOperation):
            return self.text_types(query.this, index, True) + self.text_types(
                query.expression, index, True
            )
        return [None] * len(set_branches(query))

    def arithmetic(
        self, node: exp.Expr, operator: str, left_operand: exp.Expr, right_operand: exp.Expr
    ) -> SparkType | None:
        """The type of ``node``, ``left_operand operator right_operand`` (pmod as ``%``)."""
        left, right = self.type_of(left_operand), self.type_of(right_operand)
        if operator == "/" and left == "void":
            return "double"  # Spark divides a NULL dividend as a DOUBLE
        if left == right == "void":
            return "double"  # NULL + NULL: two DOUBLE NULLs
        # A NULL beside a number takes its type.
        left = right if left == "void" and _is_numeric(right) else left
        right = left if right == "void" and _is_numeric(left) else right
        if "string" in (left, right) and all(
            _is_numeric(t) or t == "string" for t in (left, right)
        ):
            # Spark casts a STRING operand to DOUBLE (a number that does not read: NULL).
            self.string_operands[id(node)] = (left == "string", right == "string")
            return "double"
        if not _is_numeric(left) or not _is_numeric(right):
            return None
        if isinstance(left, DecimalType) or isinstance(right, DecimalType):
            if left in _FRACTIONAL or right in _FRACTIONAL:
                return "double"
            assert left is not None
            assert right is not None
            left_decimal = as_decimal(left, left_operand)
            right_decimal = as_decimal(right, right_operand)
            if left_decimal is None or right_decimal is None:
                return None
            self.operands[id(node)] = (left_decimal, right_decimal)
            return result_type(operator, left_decimal, right_decimal, self.allow_precision_loss)
        if operator == "/":
            return "double"
        return _wider_of_two(left, right)

    def aggregate(
        self,
        node: exp.Expr,
        of_decimal: Callable[[DecimalType], DecimalType],
        of_integral: str,
        of_fractional: str,
    ) -> SparkType | None:
        value = node.this
        if isinstance(value, exp.Distinct):
            value = value.expressions[0] if len(value.expressions) == 1 else None
        argument = self.type_of(value)
        if isinstance(argument, DecimalType):
            if isinstance(node, exp.Avg):
                # Spark divides the sum by the count as a DECIMAL(20, 0), straight to the
                # average's type (its DecimalDivideWithOverflowCheck).
                self.operands[id(node)] = (sum_type(argument), COUNT_TYPE)
            return of_decimal(argument)
        if isinstance(node, exp.Avg) and argument == "timestamp":
            # Spark casts a TIMESTAMP to DOUBLE (seconds since the epoch) to average it.
            self.timestamp_averages.add(id(node))
            return "double"
        if _is_integral(argument):
            return of_integral
        if argument in _FRACTIONAL or argument == "void":
            return of_fractional  # Spark casts a NULL to DOUBLE (its default numeric type)
        return None

    def rounding(self, node: exp.Expr) -> SparkType | None:
        """round/bround: a DECIMAL keeps min(s, d) fractional digits and gains one integral
        digit (for the carry); other numbers keep their type."""
        if isinstance(node, exp.Round):
            value, digits = node.this, node.args.get("decimals")
        else:
            value, digits = [*node.expressions, None, None][:2]
        argument = _null_as_double(self.type_of(value))
        if not isinstance(argument, DecimalType):
            return argument if _is_numeric(argument) else None
        scale = 0 if digits is None else _integer_literal_value(digits)
        if scale is None:
            return None
        integral_digits = argument.precision - argument.scale + 1
        if scale < 0:
            return DecimalType(min(max(integral_digits, -scale + 1), MAX_PRECISION), 0)
        new_scale = min(argument.scale, scale)
        return DecimalType(min(integral_digits + new_scale, MAX_PRECISION), new_scale)

    def floor_or_ceil(self, node: exp.Floor | exp.Ceil) -> SparkType | None:
        """floor/ceil: a DECIMAL with a scale keeps its integral digits and gains one (for
        the carry), scale 0; a DECIMAL(p, 0) stays as it is; other numbers (a NULL too) are
        BIGINT."""
        argument = _null_as_double(self.type_of(node.this))
        if isinstance(argument, DecimalType):
            if argument.scale == 0:
                return argument
            integral_digits = argument.precision - argument.scale + 1
            return DecimalType(min(integral_digits, MAX_PRECISION), 0)
        return "bigint" if _is_numeric(argument) else None


def _is_function(node: exp.Expr, name: str) -> bool:
    return isinstance(node, exp.Anonymous) and str(node.this).upper() == name


# The functions sqlglot leaves anonymous whose translation reads Spark types.
_EPOCH_TIMESTAMPS = ("TIMESTAMP_SECONDS", "TIMESTAMP_MILLIS", "TIMESTAMP_MICROS")
_TYPED_FUNCTIONS = ("BROUND", "PMOD", "DATE_PART", "DATEPART", "CRC32")
# The nodes whose types the translation reads.
_RECORDED = (
    exp.BitwiseLeftShift,  # the width Java masks the shift count to
    exp.BitwiseRightShift,
    # a STRUCT or ARRAY is compared in Spark's order (nested_order.py)
    exp.Max,
    exp.Min,
    exp.Ordered,
    exp.Group,  # its keys' types (a DOUBLE key's -0.0 is shown as 0.0)
    exp.Distinct,  # its SELECT's column types (so too)
    exp.ArraySort,  # sort_array / array_sort: its array's type
    exp.ArgMax,  # max_by / min_by: its ordering's type
    exp.ArgMin,
    exp.GenerateSeries,  # its element type (Spark: the bounds', DuckDB: BIGINT)
    exp.Nullif,  # its comparison's casts (a STRING beside a number)
    exp.Add,
    exp.Sub,
    exp.Mul,
    exp.Div,
    exp.Mod,
    exp.IntDiv,
    exp.Sum,
    exp.Avg,
    exp.Round,
    exp.Floor,
    exp.Ceil,
    exp.Greatest,
    exp.Least,
    exp.Anonymous,
    exp.Literal,
    exp.Coalesce,
    exp.Case,
    exp.If,
    exp.Nvl2,
    exp.Union,
    exp.Except,
    exp.Intersect,
    *_BINARY_COMPARISONS,
    exp.Between,
    exp.In,
    exp.Concat,
    exp.DPipe,
    exp.ConcatWs,
    exp.Hex,
    exp.ToBase64,
    exp.Cast,  # try_cast's value's type; a cast to STRING's value's type
    *DATE_PARTS,
    exp.Extract,
    exp.Array,  # its elements' types (DECIMALs widened to one, as Spark does)
    exp.TimestampAdd,  # its timestamp's type (a DATE gives Spark's TIMESTAMP)
    exp.Lag,  # its value's and default's types (the default is cast to the value's)
    exp.Lead,
)
_NODE_NUMBER = "spark_typing_number"


def _translation_reads_type(node: exp.Expr) -> bool:
    """Whether the translation of ``node`` depends on its Spark type (a literal only if
    it is a DECIMAL one, an unknown function only if it is bround, pmod or date_part, an IN
    only of a list, lag/lead only with a default)."""
    if isinstance(node, exp.In):
        return bool(compared_pairs(node))
    if isinstance(node, exp.Literal):
        return isinstance(literal_type(node), DecimalType)
    if isinstance(node, exp.Anonymous):
        return node.name.upper() in _TYPED_FUNCTIONS
    if isinstance(node, exp.Array):
        return len(node.expressions) > 1
    if isinstance(node, exp.Lag | exp.Lead):
        return node.args.get("default") is not None
    if isinstance(node, exp.Cast) and not isinstance(node, exp.TryCast):
        return _is_text_cast(node)
    return True


def mark_typed_nodes(tree: exp.Expr) -> list[exp.Expr]:
    """The nodes of ``tree`` whose Spark types :func:`annotate` records, each numbered in
    its ``meta`` so that its twin in a qualified copy is found; empty (and nothing marked)
    when the translation reads none of their types (typing costs a qualification of the
    whole statement). Where a set operation's SELECT may name its columns by a ``*``,
    each identifier's name as written too (the qualification writes it in lower case)."""
    recorded: list[exp.Expr] = list(tree.find_all(*_RECORDED))
    if not any(_translation_reads_type(node) for node in recorded):
        return []
    if tree.find(exp.SetOperation) is not None and tree.find(exp.Star) is not None:
        for identifier in tree.find_all(exp.Identifier):
            identifier.meta[WRITTEN_NAME] = identifier.name
        for alias in tree.find_all(exp.TableAlias):
            alias.meta[_WRITTEN_COLUMNS] = tuple(column.name for column in alias.columns)
    for number, node in enumerate(recorded):
        node.meta[_NODE_NUMBER] = number
    return recorded


# A derived table's column names as its alias writes them (``AS d(X, y)``), which the
# qualification moves into its SELECT's aliases, in lower case.
_WRITTEN_COLUMNS = "spark_written_columns"


def _written_columns(query: exp.Expr) -> tuple[str, ...] | None:
    """The column names the alias of the derived table ``query`` gives, as written."""
    parent = query.parent
    alias = parent.args.get("alias") if isinstance(parent, exp.Subquery) else None
    written = alias.meta.get(_WRITTEN_COLUMNS) if isinstance(alias, exp.TableAlias) else None
    return written if isinstance(written, tuple) and written else None


@dataclass(frozen=True)
class StatementTypes:
    """The Spark types :func:`annotate` derived for a statement's qualified copy ``typed``:
    ``type_of`` a node of it (None: not derived), and ``written`` the node of the user's
    statement a recorded node of it is the copy of (to name it in an error)."""

    typed: exp.Expr
    type_of: Callable[[exp.Expr | None], SparkType | None]
    written: Callable[[exp.Expr], exp.Expr | None]


def annotate(
    recorded: list[exp.Expr],
    typed: exp.Expr | None,
    schemas: dict[str, dict[str, str]],
    *,
    allow_precision_loss: bool = True,
) -> StatementTypes | None:
    """Record the Spark types of the ``recorded`` nodes (see the module's docstring; marked
    by :func:`mark_typed_nodes`), read from ``typed``, the statement's qualified copy
    (:func:`sparkshim.qualified.qualified_copy`, None when sqlglot could not make it),
    given the Spark ``schemas`` of the relations it reads, by their registered names; the
    types of the whole copy, or None where it could not be typed."""
    typer: _Typer | None = None
    if typed is not None:
        try:
            typer = _Typer(schemas, allow_precision_loss)
            typer.run(typed)
        except (OptimizeError, SqlglotError, KeyError, ValueError):
            typer = None  # untyped: the translation decides at run time
    found: dict[int, dict[str, object]] = {}  # by the recorded node's number
    written: dict[int, exp.Expr] = {}  # id of a typed node -> the recorded node it copies
    if typer is not None and typed is not None:
        for node in typed.find_all(*_RECORDED):
            typed_number = node.meta.get(_NODE_NUMBER)
            if typed_number is None:
                continue
            written[id(node)] = recorded[typed_number]
            recorded_meta = typer.recorded(node)
            if recorded_meta:
                found.setdefault(typed_number, recorded_meta)
    for number, marked in enumerate(recorded):
        del marked.meta[_NODE_NUMBER]
        marked.meta.update(found.get(number, {}))
    if typer is None or typed is None:
        return None
    return StatementTypes(typed, typer.type_of, lambda node: written.get(id(node)))
