"""The context every refresh strategy works in: reading the table's last watermark, pinning
the sources, paging through histories, committing-and-recording, and the history rows.

A refresh reads the newest commits of a history only (``HISTORY_PAGES``), finds the last
watermark (``last_watermark``), pins each source at one version (``pin_sources``), lists the
sources' commits since the watermark (``new_commits``), and after its write finds its own
commit (``own_commit``) or moves the watermark alone (``finish_write``). ``record`` writes its
history row; ``ensure_recorded`` adds the rows a killed process left out.
"""

from __future__ import annotations

import datetime
import hashlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from dyntables.catalog import Definition, key_to_table, table_key
from dyntables.engine import Engine
from dyntables.errors import DynamicTableError
from dyntables.formats import Commit
from dyntables.history import RefreshRecord, SystemTables, utc_now
from dyntables.refresh.reads import Page, ReadScopes
from dyntables.refresh.state import (
    Action,
    AsOf,
    PinnedSources,
    RefreshResult,
    Trigger,
    Watermark,
    WatermarkState,
)
from dyntables.sql.dialect import parse_one, to_spark_sql

# A refresh needs only the newest commits of a history: it reads it in growing pages, where
# reading all of it would read every commit of a table refreshed every minute.
HISTORY_PAGES = (4, 64, None)
# How many (source, version) schemas a context keeps (see RefreshContext._version_and_schema).
KEPT_SCHEMAS = 256
# A refresh's history row is recovered (``RefreshContext.ensure_recorded``) only this long
# after its commit: until then its own process may still be about to record it. (A process
# that stalls longer than this between its commit and its row would leave two rows.)
HISTORY_RECOVERY_GRACE = datetime.timedelta(minutes=5)
# How far back a process that knows nothing of a table yet looks for refreshes without
# their history row (the newest commits of the table).
RECOVERY_LOOKBACK = 64
# Delta keeps log entries for 30 days by default; carry a watermark forward well before.
WATERMARK_RECOMMIT_AFTER = datetime.timedelta(days=7)


