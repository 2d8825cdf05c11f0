"""The engine side of the scheduler: a ``Runner`` over the engine, its system tables, the
DDL lifecycle (which lists the managed tables) and the refresher.

It reads the graph from the catalog (each dynamic table's definition in its properties),
pins every base source of a tick at its version as of the tick's data timestamp (the
newest commit at or before it), hands each refresh the versions its upstreams were
refreshed to at the same tick, records refreshes that did not run, and suspends.
"""

from __future__ import annotations

import datetime
import zoneinfo
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlglot import exp

from dyntables.catalog import Definition, ObjectKind, SchedulingState, key_to_table, table_key
from dyntables.ddl.lifecycle import Lifecycle
from dyntables.engine import Engine
from dyntables.errors import DynamicTableError, first_line
from dyntables.formats import Commit
from dyntables.history import (
    REFRESH_HISTORY,
    SYSTEM_SCHEMA,
    RefreshRecord,
    SystemTables,
    new_id,
    utc_now,
)
from dyntables.refresh import AsOf, Refresher, Trigger
from dyntables.scheduler.core import (
    FAILED,
    SKIPPED,
    SUCCEEDED,
    Outcome,
    Tick,
    to_datetime,
    to_epoch,
)
from dyntables.scheduler.plan import Graph, Node

# The states of a scheduled refresh that attempted (or decided) its tick.
_ATTEMPTED = ("SUCCEEDED", "FAILED", "UPSTREAM_FAILED")


