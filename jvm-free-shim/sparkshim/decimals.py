"""Spark's DECIMAL arithmetic in DuckDB, exact, never through DOUBLE.

Each operand is first cast to the DECIMAL Spark widens it to (exact: the type holds it),
and the result is rounded HALF_UP to Spark's result type, NULL when it does not fit
(Spark with ANSI mode off). Where DuckDB's own DECIMAL arithmetic is provably exact (the
exact result has at most 38 digits: DuckDB's DECIMAL is a 128-bit integer) it does the
work, and a ``TRY_CAST`` rounds and checks the result. Elsewhere (products of more than 38
digits, and every division, which DuckDB computes in DOUBLE) the SQL calls
:data:`FUNCTION_NAME`, a scalar function over Arrow batches that does what Spark's
``Decimal`` class does with Python's ``decimal`` module; :func:`register` adds it to a
DuckDB connection.

>>> compute("/", "1", "3", 38, 6)
'0.333333'
>>> compute("*", "99999999999999999999", "99999999999999999999", 38, 0) is None
True
"""

from __future__ import annotations

import decimal
from collections.abc import Callable

import duckdb
import pyarrow as pa
from duckdb.func import FunctionNullHandling, PythonUDFType
from sqlglot import exp

from sparkshim.spark_typing import COUNT_TYPE, MAX_PRECISION, DecimalType

__all__ = [
    "FUNCTION_NAME",
    "arithmetic",
    "average",
    "compute",
    "integral_divide",
    "register",
    "wide_sum",
]

FUNCTION_NAME = "sparkshim_decimal_arithmetic"

# Exact for sums, differences and remainders of 38-digit operands; roomy enough to round
# any result to a scale of at most 38 digits.
_EXACT = decimal.Context(
    prec=200, rounding=decimal.ROUND_HALF_UP, Emax=10_000, Emin=-10_000, traps=[]
)
# Spark's Decimal multiplies and takes remainders in a MathContext of 38 digits, HALF_UP.
_SPARK_CONTEXT = decimal.Context(prec=MAX_PRECISION, rounding=decimal.ROUND_HALF_UP, traps=[])
# The widest DECIMAL DuckDB stores in 64 bits.
_INT64_DIGITS = 18
# Spark's Decimal divides to 38 fractional digits, HALF_UP, before the result's rounding.
_DIVISION_SCALE = 38


def compute(
    operator: str, left: str | None, right: str | None, precision: int, scale: int
) -> str | None:
    """``left operator right`` (``+ - * / %``) as Spark computes it for DECIMAL(precision,
    scale), as plain text; None for a NULL operand, a zero divisor, or a result that does
    not fit. ``div`` gives the quotient's integral part as a Java long."""
    if left is None or right is None:
        return None
    x, y = decimal.Decimal(left), decimal.Decimal(right)
    if operator in ("/", "%", "div") and y == 0:
        return None
    if operator == "div":  # the integral part of the quotient, as Java's long (wrapping)
        x_numerator, x_denominator = x.as_integer_ratio()
        y_numerator, y_denominator = y.as_integer_ratio()
        whole = abs(x_numerator * y_denominator) // abs(x_denominator * y_numerator)
        if (x_numerator < 0) != (y_numerator < 0):
            whole = -whole
        return str((whole + 2**63) % 2**64 - 2**63)
    if operator == "+":
        exact = _EXACT.add(x, y)
    elif operator == "-":
        exact = _EXACT.subtract(x, y)
    elif operator == "*":
        exact = _SPARK_CONTEXT.multiply(x, y)
    elif operator == "/":
        exact = _divide_half_up(x, y, _DIVISION_SCALE)
    elif operator == "%":
        exact = _EXACT.remainder(x, y)  # the sign of the dividend, as in Java
    else:
        raise ValueError(operator)
    return _fitted(exact, precision, scale)


