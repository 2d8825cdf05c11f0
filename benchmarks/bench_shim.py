"""The embedded engine (``sparkshim``: delta-rs + DuckDB) against local PySpark, end to end.

The same generated data is loaded once into each engine: as Delta tables in a shim
warehouse (``CREATE TABLE ... USING delta``, then ``INSERT INTO ... SELECT`` from a temporary
view made with ``createDataFrame``: the shim's own write path) and as parquet files that
local PySpark reads (``spark.read.parquet(...).createOrReplaceTempView``). Each query is the
same SQL text on both engines and is timed end to end from ``spark.sql(text)`` to the
collected rows (``.collect()``): the shim reads the Delta snapshot on every query, Spark
reads the parquet files on every query. Per query: one warm-up run, then the median of
``--repeats`` runs. Session start is ``ShimSession(warehouse=...)`` against
``SparkSession.builder...getOrCreate()`` (which launches the JVM); imports are not counted.

Both engines must return the same rows (sorted, floats compared with a relative tolerance);
the script exits with status 1 if they do not, or if the shim is not ``--aim`` times faster
than Spark on the total without session start.

Run it with ``make bench`` (2M rows), or at 10M rows::

    .venv/bin/python benchmarks/bench_shim.py --rows 10000000
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from sparkshim.session import ShimSession

SEED = 20260301
STATUSES = ("placed", "paid", "shipped", "delivered", "returned", "cancelled")
REGIONS = ("north", "south", "east", "west", "central")
SEGMENTS = ("consumer", "corporate", "small_business", "government")
START_TS = np.datetime64("2025-01-01T00:00:00", "us")
SPAN_SECONDS = 365 * 24 * 3600

ORDERS_DDL = (
    "CREATE TABLE orders (order_id BIGINT, customer_id BIGINT, ts TIMESTAMP, amount DOUBLE,"
    " qty INT, status STRING) USING delta"
)
CUSTOMERS_DDL = (
    "CREATE TABLE customers (customer_id BIGINT, region STRING, segment STRING,"
    " signup_year INT) USING delta"
)


@dataclass(frozen=True)
class Query:
    name: str
    sql: str


QUERIES = (
    Query(
        "filter + count",
        "SELECT COUNT(*) AS n FROM orders"
        " WHERE status = 'shipped' AND amount > 500 AND qty BETWEEN 2 AND 5",
    ),
    Query(
        "GROUP BY status (4 aggregates)",
        "SELECT status, COUNT(*) AS n, SUM(amount) AS total, AVG(qty) AS avg_qty,"
        " MAX(amount) AS max_amount FROM orders GROUP BY status",
    ),
    Query(
        "GROUP BY customer, top 10",
        "SELECT customer_id, COUNT(*) AS n, SUM(amount) AS total FROM orders"
        " GROUP BY customer_id ORDER BY n DESC, customer_id LIMIT 10",
    ),
    Query(
        "JOIN customers + GROUP BY",
        "SELECT c.region, c.segment, COUNT(*) AS n, SUM(o.amount) AS total,"
        " AVG(o.qty) AS avg_qty"
        " FROM orders o JOIN customers c ON o.customer_id = c.customer_id"
        " WHERE c.signup_year >= 2018 GROUP BY c.region, c.segment",
    ),
    Query(
        "window (row_number, running sum) + aggregate",
        "WITH ranked AS ("
        " SELECT customer_id, amount,"
        " ROW_NUMBER() OVER (PARTITION BY customer_id ORDER BY ts, order_id) AS rn,"
        " SUM(amount) OVER (PARTITION BY customer_id ORDER BY ts, order_id"
        " ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS running"
        " FROM orders)"
        " SELECT COUNT(*) AS n, SUM(CASE WHEN rn = 1 THEN amount END) AS first_order_total,"
        " MAX(running) AS max_running, MAX(rn) AS max_orders FROM ranked",
    ),
)


# ---- data ----


def make_orders(rows: int, customers: int) -> pa.Table:
    rng = np.random.default_rng(SEED)
    seconds = rng.integers(0, SPAN_SECONDS, rows)
    return pa.table(
        {
            "order_id": pa.array(np.arange(1, rows + 1, dtype=np.int64)),
            "customer_id": pa.array(rng.integers(1, customers + 1, rows, dtype=np.int64)),
            "ts": pa.array(
                START_TS + seconds.astype("timedelta64[s]").astype("timedelta64[us]"),
                type=pa.timestamp("us", tz="UTC"),
            ),
            "amount": pa.array(np.round(rng.gamma(2.0, 120.0, rows), 2)),
            "qty": pa.array(rng.integers(1, 11, rows, dtype=np.int32)),
            "status": pa.DictionaryArray.from_arrays(
                pa.array(rng.integers(0, len(STATUSES), rows, dtype=np.int32)),
                pa.array(STATUSES),
            ).cast(pa.string()),
        }
    )


def make_customers(customers: int) -> pa.Table:
    rng = np.random.default_rng(SEED + 1)

    def pick(values: Sequence[str]) -> pa.Array:
        codes = pa.array(rng.integers(0, len(values), customers, dtype=np.int32))
        return pa.DictionaryArray.from_arrays(codes, pa.array(values)).cast(pa.string())

    return pa.table(
        {
            "customer_id": pa.array(np.arange(1, customers + 1, dtype=np.int64)),
            "region": pick(REGIONS),
            "segment": pick(SEGMENTS),
            "signup_year": pa.array(rng.integers(2010, 2026, customers, dtype=np.int32)),
        }
    )


# ---- timing ----


@dataclass
class EngineRun:
    start_seconds: float
    load_seconds: float
    query_seconds: dict[str, float]
    results: dict[str, list[tuple[Any, ...]]]


def time_query(run: Callable[[], list[Any]], repeats: int) -> tuple[float, list[Any]]:
    """Median wall time of ``repeats`` runs after one warm-up, and the warm-up's rows."""
    rows = run()
    times = []
    for _ in range(repeats):
        began = time.perf_counter()
        run()
        times.append(time.perf_counter() - began)
    return statistics.median(times), rows


