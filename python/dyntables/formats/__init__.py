"""Table-format adapters: the only code that tells Delta from Iceberg.

A dynamic table and its sources are tables of one format. The refresh code asks the
adapter how to read a table at a pinned version, what the current version is, whether
data changed since a version, how to commit a refresh together with its watermark, and
how to read that watermark back. Everything else is format-neutral Spark SQL.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

from sqlglot import exp

from dyntables.sql.dialect import to_spark_sql

# The columns CHANGES() adds to a source's columns (seed 003).
ACTION = "METADATA$ACTION"  # 'INSERT' or 'DELETE'
IS_UPDATE = "METADATA$ISUPDATE"  # TRUE on either image of an updated row


@dataclass(frozen=True)
class Commit:
    """One version of a table, as its history lists it."""

    version: int
    operation: str
    changes_data: bool
    user_metadata: str | None
    timestamp: datetime.datetime | None = None  # when it was committed (UTC)
    # Rows it inserted and deleted, from its metrics (an updated row counts as one of
    # each, as in its change feed); None when the metrics do not say.
    rows_inserted: int | None = None
    rows_deleted: int | None = None
    # The table's rows at this version, where its metadata says (None: it does not).
    total_rows: int | None = None
    # The data files the table reads at this version, where its metadata says.
    data_files: int | None = None

    @property
    def changed_rows(self) -> int | None:
        """Rows its change feed holds, None when unknown."""
        if self.rows_inserted is None or self.rows_deleted is None:
            return None
        return self.rows_inserted + self.rows_deleted

    @property
    def inserts_only(self) -> bool:
        """Whether it is known to have only inserted rows (an append)."""
        return self.rows_deleted == 0 and self.rows_inserted is not None


@dataclass(frozen=True)
class CountedWrite:
    """What a counted change's write did (``apply_counted``): the rows it inserted and
    deleted, whether it committed (a change whose values all net out commits nothing),
    and, where the engine says, the version it committed and when (UTC)."""

    inserted: int
    deleted: int
    committed: bool
    version: int | None = None
    committed_at: datetime.datetime | None = None

    def made(self, watermark: str) -> Commit | None:
        """Its commit (carrying ``watermark``) as the history lists it, where the engine
        said which it made: the refresh then need not look for it in the history."""
        if not self.committed or self.version is None:
            return None
        return Commit(
            version=self.version,
            operation="MERGE",
            changes_data=True,
            user_metadata=watermark,
            timestamp=self.committed_at,
            rows_inserted=self.inserted,
            rows_deleted=self.deleted,
        )


class TableFormat(Protocol):
    """What the lifecycle needs from a table format, on a given engine session."""

    name: str
    # Whether a refresh commit can be made conditional on the version it read.
    supports_conditional_commit: bool
    # Whether incremental refresh (``changes``, ``append``, ``merge``) is implemented.
    supports_incremental: bool
    # Whether its commits' metrics say how many rows they inserted and deleted
    # (``Commit.rows_inserted``, ``rows_deleted``), so a refresh need not count them.
    reports_row_counts: bool
    # ``histories`` of several tables costs about what ``history`` of one does (Iceberg:
    # one statement); without it, reading ahead would only read sooner, or more.
    reads_histories_at_once: bool
    # Whether every schema change is a new version (a Delta commit; an Iceberg schema
    # change makes no snapshot), so that a schema can be kept per version.
    schema_changes_are_versions: bool
    # Whether versions count up from 0 without gaps (Delta), so that a table whose latest
    # version is below one read before was dropped and created again; Iceberg's snapshot
    # ids are random.
    versions_count_up: bool
    # What a dynamic table is created with so that others can read its changes.
    change_tracking_properties: dict[str, str]
    # What a dynamic table is created with unless its CREATE sets otherwise (Delta:
    # deletion vectors, so that a refresh's MERGE marks the rows it removes instead of
    # writing their files again).
    dynamic_table_defaults: dict[str, str]
    # Whether the change feed tells an updated row's two images from a delete and an insert
    # without a key (``typed_changes``): Delta's update_preimage/postimage do; an Iceberg
    # changelog pairs them only by key.
    pairs_updates: bool
    # Whether a source may be a Delta table named by its path (``delta.`/data/events```).
    reads_delta_paths: bool

    @property
    def writes_counted_changes(self) -> bool:
        """Whether ``apply_counted`` writes counted changes (the embedded engine): worth
        computing a change as counted rows where a MERGE would not need them."""

    def current_version(self, session: Any, table: exp.Table) -> int | None:
        """The table's latest version, or None before its first commit."""

    def forget_cached(self, session: Any, table: exp.Table) -> None:
        """Make ``session`` see commits made through other sessions."""

    def removed_row_share(self, session: Any, table: exp.Table) -> float | None:
        """The share of the rows the table's data files store that deletion vectors
        remove, where the format knows it without reading rows; else None."""

    def data_file_count(self, session: Any, table: exp.Table) -> int:
        """How many data files the table's latest version reads."""

    def compact(self, session: Any, table: exp.Table) -> None:
        """Rewrite the table's small data files into fewer, larger ones, in a commit that
        changes no rows."""

    def history(self, session: Any, table: exp.Table, limit: int | None = None) -> list[Commit]:
        """Commits, newest first."""

    def histories(
        self, session: Any, tables: list[exp.Table], limit: int | None = None
    ) -> dict[str, list[Commit]]:
        """Each table's commits, newest first, by table key (``history`` of each; at once
        where the format can)."""

    def pinned(self, table: exp.Table, version: int) -> exp.Table:
        """A reference to ``table`` as of ``version`` (a copy; aliases kept)."""

    def enable_change_tracking(
        self, session: Any, table: exp.Table, properties: dict[str, str] | None = None
    ) -> str | None:
        """Turn on the change feed; None when on, else why it cannot be. ``properties``:
        the table's, where the caller has just read them (else they are read)."""

    def create_table(
        self, table: exp.Table, columns: list[tuple[str, str]], properties: dict[str, str]
    ) -> exp.Create:
        """``CREATE TABLE`` for an empty table of these columns and properties, as a tree
        (a caller may still set ``exists`` for ``IF NOT EXISTS``)."""

    def create_table_sql(
        self, table: exp.Table, columns: list[tuple[str, str]], properties: dict[str, str]
    ) -> str:
        """``create_table`` rendered."""

    def overwrite(
        self,
        session: Any,
        table: exp.Table,
        query: exp.Query,
        watermark: str,
        expected_version: int | None,
        replace_schema: bool = False,
    ) -> Commit | None:
        """Replace the table's rows with ``query``'s in one commit carrying ``watermark``;
        the commit made, where the format knows it without reading the history (writes
        below return the same)."""

    def changes(
        self, session: Any, table: exp.Table, columns: list[str], old: int, new: int, sign: str
    ) -> exp.Query:
        """The rows that changed after version ``old`` up to ``new``: ``columns`` and ``sign``
        (+1 for a row added, -1 for a row removed; an update is both)."""

    def typed_changes(
        self,
        session: Any,
        table: exp.Table,
        columns: list[str],
        old: int,
        new: int,
        append_only: bool,
    ) -> exp.Query:
        """The rows that changed after version ``old`` up to ``new`` as ``CHANGES()`` shows
        them without a key: ``columns``, ``ACTION`` ('INSERT' or 'DELETE') and ``IS_UPDATE``
        (TRUE on both images of an updated row, where ``pairs_updates``); with
        ``append_only``, only rows inserted by something other than an update."""

    def append(
        self,
        session: Any,
        table: exp.Table,
        rows: exp.Query,
        watermark: str,
        expected_version: int | None,
    ) -> Commit | None:
        """Add ``rows`` in one commit carrying ``watermark``."""

    def merge(
        self,
        session: Any,
        table: exp.Table,
        statement: exp.Merge,
        watermark: str,
        expected_version: int | None,
    ) -> Commit | None:
        """Run ``statement`` (a MERGE INTO the table) as one commit carrying ``watermark``;
        its source may read the table as it was before."""

    def apply_counted(
        self,
        session: Any,
        table: exp.Table,
        view: str,
        count_column: str,
        watermark: str,
        expected_version: int | None,
    ) -> CountedWrite | None:
        """Where the engine writes a counted change natively (the embedded engine): apply
        the temporary view ``view`` (the table's columns, each row value once, and
        ``count_column``: the copies of it the table gains, or loses when below zero) in
        one commit carrying ``watermark``, with no statement. None where it cannot
        (nothing written): the change is then written with ``merge``."""

    def replace_where(
        self,
        session: Any,
        table: exp.Table,
        predicate: exp.Expr,
        rows: exp.Query,
        watermark: str,
        expected_version: int | None,
    ) -> Commit | None:
        """Remove the rows matching ``predicate`` and add ``rows``, in one commit carrying
        ``watermark``; ``rows`` may read the table as it was before."""

    def watermark(self, commit: Commit) -> str | None:
        """The watermark a refresh commit carries, if this commit is one."""

    def recommit_watermark(
        self, session: Any, table: exp.Table, watermark: str, expected_version: int | None
    ) -> Commit | None:
        """Carry ``watermark`` forward in a new commit that changes no data (a refresh whose
        change netted out, or a watermark kept from expiring with the format's log), made
        only if the table is still at ``expected_version``: a refresher that read older
        source versions must not put its watermark over a newer refresh's, or the next
        refresh would apply the newer change again."""

    def lost_race(self, failure: BaseException) -> bool:
        """Whether ``failure`` (an engine's error from a commit) means another commit to
        the table won: nothing was committed, and a rerun would succeed."""

    def files_gone(self, failure: BaseException) -> bool:
        """Whether ``failure`` (an engine's error from a read) means a file the table's
        log names is gone: removed by VACUUM (or snapshot expiry) once no version newer
        than its retention needed it, so older versions and their changes are unreadable."""

    def change_data_missing(self, failure: BaseException) -> bool:
        """Whether ``failure`` (an engine's error from a read of changes) means the table
        did not record the changes asked for (Delta: its change data feed was off when
        they were committed, or the table was recreated without it)."""

    def set_properties(self, session: Any, table: exp.Table, properties: dict[str, str]) -> None:
        """Set table properties (one commit)."""

    def unset_properties(self, session: Any, table: exp.Table, keys: list[str]) -> None:
        """Remove table properties (one commit); absent keys are ignored."""

    def properties(self, session: Any, table: exp.Table) -> dict[str, str]:
        """The table's properties."""

    def schema(self, session: Any, table: exp.Table) -> Any:
        """The table's schema at its latest version (a Spark ``StructType``), without reading
        its rows."""

    def row_count(self, session: Any, table: exp.Table, version: int | None = None) -> int | None:
        """The table's rows (at its latest version, or at ``version``), from its metadata;
        None when only reading them would tell."""

    def keys(self, session: Any, table: exp.Table) -> list[list[str]]:
        """Keys the format itself declares on the table (Iceberg's identifier fields), each
        a list of column names; RELY constraints are recorded apart, in the definition."""


