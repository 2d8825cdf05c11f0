"""The rules that send a query to FULL refresh, one function per reason code, in precedence order.

Like sqlglot's optimizer, `RULES` lists the rules in the order they run; the first one that
finds something decides the reason. Each rule reads a `Query` (the parsed tree plus what the
catalog knows about it) and returns a `Finding` naming the construct, or None.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from sqlglot import exp

from dyntables.planner.analysis import (
    function_name,
    is_scalar_aggregate,
    short_sql,
    top_selects,
    unwrap,
    window_has_partition,
)
from dyntables.planner.operators import OperatorStrategy, SourceScan
from dyntables.planner.reasons import (
    LIMIT_AT_TOP_LEVEL,
    MAP_OUTPUT,
    NONDETERMINISTIC_FUNCTION,
    SCALAR_AGGREGATE,
    SOURCE_WITHOUT_CHANGE_FEED,
    SUBQUERY_OUTSIDE_FROM,
    UNSUPPORTED_OPERATOR,
    WINDOW_WITHOUT_PARTITION_BY,
    Finding,
)

__all__ = ["NONDETERMINISTIC_FUNCTIONS", "RULES", "Query", "first_finding"]

# Functions whose result differs between two evaluations over the same rows: an incremental
# refresh would keep old values for unchanged rows, a full one would not, so the two would
# disagree. Spark names, lower case.
NONDETERMINISTIC_FUNCTIONS = frozenset(
    {
        # random values
        "rand",
        "random",
        "randn",
        "randstr",
        "uniform",
        "uuid",
        "shuffle",
        # the clock
        "current_timestamp",
        "now",
        "current_date",
        "curdate",
        "current_time",
        "localtimestamp",
        # where and how the row was read
        "monotonically_increasing_id",
        "spark_partition_id",
        "input_file_name",
        "input_file_block_start",
        "input_file_block_length",
    }
)


@dataclass(frozen=True)
class Query:
    """Everything a rule may look at: the tree, its operators and sources, the catalog facts."""

    tree: exp.Expr
    operators: tuple[OperatorStrategy, ...]
    scans: tuple[SourceScan, ...]
    change_feed: Mapping[str, bool]
    output_types: Sequence[tuple[str, str]]
    supported: frozenset[str]


Rule = Callable[[Query], "Finding | None"]


def subquery_outside_from(query: Query) -> Finding | None:
    """EXISTS, IN (subquery), ANY/ALL and scalar subqueries: their changes do not compose."""
    for node in query.tree.walk():
        if isinstance(node, (exp.Select, exp.SetOperation)) and node is not query.tree:
            holder = _holder(node)
            if holder is not None and not isinstance(
                holder, (exp.From, exp.Join, exp.CTE, exp.SetOperation)
            ):
                if isinstance(holder, exp.Lateral):
                    continue  # a LATERAL join, reported as an unsupported operator
                construct = f"{_subquery_form(holder)} in {_clause(holder)}"
                reason = (
                    f"{construct} is a subquery outside FROM, which cannot refresh incrementally"
                )
                return Finding(SUBQUERY_OUTSIDE_FROM, construct, reason)
    return None


def _holder(query: exp.Expr) -> exp.Expr | None:
    """The node a nested query sits in, ignoring parentheses."""
    parent = query.parent
    while isinstance(parent, (exp.Subquery, exp.Paren)):
        parent = parent.parent
    return parent


def _subquery_form(holder: exp.Expr | None) -> str:
    if isinstance(holder, exp.Exists):
        return "EXISTS (subquery)"
    if isinstance(holder, exp.In):
        return "IN (subquery)"
    if isinstance(holder, exp.Any):
        return "ANY (subquery)"
    if isinstance(holder, exp.All):
        return "ALL (subquery)"
    return "scalar subquery"


_CLAUSES: tuple[tuple[type[exp.Expr], str], ...] = (
    (exp.Where, "WHERE"),
    (exp.Having, "HAVING"),
    (exp.Qualify, "QUALIFY"),
    (exp.Join, "a JOIN condition"),
    (exp.Group, "GROUP BY"),
    (exp.Order, "ORDER BY"),
)


def _clause(node: exp.Expr | None) -> str:
    """The clause of the enclosing SELECT that ``node`` is in, in the user's words."""
    while node is not None and not isinstance(node, exp.Select):
        for clause_type, name in _CLAUSES:
            if isinstance(node, clause_type):
                return name
        node = node.parent
    return "the SELECT list"


def nondeterministic_function(query: Query) -> Finding | None:
    """A function in `NONDETERMINISTIC_FUNCTIONS`, anywhere in the query."""
    for func in query.tree.find_all(exp.Func):
        name = function_name(func)
        if name in NONDETERMINISTIC_FUNCTIONS:
            construct = f"{name}()"
            reason = f"{construct} is nondeterministic, so it cannot be maintained incrementally"
            return Finding(NONDETERMINISTIC_FUNCTION, construct, reason)
    return None


def limit_at_top_level(query: Query) -> Finding | None:
    """LIMIT, OFFSET or ORDER BY on the query's result: a top-N depends on every row."""
    top = unwrap(query.tree)
    for arg, word in (("limit", "LIMIT"), ("offset", "OFFSET"), ("order", "ORDER BY")):
        clause = top.args.get(arg)
        if clause is not None:
            construct = short_sql(clause)
            reason = f"{construct} at the top level of the query cannot refresh incrementally"
            return Finding(LIMIT_AT_TOP_LEVEL, construct or word, reason)
    return None


