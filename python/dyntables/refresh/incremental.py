"""The incremental strategy: apply the change of the defining query (``changes.py``) to the
dynamic table as a signed multiset, in one commit that carries the refresh's watermark.

Rows (``_apply_rows``): inserts into the sources of a linear query are appended as they
come. Otherwise the change is netted per row value (``GROUP BY`` every column, which
treats NULLs as equal). A change that only adds rows is appended, without reading the
table. Otherwise one ``MERGE`` deletes every copy of each touched value and inserts its
new number of copies (the copies the table holds are counted by a join with the change).

Groups (``_apply_groups``): a GROUP BY or DISTINCT at the top whose keys are output
columns rewrites the affected groups with one ``MERGE`` on the group keys: by change
arithmetic (``aggregates.py``) where every aggregate allows it and its rules decide the
group, else by recomputing the group from the sources at their new versions.

Where the engine writes counted changes itself (``TableFormat.apply_counted``: the
embedded engine), a change netted per row value is handed to it as it is, and the rows a
MERGE would replace (a GROUP BY's affected groups, ranking-window rows kept in place) as
their old rows each losing a copy and their new rows each gaining one: only the copies
removed are found and marked, nothing is counted against the table first.

The rows a refresh inserts and deletes are counted by the jobs that compute what it writes
(``ChangeDeriver.summarized``: on Spark observed while the rows are computed), never by
reading the table again: the copies of each touched value the table holds, joined with the
change before the MERGE; the table's rows of each affected group, joined with it likewise.
Rows appended as they come are counted by the commit's metrics, else by one count; a
counted write says what it wrote.

Everything but a counted write runs as SQL on the refresh's session; no internal columns
are added to the table, and with a frozen region (``active``) only active rows are removed or added.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from dyntables.catalog import Definition
from dyntables.engine import refused_by_engine
from dyntables.errors import CannotRefreshIncrementallyError, first_line
from dyntables.formats import Commit, CountedWrite, TableFormat
from dyntables.planner.aggregates import MergeableAggregate, mergeable_aggregates
from dyntables.planner.capabilities import format_limit
from dyntables.planner.read_columns import read_column_names
from dyntables.planner.structure import (
    KEY,
    group_keys,
    inlined_query,
    key_outputs,
    ranking_windows,
    select_shape,
    through_renaming,
    with_output_names,
)
from dyntables.refresh import rules
from dyntables.refresh.aggregates import (
    change_summaries,
    decided,
    group_outcome,
    merged_value,
    row_change,
)
from dyntables.refresh.changes import (
    NET,
    SIGN,
    ChangeDeriver,
    Versions,
    aliased,
    netted,
    netting_partition,
    null_safe_equal,
    quoted_columns,
    rows_of_keys,
    touched_by,
    union_all,
    view_read,
    with_columns,
)
from dyntables.refresh.context import RefreshContext, counted, inserts_only
from dyntables.refresh.state import Action, Applied, RefreshInputs, RefreshJob, new_watermark
from dyntables.refresh.windows import RanksKept, WindowChange
from dyntables.sql.columns import RESERVED_PREFIX, qualified
from dyntables.sql.dialect import to_spark_sql
from dyntables.sql.merges import delete_then_insert_merge

# Internal column names of the queries an incremental refresh runs (never in the table).
HELD = "__dt_held"  # copies of a row value the table holds
DECIDED = "__dt_decided"  # change arithmetic decides the group's new row
REMAINS = "__dt_remains"  # the group still has rows (meaningful where decided)
PRESENT = "__dt_present"  # TRUE on the table's rows (NULL: an outer join found none)
OLD = "__dt_old{}"  # a column of the table's row of a group, by position
GROUPS = "__dt_groups"  # the affected groups, where a query reads them more than once


# ---- applying a change ----


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
        active: exp.Expr | None = None,
        *,
        source_types: dict[str, list[str]] | None = None,
        appends_as_they_come: bool = False,
        checkpoint_views: bool = False,
        netted_by: dict[str, list[exp.Expr]] | None = None,
    ) -> None:
        self.session = session
        # Where rows are active (not frozen): frozen rows are neither removed nor added.
        self.active = active
        self.fmt = fmt
        self.table = table
        self.definition = definition
        self.columns = list(definition.columns)
        # Inserts into the sources of a linear query are inserts into its result: appended
        # as they come, each change feed read once.
        self.appends_as_they_come = appends_as_they_come
        self.deriver = ChangeDeriver(
            session,
            fmt,
            versions,
            source_columns.__getitem__,
            types_of=source_types.__getitem__ if source_types else None,
            materialize_feeds=not self.appends_as_they_come,
            checkpoint_views=checkpoint_views,
            netted_by=netted_by,
        )

    def apply(self, watermark: str, expected_version: int | None) -> Applied:
        """Derive, net and write the change in one commit carrying ``watermark``."""
        tree = with_output_names(inlined_query(self.definition.query), self.columns)
        keys = group_keys(tree) if isinstance(tree, exp.Select) else None
        try:
            if keys is not None:
                assert isinstance(tree, exp.Select)
                return self._apply_groups(tree, keys, watermark, expected_version)
            return self._apply_rows(tree, watermark, expected_version)
        finally:
            self.deriver.drop_change_views()

    # -- rows: SELECT / JOIN / UNION ALL / keyed operators --

    def _apply_rows(self, tree: exp.Query, watermark: str, expected: int | None) -> Applied:
        in_place = self._ranks_kept(tree)
        if in_place is None:
            key_names = self._replaceable_keys(tree)
            if key_names is not None:
                assert isinstance(tree, exp.Select)
                return self._replace_keys(tree, key_names, watermark, expected)
            delta = self.deriver.change(tree)
        elif in_place.replaced is not None:
            replaced = in_place.replaced  # each removed value held once: nothing to net
            if self.fmt.writes_counted_changes:
                written = self._write_counted(
                    [replaced.removed], [replaced.added], watermark, expected
                )
                if written is not None:
                    return Applied(
                        written.inserted,
                        written.deleted,
                        written.committed,
                        written.made(watermark),
                    )
            names = [name for name, _ in self.columns]
            made = self._merge(names, replaced.removed, replaced.added, watermark, expected)
            return Applied(replaced.rows, replaced.rows, committed=True, made=made)
        else:
            delta = in_place.query
        if delta is None:
            return Applied(0, 0, committed=False)
        names = [name for name, _ in self.columns]
        if self.appends_as_they_come:  # nothing to net or count first
            rows = exp.select(*quoted_columns(names)).from_(with_columns(delta, names))
            if self.active is not None:
                rows = rows.where(self.active.copy())
            made = self.fmt.append(
                self.session, self.table, self.deriver.runnable(rows), watermark, expected
            )
            # The commit counts its rows where the format says (an Iceberg append's summary,
            # Delta's metrics); else they are counted.
            added = made.rows_inserted if made is not None else None
            if added is None and not self.fmt.reports_row_counts:
                added = self._count_rows(rows)
            return Applied(added, 0, committed=True, made=made)
        net: exp.Query = netted(with_columns(delta, names), names, self.active)
        if self.fmt.writes_counted_changes:
            # The engine writes the counted change as it is, whatever it holds: only the
            # copies it removes are found (a netted value's copies are all active or all
            # frozen, and the change holds only active values); nothing to summarize.
            net = self.deriver.materialize(net)
            written = self.fmt.apply_counted(
                self.session, self.table, view_read(net), NET, watermark, expected
            )
            if written is not None:
                return Applied(
                    written.inserted, written.deleted, written.committed, written.made(watermark)
                )
        # Each touched value's net change, with the smallest (None: nothing changed) and
        # their sum: a smallest above zero means the change only adds rows (appends, or
        # rows moving into the filter), and the sum is how many.
        net, (smallest, added) = self.deriver.summarized(
            net, [exp.func("min", exp.column(NET)), exp.func("sum", exp.column(NET))]
        )
        if smallest is None:  # the change nets out to nothing
            return Applied(0, 0, committed=False)
        if smallest > 0:
            made = self._append(net, names, watermark, expected)
            return Applied(int(added), 0, committed=True, made=made)
        # Each touched value with the copies the table holds and the copies it will hold.
        held = (
            exp.select(*quoted_columns(names, "t"), exp.alias_(exp.func("count", exp.Star()), HELD))
            .from_(exp.alias_(self.table.copy(), "t", table=True))
            .join(aliased(net, "n"), on=null_safe_equal(names, "t", "n"), join_type="semi")
            .group_by(*quoted_columns(names, "t"))
        )
        # Read twice below (the rows removed, the copies written): it joins the change with
        # the whole table, so it is computed once. Its summary: the rows the change removes
        # (every copy of each touched value), the rows it writes back, and the smallest new
        # number of copies (below zero: the table is not what the change was computed
        # against).
        after = exp.Add(this=exp.column(HELD), expression=exp.column(NET))
        counted, (deleted, inserted, lowest) = self.deriver.summarized(
            exp.select(
                *quoted_columns(names, "n"),
                exp.alias_(exp.column(NET, table="n"), NET),
                exp.alias_(exp.func("coalesce", exp.column(HELD, table="h"), _number(0)), HELD),
            )
            .from_(aliased(net, "n"))
            .join(aliased(held, "h"), on=null_safe_equal(names, "n", "h"), join_type="left"),
            [
                exp.func("sum", exp.column(HELD)),
                exp.func("sum", exp.func("greatest", after.copy(), _number(0))),
                exp.func("min", after.copy()),
            ],
        )
        if (lowest or 0) < 0:
            raise CannotRefreshIncrementallyError(
                "the table does not hold the rows its change removes"
            )
        made = self._merge_copies(counted, names, watermark, expected)
        return Applied(int(inserted or 0), int(deleted or 0), committed=True, made=made)

    def _merge_copies(
        self, counted: exp.Query, names: list[str], watermark: str, expected: int | None
    ) -> Commit | None:
        """One MERGE from ``counted`` (each touched value with ``HELD``, the copies the
        table holds, and ``NET``): every copy of a held value removed, and its
        ``HELD + NET`` copies inserted."""
        after = exp.Add(this=exp.column(HELD), expression=exp.column(NET))
        removed = (
            exp.select(*quoted_columns(names))
            .from_(aliased(counted, "c"))
            .where(exp.GT(this=exp.column(HELD), expression=_number(0)))
        )
        copies = exp.select(*quoted_columns(names)).from_(aliased(counted, "c"))
        copies.set("laterals", [_copies(after)])
        copies = copies.where(exp.GT(this=after.copy(), expression=_number(0)))
        return self._merge(names, removed, copies, watermark, expected)

    def _ranks_kept(self, tree: exp.Query) -> WindowChange | None:
        """The change of ranking windows at the top with their updated rows kept in place
        (``windows.py``); None where that does not apply (then the touched partitions are
        replaced): not such a block, a frozen region, or an ambiguous row this refresh."""
        if self.active is not None or not isinstance(tree, exp.Select):
            return None
        if any("map<" in type_sql.lower() for _, type_sql in self.columns):
            return None  # the change is netted per row value: Spark cannot group MAPs
        # SELECT *, rank() OVER …: stored inside a projection of its columns.
        select = through_renaming(tree, self.deriver.columns_of)
        if select is None or len(select.expressions) != len(self.columns):
            return None
        windows = ranking_windows(select)
        if windows is None:
            return None
        names = [name for name, _ in self.columns]
        # An engine that writes counted changes (the embedded one) also looks rows up by
        # some of their columns through its row index (on a table of half a million rows
        # or more; a smaller one it reads): the old rows are found so there.
        by_index = self.fmt.writes_counted_changes
        return RanksKept(self.deriver, self.table, names, by_index).change(select, windows)

    # -- keys: a keyed block or an outer join at the top, its keys in output columns --

    def _replaceable_keys(self, tree: exp.Query) -> list[str] | None:
        """The output columns holding a top-level keyed block's (or outer join's) recompute
        keys, where its touched keys' rows are replaced rather than netted; None where
        they are netted (no such block or columns, or a frozen region: its rows of a
        touched key may not be replaced)."""
        if self.active is not None or not isinstance(tree, exp.Select):
            return None
        if select_shape(tree) == "outer" and self.deriver.changes_linearly(tree):
            return None  # only preserved sides changed: their rows' change is netted
        return key_outputs(tree, self.deriver.columns_of)

    def _replace_keys(
        self, tree: exp.Select, key_names: list[str], watermark: str, expected: int | None
    ) -> Applied:
        """Replace the table's rows of every touched key by the block's rows of those keys
        at the new versions: what the block held before is never computed (no second read
        of the sources at the old versions). Where the engine writes counted changes, the
        table's rows of those keys lose a copy and the new rows gain one, netted per value
        (a row the recompute gives again writes nothing); elsewhere one MERGE on the key
        columns, with nothing netted or counted against the table."""
        recompute = self.deriver.recompute(tree)
        if recompute is None:
            return Applied(0, 0, committed=False)
        names = [name for name, _ in self.columns]
        rows: exp.Query = exp.select(*quoted_columns(names)).from_(
            aliased(self.deriver.recomputed(tree, recompute, "new"), "q")
        )
        removed = exp.select(
            *[
                exp.alias_(exp.column(KEY.format(i), quoted=True), name, quoted=True)
                for i, name in enumerate(key_names)
            ]
        ).from_(aliased(recompute.touched, "k"))
        if self.fmt.writes_counted_changes:
            counted = self._write_counted(
                [self._held_rows(removed, key_names)], [rows], watermark, expected
            )
            if counted is not None:
                return Applied(counted.inserted, counted.deleted, counted.committed)
        inserted = deleted = None
        if not self.fmt.reports_row_counts:  # counted by the jobs that compute them
            rows, (inserted,) = self.deriver.summarized(rows, [exp.func("count", exp.Star())])
            deleted = self._count_rows(
                exp.select("*")
                .from_(self.table.copy())
                .where(
                    touched_by([exp.column(n, quoted=True) for n in key_names], recompute.touched)
                )
            )
        made = self._merge(key_names, removed, rows, watermark, expected)
        return Applied(inserted, deleted, committed=True, made=made)

    def _append(
        self, net: exp.Query, names: list[str], watermark: str, expected: int | None
    ) -> Commit | None:
        """Only additions: append each value's added copies, in one blind append computed
        in SQL (no row comes back to the driver, nothing is rewritten); the commit, where
        the format names it."""
        rows = exp.select(*quoted_columns(names, "n")).from_(aliased(net, "n"))
        rows.set("laterals", [_copies(exp.column(NET, table="n"))])
        runnable = self.deriver.runnable(rows)
        return self.fmt.append(self.session, self.table, runnable, watermark, expected)

    # -- groups: GROUP BY / DISTINCT at the top --

    def _apply_groups(
        self,
        tree: exp.Select,
        keys: list[tuple[exp.Expr, str]],
        watermark: str,
        expected: int | None,
    ) -> Applied:
        """Rewrite the affected groups: by change arithmetic (``aggregates.py``) where every
        aggregate allows it and its rules decide the group, the others by recomputing them
        from the sources at their new versions."""
        key_names = [name for _, name in keys]
        # A frozen row may hold a value older than the query's: never merge into it.
        mergeable = (
            None if self.active else mergeable_aggregates(tree, set(key_names), dict(self.columns))
        )
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
        renamed = with_columns(delta, [*key_names, *[a.alias for a in arguments]])
        if mergeable is not None and self.fmt.writes_counted_changes:
            merged_groups = self._merged_groups(renamed, key_names, mergeable)
            return self._write_group_changes(tree, keys, merged_groups, watermark, expected)
        count_all = exp.func("count", exp.Star())
        # The affected groups, computed once, with what the MERGE does to them counted by
        # the same job: the rows it removes (the table's rows of those groups: a
        # ``PRESENT`` or ``HELD`` row), and the rows it writes where change arithmetic
        # decides them.
        if mergeable is None:
            affected, (groups, deleted) = self.deriver.summarized(
                self._held_groups(renamed, key_names),
                [count_all, exp.func("sum", exp.column(HELD))],
            )
            merged, recomputed, kept = None, groups, 0
            undecided = exp.select(*quoted_columns(key_names)).from_(aliased(affected, "a"))
        else:
            affected, (groups, recomputed, kept, deleted) = self.deriver.summarized(
                self._merged_groups(renamed, key_names, mergeable),
                [
                    count_all,
                    exp.func("count_if", exp.Not(this=exp.column(DECIDED))),
                    exp.func("count_if", exp.and_(exp.column(DECIDED), exp.column(REMAINS))),
                    exp.func("count_if", exp.column(PRESENT)),
                ],
            )
            merged = (
                exp.select(*quoted_columns([name for name, _ in self.columns]))
                .from_(aliased(affected, "m"))
                .where(exp.and_(exp.column(DECIDED), exp.column(REMAINS)))
            )
            undecided = (
                exp.select(*quoted_columns(key_names))
                .from_(aliased(affected, "m"))
                .where(exp.Not(this=exp.column(DECIDED)))
            )
        if not groups:
            return Applied(0, 0, committed=False)
        parts: list[exp.Query] = [merged] if merged is not None else []
        inserted = int(kept or 0)
        if recomputed:
            # Into a view, counted by the job that computes them (a statement only when
            # some group is recomputed); the MERGE reads the view.
            rows = self._recomputed_groups(tree, keys, undecided)
            if self.active is not None:
                rows = exp.select("*").from_(aliased(rows, "r")).where(self.active.copy())
            rows, (written,) = self.deriver.summarized(rows, [count_all.copy()])
            inserted += int(written)
            parts.append(rows)
        if self.fmt.writes_counted_changes:
            written_counted = self._write_counted(
                [self._old_group_rows(affected, key_names, from_table=mergeable is None)],
                parts,
                watermark,
                expected,
            )
            if written_counted is not None:
                return Applied(
                    written_counted.inserted, written_counted.deleted, written_counted.committed
                )
        removed = exp.select(*quoted_columns(key_names)).from_(aliased(affected, "a"))
        made = self._merge(key_names, removed, union_all(parts), watermark, expected)
        return Applied(inserted, int(deleted or 0), committed=True, made=made)

    def _write_group_changes(
        self,
        tree: exp.Select,
        keys: list[tuple[exp.Expr, str]],
        merged_groups: exp.Query,
        watermark: str,
        expected: int | None,
    ) -> Applied:
        """The affected groups (``_merged_groups``) written as a counted change, where the
        engine writes them: computed once, straight into the rows the table loses and
        gains (a group's old row out and its new row in, neither where they are equal),
        with a row of its keys alone for each group change arithmetic does not decide, so
        that no statement nets them apart unless some group is recomputed."""
        names = [name for name, _ in self.columns]
        key_names = [name for _, name in keys]
        counted, (rows, undecided, gained, lost) = self.deriver.summarized(
            _counted_groups(merged_groups, self.columns, key_names),
            [
                exp.func("count", exp.Star()),
                *[
                    exp.func("count_if", comparison(this=exp.column(NET), expression=_number(0)))
                    for comparison in (exp.EQ, exp.GT, exp.LT)
                ],
            ],
        )
        if not rows:
            return Applied(0, 0, committed=False)
        change = counted
        recomputed: exp.Query | None = None
        if undecided:
            # Recomputed in the statement that nets them against the groups' old rows.
            undecided_keys = (
                exp.select(*quoted_columns(key_names))
                .from_(aliased(counted, "u"))
                .where(exp.EQ(this=exp.column(NET), expression=_number(0)))
            )
            recomputed = self._recomputed_groups(tree, keys, undecided_keys)
            signed: list[exp.Query] = [
                exp.select(*quoted_columns(names), exp.alias_(exp.column(NET), SIGN))
                .from_(aliased(counted, "c"))
                .where(exp.NEQ(this=exp.column(NET), expression=_number(0))),
                exp.select(*quoted_columns(names), exp.alias_(_number(1), SIGN)).from_(
                    aliased(recomputed, "r")
                ),
            ]
            change = self.deriver.materialize(netted(with_columns(union_all(signed), names), names))
        written_counted = self.fmt.apply_counted(
            self.session, self.table, view_read(change), NET, watermark, expected
        )
        if written_counted is not None:
            return Applied(
                written_counted.inserted,
                written_counted.deleted,
                written_counted.committed,
                written_counted.made(watermark),
            )
        # Not written as counted rows (e.g. a table without deletion vectors): every
        # affected group's rows replaced by one MERGE on the keys.
        touched = exp.select(*quoted_columns(key_names)).from_(aliased(counted, "a")).distinct()
        parts: list[exp.Query] = [
            exp.select(*quoted_columns(names))
            .from_(aliased(counted, "a"))
            .where(exp.GT(this=exp.column(NET), expression=_number(0)))
        ]
        if recomputed is not None:
            parts.append(recomputed)
        made = self._merge(key_names, touched, union_all(parts), watermark, expected)
        # The rows the recompute inserts are not counted apart: its commit's metrics say.
        inserted = int(gained) if recomputed is None else None
        return Applied(inserted, int(lost), committed=True, made=made)

    def _old_group_rows(
        self, affected: exp.Query, key_names: list[str], *, from_table: bool
    ) -> exp.Query:
        """The table's rows of the affected groups: as ``_merged_groups`` read them
        (``OLD`` columns), or ``from_table`` (``_held_groups`` counted them) read again;
        only active rows, with a frozen region."""
        names = [name for name, _ in self.columns]
        if not from_table:
            return (
                exp.select(
                    *[
                        exp.alias_(exp.column(OLD.format(i), quoted=True), name, quoted=True)
                        for i, name in enumerate(names)
                    ]
                )
                .from_(aliased(affected, "a"))
                .where(exp.column(PRESENT))
            )
        keys = exp.select(*quoted_columns(key_names)).from_(aliased(affected, "a"))
        return self._held_rows(keys, key_names)

    def _held_rows(self, keys: exp.Query, key_names: list[str]) -> exp.Query:
        """The table's rows whose ``key_names`` equal (null-safe) a row of ``keys`` (those
        columns): a semi join by the keys (``rows_of_keys``); only active rows, with a
        frozen region (never removed)."""
        rows = rows_of_keys(self.table, [name for name, _ in self.columns], keys, key_names)
        return rows.where(qualified(self.active, "t")) if self.active is not None else rows

    def _write_counted(
        self,
        removed: list[exp.Query],
        added: list[exp.Query],
        watermark: str,
        expected: int | None,
    ) -> CountedWrite | None:
        """Where the engine writes counted changes: each row of ``removed`` (rows the table
        holds, by the table's column names) loses a copy and each row of ``added`` gains
        one, netted per row value (a row removed and added again writes nothing), in one
        commit without a MERGE; None where the engine did not write them."""
        names = [name for name, _ in self.columns]
        signed: list[exp.Query] = [
            exp.select(*quoted_columns(names), exp.alias_(_number(sign), SIGN)).from_(
                aliased(rows, "r")
            )
            for sign, parts in ((-1, removed), (1, added))
            for rows in parts
        ]
        change = netted(with_columns(union_all(signed), names), names)
        counted = self.deriver.materialize(change)
        return self.fmt.apply_counted(
            self.session, self.table, view_read(counted), NET, watermark, expected
        )

    def _held_groups(self, renamed: exp.Subquery, key_names: list[str]) -> exp.Query:
        """The keys of the groups the change touches, each with the rows the table holds
        of it (``HELD``; only active rows, with a frozen region)."""
        changed = (
            exp.select(*quoted_columns(key_names))
            .from_(renamed.copy())
            .group_by(*quoted_columns(key_names))
        )
        table_rows = exp.select("*", exp.alias_(exp.true(), PRESENT)).from_(self.table.copy())
        held_on = null_safe_equal(key_names, "c", "o")
        if self.active is not None:
            held_on = exp.and_(held_on, qualified(self.active, "o"))
        return (
            exp.select(
                *quoted_columns(key_names, "c"),
                exp.alias_(exp.func("count", exp.column(PRESENT, table="o")), HELD),
            )
            .from_(aliased(changed, "c"))
            .join(aliased(table_rows, "o"), on=held_on, join_type="left")
            .group_by(*quoted_columns(key_names, "c"))
        )

    def _recomputed_groups(
        self, tree: exp.Select, keys: list[tuple[exp.Expr, str]], groups: exp.Query
    ) -> exp.Query:
        """The query's rows, at the sources' new versions, of ``groups`` (a query of the
        group keys' output columns). The query reads only those groups' input rows: a
        group's row comes from its input rows alone."""
        wanted = exp.select(
            *[
                exp.alias_(exp.column(name, table="g", quoted=True), KEY.format(i), quoted=True)
                for i, (_, name) in enumerate(keys)
            ]
        ).from_(aliased(groups, "g"))
        recomputed = self.deriver.at(exp.Subquery(this=tree), "new").this
        assert isinstance(recomputed, exp.Select)
        # The keys as the query computes them from an input row, among the wanted ones.
        key_values = [key.this if isinstance(key, exp.Alias) else key for key, _ in keys]
        recomputed = recomputed.where(touched_by(key_values, wanted), copy=False)
        return exp.select("*").from_(aliased(recomputed, "q"))  # its ORDER BY stays inside

    def _merged_groups(
        self, renamed: exp.Subquery, key_names: list[str], aggregates: list[MergeableAggregate]
    ) -> exp.Query:
        """Each affected group's keys and new row by change arithmetic, with whether its
        rules decide it (``DECIDED``) and whether it still has rows (``REMAINS``)."""
        sign = exp.column(SIGN)
        change = (
            exp.select(
                *quoted_columns(key_names),
                row_change(sign),
                *[summary for a in aggregates for summary in change_summaries(a, sign)],
            )
            .from_(renamed.copy())
            .group_by(*quoted_columns(key_names))
        )
        old_present = exp.Not(
            this=exp.Is(this=exp.column(PRESENT, table="o"), expression=exp.Null())
        )
        known, remains = group_outcome(aggregates, "o", old_present, "c")
        by_output = {aggregate.output: aggregate for aggregate in aggregates}
        values: list[exp.Expr] = []
        rules: list[exp.Expr] = [known]
        for name, type_sql in self.columns:
            value: exp.Expr = exp.column(name, table="c", quoted=True)
            if name in by_output:
                old = exp.column(name, table="o", quoted=True)
                value = exp.cast(
                    merged_value(by_output[name], old, "c"),
                    exp.DataType.build(type_sql, dialect="spark"),
                )
                rules.append(decided(by_output[name], old, "c"))
            values.append(exp.alias_(value, name, quoted=True))
        values.append(exp.alias_(old_present.copy(), PRESENT))
        # The group's row as the table holds it (``_old_group_rows``).
        values.extend(
            exp.alias_(exp.column(name, table="o", quoted=True), OLD.format(i), quoted=True)
            for i, (name, _) in enumerate(self.columns)
        )
        table_rows = exp.select("*", exp.alias_(exp.true(), PRESENT)).from_(self.table.copy())
        return (
            exp.select(
                *values,
                exp.alias_(exp.and_(*rules), DECIDED),
                exp.alias_(remains, REMAINS),
            )
            .from_(aliased(change, "c"))
            .join(
                aliased(table_rows, "o"),
                on=null_safe_equal(key_names, "o", "c"),
                join_type="left",
            )
        )

    def _count_rows(self, rows: exp.Query) -> int:
        """How many rows ``rows`` returns."""
        count = exp.select(exp.func("count", exp.Star())).from_(aliased(rows, "r"))
        return int(self.session.sql(to_spark_sql(self.deriver.runnable(count))).collect()[0][0])

    # -- the commit --

    def _merge(
        self,
        match_names: list[str],
        removed: exp.Query,
        inserted: exp.Query,
        watermark: str,
        expected: int | None,
    ) -> Commit | None:
        """One MERGE: every table row equal (null-safe, on ``match_names``) to a row of
        ``removed`` is deleted, and every row of ``inserted`` (the table's columns, a
        multiset) is inserted; its commit, where the format names it."""
        names = [name for name, _ in self.columns]
        nulls = {
            name: exp.cast(exp.Null(), exp.DataType.build(t, dialect="spark"))
            for name, t in self.columns
        }
        removals = exp.select(
            *[
                exp.alias_(
                    exp.column(n, quoted=True) if n in match_names else nulls[n], n, quoted=True
                )
                for n in names
            ]
        ).from_(aliased(removed, "r"))
        additions = exp.select(*quoted_columns(names)).from_(aliased(inserted, "i"))
        match = null_safe_equal(match_names, "t", "s")
        if self.active is not None:  # frozen rows are never removed
            match = exp.and_(match, qualified(self.active, "t"))
        merge = delete_then_insert_merge(
            exp.alias_(self.table.copy(), "t", table=True),
            additions,
            removals,
            alias="s",
            match=match,
            columns=names,
            source_columns=[exp.to_identifier(name, quoted=True) for name in names],
        )
        runnable = self.deriver.runnable(merge)
        return self.fmt.merge(self.session, self.table, runnable, watermark, expected)


def _number(value: int) -> exp.Expr:
    return exp.Literal.number(value)


def _counted_groups(
    merged_groups: exp.Query, columns: list[tuple[str, str]], key_names: list[str]
) -> exp.Query:
    """From the affected groups (``_merged_groups``: each group's new row, its old row in
    ``OLD`` columns, ``PRESENT``, ``DECIDED``, ``REMAINS``), the rows the table loses
    (``NET`` -1: a present group's old row, unless change arithmetic decides a new row
    equal to it) and gains (``NET`` 1: a decided group's new row that remains, unless
    equal to its old row), and each undecided group's keys with NULL for the other
    columns (``NET`` 0: recomputed). A group's rows all carry its keys, so no row value
    is both lost and gained, or given twice."""
    names = [name for name, _ in columns]
    same = exp.and_(
        *[
            exp.NullSafeEQ(
                this=exp.column(name, quoted=True),
                expression=exp.column(OLD.format(i), quoted=True),
            )
            for i, name in enumerate(names)
        ]
    )
    kept_new = exp.and_(exp.column(DECIDED), exp.column(REMAINS))
    old_rows = (
        exp.select(
            *[
                exp.alias_(exp.column(OLD.format(i), quoted=True), name, quoted=True)
                for i, name in enumerate(names)
            ],
            exp.alias_(_number(-1), NET),
        )
        .from_(GROUPS)
        .where(exp.and_(exp.column(PRESENT), exp.not_(exp.and_(kept_new.copy(), same.copy()))))
    )
    new_rows = (
        exp.select(*quoted_columns(names), exp.alias_(_number(1), NET))
        .from_(GROUPS)
        .where(exp.and_(kept_new.copy(), exp.not_(exp.and_(exp.column(PRESENT), same.copy()))))
    )
    undecided = (
        exp.select(
            *[
                exp.alias_(
                    exp.column(name, quoted=True)
                    if name in key_names
                    else exp.cast(exp.Null(), exp.DataType.build(type_sql, dialect="spark")),
                    name,
                    quoted=True,
                )
                for name, type_sql in columns
            ],
            exp.alias_(_number(0), NET),
        )
        .from_(GROUPS)
        .where(exp.not_(exp.column(DECIDED)))
    )
    return union_all([old_rows, new_rows, undecided]).with_(GROUPS, as_=merged_groups)


def _copies(count: exp.Expr) -> exp.Lateral:
    """``LATERAL VIEW explode(sequence(1, count))``: a row repeated ``count`` times."""
    return exp.Lateral(
        this=exp.Explode(this=exp.func("sequence", _number(1), count.copy())),
        view=True,
        alias=exp.TableAlias(this=exp.to_identifier("e"), columns=[exp.to_identifier("copy")]),
    )


def _netted_feeds(definition: Definition, inputs: RefreshInputs) -> dict[str, list[exp.Expr]]:
    """The sources whose change feeds are netted on the columns the query reads
    (``changes.cancelled_out``), and by what: those that removed rows since the last
    refresh (inserts alone never cancel), where netting is exact (``netting_partition``)."""
    if not _netting_pays(definition):
        return {}
    read = read_column_names(definition.query)
    netted: dict[str, list[exp.Expr]] = {}
    for key, commits in inputs.moved.items():
        types = inputs.pinned.types.get(key)
        if types is None or inserts_only({key: commits}):
            continue
        partition = netting_partition(inputs.pinned.columns[key], types, read)
        if partition is not None:
            netted[key] = partition
    return netted


def _netting_pays(definition: Definition) -> bool:
    """Whether netting the change feeds is worth its cost, a window over each changed
    source's change (4-7 ms a refresh on the embedded engine at a few thousand changed
    rows, docs/benchmarks.md): where a change that cancels would otherwise be recomputed
    from the sources. Not for a linear query, nor for one whose only keyed block is a
    GROUP BY at the top that merges by exact change arithmetic alone (COUNT, and SUM of
    exact numbers): those net their change on the way, at what the change costs."""
    tree = with_output_names(inlined_query(definition.query), list(definition.columns))
    try:
        keyed = [s for s in tree.find_all(exp.Select) if select_shape(s) != "linear"]
    except CannotRefreshIncrementallyError:
        return True  # derivation decides; netting is exact either way
    if not keyed:
        return False
    keys = group_keys(tree) if isinstance(tree, exp.Select) else None
    if len(keyed) != 1 or keyed[0] is not tree or keys is None:
        return True
    assert isinstance(tree, exp.Select)
    names = {name for _, name in keys}
    aggregates = mergeable_aggregates(tree, names, dict(definition.columns))
    return aggregates is None or not all(
        a.function in (exp.Count, exp.Sum) and a.exact for a in aggregates
    )


def _check_no_reserved_source_columns(columns: dict[str, list[str]]) -> None:
    """A source that gained a column named like the change queries' own (``__dt_…``,
    refused at CREATE) since the table was created is refreshed in full: its change feed
    would carry a second column of that name."""
    for key, names in columns.items():
        reserved = [name for name in names if name.lower().startswith(RESERVED_PREFIX)]
        if reserved:
            raise CannotRefreshIncrementallyError(
                f"source {key} has a column {reserved[0]}, a name the incremental refresh"
                " reserves for its own columns: rename it to refresh incrementally"
            )


class IncrementalStrategy:
    """The incremental strategy: apply the sources' changes since the last watermark
    (``IncrementalRefresh``) in one commit conditional on the table version that watermark
    was read at. Raises ``CannotRefreshIncrementallyError`` (nothing committed) where the
    change cannot be derived; the executor then refreshes in full."""

    def __init__(self, context: RefreshContext) -> None:
        self.context = context

    def run(self, job: RefreshJob, inputs: RefreshInputs) -> None:
        context, result = self.context, job.result
        limit = format_limit(context.fmt.name, context.fmt.supports_incremental)
        if limit is not None:  # a table created INCREMENTAL elsewhere
            raise CannotRefreshIncrementallyError(limit)
        previous, pinned = inputs.state.watermark, inputs.pinned
        _check_no_reserved_source_columns(pinned.columns)
        assert previous is not None
        result.action = Action.INCREMENTAL
        watermark = new_watermark(
            result,
            job.definition,
            pinned.versions,
            pinned.fingerprints,
            commit_times=pinned.commit_times,
        )
        change = IncrementalRefresh(
            context.session,
            context.fmt,
            job.table,
            job.definition,
            Versions(old=dict(previous.sources), new=pinned.versions),
            pinned.columns,
            inputs.active,
            source_types=pinned.types,
            appends_as_they_come=rules.appends_as_they_come(job.definition, inputs.moved),
            checkpoint_views=context.engine.checkpoints_dataframes,
            netted_by=_netted_feeds(job.definition, inputs),
        )
        text = watermark.to_json()
        read_version = inputs.state.table_version
        try:
            applied = change.apply(text, read_version)
        except Exception as failure:
            if refused_by_engine(failure):
                # Nothing committed: a change query needs what the engine refuses (the
                # negation of BIGINT's minimum, to subtract a deleted row's value), where
                # the query itself may not.
                raise CannotRefreshIncrementallyError(
                    f"the engine cannot run this refresh's change queries: {first_line(failure)}"
                ) from failure
            if context.fmt.change_data_missing(failure):
                # Nothing committed; the sources' current versions still give the rows.
                raise CannotRefreshIncrementallyError(
                    "a source did not record all its changes since the last refresh (its"
                    " change data feed was off, or it was recreated without it):"
                    f" {first_line(failure)}"
                ) from failure
            if not context.fmt.files_gone(failure):
                raise
            # Nothing committed (the commit is the last step, conditional on the version
            # read); the current versions are still there to recompute from.
            raise CannotRefreshIncrementallyError(
                "the sources' changes since the last refresh can no longer be read: a file"
                " they need is gone (VACUUM removes what only versions past its retention"
                " need)"
            ) from failure

        def rows_changed(ours: Commit) -> tuple[int | None, int | None]:
            return (
                counted(applied.rows_inserted, ours.rows_inserted),
                counted(applied.rows_deleted, ours.rows_deleted),
            )

        context.finish_write(
            job.table, result, text, read_version, applied.committed, rows_changed, applied.made
        )
        context.fmt.forget_cached(context.engine.session, job.table)  # read next by the user
