"""The operator list: what a defining query is made of, and how each part would refresh.

The walk reads the query the way it runs: the sources first, then every operator bottom-up
(joins after their inputs, WHERE before GROUP BY, windows before DISTINCT, a UNION ALL after
both branches). A CTE is inlined where it is first referenced, as Spark inlines it, and is
listed once however often it is referenced. Subqueries outside FROM are not walked: a query
that has them refreshes FULL and the reason names them.

Each row carries the strategy the operator has on its own. It does not depend on the plan's
mode (the rules read it to find what blocks an incremental refresh); EXPLAIN prints a FULL
plan's operators as recomputed in full (``explain_rows``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from sqlglot import exp

from dyntables.planner.analysis import (
    aggregates_of,
    cut,
    is_cte_reference,
    short_sql,
    source_key,
    unwrap,
    window_has_partition,
)
from dyntables.planner.structure import ranking_windows

__all__ = [
    "CONSTANT_ROWS",
    "OPERATOR_KINDS",
    "STRATEGIES",
    "OperatorStrategy",
    "SourceScan",
    "walk_operators",
]

OPERATOR_KINDS = frozenset(
    {
        "SOURCE",
        "PROJECT_FILTER",
        "UNION_ALL",
        "INNER_JOIN",
        "CROSS_JOIN",
        "OUTER_JOIN",
        "GROUP_BY",
        "SCALAR_AGGREGATE",
        "DISTINCT",
        "WINDOW",
        "LATERAL_VIEW",
        "CTE",
    }
)

# How each kind is incrementalized (seed 002, "How operators incrementally refresh").
STRATEGIES: Mapping[str, str] = {
    "SOURCE": "changed rows only, read from the change feed",
    "PROJECT_FILTER": "changed rows only",
    "UNION_ALL": "union of each side's changes",
    "INNER_JOIN": "ΔL ⋈ R + L ⋈ ΔR",
    "CROSS_JOIN": "ΔL × R + L × ΔR",  # noqa: RUF001 (the product sign is meant)
    "OUTER_JOIN": (
        "ΔL ⟕ R when only its preserved side changes; else recompute the touched join keys:"
        " each input's rows of them (new only, when the table's rows of a key are replaced)"
    ),
    "GROUP_BY": "recompute the affected groups from their input rows",
    "SCALAR_AGGREGATE": "recompute the aggregate whenever its input changes",
    "DISTINCT": "recompute the affected distinct rows: their input rows",
    "WINDOW": (
        "recompute the changed partitions: their input rows (new only, when the table's"
        " rows of a partition are replaced)"
    ),
    "LATERAL_VIEW": "apply the generator to changed rows",
    "CTE": "changes of its query, computed once for every reference",
}
_NO_CHANGE_FEED = "full scan every refresh (no change feed)"
CONSTANT_ROWS = "constant rows, never change"
_WINDOW_WITHOUT_PARTITION = "recompute everything (no PARTITION BY)"
_RANKS_KEPT = (
    "rows updated without moving keep their ranks (old values read from the table); other"
    " changes recompute their partitions"
)


@dataclass(frozen=True)
class OperatorStrategy:
    """One operator of the defining query and how a refresh computes its changes.

    ``operator`` names it in the user's terms (``"INNER JOIN shop.customers"``), ``kind`` is
    one of `OPERATOR_KINDS`, ``strategy`` a short sentence (``"ΔL ⋈ R + L ⋈ ΔR"``).
    """

    operator: str
    kind: str
    strategy: str


@dataclass(frozen=True)
class SourceScan:
    """A catalog table the query reads (a base table or another DT), by ``db.table`` key."""

    key: str
    operator: str


@dataclass
class _Walk:
    """Mutable state of one walk: rows found so far and CTEs already listed."""

    change_feed: Mapping[str, bool]
    sources: list[OperatorStrategy] = field(default_factory=list)
    scans: list[SourceScan] = field(default_factory=list)
    operators: list[OperatorStrategy] = field(default_factory=list)
    listed_ctes: set[int] = field(default_factory=set)
    top: exp.Expr | None = None  # the defining query (its windows can keep ranks in place)


# A CTE scope: name -> (the CTE, the scope its body sees: the outer scope and earlier CTEs).
_Scope = Mapping[str, "tuple[exp.CTE, _Scope]"]


def walk_operators(
    tree: exp.Expr, change_feed: Mapping[str, bool]
) -> tuple[tuple[OperatorStrategy, ...], tuple[SourceScan, ...]]:
    """The operators of ``tree`` (sources first, then bottom-up) and its catalog sources.

    >>> from dyntables.sql.dialect import parse_one
    >>> ops, scans = walk_operators(parse_one("SELECT DISTINCT a FROM db.t"), {"db.t": True})
    >>> [(op.operator, op.kind) for op in ops]
    [('FROM db.t', 'SOURCE'), ('DISTINCT', 'DISTINCT')]
    >>> [scan.key for scan in scans]
    ['db.t']
    """
    walk = _Walk(change_feed, top=tree)
    _query(walk, tree, {})
    return tuple(walk.sources + walk.operators), tuple(walk.scans)


def _emit(walk: _Walk, operator: str, kind: str, strategy: str | None = None) -> None:
    walk.operators.append(OperatorStrategy(operator, kind, strategy or STRATEGIES[kind]))


def _with_scope(query: exp.Expr, scope: _Scope) -> _Scope:
    """``scope`` extended by the CTEs ``query`` defines; each body sees the ones before it."""
    with_ = query.args.get("with_")
    if with_ is None:
        return scope
    inner: dict[str, tuple[exp.CTE, _Scope]] = dict(scope)
    for cte in with_.expressions:
        inner[cte.alias_or_name.lower()] = (cte, dict(inner))
    return inner


def _query(walk: _Walk, node: exp.Expr, scope: _Scope) -> None:
    """Walk one query: a SELECT, a set operation, or either in parentheses."""
    node = unwrap(node)
    scope = _with_scope(node, scope)
    if isinstance(node, exp.SetOperation):
        _query(walk, node.left, scope)
        _query(walk, node.right, scope)
        if isinstance(node, exp.Union) and not node.args.get("distinct"):
            _emit(walk, "UNION ALL", "UNION_ALL")
        # Other set operations get no row: they have no kind, and the reason names them.
    elif isinstance(node, exp.Select):
        _select(walk, node, scope)


def _relation(walk: _Walk, node: exp.Expr, scope: _Scope) -> str:
    """Walk one FROM or JOIN item and return how a join row should name it."""
    alias = node.alias
    suffix = f" AS {alias}" if alias else ""
    if isinstance(node, exp.Table) and isinstance(node.this, exp.Func):
        return short_sql(node)  # a table-valued function: unsupported, named by the reason
    if isinstance(node, exp.Table):
        if is_cte_reference(node, frozenset(scope)):
            _cte(walk, node.name.lower(), scope)
            return node.name + (suffix if alias.lower() != node.name.lower() else "")
        key = source_key(node)
        operator = f"FROM {key}{suffix}"
        strategy = STRATEGIES["SOURCE"] if walk.change_feed.get(key) else _NO_CHANGE_FEED
        walk.sources.append(OperatorStrategy(operator, "SOURCE", strategy))
        walk.scans.append(SourceScan(key, operator))
        return key + suffix
    if isinstance(node, exp.Values):
        walk.sources.append(OperatorStrategy(f"VALUES{suffix}", "SOURCE", CONSTANT_ROWS))
        return f"VALUES{suffix}"
    if isinstance(node, exp.Subquery):
        _query(walk, node.this, scope)
        return f"(subquery){suffix}"
    return short_sql(node)  # e.g. a LATERAL join: unsupported, named by the reason


def _cte(walk: _Walk, name: str, scope: _Scope) -> None:
    """List a CTE's operators and its own row, the first time it is referenced."""
    cte, body_scope = scope[name]
    if id(cte) in walk.listed_ctes:
        return
    walk.listed_ctes.add(id(cte))
    _query(walk, cte.this, body_scope)
    _emit(walk, f"WITH {cte.alias_or_name}", "CTE")


