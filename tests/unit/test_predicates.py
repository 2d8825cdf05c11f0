"""FROZEN WHERE predicates: validation, Spark spelling, the active region and `expands`."""

from __future__ import annotations

import datetime
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlglot import exp

from dyntables.errors import DynamicTableError
from dyntables.planner.predicates import (
    active_region,
    bind_current_time,
    check_frozen_predicate,
    expands,
    is_frozen,
    to_spark_predicate,
)
from dyntables.sql.dialect import parse_one, to_spark_sql

COLUMNS = ["order_id", "customer_id", "order_date", "order_status", "line_total"]


@pytest.mark.parametrize(
    ("predicate", "spark_sql"),
    [
        (
            "order_date < CURRENT_TIMESTAMP() - INTERVAL '30 days'",
            "order_date < CURRENT_TIMESTAMP() - INTERVAL '30' DAY",
        ),
        ("order_date < '2025-01-01'", "order_date < '2025-01-01'"),
        (
            "order_date < '2025-01-01'::TIMESTAMP_NTZ",
            "order_date < CAST('2025-01-01' AS TIMESTAMP_NTZ)",
        ),
        ("order_status = 'shipped'", "order_status = 'shipped'"),
        ("t.order_date < CURRENT_DATE", "t.order_date < CURRENT_DATE"),
        ("ORDER_DATE < NOW()", "ORDER_DATE < NOW()"),
        ("year(order_date) <= 2023", "YEAR(order_date) <= 2023"),
    ],
)
def test_valid_predicates_read_as_spark(predicate: str, spark_sql: str) -> None:
    tree = check_frozen_predicate(predicate, COLUMNS)
    assert to_spark_sql(tree) == spark_sql == to_spark_predicate(predicate)


@pytest.mark.parametrize(
    ("predicate", "problem"),
    [
        ("order_id IN (SELECT id FROM returns)", "cannot contain a subquery"),
        ("EXISTS (SELECT 1 FROM returns)", "cannot contain a subquery"),
        ("line_total > rand()", "nondeterministic function rand()"),
        ("order_id = uuid()", "nondeterministic function uuid()"),
        ("monotonically_increasing_id() > 5", "nondeterministic function monotonically_incr"),
        ("my_udf(order_id) > 5", "cannot call my_udf(): it is not a Spark built-in"),
        ("METADATA$IS_FROZEN", "metadata column METADATA$IS_FROZEN"),
        ("sum(line_total) > 5", "aggregate function sum()"),
        ("row_number() OVER (ORDER BY order_date) = 1", "window function"),
        ("updated_at < '2025-01-01'", "updated_at, which is not a column of the dynamic table"),
        ("src.updated_at < '2025-01-01'", "src.updated_at, which is not a column"),
        ("line_total + 1", "needs a boolean condition"),
        ("order_date < CURRENT_TIME()", "CURRENT_TIME"),
    ],
)
def test_refusals_name_the_problem(predicate: str, problem: str) -> None:
    with pytest.raises(DynamicTableError, match="FROZEN WHERE") as caught:
        check_frozen_predicate(predicate, COLUMNS)
    assert problem in str(caught.value)


def test_unknown_functions_can_be_looked_up_in_the_session() -> None:
    check_frozen_predicate("normalize_status(order_status) = 'x'", COLUMNS, lambda n: True)
    check_frozen_predicate("weekday(order_date) < 5", COLUMNS)  # a built-in sqlglot lacks
    check_frozen_predicate("exists(array(order_id), x -> x > 0)", COLUMNS)  # a lambda's x


def test_bind_current_time_uses_the_data_timestamp_in_utc() -> None:
    tree = parse_one(
        "a < current_timestamp() - INTERVAL '30 days' AND b < now() AND c < current_date()"
        " AND e < localtimestamp()"
    )
    at = datetime.datetime(2025, 3, 1, 2, 30, tzinfo=datetime.timezone(datetime.timedelta(hours=5)))
    assert to_spark_sql(bind_current_time(tree, at)) == (
        "a < CAST('2025-02-28 21:30:00' AS TIMESTAMP) - INTERVAL '30' DAY"
        " AND b < CAST('2025-02-28 21:30:00' AS TIMESTAMP)"
        " AND c < CAST('2025-02-28' AS DATE)"
        " AND e < CAST('2025-02-28 21:30:00' AS TIMESTAMP_NTZ)"
    )
    assert "current" in to_spark_sql(tree).lower()  # the input is left alone


def test_frozen_and_active_regions() -> None:
    tree = parse_one("a < 1 OR b IS NULL")
    assert to_spark_sql(is_frozen(tree)) == "COALESCE((a < 1 OR b IS NULL), FALSE)"
    assert to_spark_sql(active_region(tree)) == "NOT COALESCE((a < 1 OR b IS NULL), FALSE)"


