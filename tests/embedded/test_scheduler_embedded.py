"""The scheduler on the embedded engine: a real-time two-level chain, auto-suspend and
RESUME through SHOW, the information_schema functions, and the command line."""

from __future__ import annotations

import datetime
import json
import time
from pathlib import Path
from typing import Any

import pytest
from scheduler_sim import SimClock

from dyntables import DynamicTables
from dyntables.cli import main
from dyntables.errors import DynamicTableError
from dyntables.scheduler.core import (
    SUSPENDED_DUE_TO_ERRORS,
    UPSTREAM_SUSPENDED_DUE_TO_ERRORS,
    Scheduler,
)
from dyntables.scheduler.lease import Lease

pytestmark = pytest.mark.embedded


@pytest.fixture
def dt(tmp_path: Path) -> DynamicTables:
    return DynamicTables(warehouse=tmp_path / "warehouse")


def history(dt: DynamicTables, name: str) -> list[Any]:
    return dt.sql(
        "SELECT state, refresh_trigger, refresh_action, data_timestamp, refresh_start_time,"
        " refresh_end_time, rows_inserted, state_message"
        f" FROM information_schema.dynamic_table_refresh_history(NAME => '{name}')"
        " ORDER BY refresh_start_time"
    ).collect()


def show(dt: DynamicTables) -> dict[str, Any]:
    return {row["name"]: row for row in dt.sql("SHOW DYNAMIC TABLES").collect()}


def test_rows_inserted_into_a_source_reach_a_two_level_chain_within_the_target_lag(
    dt: DynamicTables,
) -> None:
    dt.sql("CREATE TABLE src (id INT, amount INT) USING DELTA")
    dt.sql("INSERT INTO src VALUES (1, 10)")
    dt.sql("CREATE DYNAMIC TABLE level1 TARGET_LAG = '2 seconds' AS SELECT id, amount FROM src")
    dt.sql(
        "CREATE DYNAMIC TABLE level2 TARGET_LAG = '4 seconds'"
        " AS SELECT count(*) AS n, sum(amount) AS total FROM level1"
    )
    dt.start(lease_seconds=10, poll_seconds=1)
    try:
        with pytest.raises(DynamicTableError, match="already running"):
            dt.start()
        waits = []
        for batch in range(2, 5):
            dt.sql(f"INSERT INTO src VALUES ({batch}, {batch * 10})")
            inserted = time.time()
            while time.time() - inserted < 15:
                if dt.sql("SELECT n FROM level2").collect()[0][0] == batch:
                    break
                time.sleep(0.1)
            waits.append(time.time() - inserted)
            time.sleep(0.5)
    finally:
        dt.stop()
    assert max(waits) <= 4.0, f"took {waits} s against a target lag of 4 s"
    assert dt.sql("SELECT total FROM level2").collect()[0][0] == 100
    # Every scheduled level2 refresh read level1 as refreshed at its own data timestamp.
    level1 = {row["data_timestamp"]: row for row in history(dt, "level1")}
    scheduled = [row for row in history(dt, "level2") if row["refresh_trigger"] == "SCHEDULED"]
    assert scheduled
    for row in scheduled:
        upstream = level1[row["data_timestamp"]]
        assert upstream["state"] == "SUCCEEDED"
        assert upstream["refresh_end_time"] <= row["refresh_start_time"]
    # Both levels show the same data timestamp for level2's latest refresh.
    lags = {
        row["name"]: row
        for row in dt.sql("SELECT * FROM information_schema.dynamic_tables()").collect()
    }
    assert lags["level2"]["data_timestamp"] in level1
    assert lags["level2"]["target_lag_sec"] == 4
    assert lags["level2"]["refresh_period_sec"] == 3.0
    assert 0 < lags["level2"]["maximum_lag_sec"] <= 4.0
    assert lags["level2"]["time_within_target_lag_ratio"] == 1.0
    assert lags["level2"]["last_completed_refresh_state"] == "SUCCEEDED"


