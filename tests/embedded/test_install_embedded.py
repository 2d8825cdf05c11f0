"""``dyntables.install(spark)`` on sparkshim sessions: the session's own ``spark.sql``
accepts dynamic-table statements, ordinary SQL gives what the unpatched session gives,
and no other session changes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import dyntables
from dyntables import DynamicTableError, DynamicTables
from dyntables.notebook.install import installation
from sparkshim import ShimSession

pytestmark = pytest.mark.embedded

# Ordinary statements whose results (or errors) must not change with install.
ORDINARY = [
    "SELECT 1 AS one",
    "SELECT 1 AS one;",
    "  SELECT id, v FROM src ORDER BY id  ",
    "-- a comment\nSELECT count(*) AS n FROM src",
    "SELECT v, sum(id) AS total FROM src GROUP BY v ORDER BY v",
    "SHOW TABLES",
    "DESCRIBE TABLE src",
    "SELECT * FROM no_such_table",
    "SELEC 1",
    "",
    "SELECT 1; SELECT 2",
]


@pytest.fixture
def warehouse(tmp_path: Path) -> Path:
    setup = ShimSession(warehouse=tmp_path / "warehouse")
    setup.sql("CREATE TABLE src (id INT, v STRING) USING DELTA")
    setup.sql("INSERT INTO src VALUES (1, 'a'), (2, 'b'), (3, 'a')")
    return tmp_path / "warehouse"


@pytest.fixture
def spark(warehouse: Path) -> Iterator[ShimSession]:
    session = ShimSession(warehouse=warehouse)
    yield session
    dyntables.uninstall(session)


def outcome(run: Any, text: str) -> tuple[str, Any]:
    """What ``run(text)`` gives: its schema and rows, or its error's type and message."""
    try:
        frame = run(text)
    except Exception as error:
        return ("error", (type(error).__name__, str(error)))
    return ("rows", (frame.schema, frame.collect()))


def test_dynamic_table_statements_work_through_spark_sql(spark: ShimSession) -> None:
    dt = dyntables.install(spark)
    assert isinstance(dt, DynamicTables)
    created = spark.sql(
        "CREATE DYNAMIC TABLE a_rows TARGET_LAG = '1 minute' WAREHOUSE = wh"
        " AS SELECT id FROM src WHERE v = 'a'"
    )
    assert created.collect()[0].status == "Dynamic table a_rows successfully created."
    spark.sql("INSERT INTO src VALUES (4, 'a')")
    refreshed = spark.sql("ALTER DYNAMIC TABLE a_rows REFRESH").collect()[0]
    assert refreshed.action in ("INCREMENTAL", "FULL")
    assert sorted(spark.sql("SELECT id FROM a_rows").collect()) == [(1,), (3,), (4,)]
    shown = spark.sql("SHOW DYNAMIC TABLES LIKE 'a_rows'").collect()
    assert [row.target_lag for row in shown] == ["1 minute"]
    history = spark.sql(
        "SELECT refresh_trigger FROM TABLE(information_schema.dynamic_table_refresh_history())"
        " ORDER BY refresh_start_time"
    ).collect()
    assert [row.refresh_trigger for row in history] == ["CREATION", "MANUAL"]


def test_dml_into_a_dynamic_table_is_refused_through_spark_sql(spark: ShimSession) -> None:
    dyntables.install(spark)
    spark.sql("CREATE DYNAMIC TABLE d TARGET_LAG = '1 minute' AS SELECT id FROM src")
    with pytest.raises(DynamicTableError, match="DML into it is refused"):
        spark.sql("DELETE FROM d WHERE id = 1")


def test_metadata_is_frozen_is_rewritten_through_spark_sql(spark: ShimSession) -> None:
    dyntables.install(spark)
    spark.sql(
        "CREATE DYNAMIC TABLE d TARGET_LAG = '1 minute' FROZEN WHERE (id < 2) AS SELECT id FROM src"
    )
    rows = spark.sql("SELECT id, METADATA$IS_FROZEN AS frozen FROM d ORDER BY id").collect()
    assert [(row.id, row.frozen) for row in rows] == [(1, True), (2, False), (3, False)]


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_sql_gives_what_the_unpatched_session_gives(
    spark: ShimSession, warehouse: Path, text: str
) -> None:
    unpatched = ShimSession(warehouse=warehouse)
    expected = outcome(unpatched.sql, text)
    dyntables.install(spark)
    assert outcome(spark.sql, text) == expected


