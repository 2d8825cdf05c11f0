"""Incremental against full refresh, on the embedded engine, end to end.

Twin dynamic tables over one ``orders`` table (2M rows by default) and one ``customers``
table (50k rows): each pair has the same query, one with ``REFRESH_MODE = FULL`` and one
with ``REFRESH_MODE = INCREMENTAL``. For each change size, the same change is applied to
the source and both twins are refreshed (``ALTER DYNAMIC TABLE … REFRESH``, timed from the
statement to its result row), full twin first, then incremental; after every round both
twins must hold the same rows. Each size first runs ``--warmup`` rounds (2) that are not
in the medians: a process's first refreshes of a statement's shape translate it (and the
incremental twin's first refresh that marks rows changes its statement's shape), which a
scheduler running in one process pays once; their times are printed apart. The
workloads (``--workloads`` picks a subset):

* ``filter-mixed``: a filter and projection under updates (amounts of existing orders)
  and as many appends (new orders);
* ``filter-appends``: a filter and projection under appends (new orders);
* ``group-updates``: a GROUP BY (per customer: count, sum) under updates (amounts of
  existing orders);
* ``group-double-updates``: the same GROUP BY with a DOUBLE sum (``sum(CAST(amount AS
  DOUBLE))``), whose groups that lost a value are recomputed (change arithmetic does not
  subtract floating-point values);
* ``group-double-unread-updates``: the same GROUP BY with a DOUBLE sum under updates of
  a column it does not read (quantities of existing orders): the change cancels out;
* ``group-appends``: the same GROUP BY under appends (new orders, one in ten of them for a
  customer not seen before);
* ``window-updates``: ``row_number() OVER (PARTITION BY customer_id ORDER BY order_id)``
  under updates of amounts;
* ``join-updates``: ``orders LEFT JOIN customers`` under updates of order amounts;
* ``join-customer-updates``: the same LEFT JOIN under updates of customer regions (the
  change fraction is then of the 50k customers, not of the orders);
* ``mart-updates``: a pipeline shaped like a dbt mart, under updates of order amounts: a
  GROUP BY per customer (count, sum, max) and, over it, a dynamic table with a CTE (a
  GROUP BY) and two LEFT JOINs on the customer in one SELECT; each twin reads its own
  upstream twin, and a round's time is both stages' refreshes.

Run it with ``make bench`` or ``.venv/bin/python benchmarks/bench_refresh.py``
(``--rows``, ``--sizes``, ``--rounds``, ``--warmup``, ``--workloads``).
``--table-sizes 2000000,16000000`` adds the curves against table size: the
``--table-size-workloads`` (the update workloads by default) on a fresh warehouse of each
size, at ``--table-size-change`` (0.1 %) and, with ``--table-size-rows-changed N``, at N
changed rows whatever the size. ``--plot PATH`` draws
the full/incremental ratio against the fraction changed, and the refresh times against
table size, as a PNG (matplotlib, from the dev extras). Each row is printed as it is
measured, and the tables again at the end. It exits with status 1 if a pair disagrees.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_shim import CUSTOMERS_DDL, ORDERS_DDL, describe_machine, make_customers, make_orders

from dyntables import DynamicTables

CUSTOMERS = 50_000
# Order amounts are money: DECIMAL (a DOUBLE sum has its own workload, group-double-updates).
AMOUNT = pa.decimal128(12, 2)
ORDERS = ORDERS_DDL.replace("amount DOUBLE", "amount DECIMAL(12, 2)")
FILTER = "SELECT order_id, customer_id, amount FROM orders WHERE status <> 'cancelled'"
GROUP = "SELECT customer_id, count(*) AS n, sum(amount) AS total FROM orders GROUP BY customer_id"
GROUP_DOUBLE = (
    "SELECT customer_id, count(*) AS n, sum(CAST(amount AS DOUBLE)) AS total FROM orders"
    " GROUP BY customer_id"
)
WINDOW = (
    "SELECT order_id, customer_id, amount,"
    " row_number() OVER (PARTITION BY customer_id ORDER BY order_id) AS rn FROM orders"
)
# A dbt mart's shape, as a pipeline: a GROUP BY per customer (MAX among its aggregates, so
# groups that lost their largest order are recomputed), and over it a dynamic table with a
# CTE (another GROUP BY) and two LEFT JOINs on the customer in one SELECT. ``{mode}``: each
# twin reads its own upstream twin.
MART_STATS = (
    "SELECT customer_id, count(*) AS orders, sum(amount) AS total, max(amount) AS largest"
    " FROM orders GROUP BY customer_id"
)
MART = (
    "WITH placed AS (SELECT customer_id, count(*) AS placed FROM orders"
    " WHERE status = 'placed' GROUP BY customer_id)"
    " SELECT c.customer_id, c.region, s.orders, s.total, s.largest, p.placed"
    " FROM customers c LEFT JOIN mart_stats_{mode} s ON c.customer_id = s.customer_id"
    " LEFT JOIN placed p ON p.customer_id = c.customer_id"
)
JOIN = (
    "SELECT o.order_id, o.customer_id, o.amount, c.region"
    " FROM orders o LEFT JOIN customers c ON o.customer_id = c.customer_id"
)


class Changes:
    """Changes of a given size to the sources: new orders, updated order amounts, updated
    customer regions. Each method returns how many rows it changed."""

    def __init__(self, rows: int, customers: int) -> None:
        self.rows = rows
        self.customers = customers
        self.next_order_id = rows + 1
        self.next_customer_id = customers + 1
        self.round = 0

    def append(self, dt: DynamicTables, fraction: float) -> int:
        """New orders; nine in ten for existing customers, one in ten for a new customer."""
        count = max(1, int(self.rows * fraction))
        ids = np.arange(self.next_order_id, self.next_order_id + count, dtype=np.int64)
        self.next_order_id += count
        customer_ids = ids % self.customers + 1
        new = ids % 10 == 0
        customer_ids[new] = np.arange(
            self.next_customer_id, self.next_customer_id + int(new.sum()), dtype=np.int64
        )
        self.next_customer_id += int(new.sum())
        new_orders = pa.table(
            {
                "order_id": pa.array(ids),
                "customer_id": pa.array(customer_ids),
                "ts": pa.array(np.zeros(count, dtype=np.int64), pa.timestamp("us", tz="UTC")),
                "amount": pa.array([Decimal("10.50")] * count, AMOUNT),
                "qty": pa.array(np.ones(count, dtype=np.int32)),
                "status": pa.array(["placed"] * count, pa.string()),
            }
        )
        dt.session.createDataFrame(new_orders).createOrReplaceTempView("new_orders")
        dt.sql("INSERT INTO orders SELECT * FROM new_orders")
        return count

    def _every(self, rows: int, fraction: float) -> tuple[int, int, int]:
        """``(step, offset, count)``: ids ``≡ offset (mod step)`` up to ``step * count``
        pick ``count`` rows spread over the table, other rows each round."""
        count = max(1, int(rows * fraction))
        step = max(1, rows // count)
        self.round += 1
        return step, self.round % step, count

    def update_amounts(self, dt: DynamicTables, fraction: float) -> int:
        return self._increment_orders(dt, "amount", fraction)

    def update_quantities(self, dt: DynamicTables, fraction: float) -> int:
        """Updated quantities: a column the GROUP BY workloads do not read."""
        return self._increment_orders(dt, "qty", fraction)

    def _increment_orders(self, dt: DynamicTables, column: str, fraction: float) -> int:
        step, offset, count = self._every(self.rows, fraction)
        dt.sql(
            f"UPDATE orders SET {column} = {column} + 1 WHERE order_id % {step} = {offset}"
            f" AND order_id <= {step * count}"
        )
        return count

    def update_and_append(self, dt: DynamicTables, fraction: float) -> int:
        """Updated amounts and as many new orders: the mix a table of orders sees."""
        return self.update_amounts(dt, fraction) + self.append(dt, fraction)

    def update_regions(self, dt: DynamicTables, fraction: float) -> int:
        step, offset, count = self._every(self.customers, fraction)
        dt.sql(
            f"UPDATE customers SET region = 'region-{self.round}'"
            f" WHERE customer_id % {step} = {offset} AND customer_id <= {step * count}"
        )
        return count


@dataclass(frozen=True)
class Workload:
    key: str
    label: str
    twins: str
    change: Callable[[Changes, DynamicTables, float], int]


WORKLOADS = (
    Workload("filter-mixed", "filter / updates + appends", "filtered", Changes.update_and_append),
    Workload("filter-appends", "filter / appends", "filtered", Changes.append),
    Workload("group-updates", "group by / updates", "grouped", Changes.update_amounts),
    Workload(
        "group-double-updates", "group by, DOUBLE sum / updates", "doubled", Changes.update_amounts
    ),
    Workload(
        "group-double-unread-updates",
        "group by, DOUBLE sum / updates of an unread column",
        "doubled",
        Changes.update_quantities,
    ),
    Workload("group-appends", "group by / appends", "grouped", Changes.append),
    Workload("window-updates", "window / updates", "windowed", Changes.update_amounts),
    Workload("join-updates", "left join / order updates", "joined", Changes.update_amounts),
    Workload(
        "join-customer-updates", "left join / customer updates", "joined", Changes.update_regions
    ),
    Workload("mart-updates", "mart pipeline / updates", "mart", Changes.update_amounts),
)
QUERIES = {
    "filtered": FILTER,
    "grouped": GROUP,
    "doubled": GROUP_DOUBLE,
    "windowed": WINDOW,
    "joined": JOIN,
    "mart_stats": MART_STATS,
    "mart": MART,
}
# Twins that are the last stage of a pipeline: the stages refreshed before them, in order.
UPSTREAM = {"mart": ("mart_stats",)}


def stages(twins: str) -> tuple[str, ...]:
    """The twin names a workload creates and refreshes, upstream first."""
    return (*UPSTREAM.get(twins, ()), twins)


@dataclass
class Measurement:
    workload: str
    table_rows: int  # rows of orders
    fraction: float
    rows_changed: int
    full_seconds: float
    incremental_seconds: float
    incremental_action: str
    # The incremental refreshes of the warm-up rounds (not in the median): the first
    # refreshes of a statement's shape in a process translate it (see docs/benchmarks.md).
    warmup_incremental_seconds: tuple[float, ...] = ()

    @property
    def ratio(self) -> float:
        return self.full_seconds / self.incremental_seconds


def same_ddl(ddl: str) -> str:
    return ddl


def load(
    dt: DynamicTables,
    orders: pa.Table,
    customers: pa.Table,
    twins: Sequence[str],
    ddl_of: Callable[[str], str] = same_ddl,
) -> None:
    """Create and fill the sources (``ddl_of`` adapts bench_shim's Delta DDL to another
    format), then the twin dynamic tables."""
    amount = orders.schema.get_field_index("amount")
    as_money = pc.cast(orders.column(amount), AMOUNT, safe=False)  # cents: nothing lost
    orders = orders.set_column(amount, pa.field("amount", AMOUNT), as_money)
    for ddl, name, table in (
        (ORDERS, "orders", orders),
        (CUSTOMERS_DDL, "customers", customers),
    ):
        dt.sql(ddl_of(ddl))
        dt.session.createDataFrame(table).createOrReplaceTempView("generated")
        dt.sql(f"INSERT INTO {name} SELECT * FROM generated")
        dt.session.catalog.dropTempView("generated")
    for name in [stage for pipeline in twins for stage in stages(pipeline)]:
        for mode in ("FULL", "INCREMENTAL"):
            query = QUERIES[name].format(mode=mode.lower())
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


def refresh_pipeline(dt: DynamicTables, twins: str, mode: str) -> tuple[float, str]:
    """Refresh each stage of a workload's ``mode`` twin in order: the time of them all,
    and their actions (one where they agree)."""
    seconds, actions = 0.0, []
    for stage in stages(twins):
        took, action = refresh(dt, f"{stage}_{mode}")
        seconds += took
        actions.append(action)
    return seconds, "/".join(dict.fromkeys(actions))


def settle(dt: DynamicTables, twins: str) -> None:
    """Bring a pair up to date, so that a round refreshes only its own change."""
    for mode in ("full", "incremental"):
        refresh_pipeline(dt, twins, mode)


def measure(
    dt: DynamicTables,
    changes: Changes,
    workload: Workload,
    fraction: float,
    rounds: int,
    warmup: int = 0,
) -> Measurement:
    """``warmup`` rounds, then ``rounds`` rounds whose medians are the measurement: each
    round changes the sources, refreshes the full twin, then the incremental one, and
    checks that they agree (warm-up rounds too)."""
    full_times, incremental_times, actions, counts = [], [], [], []
    for _ in range(warmup + rounds):
        counts.append(workload.change(changes, dt, fraction))
        full_seconds, _ = refresh_pipeline(dt, workload.twins, "full")
        incremental_seconds, action = refresh_pipeline(dt, workload.twins, "incremental")
        full_times.append(full_seconds)
        incremental_times.append(incremental_seconds)
        actions.append(action)
        if not all(same_contents(dt, stage) for stage in stages(workload.twins)):
            raise SystemExit(
                f"FAIL: the {workload.twins} twins differ after a {fraction:.2%} change"
                f" ({workload.label})"
            )
    return Measurement(
        workload.label,
        changes.rows,
        fraction,
        counts[0],
        statistics.median(full_times[warmup:]),
        statistics.median(incremental_times[warmup:]),
        "/".join(sorted(set(actions[warmup:]))),
        tuple(incremental_times[:warmup]),
    )


def row(m: Measurement) -> str:
    action = "" if m.incremental_action == "INCREMENTAL" else f" ({m.incremental_action})"
    full, incremental = m.full_seconds * 1000, m.incremental_seconds * 1000
    return (
        f"| {m.workload} | {m.table_rows:,} | {m.fraction:.2%} | {m.rows_changed:,}"
        f" | {full:,.0f} ms"
        f" | {incremental:,.0f} ms{action} | {m.ratio:.1f}x |"
    )


def warmup_note(measurements: list[Measurement]) -> str:
    """The warm-up rounds' incremental refresh times, workload by workload."""
    timed = [m for m in measurements if m.warmup_incremental_seconds]
    if not timed:
        return ""
    each = "; ".join(
        f"{m.workload} ({m.fraction:.2%}): "
        + ", ".join(f"{seconds * 1000:,.0f}" for seconds in m.warmup_incremental_seconds)
        + " ms"
        for m in timed
    )
    return f"\nIncremental refreshes of the warm-up rounds (not in the medians): {each}"


