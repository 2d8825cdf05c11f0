"""What a refresh costs before it computes anything: the engine statements (every
``session.sql`` on the user's and the refresh session) and the time of a NO_DATA refresh,
incremental refreshes of a filter and a GROUP BY, an idle scheduler tick and SHOW DYNAMIC
TABLES, over N dynamic tables reading one source (1,000 rows; 10 rows updated before the
incremental refreshes).

Run it with ``.venv/bin/python benchmarks/bench_statements.py`` (``--tables 20 100``;
``--iceberg`` also measures Spark + Iceberg, which needs Java 17 and the Iceberg runtime
jar, as bench_refresh_iceberg.py). The counts are deterministic; times are one run each.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from statement_counts import (  # type: ignore[import-not-found]  # noqa: E402  # tests/
    build_pipeline,
    measure_pipeline,
)

from dyntables import DynamicTables  # noqa: E402

Measure = tuple[int, float]  # statements, seconds


def embedded(count: int) -> dict[str, Measure]:
    with tempfile.TemporaryDirectory(prefix="bench_statements_") as scratch:
        warehouse = Path(scratch) / "warehouse"
        build_pipeline(DynamicTables(warehouse=warehouse), count, "delta")
        measured: dict[str, Measure] = measure_pipeline(DynamicTables(warehouse=warehouse), count)
        return measured


def iceberg(count: int) -> dict[str, Measure]:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_refresh_iceberg import start_spark

    with tempfile.TemporaryDirectory(prefix="bench_statements_iceberg_") as scratch:
        spark = start_spark(Path(scratch))
        spark.sql("CREATE DATABASE bench")
        spark.sql("USE bench")
        try:
            build_pipeline(DynamicTables(spark, table_format="iceberg"), count, "iceberg")
            measured: dict[str, Measure] = measure_pipeline(
                DynamicTables(spark, table_format="iceberg"), count
            )
            return measured
        finally:
            spark.stop()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, nargs="+", default=[20, 100])
    parser.add_argument("--iceberg", action="store_true", help="also Spark + Iceberg")
    parser.add_argument(
        "--iceberg-tables",
        type=int,
        nargs="+",
        help="the table counts measured on Spark + Iceberg (default: the smallest of --tables)",
    )
    args = parser.parse_args(argv)
    engines: list[tuple[str, Callable[[int], dict[str, Measure]], list[int]]] = [
        ("embedded", embedded, args.tables)
    ]
    if args.iceberg:
        engines.append(("Spark + Iceberg", iceberg, args.iceberg_tables or [min(args.tables)]))
    print("| engine | operation | statements | time |")
    print("| --- | --- | ---: | ---: |")
    for name, measure_on, counts in engines:
        for count in counts:
            for operation, (statements, seconds) in measure_on(count).items():
                if operation not in ("idle tick", "SHOW") and count != counts[0]:
                    continue  # a single refresh does not depend on the number of tables
                if operation in ("idle tick", "SHOW"):
                    operation = f"{operation} ({count} tables)"
                print(f"| {name} | {operation} | {statements} | {seconds * 1000:.0f} ms |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
