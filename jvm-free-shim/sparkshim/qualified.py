"""One qualification of a statement, shared by the passes that read sqlglot's types.

sqlglot's ``qualify`` and ``annotate_types`` over a copy of a statement cost as much as the
rest of its translation. Two passes read the types they give: Spark's static types
(:func:`sparkshim.spark_typing.annotate`) and the operands of date arithmetic
(:func:`sparkshim.intervals.annotate_date_arithmetic`). Each first marks the nodes it wants
in their ``meta`` (which a copy keeps), then reads their typed twins from the one copy this
module makes, instead of each qualifying the statement again.
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.dialects.spark import Spark
from sqlglot.errors import OptimizeError, SqlglotError
from sqlglot.optimizer.annotate_types import annotate_types
from sqlglot.optimizer.qualify import qualify
from sqlglot.schema import MappingSchema

__all__ = ["qualified_copy"]


def qualified_copy(tree: exp.Expr, schemas: dict[str, dict[str, str]]) -> exp.Expr | None:
    """A copy of ``tree`` qualified and typed by sqlglot, given the Spark ``schemas`` of the
    relations it reads (by their registered names); None where sqlglot cannot qualify it
    (the passes then leave their nodes untyped, and the translation decides at run time)."""
    schema = MappingSchema(dict(schemas), dialect=Spark)
    try:
        typed = qualify(tree.copy(), schema=schema, dialect=Spark, validate_qualify_columns=False)
        return annotate_types(typed, schema=schema, dialect=Spark)
    except (OptimizeError, SqlglotError, KeyError, ValueError, OverflowError):
        # (sqlglot reads GROUP BY 12345678901234567890123 as a position, as a C integer)
        return None
