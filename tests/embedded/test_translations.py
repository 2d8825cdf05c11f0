"""Kept translations (sparkshim/translations.py): a statement seen before is not typed and
translated again, and a kept translation is only ever used where a new one would be the
same: the tables are resolved each time (new rows, new files, deletion vectors), and a
change of schema, of a setting the translation reads, or of the statement translates
again. A refresh of a dynamic table translates nothing once it has run a refresh of the
same shape (its statements' text does not change from one refresh to the next)."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest

from dyntables import DynamicTables
from sparkshim import ShimSession, query

pytestmark = pytest.mark.embedded


class TranslationSpy:
    """Counts the statements translated (not found kept)."""

    def __init__(self) -> None:
        self.count = 0

    def reset(self) -> None:
        self.count = 0


@pytest.fixture
def translated(monkeypatch: pytest.MonkeyPatch) -> Iterator[TranslationSpy]:
    spy = TranslationSpy()
    translate = query.to_duckdb

    def counting(tree, **options):  # type: ignore[no-untyped-def]
        spy.count += 1
        return translate(tree, **options)

    monkeypatch.setattr(query, "to_duckdb", counting)
    query.TRANSLATIONS.clear()
    yield spy
    query.TRANSLATIONS.clear()


@pytest.fixture
def spark(tmp_path: Path) -> ShimSession:
    return ShimSession(warehouse=str(tmp_path / "warehouse"))


def test_a_statement_seen_before_reads_the_tables_as_they_are_now(
    spark: ShimSession, translated: TranslationSpy
) -> None:
    spark.sql("CREATE TABLE t (k INT, v DECIMAL(10, 2)) USING delta")
    spark.sql("INSERT INTO t VALUES (1, 1.50), (2, 2.25)")
    statement = "SELECT k, v * 2 AS w FROM t WHERE k > 0 ORDER BY k"
    assert [tuple(r) for r in spark.sql(statement).collect()] == [
        (1, Decimal("3.00")),
        (2, Decimal("4.50")),
    ]
    translated.reset()
    spark.sql("INSERT INTO t VALUES (3, 0.25)")
    spark.sql("DELETE FROM t WHERE k = 1")
    translated.reset()
    rows = [tuple(r) for r in spark.sql(statement).collect()]
    assert rows == [(2, Decimal("4.50")), (3, Decimal("0.50"))]
    assert translated.count == 0  # kept: same statement, same schema, same settings


def test_time_travel_and_temporary_views_resolve_each_time(
    spark: ShimSession, translated: TranslationSpy
) -> None:
    spark.sql("CREATE TABLE t (k INT) USING delta")
    for value in range(1, 11):
        spark.sql(f"INSERT INTO t VALUES ({value})")
    statement = "SELECT count(*) AS n, max(k) AS k FROM t VERSION AS OF {}"
    assert tuple(spark.sql(statement.format(1)).collect()[0]) == (1, 1)
    translated.reset()
    # Another version, a number of another length (where the parser found each node moves):
    # the same translation.
    counts = [tuple(spark.sql(statement.format(v)).collect()[0]) for v in (2, 9, 10)]
    assert counts == [(2, 2), (9, 9), (10, 10)]
    assert translated.count == 0
    for rows in ([(1,)], [(5,), (6,)]):
        spark.createDataFrame(rows, "k INT").createOrReplaceTempView("v")
        translated.reset()
        got = sorted(r[0] for r in spark.sql("SELECT k FROM v AS r").collect())
        assert got == sorted(row[0] for row in rows)


def test_a_new_schema_translates_again(spark: ShimSession, translated: TranslationSpy) -> None:
    statement = "SELECT v + v AS w FROM t"
    spark.sql("CREATE TABLE t (v DECIMAL(10, 2)) USING delta")
    spark.sql("INSERT INTO t VALUES (1.25)")
    assert spark.sql(statement).schema.fields[0].dataType.simpleString() == "decimal(11,2)"
    spark.sql("DROP TABLE t")
    spark.sql("CREATE TABLE t (v DECIMAL(20, 4)) USING delta")
    spark.sql("INSERT INTO t VALUES (1.2500)")
    translated.reset()
    result = spark.sql(statement)
    assert result.schema.fields[0].dataType.simpleString() == "decimal(21,4)"
    assert result.collect()[0][0] == Decimal("2.5000")
    assert translated.count == 1


def test_a_setting_the_translation_reads_translates_again(
    spark: ShimSession, translated: TranslationSpy
) -> None:
    statement = "SELECT CAST(1 AS DECIMAL(38, 10)) * CAST(3 AS DECIMAL(38, 10)) AS p"
    loses = spark.sql(statement).schema.fields[0].dataType.simpleString()
    spark.conf.set("spark.sql.decimalOperations.allowPrecisionLoss", "false")
    translated.reset()
    keeps = spark.sql(statement).schema.fields[0].dataType.simpleString()
    assert (loses, keeps) == ("decimal(38,6)", "decimal(38,20)")  # as Spark 3.5 types them
    assert translated.count == 1


def test_a_refresh_translates_nothing_once_its_shape_was_seen(
    tmp_path: Path, translated: TranslationSpy
) -> None:
    dt = DynamicTables(warehouse=tmp_path / "warehouse")
    dt.sql("CREATE TABLE src (k INT, g INT, v DECIMAL(10, 2)) USING delta")
    dt.sql("INSERT INTO src VALUES (1, 1, 1.00), (2, 1, 2.00), (3, 2, 3.00)")
    for name, select in (
        ("filtered", "SELECT k, v FROM src WHERE v > 1"),
        ("grouped", "SELECT g, count(*) AS n, sum(v) AS total FROM src GROUP BY g"),
    ):
        dt.sql(
            f"CREATE DYNAMIC TABLE {name} TARGET_LAG = '1 hour' REFRESH_MODE = INCREMENTAL"
            f" AS {select}"
        )
    translations = []
    for step in range(3):
        dt.sql(f"UPDATE src SET v = v + 1 WHERE k = {step % 3 + 1}")
        dt.sql(f"INSERT INTO src VALUES ({10 + step}, {step % 2 + 1}, 5.00)")
        translated.reset()
        for name in ("filtered", "grouped"):
            action = dt.sql(f"ALTER DYNAMIC TABLE {name} REFRESH").collect()[0].action
            assert action == "INCREMENTAL"
        translations.append(translated.count)
    assert translations[0] > 0
    assert translations[2] == 0
    for name, select in (
        ("filtered", "SELECT k, v FROM src WHERE v > 1"),
        ("grouped", "SELECT g, count(*) AS n, sum(v) AS total FROM src GROUP BY g"),
    ):
        difference = (
            f"(SELECT * FROM {name} EXCEPT ALL {select})"
            f" UNION ALL ({select} EXCEPT ALL SELECT * FROM {name})"
        )
        assert dt.sql(f"SELECT count(*) FROM ({difference}) AS d").collect()[0][0] == 0
