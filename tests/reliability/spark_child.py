"""``python -m reliability.spark_child``: a process with its own PySpark that refreshes the
workload's dynamic tables on the warehouse of the test's session, until the test SIGKILLs
its process group (the Python driver and its JVM together, as a crash of the machine
would).

* ``--format iceberg``: the Iceberg Hadoop catalog of ``--scratch`` (``start_iceberg_spark``
  of the spark tier), which holds every table and its metadata in files;
* ``--format delta``: Delta on Spark as the spark_delta tier starts it, warehouse
  ``--warehouse-dir``. Its catalog lives in the test's process, so the tables are
  registered here by location (a dynamic table's definition is in its own properties).

With ``--kill-after PATTERN`` the child kills its own process group right after the
``--kill-nth`` statement whose text matches ``PATTERN``: a statement run while the session
stages a WAP write reads ``… [wap]``, one run with a refresh watermark as Delta commit
metadata ``… [watermark]`` (``spark.sql`` runs commands eagerly: when it returns, the
commit is made).

Progress goes to ``--progress``, one line at a time: ``STARTED``, ``STEP …`` before each
step, ``DONE …`` after it, ``ERR {json}`` for an error, ``KILL …`` before a kill of its own.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import re
import signal
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from .invariants import error_record
from .workload import DYNAMIC_TABLES

TESTS_FOLDER = Path(__file__).resolve().parents[1]


def tier_conftest(tier: str) -> ModuleType:
    """``tests/<tier>/conftest.py``, for the tier's own way to start Spark."""
    path = TESTS_FOLDER / tier / "conftest.py"
    spec = importlib.util.spec_from_file_location(f"reliability_{tier}_conftest", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def start_iceberg(scratch: Path) -> Any:
    conftest = tier_conftest("spark")
    jar = conftest.iceberg_runtime_jar()
    assert jar is not None, "the Iceberg runtime jar is not installed"
    return conftest.start_iceberg_spark(scratch, jar, "dyntables-reliability-child")


def start_delta(warehouse_dir: Path, database: str) -> Any:
    """Delta on Spark, configured as the spark_delta tier's session, with the test's
    tables registered by location."""
    conftest = tier_conftest("spark_delta")
    scratch = Path(tempfile.mkdtemp(prefix="dyntables-delta-child-"))
    session = conftest.start_delta_spark(
        scratch, "dyntables-reliability-child", warehouse=warehouse_dir
    )
    for schema in (database, "dyntables_system"):
        folder = warehouse_dir / f"{schema}.db"
        session.sql(f"CREATE DATABASE IF NOT EXISTS {schema}")
        for table in sorted(folder.iterdir()) if folder.is_dir() else []:
            if (table / "_delta_log").is_dir():
                session.sql(
                    f"CREATE TABLE IF NOT EXISTS {schema}.{table.name} USING delta"
                    f" LOCATION '{table.resolve()}'"
                )
    return session


WAP_ID_CONF = "spark.wap.id"
USER_METADATA_CONF = "spark.databricks.delta.commitInfo.userMetadata"


def kill_after(pattern: str, nth: int, log: Callable[[str], None]) -> None:
    """SIGKILL this process group (driver and JVM) right after the ``nth`` statement that
    matches ``pattern`` (see the module's docstring)."""
    from pyspark.sql import SparkSession

    original = SparkSession.sql
    matching = re.compile(pattern, re.IGNORECASE | re.DOTALL)
    seen = 0

    def sql(session: Any, sqlQuery: str, *args: Any, **kwargs: Any) -> Any:  # noqa: N803
        nonlocal seen
        result = original(session, sqlQuery, *args, **kwargs)
        described = sqlQuery
        if session.conf.get(WAP_ID_CONF, None):
            described += " [wap]"
        if '"dyntables": 1' in (session.conf.get(USER_METADATA_CONF, None) or ""):
            described += " [watermark]"
        if matching.search(described):
            seen += 1
            if seen == nth:
                log(f"KILL after {' '.join(described.split())[:300]}")
                os.killpg(0, signal.SIGKILL)
        return result

    SparkSession.sql = sql  # type: ignore[method-assign, assignment]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="reliability.spark_child")
    parser.add_argument("--format", choices=("iceberg", "delta"), required=True)
    parser.add_argument("--scratch", help="the Iceberg tier's scratch folder")
    parser.add_argument("--warehouse-dir", help="the Delta tier's spark.sql.warehouse.dir")
    parser.add_argument("--database", required=True)
    parser.add_argument("--progress", required=True)
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--kill-after", help="a pattern of statements (see the docstring)")
    parser.add_argument("--kill-nth", type=int, default=1)
    args = parser.parse_args(argv)
    progress = os.open(args.progress, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def log(line: str) -> None:
        os.write(progress, (line.replace("\n", " ") + "\n").encode())

    if args.format == "iceberg":
        session = start_iceberg(Path(args.scratch))
    else:
        session = start_delta(Path(args.warehouse_dir), args.database)
    from dyntables import DynamicTables
    from dyntables.catalog import key_to_table

    if args.kill_after:
        kill_after(args.kill_after, args.kill_nth, log)

    dt = DynamicTables(session, table_format=args.format)
    session.sql(f"USE {args.database}")
    log("STARTED")
    rng = random.Random(args.seed)
    for _ in range(args.iterations):
        names = list(DYNAMIC_TABLES)
        rng.shuffle(names)
        for name in names:
            log(f"STEP refresh {name}")
            try:
                row = dt.sql(f"ALTER DYNAMIC TABLE {name} REFRESH").collect()[0]
                log(f"DONE refresh {name} {row['state']} {row['action']}")
            except Exception as failure:
                log("ERR " + json.dumps(error_record(f"refresh {name}", failure)))
        name = rng.choice(DYNAMIC_TABLES)
        log(f"STEP compact {name}")
        table = key_to_table(f"{args.database}.{name}")
        try:
            dt.engine.table_format.compact(dt.session, table)
            log(f"DONE compact {name}")
        except Exception as failure:
            log("ERR " + json.dumps(error_record(f"compact {name}", failure)))
    log("FINISHED")
    session.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
