"""Compaction of the tables dyntables writes to, as they accumulate small files.

Every refresh that commits adds files to its dynamic table (an incremental refresh
appends one, or rewrites the files its MERGE touches), and every refresh adds a file to
``dyntables_system.refresh_history``. A table refreshed every minute gains 1,440 files a
day, and each read of it (a query, a downstream refresh, SHOW) opens all of them. So a
table this process commits to is compacted once it holds ``COMPACT_AT_FILES`` data files
or more: Delta's ``OPTIMIZE``, Iceberg's ``rewrite_data_files``, a commit that changes no
row, which refreshes and change feeds ignore. A Delta table is compacted too once the rows
its deletion vectors remove reach ``PURGE_AT_SHARE`` of the rows its files store (where
the engine reads that from the log without a statement: the embedded engine): every read
of a file skips its removed rows by position, so a vector that keeps growing (a refresh's
MERGE adds to it) costs each read more; ``OPTIMIZE`` writes such files again without them.
Both are checked at a table's first commit by this process, after every ``CHECK_EVERY``
of its commits, and after a commit that removed ``CHECK_AT_REMOVED_ROWS`` rows or more (a
refresh whose MERGE replaces a large part of the table grows its vectors by that part each
time; next to such a commit the check costs nothing worth counting).

Compaction is housekeeping: when it fails (another process compacting or refreshing the
same table at the same moment wins the race), a warning is logged on
``dyntables.compaction`` and the commit that triggered it stands; the next check tries
again. The files a compaction replaced stay on disk until a ``VACUUM`` (Iceberg: snapshot
expiry) removes them.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from sqlglot import exp

from dyntables.catalog import table_key
from dyntables.engine import Engine

# A table is compacted once it holds this many data files ...
COMPACT_AT_FILES = 50
# ... or once its deletion vectors remove this share of the rows its files store ...
PURGE_AT_SHARE = 0.25
# ... checked at its first commit by this process, after every this many commits ...
CHECK_EVERY = 10
# ... and after a commit that removed this many rows or more.
CHECK_AT_REMOVED_ROWS = 100_000

log = logging.getLogger("dyntables.compaction")


class Compactor:
    """Counts this process's commits per table, and compacts a table when it is due."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        # Commits to each table (by key) since its file count was last checked.
        self._unchecked: dict[str, int] = {}
        self._lock = threading.Lock()

    def committed(
        self,
        table: exp.Table,
        session: Any,
        data_files: int | None = None,
        rows_removed: int | None = None,
    ) -> None:
        """Count one commit to ``table``; check (and compact) it through ``session`` at
        its first commit, every ``CHECK_EVERY`` commits, and after a commit that removed
        ``CHECK_AT_REMOVED_ROWS`` rows or more (``data_files``: the files it reads after the
        commit, where the commit's metadata said; else they are counted)."""
        key = table_key(table)
        removed_many = (rows_removed or 0) >= CHECK_AT_REMOVED_ROWS
        with self._lock:
            unchecked = self._unchecked.get(key)
            due = removed_many or unchecked is None or unchecked + 1 >= CHECK_EVERY
            self._unchecked[key] = 0 if due else (unchecked or 0) + 1
        if due:
            self.compact_if_due(table, session, data_files)

    def compact_if_due(self, table: exp.Table, session: Any, data_files: int | None = None) -> None:
        """Compact ``table`` if it holds ``COMPACT_AT_FILES`` data files or more, or its
        deletion vectors remove ``PURGE_AT_SHARE`` of its stored rows or more."""
        table_format = self.engine.table_format
        try:
            if data_files is None:
                data_files = table_format.data_file_count(session, table)
            if data_files < COMPACT_AT_FILES:
                share = table_format.removed_row_share(session, table)
                if share is None or share < PURGE_AT_SHARE:
                    return
            table_format.compact(session, table)
            table_format.forget_cached(self.engine.session, table)
        except Exception as failure:  # any engine's error: see the module's docstring
            log.warning("could not compact %s: %s", table_key(table), failure)