def schema_from_catalog(session: Any, table: exp.Table) -> Any:
    """A table's schema as the session's catalog holds it (from the table's metadata: the
    Delta log, Iceberg's metadata file), with no query planned or run."""
    return session.table(to_spark_sql(table)).schema


def names_one_of(failure: BaseException, markers: tuple[str, ...]) -> bool:
    """Whether ``failure`` or an error it was raised from names one of ``markers`` (an
    engine's error classes or codes for one kind of failure)."""
    seen: BaseException | None = failure
    while seen is not None:
        text = f"{type(seen).__name__}: {seen}"
        if any(marker in text for marker in markers):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def signed_change_rows(
    feed: exp.Expr, columns: list[str], added: exp.Expr, sign: str
) -> exp.Select:
    """``columns`` of a change feed, with ``sign``: +1 on the rows where ``added`` holds
    (inserted rows, new images), -1 on the others (deleted rows, old images)."""
    signed = exp.Case(
        ifs=[exp.If(this=added, true=exp.Literal.number(1))], default=exp.Literal.number(-1)
    )
    selected = [exp.column(name, quoted=True) for name in columns]
    return exp.select(*selected, exp.alias_(signed, sign)).from_(feed)


def typed_change_rows(
    feed: exp.Expr, columns: list[str], added: exp.Expr, is_update: exp.Expr
) -> exp.Select:
    """``columns`` of a change feed as ``CHANGES()`` shows them: ``ACTION`` 'INSERT' where
    ``added`` holds, else 'DELETE', and ``IS_UPDATE``."""
    action = exp.Case(
        ifs=[exp.If(this=added, true=exp.Literal.string("INSERT"))],
        default=exp.Literal.string("DELETE"),
    )
    selected = [exp.column(name, quoted=True) for name in columns]
    return exp.select(
        *selected,
        exp.alias_(action, ACTION, quoted=True),
        exp.alias_(is_update, IS_UPDATE, quoted=True),
    ).from_(feed)


