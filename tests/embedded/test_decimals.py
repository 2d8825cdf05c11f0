"""Spark's DECIMAL semantics in sparkshim: the static type rules, the exact arithmetic, and
the result types and values compared with real PySpark (ANSI off)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import pytest
from sqlglot import exp

from sparkshim import ShimSession
from sparkshim.decimals import FUNCTION_NAME, arithmetic, compute, register
from sparkshim.errors import UnsupportedSqlError
from sparkshim.spark_typing import (
    DecimalType,
    adjust_precision_scale,
    avg_type,
    literal_type,
    result_type,
    sum_type,
    wider_type,
)
from sparkshim.translate import parse_spark

pytestmark = pytest.mark.embedded

D = DecimalType


# ---- the type rules ----


@pytest.mark.parametrize(
    ("operator", "left", "right", "expected"),
    [
        ("+", D(10, 2), D(5, 3), D(12, 3)),
        ("-", D(38, 0), D(1, 0), D(38, 0)),
        ("+", D(38, 10), D(38, 10), D(38, 9)),
        ("*", D(10, 2), D(5, 3), D(16, 5)),
        ("*", D(38, 18), D(38, 18), D(38, 6)),
        ("*", D(38, 0), D(3, 0), D(38, 0)),
        ("/", D(10, 2), D(5, 3), D(19, 8)),
        ("/", D(38, 18), D(38, 18), D(38, 6)),
        ("/", D(20, 2), D(20, 0), D(38, 20)),
        ("%", D(10, 2), D(5, 3), D(5, 3)),
        ("%", D(38, 0), D(5, 3), D(5, 3)),
    ],
)
def test_result_types(
    operator: str, left: DecimalType, right: DecimalType, expected: DecimalType
) -> None:
    assert result_type(operator, left, right) == expected


@pytest.mark.parametrize(
    ("operator", "left", "right", "expected"),
    [
        ("*", D(38, 18), D(38, 18), D(38, 36)),
        ("/", D(38, 18), D(38, 18), D(38, 18)),
        ("/", D(10, 2), D(5, 3), D(19, 8)),
        ("+", D(38, 10), D(38, 10), D(38, 10)),
    ],
)
def test_result_types_without_precision_loss(
    operator: str, left: DecimalType, right: DecimalType, expected: DecimalType
) -> None:
    assert result_type(operator, left, right, allow_precision_loss=False) == expected


def test_adjusting_keeps_integral_digits_and_at_least_six_fractional() -> None:
    assert adjust_precision_scale(40, 10) == D(38, 8)
    assert adjust_precision_scale(77, 36) == D(38, 6)
    assert adjust_precision_scale(40, 3) == D(38, 3)


def test_aggregate_types() -> None:
    assert sum_type(D(10, 2)) == D(20, 2)
    assert sum_type(D(35, 2)) == D(38, 2)
    assert avg_type(D(10, 2)) == D(14, 6)
    assert avg_type(D(38, 36)) == D(38, 38)


@pytest.mark.parametrize(
    ("literal", "expected"),
    [
        ("5", "int"),
        ("5000000000", "bigint"),
        ("12345678901234567890", D(20, 0)),
        ("1.5", D(2, 1)),
        ("0.05", D(2, 2)),
        ("100.00", D(5, 2)),
        (".5", D(1, 1)),
        ("1.5e0", "double"),
    ],
)
def test_literal_types(literal: str, expected: Any) -> None:
    node = parse_spark(f"SELECT {literal}").expressions[0]
    assert literal_type(node) == expected


def test_wider_types() -> None:
    assert wider_type([D(5, 2), "int"]) == D(12, 2)
    assert wider_type([D(5, 2), "void", D(3, 0)]) == D(5, 2)
    assert wider_type([D(5, 2), "double"]) == "double"
    assert wider_type([D(5, 2), None]) is None


# ---- the exact arithmetic ----


@pytest.mark.parametrize(
    ("operator", "left", "right", "precision", "scale", "expected"),
    [
        ("+", "0.125", "0.5", 10, 2, "0.63"),
        ("-", "-0.125", "0", 10, 2, "-0.13"),
        ("/", "2", "3", 10, 6, "0.666667"),
        ("/", "-2", "3", 10, 6, "-0.666667"),
        ("/", "1", "0", 10, 6, None),
        ("%", "-7.5", "2", 10, 1, "-1.5"),
        ("%", "1", "0", 10, 1, None),
        ("*", "99999999999999999999", "10", 20, 0, None),
        ("-", "99999999999999999999999999999999999999", "1", 38, 0, "9" * 37 + "8"),
        ("+", None, "1", 10, 0, None),
    ],
)
def test_compute(
    operator: str,
    left: str | None,
    right: str | None,
    precision: int,
    scale: int,
    expected: str | None,
) -> None:
    assert compute(operator, left, right, precision, scale) == expected


@pytest.mark.parametrize(
    ("left_type", "right_type"),
    [(D(10, 2), D(5, 3)), (D(25, 2), D(20, 0)), (D(25, 2), D(25, 2)), (D(12, 4), D(7, 7))],
)
def test_integer_division_agrees_with_the_exact_function(
    left_type: DecimalType, right_type: DecimalType
) -> None:
    # The 128-bit integer form of a quotient (Spark's two HALF_UP roundings included)
    # gives what the Python form gives, on random values of every magnitude and sign.
    connection = duckdb.connect()
    register(connection)
    generator = random.Random(19)

    def value(decimal_type: DecimalType) -> str:
        digits = generator.randint(0, decimal_type.precision)
        unscaled = generator.randint(-(10**digits) + 1, 10**digits - 1) if digits else 0
        return f"{Decimal(unscaled).scaleb(-decimal_type.scale):f}"

    rows = [(value(left_type), value(right_type)) for _ in range(400)]
    rows += [("0.1", "0.8"), ("-0.1", "0.8"), ("0.2", "0.3"), ("-0.2", "0.3")]
    result = result_type("/", left_type, right_type)
    left = exp.cast(exp.column("a"), exp.DataType.build(left_type.sql()))
    right = exp.cast(exp.column("b"), exp.DataType.build(right_type.sql()))
    quotient = arithmetic("/", left, left_type, right, right_type, result)
    assert FUNCTION_NAME not in quotient.sql("duckdb")  # the integer form was chosen
    connection.execute("CREATE TABLE t (a VARCHAR, b VARCHAR)")
    connection.executemany("INSERT INTO t VALUES (?, ?)", rows)
    operands = f"CAST({left.sql('duckdb')} AS VARCHAR), CAST({right.sql('duckdb')} AS VARCHAR)"
    got = connection.sql(f"SELECT {operands}, {quotient.sql('duckdb')} FROM t").fetchall()
    for a, b, q in got:
        expected = compute("/", a, b, result.precision, result.scale)
        assert (None if q is None else f"{q:f}") == expected, (a, b)


# ---- against real PySpark ----

pyspark = pytest.importorskip("pyspark")

SETUP = [
    "CREATE TABLE dec_t (id INT, grp STRING, a DECIMAL(10,2), b DECIMAL(5,3), "
    "w DECIMAL(38,18), z DECIMAL(38,0), i INT, l BIGINT, t TINYINT, x DOUBLE) USING {fmt}",
    "INSERT INTO dec_t VALUES "
    "(1, 'p', 12.35, 1.005, 1.123456789012345678, 99999999999999999999999999999999999999, "
    "3, 5, 2, 0.5), "
    "(2, 'p', -0.05, -0.333, -2.000000000000000005, -7, -7, -3, -1, 2.5), "
    "(3, 'q', NULL, 2.500, 0.000000000000000001, 3, NULL, NULL, NULL, NULL), "
    "(4, 'q', 99999999.99, 99.999, 12345678901234567890.123456789012345678, 5, 0, 0, 0, 0.0)",
]

QUERIES = [
    "SELECT 1.5 AS a, 0.05 AS b, 100.00 AS c, -0.5 AS d, 12345678901234567890 AS e",
    "SELECT 1.5 + 2.25 AS a, 0.1 * 0.2 AS b, 1 / 3.0 AS c, 7.5 % 2 AS d, 2.50 - 1 AS e",
    "SELECT a + b AS s, a - b AS d, a * b AS m, a / b AS q, a % b AS r FROM dec_t",
    "SELECT a * i AS ai, a * l AS al, a * t AS at, a + 1 AS a1, a * 1000000000000 AS ab FROM dec_t",
    "SELECT w * 2 AS w2, w * i AS wi, w + w AS ww, w * w AS sq, w / w AS q, w / 3 AS w3 FROM dec_t",
    "SELECT z * 100 AS o, z + 1 AS p, z - z AS zero, z / 7 AS q, z % 7 AS r FROM dec_t",
    "SELECT a + x AS ax, a / x AS q, b * 1.5e0 AS bd FROM dec_t",
    "SELECT sum(a) AS s, avg(a) AS m, sum(w) AS sw, avg(w) AS aw, avg(b) AS ab, sum(z) AS sz "
    "FROM dec_t",
    "SELECT grp, sum(a) / sum(b) AS r, avg(a * b) AS m, 100.00 * sum(CASE WHEN id > 1 THEN a "
    "ELSE 0 END) / sum(a) AS pct FROM dec_t GROUP BY grp",
    "SELECT id, avg(a) OVER (PARTITION BY grp) AS m, sum(b) OVER (ORDER BY id) AS run FROM dec_t",
    "SELECT round(a, 1) AS r1, round(a) AS r0, round(b, 2) AS r2, round(a, -2) AS rn, "
    "round(w, 3) AS rw FROM dec_t",
    "SELECT coalesce(a, 0) AS c, CASE WHEN id > 2 THEN b ELSE a END AS w, if(id = 1, a, i) AS f, "
    "nvl(b, 1.5) AS n FROM dec_t",
    "SELECT u * 2 AS d FROM (SELECT a AS u FROM dec_t UNION ALL SELECT b FROM dec_t) AS s",
    "SELECT m / 4 AS q FROM (SELECT a * b AS m FROM dec_t) AS s",
    "SELECT a div b AS q, z div 7 AS zq, b div 0 AS zero FROM dec_t",
    "SELECT grp, sum(z) AS s, avg(z) AS m, sum(w) AS sw FROM dec_t GROUP BY grp",
    "SELECT id, sum(z) OVER (ORDER BY id) AS run, avg(w) OVER (PARTITION BY grp) AS m FROM dec_t",
    "SELECT sum(z) AS s FROM dec_t WHERE id > 1",
    "SELECT x * 2 AS y, x / 3 AS z FROM VALUES (1.5), (10.25), (-3) AS v(x)",
    "SELECT a + NULL AS n, a * NULL AS m, NULL / a AS q, a / NULL AS r, NULL - b AS t FROM dec_t",
    "SELECT sum(a) / 7.0 AS y FROM dec_t o WHERE b < (SELECT 2 * avg(b) FROM dec_t i "
    "WHERE i.grp = o.grp)",
    "SELECT -0.5 * a AS h, a * -2 AS d, -a / 4 AS q, bround(a, 1) AS b FROM dec_t",
    "SELECT avg(DISTINCT a) AS m, sum(DISTINCT b) AS s, avg(DISTINCT w) AS mw FROM dec_t",
    # A CASE without ELSE is typed by its THENs (its missing ELSE is a NULL)
    "SELECT grp, sum(CASE WHEN id > 1 THEN a END) AS s, avg(CASE WHEN id > 1 THEN a END) AS m,"
    " avg(CASE WHEN i > 0 THEN w END) AS mw FROM dec_t GROUP BY grp",
    "SELECT CASE WHEN id > 1 THEN a END * b AS m, CASE id WHEN 2 THEN b END / 3 AS q FROM dec_t",
    # regr_avgx and regr_avgy average a DECIMAL as a DECIMAL; regr_count is a BIGINT
    "SELECT grp, regr_avgx(a, b) AS ax, regr_avgy(a, b) AS ay, regr_count(a, b) AS n FROM dec_t"
    " GROUP BY grp",
    "SELECT id, regr_avgy(w, i) OVER (PARTITION BY grp) AS ay, regr_count(x, a) OVER () AS n"
    " FROM dec_t",
]


@pytest.fixture(scope="module")
def engines(
    pyspark_session: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Any, ShimSession]]:
    shim = ShimSession(warehouse=str(tmp_path_factory.mktemp("decimals")))
    for statement in SETUP:
        pyspark_session.sql(statement.format(fmt="parquet"))
        shim.sql(statement.format(fmt="delta"))
    yield pyspark_session, shim
    pyspark_session.sql("DROP TABLE IF EXISTS dec_t")
    shim.stop()


def _rows(frame: Any) -> list[str]:
    # repr keeps a Decimal's scale: Decimal('1.50') is not Decimal('1.5').
    return sorted(repr(tuple(row)) for row in frame.collect())


def _assert_same(spark: Any, shim: ShimSession, sql: str) -> None:
    expected = spark.sql(sql)
    actual = shim.sql(sql)
    assert actual.schema.simpleString() == expected.schema.simpleString()
    assert _rows(actual) == _rows(expected)


@pytest.mark.parametrize("sql", QUERIES)
def test_types_and_values_as_in_spark(engines: tuple[Any, ShimSession], sql: str) -> None:
    spark, shim = engines
    _assert_same(spark, shim, sql)


WITHOUT_LOSS = [
    "SELECT w * w AS sq, w / w AS q, w + w AS s, a / b AS ab FROM dec_t",
    "SELECT avg(w) AS m, sum(w) / 7 AS q FROM dec_t",
]


@pytest.mark.parametrize("sql", WITHOUT_LOSS)
def test_without_precision_loss(engines: tuple[Any, ShimSession], sql: str) -> None:
    spark, shim = engines
    setting = "spark.sql.decimalOperations.allowPrecisionLoss"
    spark.conf.set(setting, "false")
    shim.conf.set(setting, "false")
    try:
        _assert_same(spark, shim, sql)
    finally:
        spark.conf.unset(setting)
        shim.conf.unset(setting)


def test_an_untyped_decimal_division_is_still_refused(tmp_path: Path) -> None:
    # element_at() is not typed by sparkshim: the division is checked at run time.
    shim = ShimSession(warehouse=str(tmp_path))
    try:
        shim.sql("CREATE TABLE u (a DECIMAL(10,2)) USING delta")
        shim.sql("INSERT INTO u VALUES (1.50)")
        with pytest.raises(UnsupportedSqlError, match="division of a DECIMAL"):
            shim.sql("SELECT element_at(array(a), 1) / 3 AS q FROM u").collect()
        assert shim.sql("SELECT a / 3 AS q FROM u").collect()[0].q == Decimal("0.5000000")
    finally:
        shim.stop()


STORED = [
    "INSERT INTO stored_t VALUES (1, 42)",  # an INT: Arrow alone checks digits, not values
    "INSERT INTO stored_t SELECT 2, CAST(123456 AS BIGINT)",
    "INSERT INTO stored_t VALUES (3, 1.555), (4, -1.555), (5, 2.545)",  # rounded half up
    "INSERT INTO stored_t SELECT 6, CAST(7.125 AS DECIMAL(20, 3))",
]


def _create_and_run_on_both(
    pyspark_session: Any, shim: ShimSession, create: str, statements: list[str]
) -> None:
    """``create`` (with ``{fmt}``) as parquet on Spark and Delta on the shim, then each of
    ``statements`` on both."""
    pyspark_session.sql(create.format(fmt="parquet"))
    shim.sql(create.format(fmt="delta"))
    for statement in statements:
        pyspark_session.sql(statement)
        shim.sql(statement)


def test_store_assignment_into_a_decimal_column_as_in_spark(
    pyspark_session: Any, tmp_path: Path
) -> None:
    shim = ShimSession(warehouse=str(tmp_path))
    create = "CREATE TABLE stored_t (id INT, d DECIMAL(8, 2)) USING {fmt}"
    try:
        _create_and_run_on_both(pyspark_session, shim, create, STORED)
        _assert_same(pyspark_session, shim, "SELECT * FROM stored_t")
        # An overflow fails on both, with Spark's error class; nothing is written.
        overflow = "INSERT INTO stored_t VALUES (7, 12345678.9)"
        with pytest.raises(Exception, match="CAST_OVERFLOW_IN_TABLE_INSERT"):
            pyspark_session.sql(overflow)
        with pytest.raises(Exception, match="CAST_OVERFLOW_IN_TABLE_INSERT"):
            shim.sql(overflow)
        _assert_same(pyspark_session, shim, "SELECT * FROM stored_t")
    finally:
        pyspark_session.sql("DROP TABLE IF EXISTS stored_t")
        shim.stop()


# Literal texts, each stored through INSERT VALUES (a DECIMAL literal, and a DOUBLE literal
# beside 1e0 in the same VALUES) and through INSERT SELECT.
STORED_TEXTS = ["0.1", "1.1", "2.675", "0.00001", "-2.675", "123456789.123456789", "0.3"]


def test_store_assignment_between_double_and_decimal_as_in_spark(
    pyspark_session: Any, tmp_path: Path
) -> None:
    shim = ShimSession(warehouse=str(tmp_path))
    create = "CREATE TABLE stored_f (src STRING, x DOUBLE, d DECIMAL(20, 10)) USING {fmt}"
    statements = [
        *(f"INSERT INTO stored_f VALUES ('dec {t}', {t}, {t})" for t in STORED_TEXTS),
        *(f"INSERT INTO stored_f VALUES ('dbl {t}', {t}e0, {t}e0)" for t in STORED_TEXTS),
        *(f"INSERT INTO stored_f SELECT 'sel {t}', {t}, {t}e0" for t in STORED_TEXTS),
        "INSERT INTO stored_f VALUES ('mix', 0.1, 0.1), ('mix', 2.675, 1e-5), ('mix', 1.5, 1.5)",
    ]
    try:
        _create_and_run_on_both(pyspark_session, shim, create, statements)
        _assert_same(pyspark_session, shim, "SELECT * FROM stored_f")
        # The stored double is the one nearest the literal's text, so equality finds it.
        for row in shim.sql("SELECT src, x FROM stored_f WHERE src LIKE 'dec %'").collect():
            assert row.x == float(row.src.removeprefix("dec "))
        matches = "SELECT count(*) AS n FROM stored_f WHERE x = 2.675 OR x = 123456789.123456789"
        assert shim.sql(matches).collect()[0].n == 7
        _assert_same(pyspark_session, shim, matches)
    finally:
        pyspark_session.sql("DROP TABLE IF EXISTS stored_f")
        shim.stop()
