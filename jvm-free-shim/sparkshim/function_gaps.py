"""Spark functions DuckDB lacks or answers differently, as DuckDB expressions.

Each builder takes its arguments already translated (see :mod:`sparkshim.translate`, which
dispatches to them) and returns an expression with Spark's answer; none of them needs the
operands' run-time types.
"""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal, InvalidOperation

from sqlglot import exp

__all__ = [
    "CAST_SHORTHANDS",
    "bin_string",
    "binary_pad",
    "btrim",
    "epoch_timestamp",
    "fold_integral_round",
    "is_binary",
    "map_contains_key",
    "null_safe_contains",
    "overlaps_itself",
    "replace_with_empty",
    "substring_index",
]

# Spark's cast-shorthand functions (`decimal(x)` is CAST(x AS DECIMAL(10,0)), ...).
CAST_SHORTHANDS = {
    "TINYINT": "TINYINT",
    "SMALLINT": "SMALLINT",
    "INT": "INT",
    "BIGINT": "BIGINT",
    "FLOAT": "FLOAT",
    "DOUBLE": "DOUBLE",
    "DECIMAL": "DECIMAL(10, 0)",
    "BOOLEAN": "BOOLEAN",
    "STRING": "STRING",
    "BINARY": "BINARY",
    "DATE": "DATE",
    "TIMESTAMP": "TIMESTAMP",
}


def _fn(name: str, *args: exp.Expr) -> exp.Anonymous:
    return exp.Anonymous(this=name, expressions=list(args))


def _c(node: exp.Expr) -> exp.Expr:
    return node.copy()


# ---- BINARY lpad / rpad ----

_BINARY_TYPES = (exp.DType.BINARY, exp.DType.VARBINARY)


def is_binary(node: exp.Expr) -> bool:
    """Whether ``node`` (a Spark expression, before translation) is visibly BINARY:
    unhex(), X'..', encode(), CAST(.. AS BINARY)."""
    if isinstance(node, (exp.Unhex, exp.HexString, exp.Encode)):
        return True
    if isinstance(node, (exp.Cast, exp.TryCast)):
        return node.to.this in _BINARY_TYPES
    return False


def binary_pad(left: bool, value: exp.Expr, length: exp.Expr, pad: exp.Expr | None) -> exp.Expr:
    """Spark's lpad/rpad of BINARY ``value`` with BINARY ``pad`` (default a zero byte):
    ``length`` bytes, truncated to the first ``length`` bytes, unchanged under an empty pad.
    Computed on the hex digits (two per byte, so DuckDB's character padding and truncation
    fall on byte boundaries)."""
    digits = _fn("HEX", _c(value))
    pad_digits = _fn("HEX", _c(pad)) if pad is not None else exp.Literal.string("00")
    width = exp.Mul(this=exp.Paren(this=_c(length)), expression=exp.Literal.number(2))
    padded = _fn("LPAD" if left else "RPAD", digits, width, pad_digits)
    truncated = _fn("LEFT", digits.copy(), width.copy())
    short_or_unpadded = exp.or_(
        exp.LTE(this=width.copy(), expression=_fn("LENGTH", digits.copy())),
        exp.EQ(this=pad_digits.copy(), expression=exp.Literal.string("")),
    )
    chosen = exp.Case(ifs=[exp.If(this=short_or_unpadded, true=truncated)], default=padded)
    positive = exp.Case(
        ifs=[
            exp.If(
                this=exp.LTE(this=_c(length), expression=exp.Literal.number(0)),
                true=exp.Literal.string(""),
            )
        ],
        default=chosen,
    )
    return _fn("UNHEX", positive)


# ---- timestamps from epoch numbers ----

_MICROS_PER_UNIT = {
    "TIMESTAMP_SECONDS": 1_000_000,
    "TIMESTAMP_MILLIS": 1_000,
    "TIMESTAMP_MICROS": 1,
}


def _typeof_in(node: exp.Expr, *names: str) -> exp.Expr:
    return exp.In(this=_fn("TYPEOF", _c(node)), expressions=[exp.Literal.string(n) for n in names])


