"""The refresh of a REFRESH USING dynamic table (``custom_sql.py`` says what the statement
means at a refresh).

* First refresh (no watermark yet, or a REPLACE): the rows come from the BACKFILL FROM
  table, else from the statement run against an empty SELF (``custom_sql.first_rows``), with
  each CHANGES source's rows as INSERTs, or its changes since START AT. They replace the
  table's rows in one commit whose watermark records the versions consumed: the current
  ones, or the START AT ones after a backfill.
* Later refreshes: NO_DATA when no source changed; else the statement runs with each
  CHANGES source's changes since the watermark, and its write (an append or a MERGE)
  commits together with the new watermark. A statement that writes nothing moves only
  the watermark.

A failing statement commits nothing: the watermark stays, and the next refresh reads the
same changes again.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from dyntables.catalog import table_key
from dyntables.errors import DynamicTableError
from dyntables.formats import Commit
from dyntables.refresh.changes import SIGN, ChangeDeriver, Versions, aliased
from dyntables.refresh.context import RefreshContext, changes_data, count_rows
from dyntables.refresh.custom_sql import (
    ChangeReader,
    bind,
    change_sources,
    commits_gone,
    empty_self,
    expired,
    first_rows,
    information,
    insert_rows,
    is_self,
    source_key,
    start_versions,
)
from dyntables.refresh.state import (
    Action,
    PinnedSources,
    RefreshJob,
    WatermarkState,
    new_watermark,
)
from dyntables.sql.dialect import parse_one, to_spark_sql


class CustomRefresh:
    """One refresh of a REFRESH USING dynamic table."""

    def __init__(self, context: RefreshContext, job: RefreshJob) -> None:
        self.context = context
        self.job = job
        self.engine = context.engine
        self.fmt = context.fmt
        self.session = context.session
        self.table = job.table
        self.definition = job.definition
        self.result = job.result
        self.statement = parse_one(job.definition.query)
        self.changed = change_sources(job.definition.query)

    def run(self) -> None:
        try:
            self._run(self.job.replace_definition, self.job.backfill)
        finally:  # the user's session reads the table next, whatever happened
            self.fmt.forget_cached(self.engine.session, self.table)

    def _run(self, replace_definition: dict[str, str] | None, backfill: exp.Query | None) -> None:
        state, pinned = self.context.begin(self.table, self.definition, self.result, self.job.at)
        versions = pinned.versions
        previous = state.watermark
        if previous is None or replace_definition is not None:
            self._first(state, pinned, replace_definition, backfill)
            return
        for key, fingerprint in pinned.fingerprints.items():
            if previous.fingerprints.get(key, fingerprint) != fingerprint:
                raise DynamicTableError(
                    f"source {key} changed its schema since the last refresh: the REFRESH USING"
                    " statement was written for the old one; recreate the dynamic table with"
                    " CREATE OR REPLACE (with an updated statement)"
                )
        moved = self.context.new_commits(previous, versions)
        gone = commits_gone(moved, set(self.changed))
        if gone is not None:
            raise expired(gone, previous.sources[gone] or 0, "its history no longer has it")
        if not changes_data(moved):
            self.context.no_data(self.table, self.result, state)
            return
        self.result.action = Action.INCREMENTAL
        watermark = new_watermark(
            self.result,
            self.definition,
            versions,
            pinned.fingerprints,
            commit_times=pinned.commit_times_of(versions),
        )
        ranges = Versions(old=dict(previous.sources), new=versions)
        deriver = self._deriver(ranges, pinned)
        try:
            bound = self._bind(deriver, pinned.columns, state.table_version)
            self._write(bound, deriver, watermark.to_json(), state)
        finally:
            deriver.drop_change_views()

    # ---- the first rows ----

    def _first(
        self,
        state: WatermarkState,
        pinned: PinnedSources,
        replace_definition: dict[str, str] | None,
        backfill: exp.Query | None,
    ) -> None:
        versions = pinned.versions
        start = start_versions(self.definition)
        self.result.action = Action.FULL
        deriver = None
        if backfill is not None:  # cloned; later refreshes read changes from START AT
            rows = backfill
            consumed = {**versions, **{k: v for k, v in start.items() if k in versions}}
            self.result.reason = "BACKFILL"
        else:
            old = {key: start.get(key) for key in versions}
            deriver = self._deriver(Versions(old=old, new=versions), pinned)
            rows = first_rows(self._bind(deriver, pinned.columns, None), self.definition.columns)
            consumed = versions
            self.result.reason = "START_AT" if start else "INITIAL_ROWS_AS_INSERTS"
        watermark = new_watermark(
            self.result,
            self.definition,
            consumed,
            pinned.fingerprints,
            replace_definition,
            pinned.commit_times_of(consumed),
        )
        try:
            before = count_rows(self.session, self.table) if state.table_version is not None else 0
            made = self.fmt.overwrite(
                self.session,
                self.table,
                rows,
                watermark.to_json(),
                expected_version=state.table_version,
                replace_schema=replace_definition is not None,
            )
        finally:
            if deriver is not None:
                deriver.drop_change_views()
        self.result.rows_deleted = before
        if made is not None and made.total_rows is not None:
            self.result.rows_inserted = made.total_rows
        else:
            self.result.rows_inserted = count_rows(self.session, self.table)
        if made is None:
            self.result.table_version = self.fmt.current_version(self.session, self.table)
        else:
            self.context.made(self.table, self.result, made)

    # ---- binding the statement ----

    def _deriver(self, versions: Versions, pinned: PinnedSources) -> ChangeDeriver:
        return ChangeDeriver(
            self.session,
            self.fmt,
            versions,
            pinned.columns.__getitem__,
            types_of=pinned.types.__getitem__,
            materialize_feeds=True,
            checkpoint_views=self.engine.checkpoints_dataframes,
        )

    def _bind(
        self, deriver: ChangeDeriver, columns: dict[str, list[str]], self_version: int | None
    ) -> exp.Expr:
        """The statement with its CHANGES, SELF and other tables replaced for this refresh
        (SELF at ``self_version``; None: empty, the first refresh)."""
        keys = {key: source_key(self.engine, key, columns[key]) for key in self.changed}
        reader = ChangeReader(self.engine, deriver, columns, keys)
        versions = deriver.versions.new
        own = self.table

        def relation(reference: exp.Table) -> exp.Expr:
            alias = reference.alias_or_name
            if is_self(reference):
                if self_version is None:
                    return aliased(empty_self(self.definition.columns), alias)
                current = self.fmt.pinned(own, self_version)
                current.set("alias", exp.TableAlias(this=exp.to_identifier(alias)))
                return current
            mode = information(reference)
            key = table_key(reference)
            if mode is not None:
                return aliased(reader.changes(key, mode), alias)
            version = versions.get(key)
            if version is None:
                return reference.copy()
            return self.fmt.pinned(reference, version)

        bound = bind(self.statement, relation)
        target = own.copy()
        alias = bound.this.alias if not isinstance(bound.this, exp.Schema) else ""
        if isinstance(bound, exp.Merge):
            target.set("alias", exp.TableAlias(this=exp.to_identifier(alias or "SELF")))
            bound.set("this", target)
        return bound

    # ---- the write ----

    def _write(
        self, bound: exp.Expr, deriver: ChangeDeriver, watermark: str, state: WatermarkState
    ) -> None:
        """Run the statement as one commit carrying ``watermark``; only the watermark moves
        when it writes nothing."""
        columns = self.definition.columns
        written = False
        made: Commit | None = None
        inserted: int | None = None
        if isinstance(bound, exp.Insert):
            rows = deriver.materialize(insert_rows(bound, columns))
            inserted = count_rows(self.session, rows)
            if inserted:
                made = self.fmt.append(
                    self.session, self.table, rows, watermark, state.table_version
                )
                written = True
        else:
            assert isinstance(bound, exp.Merge)
            using = bound.args["using"]
            alias = using.alias_or_name
            source = deriver.materialize(exp.select("*").from_(using.copy()))
            bound.set("using", aliased(source, alias))
            clears = any(
                when.args.get("source") for when in bound.args["whens"].expressions
            )  # WHEN NOT MATCHED BY SOURCE acts on an empty source too
            if clears or count_rows(self.session, source):
                made = self.fmt.merge(
                    self.session, self.table, bound, watermark, state.table_version
                )
                written = True
        read_version = state.table_version

        def rows_changed(ours: Commit) -> tuple[int | None, int | None]:
            if inserted is not None:
                return inserted, 0
            return self._changed_rows(read_version, ours)

        self.context.finish_write(
            self.table, self.result, watermark, read_version, written, rows_changed, made
        )

    def _changed_rows(self, before: int | None, latest: Any) -> tuple[int | None, int | None]:
        """Rows the MERGE inserted and deleted (an updated row is one of each): from the
        commit's metrics, else counted from the table's own change feed."""
        if latest.rows_inserted is not None and latest.rows_deleted is not None:
            return latest.rows_inserted, latest.rows_deleted
        if before is None:
            return None, None
        names = [name for name, _ in self.definition.columns]
        feed = self.fmt.changes(self.session, self.table, names, before, latest.version, SIGN)
        sign = exp.column(SIGN)
        counts = exp.select(
            exp.func("count_if", sign.eq(exp.Literal.number(1))),
            exp.func("count_if", sign.copy().eq(exp.Literal.number(-1))),
        ).from_(aliased(feed, "f"))
        added, removed = self.session.sql(to_spark_sql(counts)).collect()[0]
        return int(added or 0), int(removed or 0)
