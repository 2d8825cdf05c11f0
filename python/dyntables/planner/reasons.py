"""Why a dynamic table refreshes FULL: the closed set of reason codes, and the refusal error.

A reason code is recorded once, at CREATE, beside the refresh mode (``refresh_mode_reason``),
and EXPLAIN prints it. The codes follow Databricks' style (``WINDOW_WITHOUT_PARTITION_BY``) so
that a user can search for them; `RULE_ORDER` is also the order of precedence: when a query
has several problems, the first code in this tuple is the one reported.
"""

from __future__ import annotations

from dataclasses import dataclass

from dyntables.errors import DynamicTableError

__all__ = [
    "LIMIT_AT_TOP_LEVEL",
    "MAP_OUTPUT",
    "NONDETERMINISTIC_FUNCTION",
    "REASON_CODES",
    "REFRESH_MODE_FULL",
    "RULE_ORDER",
    "SCALAR_AGGREGATE",
    "SOURCE_WITHOUT_CHANGE_FEED",
    "SUBQUERY_OUTSIDE_FROM",
    "UNSUPPORTED_OPERATOR",
    "WINDOW_WITHOUT_PARTITION_BY",
    "Finding",
    "NotIncrementalError",
]

SUBQUERY_OUTSIDE_FROM = "SUBQUERY_OUTSIDE_FROM"
NONDETERMINISTIC_FUNCTION = "NONDETERMINISTIC_FUNCTION"
LIMIT_AT_TOP_LEVEL = "LIMIT_AT_TOP_LEVEL"
WINDOW_WITHOUT_PARTITION_BY = "WINDOW_WITHOUT_PARTITION_BY"
MAP_OUTPUT = "MAP_OUTPUT"
SOURCE_WITHOUT_CHANGE_FEED = "SOURCE_WITHOUT_CHANGE_FEED"
SCALAR_AGGREGATE = "SCALAR_AGGREGATE"
UNSUPPORTED_OPERATOR = "UNSUPPORTED_OPERATOR"

# Not a rule: the user asked for FULL, so no rule was consulted for the mode.
REFRESH_MODE_FULL = "REFRESH_MODE_FULL"

RULE_ORDER: tuple[str, ...] = (
    SUBQUERY_OUTSIDE_FROM,
    NONDETERMINISTIC_FUNCTION,
    LIMIT_AT_TOP_LEVEL,
    WINDOW_WITHOUT_PARTITION_BY,
    MAP_OUTPUT,
    SOURCE_WITHOUT_CHANGE_FEED,
    SCALAR_AGGREGATE,
    UNSUPPORTED_OPERATOR,
)
# Every code a plan records: the rules' (in precedence order), then the planner's own.
REASON_CODES: tuple[str, ...] = (*RULE_ORDER, REFRESH_MODE_FULL)


@dataclass(frozen=True)
class Finding:
    """One reason a query cannot refresh incrementally.

    ``construct`` names the culprit in the user's terms (``"rand()"``, ``"INTERSECT"``,
    ``"source shop.orders"``); ``reason`` is the sentence shown to the user, which names it.
    """

    code: str
    construct: str
    reason: str


class NotIncrementalError(DynamicTableError):
    """``REFRESH_MODE = INCREMENTAL`` on a query that cannot refresh incrementally.

    Raised at CREATE, before anything changes. The message names the construct and the way
    out; ``reason_code`` and ``construct`` carry the same facts for programs.

    >>> err = NotIncrementalError("LIMIT_AT_TOP_LEVEL", "LIMIT 10",
    ...                           "LIMIT 10 at the top level cannot refresh incrementally")
    >>> print(err)
    REFRESH_MODE = INCREMENTAL is not possible: LIMIT 10 at the top level cannot refresh \
incrementally (LIMIT_AT_TOP_LEVEL); use REFRESH_MODE = FULL or AUTO
    """

    def __init__(self, reason_code: str, construct: str, reason: str) -> None:
        self.reason_code = reason_code
        self.construct = construct
        self.reason = reason
        super().__init__(
            f"REFRESH_MODE = INCREMENTAL is not possible: {reason} ({reason_code});"
            " use REFRESH_MODE = FULL or AUTO"
        )
