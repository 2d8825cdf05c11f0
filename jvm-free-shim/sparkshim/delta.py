"""Delta tables through delta-rs: the only module that calls ``deltalake``.

Every write is one Delta commit. Commit metadata follows Spark's Delta conventions: the
session's ``spark.databricks.delta.commitInfo.userMetadata`` lands in the commit's
``userMetadata``, and ``txnAppId``/``txnVersion`` make a write idempotent (a version at
or below the one already recorded for the app is skipped, as Delta does).
"""

from __future__ import annotations

import functools
import json
import os
import re
import threading
import uuid
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from deltalake import CommitProperties, DeltaTable, Schema, Transaction, write_deltalake
from deltalake import Field as DeltaField
from deltalake.exceptions import CommitFailedError, DeltaError, TableNotFoundError

from sparkshim import append, deletion_vectors, live_files, log
from sparkshim.errors import AnalysisException, UnsupportedSqlError
from sparkshim.parquet_stats import delta_rs_writer_properties
from sparkshim.types import align_to_schema


@dataclass(frozen=True)
class CommitOptions:
    """What a write records in its commit besides the data."""

    user_metadata: str | None = None
    app_id: str | None = None
    app_version: int | None = None
    # The table version the writer read: the write fails if the table has moved since.
    expected_version: int | None = None
    extra: dict[str, str] = field(default_factory=dict)

    def properties(self) -> CommitProperties:
        metadata: dict[str, Any] = dict(self.extra)
        if self.user_metadata is not None:
            metadata["userMetadata"] = self.user_metadata
        transactions = None
        if self.app_id is not None and self.app_version is not None:
            transactions = [Transaction(app_id=self.app_id, version=self.app_version)]
        # A conditional write must not be retried on top of someone else's commit.
        retries = 0 if self.expected_version is not None else None
        return CommitProperties(
            custom_metadata=metadata or None,
            app_transactions=transactions,
            max_commit_retries=retries,
        )


class TableMovedError(AnalysisException):
    """A conditional write found the table at another version than the one it read, or
    another commit took the version it was committing."""


def check_expected_version(location: Path, options: CommitOptions) -> None:
    """Refuse a conditional write early when the table moved since the writer read it
    (from the log's newest commit file, before any work is done).

    This check alone leaves a window open until the commit: a write that delta-rs commits
    takes its table from ``table_for_commit``, which checks again on the table it commits
    on top of; a commit written here takes the version after the one read or fails.
    """
    if options.expected_version is None:
        return
    current = log.latest_version(location)
    if current is None:
        current = open_table(location).version()  # no log: it says so
    if current != options.expected_version:
        raise _moved(location, current, options.expected_version)


def check_at_version(location: Path, options: CommitOptions, read_version: int) -> None:
    """Refuse a write that sparkshim commits itself (a conditional put of the version
    after ``read_version``) when the table is no longer at the version the writer read
    (``options.expected_version``, else ``read_version``), from the log's newest commit
    file: a commit landing after this check takes the version first, and the put fails."""
    expected = options.expected_version if options.expected_version is not None else read_version
    current = log.latest_version(location)
    if current != expected:
        raise _moved(location, current, expected)


def table_for_commit(
    location: Path, options: CommitOptions, read_version: int | None = None
) -> DeltaTable:
    """The table a delta-rs write commits on top of: brought up to date, then checked to
    be at the version the writer read (``options.expected_version``, else
    ``read_version``).

    delta-rs commits at the version after its table's and, for a conditional write, does
    not retry (``CommitOptions.properties``); so once the table is checked here, a commit
    that lands before the write's own makes delta-rs fail it (``committing`` says why)
    rather than apply it on top of a version the writer never read.
    """
    table = open_table(location)
    expected = options.expected_version if options.expected_version is not None else read_version
    if expected is not None and table.version() != expected:
        raise _moved(location, table.version(), expected)
    return table


@contextmanager
def committing(location: Path) -> Iterator[None]:
    """Turn delta-rs's failure to commit (another commit took the version) into the
    concurrency error a Delta writer raises."""
    try:
        yield
    except CommitFailedError as failure:
        raise TableMovedError(
            message=f"[DELTA_CONCURRENT_WRITE] another commit landed on {location} while this"
            " write was being committed; nothing was written: re-read the table and retry"
        ) from failure


def _moved(location: Path, current: int | None, expected: int) -> TableMovedError:
    return TableMovedError(
        message=f"[DELTA_CONCURRENT_WRITE] {location} is at version {current}, not"
        f" {expected} as read: another commit landed since; nothing was written: re-read"
        " the table and retry"
    )


def open_table(location: Path, version: int | None = None) -> DeltaTable:
    """The table at its latest version (or at ``version``).

    Opening replays the log from the last checkpoint, tens of milliseconds on a busy
    table, and one statement opens a table several times; so each thread keeps the tables
    it opened: a past version as it is (it never changes), the latest brought up to date
    with ``update_incremental`` (reads only the new commits) when there are any. A kept
    table is reopened when its log was recreated (a dropped and recreated table): its
    first commit file is no longer the one it was opened from. Callers must not move a
    returned table to another version (``load_as_version``): it is shared.
    """
    kept: OrderedDict[str, tuple[DeltaTable, tuple[Any, ...]]] = _thread_tables()
    key = str(location) if version is None else f"{location}@{version}"
    identity = _log_identity(location)
    if version is not None:
        # A refresh reads its sources at the versions it just found latest: the kept
        # latest table, when at that version, is that snapshot (opening the version on
        # its own would replay its log again, milliseconds a table).
        latest = kept.get(str(location))
        if latest is not None and latest[1] == identity and latest[0].version() == version:
            return latest[0]
    entry = kept.get(key)
    if entry is not None and identity is not None and entry[1] == identity:
        table = entry[0]
        if version is None and _has_newer_commit(location, table):
            table.update_incremental()
        kept.move_to_end(key)
        return table
    table = _open(location, version)
    if identity is not None:
        kept[key] = (table, identity)
        while len(kept) > _KEPT_TABLES:
            kept.popitem(last=False)
    return table


