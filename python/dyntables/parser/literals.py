"""Decoding of the literals our clauses carry: strings, identifiers, target lags."""

from __future__ import annotations

import re

# Spark's escapes (its unescapeSQLString); any other escaped character stands for itself,
# except \% and \_, which keep their backslash so LIKE patterns can escape wildcards.
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "0": "\0", "Z": "\x1a"}
_ESCAPE_OR_DOUBLED = re.compile(
    r"\\u([0-9A-Fa-f]{4})|\\([0-3][0-7]{2})|\\([%_])|\\(.)|''|\"\"", re.DOTALL
)
_NAME_PART = re.compile(r"`((?:[^`]|``)*)`|([^.`]+)")

_SECONDS_PER_UNIT = {"second": 1, "minute": 60, "hour": 3600, "day": 86400}
_TARGET_LAG = re.compile(r"\s*([+-]?\d+(?:\.\d*)?)\s*([A-Za-z]+)\s*\Z")


def unquote_string(literal: str) -> str:
    """The value of a quoted string literal, with Spark's backslash escapes and
    Snowflake's doubled quotes both decoded.

    >>> unquote_string("'it''s'"), unquote_string(r"'it\\'s'"), unquote_string('"a\\\\tb"')
    ("it's", "it's", 'a\\tb')
    >>> unquote_string(r"'dt\\_%'"), unquote_string(r"'\\u0041\\101'")
    ('dt\\\\_%', 'AA')
    """
    body = literal[1:-1]

    def decode(match: re.Match[str]) -> str:
        unicode_hex, octal, wildcard, escaped = match.groups()
        if unicode_hex is not None:
            return chr(int(unicode_hex, 16))
        if octal is not None:
            return chr(int(octal, 8))
        if wildcard is not None:
            return match.group()
        if escaped is not None:
            return _ESCAPES.get(escaped, escaped)
        return match.group()[0]  # a doubled quote stands for one quote

    return _ESCAPE_OR_DOUBLED.sub(decode, body)


def unquote_identifier(text: str) -> str:
    """An identifier's name: backticks removed and doubled backticks undone.

    >>> unquote_identifier("`my``db`"), unquote_identifier("orders")
    ('my`db', 'orders')
    """
    if text.startswith("`") and text.endswith("`") and len(text) >= 2:
        return text[1:-1].replace("``", "`")
    return text


def split_dotted_name(text: str) -> tuple[str, ...] | None:
    """The parts of a dotted name such as ``project.sales.daily``, where a part may be
    backtick-quoted and contain dots; ``None`` when ``text`` is not such a name.

    >>> split_dotted_name("p.`my.ds`.t"), split_dotted_name("a..b")
    (('p', 'my.ds', 't'), None)
    """
    parts: list[str] = []
    position = 0
    while True:
        match = _NAME_PART.match(text, position)
        if match is None:
            return None
        quoted, plain = match.groups()
        parts.append(quoted.replace("``", "`") if quoted is not None else plain.strip())
        position = match.end()
        if position == len(text):
            return tuple(parts) if all(parts) else None
        if text[position] != ".":
            return None
        position += 1


def parse_target_lag(value: str) -> int:
    """Seconds in a target lag such as ``'10 minutes'`` or ``'1 hour'``.

    Raises ``ValueError`` with a user-facing explanation when the value is malformed.

    >>> parse_target_lag("10 minutes"), parse_target_lag("1 DAY")
    (600, 86400)
    """
    match = _TARGET_LAG.match(value)
    if match is None:
        raise ValueError("expected '<n> {seconds|minutes|hours|days}', e.g. '10 minutes'")
    amount_text, unit_text = match.groups()
    unit = unit_text.lower().removesuffix("s")
    if unit not in _SECONDS_PER_UNIT:
        raise ValueError(
            f"unknown unit '{unit_text}'; use seconds, minutes, hours or days (or the singular)"
        )
    if not re.fullmatch(r"[+-]?\d+", amount_text):
        raise ValueError("the amount must be a whole number, e.g. '90 seconds'")
    amount = int(amount_text)
    if amount <= 0:
        raise ValueError("the lag must be positive")
    return amount * _SECONDS_PER_UNIT[unit]
