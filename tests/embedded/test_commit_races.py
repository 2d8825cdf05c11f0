"""Commits that race: each one is conditional on the version it read, a loser changes
nothing and says so, and what a crash leaves behind is completed by the next refresh.

The crash and concurrency harness (tests/reliability/) runs whole workloads; these pin
down one race each."""

from __future__ import annotations

import multiprocessing
import signal
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake
from sqlglot import exp

from dyntables import ConcurrentRefreshError, DynamicTables
from dyntables.refresh import Watermark
from dyntables.refresh import context as refresh
from sparkshim import delta
from sparkshim.session import ShimSession

pytestmark = pytest.mark.embedded


@pytest.fixture
def dt(tmp_path: Path) -> DynamicTables:
    tables = DynamicTables(warehouse=tmp_path / "warehouse")
    tables.sql("CREATE TABLE src (id BIGINT, v BIGINT) USING delta")
    tables.sql("INSERT INTO src VALUES (1, 1), (2, 2)")
    tables.sql(
        "CREATE DYNAMIC TABLE f TARGET_LAG = '1 hour' REFRESH_MODE = INCREMENTAL"
        " AS SELECT id, v FROM src WHERE v > 0"
    )
    return tables


def watermark_of(dt: DynamicTables, name: str) -> Watermark:
    state = dt.lifecycle.refresher.last_watermark(exp.to_table(name))
    assert state.watermark is not None
    return state.watermark


def test_a_watermark_move_over_a_newer_refresh_changes_nothing(dt: DynamicTables) -> None:
    """A refresher that read the table before another refresh landed must not put its
    older watermark over the newer one: the next refresh would apply that change again."""
    table = exp.to_table("f")
    fmt = dt.engine.table_format
    stale = dt.lifecycle.refresher.last_watermark(table)
    assert stale.watermark is not None
    dt.sql("INSERT INTO src VALUES (3, 3)")
    dt.sql("ALTER DYNAMIC TABLE f REFRESH")
    newer = watermark_of(dt, "f")
    versions = len(dt.sql("DESCRIBE HISTORY f").collect())
    with pytest.raises(delta.TableMovedError, match="DELTA_CONCURRENT_WRITE"):
        fmt.recommit_watermark(
            dt.engine.refresh_session, table, stale.watermark.to_json(), stale.table_version
        )
    assert len(dt.sql("DESCRIBE HISTORY f").collect()) == versions
    assert watermark_of(dt, "f") == newer
    dt.sql("ALTER DYNAMIC TABLE f REFRESH")
    assert Counter(dt.sql("SELECT * FROM f").collect()) == Counter(
        dt.sql("SELECT id, v FROM src WHERE v > 0").collect()
    )