class _Sql(Protocol):
    def sql(self, sqlQuery: str) -> Any: ...  # noqa: N803  (PySpark's name)


def _runner(spark: _Sql, text: str) -> Callable[[], list[Any]]:
    """Run ``text`` and collect its rows: what one timed run does, on either engine."""

    def run() -> list[Any]:
        rows: list[Any] = spark.sql(text).collect()
        return rows

    return run


def run_shim(warehouse: Path, orders: pa.Table, customers: pa.Table, repeats: int) -> EngineRun:
    began = time.perf_counter()
    spark = ShimSession(warehouse=warehouse)
    start = time.perf_counter() - began

    began = time.perf_counter()
    for ddl, name, data in (
        (ORDERS_DDL, "orders", orders),
        (CUSTOMERS_DDL, "customers", customers),
    ):
        spark.sql(ddl)
        spark.createDataFrame(data).createOrReplaceTempView(f"{name}_source")
        spark.sql(f"INSERT INTO {name} SELECT * FROM {name}_source")
        spark.catalog.dropTempView(f"{name}_source")
    load = time.perf_counter() - began
    loaded = spark.sql("SELECT COUNT(*) AS n FROM orders").collect()[0]["n"]
    if loaded != orders.num_rows:
        sys.exit(f"FAIL: the shim's orders table holds {loaded} rows, not {orders.num_rows}")

    seconds, results = time_queries(spark, repeats, label="shim ")
    spark.stop()
    return EngineRun(start, load, seconds, results)


def time_queries(
    spark: _Sql, repeats: int, *, label: str
) -> tuple[dict[str, float], dict[str, list[tuple[Any, ...]]]]:
    """Each query's median wall time on ``spark`` (either engine), and its rows."""
    seconds: dict[str, float] = {}
    results: dict[str, list[tuple[Any, ...]]] = {}
    for query in QUERIES:
        median, rows = time_query(_runner(spark, query.sql), repeats)
        seconds[query.name] = median
        results[query.name] = [tuple(row) for row in rows]
        print(f"  {label}  {query.name:<48} {median * 1e3:9.1f} ms", flush=True)
    return seconds, results


def run_spark(data_dir: Path, repeats: int, driver_memory: str) -> EngineRun:
    from pyspark.sql import SparkSession

    began = time.perf_counter()
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("bench_shim")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", driver_memory)
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    start = time.perf_counter() - began
    spark.sparkContext.setLogLevel("ERROR")

    began = time.perf_counter()
    for name in ("orders", "customers"):
        spark.read.parquet(str(data_dir / name)).createOrReplaceTempView(name)
    load = time.perf_counter() - began

    seconds, results = time_queries(spark, repeats, label="spark")
    spark.stop()
    return EngineRun(start, load, seconds, results)


# ---- checking ----


