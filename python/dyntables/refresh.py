"""The refresh executor: bring one dynamic table up to date, atomically.

A refresh pins every source at one version, decides whether anything changed since the
watermark of the table's last refresh (``NO_DATA`` when nothing did: no compute, no
commit), and otherwise recomputes the defining query over the pinned sources and
replaces the table's rows in one commit that also carries the new watermark. The commit
is conditional on the table version the refresh read, where the engine allows it, so
two refreshes never both land. Every outcome is recorded in the refresh history.
"""

from __future__ import annotations

import datetime
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from dyntables.catalog import PREFIX, Definition, key_to_table, table_key
from dyntables.changes import Versions
from dyntables.engine import Engine
from dyntables.errors import (
    CannotRefreshIncrementallyError,
    ConcurrentRefreshError,
    DynamicTableError,
)
from dyntables.formats import Commit
from dyntables.history import RefreshRecord, SystemTables, new_id, utc_now
from dyntables.incremental import IncrementalRefresh
from dyntables.planner.capabilities import is_linear
from dyntables.planner.predicates import active_region, bind_current_time, is_frozen
from dyntables.sql.dialect import parse_one

WATERMARK_MARKER = "dyntables"
# An incremental refresh becomes full when the sources' change feeds hold more than this
# fraction of their rows (measured: above about a fifth, recomputing is as fast, and it
# rewrites the table in one pass), unless the sources are smaller than COST_RULE_MIN_ROWS,
# where either way is cheap.
FULL_REFRESH_FRACTION = 0.2
COST_RULE_MIN_ROWS = 10_000

# A refresh needs only the newest commits of a history: it reads it in growing pages, where
# reading all of it would read every commit of a table refreshed every minute.
HISTORY_PAGES = (4, 64, None)
# How many (source, version) schemas a refresher keeps (see Refresher._version_and_schema).
KEPT_SCHEMAS = 256


class Trigger:
    CREATION = "CREATION"
    MANUAL = "MANUAL"
    SCHEDULED = "SCHEDULED"


class Action:
    NO_DATA = "NO_DATA"
    FULL = "FULL"
    INCREMENTAL = "INCREMENTAL"
    REINITIALIZE = "REINITIALIZE"


@dataclass(frozen=True)
class PinnedSources:
    """What a refresh read of its sources before computing anything."""

    versions: dict[str, int | None]
    fingerprints: dict[str, str]  # each source's shape (schema, upstream definition)
    columns: dict[str, list[str]]


@dataclass(frozen=True)
class Watermark:
    """What a refresh commit records: the source versions it read and why."""

    refresh_id: str
    data_timestamp: str
    sources: dict[str, int | None]
    definition_hash: str
    action: str
    definition: dict[str, str] | None = None  # set on a REPLACE commit: see lifecycle.py
    fingerprints: dict[str, str] = field(default_factory=dict)  # each source's shape
    trigger: str | None = None  # what started the refresh (for a history row recovered)

    def to_json(self) -> str:
        payload: dict[str, Any] = {
            WATERMARK_MARKER: 1,
            "refresh_id": self.refresh_id,
            "data_timestamp": self.data_timestamp,
            "sources": self.sources,
            "definition_hash": self.definition_hash,
            "action": self.action,
            "fingerprints": self.fingerprints,
        }
        if self.definition is not None:
            payload["definition"] = self.definition
        if self.trigger is not None:
            payload["trigger"] = self.trigger
        return json.dumps(payload, sort_keys=True)

    @classmethod
    def from_json(cls, text: str | None) -> Watermark | None:
        if not text:
            return None
        try:
            payload = json.loads(text)
        except ValueError:
            return None
        if not isinstance(payload, dict) or payload.get(WATERMARK_MARKER) != 1:
            return None
        return cls(
            refresh_id=payload["refresh_id"],
            data_timestamp=payload["data_timestamp"],
            sources=dict(payload["sources"]),
            definition_hash=payload["definition_hash"],
            action=payload["action"],
            definition=payload.get("definition"),
            fingerprints=dict(payload.get("fingerprints", {})),
            trigger=payload.get("trigger"),
        )


@dataclass(frozen=True)
class AsOf:
    """Pins a refresh to one data timestamp (the scheduler's tick): its sources are read
    at ``versions`` (each source's version as of the timestamp, and upstream dynamic
    tables as refreshed at it); a source not listed is read at its current version."""

    data_timestamp: datetime.datetime
    versions: dict[str, int | None]


