"""Small questions about a sqlglot tree that both the operator walk and the rules ask.

Kept apart so that "is this an aggregate of that SELECT?" has one answer: the operator list
and the reason code must never disagree about the same query.
"""

from __future__ import annotations

from collections.abc import Iterator

from sqlglot import exp

from dyntables.catalog import table_key
from dyntables.sql.dialect import to_spark_sql

__all__ = [
    "aggregates_of",
    "cut",
    "function_name",
    "is_cte_reference",
    "is_scalar_aggregate",
    "short_sql",
    "source_key",
    "top_selects",
    "unwrap",
    "window_has_partition",
]

_SHORT = 80


def short_sql(node: exp.Expr, limit: int = _SHORT) -> str:
    """``node`` rendered as Spark SQL, cut to ``limit`` characters for EXPLAIN and messages.

    >>> from dyntables.sql.dialect import parse_one
    >>> short_sql(parse_one("a + 1"))
    'a + 1'
    """
    return cut(to_spark_sql(node), limit)


def cut(text: str, limit: int = _SHORT) -> str:
    """``text`` on one line, at most ``limit`` characters (an ellipsis marks the cut)."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def unwrap(node: exp.Expr) -> exp.Expr:
    """The query inside any parentheses: ``((SELECT …))`` is the SELECT."""
    while isinstance(node, (exp.Subquery, exp.Paren)):
        node = node.this
    return node


def function_name(func: exp.Func) -> str:
    """The Spark name of ``func``, lower case, as the user would spell it.

    sqlglot normalises names (``random()`` is ``Rand``); rendering the head in Spark gives the
    Spark spelling, which is what the user wrote or its canonical alias.
    """
    if isinstance(func, exp.Anonymous):
        return str(func.name).lower()
    return to_spark_sql(func).split("(", 1)[0].strip().lower()


def source_key(table: exp.Table) -> str:
    """The key of a source, as the ``change_feed`` mapping uses: its ``table_key``."""
    return table_key(table)


def is_cte_reference(table: exp.Table, cte_names: frozenset[str]) -> bool:
    """Whether ``table`` names a CTE in scope rather than a catalog table (CTEs have no db)."""
    return not table.db and table.name.lower() in cte_names


def aggregates_of(select: exp.Select) -> Iterator[exp.AggFunc]:
    """Aggregate calls computed by ``select`` itself.

    Aggregates inside a window (``sum(x) OVER (…)``) are window functions, and those of a
    nested query or of a PIVOT belong to that query or pivot.
    """
    for agg in select.find_all(exp.AggFunc):
        owner = agg.parent
        in_window = False
        while owner is not None and owner is not select:
            if isinstance(owner, exp.Window):
                in_window = True
            if isinstance(owner, (exp.Query, exp.Pivot)):
                break
            owner = owner.parent
        if owner is select and not in_window:
            yield agg


def is_scalar_aggregate(select: exp.Select) -> bool:
    """An aggregate with no GROUP BY: one output row computed from every input row."""
    return select.args.get("group") is None and next(aggregates_of(select), None) is not None


def top_selects(query: exp.Expr) -> Iterator[exp.Select]:
    """The SELECTs whose rows are the query's output: the root, or each UNION ALL branch."""
    node = unwrap(query)
    if isinstance(node, exp.Select):
        yield node
    elif isinstance(node, exp.Union) and not node.args.get("distinct"):
        yield from top_selects(node.left)
        yield from top_selects(node.right)


def window_has_partition(window: exp.Window) -> bool:
    """Whether ``window`` is partitioned, directly or through a named ``WINDOW w AS (…)``."""
    if window.args.get("partition_by"):
        return True
    name = window.args.get("alias")
    select = window.find_ancestor(exp.Select)
    if name is None or select is None:
        return False
    for named in select.args.get("windows") or []:
        if named.this.name.lower() == name.name.lower():
            return bool(named.args.get("partition_by"))
    return False
