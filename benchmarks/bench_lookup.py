"""A semi join through the row index against reading the table, by table size.

The embedded engine answers a semi join that looks a table up by some of its columns
(``t.k <=> o.k``) through the table's row index (``sparkshim/row_index.py``): the values
looked up are computed first, on their own, found in each data file's index, and the rows'
other columns are read at the positions found. That has a cost of its own, whatever the
table's size; reading the table costs its size. ``sparkshim.rowIndex.minRows`` (500,000
stored rows by default) says from which size the index is used; this script measures
where the two cross.

For each table size, a Delta table with deletion vectors (one large data file, four small
ones, some rows deleted) and 2,000 keys to look up; the same query runs with the index
(``sparkshim.rowIndex.minRows = 0``) and without it (``sparkshim.rowIndex.enabled =
false``), alternately, after one lookup that builds the indexes. Each figure is the median
of the rounds. Run it with ``.venv/bin/python benchmarks/bench_lookup.py`` (``--sizes``,
``--rounds``; about a minute).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_shim import describe_machine

from sparkshim.config import ROW_INDEX_CONF, ROW_INDEX_MIN_ROWS_CONF
from sparkshim.session import ShimSession

KEYS = 2_000


def build(session: ShimSession, name: str, rows: int) -> str:
    """The table ``name`` of ``rows`` rows; the lookup of ``KEYS`` keys in it."""
    session.sql(
        f"CREATE TABLE {name} (k BIGINT, a BIGINT, b STRING, c DECIMAL(12, 2)) USING delta"
        " TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')"
    )
    session.sql(f"INSERT INTO {name} SELECT id, id * 2, 'x' || id, id / 3 FROM range({rows})")
    for batch in range(4):  # the small files a refresh's writes add
        start = rows + batch * 10
        session.sql(f"INSERT INTO {name} SELECT id, id, 'y', 1 FROM range({start}, {start + 10})")
    session.sql(f"DELETE FROM {name} WHERE k % 1000 = 7")
    return (
        f"SELECT t.* FROM {name} AS t LEFT SEMI JOIN (SELECT k FROM lookup_keys) AS o"
        " ON t.k <=> o.k"
    )


def timed(session: ShimSession, query: str, settings: dict[str, str]) -> float:
    for key, value in settings.items():
        session.conf.set(key, value)
    try:
        started = time.perf_counter()
        session.sql(query).collect()
        return time.perf_counter() - started
    finally:
        for key in settings:
            session.conf.unset(key)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="50000,200000,500000,1000000,4000000")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print(describe_machine())
    indexed = {ROW_INDEX_MIN_ROWS_CONF: "0"}
    read = {ROW_INDEX_CONF: "false"}
    with tempfile.TemporaryDirectory() as scratch:
        session = ShimSession(warehouse=str(Path(scratch) / "warehouse"))
        session.sql("CREATE TABLE lookup_keys (k BIGINT) USING delta")
        session.sql(f"INSERT INTO lookup_keys SELECT id * 37 FROM range({KEYS})")
        print("\n| table rows | keys looked up | through the index | reading the table |")
        print("| ---: | ---: | ---: | ---: |")
        for number, rows in enumerate(int(size) for size in args.sizes.split(",")):
            query = build(session, f"t{number}", rows)
            timed(session, query, indexed)  # builds the indexes
            through_index, reading = [], []
            for _ in range(args.rounds):
                through_index.append(timed(session, query, indexed))
                reading.append(timed(session, query, read))
            print(
                f"| {rows:,} | {KEYS:,} | {statistics.median(through_index) * 1000:.0f} ms"
                f" | {statistics.median(reading) * 1000:.0f} ms |",
                flush=True,
            )


if __name__ == "__main__":
    main()