# How many opened tables each thread keeps up to date.
_KEPT_TABLES = 64
_opened = threading.local()


def _has_newer_commit(location: Path, table: DeltaTable) -> bool:
    """Whether the log holds a commit after ``table``'s version: commits are numbered
    without gaps, so it is there if the next one is. A stat, where ``update_incremental``
    lists the log (about 5 ms)."""
    return log.commit_path(location, table.version() + 1).exists()


def _thread_tables() -> OrderedDict[str, tuple[DeltaTable, tuple[Any, ...]]]:
    # Per thread: a delta-rs table object is not safe to update from two threads at once.
    tables = getattr(_opened, "tables", None)
    if tables is None:
        tables = _opened.tables = OrderedDict()
    return tables


def _log_identity(location: Path) -> tuple[Any, ...] | None:
    """The inode and modification time of the table's first commit file (gone once log
    cleanup removed it) and of its last-checkpoint file; None when neither is there (no
    table): then nothing is kept.

    The last-checkpoint file is rewritten at each checkpoint, so a kept table is reopened
    once per checkpoint, from it. Without that, delta-rs replays every commit since the
    table was opened at each ``update_incremental`` once it lists the table's files: about
    45 ms a statement 600 commits on, where a table opened from the newest checkpoint
    takes 3-5 ms."""
    identities = tuple(
        log.file_identity(location / "_delta_log" / name)
        for name in ("00000000000000000000.json", "_last_checkpoint")
    )
    return identities if any(identity is not None for identity in identities) else None


def _open(location: Path, version: int | None) -> DeltaTable:
    try:
        return DeltaTable(str(location), version=version)
    except TableNotFoundError as missing:
        raise AnalysisException(message=f"no Delta table at {location}") from missing
    except DeltaError as failure:  # delta-rs's own refusal of a protocol it does not know
        unsupported = _UNSUPPORTED_FEATURE.search(str(failure))
        if unsupported is None:
            raise
        raise UnsupportedSqlError(
            f"reading a Delta table with the feature '{unsupported[1]}'",
            "read it on Spark with Delta Lake",
        ) from failure


_UNSUPPORTED_FEATURE = re.compile(r"Feature '([^']+)' is not supported")


def check_version_exists(location: Path, version: int) -> None:
    """Delta's refusal to time travel to a version the log does not hold (beyond the
    latest, or before the oldest commit kept)."""
    if version >= 0 and log.commit_path(location, version).exists():
        return  # the common case, one file's stat: a refresh pins every read it makes
    latest = log.latest_version(location)
    if latest is None:
        return  # no table: opening it says so
    kept = [
        int(path.name.removesuffix(".json"))
        for path in (location / "_delta_log").glob("*.json")
        if path.name.removesuffix(".json").isdigit()
    ]
    earliest = min(kept, default=latest)
    if not earliest <= version <= latest:
        raise AnalysisException(
            message=f"[DELTA_VERSION_NOT_FOUND] Cannot time travel Delta table to version"
            f" {version}. Available versions: [{earliest}, {latest}]."
        )


def open_table_at(location: Path, timestamp: datetime) -> DeltaTable:
    """The table as of ``timestamp`` (naive means UTC): its latest commit at or before it."""
    table = _open(location, None)  # its own object: it is moved to another version
    if timestamp.tzinfo is None:
        timestamp = timestamp.replace(tzinfo=timezone.utc)
    first_commit = min(commit["timestamp"] for commit in table.history())
    if timestamp.timestamp() * 1000 < first_commit:
        earliest = datetime.fromtimestamp(first_commit / 1000, timezone.utc)
        raise AnalysisException(
            message=f"[DELTA_TIMESTAMP_EARLIER_THAN_COMMIT_RETENTION] The provided timestamp"
            f" ({timestamp}) is before the earliest version available to this table"
            f" ({earliest})."
        )
    table.load_as_version(timestamp)
    return table


def snapshot(table: DeltaTable) -> pa.Table:
    """The table's rows at the version it is loaded at."""
    try:
        return pa.table(table.to_pyarrow_table())
    except FileNotFoundError as failure:
        raise missing_file_error(str(failure).splitlines()[0]) from failure


def missing_file_error(detail: str) -> AnalysisException:
    """Delta's error for a data file the log names but the file system lacks."""
    return AnalysisException(
        message=f"[DELTA_FILE_NOT_FOUND_DETAILED] A file referenced in the transaction log"
        f" cannot be found ({detail}). This occurs when data has been deleted from the file"
        " system rather than with the table's DELETE statement, or when a version older than"
        " VACUUM's retention period is read (VACUUM deletes the files only older versions"
        " need)."
    )


def arrow_schema(table: DeltaTable) -> pa.Schema:
    return pa.schema(table.schema().to_arrow())


# Reader features under which a data file does not hold exactly its rows of the table.
_FILE_RESHAPING_FEATURES = {"deletionVectors", "columnMapping"}
# The reader features of the tables sparkshim reads: the two above (with its own scan,
# ``file_scan``), and those that ask nothing of a reader of local files (a V2 checkpoint
# is read by delta-rs and by deletion_vectors.py; VACUUM's protocol check concerns
# writers). A table may list a feature it does not use: delta-rs lists ``variantType``
# on every table it creates with table features, which is read unless it has a variant.
READABLE_FEATURES = frozenset(
    {*_FILE_RESHAPING_FEATURES, "timestampNtz", "v2Checkpoint", "vacuumProtocolCheck"}
)
_UNLESS_USED = {"variantType": "variant", "variantType-preview": "variant"}


def check_readable(table: DeltaTable) -> None:
    """Refuse a table whose protocol asks of readers what sparkshim does not do."""
    protocol = table.protocol()
    features = set(protocol.reader_features or ())
    unknown = features - READABLE_FEATURES - set(_UNLESS_USED)
    unused = {f for f in features & set(_UNLESS_USED) if not _uses_type(table, _UNLESS_USED[f])}
    unknown |= features & set(_UNLESS_USED) - unused
    if protocol.min_reader_version > _MAX_READER_VERSION or unknown:
        raise UnsupportedSqlError(
            f"reading a Delta table of reader version {protocol.min_reader_version}"
            + (f" with the reader features {sorted(unknown)}" if unknown else ""),
            "read it on Spark with Delta Lake",
        )


