"""Spark's ANSI interval literals and date/time arithmetic, in DuckDB.

Spark 3.5 types ``INTERVAL '1-2' YEAR TO MONTH`` as a year-month interval and
``INTERVAL '1 02:03:04' DAY TO SECOND`` / ``INTERVAL 3 HOURS`` as day-time intervals.
DuckDB has one INTERVAL type and reads neither span, so the literals are written out as
DuckDB intervals. A DATE plus or minus an interval of whole days, months or years is a DATE
in Spark and a TIMESTAMP in DuckDB; a DATE minus a DATE is an INTERVAL DAY in Spark and a
number of days in DuckDB. Which operand is a DATE is read from the statement's types where
sqlglot can infer them (:func:`annotate_date_arithmetic`), from the operand's form where it
shows (a DATE literal, a cast to DATE), and is otherwise checked at run time, refusing the
forms whose answer would differ.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

from sqlglot import exp

from sparkshim.errors import UnsupportedSqlError

__all__ = [
    "annotate_date_arithmetic",
    "cast_literal",
    "date_arithmetic",
    "date_difference_value",
    "interval_as_number",
    "interval_literal",
    "interval_string",
    "interval_value",
    "is_interval",
    "is_interval_arithmetic",
    "mark_date_arithmetic",
    "timestamp_difference_value",
]

_OPERAND_TYPES = "sparkshim_operand_types"
_INTERVAL_UNITS = "sparkshim_interval_units"
_ARITHMETIC_NUMBER = "sparkshim_arithmetic_number"
_DATE_UNITS = {"YEAR", "YEARS", "MONTH", "MONTHS", "WEEK", "WEEKS", "DAY", "DAYS"}
_MICROS = {"HOUR": 3_600_000_000, "MINUTE": 60_000_000, "SECOND": 1_000_000}


def mark_date_arithmetic(tree: exp.Expr) -> list[exp.Expr]:
    """The ``+``/``-`` nodes of ``tree`` that may be date arithmetic, each numbered in its
    ``meta`` so that its twin in a qualified copy is found."""
    nodes: list[exp.Expr] = [
        n for n in tree.find_all(exp.Add, exp.Sub) if _may_be_date_arithmetic(n)
    ]
    for number, node in enumerate(nodes):
        node.meta[_ARITHMETIC_NUMBER] = number
    return nodes


def annotate_date_arithmetic(nodes: list[exp.Expr], typed: exp.Expr | None) -> None:
    """Record on each of the ``nodes`` (marked by :func:`mark_date_arithmetic`) its
    operands' types where sqlglot inferred them in ``typed``, the statement's qualified
    copy (:func:`sparkshim.qualified.qualified_copy`; None: nothing inferred)."""
    found: dict[int, tuple[str | None, str | None]] = {}
    if typed is not None:
        for typed_node in typed.find_all(exp.Add, exp.Sub):
            typed_number = typed_node.meta.get(_ARITHMETIC_NUMBER)
            if typed_number is not None:
                operands = (_type_name(typed_node.this), _type_name(typed_node.expression))
                found[typed_number] = operands
    for number, node in enumerate(nodes):
        del node.meta[_ARITHMETIC_NUMBER]
        if number in found:
            node.meta[_OPERAND_TYPES] = found[number]


def _may_be_date_arithmetic(node: exp.Expr) -> bool:
    operands = (node.this, node.expression)
    if any(isinstance(o, exp.Interval) for o in operands):
        return True
    return isinstance(node, exp.Sub) and not any(_never_a_date(o) for o in operands)


def _type_name(node: exp.Expr) -> str | None:
    if isinstance(node, exp.Interval):
        return "INTERVAL"
    node_type = node.type
    if node_type is None or node_type.this == exp.DType.UNKNOWN:
        return None
    return str(node_type.this.value).upper()


def _never_a_date(node: exp.Expr) -> bool:
    """Whether ``node`` is a number whatever its columns' types."""
    if isinstance(node, exp.Paren):
        return _never_a_date(node.this)
    if isinstance(node, exp.Literal):
        return not node.is_string
    return isinstance(node, (exp.Mul, exp.Div, exp.Mod, exp.Count, exp.Sum, exp.Avg, exp.Neg))


