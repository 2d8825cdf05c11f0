"""``ShimSession``: the SparkSession stand-in.

It offers the part of ``SparkSession`` that dynamic tables and everyday notebooks use:
``sql``, ``table``, ``createDataFrame``, ``conf``, ``catalog``, ``newSession``, ``stop``.
Statements execute eagerly (a query's rows are materialized when ``sql`` returns).
One session may be used from several threads at once: each thread gets its own DuckDB
cursor, and the shared state (configuration, temporary views) is guarded by a lock.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
from sqlglot import exp

from sparkshim import checksums, conv, decimals, delta, number_text, sources
from sparkshim.catalog import DEFAULT_DATABASE, Catalog, ObjectName, is_delta_table
from sparkshim.commands import execute
from sparkshim.config import (
    DEFAULTS,
    EXPECTED_VERSION_CONF,
    TIME_ZONE_CONF,
    TXN_APP_ID_CONF,
    TXN_VERSION_CONF,
    USER_METADATA_CONF,
)
from sparkshim.dataframe import DataFrame
from sparkshim.errors import AnalysisException
from sparkshim.plan import Plan
from sparkshim.reader import DataFrameReader
from sparkshim.translate import ShimSpark
from sparkshim.types import from_python

_NO_DEFAULT = object()


class RuntimeConfig:
    """``spark.conf``: string settings of one session."""

    def __init__(self, initial: dict[str, str]) -> None:
        self._values = {**DEFAULTS, **initial}
        self._lock = threading.Lock()

    def get(self, key: str, default: Any = _NO_DEFAULT) -> str | None:
        """The setting, else ``default`` (``None`` included, as in PySpark); an unknown key
        without a default is an error."""
        with self._lock:
            if key in self._values:
                return self._values[key]
        if default is not _NO_DEFAULT:
            return None if default is None else str(default)
        raise AnalysisException(
            message=f"[SQL_CONF_NOT_FOUND] The SQL config {key} cannot be found."
        )

    def set(self, key: str, value: Any) -> None:
        text = str(value).lower() if isinstance(value, bool) else str(value)
        with self._lock:
            self._values[key] = text

    def unset(self, key: str) -> None:
        with self._lock:
            self._values.pop(key, None)
            if key in DEFAULTS:
                self._values[key] = DEFAULTS[key]

    def getAll(self) -> dict[str, str]:  # noqa: N802  (PySpark's name)
        with self._lock:
            return dict(self._values)


class Table:
    """One entry of ``spark.catalog.listTables()``."""

    def __init__(self, name: str, database: str | None, table_type: str, is_temporary: bool):
        self.name = name
        self.database = database
        self.namespace = [database] if database else []
        self.catalog = "spark_catalog" if database else None
        self.description = None
        self.tableType = table_type
        self.isTemporary = is_temporary

    def __repr__(self) -> str:
        return (
            f"Table(name={self.name!r}, catalog={self.catalog!r}, namespace={self.namespace!r},"
            f" description=None, tableType={self.tableType!r}, isTemporary={self.isTemporary})"
        )


class CatalogApi:
    """``spark.catalog``: the part of PySpark's Catalog API the shim offers."""

    def __init__(self, session: ShimSession) -> None:
        self._session = session

    def currentDatabase(self) -> str:  # noqa: N802
        return self._session.current_database

    def setCurrentDatabase(self, database: str) -> None:  # noqa: N802
        self._session.catalog_store.require_database(database)
        self._session.current_database = database.lower()

    def listDatabases(self) -> list[str]:  # noqa: N802
        return self._session.catalog_store.list_databases()

    def databaseExists(self, database: str) -> bool:  # noqa: N802
        return self._session.catalog_store.database_exists(database)

    def listTables(self, dbName: str | None = None) -> list[Table]:  # noqa: N802, N803
        database = (dbName or self._session.current_database).lower()
        store = self._session.catalog_store
        tables = []
        for name in store.list_objects(database):
            entry = store.lookup(ObjectName(database, name))
            kind = "VIEW" if entry is not None and entry.is_view else "MANAGED"
            if entry is not None and entry.location not in (
                None,
                store.managed_location(entry.name),
            ):
                kind = "EXTERNAL"
            tables.append(Table(name, database, kind, False))
        tables += [Table(name, None, "TEMPORARY", True) for name in self._session.temp_view_names()]
        return tables

    def tableExists(self, tableName: str, dbName: str | None = None) -> bool:  # noqa: N802, N803
        """Whether the name is a table or view, or (as with Delta on Spark) names a Delta
        table by its path: ``delta.`/data/events```."""
        text = tableName if dbName is None else f"{dbName}.{tableName}"
        table = exp.to_table(text, dialect="spark")
        if not table.db and self._session.temp_view(table.name) is not None:
            return True
        if self._session.catalog_store.lookup(self._session.qualify(table)) is not None:
            return True
        source = sources.addressed(table)
        return source is not None and source.format == sources.DELTA and is_delta_table(source.path)

    def dropTempView(self, viewName: str) -> bool:  # noqa: N802, N803
        return self._session.drop_temp_view(viewName)


