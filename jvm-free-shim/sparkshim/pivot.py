"""Spark's ``PIVOT`` as DuckDB SQL.

``FROM src PIVOT (agg [AS a], ... FOR col IN (v [AS n], ...))`` groups ``src`` by every
column neither ``col`` nor an aggregate references, and gives one column per value and
aggregate: named ``n`` (or the value as Spark prints it), suffixed ``_a`` (or the aggregate's
SQL) when there are several aggregates.

Spark (3.5's ResolvePivot) computes it one of two ways, and they differ where a group has no
row of a value: when every aggregate's result is a number or a boolean, it aggregates per
(group, value) and picks each value's result, so such a cell is NULL; otherwise it
aggregates ``if(col <=> v, x, NULL)``, so such a cell is the aggregate over no rows (``0`` for
``count``, ``[]`` for ``collect_list``). The translation aggregates per (group, value) and
then, for a missing (group, value), dispatches on the aggregates' DuckDB types to NULL or to
the aggregate over no rows.

:func:`annotate_pivots` reads the Spark tree (column names and references), and
:func:`pivot_relation` builds the DuckDB relation once the aggregates are translated.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from decimal import Decimal

from sqlglot import exp

from sparkshim.errors import AnalysisException, UnsupportedSqlError

__all__ = ["annotate_pivots", "pivot_relation"]

_NAMES = "sparkshim_pivot_names"
_REFERENCES = "sparkshim_pivot_references"

# DuckDB's names of the types Spark's two-step pivot (PivotFirst) takes.
_PIVOT_FIRST_TYPES = (
    "BOOLEAN",
    "TINYINT",
    "SMALLINT",
    "INTEGER",
    "BIGINT",
    "HUGEINT",
    "FLOAT",
    "DOUBLE",
)
# Aggregates whose per-value result depends on which rows come first.
_ORDER_DEPENDENT = (exp.First, exp.Last, exp.FirstValue, exp.LastValue, exp.AnyValue)


def annotate_pivots(tree: exp.Expr) -> None:
    """Record on each PIVOT of the Spark ``tree`` its output column names and the source
    columns it consumes (the rest are its grouping columns), before translation changes the
    aggregates and values they are read from."""
    for pivot in tree.find_all(exp.Pivot):
        if pivot.args.get("unpivot"):
            continue
        for aggregate in pivot.expressions:
            _check_aggregated(aggregate)
            if aggregate.find(*_ORDER_DEPENDENT):
                raise UnsupportedSqlError(
                    "first/last/any_value in a PIVOT", "Spark ignores NULLs there in one plan"
                )
        pivot.meta[_NAMES] = _output_names(pivot)
        pivot.meta[_REFERENCES] = sorted(_consumed_columns(pivot))


def _check_aggregated(aggregate: exp.Expr) -> None:
    """Spark's error for a PIVOT aggregate that reads a column outside any aggregate (such
    a column would silently become a grouping column in DuckDB)."""
    for column in aggregate.find_all(exp.Column):
        node = column.parent
        while node is not None and node is not aggregate.parent:
            if isinstance(node, (exp.AggFunc, exp.Anonymous)):
                break
            node = node.parent
        else:
            raise AnalysisException(
                message="Aggregate expression required for pivot, but "
                f"'{aggregate.sql('spark')}' did not appear in any aggregate function."
            )


def pivot_relation(pivot: exp.Expr) -> exp.Expr:
    """Replace the relation ``pivot`` is attached to by the pivoted relation (the rule run
    once the pivot's aggregates and values are translated); returns ``pivot``, detached."""
    if pivot.args.get("unpivot"):
        raise UnsupportedSqlError("UNPIVOT", "not translated")
    source = pivot.parent
    assert source is not None
    names: list[str] = pivot.meta[_NAMES]
    consumed: list[str] = pivot.meta[_REFERENCES]
    field = pivot.args["fields"][0]
    keys = field.this.expressions if isinstance(field.this, exp.Tuple) else [field.this]
    values = [v.this if isinstance(v, exp.PivotAlias) else v for v in field.expressions]
    aggregates = [a.this if isinstance(a, exp.Alias) else a for a in pivot.expressions]
    alias = pivot.args.get("alias") or source.args.get("alias")
    rows = source.copy()
    rows.set("pivots", None)

    key_names = [f"__pivot_key_{i}" for i in range(len(keys))]
    value_names = [f"__pivot_value_{i}" for i in range(len(aggregates))]
    empty_names = [f"__pivot_empty_{i}" for i in range(len(aggregates))]
    grouped = exp.select(
        exp.Star(except_=[exp.column(name, quoted=True) for name in consumed]),
        *[exp.alias_(key.copy(), name) for key, name in zip(keys, key_names, strict=True)],
        *[exp.alias_(a.copy(), n) for a, n in zip(aggregates, value_names, strict=True)],
    ).from_(exp.to_table("__pivot_rows"))
    grouped.set("group", exp.Group(all=True))
    over_no_rows = (
        exp.select(*[exp.alias_(a.copy(), n) for a, n in zip(aggregates, empty_names, strict=True)])
        .from_(exp.to_table("__pivot_rows"))
        .where(exp.false())
    )
    pivot_first = exp.and_(*[_pivot_first_type(exp.column(name)) for name in value_names])
    outputs: list[exp.Expr] = []
    names_left = iter(names)
    for value in values:
        row_values = value.expressions if isinstance(value, exp.Tuple) else [value]
        if len(row_values) != len(keys):
            raise UnsupportedSqlError("a PIVOT value of another width than its columns")
        match = exp.and_(
            *[
                _matches(exp.column(name), row_value)
                for name, row_value in zip(key_names, row_values, strict=True)
            ]
        )
        for value_name, empty_name in zip(value_names, empty_names, strict=True):
            cell = _cell(match, value_name, empty_name, pivot_first)
            outputs.append(exp.alias_(cell, next(names_left), quoted=True))
    hidden = [exp.column(name) for name in key_names + value_names]
    pivoted = exp.select(exp.Star(except_=hidden), *outputs).from_(exp.to_table("__pivot_groups"))
    pivoted.set("group", exp.Group(all=True))
    pivoted = pivoted.with_("__pivot_rows", as_=exp.select("*").from_(rows))
    pivoted = pivoted.with_("__pivot_groups", as_=grouped).with_("__pivot_empty", as_=over_no_rows)
    table_alias = exp.TableAlias(this=exp.to_identifier(alias.name if alias else "__pivot"))
    source.replace(exp.Subquery(this=pivoted, alias=table_alias))
    return pivot


def _cell(match: exp.Expr, value_name: str, empty_name: str, pivot_first: exp.Expr) -> exp.Expr:
    """One output cell: the group's aggregate over the rows ``match`` selects, taken from
    the per-(group, value) aggregates; where the group has no such row, NULL under Spark's
    two-step plan (``pivot_first``), else the aggregate over no rows."""
    present = exp.GT(
        this=exp.Filter(this=exp.Count(this=exp.Star()), expression=exp.Where(this=match.copy())),
        expression=exp.Literal.number(0),
    )
    picked = exp.Filter(
        this=_fn("FIRST", exp.column(value_name)), expression=exp.Where(this=match.copy())
    )
    over_no_rows = exp.Subquery(
        this=exp.select(exp.column(empty_name)).from_(exp.to_table("__pivot_empty"))
    )
    return exp.Case().when(present, picked).when(pivot_first.copy(), exp.Null()).else_(over_no_rows)


def _pivot_first_type(value: exp.Expr) -> exp.Expr:
    """Whether the (per group) aggregated column ``value`` has a type Spark's two-step
    pivot takes: a number or a boolean."""
    value_type = _fn("TYPEOF", _fn("FIRST", value))
    listed = exp.In(
        this=value_type, expressions=[exp.Literal.string(t) for t in _PIVOT_FIRST_TYPES]
    )
    return listed.or_(exp.Like(this=value_type.copy(), expression=exp.Literal.string("DECIMAL%")))


def _fn(name: str, *args: exp.Expr) -> exp.Anonymous:
    return exp.Anonymous(this=name, expressions=list(args))


def _matches(key: exp.Expr, value: exp.Expr) -> exp.Expr:
    """``key`` equals ``value`` as Spark compares them (NULL matches NULL), where DuckDB's
    comparison agrees with Spark's cast of the value to the key's type; a run-time refusal
    elsewhere."""
    key_type, value_type = _fn("TYPEOF", key.copy()), _fn("TYPEOF", value.copy())
    same_kind = exp.or_(
        exp.EQ(this=key_type, expression=value_type),
        exp.EQ(this=value_type.copy(), expression=exp.Literal.string('"NULL"')),
        *[_both_in(key_type, value_type, kinds) for kinds in _COMPARABLE_KINDS],
    )
    refusal = _fn(
        "ERROR", exp.Literal.string("sparkshim does not support a PIVOT value of another type")
    )
    compared = exp.NullSafeEQ(this=key.copy(), expression=value.copy())
    return exp.Paren(this=exp.Case().when(same_kind, compared).else_(refusal))


# DuckDB types whose values compare in DuckDB as Spark compares them after casting the
# value to the column's type (the session time zone is UTC).
_COMPARABLE_KINDS = (("INTEGER", "BIGINT"), ("TIMESTAMP", "TIMESTAMP WITH TIME ZONE"))


def _both_in(key_type: exp.Expr, value_type: exp.Expr, kinds: tuple[str, ...]) -> exp.Expr:
    names = [exp.Literal.string(kind) for kind in kinds]
    return exp.and_(
        exp.In(this=key_type.copy(), expressions=names),
        exp.In(this=value_type.copy(), expressions=[name.copy() for name in names]),
    )


def _consumed_columns(pivot: exp.Expr) -> set[str]:
    """The source columns the pivot column(s) and the aggregates reference."""
    field = pivot.args["fields"][0]
    consumed = set()
    for node in [field.this, *pivot.expressions]:
        for column in node.find_all(exp.Column):
            lambda_ = column.find_ancestor(exp.Lambda)
            if lambda_ is not None and column.name in {p.name for p in lambda_.expressions}:
                continue
            consumed.add(column.name.lower())
    return consumed


def _output_names(pivot: exp.Expr) -> list[str]:
    aggregates = pivot.expressions
    field = pivot.args["fields"][0]
    names = []
    for value in field.expressions:
        if isinstance(value, exp.PivotAlias):
            value_name = value.alias
        elif isinstance(value, exp.Tuple):
            value_name = "{" + ", ".join(_printed(v) for v in value.expressions) + "}"
        else:
            value_name = _printed(value)
        if len(aggregates) == 1:
            names.append(value_name)
            continue
        names.extend(f"{value_name}_{_aggregate_name(a)}" for a in aggregates)
    return names


_STRICT_DATE = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})")
_STRICT_TIMESTAMP = re.compile(
    r"(\d{4})-(\d{1,2})-(\d{1,2})[ T](\d{1,2}):(\d{2})(?::(\d{2})(\.\d{1,6})?)?"
)


