"""Change arithmetic for a GROUP BY at the top of a defining query.

The new value of COUNT, SUM, MIN and MAX in a group often follows from the value the table
holds and a summary of the group's signed change rows (+1 added, -1 removed), without
reading the group's other rows again (seed 002: GROUP BY; the "change arithmetic" of the
incremental issue). The change rows are not netted: a row added and removed within the
range shows up once with each sign, and every rule below holds for such pairs too.

* ``COUNT(*)``, ``COUNT(x)``: the old count plus the signed count of (non-NULL) rows.
* ``SUM(x)`` of an exact type (integers, DECIMAL): the old sum plus the signed sum. Its
  NULL-ness needs the number of non-NULL values, which the table does not hold; it is known
  when the old sum is NULL (none: the new count is the signed count) or when the signed
  count of non-NULL values is not negative (at least as many as before, so at least one).
  The signed sum adds the removed values negated (not multiplied by -1, which Spark types
  as a wider DECIMAL that may lose scale), so it has the sum's own type, DECIMAL(p+10, s),
  and the new sum equals the recomputed one to the last digit. A DECIMAL(38, s) sum with
  s > 6 is the exception: Spark adds two of them at scale s - 1
  (``spark.sql.decimalOperations.allowPrecisionLoss``), so its groups are recomputed.
* ``SUM(x)`` of DOUBLE/FLOAT: the old sum plus the sum of the added values, only when no
  non-NULL value was removed: subtracting floating-point values drifts from the recomputed
  sum further with every refresh.
* ``MIN(x)`` (``MAX`` alike): the lesser of the old value and the added values, when every
  removed non-NULL value is above the old minimum (it was not the minimum), or when the
  least added value is below every removed value and at or below the old minimum (it is
  the new minimum: an update that lowers a group's minimum, or raises its maximum).
* The group itself: it is gone when its row count falls to zero, which is known exactly with
  a ``COUNT(*)`` output, and otherwise when the group is new (no old rows) or did not lose
  more rows than it gained.

A group where a rule does not decide, and every group of a query with another aggregate
(AVG, COUNT DISTINCT, an expression over aggregates) or HAVING, is recomputed from the
sources instead.
"""

from __future__ import annotations

from sqlglot import exp

from dyntables.planner.aggregates import MergeableAggregate, counts_rows

# A group's net change in rows: the sum of its change rows' signs.
ROWS = "__dt_rows"


# ---- the group's change summaries (over its signed change rows) ----


def change_summaries(aggregate: MergeableAggregate, sign: exp.Expr) -> list[exp.Expr]:
    """What the rules need of a group's change rows for ``aggregate``, as aggregates named
    ``<column>_a`` (and ``<column>_b``)."""
    value = exp.column(aggregate.column, quoted=True)
    present = exp.Not(this=exp.Is(this=value.copy(), expression=exp.Null()))
    signed_present = exp.func("sum", _if(present, sign.copy(), exp.Literal.number(0)))
    if aggregate.function is exp.Count:
        counted = exp.func("sum", sign.copy()) if aggregate.argument is None else signed_present
        return [_named(counted, aggregate, "a")]
    added = exp.GT(this=sign.copy(), expression=exp.Literal.number(0))
    removed = exp.LT(this=sign.copy(), expression=exp.Literal.number(0))
    if aggregate.function is exp.Sum:
        if aggregate.exact:  # the signed sum; the signed count of non-NULL values
            signed_value = _if(added.copy(), value.copy(), exp.Neg(this=value.copy()))
            signed_sum = exp.func("sum", signed_value)
            return [_named(signed_sum, aggregate, "a"), _named(signed_present, aggregate, "b")]
        added_sum = exp.func("sum", _if(added, value.copy(), exp.Null()))
        removed_values = exp.func(
            "sum", _if(exp.and_(removed, present), exp.Literal.number(1), exp.Literal.number(0))
        )
        return [_named(added_sum, aggregate, "a"), _named(removed_values, aggregate, "b")]
    extreme = exp.Min if aggregate.function is exp.Min else exp.Max
    return [
        _named(extreme(this=_if(added, value.copy(), exp.Null())), aggregate, "a"),
        _named(extreme(this=_if(removed, value.copy(), exp.Null())), aggregate, "b"),
    ]


def row_change(sign: exp.Expr) -> exp.Expr:
    """The group's net change in rows, named ``ROWS``."""
    return exp.alias_(exp.func("sum", sign.copy()), ROWS, quoted=True)


# ---- the new value, and whether the rules decide it ----