EXPANDS_CASES = [
    # the spec's examples
    ("y <= 2023", "y <= 2024", True),
    ("d < '2025-01-02'", "d < '2025-01-01'", False),
    ("d < '2025-01-01'", "d < '2025-01-02'", True),
    # identical, modulo parentheses, qualifiers and case
    ("(T.A < 5)", "a < 5", True),
    ("f(a, b) = 3 OR flag", "(f(a, b) = 3) OR flag", True),
    # comparisons, literal on either side
    ("a < 5", "a <= 5", True),
    ("a <= 5", "a < 5", False),
    ("a <= 5", "a < 6", True),
    ("5 > a", "a < 6", True),
    ("a > 5", "a >= 5", True),
    ("a >= 5", "a > 5", False),
    ("a = 3", "a < 4", True),
    ("a = 3", "a <> 4", True),
    ("a = 3", "a <> 3", False),
    ("a <> 3", "a <> 3", True),
    ("a <> 3", "a <> 4", False),
    ("a < 5", "b < 6", False),
    ("a < 5", "a > 0", False),
    # BETWEEN, IN, NULL tests
    ("a BETWEEN 2 AND 4", "a BETWEEN 1 AND 5", True),
    ("a BETWEEN 0 AND 4", "a BETWEEN 1 AND 5", False),
    ("a IN (1, 2)", "a IN (1, 2, 3)", True),
    ("a IN (1, 4)", "a IN (1, 2, 3)", False),
    ("a IN (1, 2)", "a < 3", True),
    ("a NOT IN (1, 2)", "a <> 1", True),
    ("a NOT BETWEEN 1 AND 5", "a < 1 OR a > 4", True),
    ("a < 5", "a IS NOT NULL", True),
    ("a IS NULL", "a IS NULL OR a < 5", True),
    ("a IS NULL", "a < 5", False),
    ("a IN (1, NULL)", "a = 1", True),
    ("a = NULL", "b = 2", True),
    # AND / OR
    ("a < 5 AND b = 1", "a < 6", True),
    ("a < 5 OR b = 1", "a < 6", False),
    ("a < 5 OR a = 7", "a < 8", True),
    ("a < 5", "a < 6 AND a < 7", True),
    ("a < 5", "a < 6 AND b < 7", False),
    ("a < 5", "b = 1 OR a < 6", True),
    ("a < 5 AND b < 5", "a < 6 OR b < 4", True),
    # NOT flips the operator
    ("NOT (a >= 5)", "a < 6", True),
    ("NOT (a < 5)", "a < 6", False),
    ("NOT (a < 5 OR b < 5)", "a >= 5", True),
    # strings, dates and timestamps
    ("s = 'shipped'", "s IN ('delivered', 'shipped')", True),
    ("s < 'b'", "s < 'c'", True),
    ("s = '10'", "s <> '9'", False),  # '10' and '9' might be numbers or strings
    ("d < '2025-01-01'", "d <= '2025-01-01 00:00:00'", True),
    ("d <= '2025-01-01 10:00:00'", "d < '2025-01-01 11:00:00'", False),  # a DATE column
    ("d < DATE '2024-01-01'", "d < CAST('2024-06-01' AS DATE)", True),
    ("d < '2024-01-01'::TIMESTAMP_NTZ", "d < TIMESTAMP_NTZ '2024-01-02 00:00:00'", True),
    ("d < DATE '2024-01-01'", "d < TIMESTAMP '2024-06-01 00:00:00'", False),  # date vs ts
    ("d < TIMESTAMP '2024-01-01 00:00:00'", "d < '2024-06-01'::TIMESTAMP_NTZ", False),
    ("d < DATE '2024-01-01'", "d < '2024-06-01'", False),  # a string column reads it as text
    ("a < 5", "a < 5.5", False),  # an INT and a DECIMAL literal
    ("a < 5.25", "a < 5.5", False),  # different scales
    ("a < 5.25", "a < 5.50", True),
    ("a < 1e3", "a <= 2e3", True),
    # the clock
    ("d < current_timestamp() - INTERVAL '30 days'", "d < now() - INTERVAL '20' DAY", True),
    ("d < now() - INTERVAL '20' DAY", "d < current_timestamp() - INTERVAL 30 DAY", False),
    ("d < current_timestamp() - INTERVAL '30' DAY", "d < current_timestamp()", True),
    ("d < current_date() - INTERVAL '1' MONTH", "d < current_date()", True),
    ("d < now() - INTERVAL '1' MONTH", "d < now() - INTERVAL '20' DAY", False),
    ("d < current_date()", "d < current_timestamp()", False),
    ("d < current_timestamp() - INTERVAL '1 day 2 hours'", "d < current_timestamp()", False),
]  # fmt: skip