def _uses_type(table: DeltaTable, type_name: str) -> bool:
    """Whether a column of the table (at any depth) is of the Delta type ``type_name``."""
    return _schema_uses_type(table.schema().to_json(), type_name)


def _schema_uses_type(schema_json: str, type_name: str) -> bool:
    """Whether a column of a Delta schema (JSON) is of the Delta type ``type_name``."""

    def uses(kind: Any) -> bool:
        if isinstance(kind, str):
            return kind == type_name
        if kind.get("type") == "struct":
            return any(uses(f["type"]) for f in kind["fields"])
        return any(uses(kind[k]) for k in ("elementType", "keyType", "valueType") if k in kind)

    return uses(json.loads(schema_json))


_MAX_READER_VERSION = 3


def plain_data_files(table: DeltaTable) -> list[str] | None:
    """The data files of the loaded version when they alone are the table's rows, else None.

    That holds when no deletion vector hides rows of a file, no column mapping renames
    the stored columns, and no partition column lives only in the file paths. Reading
    these files directly lets the query engine read only the columns and row groups a
    query needs, instead of materializing the whole snapshot first.
    """
    features = set(table.protocol().reader_features or [])
    configuration = table.metadata().configuration
    column_mapping = configuration.get("delta.columnMapping.mode", "none").lower() != "none"
    if features & _FILE_RESHAPING_FEATURES or column_mapping:
        return None
    if table.metadata().partition_columns:
        return None
    files = [unquote(uri) for uri in table.file_uris()]  # URL-encoded: `a b` is `a%20b`
    return files or None


# The column of ``FileScan.partitions`` naming each data file.
PATH_COLUMN = "__sparkshim_path"


@dataclass(frozen=True)
class FileScan:
    """How to read a snapshot's rows from its data files when they do not hold them as
    stored: each file minus the rows its deletion vector removes, stored columns renamed
    from their physical names (column mapping), partition values from the log."""

    schema: pa.Schema  # the table's, logical names
    files: tuple[str, ...]  # file system paths, as the log lists the files
    # The positions each file with a deletion vector no longer holds (ascending).
    deleted: dict[str, np.ndarray[Any, Any]]
    physical: dict[str, str]  # each stored column's physical name by its logical name
    # A row per file: its path in PATH_COLUMN, then its partition values (typed).
    partitions: pa.Table | None

    @property
    def data_schema(self) -> pa.Schema:
        """The columns the data files store (the table's, less its partition columns)."""
        if self.partitions is None:
            return self.schema
        partitioned = set(self.partitions.column_names)
        return pa.schema([f for f in self.schema if f.name not in partitioned])


def file_scan(table: DeltaTable) -> FileScan | None:
    """The snapshot's rows as ``FileScan`` reads them, for a table with deletion vectors
    or column mapping (which delta-rs's pyarrow reader refuses); None for any other
    table."""
    check_readable(table)
    features = set(table.protocol().reader_features or ())
    configuration = table.metadata().configuration
    mode = configuration.get("delta.columnMapping.mode", "none").lower()
    if not features & _FILE_RESHAPING_FEATURES and mode == "none":
        return None
    location = table_location(table)
    schema = arrow_schema(table)
    physical = _physical_names(table.schema().to_json(), mode)
    actions = pa.table(table.get_add_actions(flatten=True))
    log_paths = actions.column("path").to_pylist()
    files = tuple(deletion_vectors.local_path(location, p) for p in log_paths)
    deleted: dict[str, np.ndarray[Any, Any]] = {}
    if "deletionVectors" in features:
        listed = set(log_paths)
        for path, vector in live_files.vectors(location, table.version()).items():
            if path not in listed:
                raise AnalysisException(
                    message=f"[DELTA_DELETION_VECTOR_MISSING_FILE] the log of {location} gives"
                    f" a deletion vector to {path}, which is not a file of version"
                    f" {table.version()}"
                )
            removed = deletion_vectors.read(location, vector)
            deleted[deletion_vectors.local_path(location, path)] = deletion_vectors.positions(
                removed
            )
    partitions = None
    partition_columns = list(table.metadata().partition_columns)
    if partition_columns:
        columns: dict[str, Any] = {PATH_COLUMN: pa.array(files, pa.string())}
        for name in partition_columns:
            wanted = schema.field(name).type
            columns[name] = actions.column(f"partition.{name}").cast(wanted)
        partitions = pa.table(columns)
    return FileScan(schema, files, deleted, physical, partitions)


def latest_file_scan(location: Path) -> FileScan | None:
    """``file_scan`` of the table's latest snapshot from sparkshim's own replay of its log
    (``live_files``, the state from ``table_state``), without bringing a delta-rs table up
    to date: a dynamic table's refresh reads the table it committed to a moment before.
    None where that does not apply (the caller opens the table): no table, a table whose
    files hold its rows as stored, a protocol ``check_readable`` would have to look at,
    or partition values spelled otherwise than ``_typed_partition_values`` reads."""
    state = table_state(location)
    if state is None or state.min_reader_version > _MAX_READER_VERSION:
        return None
    features = state.reader_features
    mode = state.configuration.get("delta.columnMapping.mode", "none").lower()
    if not features & _FILE_RESHAPING_FEATURES and mode == "none":
        return None
    for feature in features - READABLE_FEATURES:
        used = _UNLESS_USED.get(feature)
        if used is None or _schema_uses_type(state.schema_json, used):
            return None
    schema = arrow_schema_of(state.schema_json)
    physical = _physical_names(state.schema_json, mode)
    files = live_files.at(location, state.version)
    paths = tuple(deletion_vectors.local_path(location, path) for path in files)
    deleted = {
        path: deletion_vectors.positions(deletion_vectors.read(location, file.deletion_vector))
        for path, file in zip(paths, files.values(), strict=True)
        if file.deletion_vector is not None
    }
    partitions = None
    if state.partition_columns:
        columns: dict[str, Any] = {PATH_COLUMN: pa.array(paths, pa.string())}
        for name in state.partition_columns:
            stored_as = physical.get(name, name)
            spelled = [file.partition_values.get(stored_as) for file in files.values()]
            values = _typed_partition_values(spelled, schema.field(name).type)
            if values is None:
                return None
            columns[name] = values
        partitions = pa.table(columns)
    return FileScan(schema, paths, deleted, physical, partitions)