def _divide_half_up(x: decimal.Decimal, y: decimal.Decimal, scale: int) -> decimal.Decimal:
    """``x / y`` rounded HALF_UP (ties away from zero) to ``scale`` fractional digits."""
    x_numerator, x_denominator = x.as_integer_ratio()
    y_numerator, y_denominator = y.as_integer_ratio()
    numerator = abs(x_numerator * y_denominator) * 10**scale
    denominator = abs(x_denominator * y_numerator)
    whole, remainder = divmod(numerator, denominator)
    if 2 * remainder >= denominator:
        whole += 1
    negative = (x_numerator < 0) != (y_numerator < 0)
    return decimal.Decimal(-whole if negative else whole).scaleb(-scale, _EXACT)


def _fitted(value: decimal.Decimal, precision: int, scale: int) -> str | None:
    """``value`` rounded HALF_UP to ``scale`` digits, or None beyond ``precision`` digits
    (Spark's Decimal.toPrecision with null on overflow)."""
    rounded = value.quantize(decimal.Decimal(1).scaleb(-scale), context=_EXACT)
    # copy_abs and scaleb are exact; abs() and ** would round to the default 28 digits.
    if rounded.copy_abs() >= decimal.Decimal(1).scaleb(precision - scale):
        return None
    return format(rounded.copy_abs() if rounded.is_zero() else rounded, "f")  # no "-0"


def _compute_batch(
    operators: pa.Array,
    lefts: pa.Array,
    rights: pa.Array,
    precisions: pa.Array,
    scales: pa.Array,
) -> pa.Array:
    # The operator, precision and scale are literals of the call: one value per batch.
    if len(lefts) == 0:
        return pa.array([], type=pa.string())
    operator, precision, scale = (c[0].as_py() for c in (operators, precisions, scales))
    return pa.array(
        [
            compute(operator, left, right, precision, scale)
            for left, right in zip(lefts.to_pylist(), rights.to_pylist(), strict=True)
        ],
        type=pa.string(),
    )


def register(connection: duckdb.DuckDBPyConnection) -> None:
    """Make :data:`FUNCTION_NAME` callable on ``connection``."""
    connection.create_function(
        FUNCTION_NAME,
        _compute_batch,
        ["VARCHAR", "VARCHAR", "VARCHAR", "INTEGER", "INTEGER"],
        "VARCHAR",
        type=PythonUDFType.ARROW,
        null_handling=FunctionNullHandling.SPECIAL,
        side_effects=False,
    )


# ---- the SQL ----


def _cast(value: exp.Expr, to: DecimalType | str, *, try_: bool = False) -> exp.Expr:
    target = exp.DataType.build(to.sql() if isinstance(to, DecimalType) else to, dialect="duckdb")
    builder = exp.TryCast if try_ else exp.Cast
    return builder(this=value, to=target)


def _exactly(
    operator: str, left_text: exp.Expr, right_text: exp.Expr, result: DecimalType | str
) -> exp.Expr:
    """A call of :data:`FUNCTION_NAME` on two operands given as text, cast to ``result``
    (a DECIMAL, or BIGINT for ``div``)."""
    precision, scale = (
        (result.precision, result.scale) if isinstance(result, DecimalType) else (38, 0)
    )
    call = exp.Anonymous(
        this=FUNCTION_NAME,
        expressions=[
            exp.Literal.string(operator),
            left_text,
            right_text,
            exp.Literal.number(precision),
            exp.Literal.number(scale),
        ],
    )
    return _cast(call, result)


def _text(value: exp.Expr, decimal_type: DecimalType) -> exp.Expr:
    """``value`` as a DECIMAL of ``decimal_type`` (which holds it), then as exact text."""
    return _cast(_cast(value, decimal_type), "VARCHAR")


def _integral_digits(decimal_type: DecimalType) -> int:
    return decimal_type.precision - decimal_type.scale