class RefreshContext:
    """The engine, the system tables, and what refreshes of one process know between them
    (source schemas per version, which tables' history rows are known complete)."""

    def __init__(self, engine: Engine, system: SystemTables) -> None:
        self.engine = engine
        self.system = system
        self.fmt = engine.table_format
        # Source schemas by (source, version, commit time), on formats where a schema
        # changes only with a new version; the commit time tells apart a table dropped and
        # recreated up to the same version.
        self._schemas: dict[tuple[str, int, Any], Any] = {}
        # Per source (by key), its rows at a version this process counted, with that
        # version's commit time (see source_rows).
        self._row_counts: dict[str, KeptCount] = {}
        # Per table (by key), the refresh id of a watermark up to which every refresh
        # committed to the table is known to have its history row (see ensure_recorded).
        self._recorded_through: dict[str, str] = {}
        # The histories read in the current statement or tick, per thread (``reads.py``).
        self.reads = ReadScopes()

    @property
    def session(self) -> Any:
        """The session refreshes run on (made on first use: creating a refresher starts
        nothing)."""
        return self.engine.refresh_session

    def begin(
        self, table: exp.Table, definition: Definition, result: RefreshResult, at: AsOf | None
    ) -> tuple[WatermarkState, PinnedSources]:
        """What every refresh reads first: the table's last watermark (with the history rows
        of earlier refreshes made sure of), and its sources pinned (at ``at``'s versions,
        where the scheduler's tick gives them)."""
        state = self.last_watermark(table)
        self.ensure_recorded(table, state)
        result.read_refresh_id = state.watermark.refresh_id if state.watermark else None
        pinned = self.pin_sources(definition, at.versions if at is not None else {})
        return state, pinned

    def no_data(self, table: exp.Table, result: RefreshResult, state: WatermarkState) -> None:
        """Finish a refresh that found no source changed: nothing computed or committed,
        but a watermark grown old is carried forward."""
        result.action = Action.NO_DATA
        result.table_version = state.table_version
        self.keep_watermark_readable(table, state)

    def last_watermark(self, table: exp.Table) -> WatermarkState:
        """The newest refresh watermark in the table's history, and the table's version."""
        fmt = self.fmt

        def has_watermark(commits: list[Commit]) -> bool:
            return any(Watermark.from_json(fmt.watermark(c)) is not None for c in commits)

        commits = self.history_until(table, has_watermark)
        current = commits[0].version if commits else None
        foreign_changes = False
        for commit in commits:
            watermark = Watermark.from_json(fmt.watermark(commit))
            if watermark is not None:
                return WatermarkState(watermark, current, commit.timestamp, foreign_changes)
            foreign_changes = foreign_changes or commit.changes_data
        return WatermarkState(None, current, None, foreign_changes)

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
        fmt = self.fmt

        def reaches_known(commits: list[Commit]) -> bool:
            return known is not None and any(
                (w := Watermark.from_json(fmt.watermark(c))) is not None and w.refresh_id == known
                for c in commits
            )

        if known is None:
            lookback = self.history_until(table, lambda read: len(read) >= RECOVERY_LOOKBACK)
            commits = lookback[:RECOVERY_LOOKBACK]
        else:
            commits = self.history_until(table, reaches_known)
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

    def pin_sources(
        self, definition: Definition, given: dict[str, int | None] | None = None
    ) -> PinnedSources:
        """Each source's version (as ``given``, else its current one), its columns, and a
        fingerprint of its shape: its schema, and for a dynamic table also its definition
        (a replaced upstream reinitializes)."""
        versions: dict[str, int | None] = {}
        fingerprints: dict[str, str] = {}
        columns: dict[str, list[str]] = {}
        types: dict[str, list[str]] = {}
        commit_times: dict[str, str] = {}
        for key in definition.sources:
            source = key_to_table(key)
            if not self.engine.table_exists(source):
                raise DynamicTableError(
                    f"source table {key} of this dynamic table does not exist any more"
                    " (dropped, renamed or moved): recreate it, or replace the dynamic table"
                )
            current, schema = self._version_and_schema(key)
            chosen = given.get(key) if given else None  # pinned by the scheduler's tick
            versions[key] = chosen if chosen is not None else current
            columns[key] = list(schema.names)
            types[key] = [field.dataType.simpleString() for field in schema.fields]
            upstream = self.engine.definition(source) if key in definition.upstreams else None
            shape = schema.simpleString() + (upstream.definition_hash if upstream else "")
            fingerprints[key] = hashlib.sha256(shape.encode()).hexdigest()[:16]
            committed = self._commit_time(source, versions[key])
            if committed is not None:
                commit_times[key] = committed
        return PinnedSources(versions, fingerprints, columns, types, commit_times)

    def _commit_time(self, table: exp.Table, version: int | None) -> str | None:
        """When ``version`` of ``table`` was committed (ISO), as its history says; None
        when it does not (no version, or a commit gone from the history). The latest
        version's is in the page of history read for the version itself."""
        if version is None:
            return None
        commits = self.history_until(table, reaches(version))
        commit = next((c for c in commits if c.version == version), None)
        if commit is None or commit.timestamp is None:
            return None
        return commit.timestamp.isoformat()

    def recreated_sources(self, previous: Watermark, pinned: PinnedSources) -> list[str]:
        """The sources dropped and created again since ``previous`` read them (a Delta
        table's versions start over): the commit at the version it read was made at
        another time than the one it read, or (where versions count up) the latest version
        is below it. That version's rows and the changes after it are then not those of
        the table the watermark read."""
        recreated = []
        for key, seen in previous.sources.items():
            now = pinned.versions.get(key)
            if seen is None or now is None:
                continue
            if self.fmt.versions_count_up and now < seen:
                recreated.append(key)
                continue
            read_at = previous.source_commit_times.get(key)
            now_at = self._commit_time(key_to_table(key), seen) if read_at is not None else None
            if now_at is not None and now_at != read_at:
                recreated.append(key)
        return recreated

    def _version_and_schema(self, key: str) -> tuple[int | None, Any]:
        """Source ``key``'s current version and schema, read on the refresh's session
        (where the query will run at that version). Reading a schema runs a query, so where
        only a new version can change it, it is kept per version."""
        fmt = self.fmt
        session = self.session
        source = key_to_table(key)
        latest = self.newest_commit(source)
        if not fmt.schema_changes_are_versions:  # read once per statement or tick
            schema = self.reads.schema(key)
            if schema is None:
                schema = self.engine.schema_of(session, key)
                self.reads.keep_schema(key, schema)
            return (latest.version if latest is not None else None), schema
        if latest is None:
            return None, self.engine.schema_of(session, key)
        identity = (key, latest.version, latest.timestamp)
        schema = self._schemas.get(identity)
        if schema is None:
            schema = self.engine.schema_of(session, key)
            if len(self._schemas) >= KEPT_SCHEMAS:
                self._schemas.pop(next(iter(self._schemas)))
            self._schemas[identity] = schema
        return latest.version, schema

    def source_rows(self, key: str, version: int) -> int:
        """Source ``key``'s rows at ``version``. Where this process counted them at an
        earlier version of the same table (its commit still there, at the same time), that
        count moved by what each commit since inserted and deleted (its metrics): the
        history the refresh reads anyway, where the format's row count replays the table's
        metadata (milliseconds on Delta). Else read from the format's metadata, or counted
        by a query; then kept for the next refresh."""
        table = key_to_table(key)
        commits = self.history_until(table, reaches(version))
        at_version = next((c for c in commits if c.version == version), None)
        rows = at_version.total_rows if at_version is not None else None
        kept = self._row_counts.get(key)
        if rows is None and kept is not None:
            rows = _moved_count(kept, commits, version)
        if rows is None:
            rows = self.fmt.row_count(self.session, table, version)
        if rows is None:
            rows = count_rows(self.session, self.fmt.pinned(table, version))
        if at_version is not None:
            if len(self._row_counts) >= KEPT_SCHEMAS:
                self._row_counts.pop(next(iter(self._row_counts)))
            self._row_counts[key] = KeptCount(version, at_version.timestamp, rows)
        return rows

    def history_until(
        self, table: exp.Table, enough: Callable[[list[Commit]], bool]
    ) -> list[Commit]:
        """The newest commits of ``table`` (newest first), read in growing pages until
        ``enough`` of them are read, or the whole history; within a read scope, a page
        already read that is enough is used again."""
        key = table_key(table)
        kept = self.reads.page(key)
        if kept is not None and (kept.complete or enough(kept.commits)):
            return kept.commits
        commits: list[Commit] = []
        for limit in HISTORY_PAGES:
            if kept is not None and limit is not None and (kept.limit or 0) >= limit:
                continue  # this page was read already, and was not enough
            commits = self.fmt.history(self.session, table, limit)
            self.reads.keep(key, Page(limit, commits))
            if limit is None or len(commits) < limit or enough(commits):
                break
        return commits

    def read_histories(self, tables: list[exp.Table]) -> None:
        """Read the newest commits of those of ``tables`` not read yet in this scope, all
        at once where the format can (one statement on Iceberg): a listing or a refresh
        then finds them read. Nothing outside a scope."""
        if self.reads.current is None or not self.fmt.reads_histories_at_once:
            return
        unread = [
            table
            for table in tables
            if self.reads.page(table_key(table)) is None and self.engine.table_exists(table)
        ]
        if len(unread) < 2:
            return  # one table: read when needed, as much as needed
        limit = HISTORY_PAGES[0]
        try:
            read = self.fmt.histories(self.session, unread, limit)
        except Exception:  # e.g. a table dropped meanwhile: each is read, and fails, alone
            return
        for key, commits in read.items():
            self.reads.keep(key, Page(limit, commits))

    def newest_commit(self, table: exp.Table) -> Commit | None:
        """The table's newest commit (None: it has none)."""
        commits = self.history_until(table, lambda commits: True)
        return commits[0] if commits else None

    @contextmanager
    def reading_once(self) -> Iterator[None]:
        """A read scope (``reads.py``) for the block, unless this thread is in one."""
        opened = self.reads.open()
        try:
            yield
        finally:
            if opened:
                self.reads.close()

    def forget_recorded(self) -> None:
        """Forget which refreshes are known to have their history rows (after rows kept
        for a tick's end could not be written): ``ensure_recorded`` checks again."""
        self._recorded_through.clear()

    def wrote(self, table: exp.Table) -> None:
        """This process has just committed to ``table``: what was read of it is stale."""
        self.reads.forget(table_key(table))

    def sources_changed(self, previous: Watermark, versions: dict[str, int | None]) -> bool:
        """Whether any source has a data-changing commit since the watermark."""
        return changes_data(self.new_commits(previous, versions))

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
                commits = self.history_until(key_to_table(key), reaches(seen))
                moved[key] = commits_after(commits, seen)
        return moved

    def own_commit(
        self, table: exp.Table, watermark: str, read_version: int | None
    ) -> Commit | None:
        """The commit carrying ``watermark`` among those after ``read_version``: the
        refresh's own, if it made one. Not simply the newest commit: a write can make no
        commit (it touched no row), and another process may commit right after."""
        fmt = self.fmt
        self.wrote(table)  # the commit looked for is newer than anything read before it
        commits = self.history_until(table, reaches(read_version))
        for commit in commits:  # newest first
            if commit.version == read_version:
                break
            if fmt.watermark(commit) == watermark:
                return commit
        return None

    def keep_watermark_readable(self, table: exp.Table, state: WatermarkState) -> None:
        """After a long run of NO_DATA the watermark's commit grows old; carry it forward
        before the log retention could remove it (only over the version it was read at)."""
        age, watermark = _age(state.committed_at), state.watermark
        if age is None or watermark is None:
            return
        if age > WATERMARK_RECOMMIT_AFTER:
            session = self.session
            self.fmt.recommit_watermark(session, table, watermark.to_json(), state.table_version)
            self.wrote(table)

    def record(
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

    def finish_write(
        self,
        table: exp.Table,
        result: RefreshResult,
        watermark: str,
        read_version: int | None,
        committed: bool,
        rows_changed: Callable[[Commit], tuple[int | None, int | None]],
        made: Commit | None = None,
    ) -> None:
        """After a strategy's write conditional on ``read_version``: find its commit
        (``made``, where the format said which it made; else from the history) and report
        the rows it changed (``rows_changed`` of that commit). When it wrote nothing
        (``committed`` False: the change netted out; or it touched no row and the engine
        made no commit for it) only the watermark moves."""
        ours = (made or self.own_commit(table, watermark, read_version)) if committed else None
        if ours is None:
            made = self.fmt.recommit_watermark(self.session, table, watermark, read_version)
            result.rows_inserted = result.rows_deleted = 0
            ours = made or self.own_commit(table, watermark, read_version)
        else:
            result.rows_inserted, result.rows_deleted = rows_changed(ours)
        self.made(table, result, ours)

    def made(self, table: exp.Table, result: RefreshResult, ours: Commit | None) -> None:
        """The refresh's commit is ``ours``: what was read of the table is stale, and the
        result reports the commit's version and data files."""
        self.wrote(table)
        result.table_version = ours.version if ours is not None else None
        result.data_files = ours.data_files if ours is not None else None


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


def changes_data(moved: dict[str, list[Commit] | None]) -> bool:
    """Whether any of these new commits (None: unknown) may have changed data."""
    return any(
        commits is None or any(commit.changes_data for commit in commits)
        for commits in moved.values()
    )


@dataclass(frozen=True)
class KeptCount:
    """A table's rows at a version, and that version's commit time (``source_rows``)."""

    version: int
    committed_at: Any
    rows: int


def _moved_count(kept: KeptCount, commits: list[Commit], version: int) -> int | None:
    """``kept``'s count moved to ``version`` by the commits between (``commits``: newest
    first, reaching back to ``kept.version``); None when one of them does not say how many
    rows it inserted and deleted (an overwrite, a restore), when ``kept``'s commit is not
    among them as it was (the table was recreated), or when ``version`` is older."""
    if version < kept.version:
        return None
    rows = kept.rows
    for commit in commits:  # newest first
        if commit.version == kept.version:
            return rows if commit.timestamp == kept.committed_at else None
        if commit.version > version or not commit.changes_data:
            continue
        if commit.rows_inserted is None or commit.rows_deleted is None:
            return None
        rows += commit.rows_inserted - commit.rows_deleted
    return None


def reaches(version: int | None) -> Callable[[list[Commit]], bool]:
    """Whether a page of history reaches back to ``version``."""
    return lambda commits: any(commit.version == version for commit in commits)


def commits_after(commits: list[Commit], seen: int | None) -> list[Commit] | None:
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


def inserts_only(moved: dict[str, list[Commit] | None]) -> bool:
    """Whether every commit of the sources since the last refresh only inserted rows."""
    return all(
        commits is not None and all(c.inserts_only or not c.changes_data for c in commits)
        for commits in moved.values()
    )


def counted(counted: int | None, reported: int | None) -> int:
    """Rows a refresh changed: as it counted them, else as its commit's metrics say."""
    if counted is not None:
        return counted
    if reported is None:
        raise DynamicTableError("the refresh commit does not say how many rows it changed")
    return reported


def count_rows(session: Any, rows: exp.Table | exp.Query) -> int:
    """The number of rows of a table or query."""
    source = rows.copy() if isinstance(rows, exp.Table) else rows.subquery("r")
    query = exp.select(exp.func("count", exp.Star())).from_(source)
    return int(session.sql(to_spark_sql(query)).collect()[0][0])