class EngineRunner:
    """Refreshes the dynamic tables of one engine for the scheduler.

    It is given what it uses, not the ``DynamicTables`` facade above it: the engine (the
    refresh session, the table format, the catalog), the system tables (the refresh
    history it reads and the skipped ticks it records), the lifecycle (the managed tables,
    with an interrupted CREATE OR REPLACE finished) and the refresher (the lifecycle's own,
    so that scheduled and manual refreshes share one refresh state).
    """

    def __init__(
        self,
        engine: Engine,
        system: SystemTables,
        lifecycle: Lifecycle,
        refresher: Refresher,
        max_failures: int = 5,
    ) -> None:
        self.engine = engine
        self.system = system
        self.lifecycle = lifecycle
        self.refresher = refresher
        self.max_failures = max_failures
        self._definitions: dict[str, tuple[exp.Table, Definition]] = {}

    # ---- the graph ----

    @contextmanager
    def reading(self) -> Iterator[None]:
        """A tick's scope: each table's history is read once and shared by the tick's
        refreshes (refresh/reads.py), and their history rows are written at its end, in
        one insert (``SystemTables.batching``)."""
        try:
            with self.system.batching(), self.refresher.context.reading_once():
                yield
        except BaseException:
            # The tick's history rows may be unwritten: the next refresh of each table looks
            # for the rows of its committed refreshes again.
            self.refresher.context.forget_recorded()
            raise

    def graph(self) -> Graph:
        self._definitions = {}
        nodes = []
        for table, definition in self.lifecycle.managed_tables():
            if definition.kind is not ObjectKind.DYNAMIC_TABLE:
                continue
            key = table_key(table)
            self._definitions[key] = (table, definition)
            lag = None if definition.downstream else definition.target_lag_seconds
            nodes.append(
                Node(
                    key,
                    tuple(definition.upstreams),
                    None if lag is None else float(lag),
                    suspended=definition.scheduling_state is SchedulingState.SUSPENDED,
                    suspend_reason=definition.suspend_reason,
                )
            )
        return Graph.of(nodes)

    def definition(self, name: str) -> tuple[exp.Table, Definition]:
        if name not in self._definitions:
            self.graph()
        return self._definitions[name]

    # ---- what the history says ----

    def history_rows(self, query: exp.Query) -> list[Any]:
        self.system.ensure()
        session = self.engine.refresh_session
        self.system.read_fresh(session)  # what other processes recorded too
        return list(session.sql(query.sql("spark")).collect())

    def refreshed_until(self) -> dict[str, float]:
        """The latest tick each table's scheduled refreshes decided (succeeded, failed or
        failed upstream), and the data timestamp of any successful refresh."""
        attempted = exp.column("state").isin(*map(exp.Literal.string, _ATTEMPTED))
        succeeded = exp.column("state").eq(exp.Literal.string(SUCCEEDED))
        scheduled = exp.column("refresh_trigger").eq(exp.Literal.string(Trigger.SCHEDULED))
        query = (
            exp.select("schema_name", "name", exp.func("max", exp.column("data_timestamp")))
            .from_(exp.table_(REFRESH_HISTORY, db=SYSTEM_SCHEMA))
            .where(exp.or_(succeeded, exp.and_(scheduled, attempted)))
            .group_by("schema_name", "name")
        )
        until = {}
        for row in self.history_rows(query):
            if row[2] is not None:
                until[f"{row[0]}.{row[1]}".lower()] = to_epoch(row[2])
        return until

    def consecutive_failures(self) -> dict[str, int]:
        """Failed scheduled refreshes since each table's last successful one (or RESUME)."""
        scheduled = exp.column("refresh_trigger").eq(exp.Literal.string(Trigger.SCHEDULED))
        decided = exp.column("state").isin(
            exp.Literal.string(SUCCEEDED), exp.Literal.string(FAILED)
        )
        rank = exp.Window(
            this=exp.func("row_number"),
            partition_by=[exp.column("schema_name"), exp.column("name")],
            order=exp.Order(expressions=[exp.column("refresh_start_time").desc()]),
        )
        recent = (
            exp.select("schema_name", "name", "state", "refresh_start_time", exp.alias_(rank, "r"))
            .from_(exp.table_(REFRESH_HISTORY, db=SYSTEM_SCHEMA))
            .where(exp.and_(scheduled, decided))
        )
        query = (
            exp.select("schema_name", "name", "state", "refresh_start_time")
            .from_(recent.subquery("recent"))
            .where(exp.LTE(this=exp.column("r"), expression=exp.Literal.number(self.max_failures)))
            .order_by("refresh_start_time DESC")
        )
        self.graph()
        counts: dict[str, int] = {}
        finished: set[str] = set()
        for row in self.history_rows(query):
            key = f"{row[0]}.{row[1]}".lower()
            if key in finished or key not in self._definitions:
                continue
            resumed = self._definitions[key][1].extra.get("resumed_at")
            if row[2] != FAILED or (resumed and row[3] <= _naive(resumed)):
                finished.add(key)
                continue
            counts[key] = counts.get(key, 0) + 1
        return counts

    # ---- refreshes ----

    def refresh(self, name: str, tick: Tick) -> Outcome:
        table, definition = self.definition(name)
        data_timestamp = to_datetime(tick.data_timestamp)
        try:
            pins = self._pin(definition, tick, data_timestamp)
            ahead = self._ahead_of(table, data_timestamp, pins)
        except Exception as failure:  # e.g. a source dropped: a failure of this refresh
            outcome = Outcome(FAILED, first_line(failure))
            self.record(name, tick.data_timestamp, outcome)
            return outcome
        if ahead is not None:
            outcome = Outcome(SKIPPED, ahead)
            self.record(name, tick.data_timestamp, outcome)
            return outcome
        try:
            result = self.refresher.refresh(
                table, definition, Trigger.SCHEDULED, at=AsOf(data_timestamp, pins)
            )
        except DynamicTableError as failure:  # recorded in the history by the refresher
            return Outcome(FAILED, str(failure))
        tick.versions[name] = result.table_version
        return Outcome(SUCCEEDED, action=result.action)

    def _pin(
        self, definition: Definition, tick: Tick, data_timestamp: datetime.datetime
    ) -> dict[str, int | None]:
        """The versions this refresh reads: base tables as of the tick (pinned once per
        tick, shared by every table refreshed at it), upstreams as refreshed at it."""
        pins: dict[str, int | None] = {}
        for key in definition.sources:
            if key not in tick.versions:
                if key in definition.upstreams:  # a table the tick did not refresh: as it is
                    tick.versions[key] = None
                else:
                    tick.versions[key] = self.version_as_of(key, data_timestamp)
            pins[key] = tick.versions[key]
        return pins

    def _ahead_of(
        self, table: exp.Table, data_timestamp: datetime.datetime, pins: dict[str, int | None]
    ) -> str | None:
        """Why the table already holds data newer than this tick (a manual refresh, or
        another scheduler), if it does: refreshing it back in time is never right."""
        watermark = self.refresher.last_watermark(table).watermark
        if watermark is None:
            return None
        held = _naive(watermark.data_timestamp)
        if held >= data_timestamp:
            return (
                f"it already holds data as of {held.isoformat(sep=' ')}, not older than this tick"
            )
        for key, version in pins.items():
            read = watermark.sources.get(key)
            if version is None or read is None or read == version:
                continue
            if self._newer(key, read, version):
                return (
                    f"its last refresh read {key} at a version newer than this tick's"
                    f" ({read}, not {version})"
                )
        return None

    def _newer(self, key: str, first: int, second: int) -> bool:
        """Whether version ``first`` of a table came after ``second`` (versions are not
        ordered numbers on every format: Iceberg's are snapshot ids)."""
        commits = self.engine.table_format.history(self.engine.refresh_session, key_to_table(key))
        for commit in commits:  # newest first
            if commit.version in (first, second):
                return commit.version == first
        return False

    def version_as_of(self, key: str, moment: datetime.datetime) -> int | None:
        """The source's newest version committed at or before ``moment`` (None when it
        has none: then the refresh reads its current version). The history pages read
        are the tick's: every refresh reading the source uses them again."""

        def reaches_moment(commits: list[Commit]) -> bool:
            return any(self._committed_at(c.timestamp) <= moment for c in commits)

        commits = self.refresher.context.history_until(key_to_table(key), reaches_moment)
        for commit in commits:  # newest first
            if self._committed_at(commit.timestamp) <= moment:
                return commit.version
        return None

    def _committed_at(self, moment: datetime.datetime | None) -> datetime.datetime:
        """A commit's time as naive UTC (Spark shows it in the session's time zone)."""
        if moment is None:
            return datetime.datetime.min
        if moment.tzinfo is None:
            zone = self.engine.refresh_session.conf.get("spark.sql.session.timeZone", "UTC")
            moment = moment.replace(tzinfo=zoneinfo.ZoneInfo(str(zone or "UTC")))
        return moment.astimezone(datetime.timezone.utc).replace(tzinfo=None)

    def record(self, name: str, data_timestamp: float, outcome: Outcome) -> None:
        schema, _, short = name.rpartition(".")
        now = utc_now()
        self.system.record_refresh(
            RefreshRecord(
                name=short,
                schema_name=schema.rsplit(".", 1)[-1],
                state=outcome.state,
                state_message=outcome.message,
                query_id=new_id(),
                refresh_trigger=Trigger.SCHEDULED,
                refresh_action=None,
                refresh_action_reason=None,
                data_timestamp=to_datetime(data_timestamp),
                refresh_start_time=now,
                refresh_end_time=now,
                rows_inserted=None,
                rows_deleted=None,
                table_version=None,
                statement_id=None,
            )
        )

    def suspend(self, name: str, reason: str) -> None:
        table = key_to_table(name)
        definition = self.engine.definition(table)
        if definition is None:
            return
        changed = definition.with_changes(
            scheduling_state=SchedulingState.SUSPENDED, suspend_reason=reason
        )
        self.engine.table_format.set_properties(self.engine.session, table, changed.to_properties())
        self.refresher.context.wrote(table)


def _naive(text: str) -> datetime.datetime:
    moment = datetime.datetime.fromisoformat(text)
    if moment.tzinfo is not None:
        moment = moment.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    return moment
