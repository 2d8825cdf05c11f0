"""A session's Delta tables' metadata read straight from their logs, without running a
statement: the rows ``SHOW TBLPROPERTIES`` and ``DESCRIBE HISTORY`` return, a table's
schema (what ``SELECT * … LIMIT 0`` would say), its row count from the files' statistics
and its number of data files.

For callers that read it at every step (a dynamic table reads its properties and newest
commits at each refresh, and a listing reads every table's): parsing, translating and
dispatching a statement costs more than reading the log, which the statements read anyway.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pyspark.sql.types import StructType
from sqlglot import exp

from sparkshim import delta, live_files
from sparkshim.commands import history_rows, target_location
from sparkshim.dataframe import DataFrame
from sparkshim.types import local_wall_clock

if TYPE_CHECKING:
    from pathlib import Path

    from sparkshim.session_protocol import SessionProtocol

__all__ = ["DeltaMetadata"]


class DeltaMetadata:
    """The metadata of the tables ``session`` names (unqualified names: its database)."""

    def __init__(self, session: SessionProtocol) -> None:
        self.session = session

    def properties(self, name: str) -> dict[str, str]:
        """The table's properties, as ``SHOW TBLPROPERTIES`` lists them."""
        return delta.properties(self._location(name))

    def history(self, name: str, limit: int | None = None) -> list[dict[str, Any]]:
        """The table's newest commits (all without ``limit``), as ``DESCRIBE HISTORY``
        returns them (each row as a dict of its columns: a refresh reads a history several
        times, and making a DataFrame of it costs more than reading the log); the commit
        time as ``collect()`` gives a timestamp, naive in this process's time zone."""
        rows = history_rows(self._location(name), limit)
        for row in rows:
            if row["timestamp"] is not None:
                row["timestamp"] = local_wall_clock(row["timestamp"], None)
        return rows

    def schema(self, name: str) -> StructType:
        """The table's schema at its latest version."""
        empty = delta.latest_schema(self._location(name)).empty_table()
        return DataFrame(self.session, empty).schema

    def row_count(self, name: str, version: int | None = None) -> int | None:
        """The rows of the table's latest version (or of ``version``), from each data
        file's statistics less the rows its deletion vector removes (a file's
        ``numRecords`` counts them); None when a file has no statistics (then only reading
        the rows would tell). The files come from sparkshim's own replay of the log
        (``live_files``), kept per table and carried forward through new commits."""
        location = self._location(name)
        return delta.row_count(
            location, delta.latest_version(location) if version is None else version
        )

    def data_file_count(self, name: str) -> int:
        """The data files of the table's latest version (``DESCRIBE DETAIL``'s
        ``numFiles``)."""
        location = self._location(name)
        return len(live_files.at(location, delta.latest_version(location)))

    def removed_row_share(self, name: str) -> float | None:
        """The share of the rows the latest version's data files store that their
        deletion vectors remove (0 without vectors); None when a file has no statistics."""
        location = self._location(name)
        return delta.removed_row_share(location, delta.latest_version(location))

    def _location(self, name: str) -> Path:
        return target_location(self.session, exp.to_table(name, dialect="spark"))
