"""A set operation whose column Spark turns into a STRING (a TIMESTAMP, DOUBLE or DECIMAL
beside a string), where a SELECT names its columns by a ``*`` over a join, as Spark 3.5
answers it (each value below checked against PySpark 3.5, session time zone UTC).

The star is expanded to its columns (as the typing names them, spelled as Spark spells
them) so that each value takes Spark's text (``1.0E-5``, no ``+00``), where DuckDB's text
had been taken; a star that names a column twice or reads a USING join is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparkshim.errors import UnsupportedSqlError
from sparkshim.session import ShimSession

pytestmark = pytest.mark.embedded

_A = "(SELECT 1 AS k, TIMESTAMP'2024-01-05 10:15:00' AS ts) a"
_B = "(SELECT 1 AS k2, 1e-5D AS dd, CAST(0.5 AS DECIMAL(5,4)) AS `Dec`) b"


@pytest.fixture
def spark(tmp_path: Path) -> ShimSession:
    return ShimSession(warehouse=tmp_path / "warehouse")


def _result(spark: ShimSession, sql: str) -> tuple[list[str], list[tuple[object, ...]]]:
    frame = spark.sql(sql)
    rows = sorted((tuple(row) for row in frame.collect()), key=repr)
    return [field.name for field in frame.schema.fields], rows


def test_star_over_a_join(spark: ShimSession) -> None:
    names, rows = _result(
        spark, f"SELECT * FROM {_A} JOIN {_B} ON a.k = b.k2 UNION ALL SELECT 2, 's', 3, 'x', 'y'"
    )
    assert names == ["k", "ts", "k2", "dd", "Dec"]
    assert rows == [(1, "2024-01-05 10:15:00", 1, "1.0E-5", "0.5000"), (2, "s", 3, "x", "y")]


def test_qualified_star_and_star_beside_other_items(spark: ShimSession) -> None:
    _, rows = _result(
        spark, f"SELECT a.*, b.dd FROM {_A} JOIN {_B} ON a.k = b.k2 UNION ALL SELECT 2, 's', 'x'"
    )
    assert rows == [(1, "2024-01-05 10:15:00", "1.0E-5"), (2, "s", "x")]
    _, rows = _result(
        spark,
        f"SELECT *, 'z' FROM {_A} JOIN {_B} ON a.k = b.k2 EXCEPT SELECT 2, 's', 3, 'x', 'y', 'z'",
    )
    assert rows == [(1, "2024-01-05 10:15:00", 1, "1.0E-5", "0.5000", "z")]


def test_star_over_a_comma_join_in_a_later_branch(spark: ShimSession) -> None:
    _, rows = _result(spark, f"SELECT 2, 's', 3, 'x', 'y' UNION SELECT * FROM {_A}, {_B}")
    assert rows == [(1, "2024-01-05 10:15:00", 1, "1.0E-5", "0.5000"), (2, "s", 3, "x", "y")]


def test_star_over_tables(spark: ShimSession) -> None:
    spark.sql("CREATE TABLE t1 (id INT, ts TIMESTAMP) USING delta")
    spark.sql("CREATE TABLE t2 (id2 INT, amount DECIMAL(6,4)) USING delta")
    spark.sql("INSERT INTO t1 VALUES (1, TIMESTAMP'2024-01-05 10:15:00')")
    spark.sql("INSERT INTO t2 VALUES (1, 0.5)")
    names, rows = _result(
        spark,
        "SELECT * FROM t1 LEFT JOIN t2 ON t1.id = t2.id2"
        " INTERSECT SELECT 1, '2024-01-05 10:15:00', 1, '0.5000'",
    )
    assert names == ["id", "ts", "id2", "amount"]
    assert rows == [(1, "2024-01-05 10:15:00", 1, "0.5000")]


@pytest.mark.parametrize(
    "join",
    [
        "(SELECT 1 AS k, 1e-5D AS dd) b ON a.k = b.k",  # k twice
        "(SELECT 1 AS k, 1e-5D AS dd) b USING (k)",
    ],
)
def test_star_that_cannot_be_expanded_is_refused(spark: ShimSession, join: str) -> None:
    columns = "2, 's', 3, 'x'" if "USING" not in join else "2, 's', 'x'"
    with pytest.raises(UnsupportedSqlError, match="name the columns instead of"):
        spark.sql(f"SELECT * FROM {_A} JOIN {join} UNION ALL SELECT {columns}").collect()