def _syntactic_type(node: exp.Expr) -> str | None:
    if isinstance(node, exp.Paren):
        return _syntactic_type(node.this)
    if isinstance(node, exp.Interval):
        return "INTERVAL"
    to = node.args.get("to") if isinstance(node, (exp.Cast, exp.TryCast)) else None
    if isinstance(to, exp.DataType) and to.is_type(exp.DataType.Type.DATE):
        return "DATE"
    if isinstance(node, (exp.CurrentDate, exp.DateFromUnixDate, exp.LastDay, exp.NextDay)):
        return "DATE"
    if _never_a_date(node):
        return "NUMBER"
    return None


def _interval_units(node: exp.Expr) -> set[str] | None:
    """The units of an interval literal (before or after :func:`interval_literal`)."""
    if isinstance(node, exp.Interval):
        return _unit_names(node)
    units = node.meta.get(_INTERVAL_UNITS)
    return set(units) if units is not None else None


def _unit_names(interval: exp.Expr) -> set[str]:
    unit = interval.args.get("unit")
    if isinstance(unit, exp.IntervalSpan):
        return {unit.this.name.upper(), unit.expression.name.upper()}
    return {unit.name.upper()} if unit is not None else set()


def date_arithmetic(node: exp.Expr, refusal: exp.Expr) -> exp.Expr:
    """The translation of ``node`` (a ``+`` or ``-`` whose operands are translated):
    kept when it means the same in DuckDB, adjusted where a DATE is involved, and guarded
    by ``refusal`` (a DuckDB error() call) where an operand's type is only known at run
    time and the answer would differ for a DATE."""
    inferred = node.meta.get(_OPERAND_TYPES) or (None, None)
    original = (node.this, node.expression)
    kinds = [known or _syntactic_type(o) for known, o in zip(inferred, original, strict=True)]
    units = [_interval_units(o) for o in original]
    if all(u is not None for u in units):
        return node  # an interval plus or minus an interval, an INTERVAL in both engines
    if any(u is not None for u in units):
        interval_units = next(u for u in units if u is not None)
        other, other_kind = next(
            (o, k) for o, k, u in zip(original, kinds, units, strict=True) if u is None
        )
        if not interval_units <= _DATE_UNITS:
            # a DATE and a time of day make a TIMESTAMP: in Spark an instant (the DATE's
            # midnight in the session's time zone, plus the time), in DuckDB a local
            # time (a TIMESTAMP_NTZ in Spark's terms) unless the DATE is made an instant
            if other_kind == "DATE":
                other.replace(exp.Cast(this=other.copy(), to=exp.DataType.build("TIMESTAMPTZ")))
            return node
        if other_kind == "DATE":
            return exp.Cast(this=node.copy(), to=exp.DataType.build("DATE"))
        if other_kind in ("TIMESTAMP", "TIMESTAMPTZ", "TIMESTAMPLTZ", "TIMESTAMPNTZ", "INTERVAL"):
            return node
        return _guarded(node, [other], refusal)
    if not isinstance(node, exp.Sub):
        return node
    if kinds == ["DATE", "DATE"]:
        days = exp.Cast(this=node.copy(), to=exp.DataType.build("INT"))
        return exp.Anonymous(this="TO_DAYS", expressions=[days])
    if "NUMBER" in kinds or (kinds[0] is not None and kinds[1] is not None):
        return node
    unknown = [o for o, kind in zip(original, kinds, strict=True) if kind != "DATE"]
    return _guarded(node, unknown, refusal)


def is_interval_literal(node: exp.Expr) -> bool:
    """Whether ``node`` is an interval literal :func:`interval_literal` rewrote."""
    return _INTERVAL_UNITS in node.meta


def is_interval(node: exp.Expr) -> bool:
    """Whether ``node`` is :func:`date_arithmetic`'s INTERVAL DAY of a DATE minus a DATE."""
    return isinstance(node, exp.Anonymous) and node.name.upper() == "TO_DAYS"


def is_interval_arithmetic(node: exp.Expr) -> bool:
    """Whether ``node`` (a ``+`` or ``-`` whose operands are translated) adds or subtracts
    interval literals, whose result is an interval."""
    return all(_interval_units(o) is not None for o in (node.this, node.expression))