def epoch_timestamp(function: str, amount: exp.Expr) -> exp.Expr:
    """timestamp_seconds/millis/micros(``amount``) as Spark computes it: integers scaled
    exactly; a DOUBLE/FLOAT scaled and truncated towards zero (NaN and infinities give
    NULL); a DECIMAL scaled exactly, an error where a fraction of a microsecond remains."""
    factor = exp.Literal.number(_MICROS_PER_UNIT[function])
    as_bigint = exp.DataType.build("BIGINT")
    # TRY_CAST and a DECIMAL factor: DuckDB folds constants in the branches not taken too,
    # where a plain CAST or an INTEGER product could overflow.
    integral = exp.Mul(this=exp.TryCast(this=_c(amount), to=as_bigint), expression=factor)
    if function != "TIMESTAMP_SECONDS":
        return _instant(_fn("MAKE_TIMESTAMP", integral))
    as_double = exp.cast(_c(amount), exp.DataType.build("DOUBLE"))
    scaled_double = exp.Mul(this=as_double, expression=factor.copy())
    from_double = exp.Case(
        ifs=[
            exp.If(
                this=_fn("ISFINITE", as_double.copy()),
                true=exp.TryCast(this=_fn("TRUNC", scaled_double), to=as_bigint),
            )
        ]
    )
    scaled = exp.Mul(this=_c(amount), expression=exp.cast(factor.copy(), "DECIMAL(7, 0)"))
    from_decimal = exp.Case(
        ifs=[
            exp.If(
                this=exp.EQ(this=scaled, expression=_fn("TRUNC", scaled.copy())),
                true=exp.TryCast(this=scaled.copy(), to=as_bigint),
            )
        ],
        default=_fn(
            "ERROR",
            exp.Literal.string(
                "[ARITHMETIC_OVERFLOW] Rounding necessary: timestamp_seconds of a DECIMAL "
                "with a fraction of a microsecond"
            ),
        ),
    )
    micros = exp.Case(
        ifs=[
            exp.If(this=_typeof_in(amount, "DOUBLE", "FLOAT"), true=from_double),
            exp.If(
                this=exp.Like(
                    this=_fn("TYPEOF", _c(amount)), expression=exp.Literal.string("DECIMAL%")
                ),
                true=from_decimal,
            ),
        ],
        default=integral,
    )
    return _instant(_fn("MAKE_TIMESTAMP", micros))


def _instant(utc_wall_clock: exp.Expr) -> exp.Expr:
    """A wall-clock time in UTC (DuckDB's MAKE_TIMESTAMP of microseconds since the epoch)
    as the instant it is: Spark's TIMESTAMP, not TIMESTAMP_NTZ."""
    return exp.AtTimeZone(this=utc_wall_clock, zone=exp.Literal.string("UTC"))


# ---- small string/map functions ----


def btrim(value: exp.Expr, characters: exp.Expr | None) -> exp.Expr:
    """Spark's btrim: both ends trimmed of spaces, or of any of ``characters``."""
    if characters is None:
        return exp.Trim(this=_c(value), expression=exp.Literal.string(" "))
    return exp.Trim(this=_c(value), expression=_c(characters))


def map_contains_key(mapping: exp.Expr, key: exp.Expr) -> exp.Expr:
    return _fn("ARRAY_CONTAINS", _fn("MAP_KEYS", _c(mapping)), _c(key))


def null_safe_contains(text: exp.Expr, search: exp.Expr) -> exp.Expr:
    """contains() with a bare NULL operand: Spark's answer is NULL (DuckDB cannot pick an
    overload for an untyped NULL)."""
    if isinstance(text, exp.Null) or isinstance(search, exp.Null):
        return exp.cast(exp.Null(), exp.DType.BOOLEAN)
    return _fn("CONTAINS", _c(text), _c(search))


def replace_with_empty(text: exp.Expr, search: exp.Expr) -> exp.Expr:
    """replace(str, search): Spark's replacement defaults to the empty string."""
    return _fn("REPLACE", _c(text), _c(search), exp.Literal.string(""))


