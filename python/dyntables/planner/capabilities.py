"""What the refresh executor can refresh incrementally today, beyond the operator kinds the
rules judge: the facts the planner narrows a plan with (``planner.plan_definition``), and
that a refresh asks again (``inserts_are_appends``: may inserts be appended as they come).

>>> from dyntables.catalog import Definition, ObjectKind
>>> definition = Definition(kind=ObjectKind.DYNAMIC_TABLE, text="",
...     query="SELECT k, count(*) AS n FROM db.t GROUP BY k",
...     columns=(("k", "string"), ("n", "bigint")), sources=("db.t",))
>>> inserts_are_appends(definition, {"db.t"})
False
>>> joined = Definition(kind=ObjectKind.DYNAMIC_TABLE, text="",
...     query="SELECT f.k, d.v FROM db.f f LEFT JOIN db.d d ON f.k = d.k",
...     columns=(("k", "string"), ("v", "string")), sources=("db.f", "db.d"))
>>> inserts_are_appends(joined, {"db.f"}), inserts_are_appends(joined, {"db.d"})
(True, False)
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from sqlglot import exp

from dyntables.catalog import Definition
from dyntables.errors import CannotRefreshIncrementallyError
from dyntables.planner.operators import OPERATOR_KINDS
from dyntables.planner.structure import (
    check_output_types,
    check_structure,
    inlined_query,
    pads_a_change,
    select_shape,
    source_keys,
)

# The planner's operator kinds this executor refreshes incrementally: all but the scalar
# aggregate, which is recomputed whenever its input changes (seed 002).
INCREMENTAL_KINDS = OPERATOR_KINDS - {"SCALAR_AGGREGATE"}


def unsupported_reason(
    definition: Definition, columns_of: Callable[[str], list[str]]
) -> str | None:
    """Why this definition cannot refresh incrementally on the current executor, if so."""
    try:
        check_output_types(definition.columns)
        check_structure(inlined_query(definition.query), columns_of)
    except CannotRefreshIncrementallyError as reason:
        return str(reason)
    return None


def inserts_are_appends(definition: Definition, changed: Collection[str]) -> bool:
    """Whether inserts into the ``changed`` sources (by key) are inserts into the query's
    result, appended without reading the table: every SELECT that reads a changed source
    is linear (filters, projections, inner and cross joins, LATERAL VIEW), or joins outer
    but pads no input that reads one (a new row of a preserved side joins, or is padded,
    on its own; a new row of a padded side can replace a padded row)."""
    tree = inlined_query(definition.query)
    try:
        for select in tree.find_all(exp.Select):
            if not source_keys(select) & set(changed):
                continue  # (a GROUP BY of a dimension that did not change, say)
            shape = select_shape(select)
            if shape == "outer":
                if pads_a_change(select, changed):
                    return False
            elif shape != "linear":
                return False
    except CannotRefreshIncrementallyError:
        return False
    return True


def format_limit(format_name: str, supports_incremental: bool) -> str | None:
    """Why a table format cannot refresh incrementally (its adapter says), if it cannot."""
    if supports_incremental:
        return None
    return f"incremental refresh of {format_name} tables is not built yet"