def _guarded(node: exp.Expr, operands: list[exp.Expr], refusal: exp.Expr) -> exp.Expr:
    """``node``, or ``refusal`` when one of ``operands`` is a DATE or a string at run time."""
    checks = [
        exp.In(
            this=exp.Anonymous(this="TYPEOF", expressions=[operand.copy()]),
            expressions=[exp.Literal.string("DATE"), exp.Literal.string("VARCHAR")],
        )
        for operand in operands
    ]
    return exp.Case().when(exp.or_(*checks), refusal).else_(node.copy())


_YEAR_MONTH = re.compile(r"([+-]?)(\d+)-(\d+)")
_DAY_TIME = {
    ("DAY", "HOUR"): re.compile(r"([+-]?)(?P<DAY>\d+) (?P<HOUR>\d+)"),
    ("DAY", "MINUTE"): re.compile(r"([+-]?)(?P<DAY>\d+) (?P<HOUR>\d+):(?P<MINUTE>\d+)"),
    ("DAY", "SECOND"): re.compile(
        r"([+-]?)(?P<DAY>\d+) (?P<HOUR>\d+):(?P<MINUTE>\d+):(?P<SECOND>\d+(\.\d+)?)"
    ),
    ("HOUR", "MINUTE"): re.compile(r"([+-]?)(?P<HOUR>\d+):(?P<MINUTE>\d+)"),
    ("HOUR", "SECOND"): re.compile(r"([+-]?)(?P<HOUR>\d+):(?P<MINUTE>\d+):(?P<SECOND>\d+(\.\d+)?)"),
    ("MINUTE", "SECOND"): re.compile(r"([+-]?)(?P<MINUTE>\d+):(?P<SECOND>\d+(\.\d+)?)"),
}


def interval_literal(node: exp.Expr) -> exp.Expr:
    """An interval literal DuckDB reads the same: a span ``'1-2' YEAR TO MONTH`` or
    ``'1 02:03:04' DAY TO SECOND`` written as months, or as days and microseconds; hours,
    minutes or seconds of a day or more as whole days and the rest (Spark adds an
    interval's whole days to a TIMESTAMP on the calendar of the session's time zone and
    the rest as elapsed time, as DuckDB adds an interval's days and its microseconds)."""
    unit = node.args.get("unit")
    if isinstance(unit, exp.Var):
        return _whole_days_apart(node, unit.name.upper())
    if not isinstance(unit, exp.IntervalSpan):
        return node
    text = node.this.name.strip() if isinstance(node.this, exp.Literal) else None
    span = (unit.this.name.upper(), unit.expression.name.upper())
    if text is None:
        raise UnsupportedSqlError("an interval span of a non-literal value")
    written: exp.Expr
    if span == ("YEAR", "MONTH"):
        months = _year_month_months(text)
        written = exp.Anonymous(this="TO_MONTHS", expressions=[exp.Literal.number(months)])
    else:
        written = _days_and_micros(*_day_time(text, span))
    written = exp.Paren(this=written)
    written.meta[_INTERVAL_UNITS] = sorted(_unit_names(node))
    return written


_MICROS_PER_UNIT = {
    "HOUR": 3_600_000_000,
    "HOURS": 3_600_000_000,
    "MINUTE": 60_000_000,
    "MINUTES": 60_000_000,
    "SECOND": 1_000_000,
    "SECONDS": 1_000_000,
}
_MICROS_PER_DAY = 86_400_000_000


def _whole_days_apart(node: exp.Expr, unit: str) -> exp.Expr:
    """``INTERVAL 26 HOUR`` as 1 day and 2 hours (whole days towards zero, as Spark
    splits it); an interval under a day, or of another unit, as it is."""
    factor = _MICROS_PER_UNIT.get(unit)
    value = node.this
    negative = isinstance(value, exp.Neg)
    literal = value.this if negative else value
    if factor is None or not isinstance(literal, exp.Literal):
        return node
    try:
        exact = Decimal(literal.name.strip()) * factor
    except InvalidOperation:
        return node
    if exact != int(exact) or abs(exact) < _MICROS_PER_DAY:
        return node
    sign = -1 if (exact < 0) != negative else 1
    days, rest = divmod(abs(int(exact)), _MICROS_PER_DAY)
    written = exp.Paren(this=_days_and_micros(sign * days, sign * rest))
    written.meta[_INTERVAL_UNITS] = sorted(_unit_names(node))
    return written