def row_count(location: Path, version: int) -> int | None:
    """The rows of the table at ``version``, from each data file's statistics
    (``numRecords``, which counts the rows a deletion vector removes too) less each
    vector's cardinality; None when a file has no statistics."""
    files = live_files.at(location, version).values()
    stored = live_files.stored_rows(files)
    return None if stored is None else stored - live_files.removed_rows(files)


def removed_row_share(location: Path, version: int) -> float | None:
    """The share of the rows the data files of the table at ``version`` store that
    deletion vectors remove; None when a file has no statistics."""
    files = live_files.at(location, version).values()
    stored = live_files.stored_rows(files)
    if stored is None:
        return None
    return live_files.removed_rows(files) / stored if stored else 0.0


def stored_rows(location: Path, version: int) -> int | None:
    """The rows the data files of the table at ``version`` store (their ``numRecords``,
    removed rows included); None when a file has no statistics."""
    return live_files.stored_rows(live_files.at(location, version).values())


def latest_version(location: Path) -> int:
    """The table's latest version, from its log (delta-rs says why when there is none)."""
    version = log.latest_version(location)
    return open_table(location).version() if version is None else version


def table_location(table: DeltaTable) -> Path:
    """The folder of a (local) table."""
    return Path(unquote(urlparse(table.table_uri).path))


def _physical_names(schema_json: str, mode: str) -> dict[str, str]:
    """Each top-level column's physical name by its logical name under column mapping
    by name; empty without column mapping. Mapping by id (files matched by Parquet field
    ids), and nested fields stored under other names, are refused."""
    if mode == "none":
        return {}
    if mode != "name":
        raise UnsupportedSqlError(
            f"reading a Delta table with column mapping mode '{mode}'",
            "read it on Spark with Delta Lake",
        )
    fields = json.loads(schema_json)["fields"]
    renamed_inside = [f["name"] for f in fields if _renames_nested_fields(f["type"])]
    if renamed_inside:
        raise UnsupportedSqlError(
            f"reading nested columns stored under physical names ({', '.join(renamed_inside)})",
            "read the table on Spark with Delta Lake",
        )
    return {
        f["name"]: f.get("metadata", {}).get("delta.columnMapping.physicalName", f["name"])
        for f in fields
    }


def _renames_nested_fields(kind: Any) -> bool:
    """Whether a Delta type (JSON) holds a struct field stored under another name."""
    if not isinstance(kind, dict):
        return False
    if kind.get("type") == "struct":
        return any(
            f.get("metadata", {}).get("delta.columnMapping.physicalName", f["name"]) != f["name"]
            or _renames_nested_fields(f["type"])
            for f in kind["fields"]
        )
    return any(
        _renames_nested_fields(kind.get(key)) for key in ("elementType", "keyType", "valueType")
    )


def create(
    location: Path,
    schema: pa.Schema,
    *,
    partition_by: list[str],
    properties: dict[str, str],
    comment: str | None,
    replace: bool,
) -> DeltaTable:
    """Create (or replace) an empty table; custom properties are allowed.

    A new table's first commit is not retried: delta-rs would otherwise commit a second
    ``CREATE TABLE`` (a new table id) over another process's, which created the same
    table a moment before; the loser fails instead (``commands.create_table`` tells it
    from other failures)."""
    return DeltaTable.create(
        str(location),
        schema,
        mode="overwrite" if replace else "error",
        partition_by=partition_by or None,
        description=comment,
        configuration=properties or None,
        commit_properties=None if replace else CommitProperties(max_commit_retries=0),
        raise_if_key_not_exists=False,
    )


def already_committed(location: Path, options: CommitOptions) -> bool:
    """Whether an idempotent write (``txnAppId``/``txnVersion``) was already applied."""
    if options.app_id is None or options.app_version is None:
        return False
    recorded = open_table(location).transaction_version(options.app_id)
    return recorded is not None and recorded >= options.app_version


def write(
    location: Path,
    data: pa.Table,
    *,
    overwrite: bool,
    options: CommitOptions,
    predicate: str | None = None,
    overwrite_schema: bool = False,
) -> None:
    """Append ``data``, or overwrite the table (or the rows matching ``predicate``);
    with ``overwrite_schema``, the table takes ``data``'s schema in the same commit."""
    if already_committed(location, options):
        return
    check_expected_version(location, options)
    if not overwrite and not overwrite_schema:
        state = table_state(location)
        if state is not None:
            data = data.cast(arrow_schema_of(state.schema_json))
            if append.is_plain(state, data):
                _append_plain(location, state, data, options)
                return
    table = table_for_commit(location, options)
    refuse_misspelled_partitions(table, data)
    with committing(location):
        if overwrite_schema:
            write_deltalake(
                table,
                data,
                mode="overwrite",
                schema_mode="overwrite",
                commit_properties=options.properties(),
                writer_properties=delta_rs_writer_properties(data),
            )
            return
        data = data.cast(pa.schema(table.schema().to_arrow()))
        if overwrite:
            write_deltalake(
                table,
                data,
                mode="overwrite",
                predicate=predicate,
                commit_properties=options.properties(),
                writer_properties=delta_rs_writer_properties(data),
            )
        else:
            write_deltalake(
                table,
                data,
                mode="append",
                commit_properties=options.properties(),
                writer_properties=delta_rs_writer_properties(data),
            )


