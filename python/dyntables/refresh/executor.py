"""The refresh executor: bring one dynamic table up to date, atomically.

A refresh pins every source at one version, decides whether anything changed since the
watermark of the table's last refresh (``NO_DATA`` when nothing did: no compute, no
commit), and otherwise runs one strategy (``Strategy``: full, incremental or custom), which
writes the table's new rows in one commit that also carries the new watermark. The commit
is conditional on the table version the refresh read, where the engine allows it, so
two refreshes never both land. Every outcome is recorded in the refresh history.

Which strategy: a REFRESH USING table runs its own statement (``custom.py``); otherwise an
INCREMENTAL table refreshes incrementally unless a rule of ``rules.py`` makes this refresh
FULL (recorded with its reason), and everything else refreshes in full (``full.py``).
"""

from __future__ import annotations

from enum import Enum

from sqlglot import exp

from dyntables.catalog import Definition, key_to_table, table_key
from dyntables.engine import Engine
from dyntables.errors import (
    CannotRefreshIncrementallyError,
    ConcurrentRefreshError,
    DynamicTableError,
    first_line,
)
from dyntables.history import SystemTables, utc_now
from dyntables.refresh import rules
from dyntables.refresh.context import RefreshContext, changes_data
from dyntables.refresh.custom import CustomRefresh
from dyntables.refresh.full import FullRefresh, active_region_at
from dyntables.refresh.incremental import IncrementalStrategy
from dyntables.refresh.state import (
    Action,
    AsOf,
    RefreshInputs,
    RefreshJob,
    RefreshResult,
    Watermark,
    WatermarkState,
)


class Strategy(str, Enum):
    """The closed set of ways a refresh writes a table, chosen once per refresh
    (``Refresher._strategy``)."""

    FULL = "FULL"
    INCREMENTAL = "INCREMENTAL"
    CUSTOM = "CUSTOM_INCREMENTAL"


