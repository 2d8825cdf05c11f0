"""Incremental refresh: apply the change of the defining query (``changes.py``) to the
dynamic table as a signed multiset, in one commit that carries the refresh's watermark.

Rows (``_apply_rows``): the change is netted per row value (``GROUP BY`` every column, which
treats NULLs as equal) and every touched value is rewritten in one ``REPLACE WHERE``
commit: every copy of it is removed and its new number of copies inserted. A change that
only adds rows is appended instead, without reading the table.

Groups (``_apply_groups``): a GROUP BY or DISTINCT at the top whose keys are output
columns rewrites the affected groups: by change arithmetic (``aggregates.py``) where a
group only gained rows and every aggregate allows it, else by recomputing the group from
the sources at their new versions. No internal columns are added to the table.
"""

from __future__ import annotations

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
from dyntables.catalog import Definition
from dyntables.changes import (
    MAX_TOUCHED,
    SIGN,
    CannotRefreshIncrementallyError,
    ChangeDeriver,
    Versions,
    aliased,
    check_output_types,
    check_structure,
    group_keys,
    inline_ctes,
    parse_query,
    spark,
)
from dyntables.formats import TableFormat
from dyntables.literals import collectable, literal, touched_rows

__all__ = [
    "INCREMENTAL_KINDS",
    "RESCANNING_KINDS",
    "CannotRefreshIncrementallyError",
    "IncrementalRefresh",
    "Versions",
    "merges_groups",
    "unsupported_reason",
]

# Operator kinds whose incremental strategy rescans the sources (a keyed recompute):
# chosen by AUTO only where change arithmetic spares the rescan (``merges_groups``).
RESCANNING_KINDS = frozenset({"GROUP_BY", "DISTINCT"})
# The planner's operator kinds this executor refreshes incrementally.
INCREMENTAL_KINDS = frozenset(
    {
        "SOURCE",
        "PROJECT_FILTER",
        "UNION_ALL",
        "INNER_JOIN",
        "CROSS_JOIN",
        "OUTER_JOIN",
        "GROUP_BY",
        "DISTINCT",
        "WINDOW",
        "LATERAL_VIEW",
        "CTE",
    }
)


def unsupported_reason(
    definition: Definition, columns_of: Callable[[str], list[str]]
) -> str | None:
    """Why this definition cannot refresh incrementally on the current executor, if so."""
    try:
        check_output_types(definition.columns)
        check_structure(inline_ctes(parse_query(definition.query)), columns_of)
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
    if keys is None or mergeable_aggregates(tree, {name for _, name in keys}) is None:
        return False
    # A GROUP BY or DISTINCT below the top is recomputed by key, rescanning its sources.
    below = [node for node in tree.find_all(exp.Select) if node is not tree]
    return not any(node.args.get("group") or node.args.get("distinct") for node in below)


def _with_columns(change: exp.Query, names: list[str]) -> exp.Subquery:
    """The change query as ``d(<names>, __dt_sign)``: its columns named by position, so
    unaliased expressions of the defining query need no name of their own."""
    columns = [exp.to_identifier(name, quoted=True) for name in [*names, SIGN]]
    return exp.Subquery(
        this=change, alias=exp.TableAlias(this=exp.to_identifier("d"), columns=columns)
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
        source_columns: dict[str, list[str]],
    ) -> None:
        self.session = session
        self.fmt = fmt
        self.table = table
        self.definition = definition
        self.columns = list(definition.columns)
        self.deriver = ChangeDeriver(session, fmt, versions, source_columns.__getitem__)

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
        smallest, added = self._net_summary(renamed, names, net_sum)
        if smallest is None:  # the change query returned no rows
            return Applied(0, 0, committed=False)
        if smallest > 0:
            self._append(renamed, names, net_sum, watermark, expected)
            return Applied(added, 0, committed=True)
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

    def _net_summary(
        self, renamed: exp.Expr, names: list[str], net_sum: exp.Expr
    ) -> tuple[int | None, int]:
        """The smallest net change of any row value (None when nothing changed) and the
        sum of all of them: a smallest above zero means the change only adds rows (appends,
        or rows moving into the filter), and the sum is how many."""
        per_value = (
            exp.select(exp.alias_(net_sum.copy(), "net"))
            .from_(renamed.copy())
            .group_by(*[exp.column(n, quoted=True) for n in names])
        )
        summary = exp.select(
            exp.func("min", exp.column("net")), exp.func("sum", exp.column("net"))
        ).from_(aliased(per_value, "n"))
        smallest, total = self.session.sql(spark(summary)).collect()[0]
        return (None, 0) if smallest is None else (int(smallest), int(total))

    def _append(
        self,
        renamed: exp.Expr,
        names: list[str],
        net_sum: exp.Expr,
        watermark: str,
        expected: int | None,
    ) -> None:
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
            aliased(net, "n")
        )
        rows.set("laterals", [copies])
        self.fmt.append(self.session, self.table, rows, watermark, expected)

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
            .from_(aliased(added, "n"))
            .join(aliased(held, "o"), on=on, join_type="left")
        )

    def _count(self, query: exp.Query) -> int:
        return int(self.session.sql(spark(query)).collect()[0][0])

    # -- the commit --

    def _replace_where(
        self, predicate: exp.Expr, rows: exp.Query, watermark: str, expected: int | None
    ) -> None:
        self.fmt.replace_where(self.session, self.table, predicate, rows, watermark, expected)