def merged_value(aggregate: MergeableAggregate, old: exp.Expr, change: str) -> exp.Expr:
    """The aggregate's new value from its old value (NULL for a new group, and for a
    SUM/MIN/MAX without a non-NULL value) and the summaries in relation ``change``.
    Meaningful where ``decided`` holds."""
    a, b = _summary(aggregate, change, "a"), _summary(aggregate, change, "b")
    if aggregate.function is exp.Count:
        return exp.Add(this=_zero_if_null(old), expression=a)
    if aggregate.function is exp.Sum:
        if aggregate.exact:
            sum_value = exp.Add(this=_zero_if_null(old), expression=_zero_if_null(a))
            no_values = exp.and_(
                exp.Is(this=old.copy(), expression=exp.Null()),
                exp.Not(this=exp.GT(this=b, expression=exp.Literal.number(0))),
            )
            return exp.Case(ifs=[exp.If(this=no_values, true=exp.Null())], default=sum_value)
        return _either(old, a, exp.Add(this=old.copy(), expression=a.copy()))
    beats = exp.LT if aggregate.function is exp.Min else exp.GT
    better = exp.Case(
        ifs=[exp.If(this=beats(this=a.copy(), expression=old.copy()), true=a.copy())],
        default=old.copy(),
    )
    return _either(old, a, better)


def decided(aggregate: MergeableAggregate, old: exp.Expr, change: str) -> exp.Expr:
    """Whether the rules decide the aggregate's new value in this group: TRUE or FALSE,
    never NULL."""
    b = _summary(aggregate, change, "b")
    if aggregate.function is exp.Count:
        return exp.true()
    if aggregate.function is exp.Sum:
        if aggregate.exact:  # no values before, or at least as many non-NULL values now
            return exp.or_(
                exp.Is(this=old.copy(), expression=exp.Null()),
                exp.GTE(this=b, expression=exp.Literal.number(0)),
            )
        return exp.EQ(this=b, expression=exp.Literal.number(0))  # no value removed
    a = _summary(aggregate, change, "a")
    removed = exp.Is(this=b.copy(), expression=exp.Null())
    beyond = exp.GT if aggregate.function is exp.Min else exp.LT
    kept = exp.and_(
        exp.Not(this=exp.Is(this=old.copy(), expression=exp.Null())),
        beyond(this=b.copy(), expression=old.copy()),
    )
    # The added extreme is the new one: it lies beyond every removed value (so it was not
    # removed again within the range) and reaches the old extreme (so no remaining old
    # value beats it).
    at_least = exp.LTE if aggregate.function is exp.Min else exp.GTE
    replaced = exp.and_(
        beyond(this=b, expression=a.copy()),
        exp.or_(
            exp.Is(this=old.copy(), expression=exp.Null()),
            at_least(this=a, expression=old.copy()),
        ),
    )
    # A comparison with a NULL summary is NULL (no value added: ``a``), and NULL is neither
    # decided nor undecided to the filters that read the flag: it counts as undecided.
    return exp.func("coalesce", exp.or_(removed, kept, replaced), exp.false())


def group_outcome(
    aggregates: list[MergeableAggregate], old: str, old_present: exp.Expr, change: str
) -> tuple[exp.Expr, exp.Expr]:
    """``(known, remains)``: whether it is known if the group still has rows, and whether it
    does (meaningful where known). ``old`` is the relation of the table's rows."""
    rows = exp.column(ROWS, table=change, quoted=True)
    counted = counts_rows(aggregates)
    if counted is not None:
        old_count = exp.column(counted.output, table=old, quoted=True)
        remaining = merged_value(counted, old_count, change)
        return exp.true(), exp.GT(this=remaining, expression=exp.Literal.number(0))
    not_fewer = exp.GTE(this=rows.copy(), expression=exp.Literal.number(0))
    known = exp.or_(exp.Not(this=old_present.copy()), not_fewer)
    remains = exp.or_(
        exp.and_(old_present.copy(), not_fewer.copy()),
        exp.GT(this=rows.copy(), expression=exp.Literal.number(0)),
    )
    return known, remains


# ---- helpers ----


def _named(value: exp.Expr, aggregate: MergeableAggregate, part: str) -> exp.Expr:
    return exp.alias_(value, f"{aggregate.column}_{part}", quoted=True)


def _summary(aggregate: MergeableAggregate, change: str, part: str) -> exp.Column:
    return exp.column(f"{aggregate.column}_{part}", table=change, quoted=True)


def _if(condition: exp.Expr, true: exp.Expr, false: exp.Expr) -> exp.Expr:
    return exp.Case(ifs=[exp.If(this=condition, true=true)], default=false)


def _zero_if_null(value: exp.Expr) -> exp.Expr:
    return exp.func("coalesce", value.copy(), exp.Literal.number(0))


def _either(old: exp.Expr, added: exp.Expr, both: exp.Expr) -> exp.Expr:
    """``both`` when neither side is NULL, else the side that is not (a NULL SUM/MIN/MAX:
    no non-NULL value on that side)."""
    return exp.Case(
        ifs=[
            exp.If(this=exp.Is(this=old.copy(), expression=exp.Null()), true=added.copy()),
            exp.If(this=exp.Is(this=added.copy(), expression=exp.Null()), true=old.copy()),
        ],
        default=both,
    )