def test_failing_refreshes_suspend_the_table_and_its_consumers_until_resume(
    dt: DynamicTables,
) -> None:
    dt.sql("CREATE TABLE src (id INT) USING DELTA")
    dt.sql("INSERT INTO src VALUES (1)")
    dt.sql("CREATE DYNAMIC TABLE fragile TARGET_LAG = '10 seconds' AS SELECT id FROM src")
    dt.sql("CREATE DYNAMIC TABLE consumer TARGET_LAG = '20 seconds' AS SELECT id FROM fragile")
    dt.sql("CREATE DYNAMIC TABLE fine TARGET_LAG = '10 seconds' AS SELECT 1 AS one FROM src")
    dt.sql("DROP TABLE src")  # every refresh reading it fails from now on
    clock = SimClock(time.time())
    scheduler = Scheduler(dt.scheduler_runner(), clock)
    for _ in range(12):
        clock.time += 6  # one tick of the 10-second lag's period
        scheduler.run_due()
    rows = show(dt)
    assert rows["fragile"]["scheduling_state"] == "SUSPENDED"
    assert rows["fragile"]["suspend_reason"].startswith(f"{SUSPENDED_DUE_TO_ERRORS}: 5 consec")
    assert rows["consumer"]["scheduling_state"] == "SUSPENDED"
    assert rows["consumer"]["suspend_reason"] == (
        f"{UPSTREAM_SUSPENDED_DUE_TO_ERRORS}: default.fragile"
    )
    failures = [r for r in history(dt, "fragile") if r["refresh_trigger"] == "SCHEDULED"]
    assert [r["state"] for r in failures] == ["FAILED"] * 5
    assert "src" in failures[0]["state_message"]
    consumer_rows = [
        r["state"] for r in history(dt, "consumer") if r["refresh_trigger"] != "CREATION"
    ]
    assert set(consumer_rows) == {"UPSTREAM_FAILED"}
    dt.sql("ALTER DYNAMIC TABLE fragile RESUME")
    rows = show(dt)
    assert rows["fragile"]["scheduling_state"] == "ACTIVE"
    assert rows["fragile"]["suspend_reason"] is None
    assert rows["consumer"]["scheduling_state"] == "ACTIVE"  # resumed with it
    runner = dt.scheduler_runner()
    assert runner.consecutive_failures().get("default.fragile", 0) == 0


def test_manual_refreshes_do_not_count_towards_auto_suspend(dt: DynamicTables) -> None:
    dt.sql("CREATE TABLE src (id INT) USING DELTA")
    dt.sql("CREATE DYNAMIC TABLE fragile TARGET_LAG = '10 seconds' AS SELECT id FROM src")
    dt.sql("DROP TABLE src")
    for _ in range(6):
        with pytest.raises(DynamicTableError, match="src"):
            dt.sql("ALTER DYNAMIC TABLE fragile REFRESH")
    runner = dt.scheduler_runner()
    assert runner.consecutive_failures() == {}
    assert show(dt)["fragile"]["scheduling_state"] == "ACTIVE"


