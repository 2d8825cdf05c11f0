"""Change arithmetic for a GROUP BY at the top of a defining query.

When a group only gained rows since the last refresh, the new value of COUNT, SUM, MIN and
MAX follows from the value the table holds and the same aggregate over the added rows, so
the group is updated without reading its other rows again (seed 002: GROUP BY; the
"change arithmetic" of the incremental issue). Other aggregates (AVG, COUNT DISTINCT, an
expression over aggregates), HAVING, and any group that lost rows fall back to recomputing
the affected groups from the sources: without internal columns the table does not hold
what a removal would need (how many non-NULL values a SUM still has, the second-smallest
value behind a MIN).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

# Aggregate functions whose value over old + added rows follows from the two values.
_MERGEABLE = (exp.Count, exp.Sum, exp.Min, exp.Max)


@dataclass(frozen=True)
class MergeableAggregate:
    """An output column holding ``COUNT/SUM/MIN/MAX(argument)`` (``argument`` None for
    ``COUNT(*)``); ``column`` names the added rows' argument in the change query."""

    output: str
    function: type[exp.AggFunc]
    argument: exp.Expr | None
    column: str


def mergeable_aggregates(
    select: exp.Select, key_outputs: set[str]
) -> list[MergeableAggregate] | None:
    """Each output column of ``select`` that is not a group key, as a mergeable aggregate;
    None when one of them is not (then every affected group is recomputed)."""
    if select.args.get("having") or any(True for _ in select.find_all(exp.Window)):
        return None
    aggregates: list[MergeableAggregate] = []
    for projection in select.expressions:
        name = projection.alias_or_name
        if name in key_outputs:
            continue
        inner = projection.this if isinstance(projection, exp.Alias) else projection
        if not isinstance(inner, _MERGEABLE) or isinstance(inner.this, exp.Distinct):
            return None
        argument = None if isinstance(inner.this, exp.Star) else inner.this
        if isinstance(inner, exp.Count) and argument is not None and argument.is_star:
            argument = None
        column = f"__dt_arg{len(aggregates)}"
        aggregates.append(MergeableAggregate(name, type(inner), argument, column))
    return aggregates


def added_value(aggregate: MergeableAggregate) -> exp.Expr:
    """The aggregate over the added rows of a group (the change query's rows, all
    additions), named after the output column."""
    argument: exp.Expr = (
        exp.Star() if aggregate.argument is None else exp.column(aggregate.column, quoted=True)
    )
    return exp.alias_(aggregate.function(this=argument), aggregate.output, quoted=True)


def merged_value(aggregate: MergeableAggregate, old: exp.Expr, added: exp.Expr) -> exp.Expr:
    """The aggregate over old + added rows from the two values. ``old`` is NULL for a new
    group; a NULL SUM/MIN/MAX means "no non-NULL value yet", so the other side wins."""
    if aggregate.function is exp.Count:
        return exp.Add(this=exp.func("coalesce", old, exp.Literal.number(0)), expression=added)
    ifs = [
        exp.If(this=exp.Is(this=old.copy(), expression=exp.Null()), true=added.copy()),
        exp.If(this=exp.Is(this=added.copy(), expression=exp.Null()), true=old.copy()),
    ]
    if aggregate.function is exp.Sum:
        return exp.Case(ifs=ifs, default=exp.Add(this=old.copy(), expression=added.copy()))
    beats = exp.LT if aggregate.function is exp.Min else exp.GT
    ifs.append(exp.If(this=beats(this=added.copy(), expression=old.copy()), true=added.copy()))
    return exp.Case(ifs=ifs, default=old.copy())