def arithmetic(
    operator: str,
    left: exp.Expr,
    left_type: DecimalType,
    right: exp.Expr,
    right_type: DecimalType,
    result: DecimalType,
) -> exp.Expr:
    """DuckDB SQL for Spark's ``left operator right`` (``+ - * / %``) of DECIMAL operands
    of ``left_type`` and ``right_type`` (as Spark widened them), typed ``result``."""
    left_value, right_value = _cast(left, left_type), _cast(right, right_type)
    scale = max(left_type.scale, right_type.scale)
    integral = max(_integral_digits(left_type), _integral_digits(right_type))
    if operator in ("+", "-") and integral + scale + 1 <= MAX_PRECISION:
        builder = exp.Add if operator == "+" else exp.Sub
        exact = builder(this=left_value, expression=right_value)
        return _cast(exp.Paren(this=exact), result, try_=True)
    if operator == "*" and left_type.precision + right_type.precision <= MAX_PRECISION:
        if left_type.precision + right_type.precision > _INT64_DIGITS:
            # DuckDB multiplies two 64-bit DECIMALs within 18 digits (an overflow error
            # beyond): a 128-bit operand makes it keep every digit of the product.
            wide = DecimalType(max(left_type.precision, _INT64_DIGITS + 1), left_type.scale)
            left_value = _cast(left_value, wide)
        product = exp.Mul(this=left_value, expression=right_value)
        return _cast(exp.Paren(this=product), result, try_=True)
    if operator == "%" and integral + scale <= MAX_PRECISION:
        common = DecimalType(integral + scale, scale)
        divisor = exp.Anonymous(
            this="NULLIF", expressions=[_cast(right_value, common), exp.Literal.number(0)]
        )
        remainder = exp.Mod(this=_cast(left_value, common), expression=divisor)
        return _cast(exp.Paren(this=remainder), result, try_=True)
    if operator == "/" and _fits_integer_division(left, left_type, right, right_type, result):
        return _integer_division(left, left_type, right, right_type, result)
    return _exactly(operator, _text(left, left_type), _text(right, right_type), result)


# An operand of a division in 128-bit integers appears several times in its SQL: beyond
# this many nodes, the division is left to the scalar function instead.
_MAX_REPEATED_NODES = 64


def _fits_integer_division(
    left: exp.Expr,
    left_type: DecimalType,
    right: exp.Expr,
    right_type: DecimalType,
    result: DecimalType,
) -> bool:
    """Whether Spark's quotient can be computed in DuckDB's 128-bit integers: the scaled
    dividend and divisor both hold at most 38 digits."""
    shift = result.scale - left_type.scale + right_type.scale
    small = all(sum(1 for _ in operand.walk()) <= _MAX_REPEATED_NODES for operand in (left, right))
    return (
        small
        and left_type.precision + max(shift, 0) <= MAX_PRECISION
        and right_type.precision + max(-shift, 0) <= MAX_PRECISION
    )


def _power_of_ten(exponent: int) -> exp.Expr:
    return _cast(exp.Literal.number(10**exponent), "HUGEINT")


def _unscaled(value: exp.Expr, decimal_type: DecimalType) -> exp.Expr:
    """The DECIMAL ``value``'s unscaled integer, as a HUGEINT (its digits, without the
    point: a DECIMAL prints every digit of its scale)."""
    digits = exp.Anonymous(
        this="REPLACE",
        expressions=[_text(value, decimal_type), exp.Literal.string("."), exp.Literal.string("")],
    )
    return _cast(digits, "HUGEINT")


