"""Golden tests for the planner: ``plan_refresh`` against ``tests/fixtures/planner.yaml``.

Each fixture case holds a defining query and, beside it, the refresh mode it must get, the
reason code, and the kinds of its operators in order (see the fixture's header for the
fields). The remaining tests pin what the fixture cannot say compactly: the operator names
and strategies, the EXPLAIN rows, the refusal message, and argument checking.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from dyntables.errors import DynamicTableError
from dyntables.planner import (
    NONDETERMINISTIC_FUNCTIONS,
    OPERATOR_KINDS,
    RULE_ORDER,
    NotIncrementalError,
    OperatorStrategy,
    Plan,
    explain_rows,
    plan_refresh,
)

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "planner.yaml"

# Every shop.* table of the fixture has a change feed unless a case says otherwise.
DEFAULT_CHANGE_FEED = {
    "shop.orders": True,
    "shop.customers": True,
    "shop.items": True,
}


def _cases() -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = yaml.safe_load(FIXTURE.read_text(encoding="utf-8"))
    return cases


CASES = _cases()


def _plan(case: dict[str, Any]) -> Plan:
    return plan_refresh(
        case["sql"],
        requested=case.get("requested", "AUTO"),
        change_feed={**DEFAULT_CHANGE_FEED, **case.get("change_feed", {})},
        output_types=[tuple(pair) for pair in case.get("output_types", [])],
        supported=frozenset(case.get("supported", OPERATOR_KINDS)),
    )


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_golden(case: dict[str, Any]) -> None:
    expect = case["expect"]
    if "error" in expect:
        with pytest.raises(NotIncrementalError) as raised:
            _plan(case)
        assert raised.value.reason_code == expect["error"]
        assert raised.value.construct == expect["construct"]
        assert expect["construct"] in str(raised.value)  # the message names the construct
        return
    plan = _plan(case)
    assert plan.mode == expect["mode"]
    assert plan.reason_code == expect["reason_code"]
    assert [op.kind for op in plan.operators] == expect["operators"]
    if "reason_mentions" in expect:
        assert expect["reason_mentions"] in plan.reason


def test_fixture_covers_every_reason_code_and_operator_kind() -> None:
    codes = {case["expect"].get("reason_code") for case in CASES}
    codes |= {case["expect"].get("error") for case in CASES}
    assert set(RULE_ORDER) | {"REFRESH_MODE_FULL"} <= codes
    kinds = {kind for case in CASES for kind in case["expect"].get("operators", [])}
    assert kinds == OPERATOR_KINDS
    assert len(CASES) >= 35
    assert len({case["name"] for case in CASES}) == len(CASES)


def test_fixture_covers_every_refused_rule() -> None:
    refused = {case["expect"]["error"] for case in CASES if "error" in case["expect"]}
    assert len(refused) >= 4


# ---- operators: names and strategies ------------------------------------------------------


def _auto(sql: str, **feed: bool) -> Plan:
    return plan_refresh(
        sql,
        requested="AUTO",
        change_feed={**DEFAULT_CHANGE_FEED, **feed},
        output_types=[],
        supported=OPERATOR_KINDS,
    )


def test_operators_named_in_the_users_terms() -> None:
    plan = _auto(
        "SELECT c.region, count(*) AS n FROM shop.orders o"
        " JOIN shop.customers c ON o.customer_id = c.id GROUP BY c.region"
    )
    assert plan.operators == (
        OperatorStrategy(
            "FROM shop.orders AS o", "SOURCE", "changed rows only, read from the change feed"
        ),
        OperatorStrategy(
            "FROM shop.customers AS c", "SOURCE", "changed rows only, read from the change feed"
        ),
        OperatorStrategy("INNER JOIN shop.customers AS c", "INNER_JOIN", "ΔL ⋈ R + L ⋈ ΔR"),
        OperatorStrategy(
            "GROUP BY c.region",
            "GROUP_BY",
            "recompute the affected groups from their input rows",
        ),
    )


def test_cte_row_names_the_cte_and_follows_its_body() -> None:
    plan = _auto("WITH paid AS (SELECT * FROM shop.orders WHERE paid) SELECT * FROM paid")
    assert [(op.operator, op.kind) for op in plan.operators] == [
        ("FROM shop.orders", "SOURCE"),
        ("WHERE paid", "PROJECT_FILTER"),
        ("WITH paid", "CTE"),
        ("SELECT *", "PROJECT_FILTER"),
    ]


def test_lateral_view_and_window_rows() -> None:
    plan = _auto(
        "SELECT tag, rank() OVER (PARTITION BY tag ORDER BY ts) AS r"
        " FROM shop.orders LATERAL VIEW explode(tags) t AS tag"
    )
    assert [(op.operator, op.strategy) for op in plan.operators[1:]] == [
        ("LATERAL VIEW EXPLODE(tags)", "apply the generator to changed rows"),
        (
            "window RANK() OVER (PARTITION BY tag ORDER BY ts)",
            "rows updated without moving keep their ranks (old values read from the table);"
            " other changes recompute their partitions",
        ),
    ]
    # A window that is not a ranking function (or one inside a subquery) recomputes.
    for query in (
        "SELECT tag, sum(n) OVER (PARTITION BY tag) AS total FROM shop.orders",
        "SELECT * FROM (SELECT tag, rank() OVER (PARTITION BY tag ORDER BY ts) AS r"
        " FROM shop.orders) WHERE r = 1",
    ):
        strategies = [op.strategy for op in _auto(query).operators if op.kind == "WINDOW"]
        assert strategies == [
            "recompute the changed partitions: their input rows (new only, when the table's"
            " rows of a partition are replaced)"
        ], query


def test_blocking_operators_say_how_they_really_refresh() -> None:
    plan = _auto(
        "SELECT id, sum(amount) OVER (ORDER BY ts) AS running FROM legacy.accounts",
        **{"legacy.accounts": False},
    )
    assert plan.reason_code == "WINDOW_WITHOUT_PARTITION_BY"  # precedes the change feed rule
    strategies = {op.kind: op.strategy for op in plan.operators}
    assert strategies == {
        "SOURCE": "full scan every refresh (no change feed)",
        "WINDOW": "recompute everything (no PARTITION BY)",
    }


def test_full_requested_keeps_operator_strategies() -> None:
    plan = plan_refresh(
        "SELECT DISTINCT id FROM shop.orders",
        requested="FULL",
        change_feed=DEFAULT_CHANGE_FEED,
        output_types=[],
        supported=OPERATOR_KINDS,
    )
    assert plan == Plan(
        "FULL",
        "REFRESH_MODE_FULL",
        "REFRESH_MODE = FULL was requested",
        _auto("SELECT DISTINCT id FROM shop.orders").operators,
    )


def test_every_operator_kind_is_known() -> None:
    for case in CASES:
        if "error" not in case["expect"]:
            assert {op.kind for op in _plan(case).operators} <= OPERATOR_KINDS


# ---- reasons --------------------------------------------------------------------------------


def test_incremental_reason_sentence() -> None:
    plan = _auto("SELECT id FROM shop.orders")
    assert (plan.mode, plan.reason_code, plan.reason) == (
        "INCREMENTAL",
        None,
        "every operator refreshes incrementally",
    )


@pytest.mark.parametrize(
    ("sql", "reason"),
    [
        (
            "SELECT id FROM shop.orders WHERE id IN (SELECT order_id FROM shop.items)",
            "IN (subquery) in WHERE is a subquery outside FROM, which cannot refresh incrementally",
        ),
        (
            "SELECT id, now() AS t FROM shop.orders",
            "now() is nondeterministic, so it cannot be maintained incrementally",
        ),
        (
            "SELECT id FROM shop.orders ORDER BY id",
            "ORDER BY id at the top level of the query cannot refresh incrementally",
        ),
        ("SELECT id FROM legacy.accounts", "source legacy.accounts has no change feed"),
        (
            "SELECT max(id) AS m FROM shop.orders",
            "the query is an aggregate without GROUP BY, which recomputes fully on every change",
        ),
        (
            "SELECT id FROM shop.orders EXCEPT ALL SELECT id FROM shop.items",
            "EXCEPT ALL is not incremental yet",
        ),
    ],
)
def test_reason_sentences(sql: str, reason: str) -> None:
    assert _auto(sql).reason == reason


def test_nondeterministic_functions_constant() -> None:
    assert {"rand", "randn", "uuid", "shuffle", "current_timestamp", "now"} <= (
        NONDETERMINISTIC_FUNCTIONS
    )
    assert {"monotonically_increasing_id", "input_file_name", "current_date"} <= (
        NONDETERMINISTIC_FUNCTIONS
    )


@pytest.mark.parametrize("name", sorted(NONDETERMINISTIC_FUNCTIONS))
def test_each_nondeterministic_function_is_found(name: str) -> None:
    args = {"shuffle": "tags", "randstr": "5", "uniform": "0, 10"}.get(name, "")
    plan = _auto(f"SELECT id, {name}({args}) AS v FROM shop.orders")
    assert plan.reason_code == "NONDETERMINISTIC_FUNCTION"


def test_deterministic_builtin_is_fine() -> None:
    assert _auto("SELECT upper(name), date_trunc('DAY', ts) FROM shop.orders").mode == (
        "INCREMENTAL"
    )


# ---- REFRESH_MODE = INCREMENTAL refused ------------------------------------------------------


def test_refusal_message_names_construct_and_way_out() -> None:
    with pytest.raises(NotIncrementalError) as raised:
        plan_refresh(
            "SELECT id FROM shop.orders LIMIT 10",
            requested="INCREMENTAL",
            change_feed=DEFAULT_CHANGE_FEED,
            output_types=[],
            supported=OPERATOR_KINDS,
        )
    err = raised.value
    assert isinstance(err, DynamicTableError)
    assert (err.reason_code, err.construct) == ("LIMIT_AT_TOP_LEVEL", "LIMIT 10")
    assert str(err) == (
        "REFRESH_MODE = INCREMENTAL is not possible: LIMIT 10 at the top level of the query"
        " cannot refresh incrementally (LIMIT_AT_TOP_LEVEL); use REFRESH_MODE = FULL or AUTO"
    )


def test_requested_mode_is_case_insensitive_and_checked() -> None:
    plan = plan_refresh(
        "SELECT id FROM shop.orders",
        requested="auto",
        change_feed=DEFAULT_CHANGE_FEED,
        output_types=[],
        supported=OPERATOR_KINDS,
    )
    assert plan.mode == "INCREMENTAL"
    with pytest.raises(ValueError, match="CUSTOM_INCREMENTAL"):
        plan_refresh(
            "SELECT id FROM shop.orders",
            requested="CUSTOM_INCREMENTAL",
            change_feed=DEFAULT_CHANGE_FEED,
            output_types=[],
            supported=OPERATOR_KINDS,
        )


# ---- explain_rows ----------------------------------------------------------------------------


def test_explain_rows_incremental() -> None:
    plan = _auto("SELECT DISTINCT customer_id FROM shop.orders WHERE paid")
    assert explain_rows(plan) == [
        ("refresh_mode", "", "INCREMENTAL"),
        ("reason", "", "every operator refreshes incrementally"),
        ("FROM shop.orders", "SOURCE", "changed rows only, read from the change feed"),
        ("WHERE paid", "PROJECT_FILTER", "changed rows only"),
        ("DISTINCT", "DISTINCT", "recompute the affected distinct rows: their input rows"),
    ]


def test_explain_rows_full() -> None:
    plan = _auto("SELECT id FROM shop.orders UNION ALL SELECT id FROM legacy.accounts")
    rows = explain_rows(plan)
    assert rows[:2] == [
        ("refresh_mode", "", "FULL"),
        ("reason", "SOURCE_WITHOUT_CHANGE_FEED", "source legacy.accounts has no change feed"),
    ]
    # A FULL refresh recomputes the whole query: no step claims to read changed rows only.
    assert rows[2:] == [
        ("FROM shop.orders", "SOURCE", "read in full"),
        ("FROM legacy.accounts", "SOURCE", "read in full"),
        ("SELECT id", "PROJECT_FILTER", "recomputed over all its input rows"),
        ("SELECT id", "PROJECT_FILTER", "recomputed over all its input rows"),
        ("UNION ALL", "UNION_ALL", "recomputed over all its input rows"),
    ]
    assert plan.operators[-1].strategy == "union of each side's changes"  # the plan keeps it


def test_explain_rows_of_a_requested_full_plan() -> None:
    plan = plan_refresh(
        "SELECT customer_id, count(*) AS n FROM shop.orders WHERE paid GROUP BY customer_id",
        requested="FULL",
        change_feed=DEFAULT_CHANGE_FEED,
        output_types=[],
        supported=OPERATOR_KINDS,
    )
    assert explain_rows(plan)[1:] == [
        ("reason", "REFRESH_MODE_FULL", "REFRESH_MODE = FULL was requested"),
        ("FROM shop.orders", "SOURCE", "read in full"),
        ("WHERE paid", "PROJECT_FILTER", "recomputed over all its input rows"),
        ("GROUP BY customer_id", "GROUP_BY", "recomputed over all its input rows"),
    ]


def test_explain_rows_of_a_hand_made_plan() -> None:
    plan = Plan("FULL", "REFRESH_MODE_FULL", "REFRESH_MODE = FULL was requested", ())
    assert explain_rows(plan) == [
        ("refresh_mode", "", "FULL"),
        ("reason", "REFRESH_MODE_FULL", "REFRESH_MODE = FULL was requested"),
    ]
