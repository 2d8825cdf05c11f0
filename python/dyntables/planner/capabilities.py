"""What the refresh executor can refresh incrementally today, beyond the operator kinds the
rules judge: the facts the planner narrows a plan with (``planner.plan_definition``), and
that a refresh asks again (``is_linear``: may inserts be appended as they come).

>>> from dyntables.catalog import Definition, ObjectKind
>>> definition = Definition(kind=ObjectKind.DYNAMIC_TABLE, text="",
...     query="SELECT k, count(*) AS n FROM db.t GROUP BY k",
...     columns=(("k", "string"), ("n", "bigint")), sources=("db.t",))
>>> is_linear(definition)
False
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from dyntables.catalog import Definition
from dyntables.errors import CannotRefreshIncrementallyError
from dyntables.planner.operators import OPERATOR_KINDS
from dyntables.planner.structure import (
    check_output_types,
    check_structure,
    inlined_query,
    select_shape,
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


def is_linear(definition: Definition) -> bool:
    """Whether every SELECT of the query is linear (filters, projections, inner and cross
    joins, LATERAL VIEW): inserts into its sources are then inserts into its result."""
    tree = inlined_query(definition.query)
    try:
        return all(select_shape(select) == "linear" for select in tree.find_all(exp.Select))
    except CannotRefreshIncrementallyError:
        return False


def format_limit(format_name: str, supports_incremental: bool) -> str | None:
    """Why a table format cannot refresh incrementally (its adapter says), if it cannot."""
    if supports_incremental:
        return None
    return f"incremental refresh of {format_name} tables is not built yet"
