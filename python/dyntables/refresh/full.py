"""The full strategy: recompute the defining query over the pinned sources and replace the
table's rows (only its active region, with a frozen region) in one commit carrying the new
watermark, conditional on the table version the refresh read. The first refresh, a
REINITIALIZE, a FULL table, and an incremental refresh the rules turned FULL all end here;
so do the first rows of a backfilled table.
"""

from __future__ import annotations

import datetime

from sqlglot import exp

from dyntables.catalog import PREFIX, Definition
from dyntables.formats import Commit
from dyntables.planner.predicates import active_region, bind_current_time, is_frozen
from dyntables.refresh.context import RefreshContext, count_rows, pin_query
from dyntables.refresh.state import RefreshInputs, RefreshJob, new_watermark
from dyntables.sql.dialect import parse_one


class FullRefresh:
    """Replaces a table's rows by its query's, in one commit."""

    def __init__(self, context: RefreshContext) -> None:
        self.context = context

    def run(self, job: RefreshJob, inputs: RefreshInputs) -> None:
        context, result, table = self.context, job.result, job.table
        fmt, session = context.fmt, context.session
        definition, pinned, active = job.definition, inputs.pinned, inputs.active
        watermark = new_watermark(
            result,
            definition,
            pinned.versions,
            pinned.fingerprints,
            job.replace_definition,
            pinned.commit_times,
        ).to_json()
        query = pin_query(definition.query, pinned.versions, fmt)
        if job.backfill is not None:  # the first rows come from the backfill source
            query = _backfilled(job.backfill, query, definition, result.data_timestamp)
            result.reason = "BACKFILL"
        in_scope = table if active is None else exp.select("*").from_(table).where(active)
        read_version = inputs.state.table_version
        # The whole table's rows before and after, where the commits' metadata says.
        before = context.newest_commit(table) if read_version is not None else None
        if before is not None and before.version != read_version:
            before = None
        rows_before = 0 if read_version is None else _total(before, active)
        if rows_before is None:
            rows_before = self._rows(table, in_scope, active)
        if active is None:
            made = fmt.overwrite(
                session,
                table,
                query,
                watermark,
                expected_version=read_version,
                replace_schema=job.replace_definition is not None,
            )
        else:  # only the active region: frozen rows stay as they are
            rows = exp.select("*").from_(query.subquery("q")).where(active.copy())
            made = fmt.replace_where(session, table, active, rows, watermark, read_version)
        ours = made or context.own_commit(table, watermark, read_version)
        context.made(table, result, ours)
        if ours is None:  # the engine made no commit it could name
            result.table_version = fmt.current_version(session, table)
        result.rows_deleted = rows_before
        rows_after = _total(ours, active)
        if rows_after is None:
            rows_after = self._rows(table, in_scope, active)
        result.rows_inserted = rows_after
        self._finish_frozen_change(table, definition)
        fmt.forget_cached(context.engine.session, table)  # the user's session reads it next

    def _rows(
        self, table: exp.Table, in_scope: exp.Table | exp.Query, active: exp.Expr | None
    ) -> int:
        """The rows the refresh replaces (the active region's, with a frozen region): from
        the table's metadata where the format reads them there, else counted."""
        context = self.context
        known = None if active is not None else context.fmt.row_count(context.session, table)
        return known if known is not None else count_rows(context.session, in_scope)

    def _finish_frozen_change(self, table: exp.Table, definition: Definition) -> None:
        """Clear a frozen-region change the refresh just applied (a crash before this only
        makes the next refresh recompute the active region again)."""
        if definition.frozen_reinitialize is not None:
            cleared = {PREFIX + "frozen_reinitialize": ""}
            self.context.fmt.set_properties(self.context.session, table, cleared)


def _total(commit: Commit | None, active: exp.Expr | None) -> int | None:
    """The table's rows at ``commit``, where its metadata says and the refresh replaces all
    of them (no frozen region)."""
    return commit.total_rows if commit is not None and active is None else None


def active_region_at(definition: Definition, data_timestamp: datetime.datetime) -> exp.Expr | None:
    """Where rows are active (not frozen) at this data timestamp; None without a region."""
    if definition.frozen_where is None:
        return None
    predicate = bind_current_time(parse_one(definition.frozen_where), data_timestamp)
    return active_region(predicate)


def _backfilled(
    backfill: exp.Query, query: exp.Query, definition: Definition, data_timestamp: datetime.datetime
) -> exp.Query:
    """The first rows of a backfilled table: the backfill's, or with a frozen region the
    backfill's frozen rows and the query's active ones."""
    if definition.frozen_where is None:
        return backfill
    predicate = bind_current_time(parse_one(definition.frozen_where), data_timestamp)
    frozen = exp.select("*").from_(backfill.subquery("b")).where(is_frozen(predicate))
    active = exp.select("*").from_(query.subquery("q")).where(active_region(predicate))
    return exp.union(frozen, active, distinct=False)
