"""What the command layer needs from a session, as a ``typing.Protocol``.

``commands``, ``query``, ``dml`` and ``rewrite`` run a statement on behalf of a
``ShimSession``, which calls into them; they type their ``session`` parameter with
``SessionProtocol`` instead of importing ``sparkshim.session``, so that the imports run one
way only (session → commands → query, dml, rewrite). ``ShimSession`` satisfies it
structurally.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import duckdb
    import pyarrow as pa
    from sqlglot import exp

    from sparkshim.catalog import Catalog, ObjectName
    from sparkshim.delta import CommitOptions

__all__ = ["SessionCatalog", "SessionConf", "SessionProtocol"]


class SessionConf(Protocol):
    """The session's ``spark.conf``: string settings by name (see ``sparkshim.config``)."""

    def get(self, key: str, default: Any = ...) -> str | None:
        """The setting, else ``default``; an unknown key without a default is an error."""
        ...

    def set(self, key: str, value: Any) -> None: ...

    def getAll(self) -> dict[str, str]:  # noqa: N802  (PySpark's name)
        ...


class SessionCatalog(Protocol):
    """The part of ``spark.catalog`` a statement uses (``USE db``)."""

    def setCurrentDatabase(self, database: str) -> None:  # noqa: N802  (PySpark's name)
        ...


class SessionProtocol(Protocol):
    """The session state and services a statement reads and changes.

    Read-only properties, so that a session holding a subtype (``RuntimeConfig``,
    ``CatalogApi``) matches.
    """

    @property
    def catalog_store(self) -> Catalog:
        """The warehouse's databases, tables and views."""
        ...

    @property
    def catalog(self) -> SessionCatalog: ...

    @property
    def conf(self) -> SessionConf: ...

    @property
    def current_database(self) -> str: ...

    @property
    def time_zone(self) -> str:
        """The session time zone (``spark.sql.session.timeZone``)."""
        ...

    def cursor(self) -> duckdb.DuckDBPyConnection:
        """This thread's DuckDB cursor."""
        ...

    def commit_options(self) -> CommitOptions:
        """The session's settings for its next commit."""
        ...

    def qualify(self, table: exp.Table) -> ObjectName:
        """The database and name a (possibly unqualified) table reference means."""
        ...

    def register_temp_view(self, name: str, view: pa.Table | str) -> None: ...

    def temp_view(self, name: str) -> pa.Table | str | None: ...

    def temp_view_names(self) -> list[str]: ...

    def drop_temp_view(self, name: str) -> bool: ...