def _append_plain(
    location: Path, state: log.TableState, data: pa.Table, options: CommitOptions
) -> None:
    """Append ``data`` to a plain table with a commit written here (see append.py). A
    conditional write takes the version after the one it read, or fails; another write
    retries at the next free version, unless a commit in between changed the schema or
    the protocol (as Delta's conflict check would refuse it)."""
    add = append.data_file(location, data)
    shape = state.shape()
    attempts = 1 if options.expected_version is not None else _METADATA_COMMIT_ATTEMPTS
    for _ in range(attempts):
        current = table_state(location)
        if current is None or current.shape() != shape:
            break
        version = (
            options.expected_version + 1
            if options.expected_version is not None
            else current.version + 1
        )
        info = append.commit_info(data.num_rows, commit_metadata(options))
        actions = [info, *transaction_actions(options, info["commitInfo"]["timestamp"]), add]
        if put_if_absent(location / "_delta_log", version, actions):
            if append.checkpoint_due(current, version):
                checkpoint(open_table(location))
            return
    (location / add["add"]["path"]).unlink(missing_ok=True)
    raise TableMovedError(
        message=f"[DELTA_CONCURRENT_APPEND] {location} moved while rows were being appended"
        + (
            f" (read at version {options.expected_version})"
            if options.expected_version is not None
            else ""
        )
        + ": re-read the table and retry"
    )


def checkpoint(table: DeltaTable) -> None:
    """Write a checkpoint and remove the commit files older than the log retention, as
    delta-rs's own post-commit hook does (unless ``delta.enableExpiredLogCleanup`` is
    false)."""
    table.create_checkpoint()
    cleanup = table.metadata().configuration.get("delta.enableExpiredLogCleanup", "true")
    if cleanup.lower() != "false":
        table.cleanup_metadata()


def commit_metadata(options: CommitOptions) -> dict[str, Any]:
    """What a hand-written commit's ``commitInfo`` carries besides the operation."""
    metadata: dict[str, Any] = {}
    if options.user_metadata is not None:
        metadata["userMetadata"] = options.user_metadata
    metadata.update(options.extra)
    return metadata


def transaction_actions(options: CommitOptions, now: int) -> list[dict[str, Any]]:
    """The ``txn`` action of an idempotent write, if it is one."""
    if options.app_id is None or options.app_version is None:
        return []
    return [{"txn": {"appId": options.app_id, "version": options.app_version, "lastUpdated": now}}]


def refuse_misspelled_partitions(table: DeltaTable, data: pa.Table, prefix: str = "") -> None:
    """Refuse, before anything is written, a delta-rs write that would spell a partition
    value wrongly in the log: delta-rs writes a negative DECIMAL with a fraction as
    ``-5.-25`` (its kernel then cannot read the table back, nor can any reader). The
    values checked are ``data``'s (its partition columns named with ``prefix``) and, as
    a rewrite spells them again, those of the partitions the table holds."""
    partition_columns = table.metadata().partition_columns
    schema = arrow_schema(table)
    decimals = [c for c in partition_columns if pa.types.is_decimal(schema.field(c).type)]
    if not decimals:
        return
    held = pa.table(table.get_add_actions(flatten=True))
    for name in decimals:
        if held.num_rows:
            _check_partition_values(name, held.column(f"partition.{name}"))
    check_partition_values(decimals, data, prefix)


def check_partition_values(partition_columns: list[str], data: pa.Table, prefix: str = "") -> None:
    """``refuse_misspelled_partitions`` for the rows ``data`` of a table partitioned by
    ``partition_columns`` (one not created yet: a CREATE TABLE ... AS SELECT checks its
    rows before it creates anything)."""
    named = {column.lower(): column for column in data.column_names}
    for name in partition_columns:
        column = named.get((prefix + name).lower())
        if column is not None:
            _check_partition_values(name, data.column(column))


def _check_partition_values(name: str, column: pa.ChunkedArray | pa.Array) -> None:
    if not pa.types.is_decimal(column.type):
        return
    if any(_negative_with_fraction(value) for value in pc.unique(column).to_pylist()):
        raise UnsupportedSqlError(
            f"a negative DECIMAL with a fraction as a value of the partition column {name}",
            "the Delta writer the embedded engine uses spells such a partition value wrongly;"
            " partition by another column (or write the table on Spark)",
        )


def _negative_with_fraction(value: Decimal | None) -> bool:
    return value is not None and value < 0 and value != value.to_integral_value()


APPEND_ONLY_PROPERTY = "delta.appendOnly"


def check_rows_removable(location: Path, name: str) -> None:
    """Delta's rule for a table with ``delta.appendOnly``: a statement that would remove
    or rewrite rows (DELETE, UPDATE, a MERGE with a MATCHED or NOT MATCHED BY SOURCE
    clause, INSERT OVERWRITE, REPLACE WHERE, TRUNCATE) is refused before it reads
    anything, whether or not it would touch a row."""
    state = table_state(location)
    if state is None or state.configuration.get(APPEND_ONLY_PROPERTY, "").lower() != "true":
        return
    raise AnalysisException(
        message=f"[DELTA_CANNOT_MODIFY_APPEND_ONLY] {name} only takes appends (its table"
        f" property {APPEND_ONLY_PROPERTY} is true), so rows cannot be updated or deleted;"
        f" to allow it, ALTER TABLE {name} SET TBLPROPERTIES ({APPEND_ONLY_PROPERTY} = false)"
    )


def set_properties(location: Path, properties: dict[str, str], options: CommitOptions) -> None:
    check_property_values(properties)
    table = table_for_commit(location, options)
    with committing(location), _protocol_changes_refused(properties):
        table.alter.set_table_properties(
            properties, raise_if_not_exists=False, commit_properties=options.properties()
        )


# Delta table properties whose value is a boolean, and those that are a count (at least 1).
_BOOLEAN_PROPERTIES = frozenset(
    {
        "delta.appendonly",
        "delta.enablechangedatafeed",
        "delta.enabledeletionvectors",
        "delta.enableexpiredlogcleanup",
        "delta.enablerowtracking",
        "delta.enabletypewidening",
        "delta.randomizefileprefixes",
        "delta.checkpoint.writestatsasjson",
        "delta.checkpoint.writestatsasstruct",
    }
)
_COUNT_PROPERTIES = frozenset({"delta.checkpointinterval"})