def report(measurements: list[Measurement]) -> None:
    print(
        "\n| workload | orders | change | rows changed | full | incremental | full / incremental |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for m in measurements:
        print(row(m))
    if note := warmup_note(measurements):
        print(note)


def plot(
    by_change: list[Measurement],
    by_size: list[Measurement],
    by_count: list[Measurement],
    path: Path,
) -> None:
    """Left: the full/incremental time ratio against the fraction changed, one line per
    workload, hollow markers where the incremental twin fell back to a full refresh.
    Then: both refresh times against the table's size, at one change fraction and at one
    number of changed rows."""
    # Imported here: matplotlib is a dev extra, needed only with --plot.
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    curves = [curve for curve in (by_size, by_count) if curve]
    panels = 1 + len(curves)
    figure, axes = plt.subplots(1, panels, figsize=(7 * panels, 5), dpi=110, squeeze=False)
    _plot_ratios(axes[0][0], by_change)
    for index, curve in enumerate(curves, start=1):
        _plot_times(axes[0][index], curve, fixed_count=curve is by_count)
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)


def _plot_ratios(axes: Any, measurements: list[Measurement]) -> None:
    for label in dict.fromkeys(m.workload for m in measurements):
        points = [m for m in measurements if m.workload == label]
        (line,) = axes.plot(
            [m.fraction * 100 for m in points], [m.ratio for m in points], label=label
        )
        for m in points:
            fell_back = m.incremental_action != "INCREMENTAL"
            axes.plot(
                m.fraction * 100,
                m.ratio,
                marker="o",
                color=line.get_color(),
                markerfacecolor="white" if fell_back else line.get_color(),
            )
    axes.axhline(1.0, color="grey", linewidth=0.8, linestyle="--")
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel("rows changed (% of the changed table)")
    axes.set_ylabel("full / incremental refresh time")
    rows = measurements[0].table_rows
    axes.set_title(
        f"{rows:,} orders: full vs incremental refresh\n(hollow marker: the incremental"
        " twin fell back to FULL; above 1: incremental wins)",
        fontsize=10,
    )
    axes.grid(True, which="both", linewidth=0.3)
    axes.legend(fontsize=8)