def create_table(
    table: exp.Table, columns: list[tuple[str, str]], file_format: str, properties: dict[str, str]
) -> exp.Create:
    """``CREATE TABLE t (columns) USING <file_format> TBLPROPERTIES (...)``."""
    return exp.Create(
        this=exp.Schema(
            this=table.copy(),
            expressions=[
                exp.ColumnDef(
                    this=exp.to_identifier(name, quoted=True),
                    kind=exp.DataType.build(type_sql, dialect="spark"),
                )
                for name, type_sql in columns
            ],
        ),
        kind="TABLE",
        properties=exp.Properties(
            expressions=[
                exp.FileFormatProperty(this=exp.var(file_format)),
                *property_list(properties),
            ]
        ),
    )


def create_table_sql(
    table: exp.Table, columns: list[tuple[str, str]], file_format: str, properties: dict[str, str]
) -> str:
    """``create_table`` rendered."""
    return to_spark_sql(create_table(table, columns, file_format, properties))


def ensure_properties(
    table_format: TableFormat,
    session: Any,
    table: exp.Table,
    wanted: dict[str, str],
    what: str,
    properties: dict[str, str] | None = None,
) -> str | None:
    """Set ``wanted`` on the table unless it already has them (``properties``: the table's,
    just read; else they are read); None when they are set, else why they could not be
    (``what`` names the goal in that message)."""
    if properties is None:
        properties = table_format.properties(session, table)
    if all(properties.get(key, "").lower() == value.lower() for key, value in wanted.items()):
        return None
    try:
        table_format.set_properties(session, table, wanted)
    except Exception as failure:  # the engine's own error: recorded as the reason
        return f"could not {what} on {to_spark_sql(table)}: {failure}"
    return None


def property_list(properties: dict[str, str]) -> list[exp.Expr]:
    """``'key'='value'`` pairs for TBLPROPERTIES and SET TBLPROPERTIES."""
    return [
        exp.Property(this=exp.Literal.string(key), value=exp.Literal.string(value))
        for key, value in properties.items()
    ]


@contextmanager
def session_settings(session: Any, settings: dict[str, str | None]) -> Iterator[None]:
    """Set (or, for None, unset) session confs for one statement; restore them after.

    The refresh's own session carries these (commit metadata, WAP ids), never the user's.
    """
    previous = {key: session.conf.get(key, None) for key in settings}
    try:
        for key, value in settings.items():
            if value is None:
                session.conf.unset(key)
            else:
                session.conf.set(key, value)
        yield
    finally:
        for key, value in previous.items():
            if value is None:
                session.conf.unset(key)
            else:
                session.conf.set(key, value)


__all__ = [
    "ACTION",
    "IS_UPDATE",
    "Commit",
    "TableFormat",
    "create_table",
    "create_table_sql",
    "ensure_properties",
    "names_one_of",
    "property_list",
    "session_settings",
]
