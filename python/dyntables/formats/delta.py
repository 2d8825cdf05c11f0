"""Delta Lake, through Spark SQL: the same statements run on sparkshim (delta-rs) and on
Spark with delta-spark.

A refresh commits with its watermark in the commit's ``userMetadata`` (the session conf
``spark.databricks.delta.commitInfo.userMetadata``, set on the refresh's own session).
On sparkshim the commit is also conditional on the version the refresh read
(``sparkshim.write.expectedTableVersion``); on Spark, Delta's optimistic concurrency
makes a concurrent overwrite fail the commit instead.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from typing import Any, Protocol

from sqlglot import exp

from dyntables.catalog import path_of, table_key
from dyntables.errors import ConcurrentRefreshError
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

USER_METADATA_CONF = "spark.databricks.delta.commitInfo.userMetadata"
EXPECTED_VERSION_CONF = "sparkshim.write.expectedTableVersion"
OVERWRITE_SCHEMA_CONF = "sparkshim.write.overwriteSchema"
CHANGE_DATA_FEED = {"delta.enableChangeDataFeed": "true"}
# Merge-on-read: DELETE, UPDATE and MERGE mark removed rows in per-file deletion vectors
# and write only new rows (Delta 3.1+ on Spark, sparkshim), instead of writing again every
# file that holds a touched row. OPTIMIZE (compaction) purges the vectors.
DELETION_VECTORS = {"delta.enableDeletionVectors": "true"}

# How Delta (on Spark and on sparkshim) names a commit that lost to a concurrent one.
_LOST_RACE_MARKERS = (
    "DELTA_CONCURRENT",
    "DELTA_METADATA_CHANGED",
    "DELTA_PROTOCOL_CHANGED",
    "io.delta.exceptions.Concurrent",
    "ConcurrentAppendException",
    "ConcurrentDeleteReadException",
    "ConcurrentDeleteDeleteException",
    "ConcurrentTransactionException",
    "ConcurrentWriteException",
    "MetadataChangedException",
    "ProtocolChangedException",
)

# How Delta names a read of a file its log names but the file system lacks (VACUUM removed
# the files only versions past its retention need: their changes too).
_FILES_GONE_MARKERS = (
    "DELTA_FILE_NOT_FOUND",
    "DELTA_CHANGE_DATA_FILE_NOT_FOUND",
    "FileNotFoundException",
    "FAILED_READ_FILE.FILE_NOT_EXIST",
)

# Operations that leave the rows as they were: a source commit of these is no new data.
_NO_DATA_OPERATIONS = {
    "CREATE TABLE",
    "SET TBLPROPERTIES",
    "UNSET TBLPROPERTIES",
    "OPTIMIZE",
    "REORG",  # REORG TABLE … APPLY (PURGE): deletion vectors purged, rows unchanged
    "VACUUM START",
    "VACUUM END",
    "ADD CONSTRAINT",
    "DROP CONSTRAINT",
    "CHANGE COLUMN",
    "UPGRADE PROTOCOL",
    "ADD FEATURE",
    "SET COLUMN METADATA",
    "UPDATE TABLE METADATA",
}


class DeltaLog(Protocol):
    """Reads a session's Delta tables' metadata from their logs without a statement (the
    embedded engine's ``sparkshim.metadata.DeltaMetadata``): the same rows as
    ``SHOW TBLPROPERTIES`` and ``DESCRIBE HISTORY`` (a history row as a dict of its
    columns), the schema, the row count, the number
    of data files."""

    def properties(self, name: str) -> dict[str, str]: ...

    def history(self, name: str, limit: int | None = None) -> list[Any]: ...

    def schema(self, name: str) -> Any: ...

    def row_count(self, name: str, version: int | None = None) -> int | None: ...

    def data_file_count(self, name: str) -> int: ...

    def removed_row_share(self, name: str) -> float | None: ...


# Writes a counted change natively (the embedded engine's ``sparkshim.counted_rows``):
# ``(session, table name, view name, count column)`` -> what it wrote, or None where it
# cannot (nothing written).
CountedWriter = Callable[[Any, str, str, str], CountedWrite | None]


class DeltaFormat:
    name = "delta"

    def __init__(
        self,
        *,
        conditional_commits: bool = False,
        schema_overwrite_setting: bool = False,
        embedded: bool | None = None,
        log_reader: Callable[[Any], DeltaLog] | None = None,
        counted_writer: CountedWriter | None = None,
    ) -> None:
        """``embedded=True`` is short for both capabilities (sparkshim has them; Delta on
        Spark has neither); the engine passes them by name."""
        if embedded is not None:
            conditional_commits = schema_overwrite_setting = embedded
        # A commit can be made conditional on the version read (EXPECTED_VERSION_CONF);
        # without it, Delta's own conflict detection is all there is.
        self.supports_conditional_commit = conditional_commits
        # INSERT OVERWRITE replaces the schema too when OVERWRITE_SCHEMA_CONF is set; without
        # it, a schema change is a CREATE OR REPLACE TABLE ... AS SELECT.
        self.schema_overwrite_setting = schema_overwrite_setting
        # Reads a session's table metadata from the Delta log without a statement, where the
        # engine can (None: SHOW TBLPROPERTIES, DESCRIBE HISTORY, a LIMIT 0 query, a count).
        self.log_reader = log_reader
        # Writes a counted change (rows out and rows in) without a MERGE, where the engine
        # can (None: ``apply_counted`` writes nothing and the refresh runs its MERGE).
        self.counted_writer = counted_writer
        self.supports_incremental = True
        self.reports_row_counts = True
        self.reads_histories_at_once = False
        self.schema_changes_are_versions = True
        self.versions_count_up = True
        self.change_tracking_properties = CHANGE_DATA_FEED
        self.dynamic_table_defaults = DELETION_VECTORS
        self.pairs_updates = True
        self.reads_delta_paths = True

    @property
    def writes_counted_changes(self) -> bool:
        return self.counted_writer is not None

    def current_version(self, session: Any, table: exp.Table) -> int | None:
        latest = self.history(session, table, limit=1)
        return latest[0].version if latest else None

    def forget_cached(self, session: Any, table: exp.Table) -> None:
        """Nothing to do: Delta reads the latest log state on each query."""

    def data_file_count(self, session: Any, table: exp.Table) -> int:
        if self.log_reader is not None:
            return self.log_reader(session).data_file_count(to_spark_sql(table))
        detail = session.sql(f"DESCRIBE DETAIL {to_spark_sql(table)}").collect()[0]
        return int(detail["numFiles"])

    def removed_row_share(self, session: Any, table: exp.Table) -> float | None:
        """From the log's add actions where the engine reads them without a statement;
        None on Spark (``DESCRIBE DETAIL`` does not say how many rows vectors remove)."""
        if self.log_reader is None:
            return None
        return self.log_reader(session).removed_row_share(to_spark_sql(table))

    def compact(self, session: Any, table: exp.Table) -> None:
        """``OPTIMIZE``: small files packed together, and files with a deletion vector
        written again without the rows it removes (its vector dropped)."""
        session.sql(f"OPTIMIZE {to_spark_sql(table)}")

    def history(self, session: Any, table: exp.Table, limit: int | None = None) -> list[Commit]:
        commits = []
        for row in self._history_rows(session, table, limit):
            operation = str(row["operation"])
            inserted, deleted = _row_counts(row)
            commits.append(
                Commit(
                    version=int(row["version"]),
                    operation=operation,
                    changes_data=operation.upper() not in _NO_DATA_OPERATIONS,
                    user_metadata=row["userMetadata"],
                    timestamp=row["timestamp"],
                    rows_inserted=inserted,
                    rows_deleted=deleted,
                )
            )
        return commits

    def histories(
        self, session: Any, tables: list[exp.Table], limit: int | None = None
    ) -> dict[str, list[Commit]]:
        """One ``DESCRIBE HISTORY`` (or log read) per table: Delta has no relation over
        several tables' histories."""
        return {table_key(table): self.history(session, table, limit) for table in tables}

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
        return ensure_properties(
            self, session, table, CHANGE_DATA_FEED, "enable the change data feed", properties
        )

    def create_table(
        self, table: exp.Table, columns: list[tuple[str, str]], properties: dict[str, str]
    ) -> exp.Create:
        return create_table(table, columns, "DELTA", properties)

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
    ) -> None:
        settings = self._commit_settings(watermark, expected_version)
        statement: exp.Expr = exp.Insert(this=table.copy(), expression=query.copy(), overwrite=True)
        if replace_schema and self.schema_overwrite_setting:
            settings[OVERWRITE_SCHEMA_CONF] = "true"
        elif replace_schema:
            # Delta on Spark: CREATE OR REPLACE TABLE ... AS SELECT is one commit that replaces
            # rows and schema and keeps the properties given (the current ones).
            properties = self.properties(session, table)
            statement = exp.Create(
                this=table.copy(),
                kind="TABLE",
                replace=True,
                expression=query.copy(),
                properties=exp.Properties(
                    expressions=[
                        exp.FileFormatProperty(this=exp.var("DELTA")),
                        *property_list(properties),
                    ]
                ),
            )
        with session_settings(session, settings):
            session.sql(to_spark_sql(statement))

    def changes(
        self, session: Any, table: exp.Table, columns: list[str], old: int, new: int, sign: str
    ) -> exp.Query:
        """The change data feed (``table_changes``); an update is its pre-image (removed)
        and its post-image (added)."""
        return signed_change_rows(_feed(table, old, new), columns, _added(), sign)

    def typed_changes(
        self,
        session: Any,
        table: exp.Table,
        columns: list[str],
        old: int,
        new: int,
        append_only: bool,
    ) -> exp.Query:
        """The change data feed with ``insert`` and ``update_postimage`` as INSERT, ``delete``
        and ``update_preimage`` as DELETE; the update images have ``IS_UPDATE``."""
        change_type = exp.column("_change_type")
        is_update = change_type.isin(
            exp.Literal.string("update_preimage"), exp.Literal.string("update_postimage")
        )
        query = typed_change_rows(_feed(table, old, new), columns, _added(), is_update)
        if append_only:
            query = query.where(change_type.copy().eq(exp.Literal.string("insert")))
        return query

    def append(
        self,
        session: Any,
        table: exp.Table,
        rows: exp.Query,
        watermark: str,
        expected_version: int | None,
    ) -> None:
        insert = exp.Insert(this=table.copy(), expression=rows.copy())
        self._commit(session, insert, watermark, expected_version)

    def merge(
        self,
        session: Any,
        table: exp.Table,
        statement: exp.Merge,
        watermark: str,
        expected_version: int | None,
    ) -> None:
        self._commit(session, statement, watermark, expected_version)

    def apply_counted(
        self,
        session: Any,
        table: exp.Table,
        view: str,
        count_column: str,
        watermark: str,
        expected_version: int | None,
    ) -> CountedWrite | None:
        if self.counted_writer is None:
            return None
        settings = self._commit_settings(watermark, expected_version)
        with session_settings(session, settings):
            return self.counted_writer(session, to_spark_sql(table), view, count_column)

    def replace_where(
        self,
        session: Any,
        table: exp.Table,
        predicate: exp.Expr,
        rows: exp.Query,
        watermark: str,
        expected_version: int | None,
    ) -> None:
        """``INSERT INTO t REPLACE WHERE predicate SELECT …``: Delta checks that every
        row written matches the predicate."""
        insert = exp.Insert(this=table.copy(), expression=rows.copy(), where=predicate.copy())
        self._commit(session, insert, watermark, expected_version)

    def _commit(
        self, session: Any, statement: exp.Expr, watermark: str, expected_version: int | None
    ) -> None:
        settings = self._commit_settings(watermark, expected_version)
        with session_settings(session, settings):
            session.sql(to_spark_sql(statement))

    def _commit_settings(
        self, watermark: str, expected_version: int | None
    ) -> dict[str, str | None]:
        """The session settings of a refresh commit: its watermark in the commit's user
        metadata and, where the engine can, the version it must follow."""
        settings: dict[str, str | None] = {USER_METADATA_CONF: watermark}
        if self.supports_conditional_commit and expected_version is not None:
            settings[EXPECTED_VERSION_CONF] = str(expected_version)
        return settings

    def watermark(self, commit: Commit) -> str | None:
        return commit.user_metadata

    def recommit_watermark(
        self, session: Any, table: exp.Table, watermark: str, expected_version: int | None
    ) -> None:
        """A property commit carrying ``watermark`` in its commitInfo; it is no new data for
        readers of the table's history (see _NO_DATA_OPERATIONS).

        On sparkshim the commit is conditional on ``expected_version``. Delta on Spark lets
        a property change commit over a concurrent write, so there the commit is checked
        after the fact: when another commit landed in between, the newest watermark among
        those is committed again over this one (the newer refresh stays the table's
        watermark) and the refresh fails as having lost the race."""
        settings = self._commit_settings(watermark, expected_version)
        kept_at = {"dynamic_table.watermark_kept_at": _now_text()}
        with session_settings(session, settings):
            self.set_properties(session, table, kept_at)
        if self.supports_conditional_commit or expected_version is None:
            return
        newer = [c for c in self.history(session, table, limit=16) if c.version > expected_version]
        ours = [c for c in newer if c.user_metadata == watermark]
        landed_between = [c for c in newer if ours and c.version < ours[0].version]
        if not landed_between:
            return
        winner = next((c.user_metadata for c in landed_between if c.user_metadata), None)
        if winner is not None:
            with session_settings(session, {USER_METADATA_CONF: winner}):
                self.set_properties(session, table, kept_at)
        raise ConcurrentRefreshError(
            f"{to_spark_sql(table)} changed while its watermark was being moved (version"
            f" {landed_between[-1].version} landed after {expected_version})"
        )

    def lost_race(self, failure: BaseException) -> bool:
        return names_one_of(failure, _LOST_RACE_MARKERS)

    def files_gone(self, failure: BaseException) -> bool:
        return names_one_of(failure, _FILES_GONE_MARKERS)

    def change_data_missing(self, failure: BaseException) -> bool:
        return names_one_of(failure, ("DELTA_MISSING_CHANGE_DATA",))

    def set_properties(self, session: Any, table: exp.Table, properties: dict[str, str]) -> None:
        alter = exp.Alter(
            this=table.copy(),
            kind="TABLE",
            actions=[
                exp.AlterSet(expressions=[exp.Properties(expressions=property_list(properties))])
            ],
        )
        session.sql(to_spark_sql(alter))

    def unset_properties(self, session: Any, table: exp.Table, keys: list[str]) -> None:
        if not keys:
            return
        quoted = ", ".join(to_spark_sql(exp.Literal.string(key)) for key in keys)
        # sqlglot has no node for UNSET TBLPROPERTIES; the keys are rendered as literals.
        session.sql(f"ALTER TABLE {to_spark_sql(table)} UNSET TBLPROPERTIES IF EXISTS ({quoted})")

    def _history_rows(self, session: Any, table: exp.Table, limit: int | None) -> list[Any]:
        """The rows ``DESCRIBE HISTORY`` returns for the table, newest first."""
        if self.log_reader is not None:
            return self.log_reader(session).history(to_spark_sql(table), limit)
        text = f"DESCRIBE HISTORY {to_spark_sql(table)}"
        if limit is not None:
            text += f" LIMIT {int(limit)}"
        return list(session.sql(text).collect())

    def properties(self, session: Any, table: exp.Table) -> dict[str, str]:
        if self.log_reader is not None:
            return self.log_reader(session).properties(to_spark_sql(table))
        rows = session.sql(f"SHOW TBLPROPERTIES {to_spark_sql(table)}").collect()
        return {str(row["key"]): str(row["value"]) for row in rows}

    def schema(self, session: Any, table: exp.Table) -> Any:
        if self.log_reader is not None:
            return self.log_reader(session).schema(to_spark_sql(table))
        return schema_from_catalog(session, table)

    def row_count(self, session: Any, table: exp.Table, version: int | None = None) -> int | None:
        """From the log's file statistics where the engine reads the log; Delta on Spark
        has no statement that reads them (None)."""
        if self.log_reader is not None:
            return self.log_reader(session).row_count(to_spark_sql(table), version)
        return None

    def keys(self, session: Any, table: exp.Table) -> list[list[str]]:
        """None: Delta tables declare no keys (their constraints are CHECKs)."""
        return []


