"""Which aggregates of a GROUP BY at the top merge by change arithmetic: COUNT, SUM of an
exact type, MIN and MAX, without HAVING or windows (``dyntables.refresh.aggregates`` says
how each merges). The planner asks at CREATE (AUTO keeps a GROUP BY incremental when all of
its aggregates merge); the incremental refresh asks again to choose per group between
merging and recomputing.

>>> from dyntables.planner.structure import parse_query
>>> select = parse_query("SELECT k, sum(v) AS s, avg(v) AS a FROM db.t GROUP BY k")
>>> mergeable_aggregates(select, {"k"}, {"s": "bigint", "a": "double"}) is None
True
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

# Aggregate functions whose new value can follow from the old one and the change.
_MERGEABLE = (exp.Count, exp.Sum, exp.Min, exp.Max)


# Output types whose sums are exact (subtraction undoes addition).
_INEXACT_TYPES = {"double", "float", "real"}


# Spark's DECIMAL limits: 38 digits; a result over 38 digits keeps at least 6 of scale.
_MAX_DECIMAL_PRECISION = 38


_MINIMUM_ADJUSTED_SCALE = 6


@dataclass(frozen=True)
class MergeableAggregate:
    """An output column holding ``COUNT/SUM/MIN/MAX(argument)`` (``argument`` None for
    ``COUNT(*)``); ``column`` names the argument in the change query, and is the prefix of
    the group's change summaries (``<column>_a``, ``<column>_b``)."""

    output: str
    function: type[exp.AggFunc]
    argument: exp.Expr | None
    column: str
    exact: bool  # whether the output type's sums are exact (not DOUBLE/FLOAT)


def mergeable_aggregates(
    select: exp.Select, key_outputs: set[str], output_types: dict[str, str]
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
        output_type = output_types.get(name, "")
        if isinstance(inner, exp.Sum) and not _adds_exactly(output_type):
            return None
        exact = output_type.lower() not in _INEXACT_TYPES
        column = f"__dt_arg{len(aggregates)}"
        aggregates.append(MergeableAggregate(name, type(inner), argument, column, exact))
    return aggregates


def _adds_exactly(type_sql: str) -> bool:
    """Whether Spark adds two values of this type without rounding: all but a DECIMAL(38, s)
    with s > 6, whose sum Spark rounds to max(s - 1, 6) places to fit 38 digits."""
    if not type_sql.lower().startswith("decimal"):
        return True
    parameters = exp.DataType.build(type_sql, dialect="spark").expressions
    if len(parameters) != 2:  # DECIMAL alone is DECIMAL(10, 0)
        return True
    precision, scale = (int(parameter.this.name) for parameter in parameters)
    return precision < _MAX_DECIMAL_PRECISION or scale <= _MINIMUM_ADJUSTED_SCALE


def counts_rows(aggregates: list[MergeableAggregate]) -> MergeableAggregate | None:
    """The ``COUNT(*)`` output, if the query has one."""
    return next((a for a in aggregates if a.function is exp.Count and a.argument is None), None)
