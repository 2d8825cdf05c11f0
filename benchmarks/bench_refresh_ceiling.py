"""How far an incremental GROUP BY refresh could beat a full one on the embedded engine.

``bench_refresh.py`` measures the product: a GROUP BY under updates (``grouped`` twins,
2M orders, 0.1 % of them changed). This script puts that ratio next to two bounds, in one
run, on the same tables and the same changes:

* **engine work alone**: the DuckDB work each refresh cannot avoid, written by hand with
  no Spark SQL, no Delta commit and no bookkeeping. Full: the GROUP BY over the orders'
  data files, written to a parquet file. Incremental: the change data files of the
  update (every pre- and post-image) summed per customer, added to the table's rows and
  written to a parquet file (the whole table: its 50k groups are one file, and the
  updates touch groups all over it);
* **best incremental refresh**: the refresh every incremental refresh pays for whatever
  it computes, taken as the cheapest real one (the filter twin's incremental refresh of
  an append of the same size: properties, histories, change feed, one appended file, the
  refresh-history row), plus the incremental engine work above.

``product full / best incremental`` is the most an incremental refresh could gain here
if its change arithmetic and MERGE cost nothing beyond their DuckDB work.

Run it with ``.venv/bin/python benchmarks/bench_refresh_ceiling.py`` (``--rows``,
``--fraction``, ``--rounds``; about a minute at 2M rows). Each figure is the median of
the rounds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from urllib.parse import unquote, urlparse

import duckdb
from deltalake import DeltaTable

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_refresh import CUSTOMERS, Changes, load, refresh, same_contents
from bench_shim import describe_machine, make_customers, make_orders

from dyntables import DynamicTables

# Signs of change rows, as the refresh's change arithmetic counts them.
SIGN = "CASE WHEN _change_type IN ('insert', 'update_postimage') THEN 1 ELSE -1 END"


def location(dt: DynamicTables, table: str) -> str:
    """The table's folder (DESCRIBE DETAIL gives a ``file:`` URI)."""
    uri = str(dt.sql(f"DESCRIBE DETAIL {table}").collect()[0]["location"])
    return unquote(urlparse(uri).path)


def file_list(paths: Sequence[str]) -> str:
    return "[" + ", ".join(f"'{path}'" for path in paths) + "]"


def change_files(table_location: str) -> list[str]:
    """The change data files of the table's latest commit (an UPDATE)."""
    version = DeltaTable(table_location).version()
    commit = Path(table_location, "_delta_log", f"{version:020d}.json")
    actions = [json.loads(line) for line in commit.read_text().splitlines() if line]
    files = [str(Path(table_location, a["cdc"]["path"])) for a in actions if "cdc" in a]
    if not files:
        raise SystemExit(f"FAIL: commit {version} of {table_location} has no change data file")
    return files


def timed(work: Callable[[], object]) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def engine_full(con: duckdb.DuckDBPyConnection, orders: str, out: Path) -> None:
    con.execute(
        f"COPY (SELECT customer_id, count(*) AS n, sum(amount) AS total"
        f" FROM read_parquet({file_list(DeltaTable(orders).file_uris())})"
        f" GROUP BY customer_id) TO '{out}' (FORMAT parquet)"
    )


def engine_incremental(
    con: duckdb.DuckDBPyConnection, orders: str, grouped: str, out: Path
) -> None:
    con.execute(
        f"COPY (WITH change AS (SELECT customer_id, sum({SIGN}) AS n, sum({SIGN} * amount)"
        f" AS total FROM read_parquet({file_list(change_files(orders))}) GROUP BY customer_id)"
        f" SELECT g.customer_id, g.n + coalesce(c.n, 0) AS n,"
        f" g.total + coalesce(c.total, 0) AS total"
        f" FROM read_parquet({file_list(DeltaTable(grouped).file_uris())}) AS g"
        f" LEFT JOIN change AS c USING (customer_id)) TO '{out}' (FORMAT parquet)"
    )


def measure(rows: int, fraction: float, rounds: int) -> dict[str, float]:
    """Median seconds of each figure over ``rounds`` rounds."""
    scratch = Path(tempfile.mkdtemp(prefix="bench-ceiling-"))
    dt = DynamicTables(warehouse=scratch / "warehouse")
    load(dt, make_orders(rows, CUSTOMERS), make_customers(CUSTOMERS), ["grouped", "filtered"])
    changes = Changes(rows, CUSTOMERS)
    for name in ("grouped_full", "grouped_incremental", "filtered_incremental"):
        refresh(dt, name)
    orders, grouped = location(dt, "orders"), location(dt, "grouped_incremental")
    con = duckdb.connect()
    times: dict[str, list[float]] = {}
    for _ in range(rounds):
        changes.update_amounts(dt, fraction)
        figures = {
            "engine full": timed(lambda: engine_full(con, orders, scratch / "full.parquet")),
            "engine incremental": timed(
                lambda: engine_incremental(con, orders, grouped, scratch / "incr.parquet")
            ),
            "product full": refresh(dt, "grouped_full")[0],
            "product incremental": refresh(dt, "grouped_incremental")[0],
        }
        if not same_contents(dt, "grouped"):
            raise SystemExit("FAIL: the grouped twins differ")
        refresh(dt, "filtered_incremental")  # take in the update, untimed
        changes.append(dt, fraction)
        figures["cheapest refresh"] = refresh(dt, "filtered_incremental")[0]
        for name in ("grouped_full", "grouped_incremental"):  # take in the append, untimed
            refresh(dt, name)
        for name, seconds in figures.items():
            times.setdefault(name, []).append(seconds)
    return {name: statistics.median(values) for name, values in times.items()}


def report(rows: int, fraction: float, medians: dict[str, float]) -> None:
    ms = {name: seconds * 1000 for name, seconds in medians.items()}
    best = ms["cheapest refresh"] + ms["engine incremental"]
    print(f"\nGROUP BY under updates, {rows:,} orders, {fraction:.2%} changed (medians, ms):\n")
    print("| figure | full | incremental | full / incremental |")
    print("| --- | ---: | ---: | ---: |")
    for label, full, incremental in (
        ("product (ALTER … REFRESH)", ms["product full"], ms["product incremental"]),
        ("engine work alone (DuckDB)", ms["engine full"], ms["engine incremental"]),
        ("product full / best incremental", ms["product full"], best),
    ):
        print(f"| {label} | {full:,.0f} | {incremental:,.0f} | {full / incremental:.1f}x |")
    print(f"\ncheapest refresh (filter twin, incremental, an append): {ms['cheapest refresh']:.0f}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rows", type=int, default=2_000_000, help="rows of orders")
    parser.add_argument("--fraction", type=float, default=0.001, help="fraction changed")
    parser.add_argument("--rounds", type=int, default=5, help="rounds (median)")
    args = parser.parse_args(argv)
    print(describe_machine())
    report(args.rows, args.fraction, measure(args.rows, args.fraction, args.rounds))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