def _days_and_micros(days: int, micros: int) -> exp.Expr:
    return exp.Add(
        this=exp.Anonymous(this="TO_DAYS", expressions=[exp.Literal.number(days)]),
        expression=exp.Anonymous(this="TO_MICROSECONDS", expressions=[exp.Literal.number(micros)]),
    )


def _year_month_months(text: str) -> int:
    match = _YEAR_MONTH.fullmatch(text)
    if match is None:
        raise UnsupportedSqlError(f"the year-month interval '{text}'")
    sign = -1 if match.group(1) == "-" else 1
    return sign * (int(match.group(2)) * 12 + int(match.group(3)))


def _day_time(text: str, span: tuple[str, str]) -> tuple[int, int]:
    pattern = _DAY_TIME.get(span)
    match = pattern.fullmatch(text) if pattern is not None else None
    if match is None:
        raise UnsupportedSqlError(f"the interval '{text}' {span[0]} TO {span[1]}")
    sign = -1 if match.group(1) == "-" else 1
    fields = match.groupdict()
    micros = sum(
        Decimal(fields[name]) * factor
        for name, factor in _MICROS.items()
        if fields.get(name) is not None
    )
    return sign * int(fields.get("DAY") or 0), sign * int(micros)


def interval_as_number(node: exp.Expr) -> Decimal | None:
    """The number Spark casts a single-unit interval literal to (its count of that unit;
    months for YEAR TO MONTH), or None when it is not such a literal."""
    if not isinstance(node, exp.Interval) or not isinstance(node.this, exp.Literal):
        return None
    text = node.this.name.strip()
    unit = node.args.get("unit")
    if isinstance(unit, exp.IntervalSpan):
        if (unit.this.name.upper(), unit.expression.name.upper()) == ("YEAR", "MONTH"):
            return Decimal(_year_month_months(text))
        return None
    try:
        return Decimal(text)
    except InvalidOperation:
        return None


_YEAR_MONTH_UNITS = ("YEAR", "MONTH")
_DAY_TIME_UNITS = ("DAY", "HOUR", "MINUTE", "SECOND")
_UNIT_MICROS = {"DAY": 86_400_000_000, **_MICROS}
_MICROS_PER_DAY = 86_400_000_000


def interval_value(node: exp.Expr) -> tuple[str, int]:
    """Spark's type name of the interval literal ``node`` (``interval day to second``) and
    its value as Spark holds it: months for a year-month interval, microseconds for a
    day-time one. A unit or a text Spark's ANSI intervals do not take is refused."""
    text = node.this.name.strip() if isinstance(node.this, exp.Literal) else None
    unit = node.args.get("unit")
    if isinstance(unit, exp.IntervalSpan):
        span = (unit.this.name.upper(), unit.expression.name.upper())
    else:
        single = _singular(unit.name.upper()) if unit is not None else ""
        if single == "WEEK" and text is not None:
            # Spark reads INTERVAL '2' WEEK as an INTERVAL DAY of 14 days.
            type_name, days = interval_value(exp.Interval(this=node.this, unit=exp.var("DAY")))
            return type_name, days * 7
        span = (single, single)
    known = span[0] in _YEAR_MONTH_UNITS + _DAY_TIME_UNITS
    if text is None or not known:
        raise UnsupportedSqlError(
            f"the interval {node.sql('spark')} as a result column",
            "Spark gives a legacy CalendarInterval or another form; cast its parts to numbers",
        )
    type_name = "interval " + " to ".join(dict.fromkeys(span)).lower()
    if span == ("YEAR", "MONTH"):
        return type_name, _year_month_months(text)
    if span[0] != span[1]:
        days, micros = _day_time(text, span)
        return type_name, days * _MICROS_PER_DAY + micros
    return type_name, _single_unit_value(text, span[0])


def _singular(unit: str) -> str:
    return unit[:-1] if unit.endswith("S") else unit


def _single_unit_value(text: str, unit: str) -> int:
    """Months or microseconds of ``text`` in one ``unit``: whole for all but SECOND."""
    pattern = r"[+-]?\d+(\.\d{1,6})?" if unit == "SECOND" else r"[+-]?\d+"
    if re.fullmatch(pattern, text) is None:
        raise UnsupportedSqlError(f"the interval '{text}' {unit}")
    count = Decimal(text)
    if unit in _YEAR_MONTH_UNITS:
        return int(count) * (12 if unit == "YEAR" else 1)
    return int(count * _UNIT_MICROS[unit])


