"""The incremental-refresh derivation as emitted SQL, without an engine (the embedded
property tests check the same rules against a full recompute)."""

from __future__ import annotations

import datetime
from decimal import Decimal

import pytest
from sqlglot import exp

from dyntables.formats.delta import DeltaFormat
from dyntables.incremental import (
    CannotRefreshIncrementallyError,
    ChangeDeriver,
    Versions,
    group_keys,
    inline_ctes,
    literal,
    null_safe_match,
    parse_query,
    spark,
)

COLUMNS = {"shop.orders": ["id", "cid", "amount"], "shop.customers": ["cid", "region"]}


def deriver(old: dict[str, int | None], new: dict[str, int | None]) -> ChangeDeriver:
    return ChangeDeriver(None, DeltaFormat(embedded=True), Versions(old, new), COLUMNS.__getitem__)


def change_sql(query: str, old: dict[str, int | None], new: dict[str, int | None]) -> str:
    change = deriver(old, new).change(inline_ctes(parse_query(query)))
    return "" if change is None else spark(change).replace("TABLE_CHANGES(", "table_changes(")


def test_a_source_change_is_its_signed_change_feed() -> None:
    sql = change_sql(
        "SELECT id FROM shop.orders WHERE amount > 1", {"shop.orders": 3}, {"shop.orders": 5}
    )
    assert "table_changes('shop.orders', 4, 5)" in sql
    assert "CASE WHEN _change_type IN ('insert', 'update_postimage') THEN 1 ELSE -1 END" in sql
    assert "WHERE amount > 1" in sql


def test_an_unchanged_source_has_no_change() -> None:
    assert change_sql("SELECT id FROM shop.orders", {"shop.orders": 3}, {"shop.orders": 3}) == ""


def test_a_join_is_the_telescoping_sum_with_old_and_new_pins() -> None:
    query = "SELECT o.id, c.region FROM shop.orders o JOIN shop.customers c ON o.cid = c.cid"
    sql = change_sql(
        query, {"shop.orders": 1, "shop.customers": 7}, {"shop.orders": 2, "shop.customers": 9}
    )
    first, second = sql.split(" UNION ALL ")
    # Δorders ⋈ customers(old), then orders(new) ⋈ Δcustomers.
    assert "table_changes('shop.orders', 2, 2)" in first
    assert "shop.customers VERSION AS OF 7" in first
    assert "shop.orders VERSION AS OF 2" in second
    assert "table_changes('shop.customers', 8, 9)" in second


def test_only_changed_inputs_contribute_terms() -> None:
    query = "SELECT o.id, c.region FROM shop.orders o JOIN shop.customers c ON o.cid = c.cid"
    sql = change_sql(
        query, {"shop.orders": 1, "shop.customers": 7}, {"shop.orders": 1, "shop.customers": 9}
    )
    assert "UNION ALL" not in sql
    assert "shop.orders VERSION AS OF 1" in sql


def test_union_all_distributes_and_ctes_are_inlined_per_use() -> None:
    query = (
        "WITH big AS (SELECT id FROM shop.orders WHERE amount > 9)"
        " SELECT id FROM big UNION ALL SELECT id FROM big"
    )
    sql = change_sql(query, {"shop.orders": 1}, {"shop.orders": 2})
    assert sql.count("table_changes('shop.orders', 2, 2)") == 2
    assert "WITH" not in sql


def test_constructs_not_incremental_yet_are_refused() -> None:
    for query in (
        "SELECT o.id FROM shop.orders o LEFT JOIN shop.customers c ON o.cid = c.cid",
        "SELECT id FROM shop.orders UNION SELECT cid FROM shop.customers",
        "SELECT q.n FROM (SELECT count(*) AS n FROM shop.orders) q",
    ):
        with pytest.raises(CannotRefreshIncrementallyError):
            change_sql(
                query,
                {"shop.orders": 1, "shop.customers": 1},
                {"shop.orders": 2, "shop.customers": 2},
            )


def test_group_keys_map_to_output_columns() -> None:
    select = parse_query(
        "SELECT c.region AS r, count(*) AS n FROM shop.customers c GROUP BY c.region"
    )
    assert isinstance(select, exp.Select)
    assert [(key.sql(), name) for key, name in group_keys(select) or []] == [("c.region", "r")]
    by_position = parse_query("SELECT region, count(*) AS n FROM shop.customers GROUP BY 1")
    assert isinstance(by_position, exp.Select)
    assert [name for _, name in group_keys(by_position) or []] == ["region"]
    hidden = parse_query("SELECT count(*) AS n FROM shop.customers GROUP BY region")
    assert isinstance(hidden, exp.Select)
    with pytest.raises(CannotRefreshIncrementallyError, match="not an output column"):
        group_keys(hidden)


@pytest.mark.parametrize(
    ("value", "type_sql", "expected"),
    [
        (None, "int", "CAST(NULL AS INT)"),
        (True, "boolean", "TRUE"),
        (7, "bigint", "7"),
        (7, "smallint", "CAST('7' AS SMALLINT)"),
        (0.1, "double", "CAST('0.1' AS DOUBLE)"),
        (float("nan"), "double", "CAST('NaN' AS DOUBLE)"),
        (Decimal("12.50"), "decimal(10,2)", "CAST('12.50' AS DECIMAL(10, 2))"),
        ("it's", "string", "'it\\'s'"),
        ("2024-01-02 03:04:05.5", "timestamp", "CAST('2024-01-02 03:04:05.5' AS TIMESTAMP)"),
        ("0AFF", "binary", "UNHEX('0AFF')"),
    ],
)
def test_literals_write_values_back_exactly(value: object, type_sql: str, expected: str) -> None:
    assert spark(literal(value, type_sql)) == expected


def test_dates_are_collected_as_text_not_python_objects() -> None:
    with pytest.raises(AssertionError):
        literal(datetime.date(2024, 1, 2), "date")


def test_a_row_value_matches_null_safely() -> None:
    match = null_safe_match([("id", "int"), ("region", "string")], (1, None))
    assert spark(match) == (
        "`id` IS NOT DISTINCT FROM 1 AND `region` IS NOT DISTINCT FROM CAST(NULL AS STRING)"
    )