def _printed(value: exp.Expr) -> str:
    """A PIVOT value as Spark prints it in a column name (its cast to STRING)."""
    if isinstance(value, exp.Null):
        return "null"
    if isinstance(value, exp.Boolean):
        return "true" if value.this else "false"
    if isinstance(value, exp.Neg):
        return "-" + _printed(value.this)
    if isinstance(value, exp.Literal):
        if value.is_string:
            return str(value.this)
        if re.fullmatch(r"\d+", value.this):
            return str(int(value.this))
        if re.fullmatch(r"\d*\.\d+|\d+\.\d*", value.this):
            return str(Decimal(value.this))
    if isinstance(value, exp.Cast) and isinstance(value.this, exp.Literal) and value.this.is_string:
        text = value.this.name.strip()
        strict_date = _STRICT_DATE.fullmatch(text)
        if value.to.is_type(exp.DataType.Type.DATE) and strict_date:
            return date(*(int(part) for part in strict_date.groups())).isoformat()
        stamp = _STRICT_TIMESTAMP.fullmatch(text)
        timestamp_types = (exp.DType.TIMESTAMP, exp.DType.TIMESTAMPTZ, exp.DType.TIMESTAMPLTZ)
        if value.to.is_type(*timestamp_types) and stamp:
            *fields, fraction = stamp.groups()
            year, month, day, hour, minute, second = (int(part or 0) for part in fields)
            moment = datetime(year, month, day, hour, minute, second)
            micros = (fraction or ".").ljust(7, "0")[1:7].rstrip("0")
            return moment.strftime("%Y-%m-%d %H:%M:%S") + (f".{micros}" if micros else "")
    raise UnsupportedSqlError(
        f"the PIVOT value {value.sql('spark')} without an alias", "name it with AS"
    )


_PRETTY_AGGREGATES: dict[type[exp.Expr], str] = {
    exp.Sum: "sum",
    exp.Min: "min",
    exp.Max: "max",
    exp.Count: "count",
}


def _aggregate_name(aggregate: exp.Expr) -> str:
    """An aggregate's part of a column name (several aggregates): its alias, or the SQL
    Spark prints for it; only simple forms are named here."""
    if isinstance(aggregate, exp.Alias):
        return aggregate.alias
    name = _PRETTY_AGGREGATES.get(type(aggregate))
    argument = aggregate.this
    if name == "count" and isinstance(argument, exp.Star):
        return "count(1)"
    if name is not None and isinstance(argument, exp.Column) and not argument.table:
        return f"{name}({argument.name})"
    if name is not None and isinstance(argument, exp.Distinct):
        inner = argument.expressions
        if len(inner) == 1 and isinstance(inner[0], exp.Column) and not inner[0].table:
            return f"{name}(DISTINCT {inner[0].name})"
    raise UnsupportedSqlError(
        f"the unaliased PIVOT aggregate {aggregate.sql('spark')}", "name it with AS"
    )