def substring_index(text: exp.Expr, delimiter: exp.Expr, count: exp.Expr) -> exp.Expr:
    """Spark's substring_index: the text before the count-th delimiter from the left (a
    positive count) or after the count-th from the right (a negative one), the whole text
    where it holds fewer, '' for a count of 0 or an empty delimiter; NULL for a NULL
    argument. The text is split at its delimiters, which finds the occurrences Spark's
    search finds only for a delimiter that cannot overlap itself (the caller checks)."""
    parts = _fn("STRING_SPLIT", _c(text), _c(delimiter))
    from_left = _fn("LIST_SLICE", parts, exp.Literal.number(1), _c(count))
    from_right = _fn("LIST_SLICE", parts.copy(), _c(count), exp.Literal.number(-1))
    any_null = exp.or_(
        *(exp.Is(this=_c(e), expression=exp.Null()) for e in (text, delimiter, count))
    )
    empty = exp.or_(
        exp.EQ(this=_c(count), expression=exp.Literal.number(0)),
        exp.EQ(this=_c(delimiter), expression=exp.Literal.string("")),
    )
    return (
        exp.Case()
        .when(any_null, exp.cast(exp.Null(), exp.DType.VARCHAR))
        .when(empty, exp.Literal.string(""))
        .when(
            exp.GT(this=_c(count), expression=exp.Literal.number(0)),
            _fn("ARRAY_TO_STRING", from_left, _c(delimiter)),
        )
        .else_(_fn("ARRAY_TO_STRING", from_right, _c(delimiter)))
    )


def overlaps_itself(delimiter: str) -> bool:
    """Whether two occurrences of ``delimiter`` can overlap ('aa' in 'aaa', 'aba' in
    'ababa'): some proper prefix of it is also its suffix."""
    return any(delimiter[:size] == delimiter[-size:] for size in range(1, len(delimiter)))


def bin_string(value_as_bigint: exp.Expr) -> exp.Expr:
    """bin(): the BIGINT's two's-complement binary digits (DuckDB's BIN of a BIGINT)."""
    return _fn("BIN", value_as_bigint)


# ---- round/bround of integral literals with a negative scale ----

_INTEGRAL_BITS = {
    exp.DType.TINYINT: 8,
    exp.DType.SMALLINT: 16,
    exp.DType.INT: 32,
    exp.DType.BIGINT: 64,
}


def _integral_literal(node: exp.Expr) -> tuple[int, exp.DType] | None:
    """A Spark integral literal's value and type (1, 1Y, -128Y, 9223372036854775807L)."""
    sign = 1
    if isinstance(node, exp.Neg):
        sign, node = -1, node.this
    if isinstance(node, (exp.Cast, exp.TryCast)) and node.to.this in _INTEGRAL_BITS:
        kind = node.to.this
        node = node.this
    else:
        kind = exp.DType.INT
    if not isinstance(node, exp.Literal) or not node.is_int:
        return None
    value = sign * int(node.this)
    if kind == exp.DType.INT and not -(2**31) <= value < 2**31:
        kind = exp.DType.BIGINT  # an unsuffixed literal beyond INT is a BIGINT
    bits = _INTEGRAL_BITS[kind]
    if not -(2 ** (bits - 1)) <= value < 2 ** (bits - 1):
        return None
    return value, kind


def fold_integral_round(node: exp.Expr, half_even: bool) -> exp.Expr | None:
    """round/bround(integral literal, negative literal scale) computed as Spark does: the
    value rounded as a BigDecimal, then narrowed back to its type by two's-complement
    wrap-around (Java's byteValue()/shortValue()/...), e.g. round(-128Y, -1) = 126Y.
    None where the arguments are not such literals."""
    args = (
        [node.this, node.args.get("decimals")] if isinstance(node, exp.Round) else node.expressions
    )
    if len(args) != 2 or args[1] is None:
        return None
    literal = _integral_literal(args[0])
    scale = _integral_literal(args[1])
    if literal is None or scale is None or scale[0] >= 0:
        return None
    value, kind = literal
    quantum = Decimal(1).scaleb(-scale[0])
    mode = ROUND_HALF_EVEN if half_even else ROUND_HALF_UP
    try:
        rounded = int(Decimal(value).quantize(quantum, rounding=mode))
    except InvalidOperation:  # a scale beyond the context's exponent range
        return None
    bits = _INTEGRAL_BITS[kind]
    wrapped = (rounded + 2 ** (bits - 1)) % 2**bits - 2 ** (bits - 1)
    number = exp.Literal.number(abs(wrapped))
    signed = exp.Neg(this=number) if wrapped < 0 else number
    return exp.Cast(this=signed, to=exp.DataType.build(kind))
