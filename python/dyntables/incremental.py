"""Incremental refresh: derive the change of the defining query from its sources' change
feeds, and apply it to the dynamic table as a signed multiset in one commit.

Derivation (``change_query``), by operator:

* a source table's change is its change feed between the two pinned versions, each row
  signed +1 (insert, update post-image) or -1 (delete, update pre-image);
* a SELECT block over inner/cross-joined inputs (tables or subqueries) with a filter and
  scalar projections is linear in each input, so its change is the telescoping sum
  ``Σ_i Q(new_1..new_{i-1}, Δ_i, old_{i+1}..old_n)`` with the sign carried through;
* UNION ALL distributes: the change of ``A UNION ALL B`` is ``ΔA UNION ALL ΔB``;
* a CTE is inlined where it is used, so each use is an input of its own.

Application (``IncrementalRefresh.apply``): the change is netted per row value (``GROUP BY``
every column, which treats NULLs as equal) and every touched value is rewritten in one
``INSERT INTO … REPLACE WHERE`` commit: every copy of it is removed and its new number of
copies inserted. A GROUP BY or DISTINCT at the top recomputes the affected groups
instead: their keys come from the change of the query's input, and their rows are replaced
with the query's rows for those keys. No internal columns are added to the table.
"""

from __future__ import annotations

import datetime
import decimal
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from dyntables.aggregates import (
    MergeableAggregate,
    added_value,
    mergeable_aggregates,
    merged_value,
)
from dyntables.catalog import Definition, key_to_table, table_key
from dyntables.dialect import parse_one, to_spark_sql
from dyntables.engine import Engine
from dyntables.formats import TableFormat

SIGN = "__dt_sign"
# Operator kinds whose incremental strategy rescans the sources (affected-group recompute):
# chosen only when REFRESH_MODE = INCREMENTAL asks for it, since AUTO would not gain.
RESCANNING_KINDS = frozenset({"GROUP_BY", "DISTINCT"})
# The planner's operator kinds this executor refreshes incrementally.
INCREMENTAL_KINDS = frozenset(
    {
        "SOURCE",
        "PROJECT_FILTER",
        "UNION_ALL",
        "INNER_JOIN",
        "CROSS_JOIN",
        "GROUP_BY",
        "DISTINCT",
        "CTE",
    }
)
# More touched row values (or groups) than this make a full refresh cheaper and simpler.
MAX_TOUCHED = 5000

_SCALAR_TYPES = (
    "boolean",
    "tinyint",
    "smallint",
    "int",
    "bigint",
    "float",
    "double",
    "string",
    "date",
    "timestamp",
    "timestamp_ntz",
    "binary",
)


class CannotRefreshIncrementallyError(Exception):
    """This query, or this refresh, cannot be done incrementally; ``str`` says why."""


@dataclass(frozen=True)
class Versions:
    """Each source's version at the last refresh (old) and now (new)."""

    old: dict[str, int | None]
    new: dict[str, int | None]

    def changed(self, key: str) -> bool:
        return self.old.get(key) != self.new.get(key)


def check_output_types(columns: tuple[tuple[str, str], ...]) -> None:
    """Only scalar outputs: their values are compared and rewritten as literals."""
    for name, type_sql in columns:
        if not (type_sql in _SCALAR_TYPES or type_sql.startswith(("decimal", "varchar", "char"))):
            raise CannotRefreshIncrementallyError(
                f"output column {name} has type {type_sql}, which incremental refresh cannot"
                " compare and rewrite row by row"
            )


def inline_ctes(tree: exp.Query) -> exp.Query:
    """``tree`` with every CTE reference replaced by the CTE's query, at every level (a
    CTE may sit in a subquery), and no WITH left: each use becomes an input of its own."""
    tree = tree.copy()
    # Innermost WITHs first, so a body is final before it is copied into its uses.
    scopes = [node for node in tree.walk() if isinstance(node, exp.Query) and _with_of(node)]
    for scope in reversed(scopes):
        with_ = _with_of(scope)
        assert with_ is not None
        bodies: dict[str, exp.Expr] = {}
        for cte in with_.expressions:
            bodies[cte.alias_or_name.lower()] = _inline_references(cte.this.copy(), bodies)
        scope.set("with_", None)
        _inline_references(scope, bodies)
    return tree


