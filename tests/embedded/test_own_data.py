"""Data written outside the product: Delta tables registered with CREATE TABLE ...
LOCATION, files read by path in SQL (``parquet.`p```, ``csv.`p```, ``json.`p```,
``delta.`p```) and through ``spark.read``, and dynamic tables over a registered table
and over a Delta table named by its path.

Files are read by real PySpark 3.5 too, and both must give the same columns, types and
rows (Delta paths cannot be: there are no Delta jars here)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable, write_deltalake
from pyspark.errors import AnalysisException
from pyspark.sql import SparkSession

from dyntables import DynamicTableError, DynamicTables
from sparkshim.errors import UnsupportedSqlError
from sparkshim.session import ShimSession

pytestmark = pytest.mark.embedded

CSV = """id,name,score,flag,day,ts,big,empty
1,alice,1.5,true,2024-01-02,2024-01-02 10:00:00,12345678901234567890,
2,"bob, jr",2,false,2024-02-03,2024-01-02T11:00:00,1,""
,carol,,,,,,x
"""
JSON = """{"z": 1, "a": "x", "n": {"q": 1, "b": [1, 2.5]}, "m": null}
{"z": 2.5, "a": 3, "arr": [1, 2], "t": true, "big": 12345678901234567890}

{"z": null, "d": "2024-01-02", "arr": [], "o": {}}
"""


@pytest.fixture
def spark(tmp_path: Path) -> ShimSession:
    return ShimSession(warehouse=tmp_path / "warehouse")


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("files")
    (folder / "people.csv").write_text(CSV)
    (folder / "semi.csv").write_text("a;b\n1;NA\n2;x\n")
    (folder / "rows.json").write_text(JSON)
    (folder / "csvs").mkdir()
    (folder / "csvs" / "one.csv").write_text("1,a\n2,b\n")
    (folder / "csvs" / "two.csv").write_text("3,c\n")
    (folder / "csvs" / ".hidden.csv").write_text("4,d\n")
    parquet = folder / "parquet"
    (parquet / "part=1").mkdir(parents=True)
    (parquet / "part=2").mkdir()
    pq.write_table(pa.table({"k": [1, 2], "s": ["a", None]}), parquet / "part=1" / "f.parquet")
    pq.write_table(pa.table({"k": [3], "s": ["c"]}), parquet / "part=2" / "f.parquet")
    (parquet / "_SUCCESS").write_text("")
    return folder


def _same(shim: Any, real: Any) -> None:
    """The same column names, Spark types and rows (in any order)."""
    assert shim.dtypes == real.dtypes
    assert sorted(map(repr, shim.collect())) == sorted(map(repr, real.collect()))


# ---- file reads, compared with PySpark ----

SQL_READS = [
    "SELECT * FROM csv.`{files}/people.csv`",
    "SELECT * FROM json.`{files}/rows.json`",
    "SELECT * FROM parquet.`{files}/parquet`",
    "SELECT k, s FROM parquet.`{files}/parquet/part=1/f.parquet` WHERE k > 1",
    "SELECT count(*) AS n, max(_c1) AS top FROM csv.`{files}/csvs`",
]


@pytest.mark.parametrize("query", SQL_READS)
def test_sql_reads_files_by_path_as_spark(
    spark: ShimSession, pyspark_session: SparkSession, files: Path, query: str
) -> None:
    sql = query.format(files=files)
    _same(spark.sql(sql), pyspark_session.sql(sql))


READS: list[Callable[[Any, Path], Any]] = [
    lambda r, f: r.csv(str(f / "people.csv")),
    lambda r, f: r.csv(str(f / "people.csv"), header=True),
    lambda r, f: r.csv(str(f / "people.csv"), header=True, inferSchema=True),
    lambda r, f: r.option("header", "true").option("nullValue", "x").csv(str(f / "people.csv")),
    lambda r, f: r.options(header=True, sep=";", nullValue="NA").csv(str(f / "semi.csv")),
    lambda r, f: r.option("delimiter", ";").option("inferSchema", True).csv(str(f / "semi.csv")),
    lambda r, f: r.schema("id INT, name STRING").csv(str(f / "people.csv"), header=True),
    lambda r, f: r.format("csv").option("header", True).load(str(f / "people.csv")),
    lambda r, f: r.json(str(f / "rows.json")),
    lambda r, f: r.schema("z DOUBLE, d DATE, a STRING, q BIGINT").json(str(f / "rows.json")),
    lambda r, f: r.parquet(str(f / "parquet")),
    lambda r, f: r.load(str(f / "parquet")),  # parquet is the default format
]


@pytest.mark.parametrize("read", READS)
def test_spark_read_reads_files_as_spark(
    spark: ShimSession,
    pyspark_session: SparkSession,
    files: Path,
    read: Callable[[Any, Path], Any],
) -> None:
    _same(read(spark.read, files), read(pyspark_session.read, files))


def test_a_missing_path_is_spark_s_error(spark: ShimSession, files: Path) -> None:
    with pytest.raises(AnalysisException, match="PATH_NOT_FOUND"):
        spark.sql(f"SELECT * FROM parquet.`{files}/nothing`")


def test_an_unsupported_option_is_refused_by_name(spark: ShimSession, files: Path) -> None:
    with pytest.raises(UnsupportedSqlError, match=r"'dateformat'.*header, inferschema"):
        spark.read.option("dateFormat", "dd/MM/yyyy").csv(str(files / "people.csv"))


def test_files_have_no_versions(spark: ShimSession, files: Path) -> None:
    with pytest.raises(AnalysisException, match="Cannot time travel csv"):
        spark.sql(f"SELECT * FROM csv.`{files}/people.csv` VERSION AS OF 1")


# ---- Delta tables by path ----


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A Delta table written by deltalake, with two versions."""
    location = tmp_path / "Outside Table"
    write_deltalake(location, pa.table({"a": [1, 2], "b": ["x", "y"]}))
    write_deltalake(location, pa.table({"a": [3], "b": ["z"]}), mode="append")
    return location