@dataclass
class RefreshResult:
    """What ``ALTER DYNAMIC TABLE … REFRESH`` reports."""

    name: str
    action: str
    state: str
    data_timestamp: datetime.datetime
    rows_inserted: int | None = None
    rows_deleted: int | None = None
    message: str | None = None
    reason: str | None = None
    table_version: int | None = None
    query_id: str = field(default_factory=new_id)
    trigger: str | None = None
    # The refresh id of the watermark the refresh started from (None: the first).
    read_refresh_id: str | None = None


class Refresher:
    """Refreshes dynamic tables of one engine and records each refresh."""

    def __init__(self, engine: Engine, system: SystemTables) -> None:
        self.engine = engine
        self.system = system
        # Source schemas by (source, version, commit time), on formats where a schema
        # changes only with a new version; the commit time tells apart a table dropped and
        # recreated up to the same version.
        self._schemas: dict[tuple[str, int, Any], Any] = {}
        # Per table (by key), the refresh id of a watermark up to which every refresh
        # committed to the table is known to have its history row (see ensure_recorded).
        self._recorded_through: dict[str, str] = {}

    def last_watermark(self, table: exp.Table) -> WatermarkState:
        """The newest refresh watermark in the table's history, and the table's version."""
        fmt = self.engine.table_format

        def has_watermark(commits: list[Commit]) -> bool:
            return any(Watermark.from_json(fmt.watermark(c)) is not None for c in commits)

        commits = self._history_until(table, has_watermark)
        current = commits[0].version if commits else None
        foreign_changes = False
        for commit in commits:
            watermark = Watermark.from_json(fmt.watermark(commit))
            if watermark is not None:
                return WatermarkState(watermark, current, commit.timestamp, foreign_changes)
            foreign_changes = foreign_changes or commit.changes_data
        return WatermarkState(None, current, None, foreign_changes)

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
        """Refresh ``table`` (NO_DATA, FULL or REINITIALIZE); failures are recorded and
        raised as ``DynamicTableError``. ``at`` pins it to a data timestamp."""
        with self.engine.refresh_lock:
            started = utc_now()
            result = RefreshResult(
                name=table_key(table),
                action=Action.FULL,
                state="EXECUTING",
                data_timestamp=at.data_timestamp if at is not None else started,
                trigger=trigger,
            )
            try:
                self._run(table, definition, result, replace_definition, backfill, at)
                result.state = "SUCCEEDED"
            except Exception as failure:
                result.state = "FAILED"
                lost_race = isinstance(
                    failure, ConcurrentRefreshError
                ) or self.engine.table_format.lost_race(failure)
                result.message = lost_race_message(table) if lost_race else _message(failure)
                self._record(table, result, trigger, started, statement_id)
                if lost_race:
                    raise ConcurrentRefreshError(result.message) from failure
                if isinstance(failure, DynamicTableError):
                    raise
                raise DynamicTableError(
                    f"refresh of dynamic table {table_key(table)} failed: {result.message}"
                ) from failure
            self._record(table, result, trigger, started, statement_id)
            if result.action != Action.NO_DATA:  # it committed to the table
                self.system.compactor.committed(table, self.engine.refresh_session)
            return result

    def ensure_recorded(self, table: exp.Table, state: WatermarkState) -> None:
        """Give every refresh committed to the table its history row: a process that
        stops between a refresh's commit and its row (a crash, a kill) leaves the row
        out, and a later refresh may already have committed over it.

        Free while the table's newest watermark is one this process knows to be recorded
        with all before it (its own refreshes follow each other: each commits on the
        version the last one left). Otherwise the watermarks committed since the last
        known one (at most ``RECOVERY_LOOKBACK`` commits back when none is known) are
        looked up in the history in one query, and each missing row is added, once its
        commit is ``HISTORY_RECOVERY_GRACE`` old: until then its own process may still be
        about to record it, and it is looked for again at the next refresh."""
        newest = state.watermark
        key = table_key(table)
        if newest is None or self._recorded_through.get(key) == newest.refresh_id:
            return
        unchecked = self._watermarks_since(table, self._recorded_through.get(key))
        recorded = self.system.recorded_refreshes([w.refresh_id for w, _ in unchecked])
        pending = False
        for watermark, commit in reversed(unchecked):  # oldest first, as they happened
            if watermark.refresh_id in recorded:
                continue
            age = _age(commit.timestamp)
            if age is None or age < HISTORY_RECOVERY_GRACE:
                pending = True
                continue
            self.system.record_refresh(_recovered_record(table, watermark, commit))
        if not pending:
            self._recorded_through[key] = newest.refresh_id

    def _watermarks_since(
        self, table: exp.Table, known: str | None
    ) -> list[tuple[Watermark, Commit]]:
        """The watermarks of the table's commits after the one carrying ``known`` (newest
        first), each with the oldest of those commits that carries it."""
        fmt = self.engine.table_format

        def reaches_known(commits: list[Commit]) -> bool:
            return known is not None and any(
                (w := Watermark.from_json(fmt.watermark(c))) is not None and w.refresh_id == known
                for c in commits
            )

        if known is None:
            commits = fmt.history(self.engine.refresh_session, table, RECOVERY_LOOKBACK)
        else:
            commits = self._history_until(table, reaches_known)
        found: dict[str, tuple[Watermark, Commit]] = {}
        for commit in commits:  # newest first
            watermark = Watermark.from_json(fmt.watermark(commit))
            if watermark is None:
                continue
            if watermark.refresh_id == known:
                break
            found[watermark.refresh_id] = (watermark, commit)  # an older carrier replaces
        return list(found.values())

    def _recorded_after(self, table: exp.Table, result: RefreshResult) -> None:
        """After a refresh of this process committed and recorded its row: when every
        refresh before it was known recorded, so is every one up to it."""
        key = table_key(table)
        if result.read_refresh_id is not None and (
            self._recorded_through.get(key) == result.read_refresh_id
        ):
            self._recorded_through[key] = result.query_id

    def _run(
        self,
        table: exp.Table,
        definition: Definition,
        result: RefreshResult,
        replace_definition: dict[str, str] | None,
        backfill: exp.Query | None = None,
        at: AsOf | None = None,
    ) -> None:
        if definition.refresh_mode == "CUSTOM_INCREMENTAL":
            from dyntables.custom_refresh import CustomRefresh  # (it imports this module)

            CustomRefresh(self, table, definition, result, at).run(replace_definition, backfill)
            return
        fmt = self.engine.table_format
        session = self.engine.refresh_session
        state = self.last_watermark(table)
        self.ensure_recorded(table, state)
        result.read_refresh_id = state.watermark.refresh_id if state.watermark else None
        previous = state.watermark
        pinned = self._pin_sources(definition, at.versions if at is not None else {})
        versions, fingerprints = pinned.versions, pinned.fingerprints
        reason = _reinitialize_reason(definition, previous, fingerprints, replace_definition)
        if reason is None and state.foreign_changes:
            # Something wrote to the table outside a refresh: its rows are not the query's.
            reason = "TABLE_CHANGED_OUTSIDE_A_REFRESH"
        moved = self.new_commits(previous, versions) if previous is not None else {}
        if reason is None and previous is not None and not _changes_data(moved):
            result.action = Action.NO_DATA
            result.table_version = state.table_version
            self._keep_watermark_readable(table, state)
            return
        if previous is not None and reason is not None:
            result.action = Action.REINITIALIZE
            result.reason = reason
        # The frozen region, at this refresh's data timestamp; the first refresh and a
        # replace compute every row.
        active = (
            None
            if previous is None or replace_definition is not None
            else _active_region(definition, result.data_timestamp)
        )
        if reason is None and previous is not None and definition.refresh_mode == "INCREMENTAL":
            why_full = (
                None  # appended as they come: less work than a full refresh, whatever the size
                if _inserts_only(moved) and is_linear(definition)
                else self._too_large_for_incremental(moved, versions)
            )
            if why_full is None:
                try:
                    self._incremental(table, definition, state, pinned, result, active, moved)
                    return
                except CannotRefreshIncrementallyError as why:  # recomputed instead
                    why_full = str(why)
            result.action = Action.FULL
            result.reason = f"FULL instead of INCREMENTAL: {why_full}"
        watermark = _watermark(result, definition, versions, fingerprints, replace_definition)
        query = pin_query(definition.query, versions, fmt)
        if backfill is not None:  # the first rows come from the backfill source
            query = _backfilled(backfill, query, definition, result.data_timestamp)
            result.reason = "BACKFILL"
        in_scope = table if active is None else exp.select("*").from_(table).where(active)
        rows_before = _count(session, in_scope)
        if active is None:
            fmt.overwrite(
                session,
                table,
                query,
                watermark.to_json(),
                expected_version=state.table_version,
                replace_schema=replace_definition is not None,
            )
        else:  # only the active region: frozen rows stay as they are
            rows = exp.select("*").from_(query.subquery("q")).where(active.copy())
            fmt.replace_where(
                session, table, active, rows, watermark.to_json(), state.table_version
            )
        result.rows_deleted = rows_before
        result.rows_inserted = _count(session, in_scope)
        result.table_version = fmt.current_version(session, table)
        self._finish_frozen_change(table, definition)
        fmt.forget_cached(self.engine.session, table)  # the user's session reads it next

    def _finish_frozen_change(self, table: exp.Table, definition: Definition) -> None:
        """Clear a frozen-region change the refresh just applied (a crash before this only
        makes the next refresh recompute the active region again)."""
        if definition.frozen_reinitialize is not None:
            cleared = {PREFIX + "frozen_reinitialize": ""}
            self.engine.table_format.set_properties(self.engine.refresh_session, table, cleared)

    def _incremental(
        self,
        table: exp.Table,
        definition: Definition,
        state: WatermarkState,
        pinned: PinnedSources,
        result: RefreshResult,
        active: exp.Expr | None,
        moved: dict[str, list[Commit] | None],
    ) -> None:
        """Apply the sources' changes since the watermark of ``state`` (see
        ``incremental.py``), conditional on the table version that watermark was read at;
        ``moved`` holds each changed source's commits since."""
        fmt = self.engine.table_format
        if not fmt.supports_incremental:
            raise CannotRefreshIncrementallyError(
                f"incremental refresh on {fmt.name} is not built yet"
            )
        assert state.watermark is not None
        previous = state.watermark
        session = self.engine.refresh_session
        result.action = Action.INCREMENTAL
        watermark = _watermark(result, definition, pinned.versions, pinned.fingerprints)
        versions = Versions(old=dict(previous.sources), new=pinned.versions)
        change = IncrementalRefresh(
            session,
            fmt,
            table,
            definition,
            versions,
            pinned.columns,
            active,
            inserts_only=_inserts_only(moved),
        )
        text = watermark.to_json()
        applied = change.apply(text, state.table_version)
        ours = self.own_commit(table, text, state.table_version) if applied.committed else None
        if ours is None:
            # Nothing written (the change netted out, or it touched no row and the engine
            # made no commit for it): only the watermark moves.
            fmt.recommit_watermark(session, table, text, state.table_version)
            result.rows_inserted = result.rows_deleted = 0
            ours = self.own_commit(table, text, state.table_version)
        else:
            result.rows_inserted = _counted(applied.rows_inserted, ours.rows_inserted)
            result.rows_deleted = _counted(applied.rows_deleted, ours.rows_deleted)
        result.table_version = ours.version if ours is not None else None
        fmt.forget_cached(self.engine.session, table)

    def own_commit(
        self, table: exp.Table, watermark: str, read_version: int | None
    ) -> Commit | None:
        """The commit carrying ``watermark`` among those after ``read_version``: the
        refresh's own, if it made one. Not simply the newest commit: a write can make no
        commit (it touched no row), and another process may commit right after."""
        fmt = self.engine.table_format
        commits = self._history_until(table, _reaches(read_version))
        for commit in commits:  # newest first
            if commit.version == read_version:
                break
            if fmt.watermark(commit) == watermark:
                return commit
        return None

    def _pin_sources(
        self, definition: Definition, given: dict[str, int | None] | None = None
    ) -> PinnedSources:
        """Each source's version (as ``given``, else its current one), its columns, and a
        fingerprint of its shape: its schema, and for a dynamic table also its definition
        (a replaced upstream reinitializes)."""
        versions: dict[str, int | None] = {}
        fingerprints: dict[str, str] = {}
        columns: dict[str, list[str]] = {}
        for key in definition.sources:
            source = key_to_table(key)
            if not self.engine.table_exists(source):
                raise DynamicTableError(
                    f"source table {key} of this dynamic table does not exist any more"
                    " (dropped or renamed): recreate it, or replace the dynamic table"
                )
            current, schema = self._version_and_schema(key)
            chosen = given.get(key) if given else None  # pinned by the scheduler's tick
            versions[key] = chosen if chosen is not None else current
            columns[key] = list(schema.names)
            upstream = self.engine.definition(source) if key in definition.upstreams else None
            shape = schema.simpleString() + (upstream.definition_hash if upstream else "")
            fingerprints[key] = hashlib.sha256(shape.encode()).hexdigest()[:16]
        return PinnedSources(versions, fingerprints, columns)

    def _version_and_schema(self, key: str) -> tuple[int | None, Any]:
        """Source ``key``'s current version and schema, read on the refresh's session
        (where the query will run at that version). Reading a schema runs a query, so where
        only a new version can change it, it is kept per version."""
        fmt = self.engine.table_format
        session = self.engine.refresh_session
        source = key_to_table(key)
        if not fmt.schema_changes_are_versions:
            return fmt.current_version(session, source), self.engine.schema_of(session, key)
        latest = fmt.history(session, source, 1)
        if not latest:
            return None, self.engine.schema_of(session, key)
        identity = (key, latest[0].version, latest[0].timestamp)
        schema = self._schemas.get(identity)
        if schema is None:
            schema = self.engine.schema_of(session, key)
            if len(self._schemas) >= KEPT_SCHEMAS:
                self._schemas.pop(next(iter(self._schemas)))
            self._schemas[identity] = schema
        return latest[0].version, schema

    def _history_until(
        self, table: exp.Table, enough: Callable[[list[Commit]], bool]
    ) -> list[Commit]:
        """The newest commits of ``table`` (newest first), read in growing pages until
        ``enough`` of them are read, or the whole history."""
        fmt = self.engine.table_format
        commits: list[Commit] = []
        for limit in HISTORY_PAGES:
            commits = fmt.history(self.engine.refresh_session, table, limit)
            if limit is None or len(commits) < limit or enough(commits):
                break
        return commits

    def sources_changed(self, previous: Watermark, versions: dict[str, int | None]) -> bool:
        """Whether any source has a data-changing commit since the watermark."""
        return _changes_data(self.new_commits(previous, versions))

    def new_commits(
        self, previous: Watermark, versions: dict[str, int | None]
    ) -> dict[str, list[Commit] | None]:
        """For each source that moved since the watermark, its commits since (newest
        first); None for a source the watermark does not know or whose version there is
        gone from its history."""
        moved: dict[str, list[Commit] | None] = {}
        for key, version in versions.items():
            if key not in previous.sources:
                moved[key] = None
            elif version != previous.sources[key]:
                seen = previous.sources[key]
                commits = self._history_until(key_to_table(key), _reaches(seen))
                moved[key] = _commits_after(commits, seen)
        return moved

    def _too_large_for_incremental(
        self, moved: dict[str, list[Commit] | None], versions: dict[str, int | None]
    ) -> str | None:
        """Why a full refresh is cheaper, when the sources' change feeds hold more than
        ``FULL_REFRESH_FRACTION`` of their rows (counted from the commits' metrics; no
        decision when a commit does not say how many rows it changed)."""
        changed = 0
        for commits in moved.values():
            counts = [c.changed_rows for c in commits or [] if c.changes_data]
            if commits is None or None in counts:
                return None
            changed += sum(count for count in counts if count is not None)
        if changed < FULL_REFRESH_FRACTION * COST_RULE_MIN_ROWS:
            return None  # too few to matter, whatever the sources' size
        session = self.engine.refresh_session
        fmt = self.engine.table_format
        total = 0
        for key, version in versions.items():
            if version is not None:
                pinned = fmt.pinned(key_to_table(key), version)
                total += _count(session, pinned)
        if total < COST_RULE_MIN_ROWS or changed <= FULL_REFRESH_FRACTION * total:
            return None
        return (
            f"the sources' change feeds hold {changed:,} rows, {changed / total:.0%} of"
            f" their {total:,} rows: above {FULL_REFRESH_FRACTION:.0%} a full refresh is"
            " cheaper"
        )

    def _keep_watermark_readable(self, table: exp.Table, state: WatermarkState) -> None:
        """After a long run of NO_DATA the watermark's commit grows old; carry it forward
        before the log retention could remove it (only over the version it was read at)."""
        age, watermark = _age(state.committed_at), state.watermark
        if age is None or watermark is None:
            return
        if age > WATERMARK_RECOMMIT_AFTER:
            session = self.engine.refresh_session
            self.engine.table_format.recommit_watermark(
                session, table, watermark.to_json(), state.table_version
            )

    def _record(
        self,
        table: exp.Table,
        result: RefreshResult,
        trigger: str,
        started: datetime.datetime,
        statement_id: str | None,
    ) -> None:
        parts = table_key(table).split(".")
        record = RefreshRecord(
            name=parts[-1],
            schema_name=parts[-2] if len(parts) > 1 else "",
            state=result.state,
            state_message=result.message,
            query_id=result.query_id,
            refresh_trigger=trigger,
            refresh_action=result.action,
            refresh_action_reason=result.reason,
            data_timestamp=result.data_timestamp,
            refresh_start_time=started,
            refresh_end_time=utc_now(),
            rows_inserted=result.rows_inserted,
            rows_deleted=result.rows_deleted,
            table_version=result.table_version,
            statement_id=statement_id,
        )
        self.system.record_refresh(record)
        if result.state == "SUCCEEDED" and result.action != Action.NO_DATA:
            self._recorded_after(table, result)