def _with_of(node: exp.Expr) -> exp.With | None:
    with_ = node.args.get("with_")
    return with_ if isinstance(with_, exp.With) else None


def _inline_references(tree: exp.Expr, bodies: dict[str, exp.Expr]) -> exp.Expr:
    for reference in list(tree.find_all(exp.Table)):
        if reference.db or reference.name.lower() not in bodies:
            continue
        alias = reference.alias or reference.name
        reference.replace(
            exp.Subquery(
                this=bodies[reference.name.lower()].copy(),
                alias=exp.TableAlias(this=exp.to_identifier(alias)),
            )
        )
    return tree


class ChangeDeriver:
    """Builds the signed change query of a query over pinned sources."""

    def __init__(
        self,
        session: Any,
        fmt: TableFormat,
        versions: Versions,
        columns_of: Callable[[str], list[str]],
    ) -> None:
        self.session = session
        self.fmt = fmt
        self.versions = versions
        self.columns_of = columns_of

    # ---- inputs at a version ----

    def at(self, node: exp.Expr, side: str) -> exp.Expr:
        """A copy of ``node`` (a table or subquery) reading every source at ``side``."""
        copy = node.copy()
        references = [copy] if isinstance(copy, exp.Table) else list(copy.find_all(exp.Table))
        for reference in references:
            key = table_key(reference)
            version = (self.versions.old if side == "old" else self.versions.new).get(key)
            if version is None:
                raise CannotRefreshIncrementallyError(f"{key} has no version to read at")
            pinned = self.fmt.pinned(reference, version)
            if reference is copy:
                return pinned
            reference.replace(pinned)
        return copy

    def touches_change(self, node: exp.Expr) -> bool:
        tables = [node] if isinstance(node, exp.Table) else list(node.find_all(exp.Table))
        return any(self.versions.changed(table_key(table)) for table in tables)

    # ---- change queries ----

    def change(self, node: exp.Expr) -> exp.Query | None:
        """The signed change of ``node`` (a query, table or subquery), None if it has none."""
        if isinstance(node, exp.Table):
            return self.table_change(node)
        if isinstance(node, exp.Subquery):
            return self.change(node.this)
        if isinstance(node, exp.Union):
            if node.args.get("distinct"):
                raise CannotRefreshIncrementallyError("UNION (distinct) is not incremental yet")
            parts = [part for part in (self.change(node.left), self.change(node.right)) if part]
            if not parts:
                return None
            combined: exp.Query = parts[0]
            for part in parts[1:]:
                combined = exp.union(combined, part, distinct=False)
            return combined
        if isinstance(node, exp.Select):
            return self.select_change(node)
        raise CannotRefreshIncrementallyError(
            f"{type(node).__name__.upper()} is not incremental yet"
        )

    def table_change(self, table: exp.Table) -> exp.Query | None:
        key = table_key(table)
        if not self.versions.changed(key):
            return None
        old, new = self.versions.old.get(key), self.versions.new.get(key)
        if old is None or new is None:
            raise CannotRefreshIncrementallyError(
                f"{key} has no version range to read changes from"
            )
        return self.fmt.changes(
            self.session, key_to_table(key), self.columns_of(key), old, new, SIGN
        )

    def select_change(self, select: exp.Select) -> exp.Query | None:
        check_linear_select(select)
        inputs = _inputs(select)
        terms: list[exp.Query] = []
        for index, changed in enumerate(inputs):
            delta = self.change(changed)
            if delta is None:
                continue
            term = select.copy()
            term_inputs = _inputs(term)
            for position, item in enumerate(term_inputs):
                alias = item.alias_or_name
                if position == index:
                    replacement: exp.Expr = exp.Subquery(
                        this=delta, alias=exp.TableAlias(this=exp.to_identifier(alias))
                    )
                else:
                    replacement = self.at(item, "new" if position < index else "old")
                    if isinstance(replacement, exp.Table) and not replacement.alias:
                        replacement.set("alias", exp.TableAlias(this=exp.to_identifier(alias)))
                item.replace(replacement)
            sign_column = exp.column(SIGN, table=inputs[index].alias_or_name)
            term.set("expressions", [*term.expressions, exp.alias_(sign_column, SIGN)])
            terms.append(term)
        if not terms:
            return None
        combined: exp.Query = terms[0]
        for other in terms[1:]:
            combined = exp.union(combined, other, distinct=False)
        return combined


