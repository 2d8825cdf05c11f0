"""Counting the engine statements an operation runs: every ``session.sql`` call on the
user's session and on the refresh session, in order. Statement counts are deterministic
(unlike times) and each statement has a fixed cost (on Spark 100 ms or more), so the count
tests of each engine tier fail when a refresh, a tick or a listing gains one."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from dyntables import DynamicTables


@contextmanager
def counting(tables: DynamicTables) -> Iterator[list[str]]:
    """The statements run inside the block, as one-line texts."""
    seen: list[str] = []
    sessions = {id(s): s for s in (tables.engine.session, tables.engine.refresh_session)}
    originals = {key: session.sql for key, session in sessions.items()}

    def recorder(real: Callable[..., Any]) -> Callable[..., Any]:
        def sql(text: str, *args: Any, **kwargs: Any) -> Any:
            seen.append(" ".join(str(text).split()))
            return real(text, *args, **kwargs)

        return sql

    for key, session in sessions.items():
        session.sql = recorder(originals[key])
    try:
        yield seen
    finally:
        for key, session in sessions.items():
            session.sql = originals[key]


# Shared by the count tests of each engine tier and benchmarks/bench_statements.py.

Measure = tuple[int, float]  # statements, seconds


def build_pipeline(tables: DynamicTables, count: int, using: str) -> None:
    """A source of 1,000 rows and ``count`` dynamic tables reading it: ``count - 1`` filters
    and one GROUP BY, all INCREMENTAL."""
    tables.sql(f"CREATE TABLE src (k INT, g STRING, v BIGINT) USING {using}")
    tables.sql("INSERT INTO src SELECT id, CAST(id % 10 AS STRING), id FROM range(1000)")
    for i in range(count - 1):
        tables.sql(
            f"CREATE DYNAMIC TABLE f{i} TARGET_LAG = '1 minute' REFRESH_MODE = INCREMENTAL"
            f" AS SELECT k, v FROM src WHERE v % {i + 2} = 0"
        )
    tables.sql(
        "CREATE DYNAMIC TABLE g TARGET_LAG = '1 minute' REFRESH_MODE = INCREMENTAL"
        " AS SELECT g, count(*) AS n, sum(v) AS s FROM src GROUP BY g"
    )


def timed(tables: DynamicTables, action: Callable[[], Any]) -> Measure:
    """The statements ``action`` runs, and its time."""
    with counting(tables) as seen:
        started = time.perf_counter()
        action()
        elapsed = time.perf_counter() - started
    return len(seen), elapsed


def idle_tick(tables: DynamicTables) -> Measure:
    """A scheduler tick where nothing changed, after one that refreshed what was owed (and
    read what the history says), over every dynamic table of the catalog."""
    from scheduler_sim import SimClock

    from dyntables.scheduler.core import Scheduler

    clock = SimClock((int(time.time()) // 60 + 2) * 60.0)  # on the tick grid, ahead
    scheduler = Scheduler(tables.scheduler_runner(), clock)
    scheduler.run_due()
    clock.time += 60
    return timed(tables, scheduler.run_due)


def measure_pipeline(tables: DynamicTables, count: int) -> dict[str, Measure]:
    """The statements and time of: the first refresh in this process (NO_DATA), a NO_DATA
    refresh, incremental refreshes of a filter and the GROUP BY after 10 rows are updated,
    an idle scheduler tick over the ``count`` tables, SHOW DYNAMIC TABLES, and the CREATE
    of one more dynamic table (its checks, the table, its first refresh)."""

    def refresh(name: str) -> Callable[[], Any]:
        return lambda: tables.sql(f"ALTER DYNAMIC TABLE {name} REFRESH").collect()

    results = {"NO_DATA, first in a process": timed(tables, refresh("f0"))}
    results["NO_DATA"] = timed(tables, refresh("f0"))
    tables.sql("UPDATE src SET v = v + 1 WHERE k < 10")
    results["incremental filter"] = timed(tables, refresh("f0"))
    results["incremental GROUP BY"] = timed(tables, refresh("g"))
    for i in range(1, count - 1):
        tables.sql(f"ALTER DYNAMIC TABLE f{i} REFRESH")
    results["idle tick"] = idle_tick(tables)
    results["SHOW"] = timed(tables, lambda: tables.sql("SHOW DYNAMIC TABLES").collect())
    results["CREATE"] = timed(
        tables,
        lambda: tables.sql(
            "CREATE DYNAMIC TABLE late TARGET_LAG = '1 minute' REFRESH_MODE = INCREMENTAL"
            " AS SELECT k, v FROM src WHERE v > 3"
        ),
    )
    return results