def lost_race_message(table: exp.Table) -> str:
    """What a refresh that lost a race says: what happened, and that nothing is lost."""
    return (
        f"refresh of dynamic table {table_key(table)} lost a race: another refresh or write"
        " committed to it after this refresh read it, so this refresh committed nothing."
        " The scheduler retries it at its next tick; or run ALTER DYNAMIC TABLE"
        f" {table_key(table)} REFRESH again"
    )


def _watermark(
    result: RefreshResult,
    definition: Definition,
    versions: dict[str, int | None],
    fingerprints: dict[str, str],
    replace_definition: dict[str, str] | None = None,
) -> Watermark:
    """The watermark a refresh commits with its rows."""
    return Watermark(
        refresh_id=result.query_id,
        data_timestamp=result.data_timestamp.isoformat(),
        sources=versions,
        definition_hash=definition.definition_hash,
        action=result.action,
        definition=replace_definition,
        fingerprints=fingerprints,
        trigger=result.trigger,
    )


@dataclass(frozen=True)
class WatermarkState:
    """A table's newest watermark, the commit time of the commit carrying it, and the
    table's current version."""

    watermark: Watermark | None
    table_version: int | None
    committed_at: datetime.datetime | None
    # Whether rows changed after the watermark's commit by other means than a refresh.
    foreign_changes: bool = False


