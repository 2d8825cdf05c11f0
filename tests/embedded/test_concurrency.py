"""One session used from two threads, and two processes writing one table."""

from __future__ import annotations

import multiprocessing
import threading
from pathlib import Path

import pytest

from sparkshim.session import ShimSession

pytestmark = pytest.mark.embedded


def test_a_reader_thread_and_a_writer_thread_share_one_session(tmp_path: Path) -> None:
    spark = ShimSession(warehouse=tmp_path)
    spark.sql("CREATE TABLE t (id INT)")
    spark.sql("CREATE TEMP VIEW evens AS SELECT id FROM t WHERE id % 2 = 0")
    errors: list[BaseException] = []
    counts: list[int] = []

    def write() -> None:
        try:
            for value in range(20):
                spark.sql(f"INSERT INTO t VALUES ({value})")
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    def read() -> None:
        try:
            for _ in range(40):
                counts.append(spark.sql("SELECT count(*) AS n FROM evens").collect()[0].n)
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=write), threading.Thread(target=read)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert counts == sorted(counts)  # readers see each commit whole, in order
    assert spark.sql("SELECT count(*) AS n FROM t").collect()[0].n == 20
    assert spark.sql("SELECT count(*) AS n FROM evens").collect()[0].n == 10


def _append_many(warehouse: str, worker: int, count: int) -> None:
    spark = ShimSession(warehouse=warehouse)
    for value in range(count):
        spark.sql(f"INSERT INTO t VALUES ({worker}, {value})")


def test_two_processes_appending_lose_and_duplicate_nothing(tmp_path: Path) -> None:
    ShimSession(warehouse=tmp_path).sql("CREATE TABLE t (worker INT, value INT)")
    context = multiprocessing.get_context("spawn")  # delta-rs must not be forked
    workers = [context.Process(target=_append_many, args=(str(tmp_path), w, 15)) for w in (1, 2)]
    for process in workers:
        process.start()
    for process in workers:
        process.join(timeout=120)
        assert process.exitcode == 0
    spark = ShimSession(warehouse=tmp_path)
    rows = spark.sql(
        "SELECT worker, count(*) AS n, count(DISTINCT value) AS d FROM t GROUP BY worker"
    )
    assert sorted(tuple(row) for row in rows.collect()) == [(1, 15, 15), (2, 15, 15)]