def test_delta_path_reads_any_version(spark: ShimSession, outside: Path) -> None:
    latest = spark.sql(f"SELECT a FROM delta.`{outside}` ORDER BY a").collect()
    first = spark.sql(f"SELECT a FROM delta.`{outside}` VERSION AS OF 0 ORDER BY a").collect()
    assert [row.a for row in latest] == [1, 2, 3]
    assert [row.a for row in first] == [1, 2]
    by_reader = spark.read.format("delta").option("versionAsOf", 0).load(str(outside))
    assert sorted(row.a for row in by_reader.collect()) == [1, 2]


def test_dml_on_a_delta_path(spark: ShimSession, outside: Path) -> None:
    spark.sql(f"INSERT INTO delta.`{outside}` VALUES (4, 'w')")
    spark.sql(f"DELETE FROM delta.`{outside}` WHERE a = 1")
    spark.sql(f"UPDATE delta.`{outside}` SET b = 'Y' WHERE a = 2")
    spark.sql(
        f"MERGE INTO delta.`{outside}` AS t USING (SELECT 3 AS a, 'Z' AS b) AS s ON t.a = s.a"
        " WHEN MATCHED THEN UPDATE SET b = s.b"
    )
    rows = DeltaTable(outside).to_pyarrow_table().sort_by("a").to_pylist()
    assert rows == [{"a": 2, "b": "Y"}, {"a": 3, "b": "Z"}, {"a": 4, "b": "w"}]


def test_a_delta_path_s_metadata_and_change_feed(spark: ShimSession, outside: Path) -> None:
    """As with Delta on Spark: properties, history and the change feed of a table named
    by its path (``table_changes`` by name, ``table_changes_by_path``)."""
    name = f"delta.`{outside}`"
    assert spark.catalog.tableExists(name)
    assert not spark.catalog.tableExists(f"delta.`{outside.parent / 'nothing'}`")
    spark.sql(f"ALTER TABLE {name} SET TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true')")
    properties = {row.key: row.value for row in spark.sql(f"SHOW TBLPROPERTIES {name}").collect()}
    assert properties["delta.enableChangeDataFeed"] == "true"
    spark.sql(f"DELETE FROM {name} WHERE a = 1")
    history = spark.sql(f"DESCRIBE HISTORY {name} LIMIT 1").collect()
    assert [row.version for row in history] == [3]
    by_name = spark.sql(f"SELECT a, _change_type FROM table_changes('{name}', 3, 3)").collect()
    by_path = spark.sql(
        f"SELECT a, _change_type FROM table_changes_by_path('{outside}', 3)"
    ).collect()
    assert [tuple(row) for row in by_name] == [tuple(row) for row in by_path] == [(1, "delete")]


