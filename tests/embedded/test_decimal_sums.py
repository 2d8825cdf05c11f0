"""Property test: a SUM of DECIMAL values maintained by incremental refreshes equals, to the
last digit and in scale, the same SUM recomputed, after any sequence of inserts, updates
and deletes; and its column keeps Spark's type for the sum, DECIMAL(p + 10, s).

The sums cover DECIMAL columns, products and differences of them (TPC-H Q9's profit,
``price * (1 - disc) - cost * qty``, over a join), NULL values, and a product whose sum is
a DECIMAL(38, s > 6), which Spark cannot add to itself exactly (its groups are recomputed,
see ``dyntables.refresh.aggregates``). Values have up to 8 decimal places and change by amounts of
every scale, so that any rounding along the way shows.
"""

from __future__ import annotations

import decimal
import os
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dyntables import DynamicTables

pytestmark = pytest.mark.embedded

SOURCES = (
    "CREATE TABLE lines (id INT, part INT, grp STRING, qty DECIMAL(12, 2),"
    " price DECIMAL(15, 2), disc DECIMAL(4, 3), rate DECIMAL(20, 8))",
    "CREATE TABLE costs (part INT, cost DECIMAL(15, 2))",
    # Profits with fractions of a cent, in every group: a rounding shows at once.
    "INSERT INTO lines VALUES (1, 1, 'a', 3.00, 1000.10, 0.055, 0.12345678),"
    " (2, 2, 'a', 1.50, 99.99, 0.105, 1.00000001), (3, 1, 'b', 7.25, 12.34, 0.001, NULL),"
    " (4, 2, 'b', 2.00, 5.01, 0.333, 2.5), (5, 3, NULL, 1.00, 0.99, 0.125, -0.00000003)",
    "INSERT INTO costs VALUES (1, 11.11), (2, 2.22), (3, 0.33)",
)
QUERIES = {
    # SUMs of columns (a DECIMAL(30, 8) one too), with a COUNT(*): change arithmetic
    "totals": "SELECT grp, sum(qty) AS qty, sum(price) AS price, sum(rate) AS rate,"
    " count(*) AS n FROM lines GROUP BY grp",
    # TPC-H Q9's shape: the sum of a subquery's profit over a join, without a COUNT(*):
    # change arithmetic
    "profit": "SELECT grp, part, sum(amount) AS amount FROM (SELECT grp, lines.part,"
    " price * (1 - disc) - cost * qty AS amount FROM lines JOIN costs"
    " ON lines.part = costs.part) AS profit GROUP BY grp, part",
    # DECIMAL(38, 10) and DECIMAL(38, 7) sums: their groups are recomputed
    "weighted": "SELECT part, sum(rate * qty) AS by_rate, sum(price * disc * qty) AS off"
    " FROM lines GROUP BY part",
}

ids = st.integers(min_value=1, max_value=6)
parts = st.integers(min_value=1, max_value=3)
groups = st.sampled_from(["'a'", "'b'", "NULL"])


def _decimal(digits: int, scale: int) -> st.SearchStrategy[str]:
    """A literal of up to ``digits`` digits, ``scale`` of them decimal, or (one in ten)
    NULL."""
    bound = 10**digits - 1
    units = st.integers(min_value=-bound, max_value=bound)
    literal = units.map(lambda n: str(decimal.Decimal(n).scaleb(-scale)))
    return st.integers(min_value=0, max_value=9).flatmap(
        lambda draw: st.just("NULL") if draw == 0 else literal
    )


quantities = _decimal(5, 2)
prices = _decimal(7, 2)
discounts = _decimal(3, 3).filter(lambda text: text == "NULL" or not text.startswith("-"))
rates = _decimal(10, 8)

insert = st.builds(
    lambda i, p, g, q, pr, d, r: f"INSERT INTO lines VALUES ({i}, {p}, {g}, {q}, {pr}, {d}, {r})",
    ids,
    parts,
    groups,
    quantities,
    prices,
    discounts,
    rates,
)
# The change: quantities and discounts updated in place.
update_quantity = st.builds(
    lambda q, i: f"UPDATE lines SET qty = qty + {q} WHERE id = {i}", quantities, ids
)
update_discount = st.builds(
    lambda d, p: f"UPDATE lines SET disc = {d} WHERE part = {p}", discounts, parts
)
update_row = st.builds(
    lambda pr, r, g, i: f"UPDATE lines SET price = {pr}, rate = {r}, grp = {g} WHERE id = {i}",
    prices,
    rates,
    groups,
    ids,
)
delete = st.builds(lambda i: f"DELETE FROM lines WHERE id = {i}", ids)
update_cost = st.builds(lambda c, p: f"UPDATE costs SET cost = {c} WHERE part = {p}", prices, parts)
batches = st.lists(
    st.lists(
        st.one_of(insert, update_quantity, update_discount, update_row, delete, update_cost),
        min_size=1,
        max_size=4,
    ),
    min_size=1,
    max_size=3,
)

_EXAMPLES = 6 if os.environ.get("HYPOTHESIS_PROFILE", "ci") == "ci" else 150


def _exact(rows: list[Any]) -> Counter[tuple[Any, ...]]:
    """Rows with each DECIMAL as its text, so that 1.50 and 1.5 differ."""
    return Counter(
        tuple(str(v) if isinstance(v, decimal.Decimal) else v for v in row) for row in rows
    )


@settings(max_examples=_EXAMPLES)
@given(batches=batches)
def test_incremental_decimal_sums_equal_their_recompute_exactly(
    batches: list[list[str]],
) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        dt = DynamicTables(warehouse=Path(scratch) / "warehouse")
        for statement in SOURCES:
            dt.sql(statement)
        for name, query in QUERIES.items():
            dt.sql(
                f"CREATE DYNAMIC TABLE {name} TARGET_LAG = '1 minute'"
                f" REFRESH_MODE = INCREMENTAL AS {query}"
            )
            assert dt.sql(f"SELECT * FROM {name}").dtypes == dt.sql(query).dtypes, name
        for batch in batches:
            for statement in batch:
                dt.sql(statement)
            for name, query in QUERIES.items():
                refreshed = dt.sql(f"ALTER DYNAMIC TABLE {name} REFRESH").collect()[0]
                assert refreshed.action in ("INCREMENTAL", "NO_DATA"), (name, refreshed)
                table_rows = dt.sql(f"SELECT * FROM {name}").collect()
                assert _exact(table_rows) == _exact(dt.sql(query).collect()), name


def test_sum_columns_keep_sparks_decimal_types(tmp_path: Path) -> None:
    """The maintained columns are DECIMAL(p + 10, s) (38 at most) of the summed value's
    DECIMAL(p, s), as Spark types them: no DOUBLE, no lost scale."""
    dt = DynamicTables(warehouse=tmp_path / "warehouse")
    for statement in SOURCES:
        dt.sql(statement)
    dt.sql(f"CREATE DYNAMIC TABLE totals TARGET_LAG = '1 minute' AS {QUERIES['totals']}")
    dt.sql(f"CREATE DYNAMIC TABLE profit TARGET_LAG = '1 minute' AS {QUERIES['profit']}")
    assert dict(dt.sql("SELECT * FROM totals").dtypes) == {
        "grp": "string",
        "qty": "decimal(22,2)",
        "price": "decimal(25,2)",
        "rate": "decimal(30,8)",
        "n": "bigint",
    }
    assert dict(dt.sql("SELECT * FROM profit").dtypes)["amount"] == "decimal(38,5)"