def _plot_times(axes: Any, measurements: list[Measurement], fixed_count: bool) -> None:
    for label in dict.fromkeys(m.workload for m in measurements):
        points = [m for m in measurements if m.workload == label]
        sizes = [m.table_rows for m in points]
        (line,) = axes.plot(
            sizes, [m.incremental_seconds for m in points], marker="o", label=f"{label}: incr."
        )
        axes.plot(
            sizes,
            [m.full_seconds for m in points],
            marker="s",
            linestyle="--",
            color=line.get_color(),
            label=f"{label}: full",
        )
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel("rows of orders")
    axes.set_ylabel("refresh time (s)")
    changed = (
        f"{measurements[0].rows_changed:,} rows changed"
        if fixed_count
        else f"{measurements[0].fraction:.2%} of rows changed"
    )
    axes.set_title(f"refresh time against table size, {changed}", fontsize=10)
    axes.grid(True, which="both", linewidth=0.3)
    axes.legend(fontsize=8)


def embedded(scratch: Path, rows: int) -> DynamicTables:
    """The embedded engine, on a fresh warehouse in ``scratch``."""
    return DynamicTables(warehouse=scratch / "warehouse")


def run(
    rows: int,
    workloads: Sequence[Workload],
    fractions: list[float],
    rounds: int,
    open_tables: Callable[[Path, int], DynamicTables] = embedded,
    ddl_of: Callable[[str], str] = same_ddl,
    warmup: int = 0,
) -> list[Measurement]:
    """Every workload at every change fraction, on fresh sources of ``rows`` orders."""
    began = time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:
        dt = open_tables(Path(scratch), rows)
        twins = list(dict.fromkeys(w.twins for w in workloads))
        load(dt, make_orders(rows, CUSTOMERS), make_customers(CUSTOMERS), twins, ddl_of)
        print(
            f"loaded {rows:,} orders and {CUSTOMERS:,} customers and created"
            f" {2 * sum(len(stages(t)) for t in twins)} dynamic tables in"
            f" {time.perf_counter() - began:.1f} s",
            flush=True,
        )
        changes = Changes(rows, CUSTOMERS)
        measurements = []
        for workload in workloads:
            for fraction in fractions:
                settle(dt, workload.twins)
                measurements.append(measure(dt, changes, workload, fraction, rounds, warmup))
                print(f"  {row(measurements[-1])}", flush=True)
    return measurements


