"""The harness's checks catch what they are there to catch: each invariant fails on a fault
planted behind the library's back (a duplicated row, a lost history row, a source row the
driver never landed, a running total applied twice), and its helpers read statements and
messages as intended."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest

from .harness import DATABASE, Warehouse
from .invariants import Checker, looks_raw, multiset_difference
from .killpoints import (
    COMPACTION,
    HISTORY_APPEND,
    LEASE_WRITE,
    REFRESH_COMMIT,
    SOURCE_DML,
    WATERMARK_ONLY,
    classify,
    parse_progress,
    point_of,
)

WATERMARK = '{"action": "INCREMENTAL", "dyntables": 1}'


@pytest.mark.embedded
def test_every_invariant_fails_on_a_planted_fault(tmp_path: Path) -> None:
    warehouse = Warehouse(tmp_path / "warehouse", random.Random(1))
    warehouse.create()
    for _ in range(6):
        warehouse.land_one()
    for name in ("f_dt", "totals"):
        warehouse.writer.sql(f"ALTER DYNAMIC TABLE {name} REFRESH")
    clean = warehouse.checker("clean")
    assert clean.right_after_a_kill().violations == []
    assert clean.after_recovery().violations == []

    raw = warehouse.writer.session  # behind the library's back
    raw.sql("INSERT INTO f_dt SELECT * FROM f_dt LIMIT 1")
    raw.sql("UPDATE totals SET total_score = 2 * total_score WHERE player_id = 1")
    raw.sql("INSERT INTO src VALUES (-1, 1, 1)")
    g_dt_refresh = warehouse.writer.lifecycle.watermark_of(clean.table("g_dt"))
    assert g_dt_refresh is not None
    raw.sql(
        f"DELETE FROM dyntables_system.refresh_history WHERE query_id = '{g_dt_refresh.refresh_id}'"
    )

    checker = Checker(warehouse.checker("planted").dt, database=DATABASE, model=warehouse.model)
    result = checker.after_recovery()
    found = {(v.invariant, v.table) for v in result.violations}
    assert found == {("1", "f_dt"), ("2", "totals"), ("3", "src"), ("4", "g_dt")}
    duplicated = [v for v in result.violations if v.table == "f_dt"]
    assert "1 duplicated" in duplicated[0].detail

    # The next trial starts afresh: the wrong tables are created again (their old history
    # rows are not theirs) and the model takes src as it is; the lost row stays lost.
    assert warehouse.repair(result) == [
        "recreated f_dt",
        "recreated totals",
        "took src as it is",
    ]
    after = warehouse.checker("repaired").after_recovery().violations
    assert {(v.invariant, v.table) for v in after} == {("4", "g_dt")}


def test_statements_are_read_as_the_commits_they_are() -> None:
    assert classify("SELECT 1", None) is None
    assert classify("DESCRIBE HISTORY default.f_dt LIMIT 1", None) is None
    assert classify("INSERT INTO default.f_dt SELECT 1", WATERMARK) == (
        REFRESH_COMMIT,
        "default.f_dt",
    )
    assert classify("MERGE INTO `default`.`g_dt` AS t USING s ON", WATERMARK) == (
        REFRESH_COMMIT,
        "default.g_dt",
    )
    move = "ALTER TABLE default.f_dt SET TBLPROPERTIES ('a' = 'b')"
    assert classify(move, WATERMARK) == (WATERMARK_ONLY, "default.f_dt")
    append = "INSERT INTO dyntables_system.refresh_history SELECT *"
    assert classify(append, None) == (HISTORY_APPEND, "dyntables_system.refresh_history")
    lease = "INSERT OVERWRITE TABLE dyntables_system.scheduler_lease SELECT 1"
    assert classify(lease, '{"dyntables_lease": "x"}') == (
        LEASE_WRITE,
        "dyntables_system.scheduler_lease",
    )
    assert classify("OPTIMIZE src", None) == (COMPACTION, "src")
    assert classify("UPDATE src SET v = v + 1", None) == (SOURCE_DML, "src")


def test_where_a_worker_died_is_read_from_its_progress() -> None:
    progress = parse_progress("GO\nSTEP refresh f_dt\nB 1 refresh-commit statement default.f_dt\n")
    assert point_of(progress)[0] == "refresh-commit/during"
    event = "1 refresh-commit log-link default.f_dt"
    progress = parse_progress(f"GO\nB {event}\nA {event}\n")
    assert point_of(progress)[0] == "refresh-commit:log-link/after"
    progress = parse_progress("GO\nSTEP optimize src\n")
    assert point_of(progress)[0] == "between-commits:optimize"
    killed = "KILL after 7 watermark-only statement default.j_dt\n"
    assert point_of(parse_progress(killed))[0] == "watermark-only/after"


def test_messages_that_leak_internals_are_told_apart() -> None:
    assert looks_raw("refresh of dynamic table default.f_dt failed: 'default.src'")
    assert looks_raw("No such file: /tmp/w/f_dt/_delta_log/00000000000000000004.json")
    assert looks_raw("Generic DeltaTable error: version 4 already exists")
    assert looks_raw("Binder Error: column x not found")
    assert (
        looks_raw(
            "a concurrent refresh of default.f_dt committed first; this refresh changed"
            " nothing: run it again"
        )
        is None
    )


def test_a_multiset_difference_names_missing_extra_and_duplicated_rows() -> None:
    expected = Counter({(1, "a"): 1, (2, "b"): 1})
    assert multiset_difference(expected, Counter(expected)) == ("", 0)
    text, duplicated = multiset_difference(expected, Counter({(1, "a"): 3, (3, "c"): 1}))
    assert duplicated == 2
    assert "missing 1: (2, 'b')" in text
    assert "extra 3" in text
