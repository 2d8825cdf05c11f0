"""Values written as text (a CSV field, a JSON string): the Spark type they are inferred
as, and their value in a given type, by Spark 3.5's rules for CSV's ``inferSchema``.

A field is an INT when it fits one, else a BIGINT, else (an integer of up to 38 digits) a
DECIMAL(n, 0), else a DOUBLE when it is a number; a DATE written ``yyyy-MM-dd``; a
TIMESTAMP written ``yyyy-MM-dd HH:mm[:ss[.f]]`` (or with ``T``, with an optional zone); a
BOOLEAN written ``true`` or ``false`` in any case; else a STRING.

>>> [str(text_type(text)) for text in ("7", "3000000000", "1.5e3", "2024-01-02", "TRUE", "x")]
['int32', 'int64', 'double', 'date32[day]', 'bool', 'string']
>>> widest(pa.int32(), pa.decimal128(20, 0)), widest(pa.date32(), pa.bool_())
(Decimal128Type(decimal128(20, 0)), DataType(string))
"""

from __future__ import annotations

import datetime
import decimal
import re
from typing import Any
from zoneinfo import ZoneInfo

import pyarrow as pa

from sparkshim.errors import UnsupportedSqlError

TIMESTAMP = pa.timestamp("us", tz="UTC")

_INTEGER = re.compile(r"[+-]?\d+")
_NUMBER = re.compile(r"\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[dDfF]?\s*")
_SPECIAL_DOUBLES = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_TIMESTAMP = re.compile(
    r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?(?:Z|[+-]\d{2}:?\d{2})?"
)
_INT_RANGE = range(-(2**31), 2**31)
_LONG_RANGE = range(-(2**63), 2**63)
_MAX_PRECISION = 38


def text_type(text: str) -> pa.DataType:
    """The type Spark infers for one non-null field."""
    if _INTEGER.fullmatch(text):
        value = int(text)
        if value in _INT_RANGE:
            return pa.int32()
        if value in _LONG_RANGE:
            return pa.int64()
        digits = len(text.lstrip("+-"))
        return pa.decimal128(digits, 0) if digits <= _MAX_PRECISION else pa.float64()
    if _NUMBER.fullmatch(text) or text in _SPECIAL_DOUBLES:
        return pa.float64()
    if _DATE.fullmatch(text) and _parse_date(text) is not None:
        return pa.date32()
    if _TIMESTAMP.fullmatch(text) and _parse_timestamp(text, "UTC") is not None:
        return TIMESTAMP
    if text.lower() in ("true", "false"):
        return pa.bool_()
    return pa.string()


def widest(first: pa.DataType, second: pa.DataType) -> pa.DataType:
    """The type that holds the values of both (Spark's CSV type merge): numbers widen
    (INT, BIGINT, DECIMAL, DOUBLE), a DATE with a TIMESTAMP is a TIMESTAMP, NULL (no
    value yet) takes the other; any other pair is a STRING."""
    if first == second or pa.types.is_null(second):
        return first
    if pa.types.is_null(first):
        return second
    if _is_number(first) and _is_number(second):
        if pa.types.is_floating(first) or pa.types.is_floating(second):
            return pa.float64()
        if pa.types.is_decimal(first) or pa.types.is_decimal(second):
            return _wider_decimal(first, second)
        return pa.int64()
    if {first, second} == {pa.date32(), TIMESTAMP}:
        return TIMESTAMP
    return pa.string()


def _is_number(data_type: pa.DataType) -> bool:
    return bool(
        pa.types.is_integer(data_type)
        or pa.types.is_floating(data_type)
        or pa.types.is_decimal(data_type)
    )


def _wider_decimal(first: pa.DataType, second: pa.DataType) -> pa.DataType:
    """Two integral types, one a DECIMAL(n, 0): the DECIMAL with the larger precision
    (a BIGINT counts as DECIMAL(20, 0), an INT as DECIMAL(10, 0), as in Spark)."""
    precision = max(_integral_precision(first), _integral_precision(second))
    return pa.decimal128(precision, 0) if precision <= _MAX_PRECISION else pa.float64()


def _integral_precision(data_type: pa.DataType) -> int:
    if pa.types.is_decimal(data_type):
        return int(data_type.precision)
    return 20 if data_type == pa.int64() else 10


def parse_text(text: str, target: pa.DataType, time_zone: str) -> Any:
    """``text`` as a value of ``target``; None where it is not one (Spark's permissive
    reading makes such a field NULL)."""
    if pa.types.is_string(target):
        return text
    if pa.types.is_integer(target):
        if not _INTEGER.fullmatch(text.strip()):
            return None
        value = int(text)
        bits = target.bit_width - 1
        return value if -(2**bits) <= value < 2**bits else None
    if pa.types.is_floating(target):
        return _parse_double(text)
    if pa.types.is_decimal(target):
        return _parse_decimal(text, target)
    if pa.types.is_boolean(target):
        lowered = text.strip().lower()
        return {"true": True, "false": False}.get(lowered)
    if pa.types.is_date32(target):
        return _parse_date(text.strip())
    if pa.types.is_timestamp(target):
        return _parse_timestamp(text.strip(), time_zone)
    raise UnsupportedSqlError(
        f"reading text as {target}", "declare the column as STRING and cast it in a query"
    )


def _parse_double(text: str) -> float | None:
    if text in _SPECIAL_DOUBLES:
        return _SPECIAL_DOUBLES[text]
    if not _NUMBER.fullmatch(text):
        return None
    return float(text.strip().rstrip("dDfF"))


def _parse_decimal(text: str, target: pa.DataType) -> decimal.Decimal | None:
    try:
        value = decimal.Decimal(text.strip())
    except decimal.InvalidOperation:
        return None
    if not value.is_finite():
        return None
    scale: int = target.scale
    rounded = value.quantize(decimal.Decimal(1).scaleb(-scale), rounding=decimal.ROUND_HALF_UP)
    digits = len(rounded.as_tuple().digits)
    return rounded if digits <= target.precision else None


def _parse_date(text: str) -> datetime.date | None:
    try:
        return datetime.date.fromisoformat(text)
    except ValueError:
        return None


def _parse_timestamp(text: str, time_zone: str) -> datetime.datetime | None:
    """The instant ``text`` names: in its own zone, else in the session's."""
    if not (_TIMESTAMP.fullmatch(text) or _DATE.fullmatch(text)):
        return None
    try:
        moment = datetime.datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=ZoneInfo(time_zone))
    return moment.astimezone(datetime.timezone.utc)
