"""The planner: decide once, at CREATE, how a dynamic table refreshes, and record why.

`plan_refresh` parses the defining query, lists its operators (`operators.walk_operators`)
and runs the rules (`rules.RULES`, in precedence order). The outcome is a `Plan`: the mode,
the reason code (None when INCREMENTAL), one human sentence, and the operators with their
strategies. EXPLAIN prints it through `explain_rows`.

* ``REFRESH_MODE = FULL``: FULL, reason ``REFRESH_MODE_FULL``; the rules are not consulted.
* ``AUTO``: INCREMENTAL when no rule fires, else FULL with the first rule's code.
* ``INCREMENTAL``: INCREMENTAL, or `NotIncrementalError` naming the construct.

The plan keeps each operator's own strategy, whatever the plan's mode (the rules read them).
EXPLAIN (`explain_rows`) prints what a refresh really does: an INCREMENTAL plan shows per
operator what it reads and recomputes; a FULL plan recomputes the whole query, so each
source says it is read in full and each operator that it is recomputed over all its input
rows, and the ``reason`` row names what keeps the query from refreshing incrementally.

>>> plan = plan_refresh(
...     "SELECT region, count(*) AS n FROM shop.orders GROUP BY region",
...     requested="AUTO", change_feed={"shop.orders": True},
...     output_types=[("region", "string"), ("n", "bigint")], supported=OPERATOR_KINDS)
>>> for row in explain_rows(plan):
...     print(row)
('refresh_mode', '', 'INCREMENTAL')
('reason', '', 'every operator refreshes incrementally')
('FROM shop.orders', 'SOURCE', 'changed rows only, read from the change feed')
('GROUP BY region', 'GROUP_BY', 'recompute the affected groups from their input rows')
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from dyntables.catalog import Definition
from dyntables.planner.capabilities import (
    INCREMENTAL_KINDS,
    unsupported_reason,
)
from dyntables.planner.operators import (
    CONSTANT_ROWS,
    OPERATOR_KINDS,
    OperatorStrategy,
    walk_operators,
)
from dyntables.planner.reasons import (
    REASON_CODES,
    REFRESH_MODE_FULL,
    RULE_ORDER,
    UNSUPPORTED_OPERATOR,
    NotIncrementalError,
)
from dyntables.planner.rules import NONDETERMINISTIC_FUNCTIONS, Query, first_finding
from dyntables.sql.dialect import parse_one

__all__ = [
    "NONDETERMINISTIC_FUNCTIONS",
    "OPERATOR_KINDS",
    "REASON_CODES",
    "REFRESH_MODES",
    "RULE_ORDER",
    "NotIncrementalError",
    "OperatorStrategy",
    "Plan",
    "explain_rows",
    "plan_definition",
    "plan_refresh",
]

INCREMENTAL = "INCREMENTAL"
FULL = "FULL"
AUTO = "AUTO"
REFRESH_MODES = frozenset({AUTO, FULL, INCREMENTAL})

_ALL_INCREMENTAL = "every operator refreshes incrementally"
_FULL_REQUESTED = "REFRESH_MODE = FULL was requested"


@dataclass(frozen=True)
class Plan:
    """How a dynamic table refreshes, chosen once at CREATE, with the reason recorded.

    ``mode`` is ``"INCREMENTAL"`` or ``"FULL"``; ``reason_code`` is None when INCREMENTAL;
    ``reason`` is one sentence in both cases; ``operators`` lists the defining query's
    operators, sources first, then bottom-up.
    """

    mode: str
    reason_code: str | None
    reason: str
    operators: tuple[OperatorStrategy, ...]


def plan_refresh(
    query: str,
    *,
    requested: str,
    change_feed: Mapping[str, bool],
    output_types: Sequence[tuple[str, str]],
    supported: frozenset[str],
) -> Plan:
    """Choose the refresh mode of a dynamic table whose defining query is ``query``.

    ``query`` is Spark SQL with every source qualified as ``db.table``; ``change_feed`` maps
    those lower-case keys to whether the source has a change feed (a missing key counts as
    no change feed); ``output_types`` are the output columns with their Spark types;
    ``supported`` is the set of operator kinds the executor refreshes incrementally today.

    >>> plan_refresh("SELECT * FROM db.t LIMIT 5", requested="AUTO",
    ...              change_feed={"db.t": True}, output_types=[], supported=OPERATOR_KINDS)
    ... # doctest: +NORMALIZE_WHITESPACE
    Plan(mode='FULL', reason_code='LIMIT_AT_TOP_LEVEL',
         reason='LIMIT 5 at the top level of the query cannot refresh incrementally',
         operators=(OperatorStrategy(operator='FROM db.t', kind='SOURCE',
                    strategy='changed rows only, read from the change feed'),
                    OperatorStrategy(operator='SELECT *', kind='PROJECT_FILTER',
                    strategy='changed rows only')))
    """
    mode = requested.upper()
    if mode not in REFRESH_MODES:
        raise ValueError(f"requested must be one of {sorted(REFRESH_MODES)}, not {requested!r}")
    tree = parse_one(query)
    operators, scans = walk_operators(tree, change_feed)
    if mode == FULL:
        return Plan(FULL, REFRESH_MODE_FULL, _FULL_REQUESTED, operators)
    finding = first_finding(
        Query(tree, operators, scans, change_feed, tuple(output_types), supported)
    )
    if finding is None:
        return Plan(INCREMENTAL, None, _ALL_INCREMENTAL, operators)
    if mode == INCREMENTAL:
        raise NotIncrementalError(finding.code, finding.construct, finding.reason)
    return Plan(FULL, finding.code, finding.reason, operators)


def plan_definition(
    definition: Definition,
    requested: str,
    *,
    columns_of: Callable[[str], list[str]],
    format_limit: str | None = None,
) -> Plan:
    """The plan of a dynamic table's definition: ``plan_refresh``'s decision, narrowed by
    what the refresh executor can do today. Its limits beyond the operator kinds (an
    aggregate below the top, a non-scalar output; ``format_limit``: the table format has no
    incremental refresh) are ``UNSUPPORTED_OPERATOR``. Under AUTO every operator the
    executor refreshes incrementally is INCREMENTAL (keyed recomputes included): whether
    one refresh is cheaper in full is decided at that refresh, from the size of its change
    (refresh/rules.py). ``columns_of`` gives a source's column names."""
    change_feed = {key: not definition.change_tracking_problem for key in definition.sources}
    plan = plan_refresh(
        definition.extra.get("planning_query", definition.query),
        requested=requested,
        change_feed=change_feed,
        output_types=definition.columns,
        supported=INCREMENTAL_KINDS,
    )
    if plan.mode != INCREMENTAL:
        return plan
    limit = format_limit or unsupported_reason(definition, columns_of)
    if limit is not None:
        if requested == INCREMENTAL:
            raise NotIncrementalError(UNSUPPORTED_OPERATOR, limit, limit)
        return Plan(FULL, UNSUPPORTED_OPERATOR, limit, plan.operators)
    return plan


