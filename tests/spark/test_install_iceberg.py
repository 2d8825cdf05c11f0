"""``dyntables.install(spark)`` and the magics on real Spark with Apache Iceberg: the
session's own ``spark.sql`` takes the DDL; ordinary SQL gives exactly what unpatched
Spark gives; other sessions are untouched."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from pyspark.errors import ParseException
from pyspark.sql import SparkSession

import dyntables
from dyntables import DynamicTableError

pytestmark = pytest.mark.spark

_databases = itertools.count()

ORDINARY = [
    "SELECT 1 AS one",
    "SELECT 1 AS one;",
    "SELECT id, v FROM src ORDER BY id",
    "-- a comment\nSELECT count(*) AS n FROM src",
    "SELECT v, sum(id) AS total FROM src GROUP BY v ORDER BY v",
    "SHOW TABLES",
    "DESCRIBE TABLE src",
    "SELECT * FROM no_such_table",
    "SELEC 1",
    "SELECT 1; SELECT 2",
]


@pytest.fixture
def spark(iceberg_spark: SparkSession) -> Iterator[SparkSession]:
    database = f"installed_{next(_databases)}"
    iceberg_spark.sql(f"CREATE DATABASE {database}")
    iceberg_spark.sql(f"USE {database}")
    iceberg_spark.sql("CREATE TABLE src (id INT, v STRING) USING iceberg")
    iceberg_spark.sql("INSERT INTO src VALUES (1, 'a'), (2, 'b'), (3, 'a')")
    yield iceberg_spark
    dyntables.uninstall(iceberg_spark)  # the session is shared with the other modules


def outcome(run: Any, text: str) -> tuple[str, Any]:
    try:
        frame = run(text)
        return ("rows", (frame.schema, frame.collect()))
    except Exception as error:
        return ("error", (type(error).__name__, str(error)))


def test_install_on_real_spark(spark: SparkSession) -> None:
    """DDL through spark.sql; ordinary statements equal to unpatched Spark's (the class's
    own method on the same session, and a new session); other sessions untouched;
    uninstall restores."""
    class_sql = type(spark).sql
    expected = [outcome(lambda text: class_sql(spark, text), text) for text in ORDINARY]
    dt = dyntables.install(spark)
    assert dt.engine.table_format.name == "iceberg"
    assert dyntables.install(spark) is dt

    assert [outcome(spark.sql, text) for text in ORDINARY] == expected
    other = spark.newSession()
    other.sql(f"USE {spark.catalog.currentDatabase()}")
    assert [outcome(other.sql, text) for text in ORDINARY] == expected

    created = spark.sql(
        "CREATE DYNAMIC TABLE a_rows TARGET_LAG = '1 minute' AS SELECT id FROM src WHERE v = 'a'"
    ).collect()
    assert created[0].status == "Dynamic table a_rows successfully created."
    spark.sql("INSERT INTO src VALUES (4, 'a')")
    assert spark.sql("ALTER DYNAMIC TABLE a_rows REFRESH").collect()[0].state == "SUCCEEDED"
    assert sorted(spark.sql("SELECT id FROM a_rows").collect()) == [(1,), (3,), (4,)]
    assert [r.name for r in spark.sql("SHOW DYNAMIC TABLES").collect()] == ["a_rows"]
    with pytest.raises(DynamicTableError, match="DML into it is refused"):
        spark.sql("INSERT INTO a_rows VALUES (9)")

    with pytest.raises(ParseException):  # the other session is plain Spark
        other.sql("ALTER DYNAMIC TABLE a_rows REFRESH")
    assert "sql" not in vars(other)
    assert type(spark).sql is class_sql

    assert dyntables.uninstall(spark) is True
    assert "sql" not in vars(spark)
    with pytest.raises(ParseException):
        spark.sql("ALTER DYNAMIC TABLE a_rows REFRESH")


def test_magics_on_real_spark(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    shell = InteractiveShell.instance()
    shell.reset(new_session=True)
    shell.user_ns["spark"] = spark
    try:
        shell.run_line_magic("load_ext", "dyntables")
        shell.run_cell_magic(
            "sql",
            "-q",
            "CREATE DYNAMIC TABLE b_rows TARGET_LAG = '1 minute' AS SELECT id FROM src"
            " WHERE v = 'b';\nINSERT INTO src VALUES (5, 'b')",
        )
        shown = shell.run_cell_magic(
            "sql", "-o refreshed", "ALTER DYNAMIC TABLE b_rows REFRESH; SELECT id FROM b_rows"
        )
        assert sorted(shell.user_ns["refreshed"].collect()) == [(2,), (5,)]
        data, _ = shell.display_formatter.format(shown)
        assert "<td>5</td>" in data["text/html"]
        assert "| id|" in data["text/plain"]
        assert not (tmp_path / "spark-warehouse").exists()  # no embedded engine was made
    finally:
        shell.run_line_magic("unload_ext", "dyntables")
        shell.reset(new_session=True)