def check_property_values(properties: dict[str, str]) -> None:
    """Refuse a value a Delta property cannot take (``delta.appendOnly = 'maybe'``)
    before anything is written: a table holding it would fail its next write."""
    for key, value in properties.items():
        lowered = key.lower()
        if lowered in _BOOLEAN_PROPERTIES and value.lower() not in ("true", "false"):
            raise AnalysisException(
                message=f"the table property {key} must be true or false, not {value!r};"
                " nothing was changed"
            )
        if lowered in _COUNT_PROPERTIES and not (value.isdigit() and int(value) > 0):
            raise AnalysisException(
                message=f"the table property {key} must be a whole number of at least 1,"
                f" not {value!r}; nothing was changed"
            )


@contextmanager
def _protocol_changes_refused(properties: dict[str, str]) -> Iterator[None]:
    """delta-rs refuses some changes of a table's protocol or layout that Delta on Spark
    makes (column mapping, reader versions and features; for some it panics): said in
    the engine's words, the table unchanged."""
    try:
        yield
    except CommitFailedError:
        raise
    except BaseException as failure:  # delta-rs's panic is a BaseException
        if not isinstance(failure, DeltaError) and type(failure).__name__ != "PanicException":
            raise
        raise UnsupportedSqlError(
            f"setting the table properties {', '.join(properties)} on a Delta table",
            "the embedded engine cannot make that change to a table's protocol or layout"
            " (column mapping, reader and writer versions, table features); make it with"
            " Delta Lake on Spark",
        ) from None


def add_columns(location: Path, fields: list[pa.Field], options: CommitOptions) -> None:
    """``ALTER TABLE … ADD COLUMNS``: one metadata commit appending ``fields`` to the
    schema; rows written before read NULL for them. A column of the table's already is
    Spark's FIELDS_ALREADY_EXISTS."""
    table = table_for_commit(location, options)
    existing = {column.name.lower() for column in table.schema().fields}
    for added in fields:
        if added.name.lower() in existing:
            raise AnalysisException(
                message=f"[FIELDS_ALREADY_EXISTS] Cannot add column, because `{added.name}`"
                " already exists in the table's schema."
            )
    with committing(location):
        table.alter.add_columns(
            [DeltaField.from_arrow(added) for added in fields],
            commit_properties=options.properties(),
        )


def properties(location: Path) -> dict[str, str]:
    state = table_state(location)
    if state is None:
        return dict(open_table(location).metadata().configuration)  # no table: it says so
    return dict(state.configuration)


def history(location: Path, limit: int | None = None) -> list[dict[str, Any]]:
    """Commits, newest first (the ``limit`` newest if given), as delta-rs reports them.
    A limited history is read from the newest commit files (see log.py)."""
    if limit is not None:
        commits = log.history(location, limit)
        if commits is not None:
            return commits
    return list(open_table(location).history(limit))


def table_state(location: Path) -> log.TableState | None:
    """The protocol, metadata and schema at the latest version, from the log's newest
    commits where it can (see log.py), else from delta-rs; None when there is no table."""
    state = log.current_state(location)
    if state is None and log.latest_version(location) is not None:
        state = log.current_state(location, open_table(location))
    return state


def latest_schema(location: Path) -> pa.Schema:
    """The table's Arrow schema at its latest version (see ``table_state``)."""
    state = table_state(location)
    if state is None:
        return arrow_schema(open_table(location))  # no table: it says so
    return arrow_schema_of(state.schema_json)


@functools.lru_cache(maxsize=256)
def arrow_schema_of(schema_json: str) -> pa.Schema:
    """The Arrow schema of a Delta schema (JSON), as delta-rs converts it."""
    return pa.schema(Schema.from_json(schema_json).to_arrow())


# delta-rs metric names whose Spark (Delta Lake) name is not their camelCase form.
_SPARK_METRIC_NAMES = {"num_added_rows": "numOutputRows", "num_added_files": "numAddedFiles"}


def commit_time(milliseconds: int) -> datetime:
    """A commit's time as its ``commitInfo`` gives it (milliseconds since the epoch), as
    an aware UTC datetime, exact to the millisecond."""
    seconds, remainder = divmod(milliseconds, 1000)
    return datetime.fromtimestamp(seconds, tz=timezone.utc).replace(microsecond=remainder * 1000)


def spark_metrics(metrics: dict[str, Any]) -> dict[str, str]:
    """A commit's ``operationMetrics`` as Delta on Spark names them (``numOutputRows``,
    ``numDeletedRows``, ``numTargetRowsUpdated``, …), values as text."""
    named: dict[str, str] = {}
    for key, value in metrics.items():
        head, *rest = str(key).split("_")
        name = _SPARK_METRIC_NAMES.get(str(key), head + "".join(p.title() for p in rest))
        named[name] = str(value)
    return named


# The change data feed's column of each row's kind of change (also in a ``cdc`` file).
CHANGE_TYPE_COLUMN = "_change_type"


def changes(location: Path, start: int, end: int | None) -> pa.Table:
    """Delta's change data feed between two versions (inclusive), with ``_change_type``,
    ``_commit_version`` and ``_commit_timestamp`` as Spark's ``table_changes`` returns."""
    state = table_state(location)
    if state is None:
        return changes_by_delta_rs(location, start, end)  # no table: it says so
    if start > state.version:
        raise AnalysisException(
            message=f"Provided Start version({start}) for reading change data is invalid."
            f" Start version cannot be greater than the latest version of the table"
            f"({state.version})."
        )
    unrecorded = _first_unrecorded_version(location, state, start, end)
    if unrecorded is not None:
        last = state.version if end is None else end
        raise _missing_change_data(location, start, last, unrecorded)
    feed = _feed_from_files(location, state, start, end)
    if feed is not None:
        return _with_spark_metadata_types(feed)
    if start <= state.version:
        last = state.version if end is None else min(end, state.version)
        unreadable = log.removed_vectors_without_cdc(location, start, last)
        if unreadable is not None:
            raise UnsupportedSqlError(
                f"the change data feed of version {unreadable} of {location} (it removes"
                " files with deletion vectors without writing change data files, in a way"
                " the embedded engine does not read)",
                "read the changes on Spark with Delta Lake, or from a range without that version",
            )
    return changes_by_delta_rs(location, start, end)


