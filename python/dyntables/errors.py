"""The error hierarchy: one root, specific subclasses with structured fields.

Every error the library raises for a dynamic-table statement is a ``DynamicTableError``.
Syntax errors also say where: a 1-based line and column in the text given to ``parse``,
and an excerpt of that line with a caret under the offending spot.
"""

from __future__ import annotations


class DynamicTableError(Exception):
    """Root of every error raised for a dynamic-table statement."""


class ConcurrentRefreshError(DynamicTableError):
    """A refresh (or compaction, or watermark move) lost a race: another process committed
    to the table after this one read it, so this one committed nothing. Rerunning it reads
    the winner's commit and applies only what is still missing; the scheduler retries it
    at its next tick."""


class CannotRefreshIncrementallyError(Exception):
    """This query, or this refresh, cannot be done incrementally; ``str`` says why. Not a
    user-facing error: the planner turns it into a reason code at CREATE, and a refresh
    that meets it recomputes in full and records why."""


class DynamicTableSyntaxError(DynamicTableError):
    """A dynamic-table statement that does not parse, located in the original text.

    ``reason`` is the bare explanation ("expected '=' after TARGET_LAG"), ``line`` and
    ``column`` are 1-based, ``excerpt`` is the offending line with a caret under
    ``column``. ``str(error)`` combines all three.

    >>> err = DynamicTableSyntaxError("expected a table name", "DROP DYNAMIC TABLE ;", 1, 20)
    >>> print(err)
    expected a table name (line 1, column 20)
      DROP DYNAMIC TABLE ;
                         ^
    """

    def __init__(self, reason: str, text: str, line: int, column: int) -> None:
        self.reason = reason
        self.line = line
        self.column = column
        self.excerpt = caret_excerpt(text, line, column)
        super().__init__(f"{reason} (line {line}, column {column})\n{self.excerpt}")


class UnsupportedStatementError(DynamicTableSyntaxError):
    """A statement we recognise but do not support yet (e.g. ``CREATE OR ALTER``)."""


_EXCERPT_WIDTH = 100


def caret_excerpt(text: str, line: int, column: int) -> str:
    """The ``line``-th line of ``text`` (1-based), indented, with a caret under ``column``.

    Tabs before the caret are kept so that the caret lines up in a terminal.
    """
    # Lines are counted on "\n" only, as line_and_column (and ANTLR) count them.
    lines = text.split("\n")
    source_line = lines[min(line, len(lines)) - 1].rstrip("\r")
    if len(source_line) > _EXCERPT_WIDTH:  # show a window around the caret
        first = max(0, min(column - 1 - _EXCERPT_WIDTH // 2, len(source_line) - _EXCERPT_WIDTH))
        window = source_line[first : first + _EXCERPT_WIDTH]
        prefix = "..." if first > 0 else ""
        suffix = "..." if first + _EXCERPT_WIDTH < len(source_line) else ""
        source_line = prefix + window + suffix
        column = column - first + len(prefix)
    lead = "".join(ch if ch == "\t" else " " for ch in source_line[: column - 1])
    return f"  {source_line}\n  {lead}^"


def line_and_column(text: str, offset: int) -> tuple[int, int]:
    """The 1-based (line, column) of character ``offset`` in ``text``.

    >>> line_and_column("ab\\ncd", 3)
    (2, 1)
    """
    line = text.count("\n", 0, offset) + 1
    line_start = text.rfind("\n", 0, offset) + 1
    return line, offset - line_start + 1


def syntax_error_at(
    reason: str,
    text: str,
    offset: int,
    error_class: type[DynamicTableSyntaxError] = DynamicTableSyntaxError,
) -> DynamicTableSyntaxError:
    """A ``DynamicTableSyntaxError`` (or subclass) for character ``offset`` of ``text``."""
    line, column = line_and_column(text, offset)
    return error_class(reason, text, line, column)


def first_line(failure: BaseException) -> str:
    """A failure's message on one line, for a history row or an error that wraps it: its
    first line that says something (a Py4J error begins with a line that only names the
    Java call), at most 2,000 characters; the failure's type when it has no message.

    >>> first_line(ValueError("\\n  bad value\\n  detail"))
    'bad value'
    >>> first_line(RuntimeError())
    'RuntimeError'
    """
    lines = [line.strip() for line in str(failure).splitlines() if line.strip()]
    meaningful = [line for line in lines if not line.startswith("An error occurred while calling")]
    return (meaningful or lines or [type(failure).__name__])[0].lstrip(": ")[:2000]
