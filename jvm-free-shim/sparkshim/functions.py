"""Spark functions DuckDB lacks (or computes differently), built from DuckDB's own.

Each builder takes its arguments already translated, and already cast the way Spark casts
them (translate.py does that), and returns the DuckDB expression of Spark's result with ANSI
mode off.
"""

from __future__ import annotations

from sqlglot import exp

from sparkshim.errors import AnalysisException, UnsupportedSqlError

__all__ = [
    "date_from_unix_date",
    "elt",
    "folded_string",
    "integral_to_binary",
    "months_between",
    "nanvl",
    "next_day",
    "refuse_non_literal",
    "shift_lambda_parameter",
    "skewness",
    "to_binary",
    "zip_with",
]


def _fn(name: str, *args: exp.Expr) -> exp.Anonymous:
    return exp.Anonymous(this=name, expressions=list(args))


def _double(value: exp.Expr) -> exp.Expr:
    return exp.Cast(this=value, to=exp.DataType.build("DOUBLE"))


def _number(value: int | float) -> exp.Expr:
    return exp.Literal.number(value)


def months_between(later: exp.Expr, earlier: exp.Expr, round_off: bool) -> exp.Expr:
    """Spark's ``months_between`` of two TIMESTAMPs: whole months when both fall on the same
    day of the month or both on the last day of their month; otherwise the month difference
    plus the rest in 31-day months, counted in seconds (the time of day included), rounded
    to 8 digits (``Math.round(diff * 1e8) / 1e8``) unless ``round_off`` is false."""

    def months(moment: exp.Expr) -> exp.Expr:
        year_months = exp.Mul(this=_fn("YEAR", moment.copy()), expression=_number(12))
        return exp.Add(this=year_months, expression=_fn("MONTH", moment.copy()))

    def seconds_of_day(moment: exp.Expr) -> exp.Expr:
        hours = exp.Mul(this=_fn("HOUR", moment.copy()), expression=_number(3600))
        minutes = exp.Mul(this=_fn("MINUTE", moment.copy()), expression=_number(60))
        return exp.Add(
            this=exp.Add(this=hours, expression=minutes),
            expression=_fn("SECOND", moment.copy()),
        )

    def last_of_month(moment: exp.Expr) -> exp.Expr:
        day = exp.Cast(this=moment.copy(), to=exp.DataType.build("DATE"))
        return exp.EQ(this=_fn("LAST_DAY", day), expression=day.copy())

    month_difference = _double(
        exp.Sub(this=months(later), expression=exp.Paren(this=months(earlier)))
    )
    whole_months = exp.or_(
        exp.EQ(this=_fn("DAY", later.copy()), expression=_fn("DAY", earlier.copy())),
        exp.and_(last_of_month(later), last_of_month(earlier)),
    )
    day_difference = exp.Sub(this=_fn("DAY", later.copy()), expression=_fn("DAY", earlier.copy()))
    seconds = exp.Sub(
        this=exp.Add(
            this=exp.Mul(this=exp.Paren(this=day_difference), expression=_number(86400)),
            expression=seconds_of_day(later),
        ),
        expression=exp.Paren(this=seconds_of_day(earlier)),
    )
    fraction = exp.Div(this=_double(seconds), expression=_double(_number(31 * 86400)))
    difference: exp.Expr = exp.Add(this=month_difference.copy(), expression=fraction)
    if round_off:
        scaled = exp.Mul(this=exp.Paren(this=difference), expression=_double(_number(100000000)))
        rounded = _fn("FLOOR", exp.Add(this=scaled, expression=_double(_number(0.5))))
        difference = exp.Div(this=rounded, expression=_double(_number(100000000)))
    return exp.Case().when(whole_months, month_difference).else_(difference)


_WEEKDAYS = ("MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY", "SUNDAY")


