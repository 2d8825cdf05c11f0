"""Correlated scalar subqueries over COUNT whose answer Spark 3.5 gives differently from
the SQL standard (the "count bug"): these are refused instead of answered differently.

Checked against PySpark 3.5.9 (a row of ``l`` that no row of the subquery matches):

- ``(SELECT count(x.a) FROM x WHERE x.a = l.a)`` is NULL, not 0, when Spark's optimizer
  folds the subquery to constant rows or to no rows (SPARK-46743): ``x`` a view of
  constant rows (``SELECT CAST(NULL AS INT)``, ``SELECT 1 WHERE false``) or a WHERE with a
  constant condition (``AND 1 = 0``). Over a table it is 0, as in DuckDB.
- with ``spark.sql.optimizer.decorrelateSubqueryLegacyIncorrectCountHandling.enabled``
  true, ``(SELECT count(*) FROM r WHERE r.c = l.a GROUP BY c)`` is 0 instead of NULL.
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.optimizer.scope import build_scope

from sparkshim.config import LEGACY_COUNT_CONF
from sparkshim.errors import UnsupportedSqlError

_COUNTS = (exp.Count, exp.CountIf, exp.ApproxDistinct)
_NOT_SCALAR = (exp.From, exp.Join, exp.In, exp.SetOperation, exp.CTE, exp.Lateral)


def check_correlated_counts(tree: exp.Expr, *, legacy_count: bool) -> None:
    """Refuse the correlated scalar subqueries over a count whose answer Spark's optimizer
    changes (see the module's doc); ``legacy_count`` is the session's setting above."""
    for subquery in tree.find_all(exp.Subquery):
        select = subquery.this
        if isinstance(subquery.parent, _NOT_SCALAR) or not isinstance(select, exp.Select):
            continue
        if not any(e.find(*_COUNTS) for e in select.expressions) or not _correlated(select):
            continue
        if select.args.get("group") is not None:
            if legacy_count:
                raise UnsupportedSqlError(
                    f"a correlated scalar subquery with GROUP BY over a count with "
                    f"{LEGACY_COUNT_CONF}",
                    "unset the setting (Spark's answer is then NULL for no group)",
                )
            continue
        # with a HAVING, Spark 3.5 keeps the count's value for no row (0)
        if select.args.get("having") is None and _folds_to_constant_rows(select):
            raise UnsupportedSqlError(
                "a correlated scalar subquery over a count of constant rows or a constant "
                "condition (Spark 3.5 answers NULL where no row matches)",
                "read the rows from a table, or count in a join with GROUP BY",
            )


def _outer_relations(select: exp.Select) -> set[str]:
    """The names of the relations of an enclosing query that ``select`` names columns of."""
    scope = build_scope(select)
    if scope is None:
        return set()
    return {column.table.lower() for column in scope.external_columns if column.table}


def _correlated(select: exp.Select) -> bool:
    """Whether ``select`` names a column of a relation it does not define."""
    return bool(_outer_relations(select))


def _folds_to_constant_rows(select: exp.Select) -> bool:
    """Whether Spark's optimizer may turn the rows ``select`` reads into constants (or
    none): a SELECT without FROM among its sources; a WHERE condition that names no column
    or compares a column with itself; a VALUES source with a condition other than the
    correlation (Spark filters VALUES rows while optimizing)."""
    relations = [select.args.get("from_"), *(select.args.get("joins") or [])]
    sources = [inner for r in relations if r is not None for inner in r.find_all(exp.Select)]
    if any(inner.args.get("from_") is None for inner in sources):
        return True
    where = select.args.get("where")
    if where is None:
        return False
    condition = where.this.unnest()
    conjuncts = list(condition.flatten()) if isinstance(condition, exp.And) else [condition]
    if any(_constant_condition(conjunct) for conjunct in conjuncts):
        return True
    reads_values = any(r.find(exp.Values) for r in relations if r is not None)
    outer = _outer_relations(select)
    return reads_values and any(not _names_one_of(c, outer) for c in conjuncts)


def _names_one_of(condition: exp.Expr, relations: set[str]) -> bool:
    return any(c.table.lower() in relations for c in condition.find_all(exp.Column))


def _constant_condition(conjunct: exp.Expr) -> bool:
    if conjunct.find(exp.Column) is None:
        return True
    return isinstance(conjunct, exp.Binary) and conjunct.this == conjunct.expression