def test_a_tick_reads_every_source_as_of_its_data_timestamp(dt: DynamicTables) -> None:
    dt.sql("CREATE TABLE src (id INT) USING DELTA")
    dt.sql("INSERT INTO src VALUES (1)")
    dt.sql("CREATE DYNAMIC TABLE copy TARGET_LAG = '10 seconds' AS SELECT id FROM src")
    clock = SimClock(time.time())
    clock.time = (int(time.time()) // 6) * 6 + 6.0  # the next tick, before the insert below
    tick_time = clock.time
    while time.time() <= tick_time:
        time.sleep(0.05)
    dt.sql("INSERT INTO src VALUES (2)")  # committed after the tick's data timestamp
    report = Scheduler(dt.scheduler_runner(), clock).run_due()
    assert report is not None
    assert report.data_timestamp == tick_time
    assert report.outcomes["default.copy"].state == "SUCCEEDED"
    assert [r[0] for r in dt.sql("SELECT id FROM copy").collect()] == [1]
    stamp = show(dt)["copy"]["data_timestamp"]
    assert stamp == datetime.datetime.fromtimestamp(tick_time, datetime.timezone.utc).replace(
        tzinfo=None
    )


def test_graph_history_lists_each_tables_inputs_and_state(
    dt: DynamicTables, tmp_path: Path
) -> None:
    dt.sql("CREATE TABLE src (id INT) USING DELTA")
    dt.sql("CREATE DYNAMIC TABLE d1 TARGET_LAG = DOWNSTREAM AS SELECT id FROM src")
    dt.sql("CREATE DYNAMIC TABLE d2 TARGET_LAG = '1 minute' AS SELECT count(*) AS n FROM d1")
    rows = {
        row["name"]: row
        for row in dt.sql(
            "SELECT * FROM TABLE(information_schema.dynamic_table_graph_history())"
        ).collect()
    }
    assert json.loads(rows["d2"]["inputs"]) == [{"name": "default.d1", "kind": "DYNAMIC_TABLE"}]
    assert json.loads(rows["d1"]["inputs"]) == [{"name": "default.src", "kind": "TABLE"}]
    assert rows["d1"]["target_lag_type"] == "DOWNSTREAM"
    assert rows["d2"]["target_lag_sec"] == 60
    assert rows["d2"]["scheduling_state"] == "ACTIVE"
    assert rows["d2"]["last_completed_refresh_state"] == "SUCCEEDED"
    one = dt.sql("SELECT name FROM information_schema.dynamic_tables(NAME => 'd1')").collect()
    assert [r[0] for r in one] == ["d1"]
    text = dt.graph().to_text()
    assert "default.d2  lag 1 minute (every 48 s)" in text
    picture = dt.graph().save(tmp_path / "dag.png")
    assert picture.read_bytes().startswith(b"\x89PNG")
    svg = dt.graph().to_svg()
    assert svg.startswith("<svg")
    assert "default.d1" in svg


def test_scheduler_run_once_refreshes_what_is_due(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    warehouse = tmp_path / "warehouse"
    dt = DynamicTables(warehouse=warehouse)
    dt.sql("CREATE TABLE src (id INT) USING DELTA")
    dt.sql("CREATE DYNAMIC TABLE d1 TARGET_LAG = '1 second' AS SELECT id FROM src")
    time.sleep(1.6)  # a tick of its 0.75 s period has passed since creation
    assert main(["scheduler", "run", "--once", "--warehouse", str(warehouse)]) == 0
    scheduled = [r for r in history(dt, "d1") if r["refresh_trigger"] == "SCHEDULED"]
    assert [r["state"] for r in scheduled] == ["SUCCEEDED"]
    assert main(["status", "--warehouse", str(warehouse)]) == 0
    assert "default.d1  lag 1 second (every 0.75 s)" in capsys.readouterr().out


def test_scheduler_run_once_exits_0_naming_the_lease_holder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    warehouse = tmp_path / "warehouse"
    dt = DynamicTables(warehouse=warehouse)
    dt.sql("CREATE TABLE src (id INT) USING DELTA")
    dt.sql("CREATE DYNAMIC TABLE d1 TARGET_LAG = '1 second' AS SELECT id FROM src")
    other = Lease(dt.engine, dt.system, SimClock(time.time()), 3600, holder="the-other-one")
    assert other.acquire() is None
    assert main(["scheduler", "run", "--once", "--warehouse", str(warehouse)]) == 0
    assert "the scheduler lease is held by the-other-one" in capsys.readouterr().out
    other.release()
    assert main(["scheduler", "run", "--once", "--warehouse", str(warehouse)]) == 0