def _select(walk: _Walk, select: exp.Select, scope: _Scope) -> None:
    """Walk a SELECT in execution order: FROM, joins, LATERAL VIEW, WHERE, GROUP BY, windows,
    QUALIFY, DISTINCT. A SELECT that does none of the last six still projects: one row."""
    from_ = select.args.get("from_")
    if from_ is not None:
        _relation(walk, from_.this, scope)
    for join in select.args.get("joins") or []:
        _join(walk, join, _relation(walk, join.this, scope))
    for lateral in select.args.get("laterals") or []:
        _emit(walk, f"LATERAL VIEW {short_sql(lateral.this)}", "LATERAL_VIEW")

    before = len(walk.operators)
    where = select.args.get("where")
    if where is not None:
        _emit(walk, f"WHERE {short_sql(where.this)}", "PROJECT_FILTER")
    _aggregation(walk, select)
    _windows(walk, select)
    qualify = select.args.get("qualify")
    if qualify is not None:
        _emit(walk, f"QUALIFY {short_sql(qualify.this)}", "PROJECT_FILTER")
    if select.args.get("distinct") is not None:
        _emit(walk, "DISTINCT", "DISTINCT")
    if len(walk.operators) == before:
        columns = ", ".join(short_sql(e, 40) for e in select.expressions)
        _emit(walk, f"SELECT {cut(columns)}", "PROJECT_FILTER")