class Refresher:
    """Refreshes dynamic tables of one engine and records each refresh."""

    def __init__(self, engine: Engine, system: SystemTables) -> None:
        self.engine = engine
        self.system = system
        self.context = RefreshContext(engine, system)

    # What the DDL and the scheduler read of a table's refresh state.

    def last_watermark(self, table: exp.Table) -> WatermarkState:
        return self.context.last_watermark(table)

    def sources_changed(self, previous: Watermark, versions: dict[str, int | None]) -> bool:
        return self.context.sources_changed(previous, versions)

    def refresh(
        self,
        table: exp.Table,
        definition: Definition,
        trigger: str,
        *,
        statement_id: str | None = None,
        replace_definition: dict[str, str] | None = None,
        backfill: exp.Query | None = None,
        at: AsOf | None = None,
    ) -> RefreshResult:
        """Refresh ``table`` (NO_DATA, FULL, INCREMENTAL or REINITIALIZE); failures are
        recorded and raised as ``DynamicTableError``. ``at`` pins it to a data timestamp."""
        with self.engine.refresh_lock:
            started = utc_now()
            result = RefreshResult(
                name=table_key(table),
                action=Action.FULL,
                state="EXECUTING",
                data_timestamp=at.data_timestamp if at is not None else started,
                trigger=trigger,
            )
            job = RefreshJob(table, definition, result, at, replace_definition, backfill)
            try:
                self._run(job)
                result.state = "SUCCEEDED"
            except Exception as failure:
                result.state = "FAILED"
                lost_race = isinstance(
                    failure, ConcurrentRefreshError
                ) or self.engine.table_format.lost_race(failure)
                result.message = lost_race_message(table) if lost_race else first_line(failure)
                self.context.record(table, result, trigger, started, statement_id)
                self.context.wrote(table)  # it may have committed before it failed
                if lost_race:
                    raise ConcurrentRefreshError(result.message) from failure
                if isinstance(failure, DynamicTableError):
                    raise
                raise DynamicTableError(
                    f"refresh of dynamic table {table_key(table)} failed: {result.message}"
                ) from failure
            self.context.record(table, result, trigger, started, statement_id)
            if result.action != Action.NO_DATA:  # it committed to the table
                # Rows an incremental refresh removed are marked in deletion vectors (a
                # full refresh replaces files): many of them call for a check at once.
                marked = result.rows_deleted if result.action == Action.INCREMENTAL else None
                self.system.compactor.committed(
                    table, self.engine.refresh_session, result.data_files, marked
                )
                self.context.wrote(table)
            return result

    def _run(self, job: RefreshJob) -> None:
        if job.definition.refresh_mode == Strategy.CUSTOM.value:
            CustomRefresh(self.context, job).run()
            return
        inputs = self._read_inputs(job)
        if inputs is None:
            return  # NO_DATA
        if job.result.action == Action.REINITIALIZE:
            self._track_changes_of_sources(job.definition)
        if self._strategy(job, inputs) is Strategy.INCREMENTAL:
            try:
                IncrementalStrategy(self.context).run(job, inputs)
                return
            except CannotRefreshIncrementallyError as why:  # recomputed instead
                job.result.action = Action.FULL
                job.result.reason = f"FULL instead of INCREMENTAL: {why}"
        FullRefresh(self.context).run(job, inputs)

    def _read_inputs(self, job: RefreshJob) -> RefreshInputs | None:
        """Read the table's last watermark and pin the sources; None (the result says
        NO_DATA) when no source changed data since and nothing asks for a recompute. A
        REINITIALIZE is recorded on the result with its reason."""
        context, result = self.context, job.result
        state, pinned = context.begin(job.table, job.definition, result, job.at)
        previous = state.watermark
        recreated = context.recreated_sources(previous, pinned) if previous is not None else []
        reason = rules.reinitialize_reason(
            job.definition, state, pinned.fingerprints, job.replace_definition, recreated
        )
        moved = context.new_commits(previous, pinned.versions) if previous is not None else {}
        if reason is None and previous is not None and not changes_data(moved):
            context.no_data(job.table, result, state)
            return None
        if previous is not None and reason is not None:
            result.action = Action.REINITIALIZE
            result.reason = reason
        # The frozen region, at this refresh's data timestamp; the first refresh and a
        # replace compute every row.
        active = (
            None
            if previous is None or job.replace_definition is not None
            else active_region_at(job.definition, result.data_timestamp)
        )
        return RefreshInputs(state, pinned, moved, active)

    def _track_changes_of_sources(self, definition: Definition) -> None:
        """Turn the sources' change tracking on where it is off, as creating the table
        did: a source recreated since (a dbt full refresh drops and creates its table) has
        it off, and every later refresh would otherwise recompute in full. After the
        sources were pinned: the commit it makes is of no rows, and the next refresh reads
        from after it. Where the engine refuses, that refresh recomputes in full and says
        why."""
        if definition.refresh_mode != Strategy.INCREMENTAL.value:
            return
        if definition.change_tracking_problem is not None:
            return  # it could not be turned on at create either
        fmt, session = self.engine.table_format, self.engine.refresh_session
        for key in definition.sources:
            fmt.enable_change_tracking(session, key_to_table(key))

    def _strategy(self, job: RefreshJob, inputs: RefreshInputs) -> Strategy:
        """INCREMENTAL for an INCREMENTAL table's refresh that no rule makes FULL (the rule's
        reason is recorded on the result); FULL otherwise."""
        result = job.result
        if job.definition.refresh_mode != Strategy.INCREMENTAL.value:
            return Strategy.FULL
        if result.action == Action.REINITIALIZE or inputs.state.watermark is None:
            return Strategy.FULL
        if rules.appends_as_they_come(job.definition, inputs.moved):
            return Strategy.INCREMENTAL  # less work than a full refresh, whatever the size
        why_full = rules.too_large_for_incremental(
            inputs.moved, inputs.pinned.versions, self.context.source_rows
        )
        if why_full is None:
            return Strategy.INCREMENTAL
        result.action = Action.FULL
        result.reason = f"FULL instead of INCREMENTAL: {why_full}"
        return Strategy.FULL


def lost_race_message(table: exp.Table) -> str:
    """What a refresh that lost a race says: what happened, and that nothing is lost."""
    return (
        f"refresh of dynamic table {table_key(table)} lost a race: another refresh or write"
        " committed to it after this refresh read it, so this refresh committed nothing."
        " The scheduler retries it at its next tick; or run ALTER DYNAMIC TABLE"
        f" {table_key(table)} REFRESH again"
    )