def _integer_division(
    left: exp.Expr,
    left_type: DecimalType,
    right: exp.Expr,
    right_type: DecimalType,
    result: DecimalType,
) -> exp.Expr:
    """Spark's DECIMAL quotient in 128-bit integers: the magnitudes' quotient at the
    result's scale, rounded HALF_UP as Spark rounds it (first to 38 fractional digits,
    then to the result's scale), signed, NULL beyond the result's precision."""
    shift = result.scale - left_type.scale + right_type.scale
    dividend_sign = exp.Anonymous(this="SIGN", expressions=[_unscaled(left, left_type)])
    divisor_sign = exp.Anonymous(this="SIGN", expressions=[_unscaled(right, right_type)])
    dividend: exp.Expr = exp.Abs(this=_unscaled(left, left_type))
    divisor: exp.Expr = exp.Abs(this=_unscaled(right, right_type))
    divisor = exp.Anonymous(this="NULLIF", expressions=[divisor, exp.Literal.number(0)])
    if shift > 0:
        dividend = exp.Mul(this=dividend, expression=_power_of_ten(shift))
    elif shift < 0:
        divisor = exp.Mul(this=divisor, expression=_power_of_ten(-shift))
    quotient = exp.IntDiv(this=dividend, expression=divisor)
    remainder = exp.Mod(this=dividend.copy(), expression=divisor.copy())
    # Up when the remainder is at least half the divisor once rounded to 38 digits: for
    # m digits between the result's scale and 38, (divisor - 2 * remainder) * 10^m <=
    # divisor, written without a product that could overflow.
    slack = exp.Sub(
        this=exp.Paren(this=exp.Sub(this=divisor.copy(), expression=remainder)),
        expression=remainder.copy(),
    )
    between = _DIVISION_SCALE - result.scale
    threshold: exp.Expr = exp.Literal.number(0)
    if between > 0:
        threshold = exp.IntDiv(this=divisor.copy(), expression=_power_of_ten(between))
    round_up = exp.Case(
        ifs=[exp.If(this=exp.LTE(this=slack, expression=threshold), true=exp.Literal.number(1))],
        default=exp.Literal.number(0),
    )
    magnitude = exp.Paren(this=exp.Add(this=quotient, expression=round_up))
    signed = exp.Mul(
        this=exp.Mul(this=magnitude, expression=dividend_sign), expression=divisor_sign
    )
    # The unscaled integer back to a DECIMAL: a product with 10^-scale is exact.
    unit = _cast(exp.Literal.number(f"{decimal.Decimal(1).scaleb(-result.scale):f}"), result)
    as_decimal = exp.Mul(this=_cast(signed, DecimalType(MAX_PRECISION, 0)), expression=unit)
    fits = exp.LT(this=exp.Abs(this=magnitude.copy()), expression=_power_of_ten(result.precision))
    return exp.Case(
        ifs=[exp.If(this=fits, true=_cast(as_decimal, result))],
    )


# A sum of DECIMALs that may pass 38 digits is summed in two halves of this many digits.
_HALF_DIGITS = 19


def wide_sum(
    value: exp.Expr, total_type: DecimalType, over: Callable[[exp.Expr], exp.Expr]
) -> exp.Expr:
    """DuckDB SQL for Spark's sum, of type ``total_type`` (38 digits), of the DECIMAL
    ``value``s, NULL when it does not fit: DuckDB's own SUM fails beyond its 128 bits, so
    each value's unscaled integer is split into a high and a low half, each half summed
    (``over`` puts the aggregate in its window, if any), and the halves added exactly."""
    scale = total_type.scale
    text = _cast(_cast(value, DecimalType(MAX_PRECISION, scale)), "VARCHAR")
    unscaled = _cast(
        exp.Anonymous(
            this="REPLACE", expressions=[text, exp.Literal.string("."), exp.Literal.string("")]
        ),
        "HUGEINT",
    )
    unit = _cast(exp.Literal.number(10**_HALF_DIGITS), "HUGEINT")
    high = over(exp.Sum(this=exp.IntDiv(this=unscaled, expression=unit)))
    low = over(exp.Sum(this=exp.Mod(this=unscaled.copy(), expression=unit.copy())))

    def scaled(total: exp.Expr, exponent: int) -> exp.Expr:
        return exp.DPipe(
            this=_cast(total, "VARCHAR"), expression=exp.Literal.string(f"E{exponent}")
        )

    return _exactly("+", scaled(high, _HALF_DIGITS - scale), scaled(low, -scale), total_type)


def integral_divide(
    left: exp.Expr, left_type: DecimalType, right: exp.Expr, right_type: DecimalType
) -> exp.Expr:
    """DuckDB SQL for Spark's ``left div right`` of DECIMAL operands: the quotient's
    integral part as a BIGINT (NULL for a zero divisor)."""
    return _exactly("div", _text(left, left_type), _text(right, right_type), "BIGINT")


def average(
    total: exp.Expr, count: exp.Expr, total_type: DecimalType, result: DecimalType
) -> exp.Expr:
    """Spark's avg of a DECIMAL from the SQL of its sum (``total``, of ``total_type``, NULL
    on overflow) and its count: the sum divided by the count (a DECIMAL(20, 0)) to 38
    fractional digits, then rounded to the average's type ``result``, as Spark's
    DecimalDivideWithOverflowCheck does."""
    return _exactly("/", _text(total, total_type), _text(count, COUNT_TYPE), result)
