"""Join conditions taken apart: their conjuncts, and what in them may give another value
each time it is evaluated. A MERGE (dml.py) and the row index's lookups (row_index.py)
split an ON condition into what reads one side alone and what joins the two."""

from __future__ import annotations

from sqlglot import exp

# What may give another value each time it is evaluated (a function sqlglot does not know
# is taken for one).
VOLATILE: tuple[type[exp.Expr], ...] = (exp.Rand, exp.Randn, exp.Uuid, exp.Shuffle, exp.Anonymous)


def conjuncts(condition: exp.Expr) -> list[exp.Expr]:
    """``a AND (b AND c)`` as ``[a, b, c]`` (parentheses looked through)."""
    condition = condition.unnest()
    if isinstance(condition, exp.And):
        return [*conjuncts(condition.this), *conjuncts(condition.expression)]
    return [condition]


def on_one_side(conjunct: exp.Expr, alias: str) -> bool:
    """Whether ``conjunct`` reads columns of ``alias`` alone, the same each time (no
    subquery, nothing volatile)."""
    columns = list(conjunct.find_all(exp.Column))
    if not columns or any(column.table != alias for column in columns):
        return False
    return conjunct.find(exp.Subquery, *VOLATILE) is None
