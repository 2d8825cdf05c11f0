"""How many engine statements a refresh, an idle scheduler tick and SHOW run on the embedded
engine (every ``session.sql`` on the user's and the refresh session): counts are
deterministic, so a change that adds a statement fails here. The bounds: NO_DATA at most 3,
an incremental refresh at most 10, a tick over N tables at most N + 10, SHOW at most N + 5;
the embedded engine reads its tables' metadata from their Delta logs (no statement)."""

from __future__ import annotations

from pathlib import Path

import pytest
from statement_counts import build_pipeline, measure_pipeline

from dyntables import DynamicTables

pytestmark = pytest.mark.embedded

TABLES = 5  # four filters and a GROUP BY


def test_statements_of_refreshes_ticks_and_show(tmp_path: Path) -> None:
    warehouse = tmp_path / "warehouse"
    build_pipeline(DynamicTables(warehouse=warehouse), TABLES, "delta")
    measured = measure_pipeline(DynamicTables(warehouse=warehouse), TABLES)  # a new process
    assert {name: statements for name, (statements, _) in measured.items()} == {
        # The system tables made sure of, history checked (the table's file count for
        # compaction comes from its log).
        "NO_DATA, first in a process": 5,
        "NO_DATA": 1,  # its history row
        # The change feed is read inside the statement that reads it once (the net change,
        # the affected groups), not computed into a view first. A summary is computed by
        # the statement computing the rows it summarizes (as windows over its result;
        # Spark observes it in the job), and the GROUP BY's rows inserted and deleted come
        # from its summary.
        # Filter: the net change and its history row; the change is written by the
        # embedded engine's counted write (no summary, no count of the copies held, no
        # MERGE).
        "incremental filter": 2,
        # GROUP BY: a history row checked, the affected groups computed straight into
        # the rows the table loses and gains, with their summary (the counted write takes
        # them as they are: no statement nets them, no MERGE), its history row.
        "incremental GROUP BY": 3,
        "idle tick": 3,  # the listing (2) and the tick's history rows (1)
        "SHOW": 2,
        # The query's schema, CREATE TABLE, the first refresh's INSERT OVERWRITE (rows
        # before and after from the Delta log), its history row.
        "CREATE": 4,
    }