def check_linear_select(select: exp.Select) -> None:
    """A SELECT block whose change is the telescoping sum: filters, scalar projections and
    inner/cross joins only; anything else says what is not incremental."""
    if select.args.get("group") or select.args.get("distinct") or _has_aggregate(select):
        raise CannotRefreshIncrementallyError(
            "an aggregate below the top of the query is not incremental yet"
        )
    if any(True for _ in select.find_all(exp.Window)):
        raise CannotRefreshIncrementallyError("window functions are not incremental yet")
    if select.args.get("laterals"):
        raise CannotRefreshIncrementallyError("LATERAL VIEW is not incremental yet")
    for join in select.args.get("joins") or []:
        side = (join.side or "").upper()
        if side in ("LEFT", "RIGHT", "FULL") or (join.kind or "").upper() in ("SEMI", "ANTI"):
            raise CannotRefreshIncrementallyError(
                f"{side or join.kind} JOIN is not incremental yet"
            )


def _inputs(select: exp.Select) -> list[exp.Expr]:
    """The FROM item and each joined item, in order."""
    from_ = select.args.get("from_") or select.args.get("from")
    items = [from_.this] if from_ is not None else []
    items += [join.this for join in select.args.get("joins") or []]
    return items


def _has_aggregate(select: exp.Select) -> bool:
    return any(
        isinstance(node, exp.AggFunc) and node.find_ancestor(exp.Select) is select
        for projection in select.expressions
        for node in projection.find_all(exp.AggFunc)
    )


def group_keys(select: exp.Select) -> list[tuple[exp.Expr, str]] | None:
    """For a top-level GROUP BY or DISTINCT: each group key with the output column that
    holds it; None when the query has neither. A key not in the output is an error."""
    if select.args.get("distinct"):
        return [(projection.copy(), projection.alias_or_name) for projection in select.expressions]
    group = select.args.get("group")
    if group is None:
        return None
    if group.args.get("rollup") or group.args.get("cube") or group.args.get("grouping_sets"):
        raise CannotRefreshIncrementallyError(
            "GROUPING SETS / ROLLUP / CUBE are not incremental yet"
        )
    outputs = {}
    for position, projection in enumerate(select.expressions, start=1):
        inner = projection.this if isinstance(projection, exp.Alias) else projection
        outputs[inner.sql("spark")] = projection.alias_or_name
        outputs[str(position)] = projection.alias_or_name
    keys = []
    for key in group.expressions:
        text = key.sql("spark")
        if text not in outputs:
            raise CannotRefreshIncrementallyError(
                f"the GROUP BY key {text} is not an output column"
            )
        expression = key
        if isinstance(key, exp.Literal):  # GROUP BY 1: the projection it points at
            projection = select.expressions[int(key.name) - 1]
            expression = projection.this if isinstance(projection, exp.Alias) else projection
        keys.append((expression.copy(), outputs[text]))
    return keys


# ---- literals ----


def collectable(column: str, type_sql: str) -> exp.Expr:
    """How to select a column so that its value can be written back as a literal exactly:
    date/time values as text in the session's time zone, binary as hex."""
    value = exp.column(column, quoted=True)
    if type_sql in ("date", "timestamp", "timestamp_ntz"):
        return exp.alias_(exp.cast(value, exp.DataType.build("STRING")), column, quoted=True)
    if type_sql == "binary":
        return exp.alias_(exp.func("hex", value), column, quoted=True)
    return value


def literal(value: Any, type_sql: str) -> exp.Expr:
    """A Spark literal for ``value`` (as ``collectable`` selected it) of type ``type_sql``."""
    data_type = exp.DataType.build(type_sql, dialect="spark")
    if value is None:
        return exp.cast(exp.Null(), data_type)
    if type_sql == "binary":
        return exp.func("unhex", exp.Literal.string(str(value)))
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, int) and type_sql in ("int", "bigint"):
        return exp.Literal.number(value)  # an integer literal widens as the column needs
    if isinstance(value, str) and type_sql == "string":
        return exp.Literal.string(value)
    if isinstance(value, float):
        text = (
            repr(value)
            if math.isfinite(value)
            else ("NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity"))
        )
        return exp.cast(exp.Literal.string(text), data_type)
    if isinstance(value, (int, decimal.Decimal)):
        return exp.cast(exp.Literal.string(str(value)), data_type)
    if isinstance(value, (datetime.date, datetime.datetime)):
        raise AssertionError("date/time values are collected as text")
    return exp.cast(exp.Literal.string(str(value)), data_type)


