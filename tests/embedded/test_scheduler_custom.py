"""A REFRESH USING table under the scheduler: its refresh at a tick consumes the changes up
to the tick's data timestamp, no further (the same snapshot as the rest of the graph)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from scheduler_sim import SimClock

from dyntables import DynamicTables
from dyntables.scheduler.core import Scheduler

pytestmark = pytest.mark.embedded


def test_a_tick_hands_a_refresh_using_table_the_changes_up_to_its_data_timestamp(
    tmp_path: Path,
) -> None:
    dt = DynamicTables(warehouse=tmp_path / "warehouse")
    dt.sql("CREATE TABLE src (id INT) USING DELTA")
    dt.sql("INSERT INTO src VALUES (1)")
    dt.sql(
        "CREATE DYNAMIC TABLE log (id INT) TARGET_LAG = '10 seconds'"
        " REFRESH USING (INSERT INTO SELF SELECT id FROM src CHANGES(INFORMATION => APPEND_ONLY))"
    )
    dt.sql("INSERT INTO src VALUES (2)")  # before the tick
    tick_time = (int(time.time()) // 6) * 6 + 6.0
    while time.time() <= tick_time:
        time.sleep(0.05)
    dt.sql("INSERT INTO src VALUES (3)")  # committed after the tick's data timestamp
    report = Scheduler(
        dt.scheduler_runner(),
        SimClock(tick_time),
    ).run_due()
    assert report is not None
    assert report.outcomes["default.log"].state == "SUCCEEDED"
    assert sorted(r[0] for r in dt.sql("SELECT id FROM log").collect()) == [1, 2]
    dt.sql("ALTER DYNAMIC TABLE log REFRESH")  # the next refresh takes the rest, once
    assert sorted(r[0] for r in dt.sql("SELECT id FROM log").collect()) == [1, 2, 3]