def test_a_refresh_whose_watermark_move_lost_says_so_and_the_rerun_is_exact(
    dt: DynamicTables, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A change that nets out moves only the watermark; when another refresh commits in
    between, the move fails as a lost race, and the next refresh applies each change
    once."""
    fmt = dt.engine.table_format
    real = fmt.recommit_watermark

    def another_refresh_first(*args: Any) -> None:
        monkeypatch.setattr(fmt, "recommit_watermark", real)
        other = DynamicTables(warehouse=dt.session.catalog_store.warehouse)
        other.sql("INSERT INTO src VALUES (4, 4)")
        other.sql("ALTER DYNAMIC TABLE f REFRESH")
        real(*args)

    dt.sql("UPDATE src SET v = v WHERE id = 1")  # the same row removed and added: nets out
    monkeypatch.setattr(fmt, "recommit_watermark", another_refresh_first)
    with pytest.raises(ConcurrentRefreshError, match="lost a race"):
        dt.sql("ALTER DYNAMIC TABLE f REFRESH")
    dt.sql("ALTER DYNAMIC TABLE f REFRESH")
    assert Counter(dt.sql("SELECT * FROM f").collect()) == Counter(
        dt.sql("SELECT id, v FROM src WHERE v > 0").collect()
    )
    failed = dt.sql(
        "SELECT state_message FROM information_schema.dynamic_table_refresh_history()"
        " WHERE state = 'FAILED'"
    ).collect()
    assert [row[0].split(":")[0] for row in failed] == [
        "refresh of dynamic table default.f lost a race"
    ]


@pytest.mark.parametrize("overwrite", [False, True])
def test_a_commit_landing_after_the_version_check_fails_the_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, overwrite: bool
) -> None:
    """The version a conditional write read is checked on the table it commits on top of,
    so a commit that lands after the first check fails the write instead of passing."""
    session = ShimSession(warehouse=tmp_path)
    session.sql("CREATE TABLE t (id BIGINT) USING delta")
    session.sql("INSERT INTO t VALUES (1)")
    path = tmp_path / "t"
    read = DeltaTable(str(path)).version()
    real_check = delta.check_expected_version

    def another_commit_after_the_check(*args: Any) -> None:
        real_check(*args)
        write_deltalake(str(path), pa.table({"id": pa.array([7], pa.int64())}), mode="append")

    monkeypatch.setattr(delta, "check_expected_version", another_commit_after_the_check)
    rows = pa.table({"id": pa.array(range(200_000), pa.int64())})  # through delta-rs
    options = delta.CommitOptions(expected_version=read)
    with pytest.raises(delta.TableMovedError, match="DELTA_CONCURRENT_WRITE"):
        delta.write(path, rows, overwrite=overwrite, options=options)
    assert sorted(DeltaTable(str(path)).to_pyarrow_table()["id"].to_pylist()) == [1, 7]
    with pytest.raises(delta.TableMovedError):
        delta.set_properties(path, {"k": "v"}, delta.CommitOptions(expected_version=read))
    assert "k" not in DeltaTable(str(path)).metadata().configuration


def _create_when_released(warehouse: str, barrier: Any) -> None:
    tables = DynamicTables(warehouse=warehouse)
    barrier.wait(60)
    tables.system.ensure()
    tables.sql("CREATE TABLE IF NOT EXISTS shared (id INT) USING delta")


def test_processes_creating_the_same_tables_at_once_all_succeed(tmp_path: Path) -> None:
    """System tables, the lease table and a user's CREATE TABLE IF NOT EXISTS: every
    process creates what it needs on first use, and losing that race is no error."""
    context = multiprocessing.get_context("spawn")  # delta-rs must not be forked
    for attempt in range(4):
        warehouse = str(tmp_path / f"warehouse{attempt}")
        barrier = context.Barrier(3)
        workers = [
            context.Process(target=_create_when_released, args=(warehouse, barrier))
            for _ in range(3)
        ]
        for process in workers:
            process.start()
        for process in workers:
            process.join(120)
        assert [process.exitcode for process in workers] == [0, 0, 0]
        tables = DynamicTables(warehouse=warehouse)
        assert tables.sql("SELECT count(*) FROM shared").collect()[0][0] == 0
        assert len(tables.sql("DESCRIBE HISTORY dyntables_system.refresh_history").collect()) == 1


KILLED_BEFORE_THE_HISTORY_ROW = """
import os, signal, sys
from dyntables import DynamicTables, history

def killed(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)

dt = DynamicTables(warehouse=sys.argv[1])
history.SystemTables.record_refresh = killed
dt.sql("ALTER DYNAMIC TABLE f REFRESH")
"""


def test_a_refresh_killed_before_its_history_row_gets_it_on_recovery(
    dt: DynamicTables, monkeypatch: pytest.MonkeyPatch
) -> None:
    dt.sql("INSERT INTO src VALUES (6, 6)")
    script = textwrap.dedent(KILLED_BEFORE_THE_HISTORY_ROW)
    warehouse = str(dt.session.catalog_store.warehouse)
    child = subprocess.run([sys.executable, "-c", script, warehouse], check=False, timeout=300)
    assert child.returncode == -signal.SIGKILL
    committed = watermark_of(dt, "f")
    history = "SELECT * FROM information_schema.dynamic_table_refresh_history()"

    def rows_of(refresh_id: str) -> list[Any]:
        return [row for row in dt.sql(history).collect() if row["query_id"] == refresh_id]

    assert rows_of(committed.refresh_id) == []
    # Within the grace period the refresh's own process may still record it: no row yet.
    recovering = DynamicTables(warehouse=warehouse)
    assert recovering.sql("ALTER DYNAMIC TABLE f REFRESH").collect()[0]["action"] == "NO_DATA"
    assert rows_of(committed.refresh_id) == []
    monkeypatch.setattr(refresh, "HISTORY_RECOVERY_GRACE", refresh.datetime.timedelta(0))
    for _ in range(2):  # recorded once, then known
        recovering.sql("ALTER DYNAMIC TABLE f REFRESH")
        DynamicTables(warehouse=warehouse).sql("ALTER DYNAMIC TABLE f REFRESH")
    recovered = rows_of(committed.refresh_id)
    assert len(recovered) == 1
    row = recovered[0]
    assert (row["state"], row["refresh_action"], row["refresh_trigger"]) == (
        "SUCCEEDED",
        "INCREMENTAL",
        "MANUAL",
    )
    assert row["state_message"].startswith("recorded on recovery")
    assert Counter(dt.sql("SELECT * FROM f").collect()) == Counter(
        dt.sql("SELECT id, v FROM src WHERE v > 0").collect()
    )
