"""How much ``dyntables.parse`` costs per statement: a check a person runs, not a CI test.

Ordinary SQL must stay cheap, because every statement a session runs goes through
``parse``: a keyword pre-check keeps it away from ANTLR. The budgets (from the issue that
introduced the front-end):

* pass-through statement: under 100 µs;
* dynamic-table DDL: under 10 ms.

Each case is parsed many times after a warm-up, each call timed on its own with
``time.perf_counter`` (garbage collection paused, as ``timeit`` does); the table shows the
median and the 95th percentile. The budget is checked against the 95th percentile. The cold
first parse (importing the ANTLR runtime and the generated parser, and ANTLR filling its
prediction caches) is measured in fresh interpreters and reported, not budgeted.

Run it with ``make bench``; it exits with status 1 if a budget is exceeded.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata

import dyntables
from dyntables.statements import (
    AlterDynamicTable,
    CreateDynamicTable,
    PassThrough,
    Statement,
)

PASS_THROUGH_BUDGET = 100e-6
DDL_BUDGET = 10e-3

SHORT_SELECT = "SELECT 1"

INSERT_WITH_SEMICOLON = (
    "INSERT INTO audit_log VALUES (42, 'a; b; c -- not a comment', 'it''s /* not */ one')"
)

# An analytical query of about 5 KB: one block of conditional aggregates per ship mode.
_AGGREGATE_BLOCK = """
    SUM(CASE WHEN l.l_shipmode = '{mode}' THEN l.l_extendedprice * (1 - l.l_discount)
             ELSE 0 END) AS revenue_{mode},
    COUNT(DISTINCT CASE WHEN l.l_shipmode = '{mode}' THEN o.o_orderkey END) AS orders_{mode},
    AVG(CASE WHEN l.l_shipmode = '{mode}' THEN l.l_quantity END) AS avg_qty_{mode},"""
_MODES = (
    "MAIL", "SHIP", "AIR", "RAIL", "TRUCK", "FOB", "REG_AIR", "COURIER", "POST", "BARGE",
    "DRONE", "FERRY", "VAN", "CARGO", "TRAIN",
)  # fmt: skip
LONG_QUERY = (
    "WITH recent_orders AS (\n"
    "  SELECT o_orderkey, o_custkey, o_orderdate, o_totalprice\n"
    "  FROM orders\n"
    "  WHERE o_orderdate >= DATE '1995-01-01' AND o_orderstatus <> 'F'\n"
    ")\n"
    "SELECT\n"
    "    c.c_nationkey,\n"
    "    DATE_TRUNC('month', o.o_orderdate) AS order_month,"
    + "".join(_AGGREGATE_BLOCK.replace("{mode}", mode) for mode in _MODES)
    + "\n    SUM(l.l_extendedprice) AS gross\n"
    "FROM recent_orders AS o\n"
    "JOIN lineitem AS l ON l.l_orderkey = o.o_orderkey\n"
    "JOIN customer AS c ON c.c_custkey = o.o_custkey\n"
    "WHERE l.l_returnflag IN ('R', 'A') AND l.l_shipdate > o.o_orderdate\n"
    "GROUP BY c.c_nationkey, DATE_TRUNC('month', o.o_orderdate)\n"
    "HAVING SUM(l.l_extendedprice) > 1000\n"
    "ORDER BY c.c_nationkey, order_month"
)

# Seed 001: a frozen region backfilled from a Time Travel snapshot.
SEED_001_CREATE = """CREATE OR REPLACE DYNAMIC TABLE dt_orders
  TARGET_LAG = '10 minutes'
  WAREHOUSE = transform_wh
  FROZEN WHERE (order_date < '2025-01-01')
  BACKFILL FROM dt_orders_snapshot AT (TIMESTAMP => '2025-04-01 12:00:00'::TIMESTAMP_NTZ)