def test_a_folder_without_a_delta_log_is_no_delta_table(spark: ShimSession, files: Path) -> None:
    with pytest.raises(AnalysisException, match="is not a Delta table"):
        spark.sql(f"SELECT * FROM delta.`{files}/parquet`")


# ---- CREATE TABLE ... LOCATION ----


def test_create_table_registers_an_existing_delta_table(spark: ShimSession, outside: Path) -> None:
    spark.sql(f"CREATE TABLE sales USING delta LOCATION '{outside}'")
    assert spark.sql("SELECT count(*) AS n FROM sales").collect()[0].n == 3
    assert spark.table("sales").dtypes == [("a", "bigint"), ("b", "string")]
    assert [t.tableType for t in spark.catalog.listTables()] == ["EXTERNAL"]
    assert DeltaTable(outside).version() == 1  # registering wrote nothing


def test_a_declared_column_list_must_be_the_table_s(spark: ShimSession, outside: Path) -> None:
    spark.sql(f"CREATE TABLE same (A BIGINT, b STRING) USING delta LOCATION '{outside}'")
    with pytest.raises(AnalysisException, match="`b` is string in the table, declared int"):
        spark.sql(f"CREATE TABLE other (a BIGINT, b INT) USING delta LOCATION '{outside}'")
    with pytest.raises(AnalysisException, match=r"`c` is not a column.*not declared: `b`"):
        spark.sql(f"CREATE TABLE other (a BIGINT, c STRING) USING delta LOCATION '{outside}'")
    with pytest.raises(AnalysisException, match=r"has delta\.appendOnly=None, not 'true'"):
        spark.sql(
            f"CREATE TABLE other USING delta LOCATION '{outside}'"
            " TBLPROPERTIES ('delta.appendOnly' = 'true')"
        )
    assert not spark.catalog.tableExists("other")
    assert DeltaTable(outside).version() == 1


def test_create_table_as_select_into_an_existing_table_is_refused(
    spark: ShimSession, outside: Path
) -> None:
    with pytest.raises(AnalysisException, match="already holds a Delta table"):
        spark.sql(f"CREATE TABLE t USING delta LOCATION '{outside}' AS SELECT 1 AS a")
    assert DeltaTable(outside).version() == 1


def test_create_table_at_a_new_location_creates_it_there(
    spark: ShimSession, tmp_path: Path
) -> None:
    location = tmp_path / "new"
    spark.sql(f"CREATE TABLE t (k INT) USING delta LOCATION '{location}'")
    spark.sql("INSERT INTO t VALUES (1)")
    assert DeltaTable(location).to_pyarrow_table().to_pylist() == [{"k": 1}]
    with pytest.raises(AnalysisException, match="no Delta table is at"):
        spark.sql(f"CREATE TABLE u USING delta LOCATION '{tmp_path / 'empty'}'")


def test_drop_table_keeps_an_external_table_s_files(spark: ShimSession, outside: Path) -> None:
    """As in Spark: a table created with LOCATION is external, and DROP forgets only its
    name."""
    spark.sql(f"CREATE TABLE sales USING delta LOCATION '{outside}'")
    spark.sql("DROP TABLE sales")
    assert not spark.catalog.tableExists("sales")
    assert DeltaTable(outside).to_pyarrow_table().num_rows == 3


def test_drop_of_a_delta_path_deletes_nothing(spark: ShimSession, outside: Path) -> None:
    with pytest.raises(AnalysisException, match="TABLE_OR_VIEW_NOT_FOUND"):
        spark.sql(f"DROP TABLE delta.`{outside}`")
    assert DeltaTable(outside).to_pyarrow_table().num_rows == 3


# ---- typed empty and NULL arrays and maps ----


EMPTY_COLLECTIONS = [
    "SELECT CAST(array() AS ARRAY<STRING>) AS a",
    "SELECT CAST(NULL AS ARRAY<INT>) AS a",
    "SELECT CAST(map() AS MAP<STRING, INT>) AS m",
    "SELECT array() AS a",
]


@pytest.mark.parametrize("query", EMPTY_COLLECTIONS)
def test_typed_empty_and_null_collections_are_spark_s(
    spark: ShimSession, pyspark_session: SparkSession, query: str
) -> None:
    _same(spark.sql(query), pyspark_session.sql(query))


def test_range_with_four_arguments(spark: ShimSession, pyspark_session: SparkSession) -> None:
    query = "SELECT * FROM range(1, 10, 3, 2)"
    _same(spark.sql(query), pyspark_session.sql(query))