def date_difference_value(node: exp.Expr) -> exp.Expr:
    """The microseconds of :func:`date_arithmetic`'s INTERVAL DAY of a DATE minus a DATE
    (``node``), the value Spark's INTERVAL DAY holds."""
    days = node.expressions[0]
    whole_days = exp.Cast(this=days.this.copy(), to=exp.DataType.build("BIGINT"))
    return exp.Mul(this=whole_days, expression=exp.Literal.number(_MICROS_PER_DAY))


def interval_string(node: exp.Expr) -> str:
    """Spark's CAST of the interval literal ``node`` to STRING: ``INTERVAL '3-1' YEAR TO
    MONTH``, ``INTERVAL '-1 02:03:04.5' DAY TO SECOND``, ``INTERVAL '02' HOUR``."""
    type_name, value = interval_value(node)
    fields = type_name.removeprefix("interval ").upper().split(" TO ")
    sign, size = ("-" if value < 0 else ""), abs(value)
    if fields[0] in _YEAR_MONTH_UNITS:
        if fields == ["YEAR", "MONTH"]:
            text = f"{size // 12}-{size % 12}"
        else:
            text = str(size // 12 if fields[0] == "YEAR" else size)
    else:
        text = _day_time_text(size, fields[0], fields[-1])
    return f"INTERVAL '{sign}{text}' {' TO '.join(fields)}"


def _day_time_text(micros: int, start: str, end: str) -> str:
    """Spark's digits of ``micros`` from field ``start`` to ``end``: the leading field as
    it is (two digits at least below DAY), the others in two digits, and seconds with
    their fraction's significant digits."""
    units = _DAY_TIME_UNITS[_DAY_TIME_UNITS.index(start) : _DAY_TIME_UNITS.index(end) + 1]
    parts: list[str] = []
    for unit in units:
        factor = _UNIT_MICROS[unit]
        is_last = unit == end
        count, micros = (micros, 0) if is_last else divmod(micros, factor)
        if unit == "SECOND":
            seconds = Decimal(count) / factor
            whole = f"{int(seconds):02d}"
            fraction = format(seconds % 1, "f").rstrip("0").removeprefix("0")
            parts.append(whole + fraction.rstrip("."))
        else:
            number = count // factor if is_last else count
            parts.append(str(number) if unit == "DAY" else f"{number:02d}")
    if start == "DAY" and len(parts) > 1:
        return parts[0] + " " + ":".join(parts[1:])
    return ":".join(parts)


_TIMESTAMPS = ("TIMESTAMP", "TIMESTAMPTZ", "TIMESTAMPLTZ", "TIMESTAMPNTZ")


def timestamp_difference_value(node: exp.Expr) -> exp.Expr | None:
    """The microseconds of Spark's INTERVAL DAY TO SECOND of ``node`` (a translated ``-``)
    when it subtracts a timestamp from one of the same kind; None when it is not known to.
    (A TIMESTAMP minus a TIMESTAMP_NTZ reads the latter in the session's zone: not here.)"""
    left, right = node.meta.get(_OPERAND_TYPES) or (None, None)
    if not isinstance(node, exp.Sub) or left not in _TIMESTAMPS or left != right:
        return None
    return exp.Sub(
        this=exp.Anonymous(this="EPOCH_US", expressions=[node.this.copy()]),
        expression=exp.Anonymous(this="EPOCH_US", expressions=[node.expression.copy()]),
    )


def cast_literal(value: exp.Expr, qualifier: exp.Interval) -> exp.Interval | None:
    """The interval literal Spark's CAST of the literal ``value`` (a number or a string in
    the plain form of the qualifier: ``'3-1'``, ``'1 02:03:04.5'``) to the interval type
    ``qualifier`` (``INTERVAL DAY TO SECOND``) means; None when ``value`` is no literal."""
    sign = ""
    if isinstance(value, exp.Neg) and isinstance(value.this, exp.Literal):
        sign, value = "-", value.this
        if value.is_string:
            return None
    if not isinstance(value, exp.Literal):
        return None
    unit = qualifier.args.get("unit")
    return exp.Interval(this=exp.Literal.string(sign + value.name), unit=unit and unit.copy())
