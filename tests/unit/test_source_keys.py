"""Source keys: a named table's lower-case ``db.table``, and a Delta table named by its
path ``delta.`path``` with the path exactly as recorded (case, dots, spaces, backticks),
read back to the same reference by ``key_to_table``."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from sqlglot import exp

from dyntables.catalog import key_to_table, path_of, path_table, table_key
from dyntables.ddl.analysis import QueryAnalyzer, absolute_path
from dyntables.errors import DynamicTableError
from dyntables.planner.analysis import source_key
from dyntables.sql.dialect import parse_one, to_spark_sql

PATHS = [
    "/data/Events.v2",
    "/data/Outside Data/events.2024.parquet.d",
    "/a/b`c/D",
    "file:/data/Sales",
    "s3://Bucket/warehouse/sales.db/Orders",
]


@pytest.mark.parametrize("path", PATHS)
def test_a_path_key_round_trips_exactly(path: str) -> None:
    key = table_key(path_table(path))
    assert key_to_table(key).name == path
    assert table_key(key_to_table(key)) == key
    assert path_of(key_to_table(key)) == path


@pytest.mark.parametrize("path", PATHS)
def test_a_path_key_is_the_reference_as_spark_sql_writes_it(path: str) -> None:
    """The key is the reference itself: parsed from a query, rendered back, it is the
    same (``table_changes`` and messages name the source by it)."""
    reference = parse_one(f"SELECT * FROM delta.`{path.replace('`', '``')}` AS s").find(exp.Table)
    assert reference is not None
    assert path_of(reference) == path
    assert table_key(reference) == to_spark_sql(key_to_table(table_key(reference)))
    assert source_key(reference) == table_key(reference)


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("Sales.Orders", "sales.orders"),
        ("orders", "orders"),
        ("Cat.Sales.Orders", "cat.sales.orders"),
        ("DELTA.`/data/Events`", "delta.`/data/Events`"),
        ("delta.events", "delta.events"),  # a database named delta: no slash, no path
    ],
)
def test_names_and_paths_have_distinct_keys(name: str, key: str) -> None:
    table = exp.to_table(name, dialect="spark")
    assert table_key(table) == key
    assert table_key(key_to_table(key)) == key
    assert (path_of(key_to_table(key)) is not None) == ("/" in key)


def test_relative_paths_are_made_absolute_and_uris_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir("/tmp")
    assert absolute_path("data/Events.v2/") == "/tmp/data/Events.v2"
    assert absolute_path("../Data") == "/Data"
    assert absolute_path("s3://bucket/Key.v1") == "s3://bucket/Key.v1"
    assert absolute_path("file:/data/x") == "file:/data/x"


def test_a_format_that_cannot_read_delta_paths_refuses_them() -> None:
    iceberg = SimpleNamespace(table_format=SimpleNamespace(name="iceberg", reads_delta_paths=False))
    analyzer = QueryAnalyzer(iceberg)  # type: ignore[arg-type]
    with pytest.raises(DynamicTableError, match="this engine's tables are iceberg"):
        analyzer.check_path_source("/data/events")