def _added() -> exp.Expr:
    """A change feed row that adds a row: an insert, or an update's new image."""
    return exp.column("_change_type").isin(
        exp.Literal.string("insert"), exp.Literal.string("update_postimage")
    )


def _feed(table: exp.Table, old: int, new: int) -> exp.Table:
    """The change data feed after ``old``: ``table_changes('<table>', old + 1, new)``, or
    for a table named by its path ``table_changes_by_path('<path>', old + 1, new)``."""
    path = path_of(table)
    if path is None:
        function, name = "table_changes", table_key(table)
    else:
        function, name = "table_changes_by_path", path
    return exp.Table(
        this=exp.Anonymous(
            this=function,
            expressions=[
                exp.Literal.string(name),
                exp.Literal.number(old + 1),
                exp.Literal.number(new),
            ],
        )
    )


def _now_text() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat()


# Operations that replace rows wholesale: their metrics do not count the rows removed.
_OVERWRITING_OPERATIONS = {
    "CREATE OR REPLACE TABLE AS SELECT",
    "REPLACE TABLE AS SELECT",
    "TRUNCATE",
    "RESTORE",
}


def _row_counts(row: Any) -> tuple[int | None, int | None]:
    """The rows a commit inserted and deleted (an updated row counts as one of each, as in
    the change feed), from its ``operationMetrics`` (Delta's names, which sparkshim also
    reports); None when the metrics do not say."""
    fields = row.asDict() if hasattr(row, "asDict") else dict(row)
    metrics = {
        str(k): int(v)
        for k, v in (fields.get("operationMetrics") or {}).items()
        if str(v).lstrip("-").isdigit()
    }
    parameters = fields.get("operationParameters") or {}
    operation = str(fields.get("operation", "")).upper()
    mode = str(parameters.get("mode", "")).strip('"').lower()
    if not metrics or operation in _OVERWRITING_OPERATIONS or mode == "overwrite":
        return None, None
    if any(name.startswith("numTargetRows") for name in metrics):  # MERGE
        updated = metrics.get("numTargetRowsUpdated", 0)
        return (
            metrics.get("numTargetRowsInserted", 0) + updated,
            metrics.get("numTargetRowsDeleted", 0) + updated,
        )
    if "numUpdatedRows" in metrics or "numDeletedRows" in metrics:  # UPDATE, DELETE
        updated = metrics.get("numUpdatedRows", 0)
        return updated, metrics.get("numDeletedRows", 0) + updated
    if metrics.get("numRemovedFiles", 0) or "numOutputRows" not in metrics:
        return None, None  # files removed but no rows counted: an overwrite
    return metrics["numOutputRows"], 0