# A refresh's history row is recovered (``Refresher.ensure_recorded``) only this long after
# its commit: until then its own process may still be about to record it. (A process that
# stalls longer than this between its commit and its row would leave two rows.)
HISTORY_RECOVERY_GRACE = datetime.timedelta(minutes=5)
# How far back a process that knows nothing of a table yet looks for refreshes without
# their history row (the newest commits of the table).
RECOVERY_LOOKBACK = 64


def _recovered_record(table: exp.Table, watermark: Watermark, commit: Commit) -> RefreshRecord:
    """The history row of a committed refresh whose process stopped before recording it,
    from what its watermark commit says."""
    parts = table_key(table).split(".")
    committed = _naive_utc(commit.timestamp or utc_now())
    data_timestamp = _naive_utc(datetime.datetime.fromisoformat(watermark.data_timestamp))
    return RefreshRecord(
        name=parts[-1],
        schema_name=parts[-2] if len(parts) > 1 else "",
        state="SUCCEEDED",
        state_message="recorded on recovery: the process that committed this refresh"
        " stopped before recording it",
        query_id=watermark.refresh_id,
        refresh_trigger=watermark.trigger or Trigger.SCHEDULED,
        refresh_action=watermark.action,
        refresh_action_reason=None,
        data_timestamp=data_timestamp,
        refresh_start_time=committed,
        refresh_end_time=committed,
        rows_inserted=None,
        rows_deleted=None,
        table_version=commit.version,
        statement_id=None,
    )


