"""Two scheduler processes on one warehouse: one active, one standby; kill the active one
and the standby takes over when the lease expires, refreshing no table twice for a tick."""

from __future__ import annotations

import collections
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from dyntables import DynamicTables

pytestmark = pytest.mark.embedded

LEASE_SECONDS = 3.0


def wait_for(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.1)


@pytest.fixture
def schedulers(tmp_path: Path) -> Iterator[Callable[[str], subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    warehouse = tmp_path / "warehouse"

    def start(name: str) -> subprocess.Popen[bytes]:
        log = (tmp_path / f"{name}.log").open("wb")
        command = [
            sys.executable,
            "-m",
            "dyntables",
            "scheduler",
            "run",
            "--warehouse",
            str(warehouse),
            "--lease-seconds",
            str(LEASE_SECONDS),
            "--poll-seconds",
            "0.5",
        ]
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        started.append(process)
        return process

    yield start
    for process in started:  # bounded: nothing outlives the test
        if process.poll() is None:
            process.kill()
            process.wait(10)


def test_standby_takes_over_when_the_active_scheduler_dies(
    tmp_path: Path, schedulers: Callable[[str], subprocess.Popen[bytes]]
) -> None:
    dt = DynamicTables(warehouse=tmp_path / "warehouse")
    dt.sql("CREATE TABLE src (id INT) USING DELTA")
    dt.sql("INSERT INTO src VALUES (1)")
    dt.sql("CREATE DYNAMIC TABLE level1 TARGET_LAG = '2 seconds' AS SELECT id FROM src")
    dt.sql("CREATE DYNAMIC TABLE level2 TARGET_LAG = '4 seconds' AS SELECT count(*) n FROM level1")
    first, second = schedulers("first"), schedulers("second")
    logs = {first.pid: tmp_path / "first.log", second.pid: tmp_path / "second.log"}

    def active(process: subprocess.Popen[bytes]) -> bool:
        return "active: holding the scheduler lease" in logs[process.pid].read_text()

    wait_for(lambda: active(first) or active(second), 60, "a scheduler to become active")
    leader, standby = (first, second) if active(first) else (second, first)
    wait_for(lambda: "standby:" in logs[standby.pid].read_text(), 30, "the standby to wait")
    assert not active(standby)
    time.sleep(2)  # the leader refreshes a few ticks
    os.kill(leader.pid, signal.SIGKILL)
    leader.wait(10)
    # Once the lease expires; the bound only keeps a hang from lasting (a busy machine
    # may be slow to schedule the standby's next poll).
    wait_for(lambda: active(standby), 20 * LEASE_SECONDS + 60, "the standby to take over")
    dt.sql("INSERT INTO src VALUES (2)")
    wait_for(lambda: dt.sql("SELECT n FROM level2").collect()[0][0] == 2, 20, "the new row")
    standby.send_signal(signal.SIGTERM)
    assert standby.wait(30) == 0
    assert "SIGTERM: stopping after the refresh in flight" in logs[standby.pid].read_text()
    rows = dt.sql(
        "SELECT name, data_timestamp FROM information_schema.dynamic_table_refresh_history()"
        " WHERE refresh_trigger = 'SCHEDULED' AND state <> 'SKIPPED'"
    ).collect()
    ticks = collections.Counter((row[0], row[1]) for row in rows)
    assert ticks, "no scheduled refresh at all"
    assert [key for key, count in ticks.items() if count > 1] == []
    # The clean exit released the lease: the next scheduler is active at once.
    lease = dt.sql("SELECT expires_at, renewed_at FROM dyntables_system.scheduler_lease").collect()
    assert lease[0][0] == lease[0][1]
