"""The engine under a ``DynamicTables``: a SparkSession (classic or Connect) or sparkshim.

Only ``session.sql`` and DataFrame calls present in both PySpark flavours are used, so
the same code drives every engine. Refreshes run on a session of their own
(``newSession()``), so that their settings (commit metadata, WAP ids) never leak into
the user's session; the user's session keeps its own configuration untouched.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from sqlglot import exp

from dyntables.catalog import Definition, key_to_table, table_key
from dyntables.errors import CannotRefreshIncrementallyError, DynamicTableError
from dyntables.formats import CountedWrite, TableFormat, names_one_of
from dyntables.sql.dialect import to_spark_sql


class Engine:
    """One session, its table format, and the lookups the lifecycle needs."""

    def __init__(
        self,
        session: Any,
        table_format: TableFormat,
        *,
        appends_rows_as_dataframes: bool,
        checkpoints_dataframes: bool,
    ) -> None:
        self.session = session
        self.table_format = table_format
        # Whether a single row is appended as a one-row DataFrame rather than an INSERT of
        # literals: cheaper where parsing the INSERT costs more than the append (sparkshim),
        # wrong where a DataFrame's naive datetimes are read in the driver's time zone (Spark).
        self.appends_rows_as_dataframes = appends_rows_as_dataframes
        # Whether a DataFrame read several times must be checkpointed to be computed once
        # (Spark's ``localCheckpoint``); sparkshim's DataFrames already hold their rows.
        self.checkpoints_dataframes = checkpoints_dataframes
        self._refresh_session: Any = None
        # Refresh commits of this process are serialized: the commit metadata is per session.
        self.refresh_lock = threading.RLock()

    @classmethod
    def create(
        cls, session: Any, *, warehouse: str | Path | None, table_format: str | None
    ) -> Engine:
        if session is None:
            from sparkshim import ShimSession  # lazy: importing dyntables starts nothing

            if table_format not in (None, "delta"):
                raise DynamicTableError(
                    f"the embedded engine stores Delta tables; table_format={table_format!r}"
                    " needs a SparkSession"
                )
            shim = ShimSession(warehouse=warehouse or "spark-warehouse")
            return cls._embedded(shim)
        if warehouse is not None:
            raise DynamicTableError(
                "warehouse= is for the embedded engine; a SparkSession brings its own catalog"
            )
        if made_by_sparkshim(session):  # an embedded session made by the caller (install)
            if table_format not in (None, "delta"):
                raise DynamicTableError(
                    f"the embedded engine stores Delta tables; table_format={table_format!r}"
                    " needs a SparkSession"
                )
            return cls._embedded(session)
        return cls(
            session,
            _format_for(session, table_format),
            appends_rows_as_dataframes=False,
            checkpoints_dataframes=True,
        )

    @classmethod
    def _embedded(cls, session: Any) -> Engine:
        """sparkshim's capabilities: conditional Delta commits and schema overwrites by
        setting, cheap DataFrame appends, DataFrames that hold their rows."""
        from dyntables.formats.delta import DeltaFormat
        from sparkshim.metadata import DeltaMetadata

        delta = DeltaFormat(
            conditional_commits=True,
            schema_overwrite_setting=True,
            log_reader=DeltaMetadata,
            counted_writer=_write_counted,
        )
        return cls(session, delta, appends_rows_as_dataframes=True, checkpoints_dataframes=False)

    def sql(self, text: str) -> Any:
        return self.session.sql(text)

    @property
    def refresh_session(self) -> Any:
        if self._refresh_session is None:
            self._refresh_session = self.session.newSession()
        self._follow_current_catalog(self._refresh_session)
        return self._refresh_session

    def _follow_current_catalog(self, refresh_session: Any) -> None:
        """Names resolve on the refresh session as on the user's: a new session starts in
        the default catalog, the user may have run ``USE CATALOG`` (a Catalog API call, no
        statement; sparkshim has one catalog)."""
        user_catalog = self.session.catalog
        if not hasattr(user_catalog, "currentCatalog"):
            return
        current = user_catalog.currentCatalog()
        if refresh_session.catalog.currentCatalog() != current:
            refresh_session.catalog.setCurrentCatalog(current)

    # ---- names ----

    def current_database(self) -> str:
        return str(self.session.catalog.currentDatabase())

    def qualify(self, name: exp.Table) -> exp.Table:
        """``name`` with its database (and catalog, if given) filled in."""
        qualified = name.copy()
        qualified.set("version", None)
        qualified.set("alias", None)
        if not qualified.db:
            qualified.set("db", exp.to_identifier(self.current_database()))
        return qualified

    def table_exists(self, table: exp.Table) -> bool:
        return bool(self.session.catalog.tableExists(table_key(table)))

    def is_temporary_view(self, table: exp.Table) -> bool:
        """Whether an unqualified name means a temporary view: ``tableExists`` sees temporary
        views under their bare name (on every catalog, unlike ``listTables``)."""
        if table.db:
            return False
        if not self.session.catalog.tableExists(table.name):
            return False
        return not self.table_exists(self.qualify(table))

    def is_view(self, table: exp.Table) -> bool:
        database = table.db
        return any(
            entry.name.lower() == table.name.lower() and entry.tableType == "VIEW"
            for entry in self.session.catalog.listTables(database)
        )

    def table_names(self, database: str) -> list[exp.Table]:
        rows = self.session.sql(f"SHOW TABLES IN {to_spark_sql(exp.to_identifier(database))}")
        names = []
        for row in rows.collect():
            if row["isTemporary"]:
                continue
            names.append(key_to_table(f"{database}.{row['tableName']}"))
        return names

    def databases(self) -> list[str]:
        rows = self.session.sql("SHOW DATABASES").collect()
        return [str(row[0]) for row in rows]

    def schema_of(self, session: Any, key: str) -> Any:
        """A table's schema without reading its rows (sparkshim runs queries eagerly, so
        ``session.table(name)`` would read the whole table)."""
        return self.table_format.schema(session, key_to_table(key))

    # ---- definitions ----

    def definition(self, table: exp.Table) -> Definition | None:
        """The definition ``table`` stores, or None when it is an ordinary table or absent."""
        properties = self.properties(table)
        return Definition.from_properties(properties) if properties is not None else None

    def properties(self, table: exp.Table) -> dict[str, str] | None:
        """The table's properties; None when it is absent, a view, or a table of another
        format."""
        if not self.table_exists(table):
            return None
        try:
            properties: dict[str, str] = self.table_format.properties(self.session, table)
        except Exception:  # a view, or a table of another format: not ours
            return None
        return properties


def _write_counted(session: Any, table: str, view: str, count_column: str) -> CountedWrite | None:
    """sparkshim's native write of a counted change (``sparkshim.counted_rows``); a table
    that does not hold the rows the change removes cannot be refreshed incrementally."""
    from sparkshim.counted_rows import RowsNotHeldError, apply_view

    try:
        applied = apply_view(session, table, view, count_column)
    except RowsNotHeldError as failure:
        raise CannotRefreshIncrementallyError(
            "the table does not hold the rows its change removes"
        ) from failure
    if applied is None:
        return None
    return CountedWrite(
        applied.inserted, applied.deleted, applied.committed, applied.version, applied.committed_at
    )


def refused_by_engine(failure: BaseException) -> bool:
    """Whether ``failure`` (or an error it was raised from) is the embedded engine's
    refusal of a statement it cannot answer with Spark's semantics (sparkshim's
    ``UnsupportedSqlError``), told without importing sparkshim. It is raised before
    anything is written."""
    return names_one_of(failure, ("UnsupportedSqlError: sparkshim does not support",))


def made_by_sparkshim(instance: Any) -> bool:
    """Whether ``instance`` (a session or a DataFrame) is sparkshim's, told without
    importing sparkshim (which would start the embedded engine's imports for nothing)."""
    return type(instance).__module__.startswith("sparkshim.")


def _format_for(session: Any, requested: str | None) -> TableFormat:
    from dyntables.formats.delta import DeltaFormat

    name = requested or _detect_format(session)
    if name == "delta":
        return DeltaFormat(conditional_commits=False, schema_overwrite_setting=False)
    if name == "iceberg":
        from dyntables.formats.iceberg import IcebergFormat

        return IcebergFormat()
    raise DynamicTableError(f"table_format must be 'delta' or 'iceberg', not {name!r}")


def _detect_format(session: Any) -> str:
    extensions = str(session.conf.get("spark.sql.extensions", "") or "")
    if "Iceberg" in extensions:
        return "iceberg"
    if "Delta" in extensions:
        return "delta"
    raise DynamicTableError(
        "cannot tell the table format from the session (spark.sql.extensions names neither"
        " Delta nor Iceberg): pass table_format='delta' or 'iceberg'"
    )