def null_safe_match(columns: list[tuple[str, str]], values: tuple[Any, ...]) -> exp.Expr:
    """``c1 <=> v1 AND c2 <=> v2 …`` for one row value."""
    conditions = [
        exp.NullSafeEQ(this=exp.column(name, quoted=True), expression=literal(value, type_sql))
        for (name, type_sql), value in zip(columns, values, strict=True)
    ]
    return exp.and_(*conditions) if conditions else exp.true()


def any_of(conditions: list[exp.Expr]) -> exp.Expr:
    return (
        exp.or_(*[exp.paren(condition) for condition in conditions]) if conditions else exp.false()
    )


def touched_rows(columns: list[tuple[str, str]], values: list[tuple[Any, ...]]) -> exp.Expr:
    """A predicate true exactly for rows equal (null-safe) to one of ``values``.

    It leads with an IN list on the first column, which engines evaluate as a hash lookup,
    so that the per-value comparisons run only for the few rows that pass it.
    """
    name, type_sql = columns[0]
    firsts = {value[0] for value in values}
    column = exp.column(name, quoted=True)
    present = sorted(firsts - {None}, key=repr)
    lead: exp.Expr = (
        column.isin(*[literal(v, type_sql) for v in present]) if present else exp.false()
    )
    if None in firsts:
        lead = exp.or_(lead, column.is_(exp.null()))
    if len(columns) == 1:
        return lead
    exact = any_of([null_safe_match(columns, value) for value in values])
    return exp.and_(exp.paren(lead), exp.paren(exact))


def _with_columns(change: exp.Query, names: list[str]) -> exp.Subquery:
    """The change query as ``d(<names>, __dt_sign)``: its columns named by position, so
    unaliased expressions of the defining query need no name of their own."""
    columns = [exp.to_identifier(name, quoted=True) for name in [*names, SIGN]]
    return exp.Subquery(
        this=change, alias=exp.TableAlias(this=exp.to_identifier("d"), columns=columns)
    )


def _aliased(query: exp.Query, alias: str) -> exp.Subquery:
    return exp.Subquery(this=query.copy(), alias=exp.TableAlias(this=exp.to_identifier(alias)))


def parse_query(query: str) -> exp.Query:
    tree = parse_one(query)
    assert isinstance(tree, exp.Query)
    return tree


def spark(tree: exp.Expr) -> str:
    return to_spark_sql(tree)


def unsupported_reason(definition: Definition) -> str | None:
    """Why this definition cannot refresh incrementally on the current executor, if so."""
    try:
        check_output_types(definition.columns)
        tree = inline_ctes(parse_query(definition.query))
        if isinstance(tree, exp.Select) and group_keys(tree) is not None:
            probe = tree.copy()
            probe.set("group", None)
            probe.set("distinct", None)
            probe.set("having", None)
            tree = probe
            if any(True for _ in tree.find_all(exp.AggFunc)):
                # The input of the aggregate is checked below without the aggregate itself.
                tree.set("expressions", [exp.Star()])
        versions = Versions(old={}, new={})
        _StructureCheck(versions).change_structure(tree)
    except CannotRefreshIncrementallyError as reason:
        return str(reason)
    return None


def merges_groups(definition: Definition) -> bool:
    """Whether the query is a GROUP BY or DISTINCT at the top whose aggregates all merge by
    change arithmetic, so that groups that only gain rows are updated without a rescan."""
    tree = inline_ctes(parse_query(definition.query))
    if not isinstance(tree, exp.Select):
        return False
    keys = group_keys(tree)
    return keys is not None and mergeable_aggregates(tree, {name for _, name in keys}) is not None