def _age(committed_at: datetime.datetime | None) -> datetime.timedelta | None:
    """How long ago a commit was made (a naive commit time is UTC); None if unknown."""
    if committed_at is None:
        return None
    if committed_at.tzinfo is None:
        committed_at = committed_at.replace(tzinfo=datetime.timezone.utc)
    return datetime.datetime.now(datetime.timezone.utc) - committed_at


def _naive_utc(moment: datetime.datetime) -> datetime.datetime:
    """``moment`` as a naive UTC time (how the history's TIMESTAMP values are written)."""
    if moment.tzinfo is None:
        return moment
    return moment.astimezone(datetime.timezone.utc).replace(tzinfo=None)


# Delta keeps log entries for 30 days by default; carry a watermark forward well before.
WATERMARK_RECOMMIT_AFTER = datetime.timedelta(days=7)


def _reinitialize_reason(
    definition: Definition,
    previous: Watermark | None,
    fingerprints: dict[str, str],
    replace_definition: dict[str, str] | None,
) -> str | None:
    """Why this refresh must recompute everything afresh, if it must."""
    if replace_definition is not None:
        return "DEFINITION_REPLACED"
    if previous is None:
        return None
    if previous.definition_hash != definition.definition_hash:
        return "DEFINITION_CHANGED"
    if definition.frozen_reinitialize == "ALL":
        return "FROZEN_REGION_REMOVED"
    if definition.frozen_reinitialize is not None:
        return "FROZEN_REGION_CHANGED"
    for key, fingerprint in fingerprints.items():
        if previous.fingerprints.get(key, fingerprint) != fingerprint:
            return f"UPSTREAM_SCHEMA_CHANGED: {key}"
    return None


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


