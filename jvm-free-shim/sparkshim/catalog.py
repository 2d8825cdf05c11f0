"""The shim's catalog: the warehouse folder itself, plus a small SQLite store.

Tables are laid out the way Spark lays out a warehouse, so the folder is the source of
truth and a second process on the same warehouse sees the same tables:

* ``<warehouse>/<table>`` for the ``default`` database;
* ``<warehouse>/<database>.db/<table>`` for any other;
* anywhere else for a table created with ``LOCATION``, recorded in the store.

The store (``<warehouse>/_sparkshim_catalog.sqlite``) holds what a folder cannot: views
(their SQL text) and the locations of external tables. SQLite makes its changes atomic and
safe across processes. Names are case-insensitive, as in Spark, and kept in lower case.
"""

from __future__ import annotations

import shutil
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from deltalake import DeltaTable

from sparkshim.errors import AnalysisException

DEFAULT_DATABASE = "default"
STORE_FILE = "_sparkshim_catalog.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS views (
    database TEXT NOT NULL, name TEXT NOT NULL, sql TEXT NOT NULL,
    PRIMARY KEY (database, name));
CREATE TABLE IF NOT EXISTS external_tables (
    database TEXT NOT NULL, name TEXT NOT NULL, location TEXT NOT NULL,
    PRIMARY KEY (database, name));
