"""Apache Iceberg, through Spark SQL with the Iceberg runtime and its SQL extensions.

A version is a snapshot id. Snapshot ids are random, not ordered: the order of a table's
commits is its current snapshot's ancestry (``parent_id`` links), newest first.

A refresh commits by write-audit-publish (WAP). SQL ``INSERT`` and ``MERGE`` ignore the
session's ``spark.sql.iceberg.snapshot-property.*`` settings, but on a table with
``write.wap.enabled=true`` the session conf ``spark.wap.id`` lands in the snapshot summary
as ``wap.id`` — so the watermark travels as the WAP id. The write (an overwrite, an append
or a MERGE) is staged (written, not current), checked against the version the refresh
read, and published by fast-forwarding ``main`` to it (``fast_forward``), which Iceberg
refuses, inside the commit, unless ``main`` is still an ancestor of the staged snapshot:
a real conditional commit for every kind of write.

Incremental refresh reads a source's changes from a changelog view
(``create_changelog_view``), which needs copy-on-write tables.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from sqlglot import exp

from dyntables.catalog import table_key
from dyntables.errors import (
    CannotRefreshIncrementallyError,
    ConcurrentRefreshError,
    DynamicTableError,
)
from dyntables.formats import (
    Commit,
    CountedWrite,
    create_table,
    ensure_properties,
    names_one_of,
    property_list,
    schema_from_catalog,
    session_settings,
    signed_change_rows,
    typed_change_rows,
)
from dyntables.sql.dialect import to_spark_sql
from dyntables.sql.merges import delete_then_insert_merge

WAP_ID_CONF = "spark.wap.id"
# The column that names the table of a row in a query over several tables' snapshots.
_TABLE = "__dt_table"
# A dynamic-partition INSERT OVERWRITE replaces only the partitions the query writes; a
# refresh replaces everything.
PARTITION_OVERWRITE_CONF = "spark.sql.sources.partitionOverwriteMode"

# Copy-on-write keeps every change as whole data files, which changelog views need
# (they fail on merge-on-read tables with delete files).
COPY_ON_WRITE = {
    "write.delete.mode": "copy-on-write",
    "write.update.mode": "copy-on-write",
    "write.merge.mode": "copy-on-write",
}
WAP_ENABLED = {"write.wap.enabled": "true"}
# The property under which Iceberg's Spark tables report their identifier fields.
IDENTIFIER_FIELDS = "identifier-fields"

# Snapshot operations that leave the rows as they were (``replace``: compaction, rewrites).
# Anything else — append, overwrite, delete, or an operation we do not know — is new data,
# unless its summary says it added and removed no files (an empty append).
_NO_DATA_OPERATIONS = {"replace"}
# A staged snapshot is published through this branch of the table (``_publish``): each
# publish moves it to the staged snapshot and fast-forwards ``main`` to it, so between
# refreshes it stays at a snapshot ``main`` holds.
PUBLISH_BRANCH = "dyntables_publish"
# A publish branch whose snapshot is not published this long after it was staged belongs
# to a refresh that stopped (a refresh publishes within seconds of staging).
PUBLISH_BRANCH_ABANDONED_AFTER = timedelta(hours=1)
# Temporary views of changelogs, one per table and snapshot range (``_changelog_view``).
CHANGES_VIEW_PREFIX = "dyntables_changes_"
# Changelog views kept per adapter (temporary views of the refresh's session); the oldest
# is dropped beyond this. One refresh needs one per changed source.
KEPT_CHANGE_VIEWS = 64
# Rows ``_change_type`` marks as added; DELETE and UPDATE_BEFORE are removed rows.
_ADDED_CHANGE_TYPES = ("INSERT", "UPDATE_AFTER")

_FILE_COUNTS = (
    "added-data-files",
    "deleted-data-files",
    "added-delete-files",
    "removed-delete-files",
)

# Keys SHOW TBLPROPERTIES reports that are not settable properties (Iceberg's derived ones
# and Spark's reserved ones): a replaced table must not be created with them.
_NOT_SETTABLE = {
    "current-snapshot-id",
    "format",
    "location",
    "provider",
    "owner",
    "comment",
    "external",
    "is_managed_location",
    "sort-order",
    IDENTIFIER_FIELDS,
    "snapshot-count",
}


@dataclass(frozen=True)
class _Snapshot:
    snapshot_id: int
    parent_id: int | None
    committed_at: datetime  # aware, UTC
    operation: str
    # ``wap.id`` of a staged or fast-forwarded snapshot; ``published-wap-id`` when Iceberg
    # cherry-picked a staged append onto a moved table (a new snapshot that renames the key).
    wap_id: str | None
    # Data or delete files added or removed, from the summary (absent keys are zero).
    files_changed: bool
    # Delete files added (a merge-on-read write), which changelog scans cannot read.
    adds_delete_files: bool = False
    # Rows it added, from the summary (None when it does not say).
    added_records: int | None = None
    # The table's rows at this snapshot, from the summary; None when it does not say or
    # the table has delete files (whose removed rows the summary still counts).
    total_records: int | None = None
    # The table's data files at this snapshot, from the summary (None when it does not say).
    data_files: int | None = None
    # The ``main`` branch's snapshot when the snapshots were read (``with_main``).
    main_id: int | None = None

    @property
    def changes_data(self) -> bool:
        return self.operation.lower() not in _NO_DATA_OPERATIONS and self.files_changed


def _added() -> exp.Expr:
    """A changelog row that adds a row (see ``_ADDED_CHANGE_TYPES``)."""
    return exp.column("_change_type").isin(
        *(exp.Literal.string(change_type) for change_type in _ADDED_CHANGE_TYPES)
    )


# How Iceberg names a commit that lost to a concurrent one (a failed optimistic commit,
# or a validation of what the commit read failing against what landed since: new
# conflicting files, or a file a copy-on-write MERGE rewrites already removed by another
# refresh or a compaction). Nothing is committed in either case.
_LOST_RACE_MARKERS = (
    "org.apache.iceberg.exceptions.CommitFailedException",
    "CommitFailedException",
    "org.apache.iceberg.exceptions.ValidationException: Found conflicting",
    "Cannot commit, found new",
    "org.apache.iceberg.exceptions.ValidationException: Missing required files to delete",
)

# How Iceberg on Spark names a read of a file (or snapshot) expiry removed.
_FILES_GONE_MARKERS = (
    "org.apache.iceberg.exceptions.NotFoundException",
    "FileNotFoundException",
    "FAILED_READ_FILE.FILE_NOT_EXIST",
    "Cannot find snapshot",
)


class IcebergFormat:
    name = "iceberg"
    # The publish is a fast-forward: Iceberg refuses it if the table moved.
    supports_conditional_commit = True
    # Changes from changelog views; commits by staged INSERT or MERGE.
    supports_incremental = True
    # Snapshot summaries count the rows of whole files rewritten, not the rows changed.
    reports_row_counts = False
    reads_histories_at_once = True
    schema_changes_are_versions = False
    versions_count_up = False
    change_tracking_properties = COPY_ON_WRITE
    # Copy-on-write, not merge-on-read: Iceberg's changelog view refuses merge-on-read
    # tables (``create_table`` insists on it whatever the CREATE says).
    dynamic_table_defaults = COPY_ON_WRITE
    # Without identifier columns a changelog shows an update as a DELETE and an INSERT.
    pairs_updates = False
    # A source is a table of the Iceberg catalog, never a Delta table named by its path.
    reads_delta_paths = False
    writes_counted_changes = False  # a change is written with a MERGE

    def __init__(self) -> None:
        # The changelog views this adapter made, oldest first (see ``_changelog_view``).
        self._change_views: OrderedDict[str, None] = OrderedDict()
        # The snapshots read of each table (by key). A snapshot never changes once
        # committed, so a changelog's range is walked here without reading them again.
        self._seen: dict[str, dict[int, _Snapshot]] = {}
        # Per table (by key), whether its properties, as last read, enable WAP: a refresh
        # reads them first (its definition), so its commit need not read them again.
        self._wap_enabled: dict[str, bool] = {}

    def current_version(self, session: Any, table: exp.Table) -> int | None:
        """The ``main`` branch's snapshot (the ``refs`` table); None before any snapshot.

        ``refs`` is exact where the ``history`` log is not: a replaced table keeps the old
        log entries, and staged WAP snapshots are in ``snapshots`` but never current.
        """
        self.forget_cached(session, table)
        query = (
            exp.select("snapshot_id")
            .from_(_metadata_table(table, "refs"))
            .where(exp.column("name").eq(exp.Literal.string("main")))
        )
        rows = session.sql(to_spark_sql(query)).collect()
        return int(rows[0]["snapshot_id"]) if rows else None

    def forget_cached(self, session: Any, table: exp.Table) -> None:
        """Drop the session catalog's cached copy of the table. Iceberg's SparkCatalog caches
        tables per session (``cache-enabled``, on by default), so a commit made through
        another session (the refresh's own, or another process) is otherwise invisible
        here until the cache entry expires."""
        session.catalog.refreshTable(to_spark_sql(_plain(table)))

    def data_file_count(self, session: Any, table: exp.Table) -> int:
        self.forget_cached(session, table)
        query = exp.select(exp.func("count", exp.Star())).from_(_metadata_table(table, "files"))
        return int(session.sql(to_spark_sql(query)).collect()[0][0])

    def removed_row_share(self, session: Any, table: exp.Table) -> float | None:
        """None: dynamic tables on Iceberg are copy-on-write (no delete files to purge)."""
        return None

    def compact(self, session: Any, table: exp.Table) -> None:
        """Iceberg's ``rewrite_data_files`` (bin-packing), of any two or more small files
        (its default waits for five); its snapshot is a ``replace``, which changes no rows.
        Publish branches a crashed refresh left behind go first (they keep old files)."""
        self._drop_leftover_publish_branches(session, table)
        session.sql(
            f"CALL {_procedure(table, 'rewrite_data_files')}(table => {_table_argument(table)},"
            " options => map('min-input-files', '2'))"
        ).collect()

    def _drop_leftover_publish_branches(self, session: Any, table: exp.Table) -> None:
        """Drop the publish branch (``_publish``), and the ``dyntables_publish_<id>``
        branches earlier versions made per snapshot, where it holds a snapshot ``main``
        already holds, or one older than ``PUBLISH_BRANCH_ABANDONED_AFTER`` (a refresh
        that stopped before its fast-forward); a refresh still publishing holds neither."""
        query = (
            exp.select("name", "snapshot_id")
            .from_(_metadata_table(table, "refs"))
            .where(exp.column("name").like(exp.Literal.string(f"{PUBLISH_BRANCH}%")))
        )
        branches = session.sql(to_spark_sql(query)).collect()
        if not branches:
            return
        self.forget_cached(session, table)
        snapshots = self._read_snapshots(session, table, with_main=True)
        published = {commit.version for commit in _ancestry(snapshots, None)}
        committed_at = {snapshot.snapshot_id: snapshot.committed_at for snapshot in snapshots}
        oldest_kept = datetime.now(timezone.utc) - PUBLISH_BRANCH_ABANDONED_AFTER
        target = to_spark_sql(_plain(table))
        for row in branches:
            snapshot_id = int(row["snapshot_id"])
            if (
                snapshot_id in published
                or committed_at.get(snapshot_id, oldest_kept) <= oldest_kept
            ):
                branch = to_spark_sql(exp.to_identifier(str(row["name"])))
                session.sql(f"ALTER TABLE {target} DROP BRANCH IF EXISTS {branch}").collect()

    def history(self, session: Any, table: exp.Table, limit: int | None = None) -> list[Commit]:
        """The current snapshot's ancestry, newest first.

        Walking ``parent_id`` from the current snapshot leaves out what is in ``snapshots``
        but not in the table's history: staged WAP snapshots never published (a refresh that
        lost a race) and the snapshots of a table before it was replaced. Among ancestors
        this is the ``committed_at`` order.
        """
        self.forget_cached(session, table)
        return _ancestry(self._read_snapshots(session, table, with_main=True), limit)

    def histories(
        self, session: Any, tables: list[exp.Table], limit: int | None = None
    ) -> dict[str, list[Commit]]:
        """``history`` of each table, from one statement: the snapshot queries of all the
        tables under UNION ALL, each row marked with its table."""
        if not tables:
            return {}
        keyed = []
        for table in tables:
            self.forget_cached(session, table)
            query = _snapshots_query(table, with_main=True)
            keyed.append(query.select(exp.alias_(exp.Literal.string(table_key(table)), _TABLE)))
        union: exp.Query = keyed[0]
        for query in keyed[1:]:
            union = exp.union(union, query, distinct=False)
        listed: dict[str, list[_Snapshot]] = {table_key(table): [] for table in tables}
        for row in session.sql(to_spark_sql(union)).collect():
            listed[row[_TABLE]].append(_snapshot_of(row, with_main=True))
        for key, snapshots in listed.items():
            self._keep_seen(key, snapshots)
        return {key: _ancestry(snapshots, limit) for key, snapshots in listed.items()}

    def _read_snapshots(
        self, session: Any, table: exp.Table, *, with_main: bool = False
    ) -> list[_Snapshot]:
        """``_snapshots``, kept as seen (``_seen``)."""
        snapshots = _snapshots(session, table, with_main=with_main)
        self._keep_seen(table_key(table), snapshots)
        return snapshots

    def _keep_seen(self, key: str, snapshots: list[_Snapshot]) -> None:
        """Every snapshot read of a table: the whole list replaces what was kept (a table
        dropped and created again starts a new one; expired snapshots go)."""
        self._seen[key] = {snapshot.snapshot_id: snapshot for snapshot in snapshots}

    def pinned(self, table: exp.Table, version: int) -> exp.Table:
        pinned = table.copy()
        pinned.set(
            "version",
            exp.Version(this="VERSION", kind="AS OF", expression=exp.Literal.number(version)),
        )
        return pinned

    def enable_change_tracking(
        self, session: Any, table: exp.Table, properties: dict[str, str] | None = None
    ) -> str | None:
        """Make the table copy-on-write: Iceberg's changelog is always there, but
        ``create_changelog_view`` fails on merge-on-read tables."""
        return ensure_properties(
            self, session, table, COPY_ON_WRITE, "set the copy-on-write write modes", properties
        )

    def create_table(
        self, table: exp.Table, columns: list[tuple[str, str]], properties: dict[str, str]
    ) -> exp.Create:
        """WAP and copy-on-write win over ``properties``: refreshes and changelogs need them
        (so a commit to a table created by this tree need not check WAP first)."""
        wanted = {**properties, **WAP_ENABLED, **COPY_ON_WRITE}
        self._wap_enabled[table_key(table)] = True
        return create_table(table, columns, "ICEBERG", wanted)

    def create_table_sql(
        self, table: exp.Table, columns: list[tuple[str, str]], properties: dict[str, str]
    ) -> str:
        return to_spark_sql(self.create_table(table, columns, properties))

    def overwrite(
        self,
        session: Any,
        table: exp.Table,
        query: exp.Query,
        watermark: str,
        expected_version: int | None,
        replace_schema: bool = False,
    ) -> Commit | None:
        """Stage ``INSERT OVERWRITE`` under WAP id ``watermark``, then publish it if the table
        is still at ``expected_version`` (None: whatever version the staging saw); the
        published commit (None for a replaced schema: read it from the history).

        ``spark.wap.id`` is set on the whole session for the statement: other writes to
        WAP-enabled tables on this session meanwhile would be staged too, so refreshes
        serialize their commits per session (as on Delta).
        """
        if replace_schema:
            self._replace(session, table, query, watermark, expected_version)
            return None
        insert = exp.Insert(this=table.copy(), expression=query.copy(), overwrite=True)
        return self._commit(
            session,
            table,
            insert,
            watermark,
            expected_version,
            {PARTITION_OVERWRITE_CONF: "static"},
        )

    def changes(
        self, session: Any, table: exp.Table, columns: list[str], old: int, new: int, sign: str
    ) -> exp.Query:
        """The rows of the snapshots after ``old`` up to ``new`` on the ``main`` branch, from
        a changelog view: INSERT and UPDATE_AFTER rows are added (+1), DELETE and
        UPDATE_BEFORE rows removed (-1).

        On a copy-on-write table each snapshot's changelog is every row of the data files it
        removed (DELETE) and added (INSERT), so their signed sum is exactly the difference,
        duplicates included; the view drops a snapshot's carry-over pairs (a row removed and
        added again with its rewritten file), which leaves that sum unchanged. Compactions
        (``replace``) are skipped. Raises ``CannotRefreshIncrementallyError`` (the refresh
        recomputes) when ``old`` is not an ancestor of ``new`` (the table was replaced or
        rolled back) or a snapshot in the range wrote delete files (merge-on-read), which
        changelog scans cannot read.
        """
        view, _ = self._changelog(session, table, old, new)
        return signed_change_rows(exp.to_table(view, dialect="spark"), columns, _added(), sign)

    def typed_changes(
        self,
        session: Any,
        table: exp.Table,
        columns: list[str],
        old: int,
        new: int,
        append_only: bool,
    ) -> exp.Query:
        """The changelog with INSERT and DELETE rows as they are (``IS_UPDATE`` FALSE: the
        changelog pairs an update's images only by key). ``append_only`` keeps the rows
        of ``append`` snapshots (INSERT INTO, an insert-only MERGE): an INSERT row of an
        ``overwrite`` snapshot may be the new image of an updated row."""
        view, in_range = self._changelog(session, table, old, new)
        change_type = exp.column("_change_type")
        feed = exp.to_table(view, dialect="spark")
        query = typed_change_rows(feed, columns, _added(), exp.false())
        if append_only:
            appends = [
                exp.Literal.number(snapshot.snapshot_id)
                for snapshot in in_range
                if snapshot.operation.lower() == "append"
            ]
            kept = exp.column("_commit_snapshot_id").isin(*appends) if appends else exp.false()
            query = query.where(exp.and_(change_type.copy().eq(exp.Literal.string("INSERT")), kept))
        return query

    def _changelog(
        self, session: Any, table: exp.Table, old: int, new: int
    ) -> tuple[str, list[_Snapshot]]:
        """A changelog view of the snapshots after ``old`` up to ``new``, and those
        snapshots (newest first); raises ``CannotRefreshIncrementallyError`` as ``changes``
        says."""
        self.forget_cached(session, table)  # ``new`` may be newer than the cached table
        in_range = _range(self._seen.get(table_key(table), {}), old, new)
        if in_range is None:  # not all seen yet: read them
            snapshots = self._read_snapshots(session, table)
            in_range = _range({s.snapshot_id: s for s in snapshots}, old, new)
        if in_range is None:
            raise CannotRefreshIncrementallyError(
                f"snapshot {old} of {table_key(table)} is not an ancestor of its snapshot"
                f" {new} (the table was replaced or rolled back, or the snapshot expired)"
            )
        if any(snapshot.adds_delete_files for snapshot in in_range):
            raise CannotRefreshIncrementallyError(
                f"{table_key(table)} has merge-on-read changes (delete files), which Iceberg"
                " changelogs cannot read; make it copy-on-write"
            )
        return self._changelog_view(session, table, old, new), in_range

    def _changelog_view(self, session: Any, table: exp.Table, old: int, new: int) -> str:
        """A temporary view of ``table``'s changelog after ``old`` up to ``new`` (made by
        ``create_changelog_view`` on ``session``), named after the table and the range.

        Snapshots do not change, so a view of the same range is reused (a self-join, or two
        dynamic tables over one source refreshed at the same tick). The change queries built
        on a view run after ``changes`` returns, so a view cannot be dropped there; instead
        the adapter keeps the newest ``KEPT_CHANGE_VIEWS`` and drops older ones, far more
        than one refresh (one view per changed source) needs.
        """
        digest = hashlib.sha256(f"{table_key(table)}/{old}/{new}".encode()).hexdigest()[:24]
        name = CHANGES_VIEW_PREFIX + digest
        if name in self._change_views and session.catalog.tableExists(name):
            self._change_views.move_to_end(name)
            return name
        options = exp.Anonymous(
            this="map",
            expressions=[
                exp.Literal.string("start-snapshot-id"),
                exp.Literal.string(str(int(old))),
                exp.Literal.string("end-snapshot-id"),
                exp.Literal.string(str(int(new))),
            ],
        )
        call = (
            f"CALL {_procedure(table, 'create_changelog_view')}("
            f"table => {_table_argument(table)}, options => {to_spark_sql(options)},"
            f" changelog_view => {to_spark_sql(exp.Literal.string(name))})"
        )
        session.sql(call).collect()
        self._change_views[name] = None
        self._change_views.move_to_end(name)
        while len(self._change_views) > KEPT_CHANGE_VIEWS:
            oldest, _ = self._change_views.popitem(last=False)
            session.catalog.dropTempView(oldest)
        return name

    def append(
        self,
        session: Any,
        table: exp.Table,
        rows: exp.Query,
        watermark: str,
        expected_version: int | None,
    ) -> Commit:
        """Stage ``INSERT INTO`` under WAP id ``watermark``; publish it as ``overwrite`` does."""
        insert = exp.Insert(this=table.copy(), expression=rows.copy())
        return self._commit(session, table, insert, watermark, expected_version)

    def merge(
        self,
        session: Any,
        table: exp.Table,
        statement: exp.Merge,
        watermark: str,
        expected_version: int | None,
    ) -> Commit:
        """Stage the MERGE and publish it as ``overwrite`` does."""
        return self._commit(session, table, statement, watermark, expected_version)

    def apply_counted(
        self,
        session: Any,
        table: exp.Table,
        view: str,
        count_column: str,
        watermark: str,
        expected_version: int | None,
    ) -> CountedWrite | None:
        """None: Spark writes a change with a MERGE."""
        return None

    def replace_where(
        self,
        session: Any,
        table: exp.Table,
        predicate: exp.Expr,
        rows: exp.Query,
        watermark: str,
        expected_version: int | None,
    ) -> Commit:
        """Stage one ``MERGE`` that deletes the rows matching ``predicate`` and inserts
        ``rows``; publish it as ``overwrite`` does (see ``_replace_where_merge``)."""
        columns = list(session.table(to_spark_sql(_plain(table))).columns)
        merge = _replace_where_merge(table, columns, predicate, rows)
        return self._commit(session, table, merge, watermark, expected_version)

    def _commit(
        self,
        session: Any,
        table: exp.Table,
        statement: exp.Expr,
        watermark: str,
        expected_version: int | None,
        settings: dict[str, str | None] | None = None,
    ) -> Commit:
        """Stage ``statement`` (a write to ``table``) under WAP id ``watermark``, then publish
        it if the table is still at ``expected_version`` (None: whatever version the
        staging saw); the published commit.

        ``spark.wap.id`` is set on the whole session for the statement: other writes to
        WAP-enabled tables on this session meanwhile would be staged too, so refreshes
        serialize their commits per session (as on Delta).
        """
        unknown = not self._wap_enabled.get(table_key(table))
        wap = "write.wap.enabled"
        if unknown and self.properties(session, table).get(wap, "").lower() != "true":
            self.set_properties(session, table, WAP_ENABLED)  # else it would commit unchecked
        with session_settings(session, {**(settings or {}), WAP_ID_CONF: watermark}):
            session.sql(to_spark_sql(statement)).collect()
        self.forget_cached(session, table)
        staged = _staged_snapshot(self._read_snapshots(session, table, with_main=True), watermark)
        if staged is None:
            raise DynamicTableError(
                f"the refresh of {to_spark_sql(table)} left no staged snapshot with its"
                " watermark (is write.wap.enabled=true on the table?)"
            )
        if expected_version is not None and staged.parent_id != expected_version:
            raise ConcurrentRefreshError(
                f"{to_spark_sql(table)} changed while it was being refreshed (expected snapshot"
                f" {expected_version}, found {staged.parent_id}); the refresh was not published"
            )
        self._publish(session, table, staged)
        return _commit_of(staged)

    def _publish(self, session: Any, table: exp.Table, staged: _Snapshot) -> None:
        """Fast-forward ``main`` to ``staged``, through the table's publish branch moved to it
        (two statements).

        ``fast_forward`` refuses, inside the commit, unless ``main`` is an ancestor of the
        staged snapshot; with the parent checked before (``_commit``), ``main`` is where the
        refresh read it. A fast-forward keeps the staged snapshot itself, so its summary
        keeps ``wap.id``. No one statement publishes a staged snapshot conditionally:
        ``cherrypick_snapshot`` applies a staged *append* onto a table that moved (a new
        snapshot, not a fast-forward, duplicating a concurrent refresh's rows),
        ``set_current_snapshot``/``rollback_to_snapshot`` publish whatever the table holds
        (losing a concurrent commit), and ``fast_forward`` takes branches only. Two
        refreshes of one table publishing at once share the branch: whichever moves it
        last may have its snapshot published by the other's fast-forward — a complete
        refresh either way, and the one whose snapshot is not current after its
        fast-forward reports a lost race.
        """
        target = to_spark_sql(_plain(table))
        branch = to_spark_sql(exp.to_identifier(PUBLISH_BRANCH))
        call = (
            f"CALL {_procedure(table, 'fast_forward')}(table => {_table_argument(table)},"
            f" branch => 'main', to => {to_spark_sql(exp.Literal.string(PUBLISH_BRANCH))})"
        )
        try:
            session.sql(
                f"ALTER TABLE {target} CREATE OR REPLACE BRANCH {branch}"
                f" AS OF VERSION {int(staged.snapshot_id)}"
            ).collect()
            rows = session.sql(call).collect()
        except Exception as failure:
            raise ConcurrentRefreshError(
                f"{to_spark_sql(table)} changed while it was being refreshed; the refresh"
                f" (snapshot {staged.snapshot_id}) was not published: {failure}"
            ) from failure
        published = int(rows[0]["updated_ref"]) if rows else None
        if published != staged.snapshot_id:
            raise ConcurrentRefreshError(
                f"{to_spark_sql(table)} was refreshed by another process at the same moment:"
                f" its snapshot {published} was published, not this refresh's"
                f" {staged.snapshot_id}"
            )

    def _replace(
        self,
        session: Any,
        table: exp.Table,
        query: exp.Query,
        watermark: str,
        expected_version: int | None,
    ) -> None:
        """Replace table and schema atomically, watermark in the new snapshot's summary.

        SQL ``CREATE OR REPLACE TABLE … AS`` cannot carry the watermark: under WAP it stages
        the snapshot of the *new* table, leaving the replaced table empty until a publish
        (not atomic), and SQL ignores snapshot properties. The DataFrameWriterV2
        ``createOrReplace`` is the same atomic replace and takes
        ``snapshot-property.wap.id``. The ``expected_version`` check here is a read before
        the replace, not part of the commit: Iceberg has no conditional replace.
        """
        if expected_version is not None:
            current = self.current_version(session, table)
            if current != expected_version:
                raise ConcurrentRefreshError(
                    f"{to_spark_sql(table)} changed while it was being refreshed (expected"
                    f" snapshot {expected_version}, found {current}); it was not replaced"
                )
        kept = {
            key: value
            for key, value in self.properties(session, table).items()
            if key not in _NOT_SETTABLE
        }
        target = to_spark_sql(_plain(table))
        writer = session.sql(to_spark_sql(query)).writeTo(target).using("iceberg")
        for key, value in {**kept, **WAP_ENABLED, **COPY_ON_WRITE}.items():
            writer = writer.tableProperty(key, value)
        writer = writer.option("snapshot-property.wap.id", watermark)
        # With spark.wap.id set, the new table's snapshot would be staged, not current.
        with session_settings(session, {WAP_ID_CONF: None}):
            writer.createOrReplace()

    def watermark(self, commit: Commit) -> str | None:
        return commit.user_metadata

    def recommit_watermark(
        self, session: Any, table: exp.Table, watermark: str, expected_version: int | None
    ) -> Commit:
        """Commit an empty append whose summary carries ``watermark`` as ``wap.id``,
        published only if the table is still at ``expected_version``.

        Property commits make no snapshot in Iceberg, so they cannot carry it. The empty
        append is staged under the watermark and published like a refresh (``_commit``:
        a fast-forward, which Iceberg refuses inside its commit unless ``main`` is still
        where the refresh read it); a fast-forward does not check WAP ids, so carrying a
        published watermark forward again is allowed. It adds no files, so ``history``
        reports it as no new data. (While the refresh's own snapshot is current,
        ``expire_snapshots`` cannot drop it; this matters only after other commits, e.g.
        compaction.)
        """
        target = _plain(table)
        empty = exp.select(exp.Star()).from_(target.copy()).where(exp.false())
        insert = exp.Insert(this=target, expression=empty)
        return self._commit(session, table, insert, watermark, expected_version)

    def lost_race(self, failure: BaseException) -> bool:
        return names_one_of(failure, _LOST_RACE_MARKERS)

    def files_gone(self, failure: BaseException) -> bool:
        return names_one_of(failure, _FILES_GONE_MARKERS)

    def change_data_missing(self, failure: BaseException) -> bool:
        return False  # a changelog is kept for every snapshot (expiry is ``files_gone``)

    def set_properties(self, session: Any, table: exp.Table, properties: dict[str, str]) -> None:
        """One metadata commit; Iceberg makes no snapshot for it (the version stays)."""
        self._wap_enabled.pop(table_key(table), None)  # known again when next read
        alter = exp.Alter(
            this=_plain(table),
            kind="TABLE",
            actions=[
                exp.AlterSet(expressions=[exp.Properties(expressions=property_list(properties))])
            ],
        )
        session.sql(to_spark_sql(alter)).collect()

    def unset_properties(self, session: Any, table: exp.Table, keys: list[str]) -> None:
        if not keys:
            return
        self._wap_enabled.pop(table_key(table), None)
        quoted = ", ".join(to_spark_sql(exp.Literal.string(key)) for key in keys)
        # sqlglot has no node for UNSET TBLPROPERTIES; the keys are rendered as literals.
        session.sql(
            f"ALTER TABLE {to_spark_sql(_plain(table))} UNSET TBLPROPERTIES IF EXISTS ({quoted})"
        ).collect()

    def schema(self, session: Any, table: exp.Table) -> Any:
        return schema_from_catalog(session, table)

    def row_count(self, session: Any, table: exp.Table, version: int | None = None) -> int | None:
        """None: a snapshot's record count includes rows its delete files remove."""
        return None

    def properties(self, session: Any, table: exp.Table) -> dict[str, str]:
        rows = session.sql(f"SHOW TBLPROPERTIES {to_spark_sql(_plain(table))}").collect()
        properties = {str(row["key"]): str(row["value"]) for row in rows}
        enabled = properties.get("write.wap.enabled", "").lower() == "true"
        self._wap_enabled[table_key(table)] = enabled
        return properties

    def keys(self, session: Any, table: exp.Table) -> list[list[str]]:
        """The table's identifier fields, as one key (none when it has none).

        Iceberg's ``SparkTable`` reports them among the properties, as
        ``identifier-fields`` = ``[a,b]`` (``SHOW TBLPROPERTIES``); they are set with
        ``ALTER TABLE t SET IDENTIFIER FIELDS a, b``, on required (NOT NULL) columns only.
        """
        self.forget_cached(session, table)
        key = identifier_fields(self.properties(session, table).get(IDENTIFIER_FIELDS))
        return [key] if key else []


def identifier_fields(text: str | None) -> list[str]:
    """The column names of an ``identifier-fields`` property (``[a,b]``; nested fields are
    dotted paths).

    >>> identifier_fields("[order_id,order_day]"), identifier_fields(None)
    (['order_id', 'order_day'], [])
    """
    inner = (text or "").strip().removeprefix("[").removesuffix("]")
    return [name.strip() for name in inner.split(",") if name.strip()]


def _plain(table: exp.Table) -> exp.Table:
    """``table`` without alias or time travel: the name that statements and metadata take."""
    return exp.Table(
        this=table.this.copy() if table.this else None,
        db=table.args["db"].copy() if table.args.get("db") else None,
        catalog=table.args["catalog"].copy() if table.args.get("catalog") else None,
    )


def _metadata_table(table: exp.Table, name: str) -> exp.Table:
    """Iceberg's metadata table ``<table>.<name>`` (``snapshots``, ``refs``, ...)."""
    parts: list[exp.Expr] = [part.copy() for part in _plain(table).parts]
    parts.append(exp.to_identifier(name))
    if len(parts) <= 3:
        return exp.Table(
            this=parts[-1],
            db=parts[-2],
            catalog=parts[-3] if len(parts) == 3 else None,
        )
    return exp.Table(this=exp.Dot.build(parts[2:]), db=parts[1], catalog=parts[0])


def _procedure(table: exp.Table, name: str) -> str:
    """``<catalog>.system.<name>``, in the table's catalog (else the current one)."""
    catalog = table.args.get("catalog")
    prefix = f"{to_spark_sql(catalog)}." if catalog is not None else ""
    return f"{prefix}system.{name}"


def _table_argument(table: exp.Table) -> str:
    """The table's full name as a procedure's string argument (identifiers stay quoted)."""
    return to_spark_sql(exp.Literal.string(to_spark_sql(_plain(table))))


def _replace_where_merge(
    table: exp.Table, columns: list[str], predicate: exp.Expr, rows: exp.Query
) -> exp.Merge:
    """One MERGE that deletes the rows matching ``predicate`` and inserts ``rows``::

        MERGE INTO t USING (
            SELECT r.*, FALSE AS __dt_remove FROM (rows) AS r(__dt_c0, …)
            UNION ALL SELECT NULL, …, TRUE AS __dt_remove
        ) AS __dt_source ON __dt_source.__dt_remove AND (predicate)
        WHEN MATCHED THEN DELETE
        WHEN NOT MATCHED AND NOT __dt_source.__dt_remove THEN INSERT (c, …) VALUES (…)

    The one marker row matches every target row the predicate holds for (once each); the
    other source rows are inserted by position. ``WHEN NOT MATCHED BY SOURCE AND predicate
    THEN DELETE`` (Spark 3.5 accepts it) would do the same, but on a copy-on-write table it
    rewrites every data file; a matched delete lets Spark read and rewrite only the files
    that hold matching rows (the predicate is pushed to the scan, and runtime filtering
    finds the files). Source columns are renamed so that the predicate's unqualified
    columns name the target's. Built by ``sql.merges.delete_then_insert_merge``.
    """
    source_names = [exp.to_identifier(f"__dt_c{position}") for position in range(len(columns))]
    inserted = exp.select(exp.Star()).from_(
        exp.Subquery(
            this=rows.copy(),
            alias=exp.TableAlias(this=exp.to_identifier("r"), columns=source_names),
        )
    )
    return delete_then_insert_merge(
        _plain(table),
        inserted,
        exp.select(*[exp.null() for _ in columns]),  # the one marker row
        alias="__dt_source",
        match=exp.paren(predicate.copy()),
        columns=columns,
        source_columns=source_names,
    )


def _ancestry(listed: list[_Snapshot], limit: int | None) -> list[Commit]:
    """The ``main`` branch's snapshot and its ancestors among ``listed`` (read with their
    ``main``), newest first, as commits (at most ``limit``)."""
    current = listed[0].main_id if listed else None
    snapshots = {snapshot.snapshot_id: snapshot for snapshot in listed}
    commits: list[Commit] = []
    snapshot_id: int | None = current
    while snapshot_id is not None and snapshot_id in snapshots:
        if limit is not None and len(commits) >= limit:
            break
        snapshot = snapshots[snapshot_id]
        commits.append(_commit_of(snapshot))
        snapshot_id = snapshot.parent_id
    return commits


def _commit_of(snapshot: _Snapshot) -> Commit:
    """A snapshot as a commit of the table's history."""
    appended = snapshot.operation.lower() == "append"
    return Commit(
        version=snapshot.snapshot_id,
        operation=snapshot.operation,
        changes_data=snapshot.changes_data,
        user_metadata=snapshot.wap_id,
        timestamp=snapshot.committed_at,
        # An append only adds data files: its rows are all inserts. Other operations'
        # summaries count the rows of whole files rewritten.
        rows_inserted=snapshot.added_records if appended else None,
        rows_deleted=0 if appended else None,
        total_rows=snapshot.total_records,
        data_files=snapshot.data_files,
    )


def _snapshots(session: Any, table: exp.Table, *, with_main: bool = False) -> list[_Snapshot]:
    """Every snapshot of the table, with what its summary says; ``with_main`` also reads
    the ``main`` branch's snapshot (``refs``), in the same statement."""
    query = _snapshots_query(table, with_main=with_main)
    rows = session.sql(to_spark_sql(query)).collect()
    return [_snapshot_of(row, with_main) for row in rows]


def _snapshots_query(table: exp.Table, *, with_main: bool) -> exp.Select:
    """The query ``_snapshots`` runs."""
    summary = exp.column("summary")

    def summary_number(key: str) -> exp.Expr:
        value = exp.Bracket(this=summary.copy(), expressions=[exp.Literal.string(key)])
        return exp.cast(value, "BIGINT")

    total = exp.If(
        this=exp.func("coalesce", summary_number("total-delete-files"), exp.Literal.number(0)).eq(
            exp.Literal.number(0)
        ),
        true=summary_number("total-records"),
        false=exp.null(),
    )
    main = (
        exp.select("snapshot_id")
        .from_(_metadata_table(table, "refs"))
        .where(exp.column("name").eq(exp.Literal.string("main")))
    )
    extra = [
        exp.alias_(total, "total_records"),
        exp.alias_(summary_number("total-data-files"), "data_files"),
    ]
    if with_main:
        extra.append(exp.alias_(main.subquery(), "main_id"))
    return exp.select(
        "snapshot_id",
        "parent_id",
        "committed_at",
        "operation",
        exp.alias_(
            exp.func(
                "coalesce",
                exp.Bracket(this=summary.copy(), expressions=[exp.Literal.string("wap.id")]),
                exp.Bracket(
                    this=summary.copy(), expressions=[exp.Literal.string("published-wap-id")]
                ),
            ),
            "wap_id",
        ),
        exp.alias_(
            exp.or_(
                *(
                    exp.func(
                        "coalesce",
                        exp.cast(
                            exp.Bracket(this=summary.copy(), expressions=[exp.Literal.string(key)]),
                            "BIGINT",
                        ),
                        exp.Literal.number(0),
                    ).neq(exp.Literal.number(0))
                    for key in _FILE_COUNTS
                )
            ),
            "files_changed",
        ),
        exp.alias_(
            exp.func(
                "coalesce",
                exp.cast(
                    exp.Bracket(
                        this=summary.copy(), expressions=[exp.Literal.string("added-delete-files")]
                    ),
                    "BIGINT",
                ),
                exp.Literal.number(0),
            ).neq(exp.Literal.number(0)),
            "adds_delete_files",
        ),
        exp.alias_(
            exp.cast(
                exp.Bracket(this=summary.copy(), expressions=[exp.Literal.string("added-records")]),
                "BIGINT",
            ),
            "added_records",
        ),
        *extra,
    ).from_(_metadata_table(table, "snapshots"))


def _snapshot_of(row: Any, with_main: bool) -> _Snapshot:
    """A row of ``_snapshots_query`` as a snapshot."""
    return _Snapshot(
        snapshot_id=int(row["snapshot_id"]),
        parent_id=None if row["parent_id"] is None else int(row["parent_id"]),
        committed_at=_aware_utc(row["committed_at"]),
        operation=str(row["operation"]),
        wap_id=row["wap_id"],
        files_changed=bool(row["files_changed"]),
        adds_delete_files=bool(row["adds_delete_files"]),
        added_records=None if row["added_records"] is None else int(row["added_records"]),
        total_records=None if row["total_records"] is None else int(row["total_records"]),
        data_files=None if row["data_files"] is None else int(row["data_files"]),
        main_id=int(row["main_id"]) if with_main and row["main_id"] is not None else None,
    )


def _aware_utc(moment: datetime) -> datetime:
    """A collected TIMESTAMP as an aware UTC time. PySpark hands TIMESTAMP values back
    naive, in the Python process's local time zone (not the session's), which
    ``astimezone`` takes a naive value to be in."""
    return moment.astimezone(timezone.utc)


def _staged_snapshot(snapshots: list[_Snapshot], watermark: str) -> _Snapshot | None:
    """The newest of ``snapshots`` (read ``with_main``) staged under WAP id ``watermark``
    and not in ``main``'s history; None if there is none.

    A refresh that lost a race leaves its staged snapshot behind (``expire_snapshots``
    removes it), so an older one with the same id can exist: the newest is ours.
    """
    by_id = {snapshot.snapshot_id: snapshot for snapshot in snapshots}
    ancestors: set[int] = set()
    snapshot_id = snapshots[0].main_id if snapshots else None
    while snapshot_id is not None and snapshot_id in by_id and snapshot_id not in ancestors:
        ancestors.add(snapshot_id)
        snapshot_id = by_id[snapshot_id].parent_id
    staged = [
        snapshot
        for snapshot in snapshots
        if snapshot.wap_id == watermark and snapshot.snapshot_id not in ancestors
    ]
    return max(staged, key=lambda snapshot: snapshot.committed_at) if staged else None


def _range(snapshots: dict[int, _Snapshot], old: int, new: int) -> list[_Snapshot] | None:
    """The snapshots after ``old`` up to ``new`` (newest first), walking ``new``'s parents
    among ``snapshots``; None when that walk does not reach ``old``."""
    in_range: list[_Snapshot] = []
    snapshot_id: int | None = new
    while snapshot_id != old:
        snapshot = snapshots.get(snapshot_id) if snapshot_id is not None else None
        if snapshot is None:
            return None
        in_range.append(snapshot)
        snapshot_id = snapshot.parent_id
    return in_range
