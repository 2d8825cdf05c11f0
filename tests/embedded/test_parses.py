"""Kept parses (sparkshim/parses.py): a statement run again with other version numbers in
``TABLE_CHANGES`` or ``VERSION AS OF`` is not parsed again, and reads the versions it
names; a number that only looks like a version (in a string, in a comment) never lets one
text take another's tree."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from dyntables import DynamicTables
from sparkshim import ShimSession, commands, parses

pytestmark = pytest.mark.embedded


class ParseSpy:
    """The statements parsed (not found kept)."""

    def __init__(self) -> None:
        self.texts: list[str] = []


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> Iterator[ParseSpy]:
    spy = ParseSpy()
    parse = parses.parse_spark

    def counting(sql: str):  # type: ignore[no-untyped-def]
        spy.texts.append(sql)
        return parse(sql)

    monkeypatch.setattr(parses, "parse_spark", counting)
    commands.PARSES.clear()
    yield spy
    commands.PARSES.clear()


@pytest.fixture
def spark(tmp_path: Path) -> ShimSession:
    return ShimSession(warehouse=str(tmp_path / "warehouse"))


def _rows(spark: ShimSession, statement: str) -> list[tuple[object, ...]]:
    return [tuple(row) for row in spark.sql(statement).collect()]


def test_other_versions_read_their_own_rows_without_a_new_parse(
    spark: ShimSession, parsed: ParseSpy
) -> None:
    spark.sql(
        "CREATE TABLE t (k INT, v STRING) USING delta"
        " TBLPROPERTIES (delta.enableChangeDataFeed = true)"
    )
    for k in range(1, 4):  # versions 1, 2, 3
        spark.sql(f"INSERT INTO t VALUES ({k}, 'v{k}')")
    changes = "SELECT k, v, _change_type FROM table_changes('t', {}, {}) ORDER BY k"
    travel = "SELECT k FROM t VERSION AS OF {} ORDER BY k"
    assert _rows(spark, changes.format(1, 1)) == [(1, "v1", "insert")]
    assert _rows(spark, travel.format(1)) == [(1,)]
    parsed.texts.clear()
    assert _rows(spark, changes.format(2, 3)) == [(2, "v2", "insert"), (3, "v3", "insert")]
    assert _rows(spark, changes.format(3, 3)) == [(3, "v3", "insert")]
    assert _rows(spark, travel.format(2)) == [(1,), (2,)]
    assert _rows(spark, travel.format(3)) == [(1,), (2,), (3,)]
    assert parsed.texts == []
    # A number of another length is another text: parsed once, then kept too.
    for k in range(4, 11):
        spark.sql(f"INSERT INTO t VALUES ({k}, 'v{k}')")
    parsed.texts.clear()
    assert _rows(spark, travel.format(10)) == [(k,) for k in range(1, 11)]
    assert _rows(spark, changes.format(10, 10)) == [(10, "v10", "insert")]
    assert len(parsed.texts) == 2


@pytest.mark.parametrize(
    ("template", "value"),
    [
        ("SELECT \"TABLE_CHANGES('t', {}, 2)\" AS s", "TABLE_CHANGES('t', 7, 2)"),
        ("SELECT 'VERSION AS OF {}' AS s", "VERSION AS OF 7"),
        ("SELECT 1 AS s -- VERSION AS OF {}", 1),
        ("SELECT 1 AS s /* TABLE_CHANGES('t', {}, 3) */", 1),
    ],
)
def test_a_number_that_is_not_a_version_is_parsed_each_time(
    spark: ShimSession, parsed: ParseSpy, template: str, value: object
) -> None:
    first, second = template.format(5), template.format(7)
    assert _rows(spark, first) == _rows(spark, first)
    assert _rows(spark, second) == [(value,)]
    assert parsed.texts == [first, first, second]


def test_a_kept_tree_is_not_changed_by_the_statements_given_it() -> None:
    kept = parses.Parses()
    text = "SELECT a FROM TABLE_CHANGES('t', 1, 2) WHERE b = 3"
    tree = kept.parse(text)
    tree.set("where", None)  # the caller's tree is its own
    again = kept.parse("SELECT a FROM TABLE_CHANGES('t', 4, 5) WHERE b = 3")
    assert kept.hits == 1
    assert again.sql("spark") == "SELECT a FROM TABLE_CHANGES('t', 4, 5) WHERE b = 3"


def test_a_refresh_parses_its_statements_once(tmp_path: Path, parsed: ParseSpy) -> None:
    dt = DynamicTables(warehouse=tmp_path / "warehouse")
    dt.sql("CREATE TABLE orders (id INT, customer INT, amount DECIMAL(10, 2)) USING delta")
    dt.sql("INSERT INTO orders VALUES (1, 1, 1.00), (2, 2, 2.00)")
    dt.sql(
        "CREATE DYNAMIC TABLE totals TARGET_LAG = '1 hour' REFRESH_MODE = INCREMENTAL"
        " AS SELECT customer, count(*) AS n, sum(amount) AS total FROM orders GROUP BY customer"
    )
    feeds: list[int] = []
    for round_ in range(3):
        dt.sql(f"UPDATE orders SET amount = amount + 1 WHERE id = {1 + round_ % 2}")
        parsed.texts.clear()
        dt.sql("ALTER DYNAMIC TABLE totals REFRESH")
        feeds.append(sum("TABLE_CHANGES" in text.upper() for text in parsed.texts))
    assert feeds[0] >= 1
    assert feeds[1:] == [0, 0]
    assert _rows(dt.session, "SELECT customer, n, total FROM totals ORDER BY customer") == _rows(
        dt.session,
        "SELECT customer, count(*), sum(amount) FROM orders GROUP BY customer ORDER BY customer",
    )