"""


@dataclass(frozen=True)
class ObjectName:
    """A resolved ``database.name``, both in lower case."""

    database: str
    name: str

    def __str__(self) -> str:
        return f"{self.database}.{self.name}"


@dataclass(frozen=True)
class CatalogEntry:
    """What a name stands for: a Delta table at ``location``, or a view over ``view_sql``."""

    name: ObjectName
    location: Path | None = None
    view_sql: str | None = None

    @property
    def is_view(self) -> bool:
        return self.view_sql is not None


class Catalog:
    """Databases, tables and views of one warehouse folder."""

    def __init__(self, warehouse: Path) -> None:
        self.warehouse = warehouse.resolve()
        self.warehouse.mkdir(parents=True, exist_ok=True)
        # One connection per thread, kept: opening one costs more than most lookups.
        self._connections = threading.local()
        with self._store() as store:
            store.executescript(_SCHEMA)

    @contextmanager
    def _store(self) -> Iterator[sqlite3.Connection]:
        """This thread's connection to the store; its changes commit on success and roll
        back on error."""
        connection: sqlite3.Connection | None = getattr(self._connections, "store", None)
        if connection is None:
            connection = sqlite3.connect(self.warehouse / STORE_FILE, timeout=30)
            self._connections.store = connection
        with connection:
            yield connection

    # ---- databases ----

    def database_path(self, database: str) -> Path:
        database = database.lower()
        if database == DEFAULT_DATABASE:
            return self.warehouse
        return self.warehouse / f"{database}.db"

    def database_exists(self, database: str) -> bool:
        return self.database_path(database).is_dir()

    def list_databases(self) -> list[str]:
        others = (path.name[: -len(".db")] for path in self.warehouse.glob("*.db"))
        return sorted({DEFAULT_DATABASE, *(name for name in others if name)})

    def create_database(self, database: str, if_not_exists: bool) -> None:
        if self.database_exists(database):
            if if_not_exists:
                return
            raise AnalysisException(
                message=f"[SCHEMA_ALREADY_EXISTS] Cannot create schema `{database}` because"
                " it already exists. Choose a different name, drop the existing schema, or"
                " add the IF NOT EXISTS clause to tolerate pre-existing schema."
            )
        # Another process may create it in between: that is the same end state.
        self.database_path(database).mkdir(parents=True, exist_ok=if_not_exists)

    def drop_database(self, database: str, if_exists: bool, cascade: bool) -> None:
        database = database.lower()
        if database == DEFAULT_DATABASE:
            raise AnalysisException(message="Can not drop default database")
        if not self.database_exists(database):
            if if_exists:
                return
            raise AnalysisException(
                message=f"[SCHEMA_NOT_FOUND] The schema `{database}` cannot be found."
            )
        objects = self.list_objects(database)
        if objects and not cascade:
            raise AnalysisException(
                message=f"[SCHEMA_NOT_EMPTY] Cannot drop a schema `{database}` because it"
                " contains objects. Use DROP SCHEMA ... CASCADE to drop the schema and all"
                " its objects."
            )
        for name in objects:
            self.drop(ObjectName(database, name))
        shutil.rmtree(self.database_path(database))

    def require_database(self, database: str) -> None:
        if not self.database_exists(database):
            raise AnalysisException(
                message=f"[SCHEMA_NOT_FOUND] The schema `{database.lower()}` cannot be found."
                " Verify the spelling and correctness of the schema and catalog."
            )

    # ---- tables and views ----

    def managed_location(self, name: ObjectName) -> Path:
        return self.database_path(name.database) / name.name

    def lookup(self, name: ObjectName) -> CatalogEntry | None:
        """The table or view ``name`` stands for, or ``None``."""
        with self._store() as store:
            registered = store.execute(
                "SELECT 'view', sql FROM views WHERE database = ? AND name = ?"
                " UNION ALL SELECT 'external', location FROM external_tables"
                " WHERE database = ? AND name = ?",
                (name.database, name.name, name.database, name.name),
            ).fetchall()
        kinds = dict(registered)
        if "view" in kinds:
            return CatalogEntry(name, view_sql=kinds["view"])
        if "external" in kinds:
            return CatalogEntry(name, location=Path(kinds["external"]))
        if "/" in name.name:  # `delta`.`/a/path`: a path, never a table's name
            return None
        managed = self.managed_location(name)
        if is_delta_table(managed):
            return CatalogEntry(name, location=managed)
        return None

    def list_objects(self, database: str) -> list[str]:
        """Names of the tables and views of ``database``, sorted."""
        database = database.lower()
        folder = self.database_path(database)
        managed = {
            path.name
            for path in folder.iterdir()
            if path.is_dir() and (path / "_delta_log").is_dir()
        }
        with self._store() as store:
            registered = {
                row[0]
                for row in store.execute(
                    "SELECT name FROM views WHERE database = ?"
                    " UNION SELECT name FROM external_tables WHERE database = ?",
                    (database, database),
                )
            }
        return sorted(managed | registered)

    def register_external_table(self, name: ObjectName, location: Path) -> None:
        with self._store() as store:
            store.execute(
                "INSERT OR REPLACE INTO external_tables VALUES (?, ?, ?)",
                (name.database, name.name, str(location)),
            )

    def save_view(self, name: ObjectName, sql: str) -> None:
        with self._store() as store:
            store.execute(
                "INSERT OR REPLACE INTO views VALUES (?, ?, ?)", (name.database, name.name, sql)
            )

    def drop(self, name: ObjectName) -> None:
        """Forget ``name``; a managed table's files are deleted, as Spark does."""
        entry = self.lookup(name)
        with self._store() as store:
            store.execute(
                "DELETE FROM views WHERE database = ? AND name = ?", (name.database, name.name)
            )
            store.execute(
                "DELETE FROM external_tables WHERE database = ? AND name = ?",
                (name.database, name.name),
            )
        managed = self.managed_location(name)
        if entry is not None and entry.location == managed and managed.exists():
            shutil.rmtree(managed)


def is_delta_table(location: Path) -> bool:
    """Whether a Delta table is at ``location``: a stat or two when its first commit or a
    checkpoint is there (delta-rs's own check lists the log, about 1 ms)."""
    log = location / "_delta_log"
    if (log / "00000000000000000000.json").exists() or (log / "_last_checkpoint").exists():
        return True
    return log.is_dir() and DeltaTable.is_deltatable(str(location))
