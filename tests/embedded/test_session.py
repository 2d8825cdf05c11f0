"""ShimSession end to end on real Delta tables: catalog layout, DDL, INSERT, queries,
time travel, change data feed, commit metadata, errors."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest
from deltalake import DeltaTable
from pyspark.errors import AnalysisException
from pyspark.sql import Row

from sparkshim.config import TIME_ZONE_CONF
from sparkshim.errors import UnsupportedSqlError
from sparkshim.session import ShimSession

pytestmark = pytest.mark.embedded


@pytest.fixture
def spark(tmp_path: Path) -> ShimSession:
    return ShimSession(warehouse=tmp_path / "warehouse")


def test_tables_are_laid_out_like_a_spark_warehouse(spark: ShimSession, tmp_path: Path) -> None:
    warehouse = tmp_path / "warehouse"
    spark.sql("CREATE TABLE t (id INT) USING delta")
    spark.sql("CREATE SCHEMA sales")
    spark.sql("CREATE TABLE sales.orders (id BIGINT, amount DECIMAL(10, 2))")
    external = tmp_path / "elsewhere" / "ext"
    spark.sql(f"CREATE TABLE ext (id INT) USING DELTA LOCATION '{external}'")
    assert DeltaTable.is_deltatable(str(warehouse / "t"))
    assert DeltaTable.is_deltatable(str(warehouse / "sales.db" / "orders"))
    assert DeltaTable.is_deltatable(str(external))
    assert not (warehouse / "ext").exists()


def test_a_second_session_on_the_same_warehouse_sees_the_same_tables(
    spark: ShimSession, tmp_path: Path
) -> None:
    spark.sql("CREATE TABLE t (id INT, name STRING)")
    spark.sql("INSERT INTO t VALUES (1, 'a'), (2, NULL)")
    spark.sql("CREATE VIEW v AS SELECT id FROM t WHERE name IS NOT NULL")
    other = ShimSession(warehouse=tmp_path / "warehouse")
    assert sorted(other.sql("SELECT * FROM t").collect()) == [
        Row(id=1, name="a"),
        Row(id=2, name=None),
    ]
    assert other.sql("SELECT * FROM v").collect() == [Row(id=1)]
    assert other.catalog.tableExists("t")


def test_a_table_dropped_and_recreated_elsewhere_is_read_anew(
    spark: ShimSession, tmp_path: Path
) -> None:
    # This thread keeps the table it opened and only reads new commits; a table dropped
    # and recreated (here by another session) has a new log and must be opened again.
    spark.sql("CREATE TABLE t (id INT)")
    spark.sql("INSERT INTO t VALUES (1), (2), (3)")
    assert spark.sql("SELECT count(*) AS n FROM t").collect() == [Row(n=3)]
    other = ShimSession(warehouse=tmp_path / "warehouse")
    other.sql("DROP TABLE t")
    other.sql("CREATE TABLE t (name STRING)")
    other.sql("INSERT INTO t VALUES ('x')")
    assert spark.sql("SELECT * FROM t").collect() == [Row(name="x")]
    other.sql("INSERT INTO t VALUES ('y')")
    assert sorted(spark.sql("SELECT * FROM t").collect()) == [Row(name="x"), Row(name="y")]


def test_insert_select_overwrite_and_column_lists(spark: ShimSession) -> None:
    spark.sql("CREATE TABLE t (id BIGINT, amount DECIMAL(10, 2), note STRING)")
    spark.sql("INSERT INTO t VALUES (1, 1.5, 'x')")
    spark.sql("INSERT INTO t (note, id) VALUES ('only note and id', 2)")
    rows = spark.sql("SELECT * FROM t ORDER BY id").collect()
    assert rows == [
        Row(id=1, amount=Decimal("1.50"), note="x"),
        Row(id=2, amount=None, note="only note and id"),
    ]
    spark.sql("INSERT OVERWRITE t SELECT id * 10, amount, note FROM t WHERE id = 1")
    assert spark.sql("SELECT id FROM t").collect() == [Row(id=10)]


def test_ctas_and_create_or_replace(spark: ShimSession) -> None:
    spark.sql("CREATE TABLE src AS SELECT 1 AS a, 'x' AS b")
    spark.sql("CREATE OR REPLACE TABLE src AS SELECT 2 AS a")
    assert spark.sql("SELECT * FROM src").collect() == [Row(a=2)]
    with pytest.raises(AnalysisException, match="already exists"):
        spark.sql("CREATE TABLE src (a INT)")
    spark.sql("CREATE TABLE IF NOT EXISTS src (a INT)")  # no error, no change
    assert spark.sql("SELECT * FROM src").collect() == [Row(a=2)]


def test_time_travel_and_history(spark: ShimSession) -> None:
    spark.sql("CREATE TABLE t (id INT)")
    spark.sql("INSERT INTO t VALUES (1)")
    spark.sql("INSERT INTO t VALUES (2)")
    assert spark.sql("SELECT * FROM t VERSION AS OF 1").collect() == [Row(id=1)]
    history = spark.sql("DESCRIBE HISTORY t").collect()
    assert [row.version for row in history] == [2, 1, 0]


def test_user_metadata_lands_in_the_commit(spark: ShimSession) -> None:
    spark.sql("CREATE TABLE t (id INT)")
    spark.conf.set("spark.databricks.delta.commitInfo.userMetadata", "refresh-42")
    spark.sql("INSERT INTO t VALUES (1)")
    latest = spark.sql("DESCRIBE HISTORY t").collect()[0]
    assert latest.userMetadata == "refresh-42"


def test_table_properties_and_change_data_feed(spark: ShimSession) -> None:
    spark.sql(
        "CREATE TABLE t (id INT) TBLPROPERTIES (delta.enableChangeDataFeed = true,"
        " 'dynamic_table.definition' = 'SELECT 1')"
    )
    spark.sql("ALTER TABLE t SET TBLPROPERTIES ('dynamic_table.target_lag' = '60')")
    properties = {row.key: row.value for row in spark.sql("SHOW TBLPROPERTIES t").collect()}
    assert properties["dynamic_table.definition"] == "SELECT 1"
    assert properties["dynamic_table.target_lag"] == "60"
    assert properties["delta.enableChangeDataFeed"] == "true"
    spark.sql("INSERT INTO t VALUES (7)")
    changes = spark.sql("SELECT id, _change_type, _commit_version FROM table_changes('t', 1)")
    assert changes.collect() == [Row(id=7, _change_type="insert", _commit_version=2)]


def test_unset_tblproperties_removes_keys_in_one_commit(spark: ShimSession) -> None:
    spark.sql(
        "CREATE TABLE t (id INT) TBLPROPERTIES ('dynamic_table.a' = '1', 'dynamic_table.b' = '2',"
        " delta.enableChangeDataFeed = true)"
    )
    spark.sql("INSERT INTO t VALUES (1)")
    spark.conf.set("spark.databricks.delta.commitInfo.userMetadata", "unset-1")
    spark.sql("ALTER TABLE t UNSET TBLPROPERTIES ('dynamic_table.a', dynamic_table.b)")
    properties = {row.key: row.value for row in spark.sql("SHOW TBLPROPERTIES t").collect()}
    assert "dynamic_table.a" not in properties
    assert "dynamic_table.b" not in properties
    assert properties["delta.enableChangeDataFeed"] == "true"
    latest = spark.sql("DESCRIBE HISTORY t").collect()[0]
    assert (latest.version, latest.operation, latest.userMetadata) == (
        2,
        "UNSET TBLPROPERTIES",
        "unset-1",
    )
    # The data and its change feed are untouched; later writes still work.
    spark.sql("INSERT INTO t VALUES (2)")
    assert sorted(row.id for row in spark.sql("SELECT id FROM t").collect()) == [1, 2]
    assert spark.sql("SELECT count(*) AS n FROM table_changes('t', 0)").collect() == [Row(n=2)]
    with pytest.raises(AnalysisException, match=r"non-existent property 'dynamic_table\.a'"):
        spark.sql("ALTER TABLE t UNSET TBLPROPERTIES ('dynamic_table.a')")
    spark.sql("ALTER TABLE t UNSET TBLPROPERTIES IF EXISTS ('dynamic_table.a')")
    latest_only = spark.sql("DESCRIBE HISTORY t LIMIT 1").collect()
    assert [row.version for row in latest_only] == [3]  # nothing was left to remove


def test_unset_tblproperties_loses_a_race_cleanly(spark: ShimSession, tmp_path: Path) -> None:
    spark.sql("CREATE TABLE t (id INT) TBLPROPERTIES ('k' = 'v')")
    spark.conf.set("sparkshim.write.expectedTableVersion", "0")
    spark.sql("INSERT INTO t VALUES (1)")  # version 1, written against version 0
    with pytest.raises(AnalysisException, match="DELTA_CONCURRENT_WRITE"):
        spark.sql("ALTER TABLE t UNSET TBLPROPERTIES ('k')")  # still expects version 0
    spark.conf.unset("sparkshim.write.expectedTableVersion")
    assert {row.key for row in spark.sql("SHOW TBLPROPERTIES t").collect()} >= {"k"}


def test_show_tables_describe_and_views(spark: ShimSession) -> None:
    spark.sql("CREATE TABLE orders (id INT, total DOUBLE)")
    spark.sql("CREATE TEMP VIEW recent AS SELECT id FROM orders")
    tables = spark.sql("SHOW TABLES").collect()
    assert Row(namespace="default", tableName="orders", isTemporary=False) in tables
    assert Row(namespace="", tableName="recent", isTemporary=True) in tables
    described = spark.sql("DESCRIBE orders").collect()
    assert [(row.col_name, row.data_type) for row in described] == [
        ("id", "int"),
        ("total", "double"),
    ]
    detail = spark.sql("DESCRIBE DETAIL orders").collect()[0]
    assert detail.format == "delta"
    assert detail.location.endswith("/orders")


def test_errors_name_what_is_wrong(spark: ShimSession) -> None:
    with pytest.raises(AnalysisException, match=r"The table or view `missing` cannot be found"):
        spark.sql("SELECT * FROM missing")
    spark.sql("CREATE TABLE t (id INT)")
    with pytest.raises(AnalysisException, match="nope"):
        spark.sql("SELECT nope FROM t")
    with pytest.raises(UnsupportedSqlError, match="USING parquet"):
        spark.sql("CREATE TABLE p (id INT) USING parquet")
    with pytest.raises(AnalysisException, match="ARITY"):
        spark.sql("INSERT INTO t VALUES (1, 2)")


def test_use_and_drop_schema(spark: ShimSession) -> None:
    spark.sql("CREATE DATABASE IF NOT EXISTS s")
    spark.sql("USE s")
    spark.sql("CREATE TABLE t (id INT)")
    assert spark.catalog.currentDatabase() == "s"
    with pytest.raises(AnalysisException, match="SCHEMA_NOT_EMPTY"):
        spark.sql("DROP SCHEMA s")
    spark.sql("USE default")
    spark.sql("DROP SCHEMA s CASCADE")
    assert spark.catalog.listDatabases() == ["default"]


def test_txn_app_id_and_version_make_a_write_idempotent(spark: ShimSession) -> None:
    spark.sql("CREATE TABLE t (id INT)")
    spark.conf.set("spark.databricks.delta.write.txnAppId", "loader")
    spark.conf.set("spark.databricks.delta.write.txnVersion", "7")
    spark.sql("INSERT INTO t VALUES (1)")
    spark.sql("INSERT INTO t VALUES (1)")  # the same (app, version): skipped, as in Delta
    spark.sql("UPDATE t SET id = 2")  # also skipped
    spark.conf.set("spark.databricks.delta.write.txnVersion", "8")
    spark.sql("INSERT INTO t VALUES (3)")
    assert sorted(row.id for row in spark.sql("SELECT id FROM t").collect()) == [1, 3]


def test_a_conditional_write_fails_when_the_table_moved(spark: ShimSession) -> None:
    spark.sql("CREATE TABLE t (id INT)")
    spark.sql("INSERT INTO t VALUES (1)")  # version 1
    spark.conf.set("sparkshim.write.expectedTableVersion", "1")
    spark.sql("INSERT INTO t VALUES (2)")  # read 1, still 1: lands as version 2
    with pytest.raises(AnalysisException, match="at version 2, not 1"):
        spark.sql("DELETE FROM t WHERE id = 1")
    with pytest.raises(AnalysisException, match="at version 2, not 1"):
        spark.sql("INSERT INTO t VALUES (3)")
    spark.conf.unset("sparkshim.write.expectedTableVersion")
    assert sorted(row.id for row in spark.sql("SELECT id FROM t").collect()) == [1, 2]


def test_unknown_columns_are_named_as_spark_names_them(spark: ShimSession) -> None:
    spark.sql("CREATE TABLE t (id INT, name STRING)")
    with pytest.raises(AnalysisException, match=r"UNRESOLVED_COLUMN.*`nope`.*\[`name`\]"):
        spark.sql("SELECT nope FROM t")


def test_timestamp_as_of(spark: ShimSession) -> None:
    spark.sql("CREATE TABLE t (id INT)")
    spark.sql("INSERT INTO t VALUES (1)")
    with pytest.raises(AnalysisException, match="before the earliest version"):
        spark.sql("SELECT * FROM t TIMESTAMP AS OF '2000-01-01'")
    assert spark.sql("SELECT * FROM t TIMESTAMP AS OF '2999-01-01'").collect() == [Row(id=1)]


def test_insert_overwrite_can_replace_the_schema_in_one_commit(spark: ShimSession) -> None:
    spark.sql("CREATE TABLE t (a INT)")
    spark.sql("INSERT INTO t VALUES (1)")
    spark.conf.set("sparkshim.write.overwriteSchema", "true")
    spark.sql("INSERT OVERWRITE t SELECT 'x' AS b, 2L AS c")
    assert spark.sql("SELECT * FROM t").collect() == [Row(b="x", c=2)]
    assert spark.sql("DESCRIBE HISTORY t LIMIT 1").collect()[0].version == 2
    assert spark.sql("SELECT * FROM t VERSION AS OF 1").collect() == [Row(a=1)]
    with pytest.raises(AnalysisException, match="plain INSERT OVERWRITE"):
        spark.sql("INSERT OVERWRITE t (b, c) SELECT 'y', 3L")


def test_session_functions_and_set_read_the_session(spark: ShimSession) -> None:
    spark.sql("CREATE DATABASE sales")
    spark.sql("USE sales")
    row = spark.sql(
        "SELECT current_database() AS db, current_schema() AS s, current_catalog() AS c,"
        " current_timezone() AS tz"
    ).collect()[0]
    assert tuple(row) == ("sales", "sales", "spark_catalog", "UTC")
    spark.sql("SET my.key = 42")
    assert spark.sql("SET my.key").collect() == [Row(key="my.key", value="42")]
    assert spark.sql("SET other.key").collect() == [Row(key="other.key", value="<undefined>")]
    assert ("my.key", "42") in {(r.key, r.value) for r in spark.sql("SET").collect()}


def test_set_takes_the_value_as_written(spark: ShimSession) -> None:
    # Spark reads the rest of SET k = v as text: a zone name is not a division.
    spark.sql("SET spark.sql.session.timeZone = America/Los_Angeles")
    assert spark.conf.get("spark.sql.session.timeZone") == "America/Los_Angeles"
    midnight_utc = "CAST('2024-01-01 00:00:00+00:00' AS TIMESTAMP)"
    row = spark.sql(f"SELECT current_timezone() AS tz, hour({midnight_utc}) AS h").collect()[0]
    assert tuple(row) == ("America/Los_Angeles", 16)
    spark.sql("SET my.zone=Etc/GMT+8")
    spark.sql("SET my.text = 'two words'")
    assert spark.sql("SET my.zone").collect() == [Row(key="my.zone", value="Etc/GMT+8")]
    assert spark.sql("SET my.text").collect() == [Row(key="my.text", value="two words")]


def test_a_change_of_the_session_time_zone_reaches_the_next_statement(spark: ShimSession) -> None:
    """The zone is read at every statement, not only when the thread's engine connection
    is first made: a notebook sets it after running something."""
    noon_utc = "CAST('2024-01-01 12:00:00+00:00' AS TIMESTAMP)"
    assert spark.sql(f"SELECT hour({noon_utc}) AS h").collect() == [Row(h=12)]
    for zone, hour in (("America/Los_Angeles", 4), ("Asia/Tokyo", 21)):
        spark.conf.set(TIME_ZONE_CONF, zone)
        assert spark.sql(f"SELECT hour({noon_utc}) AS h").collect() == [Row(h=hour)]


@pytest.mark.parametrize("zone", ["Pacific/Kiritimati", "Pacific/Pago_Pago"])
def test_current_date_is_the_date_in_the_session_time_zone(spark: ShimSession, zone: str) -> None:
    """UTC+14 and UTC-11: at any moment one of them is on another date than UTC (the shim
    gave the UTC date)."""
    spark.conf.set(TIME_ZONE_CONF, zone)
    row = spark.sql("SELECT current_date() = to_date(current_timestamp()) AS same").collect()
    assert row == [Row(same=True)]


@pytest.mark.parametrize(
    ("zone", "text"),
    [
        ("America/Los_Angeles", "2024-01-01 04:00:00"),
        ("Asia/Kolkata", "2024-01-01 17:30:00"),
        ("UTC", "2024-01-01 12:00:00"),
    ],
)
def test_a_timestamp_as_text_is_its_local_time_without_an_offset(
    spark: ShimSession, zone: str, text: str
) -> None:
    """Spark's text of a TIMESTAMP is its wall time in the session's zone, with no offset
    (DuckDB writes -08 or +05:30 after it)."""
    spark.conf.set(TIME_ZONE_CONF, zone)
    noon_utc = "CAST('2024-01-01 12:00:00+00:00' AS TIMESTAMP)"
    row = spark.sql(f"SELECT CAST({noon_utc} AS STRING) AS a, concat({noon_utc}, '') AS b")
    assert row.collect() == [Row(a=text, b=text)]


def test_a_date_plus_hours_is_a_timestamp_from_midnight_in_the_session_zone(
    spark: ShimSession,
) -> None:
    """Spark: TIMESTAMP (an instant), the DATE's midnight in the session's zone plus the
    time; on the day clocks go forward in Los Angeles, 3 hours after midnight is 04:00."""
    spark.conf.set(TIME_ZONE_CONF, "America/Los_Angeles")
    frame = spark.sql("SELECT DATE'2024-03-10' + INTERVAL 3 HOUR AS t")
    assert frame.schema.fields[0].dataType.simpleString() == "timestamp"
    text = spark.sql("SELECT CAST(DATE'2024-03-10' + INTERVAL 3 HOUR AS STRING) AS t").collect()
    assert text == [Row(t="2024-03-10 04:00:00")]


def test_timestamp_arithmetic_and_epoch_seconds_follow_the_session_zone(spark: ShimSession) -> None:
    """Spark adds an interval's whole days on the calendar of the session's zone and the
    rest as elapsed time (26 hours: a day and 2 hours), and counts seconds since the epoch
    of the instant; Los Angeles, 2024: clocks forward on March 10, back on November 3."""
    spark.conf.set(TIME_ZONE_CONF, "America/Los_Angeles")
    rows = spark.sql(
        "SELECT CAST(TIMESTAMP'2024-03-10 00:00:00' + INTERVAL 26 HOUR AS STRING) AS a,"
        " CAST(TIMESTAMP'2024-03-09 12:00:00' + INTERVAL 24 HOUR AS STRING) AS b,"
        " CAST(TIMESTAMP'2024-11-03 03:30:00' - INTERVAL 2 HOUR AS STRING) AS c,"
        " unix_timestamp(TIMESTAMP'2024-01-01 12:00:00') AS d,"
        " unix_timestamp('2024-01-01', 'yyyy-MM-dd') AS e,"
        " to_unix_timestamp(DATE'2024-01-01') AS f"
    ).collect()
    assert rows == [
        Row(
            a="2024-03-11 02:00:00",
            b="2024-03-10 12:00:00",
            c="2024-11-03 01:30:00",
            d=1704139200,
            e=1704096000,
            f=1704096000,
        )
    ]


def test_the_session_time_zone_reaches_duckdb_as_one_string_literal(tmp_path: Path) -> None:
    """A time zone with a quote is DuckDB's unknown zone, whole: pasted between quotes it
    would end the string and run the rest as SQL (here, leaving DuckDB on UTC)."""
    zone = "UTC'; SELECT 1; --"
    spark = ShimSession(warehouse=tmp_path / "warehouse", conf={TIME_ZONE_CONF: zone})
    with pytest.raises(duckdb.Error, match="Unknown TimeZone") as failure:
        spark.cursor()
    assert zone in str(failure.value)
    spark.conf.set(TIME_ZONE_CONF, "Europe/Paris")
    setting = spark.cursor().execute("SELECT current_setting('TimeZone')").fetchone()
    assert setting == ("Europe/Paris",)


def test_raise_error_and_assert_true_fail_the_query(spark: ShimSession) -> None:
    spark.sql("CREATE TABLE t (a INT)")
    spark.sql("INSERT INTO t VALUES (1), (5)")
    assert spark.sql("SELECT assert_true(a < 9) AS ok FROM t").collect() == [Row(ok=None)] * 2
    with pytest.raises(AnalysisException, match="is not true"):
        spark.sql("SELECT assert_true(a < 3) FROM t")
    with pytest.raises(AnalysisException, match="boom"):
        spark.sql("SELECT raise_error('boom') FROM t")


def test_insert_with_common_table_expressions(spark: ShimSession) -> None:
    spark.sql("CREATE TABLE t (a INT)")
    spark.sql("WITH two AS (SELECT 2 AS a) INSERT INTO t SELECT a FROM two")
    spark.sql("INSERT INTO t SELECT q.a FROM (WITH three AS (SELECT 3 AS a) SELECT * FROM three) q")
    assert sorted(row.a for row in spark.sql("SELECT a FROM t").collect()) == [2, 3]


def test_dynamic_table_ddl_sent_to_the_shim_itself_names_the_way_out(tmp_path: Path) -> None:
    spark = ShimSession(warehouse=tmp_path / "warehouse")
    spark.sql("CREATE TABLE src (id INT)")
    with pytest.raises(AnalysisException, match=r"dyntables\.install\(spark\)"):
        spark.sql("CREATE DYNAMIC TABLE d TARGET_LAG = '1 minute' AS SELECT id FROM src")
    assert [row.tableName for row in spark.sql("SHOW TABLES").collect()] == ["src"]


def test_inserting_a_dataframe_view_equals_inserting_the_same_values(spark: ShimSession) -> None:
    """``INSERT INTO t SELECT * FROM v`` of a DataFrame's view skips DuckDB; the rows and
    types written are those of the same INSERT … VALUES, and any other SELECT still runs."""
    spark.sql("CREATE TABLE a (id BIGINT, at TIMESTAMP, price DECIMAL(10, 2), tags ARRAY<STRING>)")
    spark.sql("CREATE TABLE b (id BIGINT, at TIMESTAMP, price DECIMAL(10, 2), tags ARRAY<STRING>)")
    rows = [(1, datetime(2024, 1, 2, 3, 4, 5), Decimal("9.99"), ["x"]), (2, None, None, None)]
    frame = spark.createDataFrame(
        rows, "id INT, at TIMESTAMP, price DECIMAL(5, 2), tags ARRAY<STRING>"
    )
    frame.createOrReplaceTempView("v")
    spark.sql("INSERT INTO a SELECT * FROM v")
    spark.sql(
        "INSERT INTO b VALUES (1, CAST('2024-01-02 03:04:05' AS TIMESTAMP), 9.99, array('x')),"
        " (2, NULL, NULL, NULL)"
    )
    spark.sql("INSERT INTO a SELECT * FROM v WHERE id = 2")  # not a plain view read
    assert sorted(spark.sql("SELECT * FROM a").collect(), key=str) == sorted(
        [*spark.sql("SELECT * FROM b").collect(), Row(id=2, at=None, price=None, tags=None)],
        key=str,
    )
    with pytest.raises(AnalysisException, match="INSERT_COLUMN_ARITY_MISMATCH"):
        spark.sql("INSERT INTO a SELECT * FROM (SELECT 1 AS id)")
    spark.createDataFrame([(1,)], "id INT").createOrReplaceTempView("narrow")
    with pytest.raises(AnalysisException, match="INSERT_COLUMN_ARITY_MISMATCH"):
        spark.sql("INSERT INTO a SELECT * FROM narrow")


def test_inserting_a_dataframe_view_does_not_run_a_query(
    spark: ShimSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sparkshim import commands

    spark.sql("CREATE TABLE a (id BIGINT)")
    spark.createDataFrame([(1,), (2,)], "id INT").createOrReplaceTempView("v")

    def no_query(*args: object) -> None:
        raise AssertionError("the rows of a DataFrame's view went through DuckDB")

    monkeypatch.setattr(commands, "run_query", no_query)
    spark.sql("INSERT INTO a SELECT * FROM v")
    monkeypatch.undo()
    assert sorted(row.id for row in spark.sql("SELECT id FROM a").collect()) == [1, 2]
