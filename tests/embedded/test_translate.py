"""sparkshim.translate against real Spark: every case runs on a local SparkSession and on
DuckDB (parse_spark → to_duckdb) over the same rows, and must agree — or be refused."""

from __future__ import annotations

import datetime as dt
import logging
import math
import os
import re
import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pytest
from pyspark.errors import ParseException

from sparkshim import number_text
from sparkshim.errors import UnsupportedSqlError
from sparkshim.translate import REFUSED, parse_spark, to_duckdb

pytestmark = pytest.mark.embedded

D = Decimal

# ---- the shared input data: (name, Spark DDL schema, Arrow schema, rows) ----

T_ROWS = [
    (
        1,
        1,
        2,
        2.5,
        D("2.50"),
        "abc",
        dt.date(2024, 1, 7),
        dt.datetime(2024, 1, 7, 10, 30, 15),
        [1, 2],
        "g1",
    ),
    (
        2,
        -7,
        2,
        -2.5,
        D("-2.50"),
        "",
        dt.date(2020, 1, 31),
        dt.datetime(2020, 2, 29, 23, 59, 59),
        [],
        "g1",
    ),
    (3, None, 0, None, None, None, None, None, None, "g2"),
    (
        4,
        7,
        None,
        0.125,
        D("1.25"),
        " 12 ",
        dt.date(2021, 12, 31),
        dt.datetime(2021, 12, 31, 0, 0, 0, 500000),
        [3, None],
        "g2",
    ),
    (
        5,
        3,
        -2,
        2.675,
        D("0.05"),
        "Hello World_1",
        dt.date(1999, 3, 1),
        dt.datetime(1999, 3, 1, 7, 5, 9),
        [5],
        None,
    ),
    (
        6,
        2,
        1,
        -0.5,
        D("-0.55"),
        "a\\b",
        dt.date(2000, 2, 29),
        dt.datetime(2000, 2, 29, 12, 0, 0),
        [2, 2, 1],
        "g1",
    ),
]
T_DDL = (
    "id INT, a INT, b INT, x DOUBLE, dec DECIMAL(5,2), s STRING, d DATE, ts TIMESTAMP, "
    "arr ARRAY<INT>, g STRING"
)
T_ARROW = pa.schema(
    [
        ("id", pa.int32()),
        ("a", pa.int32()),
        ("b", pa.int32()),
        ("x", pa.float64()),
        ("dec", pa.decimal128(5, 2)),
        ("s", pa.string()),
        ("d", pa.date32()),
        ("ts", pa.timestamp("us")),
        ("arr", pa.list_(pa.int32())),
        ("g", pa.string()),
    ]
)

STRS = [
    " 12 ",
    "1.5",
    "-1.5",
    "+7",
    "true",
    "yes",
    "Y",
    "1",
    "0",
    "no",
    "abc",
    "",
    "1e3",
    "2020-01-05",
    "2020-01-05 12:00:00",
    "  true  ",
    "99999999999",
    None,
]
MAPS = [(1, {"a": 1, "b": 2}), (2, {}), (3, None)]

TABLES: list[tuple[str, str, pa.Schema, list[tuple[Any, ...]]]] = [
    ("t", T_DDL, T_ARROW, T_ROWS),
    ("strs", "v STRING", pa.schema([("v", pa.string())]), [(v,) for v in STRS]),
    (
        "m",
        "id INT, mp MAP<STRING, INT>",
        pa.schema([("id", pa.int32()), ("mp", pa.map_(pa.string(), pa.int32()))]),
        [(i, list(v.items()) if v is not None else None) for i, v in MAPS],
    ),
]


@pytest.fixture(scope="module")
def spark(pyspark_session: Any) -> Iterator[Any]:
    os.environ["TZ"] = "UTC"
    time.tzset()
    for name, ddl, _, rows in TABLES:
        spark_rows = rows if name != "m" else MAPS
        pyspark_session.createDataFrame(spark_rows, schema=ddl).createOrReplaceTempView(name)
    yield pyspark_session
    for name, *_ in TABLES:
        pyspark_session.catalog.dropTempView(name)


