"""Spark's ``conv(num, from_base, to_base)`` as a DuckDB function of the session.

Spark's NumberConverter reads the (trimmed) text as an unsigned 64-bit number in
``from_base`` (the first character that is no digit of the base ends it; an overflow is
``-1``, all bits set), negates it for a leading ``-``, and writes it in ``to_base``:
unsigned for a positive ``to_base``, signed for a negative one. A base outside 2..36 (in
absolute value; ``from_base`` must be positive) or empty text gives NULL.

>>> [conv(*args) for args in [("100", 2, 10), ("-10", 16, -10), ("-10", 16, 10)]]
['4', '-16', '18446744073709551600']
>>> [conv(*args) for args in [("9223372036854775807", 36, 16), ("11abc", 10, 16), ("", 10, 2)]]
['FFFFFFFFFFFFFFFF', 'B', None]
"""

from __future__ import annotations

import duckdb
import pyarrow as pa
from duckdb.func import FunctionNullHandling, PythonUDFType

__all__ = ["FUNCTION_NAME", "conv", "register"]

FUNCTION_NAME = "sparkshim_conv"

_BITS = 64
_MASK = (1 << _BITS) - 1
_DIGITS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _signed(value: int) -> int:
    """``value`` as Java's 64-bit long holds it (two's complement wrap-around)."""
    value &= _MASK
    return value - (1 << _BITS) if value >> (_BITS - 1) else value


def _digit(character: str, base: int) -> int:
    """Java's Character.digit for one ASCII character: its value in ``base``, or -1."""
    value = _DIGITS.find(character.upper()) if character.isascii() else -1
    return value if 0 <= value < base else -1


def _encode(text: str, base: int) -> int:
    """The digits of ``text`` up to the first non-digit, as Spark's signed long: -1 once the
    unsigned value overflows 64 bits (Spark compares the signed values as it does)."""
    value = 0
    bound = (-1 - base & _MASK) // base
    for character in text:
        digit = _digit(character, base)
        if digit < 0:
            break
        if value >= bound and (-1 - digit & _MASK) // base < value:
            return -1
        value = _signed(value * base + digit)
    return value


def conv(text: str | None, from_base: int | None, to_base: int | None) -> str | None:
    """Spark 3.5's conv() with ANSI mode off."""
    if text is None or from_base is None or to_base is None:
        return None
    if not 2 <= from_base <= 36 or not 2 <= abs(to_base) <= 36:
        return None
    text = text.strip(" ")  # UTF8String.trim: spaces only
    if not text:
        return None
    negative = text.startswith("-")
    value = _encode(text[1:] if negative else text, from_base)
    if negative and to_base > 0:
        value = -1 if value < 0 else -value
    if to_base < 0 and value < 0:
        value, negative = _signed(-value), True
    unsigned, base, out = value & _MASK, abs(to_base), ""
    while unsigned:
        unsigned, remainder = divmod(unsigned, base)
        out = _DIGITS[remainder] + out
    out = out or "0"
    return "-" + out if negative and to_base < 0 else out


def _conv_batch(texts: pa.Array, from_bases: pa.Array, to_bases: pa.Array) -> pa.Array:
    rows = zip(texts.to_pylist(), from_bases.to_pylist(), to_bases.to_pylist(), strict=True)
    return pa.array([conv(*row) for row in rows], type=pa.string())


def register(connection: duckdb.DuckDBPyConnection) -> None:
    """Make :data:`FUNCTION_NAME` callable on ``connection``."""
    connection.create_function(
        FUNCTION_NAME,
        _conv_batch,
        ["VARCHAR", "INTEGER", "INTEGER"],
        "VARCHAR",
        type=PythonUDFType.ARROW,
        null_handling=FunctionNullHandling.SPECIAL,
        side_effects=False,
    )