AS
  SELECT
    order_id, customer_id, order_date
  FROM raw_orders
  WHERE order_status != 'returned'"""

# Seed 003: custom incrementalization with MERGE INTO SELF.
SEED_003_REFRESH_USING = """CREATE OR REPLACE DYNAMIC TABLE dt_player_scores (
  player_id INT,
  total_score INT
)
  TARGET_LAG = '1 minute'
  WAREHOUSE = transform_wh
  REFRESH USING (
    MERGE INTO SELF AS tgt
    USING (
      SELECT player_id, SUM(score) AS batch_score
      FROM match_results CHANGES(INFORMATION => APPEND_ONLY)
      GROUP BY player_id
    ) AS src
    ON tgt.player_id = src.player_id
    WHEN MATCHED THEN
      UPDATE SET tgt.total_score = tgt.total_score + src.batch_score
    WHEN NOT MATCHED THEN
      INSERT (player_id, total_score) VALUES (src.player_id, src.batch_score)
  )"""

ALTER = "ALTER DYNAMIC TABLE dt_orders SET TARGET_LAG = '5 minutes'"


@dataclass(frozen=True)
class Case:
    """One thing to parse. ``statements`` > 1 makes it a script: times are then per
    statement. ``budget`` None reports the time without judging it."""

    name: str
    sql: str
    expected: type[Statement]
    budget: float | None
    repetitions: int
    statements: int = 1


# A script of ten everyday statements (about 300 characters each), so the splitter has to
# scan for top-level semicolons; a lone statement skips that scan.
_SCRIPT_STATEMENT = (
    "INSERT INTO sales.orders_{n} SELECT o.order_id, o.customer_id, o.order_date,"
    " COALESCE(o.status, 'unknown') AS status, SUM(l.qty * l.price) AS total"
    " FROM raw.orders o JOIN raw.lines l ON (l.order_id = o.order_id)"
    " WHERE o.order_date >= DATE '2025-01-01' AND o.note NOT LIKE '%test;%'"
    " GROUP BY o.order_id, o.customer_id, o.order_date, o.status"
)
SCRIPT_OF_TEN = ";\n".join(_SCRIPT_STATEMENT.format(n=n) for n in range(10)) + ";\n"


CASES = (
    Case("pass-through: SELECT 1", SHORT_SELECT, PassThrough, PASS_THROUGH_BUDGET, 20_000),
    Case(
        f"pass-through: {len(LONG_QUERY) / 1000:.1f} KB analytical query",
        LONG_QUERY,
        PassThrough,
        PASS_THROUGH_BUDGET,
        5_000,
    ),
    Case(
        "pass-through: INSERT, ';' in a string",
        INSERT_WITH_SEMICOLON,
        PassThrough,
        PASS_THROUGH_BUDGET,
        20_000,
    ),
    Case(
        "DDL: seed 001 CREATE, FROZEN + BACKFILL AT",
        SEED_001_CREATE,
        CreateDynamicTable,
        DDL_BUDGET,
        300,
    ),
    Case(
        "DDL: seed 003 REFRESH USING (MERGE ...)",
        SEED_003_REFRESH_USING,
        CreateDynamicTable,
        DDL_BUDGET,
        300,
    ),
    Case("DDL: ALTER ... SET TARGET_LAG", ALTER, AlterDynamicTable, DDL_BUDGET, 1_000),
    Case(
        "script: 10 x 0.3 KB statements, per statement",
        SCRIPT_OF_TEN,
        PassThrough,
        PASS_THROUGH_BUDGET,
        2_000,
        statements=10,
    ),
    Case(
        f"script: the {len(LONG_QUERY) / 1000:.1f} KB query then ';' (scanned)",
        LONG_QUERY + ";",
        PassThrough,
        None,
        2_000,
    ),
)
WARM_UP = 50
COLD_RUNS = 5


@dataclass(frozen=True)
class Timing:
    case: Case
    median: float
    p95: float

    @property
    def within_budget(self) -> bool:
        return self.case.budget is None or self.p95 <= self.case.budget


def time_calls(function: Callable[[], object], repetitions: int) -> list[float]:
    """Seconds taken by each of ``repetitions`` calls, after a warm-up."""
    for _ in range(WARM_UP):
        function()
    samples = []
    gc.collect()
    gc.disable()
    try:
        for _ in range(repetitions):
            start = time.perf_counter()
            function()
            samples.append(time.perf_counter() - start)
    finally:
        gc.enable()
    return samples


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def measure(case: Case, scale: float) -> Timing:
    statements = dyntables.parse(case.sql)
    if len(statements) != case.statements or not all(
        isinstance(statement, case.expected) for statement in statements
    ):
        raise SystemExit(f"{case.name}: parsed as {statements!r}")
    samples = time_calls(lambda: dyntables.parse(case.sql), max(10, int(case.repetitions * scale)))
    per_statement = [sample / case.statements for sample in samples]
    return Timing(case, statistics.median(per_statement), percentile(per_statement, 0.95))


# Run in a fresh interpreter: the first parse loads the ANTLR runtime and the generated
# parser and fills ANTLR's prediction caches; the second shows the warm cost for contrast.
_COLD_SCRIPT = """
import json, sys, time
start = time.perf_counter()
import dyntables
imported = time.perf_counter()
dyntables.parse(sys.argv[1])
first = time.perf_counter()
dyntables.parse(sys.argv[1])
second = time.perf_counter()
print(json.dumps([imported - start, first - imported, second - first]))
"""


def measure_cold(sql: str, runs: int) -> tuple[float, float, float]:
    """Medians over ``runs`` fresh interpreters: import, first parse, second parse."""
    results = []
    for _ in range(runs):
        completed = subprocess.run(
            [sys.executable, "-c", _COLD_SCRIPT, sql], capture_output=True, text=True, check=True
        )
        results.append(json.loads(completed.stdout))
    imported, first, second = (statistics.median(column) for column in zip(*results, strict=True))
    return imported, first, second


def human(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:,.1f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:,.2f} ms"
    return f"{seconds:,.2f} s"


def machine() -> str:
    return (
        f"{platform.platform()}; {platform.python_implementation()} {platform.python_version()};"
        f" {os.cpu_count()} CPUs; antlr4-python3-runtime"
        f" {metadata.version('antlr4-python3-runtime')}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument(
        "--scale",
        type=float,
        default=1.0,
        help="multiply the number of repetitions (e.g. 0.1 for a quick look)",
    )
    args = parser.parse_args(argv)

    print(f"machine: {machine()}")
    print("each call timed alone after a warm-up, garbage collection paused; budget vs p95")
    timings = [measure(case, args.scale) for case in CASES]
    baseline = timings[0].median  # SELECT 1
    name_width = max(len(case.name) for case in CASES)
    print()
    print(
        f"{'statement':<{name_width}}  {'runs':>6}  {'median':>10}  {'p95':>10}"
        f"  {'x SELECT 1':>10}  {'budget':>8}"
    )
    for timing in timings:
        case = timing.case
        verdict = "ok" if timing.within_budget else "OVER"
        budget = "-" if case.budget is None else human(case.budget)
        runs = max(10, int(case.repetitions * args.scale))
        print(
            f"{case.name:<{name_width}}  {runs:>6}  {human(timing.median):>10}"
            f"  {human(timing.p95):>10}  {timing.median / baseline:>9.1f}x"
            f"  {budget:>8} {verdict if case.budget is not None else ''}"
        )

    pass_through = [t.median for t in timings if t.case.expected is PassThrough]
    ddl = [t.median for t in timings if t.case.expected is not PassThrough]
    ratio = statistics.median(ddl) / statistics.median(pass_through)
    print(f"\nDDL / pass-through, median of each group's medians: {ratio:,.0f}x")

    print()
    print(f"cold start, fresh interpreter (median of {COLD_RUNS}):")
    for label, sql in (("SELECT 1", SHORT_SELECT), ("seed 001 CREATE", SEED_001_CREATE)):
        imported, first, second = measure_cold(sql, COLD_RUNS)
        print(
            f"  {label:<16} import dyntables {human(imported)}, first parse {human(first)},"
            f" second parse {human(second)}"
        )

    over = [t.case.name for t in timings if not t.within_budget]
    if over:
        print(f"\nover budget (p95): {', '.join(over)}")
        return 1
    print("\nall within budget (p95)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