def changes_by_delta_rs(location: Path, start: int, end: int | None) -> pa.Table:
    """The change data feed as delta-rs reads it (``changes`` minus its check that the
    feed was on, and minus its own read of append-only commits)."""
    table = open_table(location)
    try:
        feed = pa.table(table.load_cdf(starting_version=start, ending_version=end))
    except (pa.ArrowInvalid, OSError) as failure:
        missing = _MISSING_OBJECT.search(str(failure))
        if missing is None:
            raise
        raise missing_file_error(missing[1]) from failure
    except DeltaError as failure:
        # delta-rs checks the feed itself where the log alone could not tell (a commit
        # file cleaned up): the same refusal, in Delta's words.
        unrecorded = _DELTA_RS_UNRECORDED.search(str(failure))
        if unrecorded is None:
            raise
        last = table.version() if end is None else end
        raise _missing_change_data(location, start, last, int(unrecorded[1])) from failure
    return _with_spark_metadata_types(feed)


# How delta-rs says the change data feed was off at a version it was asked to read.
_DELTA_RS_UNRECORDED = re.compile(r"Change Data not enabled for version: (\d+)")
CHANGE_DATA_FEED_PROPERTY = "delta.enableChangeDataFeed"


def _first_unrecorded_version(
    location: Path, state: log.TableState, start: int, end: int | None
) -> int | None:
    """The first version of ``start`` to ``end`` whose changes the change data feed did
    not record (Delta's rule: the table property was not true once that commit was
    made), or None when it recorded them all, or when a commit file is gone (delta-rs
    then checks). Read backwards from the latest state, each configuration carried back
    past the commits that do not change the table's metadata (small JSON reads); only
    such a change makes the configuration before it read from delta-rs."""
    last = state.version if end is None else min(end, state.version)
    configuration = state.configuration
    first = None
    for version in range(state.version, start - 1, -1):
        actions = log.read_commit(location, version)
        if actions is None:
            return None
        if version <= last and configuration.get(CHANGE_DATA_FEED_PROPERTY, "").lower() != "true":
            first = version
        if version > start and any("metaData" in action for action in actions):
            before = open_table(location, version=version - 1)
            configuration = dict(before.metadata().configuration)
    return first


def _missing_change_data(location: Path, start: int, end: int, version: int) -> AnalysisException:
    return AnalysisException(
        message=f"[DELTA_MISSING_CHANGE_DATA] the change data feed of {location} did not"
        f" record version {version} (asked for versions {start} to {end}): the table property"
        f" {CHANGE_DATA_FEED_PROPERTY} was not true when it was committed, and changes"
        " made then cannot be read. Read a range after it; to record the changes to come,"
        f" set TBLPROPERTIES ({CHANGE_DATA_FEED_PROPERTY} = true)"
    )


# How delta-rs's object store says a file it was to read is not there.
_MISSING_OBJECT = re.compile(r"Object at location (\S+) not found")


def _with_spark_metadata_types(feed: pa.Table) -> pa.Table:
    """``feed`` with Spark's types for the metadata columns: STRING, BIGINT, TIMESTAMP."""
    spark_types = {
        CHANGE_TYPE_COLUMN: pa.string(),
        "_commit_version": pa.int64(),
        "_commit_timestamp": pa.timestamp("us", tz="UTC"),
    }
    schema = pa.schema(
        [pa.field(f.name, spark_types.get(f.name, f.type), f.nullable) for f in feed.schema]
    )
    return feed.cast(schema)


def _feed_from_files(
    location: Path, state: log.TableState, start: int, end: int | None
) -> pa.Table | None:
    """The change feed of a run of commits read from the log and the files holding it
    (see ``log.change_files``: the ``cdc`` files a commit wrote, else the data files it
    added and removed), where delta-rs's ``load_cdf`` brings the table up to date and
    plans a DataFusion scan (and reads a removed file's rows without its deletion vector,
    refuses column mapping); None when a commit's changes are not in such files, or a
    partition value is of a type read here."""
    end = state.version if end is None else end
    if start > end or start < 0 or end > state.version:
        return None
    if "inCommitTimestamp" in state.writer_features:
        return None  # commit times in another field
    mode = state.configuration.get("delta.columnMapping.mode", "none").lower()
    physical = _physical_names(state.schema_json, mode)
    files = log.change_files(location, start, end)
    if not files:
        return None
    schema = arrow_schema_of(state.schema_json)
    logical = {stored: name for name, stored in physical.items()}
    parts = []
    for file in files:
        rows = _change_rows(location, file, schema, logical, state.partition_columns)
        if rows is None:
            return None
        parts.append(rows)
    return pa.concat_tables(parts)


def _change_rows(
    location: Path,
    file: log.ChangeFile,
    schema: pa.Schema,
    logical: dict[str, str],
    partition_columns: tuple[str, ...],
) -> pa.Table | None:
    """The rows of one change file, in the table's ``schema``, with the feed's columns:
    its stored columns under their logical names (``logical``: by physical name, under
    column mapping), its partition's values added; None for a partition value of a type
    not read here."""
    try:
        # (ParquetFile reads one file without the dataset layer's discovery: 1 ms less.)
        stored = pq.ParquetFile(location / unquote(file.path)).read()
    except FileNotFoundError as failure:
        raise missing_file_error(str(location / unquote(file.path))) from failure
    if file.deletion_vector is not None:  # rows it had removed before the file was
        descriptor = deletion_vectors.Descriptor.from_json(file.deletion_vector)
        removed = deletion_vectors.read(location, descriptor)
        stored = stored.filter(deletion_vectors.keep_mask(removed, stored.num_rows))
    count = stored.num_rows
    if file.kind == log.CDC:
        kinds = stored.column(CHANGE_TYPE_COLUMN).cast(pa.string())
    else:
        kinds = pa.repeat(pa.scalar(file.kind, pa.string()), count)
    columns = [name for name in stored.column_names if name != CHANGE_TYPE_COLUMN]
    stored = stored.select(columns).rename_columns([logical.get(n, n) for n in columns])
    stored_values = {logical.get(k, k): v for k, v in file.partition_values.items()}
    for name in partition_columns:
        if name in stored.column_names:
            continue  # (a cdc file may store them)
        values = _partition_values(stored_values.get(name), schema.field(name).type, count)
        if values is None:
            return None
        stored = stored.append_column(name, values)
    rows = align_to_schema(stored, stored.column_names, schema)
    stamp = pa.scalar(file.timestamp_ms * 1000, pa.timestamp("us", tz="UTC"))
    return (
        rows.append_column(CHANGE_TYPE_COLUMN, kinds)
        .append_column("_commit_version", pa.repeat(pa.scalar(file.version, pa.int64()), count))
        .append_column("_commit_timestamp", pa.repeat(stamp, count))
    )


