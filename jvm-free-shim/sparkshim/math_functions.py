"""Spark's math functions where DuckDB's answer differs, as DuckDB expressions.

Spark computes them on DOUBLEs with ``java.lang.Math`` (ANSI mode off): a logarithm of zero
or of a negative number is NULL, not ``-inf``, ``NaN`` or an error; ``isnan(NULL)`` is false;
``signum(NaN)`` is NaN; ``pow`` follows Java's special cases (``pow(1, NaN)`` is NaN, C's is
1); ``log1p`` and ``expm1``, which DuckDB lacks, keep their precision near zero. Each builder
takes its arguments already translated (see :mod:`sparkshim.translate`).
"""

from __future__ import annotations

from sqlglot import exp

__all__ = ["expm1", "is_nan", "log1p", "logarithm", "natural_log", "power", "signum"]


def _fn(name: str, *args: exp.Expr) -> exp.Anonymous:
    return exp.Anonymous(this=name, expressions=list(args))


def _double(value: exp.Expr) -> exp.Expr:
    """``value`` as the DOUBLE Spark's math functions take (a string that is no number is
    NULL, as Spark's implicit cast makes it)."""
    return exp.TryCast(this=value.copy(), to=exp.DataType.build("DOUBLE"))


def _above(value: exp.Expr, floor: float) -> exp.Expr:
    """``value`` where it is above ``floor`` (NaN included: DuckDB orders it above every
    number), else NULL: Spark's rule for a logarithm's argument."""
    return exp.Case(
        ifs=[exp.If(this=exp.GT(this=value.copy(), expression=_number(floor)), true=value.copy())]
    )


def _number(value: float) -> exp.Expr:
    literal = exp.Literal.number(abs(value))
    return exp.Neg(this=literal) if value < 0 else literal


def _nan() -> exp.Expr:
    return exp.Cast(this=exp.Literal.string("NaN"), to=exp.DataType.build("DOUBLE"))


def natural_log(name: str, value: exp.Expr) -> exp.Expr:
    """``ln``, ``log10`` or ``log2`` (DuckDB's function ``name``) of ``value``: NULL for
    zero and below (DuckDB gives -inf, or fails on a negative number)."""
    return _fn(name, _above(_double(value), 0))


def logarithm(base: exp.Expr, value: exp.Expr) -> exp.Expr:
    """``log(base, value)`` as Spark computes it, ``ln(value) / ln(base)``, NULL when either
    is zero or below (``log(1, x)`` is infinite)."""
    return exp.Div(
        this=natural_log("LN", value),
        expression=natural_log("LN", base),
    )


def log1p(value: exp.Expr) -> exp.Expr:
    """``ln(1 + value)``, NULL for -1 and below, exact near zero: where ``1 + value`` rounds,
    its logarithm is scaled by ``value / ((1 + value) - 1)`` (Goldberg's correction)."""
    number = _double(value)
    shifted = exp.Add(this=_number(1), expression=number.copy())
    corrected = exp.Div(
        this=exp.Mul(this=_fn("LN", shifted), expression=number.copy()),
        expression=exp.Paren(this=exp.Sub(this=shifted.copy(), expression=_number(1))),
    )
    return exp.Case(
        ifs=[
            exp.If(this=exp.LTE(this=number.copy(), expression=_number(-1)), true=exp.Null()),
            exp.If(this=_fn("ISINF", number.copy()), true=number.copy()),
            exp.If(this=exp.EQ(this=shifted.copy(), expression=_number(1)), true=number.copy()),
        ],
        default=corrected,
    )


def expm1(value: exp.Expr) -> exp.Expr:
    """``exp(value) - 1``, exact near zero: scaled by ``value / ln(exp(value))`` where
    ``exp(value)`` rounds (Kahan's correction)."""
    number = _double(value)
    power = _fn("EXP", number.copy())
    less_one = exp.Paren(this=exp.Sub(this=power, expression=_number(1)))
    corrected = exp.Div(
        this=exp.Mul(this=less_one, expression=number.copy()),
        expression=_fn("LN", power.copy()),
    )
    return exp.Case(
        ifs=[
            exp.If(this=exp.EQ(this=power.copy(), expression=_number(1)), true=number.copy()),
            exp.If(this=exp.EQ(this=less_one.copy(), expression=_number(-1)), true=_number(-1)),
            exp.If(this=_fn("ISINF", power.copy()), true=power.copy()),
        ],
        default=corrected,
    )


def is_nan(value: exp.Expr) -> exp.Expr:
    """``isnan(value)``: false for NULL (DuckDB's is NULL)."""
    return exp.Coalesce(this=_fn("ISNAN", _double(value)), expressions=[exp.false()])


def signum(value: exp.Expr) -> exp.Expr:
    """``signum(value)`` as a DOUBLE, NaN for NaN (DuckDB's SIGN gives 0)."""
    number = _double(value)
    return exp.Case(
        ifs=[exp.If(this=_fn("ISNAN", number.copy()), true=number.copy())],
        default=exp.Cast(this=_fn("SIGN", number.copy()), to=exp.DataType.build("DOUBLE")),
    )


def power(base: exp.Expr, exponent: exp.Expr) -> exp.Expr:
    """``pow(base, exponent)`` with Java's special cases where C's differ: NaN for a NaN
    exponent (but 1 for a zero one) and for a base of magnitude 1 with an infinite exponent."""
    base_number, exponent_number = _double(base), _double(exponent)
    java_nan = exp.or_(
        _fn("ISNAN", exponent_number.copy()),
        exp.and_(
            exp.EQ(this=_fn("ABS", base_number.copy()), expression=_number(1)),
            _fn("ISINF", exponent_number.copy()),
        ),
    )
    return exp.Case(
        ifs=[exp.If(this=java_nan, true=_nan())],
        default=_fn("POWER", base_number.copy(), exponent_number.copy()),
    )