class ShimSession:
    """A JVM-free ``SparkSession`` over the Delta tables of one warehouse folder.

    >>> import tempfile
    >>> spark = ShimSession(warehouse=tempfile.mkdtemp())
    >>> spark.sql("SELECT 1 + 1 AS two").collect()
    [Row(two=2)]
    """

    def __init__(
        self,
        warehouse: str | Path = "spark-warehouse",
        conf: dict[str, str] | None = None,
        *,
        _catalog: Catalog | None = None,
    ) -> None:
        self.catalog_store = _catalog or Catalog(Path(warehouse))
        self.conf = RuntimeConfig(conf or {})
        self.catalog = CatalogApi(self)
        self.current_database = DEFAULT_DATABASE
        self._temp_views: dict[str, pa.Table | str] = {}
        self._lock = threading.RLock()
        self._database = duckdb.connect()
        # Spark's exact DECIMAL arithmetic where DuckDB's is not (shared by every cursor).
        decimals.register(self._database)
        conv.register(self._database)
        checksums.register(self._database)
        number_text.register(self._database)
        self._cursors = threading.local()
        self._stopped = False

    # ---- what SparkSession offers ----

    def sql(self, sqlQuery: str, args: dict[str, Any] | None = None) -> DataFrame:  # noqa: N803
        """Run one Spark SQL statement and return its result."""
        if args:
            raise AnalysisException(message="sparkshim does not support parameterized sql()")
        self._check_open()
        return DataFrame(self, execute(self, sqlQuery))

    def table(self, tableName: str) -> DataFrame:  # noqa: N803
        """The table (or view) as a DataFrame whose every action reads it again."""
        table = exp.to_table(tableName, dialect=ShimSpark)
        return DataFrame.of_plan(self, Plan.over_relation(table))

    @property
    def read(self) -> DataFrameReader:
        """``spark.read``: a reader of files and tables (reader.py)."""
        return DataFrameReader(self)

    def createDataFrame(self, data: Any, schema: Any = None) -> DataFrame:  # noqa: N802
        return DataFrame(self, from_python(data, schema, time_zone=self.time_zone))

    def newSession(self) -> ShimSession:  # noqa: N802
        """A session on the same warehouse with its own settings and temporary views."""
        return ShimSession(conf=self.conf.getAll(), _catalog=self.catalog_store)

    def stop(self) -> None:
        self._stopped = True
        self._database.close()

    @property
    def version(self) -> str:
        return "3.5.9"

    # ---- used by the command layer and DataFrames ----

    @property
    def time_zone(self) -> str:
        return self.conf.get(TIME_ZONE_CONF) or "UTC"

    def cursor(self) -> duckdb.DuckDBPyConnection:
        """This thread's DuckDB cursor (DuckDB connections are not shared across threads)."""
        cursor: duckdb.DuckDBPyConnection | None = getattr(self._cursors, "cursor", None)
        if cursor is None:
            cursor = self._database.cursor()
            self._cursors.cursor = cursor
            self._cursors.zone = None
        zone = self.time_zone
        if zone != self._cursors.zone:  # set again when the session's zone changed
            # A literal, not pasted text: a zone with a quote must not end the string.
            cursor.execute(f"SET TimeZone = {exp.Literal.string(zone).sql('duckdb')}")
            self._cursors.zone = zone
        return cursor

    def commit_options(self) -> delta.CommitOptions:
        """This session's settings for its next commit, as Delta on Spark reads them."""
        app_version = self.conf.get(TXN_VERSION_CONF, "") or None
        expected = self.conf.get(EXPECTED_VERSION_CONF, "") or None
        return delta.CommitOptions(
            user_metadata=self.conf.get(USER_METADATA_CONF, "") or None,
            app_id=self.conf.get(TXN_APP_ID_CONF, "") or None,
            app_version=int(app_version) if app_version is not None else None,
            expected_version=int(expected) if expected is not None else None,
        )

    def qualify(self, table: exp.Table) -> ObjectName:
        """The database and name a (possibly unqualified) table reference means."""
        return ObjectName((table.db or self.current_database).lower(), table.name.lower())

    def register_temp_view(self, name: str, view: pa.Table | str) -> None:
        with self._lock:
            self._temp_views[name.lower()] = view

    def temp_view(self, name: str) -> pa.Table | str | None:
        with self._lock:
            return self._temp_views.get(name.lower())

    def temp_view_names(self) -> list[str]:
        with self._lock:
            return sorted(self._temp_views)

    def drop_temp_view(self, name: str) -> bool:
        with self._lock:
            return self._temp_views.pop(name.lower(), None) is not None

    def _check_open(self) -> None:
        if self._stopped:
            raise AnalysisException(message="this ShimSession has been stopped")
