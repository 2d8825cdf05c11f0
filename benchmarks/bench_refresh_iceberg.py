"""Incremental against full refresh, on real Spark with Apache Iceberg, end to end.

The Spark + Iceberg counterpart of ``bench_refresh.py`` (the embedded engine): the same
twin dynamic tables, queries, source changes, timing and checks, imported from there
(``Changes``, ``measure``, ``settle``, ``same_contents``, ``report``). Here the sources
are Iceberg tables in a Hadoop catalog in a temporary directory, on a local PySpark
session (``local[2]``) started as the ``iceberg_spark`` fixture of tests/spark/conftest.py
starts it, with the Iceberg runtime jar from ``snowpark-connect-deps-iceberg``. The
sources are created copy-on-write (``COPY_ON_WRITE`` of dyntables.formats.iceberg), as
changelogs need; the dynamic tables are created by dyntables itself (WAP enabled).

The default is smaller than bench_refresh.py's, as every Iceberg commit costs about a
second: 200,000 orders and 50,000 customers; the workloads ``filter-appends``,
``group-updates`` and ``group-appends``; 0.1 % and 1 % of the rows changed; one round.

Run it with ``.venv/bin/python benchmarks/bench_refresh_iceberg.py`` (``--rows``,
``--sizes``, ``--rounds``, ``--workloads``), in a process of its own and preferably with
no other Spark job running. Each row is printed as it is measured, and the table again
at the end. It exits with status 1 if a pair disagrees.
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import SparkSession

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parent.parent / "tests" / "spark"))
from bench_refresh import WORKLOADS, report, run
from bench_shim import describe_machine
from conftest import (  # type: ignore[import-not-found]  # tests/spark, not a package
    RUNTIME_JAR,
    iceberg_runtime_jar,
    start_iceberg_spark,
)

from dyntables import DynamicTables
from dyntables.formats.iceberg import COPY_ON_WRITE

DEFAULT_WORKLOADS = ("filter-appends", "group-updates", "group-appends")


def start_spark(scratch: Path) -> SparkSession:
    """A local session with Iceberg, as tests/spark/conftest.py's fixture starts it."""
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        raise SystemExit("this benchmark needs Java 17")
    jar = iceberg_runtime_jar()
    if jar is None:
        raise SystemExit(
            f"this benchmark needs {RUNTIME_JAR}: pip install snowpark-connect-deps-iceberg==1.0.2"
        )
    session: SparkSession = start_iceberg_spark(scratch, jar, "dyntables-iceberg-bench")
    return session


class ArrowFrames:
    """A SparkSession whose ``createDataFrame`` also takes a pyarrow Table, as the
    embedded engine's does and PySpark 3.5's does not (``Changes.append`` hands it one):
    the table is written to a parquet file in ``scratch`` and read back. Everything else
    is the session's own."""

    def __init__(self, spark: SparkSession, scratch: Path) -> None:
        self.spark = spark
        self.scratch = scratch
        self.numbers = itertools.count()

    def createDataFrame(self, data: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N802
        if not isinstance(data, pa.Table):
            return self.spark.createDataFrame(data, *args, **kwargs)
        path = self.scratch / f"frame-{next(self.numbers)}.parquet"
        pq.write_table(data, path)
        return self.spark.read.parquet(str(path))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.spark, name)


class IcebergTables(DynamicTables):
    """``DynamicTables`` on Spark + Iceberg whose ``session`` (used by the benchmark's own
    statements only; dyntables runs on its engine's session) takes pyarrow Tables."""

    def __init__(self, spark: SparkSession, scratch: Path) -> None:
        super().__init__(spark, table_format="iceberg")
        self._frames = ArrowFrames(spark, scratch)

    @property
    def session(self) -> Any:
        return self._frames


def iceberg_ddl(ddl: str) -> str:
    """bench_shim's ``CREATE TABLE … USING delta`` as a copy-on-write Iceberg table."""
    properties = ", ".join(f"'{key}' = '{value}'" for key, value in COPY_ON_WRITE.items())
    return f"{ddl.removesuffix(' USING delta')} USING iceberg TBLPROPERTIES ({properties})"


def iceberg_tables(spark: SparkSession) -> Callable[[Path, int], DynamicTables]:
    """Opens the API on ``spark`` in a fresh database for each table size."""

    def open_tables(scratch: Path, rows: int) -> DynamicTables:
        spark.sql(f"CREATE DATABASE bench_{rows}")
        spark.sql(f"USE bench_{rows}")
        return IcebergTables(spark, scratch)

    return open_tables


def main(argv: Sequence[str] | None = None) -> int:
    keys = [w.key for w in WORKLOADS]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rows", type=int, default=200_000, help="rows of orders")
    parser.add_argument("--sizes", default="0.001,0.01", help="change fractions")
    parser.add_argument("--rounds", type=int, default=1, help="rounds per size (median)")
    parser.add_argument(
        "--workloads",
        default=",".join(DEFAULT_WORKLOADS),
        help=f"comma-separated subset of {keys}",
    )
    args = parser.parse_args(argv)
    chosen = args.workloads.split(",")
    if unknown := [key for key in chosen if key not in keys]:
        parser.error(f"unknown workloads {unknown}; choose from {keys}")
    workloads = [w for w in WORKLOADS if w.key in chosen]
    fractions = [float(size) for size in args.sizes.split(",")]
    print(f"{describe_machine()}; {RUNTIME_JAR}, Spark local[2]")
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench_refresh_iceberg_") as scratch:
        spark = start_spark(Path(scratch))
        print(f"Spark with Iceberg started in {time.perf_counter() - began:.1f} s", flush=True)
        try:
            measurements = run(
                args.rows,
                workloads,
                fractions,
                args.rounds,
                open_tables=iceberg_tables(spark),
                ddl_of=iceberg_ddl,
            )
        finally:
            spark.stop()
    report(measurements)
    print(f"\ntotal {time.perf_counter() - began:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