def next_day(day: exp.Expr, weekday_name: str) -> exp.Expr:
    """Spark's ``next_day`` of a DATE: the first later date that is ``weekday_name`` ('MO',
    'MON' or 'MONDAY', any case); NULL for another name."""
    name = weekday_name.strip().upper()
    matching = [
        number
        for number, weekday in enumerate(_WEEKDAYS, 1)
        if name in (weekday[:2], weekday[:3], weekday)
    ]
    if not matching:
        return exp.Cast(this=exp.Null(), to=exp.DataType.build("DATE"))
    # ISO day numbers: Monday = 1; the gap is 1..7 days.
    gap = exp.Add(
        this=exp.Mod(
            this=exp.Paren(
                this=exp.Sub(this=_number(matching[0] + 6), expression=_fn("ISODOW", day.copy()))
            ),
            expression=_number(7),
        ),
        expression=_number(1),
    )
    return exp.Cast(
        this=exp.Add(this=day.copy(), expression=exp.Cast(this=gap, to=exp.DataType.build("INT"))),
        to=exp.DataType.build("DATE"),
    )


def elt(index: exp.Expr, texts: list[exp.Expr]) -> exp.Expr:
    """Spark's ``elt(n, s1, s2, ...)`` of STRINGs: the n-th (1-based), NULL out of range."""
    case = exp.Case()
    for number, text in enumerate(texts, 1):
        case = case.when(exp.EQ(this=index.copy(), expression=_number(number)), text.copy())
    return case


def nanvl(value: exp.Expr, fallback: exp.Expr) -> exp.Expr:
    """Spark's ``nanvl`` of two DOUBLEs: ``fallback`` when ``value`` is NaN."""
    return exp.Case().when(_fn("ISNAN", value.copy()), fallback.copy()).else_(value.copy())


_INTEGRAL_WIDTHS = {"TINYINT": 1, "SMALLINT": 2, "INTEGER": 4, "BIGINT": 8}


def integral_to_binary(value: exp.Expr, otherwise: exp.Expr, value_type: exp.Expr) -> exp.Expr:
    """``CAST(value AS BINARY)`` as Spark does it for an integral value (given as BIGINT):
    its two's complement bytes, big-endian, as wide as its type (DuckDB's name of it in
    ``value_type``); ``otherwise`` for other types."""
    case = exp.Case()
    for type_name, width in _INTEGRAL_WIDTHS.items():
        # DuckDB's to_hex of a negative value sign-extends it to 16 digits.
        digits = _fn("LPAD", _fn("TO_HEX", value.copy()), _number(16), exp.Literal.string("0"))
        hex_digits = _fn("RIGHT", digits, _number(2 * width))
        case = case.when(
            exp.EQ(this=value_type.copy(), expression=exp.Literal.string(type_name)),
            _fn("UNHEX", hex_digits),
        )
    return case.else_(otherwise)


_BASE64_LETTER = "A-Za-z0-9+/"


def folded_string(node: exp.Expr) -> str | None:
    """The text of a constant string expression (a literal, or concat/lower/upper of
    such), as Spark folds it before it checks a format argument; None for anything else."""
    if isinstance(node, exp.Paren):
        return folded_string(node.this)
    if isinstance(node, exp.Literal):
        return node.this if node.is_string else None
    if isinstance(node, (exp.Lower, exp.Upper)):
        text = folded_string(node.this)
        if text is None:
            return None
        return text.lower() if isinstance(node, exp.Lower) else text.upper()
    if isinstance(node, (exp.Concat, exp.DPipe)):
        parts = node.expressions if isinstance(node, exp.Concat) else [node.this, node.expression]
        texts = [folded_string(part) for part in parts]
        return None if any(text is None for text in texts) else "".join(map(str, texts))
    return None


def to_binary(text: exp.Expr, format_name: str) -> exp.Expr:
    """Spark's ``to_binary(str, fmt)`` for the format 'hex' (an odd count of digits has a
    leading half byte), 'utf-8'/'utf8' or 'base64' (characters outside the alphabet
    ignored, padding optional)."""
    kind = format_name.lower()
    if kind == "hex":
        return _fn("UNHEX", text.copy())
    if kind in ("utf-8", "utf8"):
        return _fn("ENCODE", text.copy())
    if kind == "base64":
        letters = _fn(
            "REGEXP_REPLACE",
            text.copy(),
            exp.Literal.string(f"[^{_BASE64_LETTER}]"),
            exp.Literal.string(""),
            exp.Literal.string("g"),
        )
        padded_length = exp.Mul(
            this=_fn("CEIL", exp.Div(this=_fn("LENGTH", letters.copy()), expression=_number(4.0))),
            expression=_number(4),
        )
        padded = _fn(
            "RPAD",
            letters,
            exp.Cast(this=padded_length, to=exp.DataType.build("INT")),
            exp.Literal.string("="),
        )
        return _fn("FROM_BASE64", padded)
    raise AnalysisException(
        message="[DATATYPE_MISMATCH.INVALID_ARG_VALUE] The fmt value of to_binary must be a "
        f"case-insensitive STRING literal of 'hex', 'utf-8', 'utf8', or 'base64', but got "
        f"'{format_name}'."
    )