@pytest.fixture(scope="module")
def duck() -> Iterator[duckdb.DuckDBPyConnection]:
    connection = duckdb.connect()
    connection.execute("SET TimeZone = 'UTC'")
    number_text.register(connection)
    for name, _, schema, rows in TABLES:
        columns = list(zip(*rows, strict=True))
        table = pa.table(
            [pa.array(list(c), type=f.type) for c, f in zip(columns, schema, strict=True)],
            schema=schema,
        )
        connection.register(name, table)
    yield connection
    connection.close()


# ---- comparison ----


def _norm(value: Any) -> Any:
    """A comparable form keeping the kinds Spark distinguishes (bool, number, date vs
    timestamp, string, list, struct)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, (int, float, Decimal)):
        return ("num", float(value) if not isinstance(value, int) else value)
    if isinstance(value, dt.datetime):
        return ("ts", value.replace(tzinfo=None))
    if isinstance(value, dt.date):
        return ("date", value)
    if isinstance(value, str):
        return ("str", value)
    if hasattr(value, "asDict"):
        return ("struct", tuple((k, _norm(v)) for k, v in value.asDict().items()))
    if isinstance(value, dict):
        return ("struct", tuple((k, _norm(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return ("list", tuple(_norm(v) for v in value))
    raise TypeError(type(value))


def _sort_key(row: tuple[Any, ...]) -> str:
    def rounded(v: Any) -> Any:
        if isinstance(v, tuple):
            return tuple(rounded(x) for x in v)
        if isinstance(v, float):
            return float(f"{v:.9g}")
        return v

    return repr(rounded(row))


def _same(left: Any, right: Any) -> bool:
    if isinstance(left, float) or isinstance(right, float):
        if isinstance(left, (int, float)) and isinstance(right, (int, float)):
            if math.isnan(left) and math.isnan(right):
                return True
            return math.isclose(left, right, rel_tol=1e-9, abs_tol=1e-12)
        return False
    if isinstance(left, tuple) and isinstance(right, tuple):
        return len(left) == len(right) and all(
            _same(a, b) for a, b in zip(left, right, strict=True)
        )
    return bool(left == right)


def run_spark(spark: Any, sql: str) -> list[tuple[Any, ...]]:
    return [tuple(_norm(v) for v in row) for row in spark.sql(sql).collect()]


def run_duck(duck: duckdb.DuckDBPyConnection, sql: str) -> list[tuple[Any, ...]]:
    # Through Arrow, as the shim reads results (DuckDB's own Python conversion of a
    # TIMESTAMPTZ needs pytz).
    result = duck.sql(to_duckdb(parse_spark(sql))).to_arrow_table()
    columns = [column.to_pylist() for column in result.columns]
    return [tuple(_norm(v) for v in row) for row in zip(*columns, strict=True)]


def assert_agree(spark: Any, duck: duckdb.DuckDBPyConnection, sql: str) -> None:
    expected, actual = run_spark(spark, sql), run_duck(duck, sql)
    if not re.search(r"ORDER BY [^()]*$", sql, re.IGNORECASE):
        expected, actual = sorted(expected, key=_sort_key), sorted(actual, key=_sort_key)
    assert len(expected) == len(actual), (expected, actual)
    for want, got in zip(expected, actual, strict=True):
        assert _same(want, got), (
            f"\nspark:  {want}\nduckdb: {got}\nsql: {to_duckdb(parse_spark(sql))}"
        )


# ---- the cases ----

CASES = [
    # A DOUBLE outside plain notation's range: the JVM's text (1.0E10), made in Python.
    "SELECT CAST(1e10 AS STRING) AS a",
    "SELECT CAST(x / 1000 AS STRING) AS a FROM t",
    # 1. NULL ordering, in queries and windows
    "SELECT id, a FROM t ORDER BY a, id",
    "SELECT id, a FROM t ORDER BY a DESC, id",
    "SELECT id, b FROM t ORDER BY b ASC NULLS LAST, id DESC",
    "SELECT id, s FROM t ORDER BY s DESC NULLS FIRST, id",
    "SELECT id, row_number() OVER (ORDER BY a) FROM t",
    "SELECT id, row_number() OVER (ORDER BY x DESC) FROM t",
    "SELECT id, rank() OVER (PARTITION BY g ORDER BY b DESC) FROM t",
    "SELECT id, dense_rank() OVER (PARTITION BY g ORDER BY a) FROM t",
    "SELECT id, sum(a) OVER (ORDER BY b) FROM t",
    "SELECT id, sum(a) OVER (PARTITION BY g) FROM t",
    "SELECT id, lag(a, 1, 0) OVER (ORDER BY id), lead(a) OVER (ORDER BY id) FROM t",
    "SELECT id, first(a, true) OVER (ORDER BY id DESC ROWS BETWEEN UNBOUNDED PRECEDING AND "
    "CURRENT ROW) FROM t",
    "SELECT id, last(a, true) OVER (ORDER BY b, id ROWS BETWEEN UNBOUNDED PRECEDING AND "
    "UNBOUNDED FOLLOWING) FROM t",
    "SELECT id, collect_list(a) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM t",
    "SELECT g, max(a) FROM t GROUP BY g ORDER BY g",
    # 2. division and remainder
    "SELECT id, a / b, a div b, a % b FROM t",
    "SELECT id, x / 0, a / 0, x % 2, a % 0 FROM t",
    "SELECT 7 / 2, -7 div 2, -7 % 3, 7 % -3, 7.5 div 2, -7.5 div 2, 1 / 3",
    # 3. rounding
    "SELECT id, round(x), round(x, 1), round(x, 2) FROM t",
    "SELECT id, round(dec, 1), round(dec), round(a, -1) FROM t",
    "SELECT round(2.5), round(-2.5), round(125, -1), round(-0.5), round(0.125, 2)",
    "SELECT id, bround(x), bround(x, 2), bround(dec, 1) FROM t",
    "SELECT bround(2.5), bround(3.5), bround(-2.5), bround(0.125, 2)",
    # 4. DESIGN §4 list
    "SELECT id, e FROM t LATERAL VIEW explode(arr) v AS e",
    "SELECT id, e FROM t LATERAL VIEW OUTER explode(arr) v AS e",
    "SELECT id, p, e FROM t LATERAL VIEW posexplode(arr) v AS p, e",
    "SELECT id, p, e FROM t LATERAL VIEW OUTER posexplode(arr) v AS p, e",
    "SELECT id, e1, e2 FROM t LATERAL VIEW explode(arr) a1 AS e1 LATERAL VIEW explode(arr) a2 "
    "AS e2",
    "SELECT id, k, val FROM m LATERAL VIEW explode(mp) x AS k, val",
    "SELECT id, k, val FROM m LATERAL VIEW OUTER explode(mp) x AS k, val",
    "SELECT id, explode(arr) AS e FROM t",
    "SELECT id, dayofweek(d), dayofweek(ts) FROM t",
    "SELECT id, substring(s, 0, 2), substring(s, 1, 2), substring(s, -3, 2), substring(s, 2) "
    "FROM t",
    "SELECT id, substring(s, -2), substr(s, -10, 3), substring(s, 2, -1), substring(s, id - 3, 2)"
    " FROM t",
    "SELECT id, date_add(d, 1), date_sub(d, 1), add_months(d, 1), add_months(d, -1) FROM t",
    "SELECT date_add('2020-02-28', 1), add_months('2020-01-31', 1), date_sub(ts, 1) FROM t",
    "SELECT g, percentile(a, 0.5) FROM t GROUP BY g",
    "SELECT percentile(x, 0.25), percentile(a, 0.9), percentile(dec, 0.5) FROM t",
    "SELECT id, size(arr), size(NULL) FROM t",
    "SELECT id, size(mp) FROM m",
    "SELECT g, first(v, true), last(v, true), count(v) FROM "
    "(SELECT g, CASE WHEN id IN (1, 4) THEN a END AS v FROM t) GROUP BY g",
    "SELECT v, CAST(v AS INT), CAST(v AS BIGINT), CAST(v AS SMALLINT) FROM strs",
    "SELECT v, CAST(v AS BOOLEAN) FROM strs",
    "SELECT v, substring_index(v, '.', 1), substring_index(v, '-', -1), substring_index(v, '0', 2)"
    " FROM strs",
    "SELECT id, negative(a), negative(x), rint(x), rint(a), rint(x / 4) FROM t",
    "SELECT k, forall(a, x -> x > 1), forall(a, x -> x > 0 OR x IS NULL), map_values(m) FROM"
    " VALUES (1, array(2, 3), map('a', 1)), (2, array(2, NULL), map('z', NULL)),"
    " (3, array(0, NULL), map()), (4, CAST(NULL AS ARRAY<INT>), NULL) AS v(k, a, m)",
    "SELECT v, CAST(v AS DOUBLE) FROM strs",
    "SELECT v, CAST(v AS DATE), CAST(v AS TIMESTAMP) FROM strs "
    "WHERE v IS NULL OR v NOT RLIKE '^[0-9]{4}'",
    "SELECT CAST('2020-01-05' AS DATE), CAST(' 2020-01-05 ' AS DATE), "
    "CAST('2020-01-05 12:00:00' AS DATE), CAST('2020-02-30' AS DATE), "
    "CAST('2020-01-05 12:00:00' AS TIMESTAMP), CAST('2020-01-05' AS TIMESTAMP)",
    "SELECT id, CAST(x AS INT), CAST(dec AS INT), CAST(x AS BIGINT), CAST(a AS BOOLEAN), "
    "CAST(x AS BOOLEAN) FROM t",
    "SELECT id, CAST(x AS STRING), CAST(a AS STRING), CAST(d AS STRING), CAST(dec AS STRING), "
    "CAST(a > 1 AS STRING) FROM t",
    "SELECT id, CAST(a AS DOUBLE), CAST(x AS DECIMAL(5, 1)), CAST(d AS TIMESTAMP), "
    "CAST(ts AS DATE) FROM t",
    "SELECT int('42'), double('1.5'), CAST(1.9 AS INT), CAST(-1.9 AS INT), CAST('1.9' AS INT)",
    "SELECT id, trunc(d, 'MM'), trunc(d, 'YEAR'), trunc(d, 'week'), trunc(d, 'Q'), "
    "trunc(ts, 'quarter') FROM t",
    "SELECT id, date_trunc('HOUR', ts), date_trunc('MM', ts), date_trunc('week', ts), "
    "date_trunc('DD', d), date_trunc('second', ts) FROM t",
    "SELECT id, unix_timestamp(ts), unix_timestamp(d) FROM t",
    "SELECT unix_timestamp('2020-01-01 00:00:01'), unix_timestamp('2020-01-01', 'yyyy-MM-dd'), "
    "unix_timestamp('2020-01-01'), unix_timestamp('garbage')",
    # 5. everyday functions
    "SELECT id, concat(s, 'x'), concat(s, NULL), concat_ws('-', s, NULL, 'z'), s || '!' FROM t",
    "SELECT id, coalesce(a, b, 0), nvl(a, 99), if(a > 0, 'pos', 'nonpos'), "
    "CASE WHEN a IS NULL THEN 'n' WHEN a < 0 THEN 'neg' ELSE 'other' END FROM t",
    "SELECT id, greatest(a, b), least(a, b, 0), greatest(x, NULL) FROM t",
    "SELECT id, upper(s), lower(s), trim(s), ltrim(s), rtrim(s), length(s) FROM t",
    "SELECT id, split(s, ' '), split(s, '[lo]+') FROM t",
    "SELECT split('a,b,,', ','), split('', ','), split('abc', ''), split('a1b22c', '[0-9]+')",
    "SELECT id, split(s, ' ', 2), split(s, 'l', 1), split(s, 'l', 3), split(s, 'l', -1), "
    "split(s, 'l', 0) FROM t",
    "SELECT id, regexp_extract(s, '([a-z]+)', 1), regexp_extract(s, '(\\\\d+)'), "
    "regexp_extract(s, '([A-Z])([a-z]+)', 2) FROM t",
    "SELECT id, regexp_replace(s, '[aeiou]', '*'), s RLIKE 'l+', s RLIKE '^a' FROM t",
    "SELECT id, s LIKE 'a%', s LIKE '%\\\\_%', s LIKE '_', s LIKE 'a\\\\\\\\b' FROM t",
    "SELECT id, date_format(ts, 'yyyy-MM-dd HH:mm:ss'), date_format(d, 'dd/MM/yyyy'), "
    "date_format(ts, 'EEE MMM'), date_format(ts, \"yyyy'T'HH\"), date_format(ts, 'hh a') FROM t",
    "SELECT id, to_date(ts), to_date(s), to_timestamp(d) FROM t",
    "SELECT to_date('05/01/2020', 'dd/MM/yyyy'), to_timestamp('2020-01-05 10:11:12'), "
    "to_date('2020-01-05 10:11:12'), to_timestamp('05.01.2020 10:11', 'dd.MM.yyyy HH:mm')",
    "SELECT id, datediff(d, '2020-01-01'), datediff(ts, d), datediff('2020-03-01', d) FROM t",
    "SELECT id, year(d), month(d), day(d), dayofmonth(ts), hour(ts), minute(ts), second(ts) FROM t",
    "SELECT current_date() = to_date(current_timestamp()), "
    "abs(unix_timestamp(current_timestamp()) - unix_timestamp()) < 5",
    "SELECT g, sort_array(collect_list(a)), sort_array(collect_set(b), false) FROM t GROUP BY g",
    "SELECT collect_list(a), collect_set(a) FROM t WHERE a IS NULL",
    "SELECT sort_array(arr), sort_array(arr, false), array_sort(arr) FROM t",
    "SELECT count(DISTINCT g), count(DISTINCT a, b), count(*), count(a), count(DISTINCT b) FROM t",
    "SELECT g, avg(a), sum(a), avg(x), sum(x), sum(dec), min(s), max(d) FROM t GROUP BY g",
    "SELECT avg(a), sum(a), sum(b) FROM t WHERE id > 100",
    "SELECT id, ceil(x), floor(x), ceil(a), floor(dec), ceil(-0.5) FROM t",
    "SELECT id, element_at(arr, 1), element_at(arr, -1), element_at(arr, 9) FROM t",
    "SELECT id, arr[0], arr[1], arr[5], arr[-1], arr[id - 4] FROM t",
    "SELECT id, mp['a'], element_at(mp, 'b'), mp['zz'] FROM m",
    "SELECT id, named_struct('k', a, 'v', s).k, named_struct('k', a, 'v', s), struct(a, s) FROM t",
    "SELECT id, array_contains(arr, 2), array_contains(arr, 9), array_contains(arr, a) FROM t",
    "SELECT abs(a), sqrt(abs(x)), pow(2, 10), exp(0), ln(1), log10(100), sign(a) FROM t",
    # joins, set operations, subqueries, grouping, VALUES
    "SELECT l.id, r.id FROM t l JOIN t r ON l.a = r.b",
    "SELECT l.id, r.id FROM t l LEFT JOIN t r ON l.a = r.b",
    "SELECT l.id, r.id FROM t l RIGHT OUTER JOIN t r ON l.a = r.b",
    "SELECT l.id, r.id FROM t l FULL OUTER JOIN t r ON l.a = r.b",
    "SELECT l.id, r.id FROM t l CROSS JOIN t r WHERE l.id < 3 AND r.id < 3",
    "SELECT l.id FROM t l LEFT SEMI JOIN t r ON l.a = r.b",
    "SELECT l.id FROM t l LEFT ANTI JOIN t r ON l.a = r.b",
    "SELECT l.id, r.g FROM t l JOIN t r USING (g)",
    "SELECT a FROM t UNION SELECT b FROM t",
    "SELECT a FROM t UNION ALL SELECT b FROM t",
    "SELECT a FROM t EXCEPT SELECT b FROM t",
    "SELECT a FROM t INTERSECT SELECT b FROM t",
    "SELECT g FROM t EXCEPT ALL SELECT g FROM t WHERE id = 1",
    "SELECT g FROM t INTERSECT ALL SELECT g FROM t WHERE id < 5",
    "SELECT id FROM t WHERE a IN (SELECT b FROM t)",
    "SELECT id FROM t WHERE a NOT IN (SELECT b FROM t)",
    "SELECT id FROM t WHERE a NOT IN (SELECT b FROM t WHERE b IS NOT NULL)",
    "SELECT id FROM t l WHERE EXISTS (SELECT 1 FROM t r WHERE r.b = l.a)",
    "SELECT id, (SELECT max(b) FROM t r WHERE r.g = l.g) FROM t l",
    "WITH c AS (SELECT g, sum(a) AS total FROM t GROUP BY g) SELECT * FROM c WHERE total > 0",
    "SELECT g, a, sum(b), grouping(g) FROM t GROUP BY ROLLUP(g, a)",
    "SELECT g, b, count(*) FROM t GROUP BY CUBE(g, b)",
    "SELECT g, b, count(*) FROM t GROUP BY GROUPING SETS ((g), (b), ())",
    "SELECT g, count(*) FROM t GROUP BY g HAVING count(*) > 1",
    "SELECT DISTINCT g FROM t",
    "SELECT id FROM t ORDER BY x DESC LIMIT 3",
    "SELECT * FROM VALUES (1, 'a'), (2, NULL)",
    "SELECT col1 + 1, col2 FROM VALUES (1, 'a'), (2, 'b') AS v",
    "SELECT * FROM VALUES (1, 2) AS v(p, q)",
    "VALUES (1, 2), (3, 4)",
]


@pytest.mark.parametrize("sql", CASES)
def test_agrees_with_spark(spark: Any, duck: duckdb.DuckDBPyConnection, sql: str) -> None:
    assert_agree(spark, duck, sql)


_USING_SIDES = """WITH
  a AS (SELECT * FROM VALUES (1, 'x', 10), (2, 'y', 20) AS a(z, k, av)),
  b AS (SELECT * FROM VALUES (200, 'y', 1), (300, 'w', 2) AS b(bv, k, m)),
  c AS (SELECT * FROM VALUES (1, 'cc', 'y'), (5, 'dd', 'z') AS c(m, cv, n))
