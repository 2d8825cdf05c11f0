"""A translated statement writes each value once where its Spark type is known: DuckDB
binds and plans the whole statement at every run, so a value written three times over (a
run-time choice between the translations for every type it might have) costs every
refresh, whose statements cast large CASE expressions. The typing pass's type of a node
stays with its translation, for the rules of the nodes above it to read."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest

from sparkshim import ShimSession, query

pytestmark = pytest.mark.embedded


@pytest.fixture
def translations(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The DuckDB SQL of each statement translated (none kept from another test)."""
    written: list[str] = []
    translate = query.to_duckdb

    def recording(tree, **options):  # type: ignore[no-untyped-def]
        sql = translate(tree, **options)
        written.append(sql)
        return sql

    monkeypatch.setattr(query, "to_duckdb", recording)
    query.TRANSLATIONS.clear()
    yield written
    query.TRANSLATIONS.clear()


@pytest.fixture
def spark(tmp_path: Path) -> ShimSession:
    session = ShimSession(warehouse=str(tmp_path / "warehouse"))
    session.sql("CREATE TABLE totals (k BIGINT, n BIGINT, total DECIMAL(22, 2)) USING delta")
    session.sql("INSERT INTO totals VALUES (1, 2, 10.50), (2, 1, NULL), (3, 4, 99.99)")
    session.sql("CREATE TABLE deltas (k BIGINT, a BIGINT, b BIGINT, amount DECIMAL(22, 2))")
    session.sql(
        "INSERT INTO deltas VALUES (1, 1, 1, 0.25), (2, -1, 0, NULL), (4, 1, 1, 3.00),"
        " (3, 0, -1, -99.99)"
    )
    return session


# An incremental refresh's shape: a group's new total from its old one and its change.
CASE_CAST = (
    "SELECT c.k, CAST(CASE WHEN o.total IS NULL AND NOT c.b > 0 THEN NULL"
    " ELSE COALESCE(o.total, 0) + COALESCE(c.amount, 0) END AS DECIMAL(22, 2)) AS total"
    " FROM deltas AS c LEFT JOIN totals AS o ON o.k IS NOT DISTINCT FROM c.k ORDER BY c.k"
)


def test_a_cast_of_a_typed_case_writes_the_case_once(
    spark: ShimSession, translations: list[str]
) -> None:
    rows = [tuple(row) for row in spark.sql(CASE_CAST).collect()]
    assert rows == [
        (1, Decimal("10.75")),
        (2, None),
        (3, Decimal("0.00")),
        (4, Decimal("3.00")),
    ]
    (sql,) = translations
    # The CASE is a DECIMAL(23, 2) by its static type: cast to DECIMAL(22, 2) as a number,
    # not through a run-time choice of DOUBLE's text rules (the CASE three times over).
    assert sql.count("CASE WHEN") == 1, sql
    assert "TYPEOF" not in sql, sql


def test_a_cast_of_a_typed_double_case_keeps_doubles_rules(
    spark: ShimSession, translations: list[str]
) -> None:
    """The type kept is the one Spark gives: a CASE of DOUBLEs is cast to a DECIMAL by the
    double's decimal text, as Spark does (1.005 is 1.01 at scale 2, where the binary value
    rounds to 1.00), written once too."""
    statement = (
        "SELECT CAST(CASE WHEN k > 0 THEN a * 1.005D END AS DECIMAL(10, 2)) AS d"
        " FROM deltas WHERE k = 1"
    )
    assert [tuple(row) for row in spark.sql(statement).collect()] == [(Decimal("1.01"),)]
    (sql,) = translations
    assert sql.count("CASE WHEN") == 1, sql
    assert "TYPEOF" not in sql, sql