def _sort_key(row: tuple[Any, ...]) -> tuple[tuple[bool, str], ...]:
    return tuple(
        (value is None, repr(round(value, 6) if isinstance(value, float) else value))
        for value in row
    )


def same_rows(left: list[tuple[Any, ...]], right: list[tuple[Any, ...]]) -> str | None:
    """None if the rows agree (as multisets, floats to a relative 1e-9), else what differs."""
    if len(left) != len(right):
        return f"{len(left)} rows against {len(right)}"
    for a, b in zip(sorted(left, key=_sort_key), sorted(right, key=_sort_key), strict=True):
        if len(a) != len(b):
            return f"row {a} against {b}"
        for x, y in zip(a, b, strict=True):
            if isinstance(x, float) or isinstance(y, float):
                if x is None or y is None or not math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-9):
                    return f"row {a} against {b}"
            elif x != y:
                return f"row {a} against {b}"
    return None


# ---- report ----


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:,.0f} ms" if seconds >= 0.1 else f"{seconds * 1e3:.1f} ms"


def report(shim: EngineRun, spark: EngineRun) -> float:
    """Print the table; return the Spark/shim ratio of the query total without start."""
    lines = [
        "| | shim | local Spark | Spark / shim |",
        "| --- | ---: | ---: | ---: |",
    ]

    def line(label: str, a: float, b: float) -> None:
        lines.append(f"| {label} | {_ms(a)} | {_ms(b)} | {b / a:.1f}x |")

    line("session start", shim.start_seconds, spark.start_seconds)
    for query in QUERIES:
        line(query.name, shim.query_seconds[query.name], spark.query_seconds[query.name])
    shim_total = sum(shim.query_seconds.values())
    spark_total = sum(spark.query_seconds.values())
    line("**all queries, session start excluded**", shim_total, spark_total)
    line(
        "**all queries, session start included**",
        shim_total + shim.start_seconds,
        spark_total + spark.start_seconds,
    )
    print("\n".join(lines))
    print(
        f"\nload (not in the totals): shim CREATE TABLE + INSERT ... SELECT into Delta"
        f" {_ms(shim.load_seconds)}; Spark read.parquet + temp views {_ms(spark.load_seconds)}"
    )
    return spark_total / shim_total


def describe_machine() -> str:
    versions = ", ".join(
        f"{package} {metadata.version(package)}"
        for package in ("pyspark", "duckdb", "deltalake", "pyarrow")
    )
    return (
        f"{platform.system()} {platform.release()} {platform.machine()},"
        f" CPython {platform.python_version()}, {os.cpu_count()} CPUs; {versions}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--rows", type=int, default=2_000_000, help="rows of the fact table")
    parser.add_argument("--customers", type=int, default=50_000, help="rows of the dimension")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per query")
    parser.add_argument("--driver-memory", default="4g", help="spark.driver.memory")
    parser.add_argument(
        "--aim", type=float, default=5.0, help="required Spark/shim ratio (0 to skip the check)"
    )
    args = parser.parse_args(argv)

    print(describe_machine())
    print(f"orders: {args.rows:,} rows; customers: {args.customers:,} rows", flush=True)
    began = time.perf_counter()
    orders = make_orders(args.rows, args.customers)
    customers = make_customers(args.customers)
    with tempfile.TemporaryDirectory(prefix="bench_shim_") as scratch:
        root = Path(scratch)
        for name, table in (("orders", orders), ("customers", customers)):
            (root / "parquet" / name).mkdir(parents=True)
            pq.write_table(
                table, root / "parquet" / name / "part-0.parquet", row_group_size=1 << 20
            )
        print(f"generated in {time.perf_counter() - began:.1f} s", flush=True)

        shim = run_shim(root / "warehouse", orders, customers, args.repeats)
        del orders, customers
        spark = run_spark(root / "parquet", args.repeats, args.driver_memory)

    failures = []
    for query in QUERIES:
        difference = same_rows(shim.results[query.name], spark.results[query.name])
        if difference is not None:
            failures.append(f"{query.name}: shim and Spark disagree: {difference}")
    print()
    ratio = report(shim, spark)
    if failures:
        print("\nFAIL: " + "\n".join(failures), file=sys.stderr)
        return 1
    print(f"\nall {len(QUERIES)} queries return the same rows on both engines")
    if args.aim and ratio < args.aim:
        print(
            f"FAIL: the shim is {ratio:.1f}x faster than Spark; the aim is {args.aim}x",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