_NULL_PARTITION_SPELLINGS = ("", "__HIVE_DEFAULT_PARTITION__")


def _partition_values(value: str | None, kind: pa.DataType, count: int) -> pa.Array | None:
    """A file's partition value (as Delta's log spells it) repeated for its ``count``
    rows, in the column's type; None for a type whose spelling is not read here
    (timestamps, binary: delta-rs reads them).

    >>> _partition_values("2024-01-05", pa.date32(), 2).to_pylist()
    [datetime.date(2024, 1, 5), datetime.date(2024, 1, 5)]
    >>> _partition_values(None, pa.int32(), 1).to_pylist()
    [None]

    An empty value is a NULL, as the table's scan reads it (Spark writes a STRING
    partition's '' as NULL), and so is Hive's name for the NULL partition:

    >>> _partition_values("", pa.string(), 1).to_pylist()
    [None]
    """
    return _typed_partition_values([value] * count, kind)


def _typed_partition_values(values: list[str | None], kind: pa.DataType) -> pa.Array | None:
    """Partition values as Delta's log spells them (``_partition_values``), in the
    column's type; None when a type or a spelling is not read here."""
    spelled = [None if value in _NULL_PARTITION_SPELLINGS else value for value in values]
    if all(value is None for value in spelled):
        return pa.nulls(len(spelled), kind)
    readable = (
        pa.types.is_integer(kind)
        or pa.types.is_floating(kind)
        or pa.types.is_decimal(kind)
        or pa.types.is_boolean(kind)
        or pa.types.is_string(kind)
        or pa.types.is_large_string(kind)
        or pa.types.is_date32(kind)
    )
    if not readable:
        return None
    try:
        return pa.array(spelled, pa.string()).cast(kind)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None  # spelled otherwise than Arrow reads it: left to delta-rs


def unset_properties(
    location: Path, keys: list[str], *, if_exists: bool, options: CommitOptions
) -> None:
    """Remove table properties in one commit, as Delta's ``UNSET TBLPROPERTIES`` does.

    delta-rs has no operation for this, so the commit is written here: a ``metaData``
    action equal to the current one but for the removed keys, put into the log only if no
    other commit took its version (a hard link fails when the file exists, the same
    put-if-absent delta-rs uses on a local file system).
    """
    if already_committed(location, options):
        return
    attempts = 1 if options.expected_version is not None else _METADATA_COMMIT_ATTEMPTS
    for _ in range(attempts):
        table = table_for_commit(location, options)
        configuration = dict(table.metadata().configuration)
        missing = [key for key in keys if key not in configuration]
        if missing and not if_exists:
            raise AnalysisException(
                message=f"[DELTA_UNSET_NON_EXISTENT_PROPERTY] Attempted to unset non-existent"
                f" property '{missing[0]}' in table {location}; use UNSET TBLPROPERTIES IF EXISTS"
            )
        if len(missing) == len(keys):
            return
        for key in keys:
            configuration.pop(key, None)
        actions = _metadata_commit(table, configuration, keys, options)
        if put_if_absent(location / "_delta_log", table.version() + 1, actions):
            return
    raise TableMovedError(
        message=f"[DELTA_CONCURRENT_WRITE] {location} kept moving while its properties were"
        " being removed: retry"
    )


_METADATA_COMMIT_ATTEMPTS = 10
# Writer features whose commits need more than a commitInfo and a metaData action.
_FEATURES_NEEDING_MORE = {"inCommitTimestamp", "rowTracking", "domainMetadata"}


def _metadata_commit(
    table: DeltaTable, configuration: dict[str, str], removed: list[str], options: CommitOptions
) -> list[dict[str, Any]]:
    """The actions of a commit that changes only the table's configuration."""
    needing_more = set(table.protocol().writer_features or []) & _FEATURES_NEEDING_MORE
    if needing_more:
        raise UnsupportedSqlError(
            "ALTER TABLE ... UNSET TBLPROPERTIES on a table with the writer features"
            f" {sorted(needing_more)}"
        )
    metadata = table.metadata()
    now = int(datetime.now(timezone.utc).timestamp() * 1000)
    commit_info: dict[str, Any] = {
        "timestamp": now,
        "operation": "UNSET TBLPROPERTIES",
        "operationParameters": {"properties": json.dumps(removed)},
        "engineInfo": "sparkshim",
        "isBlindAppend": False,
    }
    commit_info.update(commit_metadata(options))
    actions: list[dict[str, Any]] = [{"commitInfo": commit_info}]
    actions.extend(transaction_actions(options, now))
    actions.append(
        {
            "metaData": {
                "id": metadata.id,
                "name": metadata.name,
                "description": metadata.description,
                "format": {"provider": "parquet", "options": {}},
                "schemaString": table.schema().to_json(),
                "partitionColumns": list(metadata.partition_columns),
                "createdTime": metadata.created_time,
                "configuration": configuration,
            }
        }
    )
    return actions


def put_if_absent(log_folder: Path, version: int, actions: list[dict[str, Any]]) -> bool:
    """Write commit ``version`` unless it exists; whether it was written."""
    staged = log_folder / f".{version:020d}.{uuid.uuid4().hex}.json.tmp"
    staged.write_text("".join(json.dumps(action) + "\n" for action in actions))
    try:
        os.link(staged, log_folder / f"{version:020d}.json")
        return True
    except FileExistsError:
        return False
    finally:
        staged.unlink()