def test_ordinary_sql_reaches_the_original_sql_with_its_exact_text(spark: ShimSession) -> None:
    received: list[str] = []
    own_sql = spark.sql

    def recording_sql(text: str, args: Any = None) -> Any:
        received.append(text)
        return own_sql(text, args)

    spark.sql = recording_sql  # type: ignore[method-assign]  # another library's patch
    dyntables.install(spark)
    texts = ["SELECT 1 AS one ;", "\n  SELECT * FROM src  -- trailing comment\n"]
    for text in texts:
        spark.sql(text)
    assert [t for t in received if t in texts] == texts
    assert dyntables.uninstall(spark) is True
    assert spark.sql is recording_sql  # the earlier patch is back


def test_another_session_is_unaffected(spark: ShimSession, warehouse: Path) -> None:
    class_sql = vars(ShimSession)["sql"]
    dyntables.install(spark)
    other = spark.newSession()
    separate = ShimSession(warehouse=warehouse)
    for session in (other, separate):
        with pytest.raises(Exception):  # noqa: B017, PT011  (whatever the shim says)
            session.sql("CREATE DYNAMIC TABLE d TARGET_LAG = '1 minute' AS SELECT id FROM src")
        assert not session.catalog.tableExists("d")
        assert "sql" not in vars(session)
    assert vars(ShimSession)["sql"] is class_sql  # the class keeps its own method


def test_install_twice_is_harmless_and_uninstall_restores(spark: ShimSession) -> None:
    first = dyntables.install(spark)
    assert dyntables.install(spark) is first
    assert dyntables.install(spark, table_format="delta") is first
    with pytest.raises(DynamicTableError, match="already installed"):
        dyntables.install(spark, table_format="iceberg")
    assert dyntables.uninstall(spark) is True
    assert "sql" not in vars(spark)
    assert installation(spark) is None
    assert dyntables.uninstall(spark) is False
    with pytest.raises(Exception, match=r"Syntax error at or near .DYNAMIC."):  # as on Spark
        spark.sql("DROP DYNAMIC TABLE IF EXISTS d")


def test_uninstall_refuses_to_remove_a_later_patch(spark: ShimSession) -> None:
    dyntables.install(spark)
    spark.sql = lambda text, args=None: None  # type: ignore[method-assign,assignment]
    with pytest.raises(DynamicTableError, match="replaced again"):
        dyntables.uninstall(spark)
    found = installation(spark)
    assert found is not None
    vars(spark)["sql"] = found.wrapper  # that patch removed: uninstall works again
    assert dyntables.uninstall(spark) is True


def test_the_library_own_calls_bypass_the_routing(spark: ShimSession) -> None:
    """The library calls ``session.sql`` on the installed session for its own work; those
    calls go to the original method, so nothing recurses or is logged twice."""
    routed: list[str] = []
    dt = dyntables.install(spark)
    own_run = dt.run

    def counting_run(statements: Any, script: str) -> Any:
        routed.append(script)
        return own_run(statements, script)

    dt.run = counting_run  # type: ignore[method-assign]
    spark.sql("CREATE DYNAMIC TABLE d TARGET_LAG = '1 minute' AS SELECT id FROM src")
    spark.sql("ALTER DYNAMIC TABLE d REFRESH")
    assert len(routed) == 2


def test_installed_session_runs_the_scheduler(spark: ShimSession) -> None:
    dt = dyntables.install(spark)
    spark.sql("CREATE DYNAMIC TABLE d TARGET_LAG = '1 minute' AS SELECT id FROM src")
    dt.start(poll_seconds=0.1)
    dt.stop()
    assert "d" in dt.graph().to_text()


@pytest.mark.parametrize(
    ("sql", "word"),
    [
        ("CREATE DYNAMC TABLE d TARGET_LAG = '1 hour' AS SELECT * FROM src", "DYNAMC"),
        ("ALTER DYNAMIC TABL d REFRESH", "TABL"),
        ("SHOW DYNAMIC TABLS", "TABLS"),
    ],
)
def test_a_misspelt_keyword_never_reaches_the_session(
    spark: ShimSession, monkeypatch: pytest.MonkeyPatch, sql: str, word: str
) -> None:
    sent: list[str] = []
    original = ShimSession.sql
    monkeypatch.setattr(
        ShimSession, "sql", lambda self, text, args=None: sent.append(text) or original(self, text)
    )
    dyntables.install(spark)
    with pytest.raises(dyntables.DynamicTableSyntaxError, match=f"'{word}': did you mean"):
        spark.sql(sql)
    assert [text for text in sent if word in text] == []  # (dyntables' own reads may run)
    spark.sql("SELECT 1")
    assert "SELECT 1" in sent  # what does reach the session is seen