def window_without_partition_by(query: Query) -> Finding | None:
    """A window with no PARTITION BY is one partition: any change recomputes all of it."""
    for window in query.tree.find_all(exp.Window):
        if window.arg_key != "windows" and not window_has_partition(window):
            construct = f"window {short_sql(window)}"
            reason = f"{construct} has no PARTITION BY, so every change recomputes the whole window"
            return Finding(WINDOW_WITHOUT_PARTITION_BY, construct, reason)
    return None


_MAP_TYPE = re.compile(r"\bmap\s*<", re.IGNORECASE)


def map_output(query: Query) -> Finding | None:
    """An output column of map type: rows cannot be compared, so changes cannot be merged."""
    for name, type_ in query.output_types:
        if _MAP_TYPE.search(type_):
            construct = f"output column {name} {type_}"
            reason = f"output column {name} has type {type_}, which cannot be compared for equality"
            return Finding(MAP_OUTPUT, construct, reason)
    return None


def source_without_change_feed(query: Query) -> Finding | None:
    """A source with no change feed: its changes cannot be read, only its whole contents."""
    for scan in query.scans:
        if not query.change_feed.get(scan.key, False):
            construct = f"source {scan.key}"
            reason = f"{construct} has no change feed"
            return Finding(SOURCE_WITHOUT_CHANGE_FEED, construct, reason)
    return None


def scalar_aggregate(query: Query) -> Finding | None:
    """The result is a scalar aggregate: it recomputes fully, so a full refresh is as cheap.

    A scalar aggregate deeper in the query is an operator of its own (kind SCALAR_AGGREGATE)
    and does not decide the mode here.
    """
    for select in top_selects(query.tree):
        if is_scalar_aggregate(select):
            construct = "aggregate without GROUP BY"
            reason = f"the query is an {construct}, which recomputes fully on every change"
            return Finding(SCALAR_AGGREGATE, construct, reason)
    return None


def unsupported_operator(query: Query) -> Finding | None:
    """A construct with no incremental rule, or an operator kind the executor lacks."""
    for node in query.tree.walk():
        construct = _unsupported_construct(node, query.tree)
        if construct is not None:
            return _not_incremental_yet(construct)
    for operator in query.operators:
        if operator.kind not in query.supported:
            return _not_incremental_yet(operator.operator)
    return None


def _not_incremental_yet(construct: str) -> Finding:
    return Finding(UNSUPPORTED_OPERATOR, construct, f"{construct} is not incremental yet")


def _unsupported_construct(node: exp.Expr, root: exp.Expr) -> str | None:
    """The name of ``node`` if it is a construct no refresh rule covers, else None."""
    if isinstance(node, exp.SetOperation):
        return _set_operation_name(node)
    if isinstance(node, exp.Pivot):
        return "UNPIVOT" if node.args.get("unpivot") else "PIVOT"
    if isinstance(node, exp.TableSample):
        return "TABLESAMPLE"
    if isinstance(node, exp.Group):
        return _grouping_sets_name(node)
    if isinstance(node, exp.Table) and isinstance(node.this, exp.Func):
        return f"table-valued function {short_sql(node.this)}"
    if isinstance(node, exp.Lateral) and not node.args.get("view"):
        return "LATERAL join"
    if isinstance(node, exp.Join) and (node.kind or "").upper() in {"SEMI", "ANTI"}:
        return f"{node.side} {node.kind} JOIN".strip().upper()
    if isinstance(node, exp.With) and node.args.get("recursive"):
        return "WITH RECURSIVE"
    if isinstance(node, (exp.Limit, exp.Offset)) and node.parent is not unwrap(root):
        return f"{short_sql(node)} inside a subquery"
    return None


def _set_operation_name(node: exp.SetOperation) -> str | None:
    """None for UNION ALL (supported); the operation's name for any other."""
    distinct = bool(node.args.get("distinct"))
    if isinstance(node, exp.Union):
        return "UNION (DISTINCT)" if distinct else None
    word = "INTERSECT" if isinstance(node, exp.Intersect) else "EXCEPT"
    return word if distinct else f"{word} ALL"


def _grouping_sets_name(group: exp.Group) -> str | None:
    for arg, word in (("grouping_sets", "GROUPING SETS"), ("rollup", "ROLLUP"), ("cube", "CUBE")):
        if group.args.get(arg):
            return f"GROUP BY {word}"
    for key in group.expressions:
        if isinstance(key, exp.GroupingSets):
            return "GROUP BY GROUPING SETS"
        if isinstance(key, exp.Rollup):
            return "GROUP BY ROLLUP"
        if isinstance(key, exp.Cube):
            return "GROUP BY CUBE"
    return None


RULES: tuple[Rule, ...] = (
    subquery_outside_from,
    nondeterministic_function,
    limit_at_top_level,
    window_without_partition_by,
    map_output,
    source_without_change_feed,
    scalar_aggregate,
    unsupported_operator,
)


def findings(query: Query) -> Iterator[Finding]:
    """Every rule's finding, in precedence order."""
    for rule in RULES:
        found = rule(query)
        if found is not None:
            yield found


def first_finding(query: Query) -> Finding | None:
    """The finding that decides the reason: the first rule, in `RULES` order, that fires."""
    return next(findings(query), None)