# ---- dynamic tables over data written outside ----


@pytest.mark.parametrize("feed", [{"delta.enableChangeDataFeed": "true"}, None])
def test_a_dynamic_table_over_a_registered_table_refreshes_incrementally(
    tmp_path: Path, feed: dict[str, str] | None
) -> None:
    """With or without a change data feed written by its writer: CREATE enables it on
    the source, as on any other (DESIGN.md, change source)."""
    location = tmp_path / "events"
    write_deltalake(location, pa.table({"k": [1, 2, 3], "v": [10, 20, 30]}), configuration=feed)
    dt = DynamicTables(warehouse=tmp_path / "warehouse")
    dt.sql(f"CREATE TABLE events USING delta LOCATION '{location}'")
    dt.sql(
        "CREATE DYNAMIC TABLE big TARGET_LAG = '1 minute' REFRESH_MODE = INCREMENTAL"
        " AS SELECT k, v FROM events WHERE v > 15"
    )
    assert DeltaTable(location).metadata().configuration["delta.enableChangeDataFeed"] == "true"
    write_deltalake(location, pa.table({"k": [4, 5], "v": [40, 5]}), mode="append")
    refreshed = dt.sql("ALTER DYNAMIC TABLE big REFRESH").collect()[0]
    assert refreshed.action == "INCREMENTAL"
    assert sorted(tuple(row) for row in dt.sql("SELECT * FROM big").collect()) == [
        (2, 20),
        (3, 30),
        (4, 40),
    ]


# ---- dynamic tables over a Delta table named by its path ----


def _appended(location: Path) -> None:
    write_deltalake(location, pa.table({"k": [4, 1], "v": [40, 1]}), mode="append")


def _deleted(location: Path) -> None:
    DeltaTable(location).delete("k = 2")


def _updated(location: Path) -> None:
    DeltaTable(location).update({"v": "v + 100"}, predicate="k = 3")


OUTSIDE_CHANGES = [_appended, _deleted, _updated]
PATH_QUERIES = {
    "aliased": "SELECT e.k, e.v FROM delta.`{path}` AS e WHERE e.v > 15",
    "unaliased": "SELECT k, v * 2 AS w FROM delta.`{path}` WHERE v > 15",
    "joined": "SELECT d.name, sum(e.v) AS total, count(*) AS n FROM delta.`{path}` e"
    " JOIN dims d ON d.k = e.k GROUP BY d.name",
}


def _rows(dt: DynamicTables, query: str) -> list[tuple[Any, ...]]:
    return sorted(tuple(row) for row in dt.sql(query).collect())


@pytest.fixture
def events(tmp_path: Path) -> Path:
    """A Delta table written by deltalake without a change data feed, at a path with
    capitals, dots and a space."""
    location = tmp_path / "Outside Data" / "Events.v2"
    write_deltalake(location, pa.table({"k": [1, 2, 3], "v": [10, 20, 30]}))
    return location


@pytest.fixture
def path_dt(tmp_path: Path) -> DynamicTables:
    dt = DynamicTables(warehouse=tmp_path / "warehouse")
    dt.sql("CREATE TABLE dims (k BIGINT, name STRING) USING DELTA")
    dt.sql("INSERT INTO dims VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd')")
    return dt


@pytest.mark.parametrize("mode", ["INCREMENTAL", "AUTO"])
@pytest.mark.parametrize("shape", list(PATH_QUERIES))
def test_a_dynamic_table_over_a_delta_path_refreshes_incrementally(
    path_dt: DynamicTables, events: Path, mode: str, shape: str
) -> None:
    """Outside appends, deletes and updates reach the table incrementally, and it holds
    what its query gives over the path now (the full recompute is the oracle)."""
    query = PATH_QUERIES[shape].format(path=events)
    path_dt.sql(f"CREATE DYNAMIC TABLE d TARGET_LAG = '1 minute' REFRESH_MODE = {mode} AS {query}")
    assert DeltaTable(events).metadata().configuration["delta.enableChangeDataFeed"] == "true"
    assert path_dt.sql("SHOW DYNAMIC TABLES").collect()[0].refresh_mode == "INCREMENTAL"
    assert _rows(path_dt, "SELECT * FROM d") == _rows(path_dt, query)
    for change in OUTSIDE_CHANGES:
        change(events)
        refreshed = path_dt.sql("ALTER DYNAMIC TABLE d REFRESH").collect()[0]
        assert (refreshed.action, change.__name__) == ("INCREMENTAL", change.__name__)
        assert _rows(path_dt, "SELECT * FROM d") == _rows(path_dt, query), change.__name__
    assert path_dt.sql("ALTER DYNAMIC TABLE d REFRESH").collect()[0].action == "NO_DATA"


