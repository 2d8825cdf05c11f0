"""Incremental against full refresh, on the embedded engine, end to end.

Twin dynamic tables over one ``orders`` table (2M rows by default): each pair has the same
query, one with ``REFRESH_MODE = FULL`` and one with ``REFRESH_MODE = INCREMENTAL``. For
each change size, the same change is applied to ``orders`` and both twins are refreshed
(``ALTER DYNAMIC TABLE … REFRESH``, timed from the statement to its result row), full twin
first, then incremental; after every round both twins must hold the same rows. Two
workloads, as in issue 5:

* a filter and projection under appends (new orders);
* a GROUP BY (per customer: count, sum) under updates (amounts of existing orders).

Run it with ``make bench`` or ``.venv/bin/python benchmarks/bench_refresh.py``
(``--rows``, ``--sizes``, ``--rounds``). It exits with status 1 if a pair disagrees.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_shim import describe_machine, make_orders

from dyntables import DynamicTables

FILTER = "SELECT order_id, customer_id, amount FROM orders WHERE status <> 'cancelled'"
GROUP = "SELECT customer_id, count(*) AS n, sum(amount) AS total FROM orders GROUP BY customer_id"
ORDERS_DDL = (
    "CREATE TABLE orders (order_id BIGINT, customer_id BIGINT, ts TIMESTAMP, amount DOUBLE,"
    " qty INT, status STRING) USING delta"
)


@dataclass
class Measurement:
    workload: str
    fraction: float
    rows_changed: int
    full_seconds: float
    incremental_seconds: float
    incremental_action: str

    @property
    def ratio(self) -> float:
        return self.full_seconds / self.incremental_seconds


def load(dt: DynamicTables, orders: pa.Table) -> None:
    dt.sql(ORDERS_DDL)
    dt.session.createDataFrame(orders).createOrReplaceTempView("generated_orders")
    dt.sql("INSERT INTO orders SELECT * FROM generated_orders")
    dt.session.catalog.dropTempView("generated_orders")
    for name, query in (("filter", FILTER), ("grouped", GROUP)):
        for mode in ("FULL", "INCREMENTAL"):
            dt.sql(
                f"CREATE DYNAMIC TABLE {name}_{mode.lower()} TARGET_LAG = '1 hour'"
                f" REFRESH_MODE = {mode} AS {query}"
            )


def refresh(dt: DynamicTables, name: str) -> tuple[float, str]:
    started = time.perf_counter()
    row = dt.sql(f"ALTER DYNAMIC TABLE {name} REFRESH").collect()[0]
    return time.perf_counter() - started, str(row.action)


def same_contents(dt: DynamicTables, name: str) -> bool:
    """The twins hold the same rows (as multisets, compared in the engine with EXCEPT ALL
    both ways); DOUBLE sums are rounded to 6 decimals, since summing in another order
    may change the last bits."""
    columns = dt.sql(f"SELECT * FROM {name}_full LIMIT 0").schema.fields
    values = ", ".join(
        f"round({field.name}, 6)" if field.dataType.simpleString() == "double" else field.name
        for field in columns
    )
    full, incremental = (
        f"SELECT {values} FROM {name}_full",
        f"SELECT {values} FROM {name}_incremental",
    )
    for left, right in ((full, incremental), (incremental, full)):
        extra = dt.sql(f"SELECT count(*) FROM ({left} EXCEPT ALL {right}) AS d").collect()[0][0]
        if extra:
            return False
    return True


class Changes:
    """Changes of a given size to ``orders``: new orders, or updated amounts."""

    def __init__(self, rows: int) -> None:
        self.rows = rows
        self.next_order_id = rows + 1
        self.round = 0

    def append(self, dt: DynamicTables, count: int) -> None:
        first = self.next_order_id
        self.next_order_id += count
        ids = list(range(first, first + count))
        new_orders = pa.table(
            {
                "order_id": pa.array(ids, pa.int64()),
                "customer_id": pa.array([i % 50_000 + 1 for i in ids], pa.int64()),
                "ts": pa.array([0] * count, pa.timestamp("us", tz="UTC")),
                "amount": pa.array([10.5] * count, pa.float64()),
                "qty": pa.array([1] * count, pa.int32()),
                "status": pa.array(["placed"] * count, pa.string()),
            }
        )
        dt.session.createDataFrame(new_orders).createOrReplaceTempView("new_orders")
        dt.sql("INSERT INTO orders SELECT * FROM new_orders")

    def update(self, dt: DynamicTables, count: int) -> None:
        self.round += 1
        step = max(1, self.rows // count)
        dt.sql(
            f"UPDATE orders SET amount = amount + 1 WHERE order_id % {step} = {self.round % step}"
            f" AND order_id <= {step * count}"
        )


def measure(
    dt: DynamicTables, changes: Changes, workload: str, fraction: float, rounds: int
) -> Measurement:
    count = max(1, int(changes.rows * fraction))
    name = "filter" if workload == "filter / appends" else "grouped"
    full_times, incremental_times, actions = [], [], []
    for _ in range(rounds):
        if name == "filter":
            changes.append(dt, count)
        else:
            changes.update(dt, count)
        full_seconds, _ = refresh(dt, f"{name}_full")
        incremental_seconds, action = refresh(dt, f"{name}_incremental")
        full_times.append(full_seconds)
        incremental_times.append(incremental_seconds)
        actions.append(action)
        if not same_contents(dt, name):
            raise SystemExit(f"FAIL: the {name} twins differ after a {fraction:.2%} change")
    return Measurement(
        workload,
        fraction,
        count,
        statistics.median(full_times),
        statistics.median(incremental_times),
        "/".join(sorted(set(actions))),
    )


def settle(dt: DynamicTables) -> None:
    """Bring every twin up to date, so that a round refreshes only its own change."""
    for name in ("filter_full", "filter_incremental", "grouped_full", "grouped_incremental"):
        dt.sql(f"ALTER DYNAMIC TABLE {name} REFRESH")


def report(measurements: list[Measurement]) -> None:
    print("\n| workload | change | rows changed | full | incremental | full / incremental |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for m in measurements:
        action = "" if m.incremental_action == "INCREMENTAL" else f" ({m.incremental_action})"
        full, incremental = m.full_seconds * 1000, m.incremental_seconds * 1000
        print(
            f"| {m.workload} | {m.fraction:.2%} | {m.rows_changed:,} | {full:,.0f} ms"
            f" | {incremental:,.0f} ms{action} | {m.ratio:.1f}x |"
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--sizes", default="0.0001,0.001,0.01,0.1", help="change fractions")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    print(describe_machine())
    with tempfile.TemporaryDirectory() as scratch:
        dt = DynamicTables(warehouse=Path(scratch) / "warehouse")
        started = time.perf_counter()
        load(dt, make_orders(args.rows, 50_000))
        print(
            f"loaded {args.rows:,} orders and created 4 dynamic tables in"
            f" {time.perf_counter() - started:.1f} s"
        )
        changes = Changes(args.rows)
        measurements = []
        for workload in ("filter / appends", "group by / updates"):
            for fraction in (float(size) for size in args.sizes.split(",")):
                settle(dt)
                measurements.append(measure(dt, changes, workload, fraction, args.rounds))
                print(f"  {workload} {fraction:.2%} done")
        report(measurements)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