def _join(walk: _Walk, join: exp.Join, target: str) -> None:
    """One row per join, named as written (``LEFT OUTER JOIN shop.customers``)."""
    side = (join.side or "").upper()
    kind = (join.kind or "").upper()
    if kind in {"SEMI", "ANTI"} or isinstance(join.this, exp.Lateral):
        return  # no kind of ours; UNSUPPORTED_OPERATOR names it
    if side:
        _emit(walk, f"{side} OUTER JOIN {target}", "OUTER_JOIN")
    elif kind == "CROSS" or not (join.args.get("on") or join.args.get("using") or join.method):
        _emit(walk, f"CROSS JOIN {target}", "CROSS_JOIN")
    else:
        natural = "NATURAL " if (join.method or "").upper() == "NATURAL" else ""
        _emit(walk, f"{natural}INNER JOIN {target}", "INNER_JOIN")


def _aggregation(walk: _Walk, select: exp.Select) -> None:
    """A GROUP BY row, or a scalar-aggregate row for aggregates without GROUP BY."""
    group = select.args.get("group")
    having = select.args.get("having")
    having_text = f" HAVING {short_sql(having.this)}" if having is not None else ""
    if group is not None:
        keys = ", ".join(short_sql(key, 40) for key in group.expressions) or "..."
        _emit(walk, f"GROUP BY {keys}{having_text}", "GROUP_BY")
        return
    aggregates = list(aggregates_of(select))
    if aggregates:
        calls = ", ".join(dict.fromkeys(short_sql(agg, 40) for agg in aggregates))
        _emit(walk, f"aggregate {calls}{having_text}", "SCALAR_AGGREGATE")


def _windows(walk: _Walk, select: exp.Select) -> None:
    """One row per distinct window call of ``select`` (not of its nested queries)."""
    seen: set[str] = set()
    for window in select.find_all(exp.Window):
        if window.arg_key == "windows" or window.find_ancestor(exp.Select) is not select:
            continue
        text = short_sql(window)
        if text in seen:
            continue
        seen.add(text)
        strategy = None if window_has_partition(window) else _WINDOW_WITHOUT_PARTITION
        if strategy is None and select is walk.top and ranking_windows(select) is not None:
            strategy = _RANKS_KEPT
        _emit(walk, f"window {text}", "WINDOW", strategy)