@pytest.mark.parametrize(("old", "new", "expected"), EXPANDS_CASES)
def test_expands(old: str, new: str, expected: bool) -> None:
    assert expands(parse_one(old), parse_one(new)) is expected


# --- soundness, against an evaluator with SQL's three-valued logic ----------------------------

Row = dict[str, "int | None"]
_OPS = ["<", "<=", ">", ">=", "=", "<>"]


def evaluate(node: exp.Expr, row: Row) -> bool | None:
    """The value of ``node`` (of the shapes `predicates` generates) on ``row``; None is NULL."""
    if isinstance(node, exp.Paren):
        return evaluate(node.this, row)
    if isinstance(node, exp.Not):
        inner = evaluate(node.this, row)
        return None if inner is None else not inner
    if isinstance(node, exp.And):
        left, right = evaluate(node.this, row), evaluate(node.expression, row)
        if left is False or right is False:
            return False
        return None if left is None or right is None else True
    if isinstance(node, exp.Or):
        left, right = evaluate(node.this, row), evaluate(node.expression, row)
        if left is True or right is True:
            return True
        return None if left is None or right is None else False
    if isinstance(node, exp.Is):
        return number(node.this, row) is None
    if isinstance(node, exp.Between):
        low = exp.GTE(this=node.this, expression=node.args["low"])
        high = exp.LTE(this=node.this, expression=node.args["high"])
        return evaluate(exp.And(this=low, expression=high), row)
    if isinstance(node, exp.In):
        equals = [exp.EQ(this=node.this, expression=item) for item in node.expressions]
        return evaluate(exp.or_(*equals), row)
    left, right = number(node.this, row), number(node.expression, row)
    if left is None or right is None:
        return None
    compare = {
        exp.LT: left < right,
        exp.LTE: left <= right,
        exp.GT: left > right,
        exp.GTE: left >= right,
        exp.EQ: left == right,
        exp.NEQ: left != right,
    }
    return compare[type(node)]


def number(node: exp.Expr, row: Row) -> int | None:
    if isinstance(node, exp.Column):
        return row[node.name]
    if isinstance(node, exp.Neg):
        inner = number(node.this, row)
        return None if inner is None else -inner
    if isinstance(node, exp.Null):
        return None
    return int(node.this)


small_ints = st.integers(min_value=-3, max_value=3)
column_names = st.sampled_from(["a", "b"])


def _literal(value: int | None) -> str:
    return "NULL" if value is None else str(value)


@st.composite
def atoms(draw: st.DrawFn) -> str:
    column = draw(column_names)
    shape = draw(st.sampled_from(["cmp", "flipped", "between", "in", "null"]))
    value = draw(small_ints)
    if shape == "cmp":
        return f"{column} {draw(st.sampled_from(_OPS))} {_literal(value)}"
    if shape == "flipped":
        return f"{_literal(value)} {draw(st.sampled_from(_OPS))} {column}"
    negation = draw(st.sampled_from(["", "NOT "]))
    if shape == "between":
        return f"{column} {negation}BETWEEN {value} AND {draw(small_ints)}"
    if shape == "in":
        items = draw(st.lists(st.one_of(small_ints, st.none()), min_size=1, max_size=3))
        return f"{column} {negation}IN ({', '.join(_literal(item) for item in items)})"
    return f"{column} IS {negation}NULL"


predicates = st.recursive(
    atoms(),
    lambda inner: st.one_of(
        st.tuples(inner, st.sampled_from(["AND", "OR"]), inner).map(
            lambda parts: f"({parts[0]}) {parts[1]} ({parts[2]})"
        ),
        inner.map(lambda text: f"NOT ({text})"),
    ),
    max_leaves=4,
)

# Every row over a few values around the literals, NULL included: an exhaustive check.
ALL_ROWS: list[Row] = [
    {"a": a, "b": b} for a, b in itertools.product([None, *range(-5, 6)], repeat=2)
]


@settings(max_examples=200)
@given(predicates, predicates)
def test_expands_is_sound(old_text: str, new_text: str) -> None:
    old, new = parse_one(old_text), parse_one(new_text)
    if expands(old, new):
        for row in ALL_ROWS:
            if evaluate(old, row) is True:
                assert evaluate(new, row) is True, (old_text, new_text, row)


@settings(max_examples=50)
@given(predicates)
def test_expands_is_reflexive(text: str) -> None:
    assert expands(parse_one(text), parse_one(text))