def _active_region(definition: Definition, data_timestamp: datetime.datetime) -> exp.Expr | None:
    """Where rows are active (not frozen) at this data timestamp; None without a region."""
    if definition.frozen_where is None:
        return None
    predicate = bind_current_time(parse_one(definition.frozen_where), data_timestamp)
    return active_region(predicate)


def _changes_data(moved: dict[str, list[Commit] | None]) -> bool:
    """Whether any of these new commits (None: unknown) may have changed data."""
    return any(
        commits is None or any(commit.changes_data for commit in commits)
        for commits in moved.values()
    )


def _reaches(version: int | None) -> Callable[[list[Commit]], bool]:
    """Whether a page of history reaches back to ``version``."""
    return lambda commits: any(commit.version == version for commit in commits)


def _commits_after(commits: list[Commit], seen: int | None) -> list[Commit] | None:
    """The commits newer than version ``seen`` (newest first), or None if ``seen`` is gone
    from the history (then the change cannot be proven absent)."""
    newer: list[Commit] = []
    for commit in commits:
        if commit.version == seen:
            return newer
        newer.append(commit)
    return None if seen is not None else newer


def pin_query(query: str, versions: dict[str, int | None], fmt: Any) -> exp.Query:
    """The defining query with every source reference read at its pinned version."""
    tree = parse_one(query)
    assert isinstance(tree, exp.Query)
    cte_names = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    for reference in list(tree.find_all(exp.Table)):
        if not reference.name or (not reference.db and reference.name.lower() in cte_names):
            continue
        key = table_key(reference)
        version = versions.get(key)
        if version is not None:
            reference.replace(fmt.pinned(reference, version))
    return tree


