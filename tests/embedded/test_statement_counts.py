"""How many engine statements a refresh, an idle scheduler tick and SHOW run on the embedded
engine (every ``session.sql`` on the user's and the refresh session): counts are
deterministic, so a change that adds a statement fails here and says which. The counts are
the ones measured now; issue 21's bounds (NO_DATA at most 3, an incremental refresh at most
10, a tick over N tables at most N + 10, SHOW at most N + 5) are the direction they move."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from scheduler_sim import SimClock
from statement_counts import counting

from dyntables import DynamicTables
from dyntables.scheduler.core import Scheduler
from dyntables.scheduler.runner import EngineRunner

pytestmark = pytest.mark.embedded

FILTERS = 4  # dynamic tables that filter the source, besides one GROUP BY


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("counts") / "warehouse"
    tables = DynamicTables(warehouse=path)
    tables.sql("CREATE TABLE src (k INT, g STRING, v BIGINT) USING delta")
    tables.sql("INSERT INTO src SELECT id, CAST(id % 10 AS STRING), id FROM range(1000)")
    for i in range(FILTERS):
        tables.sql(
            f"CREATE DYNAMIC TABLE f{i} TARGET_LAG = '1 minute' REFRESH_MODE = INCREMENTAL"
            f" AS SELECT k, v FROM src WHERE v % {i + 2} = 0"
        )
    tables.sql(
        "CREATE DYNAMIC TABLE g TARGET_LAG = '1 minute' REFRESH_MODE = INCREMENTAL"
        " AS SELECT g, count(*) AS n, sum(v) AS s FROM src GROUP BY g"
    )
    return path


def _counted(tables: DynamicTables, statement: str) -> list[str]:
    with counting(tables) as seen:
        tables.sql(statement).collect()
    return seen


def test_statements_of_refreshes_ticks_and_show(warehouse: Path) -> None:
    tables = DynamicTables(warehouse=warehouse)  # a new process: it knows nothing yet
    counts = {
        "NO_DATA, first in a process": len(_counted(tables, "ALTER DYNAMIC TABLE f0 REFRESH")),
        "NO_DATA": len(_counted(tables, "ALTER DYNAMIC TABLE f0 REFRESH")),
    }
    tables.sql("UPDATE src SET v = v + 1 WHERE k < 10")
    counts["incremental filter"] = len(_counted(tables, "ALTER DYNAMIC TABLE f0 REFRESH"))
    counts["incremental GROUP BY"] = len(_counted(tables, "ALTER DYNAMIC TABLE g REFRESH"))
    for i in range(1, FILTERS):
        tables.sql(f"ALTER DYNAMIC TABLE f{i} REFRESH")
    clock = SimClock((int(time.time()) // 60 + 2) * 60.0)  # on the tick grid, ahead
    runner = EngineRunner(
        tables.engine, tables.system, tables.lifecycle, tables.lifecycle.refresher
    )
    scheduler = Scheduler(runner, clock)
    scheduler.run_due()  # the first tick also reads what the history says
    clock.time += 60
    with counting(tables) as tick:
        scheduler.run_due()
    counts["idle tick"] = len(tick)
    counts["SHOW"] = len(_counted(tables, "SHOW DYNAMIC TABLES"))
    assert counts == {
        "NO_DATA, first in a process": 12,
        "NO_DATA": 5,
        "incremental filter": 15,
        "incremental GROUP BY": 14,
        "idle tick": 34,
        "SHOW": 23,
    }