def date_from_unix_date(days: exp.Expr) -> exp.Expr:
    """Spark's ``date_from_unix_date``: the DATE ``days`` after 1970-01-01."""
    epoch = exp.Cast(this=exp.Literal.string("1970-01-01"), to=exp.DataType.build("DATE"))
    shifted = exp.Add(this=epoch, expression=exp.Cast(this=days, to=exp.DataType.build("INT")))
    return exp.Cast(this=shifted, to=exp.DataType.build("DATE"))


def refuse_non_literal(function: str, argument: str) -> UnsupportedSqlError:
    """The refusal of ``function`` with a non-literal ``argument``."""
    return UnsupportedSqlError(
        f"{function} with a non-literal {argument}", f"write the {argument} as a literal"
    )


def shift_lambda_parameter(function: exp.Lambda, name: str, offset: int) -> None:
    """Replace each reference to the parameter ``name`` in ``function``'s body by itself
    plus ``offset`` (a nested lambda with a parameter of that name hides it): Spark's
    lambda index counts from 0, DuckDB's from 1."""
    for reference in list(function.this.find_all(exp.Identifier, exp.Column)):
        if isinstance(reference, exp.Identifier) and isinstance(reference.parent, exp.Column):
            continue
        if reference.name != name or (isinstance(reference, exp.Column) and reference.table):
            continue
        if isinstance(reference.parent, exp.Lambda) and reference.arg_key == "expressions":
            continue
        if reference.find_ancestor(exp.Lambda) is not function:
            continue
        shifted = exp.Add(this=exp.to_identifier(name), expression=_number(offset))
        reference.replace(exp.Paren(this=shifted))


def zip_with(left: exp.Expr, right: exp.Expr, function: exp.Lambda) -> exp.Expr:
    """Spark's ``zip_with(a, b, (x, y) -> f)`` of two non-NULL arrays: f over the pairs,
    as many as the longer array has elements (the shorter padded with NULLs)."""
    position = "__zip_position"
    body = function.this.copy()
    for parameter, array in zip(function.expressions, (left, right), strict=True):
        element = exp.Bracket(
            this=array.copy(),
            expressions=[exp.Add(this=exp.to_identifier(position), expression=_number(1))],
            offset=1,
        )
        for reference in list(body.find_all(exp.Identifier, exp.Column)):
            inside_column = isinstance(reference, exp.Identifier) and isinstance(
                reference.parent, exp.Column
            )
            if reference.name == parameter.name and not inside_column:
                reference.replace(element.copy())
    length = _fn("GREATEST", _fn("LEN", left.copy()), _fn("LEN", right.copy()))
    return _fn(
        "LIST_TRANSFORM",
        _fn("RANGE", length),
        exp.Lambda(this=body, expressions=[exp.to_identifier(position)]),
    )


def skewness(value: exp.Expr) -> exp.Expr:
    """Spark's ``skewness`` of a DOUBLE: the population skewness sqrt(n) m3 / m2^1.5, NULL
    when m2 = 0. DuckDB's skewness is the sample one, G1 = g1 sqrt(n (n - 1)) / (n - 2),
    NULL for n = 2 (where Spark's is 0 unless both values are equal)."""
    count = exp.Count(this=value.copy())
    minus = exp.Paren(this=exp.Sub(this=count.copy(), expression=_number(2)))
    population = exp.Div(
        this=exp.Mul(this=_fn("SKEWNESS", value.copy()), expression=minus),
        expression=_fn(
            "SQRT",
            exp.Mul(
                this=count.copy(),
                expression=exp.Paren(this=exp.Sub(this=count.copy(), expression=_number(1))),
            ),
        ),
    )
    two_values = exp.and_(
        exp.EQ(this=count.copy(), expression=_number(2)),
        exp.GT(this=_fn("VAR_POP", value.copy()), expression=_number(0)),
    )
    return exp.Case().when(two_values, _double(_number(0))).else_(population)