class _StructureCheck(ChangeDeriver):
    """Walks a query as ``change`` would, to find what is not incremental, without versions."""

    def __init__(self, versions: Versions) -> None:
        super().__init__(None, None, versions, lambda key: [])  # type: ignore[arg-type]

    def change_structure(self, tree: exp.Expr) -> None:
        if isinstance(tree, exp.Union):
            if tree.args.get("distinct"):
                raise CannotRefreshIncrementallyError("UNION (distinct) is not incremental yet")
            self.change_structure(tree.left)
            self.change_structure(tree.right)
        elif isinstance(tree, exp.Subquery):
            self.change_structure(tree.this)
        elif isinstance(tree, exp.Select):
            check_linear_select(tree)
            for item in _inputs(tree):
                if not isinstance(item, exp.Table):
                    self.change_structure(item)
                elif isinstance(item.this, exp.Anonymous):
                    raise CannotRefreshIncrementallyError(
                        f"the table function {item.this.name} is not incremental"
                    )
        elif not isinstance(tree, exp.Table):
            raise CannotRefreshIncrementallyError(
                f"{type(tree).__name__.upper()} is not incremental yet"
            )


# ---- applying a change ----


@dataclass
class Applied:
    """What an incremental refresh changed."""

    rows_inserted: int
    rows_deleted: int
    committed: bool  # False when the change netted out to nothing


