"""Spark 3.5's datetime patterns (Java DateTimeFormatter letters) as DuckDB expressions.

:func:`pattern_pieces` splits a pattern into quoted text, letter runs and other
characters, raising the error Spark raises for a pattern it refuses (a week-based letter,
a run too long, an unknown letter); :func:`formatted` builds ``date_format``'s text from
the pieces (strftime where it prints what Java prints, an expression where it does not);
:func:`strptime_format` gives the strftime format the parsing functions read, refusing
what strptime cannot read as Spark does.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from sqlglot import exp

from sparkshim.errors import IllegalArgumentException, SparkUpgradeException, UnsupportedSqlError

__all__ = ["Piece", "formatted", "pattern_pieces", "strptime_format"]

# A quoted literal ('' inside it is one quote), a run of one letter, or one other character.
_TOKENS = re.compile(r"'(?:[^']|'')*'|([A-Za-z])\1*|.", re.DOTALL)

# Spark's own checks (DateTimeFormatterHelper), made before Java reads the pattern.
_WEEK_BASED = frozenset("YWwuec")
_SPARK_REFUSED = frozenset("AnNpB")
_REFUSED_FOR_PARSING = frozenset("EFqQ")
_TOO_LONG_FOR_SPARK = {"G": 5, "M": 5, "L": 5, "E": 5, "Q": 5, "q": 5, "y": 10}
# Java's letters and the runs it reads: the longest run, or the exact counts.
_LONGEST_RUN = {
    **dict.fromkeys("GMLQqE", 5),
    **dict.fromkeys("dhHkKms", 2),
    **dict.fromkeys("aF", 1),
    **dict.fromkeys("XxZ", 5),
    "y": 19,
    "D": 3,
    "S": 9,
    "z": 4,
}
_EXACT_RUNS = {
    "V": ((2,), "Pattern letter count must be 2: V"),
    "O": ((1, 4), "Pattern letter count must be 1 or 4: O"),
    "v": ((1, 4), "Wrong number of pattern letters: v"),
}
# What Spark 2's SimpleDateFormat read: a pattern Spark 3 refuses but that one reads is
# Spark's upgrade error (the result would have changed), any other its plain error.
_LEGACY_LETTERS = frozenset("GyYMLwWDdFEuaHkKhmsSzZX")
_UPGRADE_ERROR = (
    "[INCONSISTENT_BEHAVIOR_CROSS_VERSION.DATETIME_PATTERN_RECOGNITION] You may get a different"
    " result due to the upgrading to Spark >= 3.0: Fail to recognize '{pattern}' pattern in the"
    " DateTimeFormatter. You can form a valid datetime pattern with the guide from"
    " 'https://spark.apache.org/docs/latest/sql-ref-datetime-pattern.html'."
)


class Piece(NamedTuple):
    """One piece of a pattern: ``text`` printed as it is (``quoted`` or one character
    outside quotes), or a run of ``letter``."""

    text: str = ""
    letter: str = ""
    length: int = 0
    quoted: bool = False

    @property
    def mark(self) -> str:
        """The character outside quotes, where Java gives some a meaning ([ ] # { })."""
        return "" if self.quoted or self.letter else self.text


def pattern_pieces(pattern: str, parsing: bool) -> list[Piece]:
    """The pieces of a Java pattern Spark accepts, or Spark's error for it."""
    pieces, problem = _read(pattern, parsing)
    if problem is None:
        return pieces
    if _legacy_reads(pattern):
        raise SparkUpgradeException(message=_UPGRADE_ERROR.format(pattern=pattern))
    raise IllegalArgumentException(message=problem)


def _read(pattern: str, parsing: bool) -> tuple[list[Piece], str | None]:
    """The pieces and the first problem Spark finds, in Spark's order: its own letter
    checks over the whole pattern, then Java's, piece by piece."""
    pieces: list[Piece] = []
    for match in _TOKENS.finditer(pattern):
        token = match.group(0)
        if token.startswith("'"):
            if token == "'":  # no closing quote
                return pieces, f"Pattern ends with an incomplete string literal: {pattern}"
            text = "'" if token == "''" else token[1:-1].replace("''", "'")
            pieces.append(Piece(text=text, quoted=True))
        elif match.group(1):
            pieces.append(Piece(letter=token[0], length=len(token)))
        else:
            pieces.append(Piece(text=token))
    return pieces, _spark_problem(pieces, parsing) or _java_problem(pieces)


def _spark_problem(pieces: list[Piece], parsing: bool) -> str | None:
    letters = [piece for piece in pieces if piece.letter]
    for piece in letters:
        if piece.letter in _WEEK_BASED:
            return (
                "All week-based patterns are unsupported since Spark 3.0, detected:"
                f" {piece.letter}, Please use the SQL function EXTRACT instead"
            )
    refused = _SPARK_REFUSED | _REFUSED_FOR_PARSING if parsing else _SPARK_REFUSED
    for piece in letters:
        if piece.letter in refused:
            return f"Illegal pattern character: {piece.letter}"
    for piece in letters:
        if piece.length >= _TOO_LONG_FOR_SPARK.get(piece.letter, 99):
            return f"Too many pattern letters: {piece.letter}"
    return None


def _java_problem(pieces: list[Piece]) -> str | None:
    optional_depth = 0
    for piece in pieces:
        if piece.mark in ("#", "{", "}"):
            return f"Pattern includes reserved character: '{piece.mark}'"
        if piece.mark == "[":
            optional_depth += 1
        elif piece.mark == "]":
            if optional_depth == 0:
                return "Pattern invalid as it contains ] without previous ["
            optional_depth -= 1
        elif piece.letter in _EXACT_RUNS:
            counts, problem = _EXACT_RUNS[piece.letter]
            if piece.length not in counts:
                return problem
        elif piece.letter and piece.letter not in _LONGEST_RUN:
            return f"Unknown pattern letter: {piece.letter}"
        elif piece.length > _LONGEST_RUN.get(piece.letter, 99):
            return f"Too many pattern letters: {piece.letter}"
    return None


def _legacy_reads(pattern: str) -> bool:
    """Whether SimpleDateFormat reads ``pattern``: its letters only (X at most three),
    quotes closed."""
    if pattern.count("'") % 2:
        return False
    unquoted = re.sub(r"'[^']*'", "", pattern)
    runs = (run.group(0) for run in re.finditer(r"([A-Za-z])\1*", unquoted))
    return all(run[0] in _LEGACY_LETTERS and not run.startswith("XXXX") for run in runs)


# ---- formatting (date_format, from_unixtime) ----

# The runs strftime prints as Java does.
_STRFTIME = {
    "yyyy": "%Y",
    "yy": "%y",
    "y": "%Y",
    "MM": "%m",
    "MMM": "%b",
    "MMMM": "%B",
    "M": "%-m",
    "dd": "%d",
    "d": "%-d",
    "HH": "%H",
    "H": "%-H",
    "hh": "%I",
    "h": "%-I",
    "mm": "%M",
    "m": "%-M",
    "ss": "%S",
    "s": "%-S",
    "a": "%p",
    "E": "%a",
    "EE": "%a",
    "EEE": "%a",
    "EEEE": "%A",
    "DDD": "%j",
    "D": "%-j",
    "SSS": "%g",  # milliseconds
    "SSSSSS": "%f",  # microseconds
}
# What Java prints for the zone in UTC (Spark's default session time zone), by run.
_UTC_TEXT = {
    **dict.fromkeys(["VV", "z", "zz", "zzz", "v"], "UTC"),
    **dict.fromkeys(["zzzz", "vvvv"], "Coordinated Universal Time"),
    **dict.fromkeys(["X", "XX", "XXX", "XXXX", "XXXXX", "ZZZZZ"], "Z"),
    **dict.fromkeys(["xx", "xxxx", "Z", "ZZ", "ZZZ"], "+0000"),
    **dict.fromkeys(["xxx", "xxxxx"], "+00:00"),
    "x": "+00",
    **dict.fromkeys(["ZZZZ", "O", "OOOO"], "GMT"),
}
_QUARTER_NAMES = ("1st quarter", "2nd quarter", "3rd quarter", "4th quarter")


def formatted(value: exp.Expr, pattern: str, function: str) -> exp.Expr:
    """``value`` (a TIMESTAMP WITH TIME ZONE) as Spark's ``date_format`` prints it with
    ``pattern``: strftime for the runs it prints as Java does, an expression for the
    others, concatenated (NULL where ``value`` is)."""
    parts: list[str | exp.Expr] = []
    zones = []
    for piece in pattern_pieces(pattern, parsing=False):
        run = piece.letter * piece.length
        if piece.mark in ("[", "]"):
            continue  # an optional section: printed whole, every field being known
        if run in _UTC_TEXT:
            zones.append(run)
        parts.append(_part(value, piece, function))
    text = _concatenated(value, parts)
    if not zones:
        return text
    # Zone names and offsets are those of UTC only: another session zone is refused.
    in_utc = exp.EQ(
        this=_fn("CURRENT_SETTING", exp.Literal.string("TimeZone")), expression=_s("UTC")
    )
    refusal = _fn(
        "ERROR",
        _s(
            f"sparkshim does not support the zone pattern letters {zones[0]!r} in {function} in a"
            " session time zone other than UTC: the embedded engine prints UTC's zone only; set"
            " spark.sql.session.timeZone to UTC or leave the zone out of the pattern"
        ),
    )
    return exp.Case().when(in_utc, text).else_(refusal)


def _part(value: exp.Expr, piece: Piece, function: str) -> str | exp.Expr:
    """A strftime fragment or an expression printing one piece."""
    run = piece.letter * piece.length
    if not piece.letter:
        return piece.text.replace("%", "%%")
    if run in _STRFTIME:
        return _STRFTIME[run]
    if run in _UTC_TEXT:
        return _UTC_TEXT[run]
    if piece.letter == "L":  # the standalone month: in English, the month as M prints it
        return _STRFTIME["M" * piece.length]
    if piece.letter == "S":  # the fraction of the second, cut (not rounded) to the run
        if piece.length > 6:
            return "%f" + "0" * (piece.length - 6)
        return _fn(
            "LEFT", _fn("STRFTIME", value.copy(), _s("%f")), exp.Literal.number(piece.length)
        )
    number = _NUMBERS.get(piece.letter)
    if number is not None and (piece.letter == "y" or piece.length <= 2):
        return _padded(number(value.copy()), piece.length)
    if piece.letter in "Qq":
        quarter = _quarter(value.copy())
        if piece.length == 3:
            return exp.DPipe(this=_s("Q"), expression=_cast_text(quarter))
        names = exp.Array(expressions=[_s(name) for name in _QUARTER_NAMES])
        return _fn("LIST_EXTRACT", names, quarter)
    raise UnsupportedSqlError(
        f"the date/time pattern letters {run!r} in {function}",
        "the embedded engine prints y M L d D Q q E a h H k K m s S, quoted text and the zone"
        " of UTC; format the other fields with extract() or date_part()",
    )


def _year(value: exp.Expr) -> exp.Expr:
    return _fn("YEAR", value)


def _quarter(value: exp.Expr) -> exp.Expr:
    return _fn("QUARTER", value)


def _day_of_year(value: exp.Expr) -> exp.Expr:
    return _fn("DAYOFYEAR", value)


def _hour_of_am_pm(value: exp.Expr) -> exp.Expr:
    """K: 0 to 11."""
    return exp.Mod(this=_fn("HOUR", value), expression=exp.Literal.number(12))


def _clock_hour(value: exp.Expr) -> exp.Expr:
    """k: 1 to 24, midnight being 24."""
    shifted = exp.Mod(
        this=exp.Paren(this=exp.Add(this=_fn("HOUR", value), expression=exp.Literal.number(23))),
        expression=exp.Literal.number(24),
    )
    return exp.Add(this=exp.Paren(this=shifted), expression=exp.Literal.number(1))


# The numeric fields strftime lacks (or pads otherwise), printed zero-padded to the run.
_NUMBERS = {
    "y": _year,  # yyy, yyyyy...: at least as many digits as letters
    "Q": _quarter,
    "q": _quarter,
    "D": _day_of_year,  # DD: at least two digits
    "K": _hour_of_am_pm,
    "k": _clock_hour,
}


def _padded(number: exp.Expr, digits: int) -> exp.Expr:
    return _fn("PRINTF", _s(f"%0{digits}d"), number)


def _cast_text(number: exp.Expr) -> exp.Expr:
    return exp.Cast(this=number, to=exp.DataType.build("VARCHAR"))


def _concatenated(value: exp.Expr, parts: list[str | exp.Expr]) -> exp.Expr:
    """The parts in order, each run of strftime fragments one STRFTIME call."""
    calls: list[exp.Expr] = []
    fragments: list[str] = []
    for part in parts:
        if isinstance(part, str):
            fragments.append(part)
            continue
        if fragments:
            calls.append(_fn("STRFTIME", value.copy(), _s("".join(fragments))))
            fragments = []
        calls.append(part)
    if fragments:
        calls.append(_fn("STRFTIME", value.copy(), _s("".join(fragments))))
    if not calls:  # an empty pattern prints empty text (strftime takes no empty format)
        return exp.Case().when(exp.Not(this=exp.Is(this=value, expression=exp.Null())), _s(""))
    text = calls[0]
    for call in calls[1:]:
        text = exp.DPipe(this=text, expression=call)
    return text


# ---- parsing (to_timestamp, to_date, unix_timestamp) ----


def strptime_format(pattern: str, function: str) -> str:
    """The strptime format reading what ``pattern`` reads in Spark's parser."""
    out = []
    for piece in pattern_pieces(pattern, parsing=True):
        run = piece.letter * piece.length
        if piece.mark in ("[", "]"):
            raise UnsupportedSqlError(
                f"an optional section [...] in the date/time pattern of {function}",
                "parse each form separately and coalesce the results",
            )
        if not piece.letter:
            out.append(piece.text.replace("%", "%%"))
        elif run in _STRFTIME:  # E is not among them: Spark's parser refuses it
            out.append(_STRFTIME[run])
        else:
            raise UnsupportedSqlError(
                f"the date/time pattern letters {run!r} in {function}",
                "use yyyy MM dd HH mm ss and the like",
            )
    return "".join(out)


def _fn(name: str, *args: exp.Expr) -> exp.Anonymous:
    return exp.Anonymous(this=name, expressions=list(args))


def _s(text: str) -> exp.Literal:
    return exp.Literal.string(text)