def explain_rows(plan: Plan) -> list[tuple[str, str, str]]:
    """Rows for EXPLAIN: the mode, the reason, then (operator, kind, strategy) per operator,
    the strategy being what a refresh in the plan's mode does with it.

    >>> plan = plan_refresh("SELECT a FROM db.t ORDER BY a LIMIT 5", requested="AUTO",
    ...                     change_feed={"db.t": True}, output_types=[], supported=OPERATOR_KINDS)
    >>> for row in explain_rows(plan)[2:]:
    ...     print(row)
    ('FROM db.t', 'SOURCE', 'read in full')
    ('SELECT a', 'PROJECT_FILTER', 'recomputed over all its input rows')
    """
    header = [("refresh_mode", "", plan.mode), ("reason", plan.reason_code or "", plan.reason)]
    if plan.mode == FULL:
        return header + [(op.operator, op.kind, _in_full(op)) for op in plan.operators]
    return header + [(op.operator, op.kind, op.strategy) for op in plan.operators]


def _in_full(operator: OperatorStrategy) -> str:
    """What a FULL refresh does with one operator of the query: it recomputes it all."""
    if operator.kind == "SOURCE":
        return CONSTANT_ROWS if operator.strategy == CONSTANT_ROWS else "read in full"
    return "recomputed over all its input rows"