class IncrementalRefresh:
    """One incremental refresh of ``table`` from ``versions.old`` to ``versions.new``."""

    def __init__(
        self,
        session: Any,
        fmt: TableFormat,
        table: exp.Table,
        definition: Definition,
        versions: Versions,
    ) -> None:
        self.session = session
        self.fmt = fmt
        self.table = table
        self.definition = definition
        self.columns = list(definition.columns)
        self.deriver = ChangeDeriver(session, fmt, versions, self._columns_of)

    def _columns_of(self, key: str) -> list[str]:
        return list(Engine.schema_of(self.session, key).names)

    def apply(self, watermark: str, expected_version: int | None) -> Applied:
        """Derive, net and write the change in one commit carrying ``watermark``."""
        tree = inline_ctes(parse_query(self.definition.query))
        keys = group_keys(tree) if isinstance(tree, exp.Select) else None
        if keys is not None:
            assert isinstance(tree, exp.Select)
            return self._apply_groups(tree, keys, watermark, expected_version)
        return self._apply_rows(tree, watermark, expected_version)

    # -- rows: SELECT / JOIN / UNION ALL --

    def _apply_rows(self, tree: exp.Query, watermark: str, expected: int | None) -> Applied:
        delta = self.deriver.change(tree)
        if delta is None:
            return Applied(0, 0, committed=False)
        names = [name for name, _ in self.columns]
        renamed = _with_columns(delta, names)
        net_sum = exp.func("sum", exp.column(SIGN))
        smallest = self._smallest_net(renamed, names, net_sum)
        if smallest is None:  # the change query returned no rows
            return Applied(0, 0, committed=False)
        if smallest > 0:
            return self._append(renamed, names, net_sum, watermark, expected)
        net = (
            exp.select(*[collectable(n, t) for n, t in self.columns], exp.alias_(net_sum, "net"))
            .from_(renamed)
            .group_by(*[exp.column(n, quoted=True) for n in names])
            .having(exp.NEQ(this=net_sum.copy(), expression=exp.Literal.number(0)))
            .limit(MAX_TOUCHED + 1)
        )
        changes = [tuple(row) for row in self.session.sql(spark(net)).collect()]
        if not changes:
            return Applied(0, 0, committed=False)
        if len(changes) > MAX_TOUCHED:
            raise CannotRefreshIncrementallyError(f"more than {MAX_TOUCHED} row values changed")
        touched = touched_rows(self.columns, [row[:-1] for row in changes])
        old_counts = self._counts(touched)
        rows: list[tuple[Any, ...]] = []
        deleted = 0
        for row in changes:
            value, change = row[:-1], int(row[-1])
            before = old_counts.get(value, 0)
            after = before + change
            if after < 0:
                raise CannotRefreshIncrementallyError(
                    "the table does not hold the rows its change removes"
                )
            deleted += before
            rows.extend([value] * after)
        if len(rows) > MAX_TOUCHED * 50:
            raise CannotRefreshIncrementallyError("the change rewrites too many rows")
        self._replace_where(touched, self._values(rows), watermark, expected)
        return Applied(len(rows), deleted, committed=True)

    def _smallest_net(self, renamed: exp.Expr, names: list[str], net_sum: exp.Expr) -> int | None:
        """The smallest net change of any row value (None when nothing changed): above zero,
        the change only adds rows (appends, or rows moving into the filter)."""
        per_value = (
            exp.select(exp.alias_(net_sum.copy(), "net"))
            .from_(renamed.copy())
            .group_by(*[exp.column(n, quoted=True) for n in names])
        )
        smallest = exp.select(exp.func("min", exp.column("net"))).from_(_aliased(per_value, "n"))
        value = self.session.sql(spark(smallest)).collect()[0][0]
        return None if value is None else int(value)

    def _append(
        self,
        renamed: exp.Expr,
        names: list[str],
        net_sum: exp.Expr,
        watermark: str,
        expected: int | None,
    ) -> Applied:
        """Only additions: append each value's added copies, in one blind append computed
        in SQL (no row comes back to the driver, nothing is rewritten)."""
        columns = [exp.column(n, quoted=True) for n in names]
        net = (
            exp.select(*columns, exp.alias_(net_sum.copy(), "net"))
            .from_(renamed.copy())
            .group_by(*[c.copy() for c in columns])
        )
        copies = exp.Lateral(
            this=exp.Explode(
                this=exp.func("sequence", exp.Literal.number(1), exp.column("net", table="n"))
            ),
            view=True,
            alias=exp.TableAlias(this=exp.to_identifier("e"), columns=[exp.to_identifier("copy")]),
        )
        rows = exp.select(*[exp.column(n, table="n", quoted=True) for n in names]).from_(
            _aliased(net, "n")
        )
        rows.set("laterals", [copies])
        added = self._count(
            exp.select(exp.func("sum", exp.column("net"))).from_(_aliased(net, "n"))
        )
        self.fmt.append(self.session, self.table, rows, watermark, expected)
        return Applied(added, 0, committed=True)

    def _counts(self, touched: exp.Expr) -> dict[tuple[Any, ...], int]:
        names = [exp.column(n, quoted=True) for n, _ in self.columns]
        query = (
            exp.select(
                *[collectable(n, t) for n, t in self.columns],
                exp.alias_(exp.func("count", exp.Star()), "n"),
            )
            .from_(self.table.copy())
            .where(touched)
            .group_by(*names)
        )
        return {tuple(row)[:-1]: int(row[-1]) for row in self.session.sql(spark(query)).collect()}

    def _values(self, rows: list[tuple[Any, ...]]) -> exp.Query:
        typed = [
            exp.alias_(exp.cast(exp.Null(), exp.DataType.build(t, dialect="spark")), n, quoted=True)
            for n, t in self.columns
        ]
        if not rows:
            return exp.select(*typed).where(exp.false())
        values = exp.Values(
            expressions=[
                exp.Tuple(
                    expressions=[literal(v, t) for v, (_, t) in zip(row, self.columns, strict=True)]
                )
                for row in rows
            ],
            alias=exp.TableAlias(
                this=exp.to_identifier("v"),
                columns=[exp.to_identifier(n, quoted=True) for n, _ in self.columns],
            ),
        )
        return exp.select("*").from_(values)

    # -- groups: GROUP BY / DISTINCT at the top --

    def _apply_groups(
        self,
        tree: exp.Select,
        keys: list[tuple[exp.Expr, str]],
        watermark: str,
        expected: int | None,
    ) -> Applied:
        """Rewrite the affected groups: those that only gained rows by change arithmetic
        (``aggregates.py``) where every aggregate allows it, the others by recomputing
        them from the sources at their new versions."""
        key_types = dict(self.columns)
        key_columns = [(name, key_types[name]) for _, name in keys]
        mergeable = mergeable_aggregates(tree, {name for _, name in keys})
        arguments = [
            exp.alias_(aggregate.argument.copy(), aggregate.column, quoted=True)
            for aggregate in mergeable or []
            if aggregate.argument is not None
        ]
        grouped_input = tree.copy()
        for arg in ("group", "having", "distinct", "order", "limit"):
            grouped_input.set(arg, None)
        grouped_input.set(
            "expressions",
            [*[exp.alias_(expression, name, quoted=True) for expression, name in keys], *arguments],
        )
        delta = self.deriver.change(grouped_input)
        if delta is None:
            return Applied(0, 0, committed=False)
        renamed = _with_columns(delta, [*[name for _, name in keys], *[a.alias for a in arguments]])
        lowest_sign = exp.func("min", exp.column(SIGN))
        affected = (
            exp.select(*[collectable(n, t) for n, t in key_columns], lowest_sign)
            .from_(renamed)
            .group_by(*[exp.column(n, quoted=True) for n, _ in key_columns])
            .limit(MAX_TOUCHED + 1)
        )
        groups = [tuple(row) for row in self.session.sql(spark(affected)).collect()]
        if not groups:
            return Applied(0, 0, committed=False)
        if len(groups) > MAX_TOUCHED:
            raise CannotRefreshIncrementallyError(f"more than {MAX_TOUCHED} groups changed")
        grown = [group[:-1] for group in groups if mergeable is not None and group[-1] > 0]
        others = [group[:-1] for group in groups if mergeable is None or group[-1] < 0]
        parts: list[exp.Query] = []
        if grown:
            assert mergeable is not None
            parts.append(
                self._merged_groups(
                    renamed, key_columns, mergeable, touched_rows(key_columns, grown)
                )
            )
        if others:
            recomputed = exp.Subquery(
                this=self.deriver.at(exp.Subquery(this=tree), "new").this,
                alias=exp.TableAlias(this=exp.to_identifier("q")),
            )
            parts.append(exp.select("*").from_(recomputed).where(touched_rows(key_columns, others)))
        rows = parts[0]
        for part in parts[1:]:
            rows = exp.union(rows, part, distinct=False)
        touched = touched_rows(key_columns, [group[:-1] for group in groups])
        # Counted on the table before and after, not by running the recompute twice.
        in_groups = (
            exp.select(exp.func("count", exp.Star())).from_(self.table.copy()).where(touched)
        )
        deleted = self._count(in_groups)
        self._replace_where(touched.copy(), rows, watermark, expected)
        inserted = self._count(in_groups)
        return Applied(inserted, deleted, committed=True)

    def _merged_groups(
        self,
        renamed: exp.Subquery,
        key_columns: list[tuple[str, str]],
        aggregates: list[MergeableAggregate],
        grown: exp.Expr,
    ) -> exp.Query:
        """The new rows of groups that only gained rows: each aggregate's value in the
        table (none for a new group) merged with its value over the added rows."""
        key_names = [name for name, _ in key_columns]
        added = (
            exp.select(
                *[exp.column(n, quoted=True) for n in key_names],
                *[added_value(aggregate) for aggregate in aggregates],
            )
            .from_(renamed.copy())
            .group_by(*[exp.column(n, quoted=True) for n in key_names])
            .having(
                exp.GT(this=exp.func("min", exp.column(SIGN)), expression=exp.Literal.number(0))
            )
        )
        held = exp.select("*").from_(self.table.copy()).where(grown)
        on = exp.and_(
            *[
                exp.NullSafeEQ(
                    this=exp.column(n, table="o", quoted=True),
                    expression=exp.column(n, table="n", quoted=True),
                )
                for n in key_names
            ]
        )
        by_output = {aggregate.output: aggregate for aggregate in aggregates}
        values: list[exp.Expr] = []
        for name, type_sql in self.columns:
            value: exp.Expr = exp.column(name, table="n", quoted=True)
            if name in by_output:
                old = exp.column(name, table="o", quoted=True)
                value = exp.cast(
                    merged_value(by_output[name], old, value),
                    exp.DataType.build(type_sql, dialect="spark"),
                )
            values.append(exp.alias_(value, name, quoted=True))
        return (
            exp.select(*values)
            .from_(_aliased(added, "n"))
            .join(_aliased(held, "o"), on=on, join_type="left")
        )

    def _count(self, query: exp.Query) -> int:
        return int(self.session.sql(spark(query)).collect()[0][0])

    # -- the commit --

    def _replace_where(
        self, predicate: exp.Expr, rows: exp.Query, watermark: str, expected: int | None
    ) -> None:
        self.fmt.replace_where(self.session, self.table, predicate, rows, watermark, expected)