"""


@pytest.mark.parametrize(
    "query",
    [
        *(
            f"SELECT * FROM a {kind} JOIN b USING (k)"
            for kind in ("", "LEFT", "RIGHT", "FULL OUTER", "LEFT SEMI", "LEFT ANTI", "CROSS")
        ),
        "SELECT *, z FROM a FULL JOIN b USING (k) WHERE av > 0 OR bv > 0",
        "SELECT * FROM b JOIN c USING (m) JOIN a USING (k)",
        "SELECT * FROM a JOIN b USING (k) RIGHT JOIN c USING (m)",
        "SELECT * FROM a JOIN b USING (k) LEFT JOIN c ON c.m = b.m",
        "SELECT * FROM a JOIN b ON a.k = b.k LEFT JOIN c USING (m)",
        "SELECT * FROM (SELECT * FROM a JOIN b USING (k)) AS ab FULL JOIN c USING (m)",
    ],
)
def test_star_over_a_using_join_lists_the_keys_first(
    spark: Any, duck: duckdb.DuckDBPyConnection, query: str
) -> None:
    sql = _USING_SIDES + query
    expected = spark.sql(sql)
    actual = duck.sql(to_duckdb(parse_spark(sql))).to_arrow_table()
    assert actual.column_names == expected.columns
    assert sorted(run_duck(duck, sql), key=_sort_key) == sorted(
        run_spark(spark, sql), key=_sort_key
    )


REFUSED_CASES = [
    "SELECT hash(a) FROM t",
    "SELECT xxhash64(a) FROM t",
    "SELECT percentile_approx(a, 0.5) FROM t",
    "SELECT approx_percentile(a, 0.5) FROM t",
    "SELECT approx_count_distinct(a) FROM t",
    "SELECT rand() FROM t",
    "SELECT regexp_extract(s, '(?<=a)b', 0) FROM t",
    "SELECT regexp_extract(s, '(a)\\\\1', 0) FROM t",
    "SELECT s RLIKE 'a++' FROM t",
    "SELECT regexp_replace(s, '(a)', '$1') FROM t",
    "SELECT regexp_replace(s, g, 'x') FROM t",
    "SELECT split(s, 'a+', 2) FROM t",
    "SELECT split(s, '', 2) FROM t",
    "SELECT date_format(ts, 'yyyy-MM-dd G') FROM t",
    "SELECT date_format(ts, 'yyyy-MM-dd F') FROM t",
    "SELECT ceil(x, 1) FROM t",
    "SELECT CAST(arr AS ARRAY<STRING>) FROM t",
    "SELECT explode_outer(arr) FROM t",
    "SELECT posexplode(arr) FROM t",
    "SELECT sentences(s) FROM t",
    "SELECT element_at(arr, 0) FROM t",
    "SELECT trunc(d, g) FROM t",
    "SELECT * FROM t TABLESAMPLE (50 PERCENT)",
    "SELECT * FROM t l NATURAL JOIN t r",
    "SELECT lpad(unhex('aa'), 5, 'x')",
    "SELECT btrim(encode('xax', 'utf-8'))",
    "SELECT histogram_numeric(a, 2) FROM t",
    "SELECT a, b FROM t GROUP BY a, b GROUPING SETS (a)",
]


@pytest.mark.parametrize(
    ("spark_sql", "duckdb_sql"),
    [
        ("SELECT * FROM VALUES 0, 1 AS t(id)", "SELECT * FROM (VALUES (0), (1)) AS t(id)"),
        ("VALUES 1 T(col)", "SELECT * FROM (VALUES (1)) AS T(col)"),
        ("VALUES (1, 'a') tbl(c1, c2)", "SELECT * FROM (VALUES (1, 'a')) AS tbl(c1, c2)"),
        ("SELECT round(-128Y, -1)", "SELECT CAST(126 AS TINYINT)"),
        ("SELECT bround(25, -1)", "SELECT CAST(20 AS INT)"),
        ("SELECT round(-32768S, -1)", "SELECT CAST(32766 AS SMALLINT)"),
        ("SELECT * FROM a CROSS JOIN b ON a.k = b.k", "SELECT * FROM a JOIN b ON a.k = b.k"),
        (
            "SELECT a FROM t GROUP BY a, b GROUPING SETS ((a), (b))",
            "SELECT a FROM t GROUP BY GROUPING SETS ((a), (b)) HAVING COUNT(*) > 0",
        ),
        (
            "SELECT grouping__id FROM t GROUP BY CUBE(a, b)",
            "SELECT GROUPING_ID(a, b) FROM t GROUP BY CUBE (a, b) HAVING COUNT(*) > 0",
        ),
        ("SELECT 9223372036854775808", "SELECT CAST(9223372036854775808 AS DECIMAL(19, 0))"),
        ("SELECT replace(s, 'b') FROM t", "SELECT REPLACE(s, 'b', '') FROM t"),
    ],
)
def test_corpus_gap_translations(spark_sql: str, duckdb_sql: str) -> None:
    assert to_duckdb(parse_spark(spark_sql)) == duckdb_sql


@pytest.mark.parametrize("sql", REFUSED_CASES)
def test_refuses(sql: str) -> None:
    with pytest.raises(UnsupportedSqlError):
        to_duckdb(parse_spark(sql))


RUNTIME_REFUSED = [
    "SELECT CAST('12020-01-05' AS DATE)",
    "SELECT CAST('2020-01-05T' AS TIMESTAMP)",
    "SELECT to_timestamp('2020-01-05T10:00:00 UTC')",
]


@pytest.mark.parametrize("sql", RUNTIME_REFUSED)
def test_refuses_at_run_time(duck: duckdb.DuckDBPyConnection, sql: str) -> None:
    with pytest.raises(duckdb.Error, match="sparkshim does not support"):
        duck.sql(to_duckdb(parse_spark(sql))).fetchall()


def test_every_sort_key_places_nulls_as_spark_does() -> None:
    # Spark: NULLs first ascending, last descending. sqlglot writes NULLS FIRST where it
    # differs from DuckDB's default order, which must stay NULLs last both ways.
    sql = to_duckdb(parse_spark("SELECT a, rank() OVER (ORDER BY b DESC) FROM t ORDER BY a"))
    assert "ORDER BY b DESC)" in sql
    assert sql.endswith("ORDER BY a NULLS FIRST")
    assert duckdb.sql("SELECT current_setting('default_null_order')").fetchall() == [
        ("NULLS_LAST",)
    ]
    rows = duckdb.sql("SELECT x FROM (VALUES (1), (NULL), (2)) AS v(x) ORDER BY x DESC").fetchall()
    assert rows == [(2,), (1,), (None,)]


def test_a_comparison_concatenated_is_parenthesized() -> None:
    sql = to_duckdb(parse_spark("SELECT concat(s = '12', '!'), concat(NOT b, s LIKE 'x%', c)"))
    assert "(s = '12') || '!'" in sql
    assert "(NOT b) || (s LIKE 'x%' ESCAPE '\\') || c" in sql


def test_refusal_list_names_constructs_and_reasons() -> None:
    assert len(REFUSED) >= 10
    assert all(construct and reason for construct, reason in REFUSED)


@pytest.mark.parametrize(
    "sql", ["", "  ;  ", "SELECT 1; SELECT 2", "SELECT FROM WHERE (", "SELECT (1"]
)
def test_parse_errors_are_spark_parse_exceptions(sql: str) -> None:
    with pytest.raises(ParseException, match="line"):
        parse_spark(sql)


def test_command_fallback_logs_nothing(
    caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    with caplog.at_level(logging.WARNING):
        parse_spark("MSCK REPAIR TABLE x")
    assert "unsupported syntax" not in caplog.text
    assert "unsupported syntax" not in capsys.readouterr().err


def test_docs_list_every_refused_construct() -> None:
    engines_doc = (Path(__file__).resolve().parents[2] / "docs" / "engines.md").read_text()
    missing = [c for c, _ in REFUSED if f"| {c.replace('|', '/')} |" not in engines_doc]
    assert missing == [], "add these to docs/engines.md: " + ", ".join(missing)


def test_nested_cte_redefining_an_outer_name_is_ambiguous_as_in_spark(tmp_path: Path) -> None:
    from sparkshim import ShimSession
    from sparkshim.errors import AnalysisException

    session = ShimSession(warehouse=str(tmp_path))
    try:
        with pytest.raises(AnalysisException, match="AMBIGUOUS_ALIAS_IN_NESTED_CTE"):
            session.sql(
                "WITH t AS (SELECT 1 AS x), u AS (WITH t AS (SELECT 2 AS x) SELECT * FROM t) "
                "SELECT x FROM u"
            )
    finally:
        session.stop()


def test_transform_index_counts_from_zero() -> None:
    sql = to_duckdb(parse_spark("SELECT transform(a, (x, i) -> x + i) FROM t"))
    assert "(i + -1)" in sql


def test_pivot_refuses_order_dependent_aggregates() -> None:
    with pytest.raises(UnsupportedSqlError, match="first/last/any_value in a PIVOT"):
        to_duckdb(parse_spark("SELECT * FROM (SELECT 1) PIVOT (first(a) FOR b IN (1))"))


def test_pivot_of_a_non_aggregate_is_spark_s_error() -> None:
    from sparkshim.errors import AnalysisException

    with pytest.raises(AnalysisException, match="Aggregate expression required for pivot"):
        to_duckdb(parse_spark("SELECT * FROM (SELECT 1) PIVOT (sum(a), b FOR c IN (1))"))


@pytest.mark.parametrize(
    ("sql", "value", "type_name"),
    [
        ("SELECT INTERVAL '2' DAY AS a", "172800000000", "interval day"),
        ("SELECT INTERVAL '1-2' YEAR TO MONTH AS a", "14", "interval year to month"),
        ("SELECT INTERVAL '1' WEEK AS a", "604800000000", "interval day"),
        ("SELECT DATE'2024-03-01' - DATE'2024-01-01' AS a", "86400000000", "interval day"),
    ],
)
def test_an_interval_result_column_is_its_months_or_microseconds(
    sql: str, value: str, type_name: str
) -> None:
    translated = to_duckdb(parse_spark(sql))
    assert value in translated
    assert type_name in translated  # the column's name carries its Spark type


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT INTERVAL '1' DAY + INTERVAL '2' HOUR AS a",
        "SELECT interval 3 month 1 hour AS a",
        "SELECT INTERVAL '1' DAY AS a ORDER BY a",
    ],
)
def test_other_interval_result_columns_are_refused(sql: str) -> None:
    refusal = r"as a result column|interval result column|interval plus or minus"
    with pytest.raises(UnsupportedSqlError, match=refusal):
        to_duckdb(parse_spark(sql))


def test_interval_spans_are_written_as_duckdb_intervals() -> None:
    sql = to_duckdb(parse_spark("SELECT t + INTERVAL '1-2' YEAR TO MONTH AS a FROM x"))
    assert "TO_MONTHS(14)" in sql


def test_max_by_and_min_by_break_ties_by_the_value_whatever_the_row_order(
    tmp_path: Path,
) -> None:
    """Spark's max_by/min_by take whichever tied row they meet first; the shim gives the
    largest (smallest) value among the tied rows, whatever order the rows come in, so a
    refresh that recomputes some groups gives what a full recompute gives."""
    from sparkshim import ShimSession

    session = ShimSession(warehouse=str(tmp_path))
    try:
        for rows in ("(1, 5), (2, 5), (0, 4)", "(2, 5), (1, 5), (0, 4)", "(0, 4), (1, 5), (2, 5)"):
            got = session.sql(
                f"SELECT max_by(x, y) AS hi, min_by(x, -y) AS hi2 FROM VALUES {rows} AS v(x, y)"
            ).collect()
            assert [tuple(row) for row in got] == [(2, 1)], rows
    finally:
        session.stop()