def test_a_delta_path_source_is_recorded_by_its_absolute_path(
    path_dt: DynamicTables, events: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A relative path is read from the working folder at CREATE and recorded absolute:
    refreshes from another folder read the same table. SHOW, EXPLAIN, the graph and its
    function name the source by its path."""
    monkeypatch.chdir(events.parent.parent)
    path_dt.sql(
        "CREATE DYNAMIC TABLE d TARGET_LAG = '1 minute'"
        " AS SELECT k, v FROM delta.`Outside Data/Events.v2`"
    )
    monkeypatch.chdir(events.parent)
    _appended(events)
    assert path_dt.sql("ALTER DYNAMIC TABLE d REFRESH").collect()[0].action == "INCREMENTAL"
    assert _rows(path_dt, "SELECT * FROM d") == [(1, 1), (1, 10), (2, 20), (3, 30), (4, 40)]
    key = f"delta.`{events}`"
    shown = path_dt.sql("SHOW FULL DYNAMIC TABLES").collect()[0]
    assert shown.text.endswith("FROM delta.`Outside Data/Events.v2`")  # as written
    explained = [tuple(row) for row in path_dt.sql("EXPLAIN DYNAMIC TABLE d").collect()]
    assert (f"FROM {key}", "SOURCE", "changed rows only, read from the change feed") in explained
    assert f"reads {key}" in path_dt.graph().to_text()
    graph = path_dt.sql(
        "SELECT inputs, query_text FROM information_schema.dynamic_table_graph_history()"
    ).collect()[0]
    assert json.loads(graph.inputs) == [{"name": key, "kind": "TABLE"}]
    assert graph.query_text == f"SELECT k, v FROM {key}"


def test_the_scheduler_refreshes_a_dynamic_table_over_a_delta_path(
    path_dt: DynamicTables, events: Path
) -> None:
    path_dt.sql(
        f"CREATE DYNAMIC TABLE d TARGET_LAG = '1 second' AS SELECT k, v FROM delta.`{events}`"
    )
    _updated(events)
    time.sleep(1.6)  # a tick of its 0.75 s period has passed since creation
    assert path_dt.scheduler_service().run_once() is None
    actions = path_dt.sql(
        "SELECT refresh_trigger, refresh_action, state FROM"
        " information_schema.dynamic_table_refresh_history(NAME => 'd')"
        " ORDER BY refresh_start_time"
    ).collect()
    assert [tuple(row) for row in actions][-1] == ("SCHEDULED", "INCREMENTAL", "SUCCEEDED")
    assert _rows(path_dt, "SELECT * FROM d") == [(1, 10), (2, 20), (3, 130)]


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("delta.`{base}/nothing`", "no Delta table is at .*/nothing: check the path"),
        ("parquet.`{base}/files`", "files that have no versions: .*CREATE TABLE name AS SELECT"),
        ("delta.`{events}` VERSION AS OF 0", "at a fixed version"),
    ],
)
def test_a_dynamic_table_over_a_path_it_cannot_read_changes_nothing(
    path_dt: DynamicTables, events: Path, tmp_path: Path, source: str, message: str
) -> None:
    (tmp_path / "files").mkdir()
    pq.write_table(pa.table({"k": [1]}), tmp_path / "files" / "f.parquet")
    query = f"SELECT k FROM {source.format(base=tmp_path, events=events)}"
    with pytest.raises(DynamicTableError, match=message):
        path_dt.sql(f"CREATE DYNAMIC TABLE d TARGET_LAG = '1 minute' AS {query}")
    assert [row.tableName for row in path_dt.sql("SHOW TABLES").collect()] == ["dims"]
    assert DeltaTable(events).version() == 0


def test_an_untyped_map_is_refused(spark: ShimSession) -> None:
    """Spark's ``map()`` is a map<void,void>, which Arrow cannot hold (its map keys are
    never null); cast it to a typed map instead."""
    with pytest.raises(UnsupportedSqlError, match=r"such as map\(\)"):
        spark.sql("SELECT map() AS m")