def _inserts_only(moved: dict[str, list[Commit] | None]) -> bool:
    """Whether every commit of the sources since the last refresh only inserted rows."""
    return all(
        commits is not None and all(c.inserts_only or not c.changes_data for c in commits)
        for commits in moved.values()
    )


def _counted(counted: int | None, reported: int | None) -> int:
    """Rows a refresh changed: as it counted them, else as its commit's metrics say."""
    if counted is not None:
        return counted
    if reported is None:
        raise DynamicTableError("the refresh commit does not say how many rows it changed")
    return reported


def _count(session: Any, rows: exp.Table | exp.Query) -> int:
    """The number of rows of a table or query."""
    source = rows.copy() if isinstance(rows, exp.Table) else rows.subquery("r")
    query = exp.select(exp.func("count", exp.Star())).from_(source)
    return int(session.sql(query.sql("spark")).collect()[0][0])


def _message(failure: BaseException) -> str:
    """The engine's message, on one line: the first line that says something (a Py4J error
    begins with a line that only names the Java call)."""
    lines = [line.strip() for line in str(failure).splitlines() if line.strip()]
    meaningful = [line for line in lines if not line.startswith("An error occurred while calling")]
    return (meaningful or lines or [type(failure).__name__])[0].lstrip(": ")[:2000]