def main(argv: Sequence[str] | None = None) -> int:
    keys = [w.key for w in WORKLOADS]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rows", type=int, default=2_000_000, help="rows of orders")
    parser.add_argument("--sizes", default="0.0001,0.001,0.01,0.1", help="change fractions")
    parser.add_argument("--rounds", type=int, default=1, help="rounds per size (median)")
    parser.add_argument(
        "--warmup",
        type=int,
        default=2,
        help="rounds per size before those measured (their times are printed apart)",
    )
    parser.add_argument(
        "--workloads", default=",".join(keys), help=f"comma-separated subset of {keys}"
    )
    parser.add_argument(
        "--table-sizes",
        default="",
        help="rows of orders for the curve against table size (e.g. 250000,1000000,4000000)",
    )
    parser.add_argument(
        "--table-size-change", type=float, default=0.001, help="change fraction of that curve"
    )
    parser.add_argument(
        "--table-size-rows-changed",
        type=int,
        default=0,
        help="also a curve at this many changed rows per round (0: none)",
    )
    parser.add_argument(
        "--table-size-workloads",
        default="filter-mixed,group-updates",
        help="workloads of those curves",
    )
    parser.add_argument("--plot", type=Path, help="write the curves to this PNG")
    args = parser.parse_args(argv)
    chosen, by_size_chosen = args.workloads.split(","), args.table_size_workloads.split(",")
    if unknown := [key for key in chosen + by_size_chosen if key not in keys]:
        parser.error(f"unknown workloads {unknown}; choose from {keys}")
    workloads = [w for w in WORKLOADS if w.key in chosen]
    fractions = [float(size) for size in args.sizes.split(",")]
    print(describe_machine())
    began = time.perf_counter()
    by_change = run(args.rows, workloads, fractions, args.rounds, warmup=args.warmup)
    report(by_change)
    by_size: list[Measurement] = []
    by_count: list[Measurement] = []
    if args.table_sizes:
        size_workloads = [w for w in WORKLOADS if w.key in by_size_chosen]
        for rows in [int(size) for size in args.table_sizes.split(",")]:
            # Both curves' points of one size on one warehouse, one after the other.
            fractions = [args.table_size_change]
            if args.table_size_rows_changed:
                fractions.append(args.table_size_rows_changed / rows)
            measured = run(rows, size_workloads, fractions, args.rounds, warmup=args.warmup)
            # (workload by workload, each at every fraction in turn)
            by_size += measured[0 :: len(fractions)]
            by_count += measured[1 :: len(fractions)]
        report(by_size)
        if by_count:
            report(by_count)
    if args.plot:
        plot(by_change, by_size, by_count, args.plot)
        print(f"\nwrote {args.plot}")
    print(f"\ntotal {time.perf_counter() - began:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
