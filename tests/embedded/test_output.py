"""What users read back on the embedded engine: SHOW's columns, the materialized
views listing with a broken view in it, EXPLAIN in each refresh mode, the graph's text."""

from __future__ import annotations

from pathlib import Path

import pytest

from dyntables import DynamicTables
from dyntables.api import SHOW_TERMINAL_COLUMNS

pytestmark = pytest.mark.embedded


@pytest.fixture
def dt(tmp_path: Path) -> DynamicTables:
    tables = DynamicTables(warehouse=tmp_path / "warehouse")
    tables.sql("CREATE TABLE orders (order_id BIGINT, status STRING) USING delta")
    tables.sql("INSERT INTO orders VALUES (1, 'paid'), (2, 'returned')")
    return tables


# Snowflake's SHOW DYNAMIC TABLES columns, in its order: what code reading the result uses.
SNOWFLAKE_SHOW_COLUMNS = [
    "created_on",
    "name",
    "database_name",
    "schema_name",
    "cluster_by",
    "rows",
    "target_lag",
    "refresh_mode",
    "refresh_mode_reason",
    "warehouse",
    "comment",
    "text",
    "scheduling_state",
    "suspend_reason",
    "data_timestamp",
    "initialize",
    "immutable_where",
    "kind",
]


def test_show_returns_snowflakes_columns_with_or_without_full(dt: DynamicTables) -> None:
    """FULL changes what a terminal prints (tests/embedded/test_sql_cli.py, test_magics.py),
    never the DataFrame."""
    dt.sql(
        "CREATE DYNAMIC TABLE paid TARGET_LAG = '1 minute' WAREHOUSE = wh"
        " AS SELECT order_id FROM orders WHERE status = 'paid'"
    )
    shown = dt.sql("SHOW DYNAMIC TABLES")
    assert shown.columns == SNOWFLAKE_SHOW_COLUMNS
    row = shown.collect()[0]
    assert (row.name, row.schema_name, row.target_lag) == ("paid", "default", "1 minute")
    assert (row.refresh_mode, row.scheduling_state, row.rows) == ("INCREMENTAL", "ACTIVE", 1)
    assert (row.warehouse, row.kind, row.immutable_where) == ("wh", "DYNAMIC_TABLE", None)
    assert row.refresh_mode_reason
    assert row.text.startswith("CREATE DYNAMIC TABLE paid")
    assert row.data_timestamp is not None

    full = dt.sql("SHOW FULL DYNAMIC TABLES LIKE 'pa%'")
    assert full.columns == SNOWFLAKE_SHOW_COLUMNS
    assert full.collect() == shown.collect()
    assert dt.sql("SHOW FULL DYNAMIC TABLES LIKE 'nothing%'").collect() == []
    # What a terminal prints of SHOW is a part of the result, the columns docs name.
    assert set(SHOW_TERMINAL_COLUMNS) < set(SNOWFLAKE_SHOW_COLUMNS)
    assert SHOW_TERMINAL_COLUMNS == (
        "name",
        "schema_name",
        "target_lag",
        "refresh_mode",
        "scheduling_state",
        "data_timestamp",
        "rows",
    )


def test_a_materialized_view_whose_source_was_dropped_is_listed_as_invalid(
    dt: DynamicTables,
) -> None:
    dt.sql("CREATE TABLE kept (x INT) USING delta")
    dt.sql("CREATE MATERIALIZED VIEW broken AS SELECT order_id FROM orders")
    dt.sql("CREATE MATERIALIZED VIEW fine AS SELECT x FROM kept")
    dt.sql("DROP TABLE orders")
    rows = dt.sql(
        "SELECT table_name, is_stale, invalid, invalid_reason"
        " FROM information_schema.materialized_views ORDER BY table_name"
    ).collect()
    assert [tuple(row)[:3] for row in rows] == [("broken", None, True), ("fine", False, False)]
    assert rows[0].invalid_reason.startswith("source default.orders does not exist")
    assert rows[1].invalid_reason is None


def test_explain_of_a_full_table_says_it_recomputes_the_whole_query(dt: DynamicTables) -> None:
    query = "SELECT status, count(*) AS n FROM orders WHERE order_id > 0 GROUP BY status"
    dt.sql(f"CREATE DYNAMIC TABLE whole TARGET_LAG = '1 minute' REFRESH_MODE = FULL AS {query}")
    dt.sql(f"CREATE DYNAMIC TABLE parts TARGET_LAG = '1 minute' AS {query}")
    whole = [tuple(row) for row in dt.sql("EXPLAIN DYNAMIC TABLE whole").collect()]
    assert whole[0] == ("refresh_mode", "", "FULL")
    assert whole[2:] == [
        ("FROM default.orders", "SOURCE", "read in full"),
        ("WHERE order_id > 0", "PROJECT_FILTER", "recomputed over all its input rows"),
        ("GROUP BY status", "GROUP_BY", "recomputed over all its input rows"),
    ]
    parts = [tuple(row) for row in dt.sql("EXPLAIN DYNAMIC TABLE parts").collect()]
    assert parts[0] == ("refresh_mode", "", "INCREMENTAL")
    assert parts[2][2] == "changed rows only, read from the change feed"
    assert parts[4][2] == "recompute the affected groups from their input rows"


def test_the_graph_prints_as_text_in_a_plain_repl(dt: DynamicTables) -> None:
    dt.sql("CREATE DYNAMIC TABLE paid TARGET_LAG = '1 minute' AS SELECT * FROM orders")
    dt.sql(
        "CREATE DYNAMIC TABLE counted TARGET_LAG = DOWNSTREAM REFRESH_MODE = FULL"
        " AS SELECT count(*) AS n FROM paid"
    )
    graph = dt.graph()
    assert repr(graph) == str(graph) == graph.to_text()
    first, second = repr(graph).splitlines()
    assert first.startswith("default.paid  lag 1 minute (every 48 s)")
    assert "mode INCREMENTAL" in first
    assert first.endswith("reads default.orders")
    assert second.startswith("default.counted  lag DOWNSTREAM  mode FULL  ACTIVE")
    assert second.endswith("reads default.paid")
    assert graph._repr_svg_().lstrip().startswith("<svg")  # notebooks still draw it
