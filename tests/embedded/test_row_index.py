"""The row index (sparkshim/row_index.py): a semi join that looks up rows of a table with
deletion vectors by every column (or by some of them) finds them through per-file hash
indexes, not by reading the table; it must answer exactly what reading the table answers
(the oracle: the same query with the index turned off), whatever the values (duplicates,
NULLs, -0.0 and NaN, strings, decimals, dates), after rows were marked deleted, and with
indexes that are missing, damaged or of another tag."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from delta_readers import location_of, session_rows
from deltalake import DeltaTable, Field
from hypothesis import given, settings
from hypothesis import strategies as st

from sparkshim import row_index
from sparkshim.config import ROW_INDEX_CONF, ROW_INDEX_MIN_ROWS_CONF
from sparkshim.errors import AnalysisException
from sparkshim.session import ShimSession

pytestmark = pytest.mark.embedded

COLUMNS = "k INT, s STRING, d DOUBLE, m DECIMAL(10, 2), day DATE"
LOOKUP = (
    "SELECT t.k, t.s, t.d, t.m, t.day, count(*) AS copies FROM t SEMI JOIN probe AS p"
    " ON t.k <=> p.k AND t.s <=> p.s AND t.d <=> p.d AND t.m <=> p.m AND t.day <=> p.day"
    " GROUP BY t.k, t.s, t.d, t.m, t.day"
)


def indexed_session(warehouse: Path) -> ShimSession:
    """A session whose semi joins go through the index whatever the table's size (by
    default a table of fewer than half a million rows is read instead)."""
    session = ShimSession(warehouse=str(warehouse))
    session.conf.set(ROW_INDEX_MIN_ROWS_CONF, "0")
    return session


def indexed_and_read(session: ShimSession, sql: str) -> tuple[Counter[str], Counter[str]]:
    """The query's rows through the index, and with the index turned off."""
    through_index = session_rows(session, sql)
    session.conf.set(ROW_INDEX_CONF, "false")
    try:
        return through_index, session_rows(session, sql)
    finally:
        session.conf.unset(ROW_INDEX_CONF)


def index_files(session: ShimSession) -> list[Path]:
    folder = location_of(session, "t") / row_index.FOLDER
    return sorted(folder.iterdir()) if folder.is_dir() else []


VALUE = st.tuples(
    st.one_of(st.none(), st.integers(-3, 3)),
    st.one_of(st.none(), st.sampled_from(["", "a", "b", "a b", "'q'"])),
    st.one_of(st.none(), st.sampled_from(["0.0", "-0.0", "double('NaN')", "1.5", "-2.25"])),
    st.one_of(st.none(), st.sampled_from(["0.00", "1.10", "-7.25"])),
    st.one_of(st.none(), st.sampled_from(["DATE'2024-02-29'", "DATE'1970-01-01'"])),
)


def literal(value: tuple[Any, ...]) -> str:
    k, s, d, m, day = value
    parts = [
        "CAST(NULL AS INT)" if k is None else str(k),
        "CAST(NULL AS STRING)" if s is None else "'" + s.replace("'", "\\'") + "'",
        "CAST(NULL AS DOUBLE)" if d is None else f"CAST({d} AS DOUBLE)",
        "CAST(NULL AS DECIMAL(10, 2))" if m is None else f"CAST({m} AS DECIMAL(10, 2))",
        "CAST(NULL AS DATE)" if day is None else day,
    ]
    return "(" + ", ".join(parts) + ")"


BATCHES = st.lists(st.lists(VALUE, min_size=1, max_size=8), min_size=1, max_size=3)


def table_and_probes(
    tmp_path_factory: pytest.TempPathFactory,
    batches: list[list[tuple[Any, ...]]],
    data: st.DataObject,
) -> ShimSession:
    """A session with the table ``t`` (a data file per batch, then some of its rows marked
    deleted) and the rows to look up in ``probe``: some of the table's (each may have
    copies), some maybe not."""
    inserted = [value for batch in batches for value in batch]
    probes = data.draw(st.lists(st.one_of(st.sampled_from(inserted), VALUE), min_size=1))
    deleted = data.draw(st.lists(st.sampled_from(inserted), max_size=3))
    session = indexed_session(tmp_path_factory.mktemp("w"))
    session.sql(
        f"CREATE TABLE t ({COLUMNS}) USING delta"
        " TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')"
    )
    session.sql(f"CREATE TABLE probe ({COLUMNS}) USING delta")
    for batch in batches:
        session.sql(f"INSERT INTO t VALUES {', '.join(literal(v) for v in batch)}")
    session.sql(f"INSERT INTO probe VALUES {', '.join(literal(v) for v in probes)}")
    for value in deleted:  # so that lookups meet deletion vectors
        session.sql(f"DELETE FROM t WHERE (k, s, d, m, day) <=> {literal(value)}")
    return session


def assert_found_through_the_index(session: ShimSession, lookup: str) -> None:
    through_index, read = indexed_and_read(session, lookup)
    assert through_index == read
    if session.sql("DESCRIBE DETAIL t").collect()[0]["numFiles"]:
        assert index_files(session), "the lookup went through the index"


@settings(max_examples=25, deadline=None)
@given(batches=BATCHES, data=st.data())
def test_lookups_through_the_index_equal_reading_the_table(
    tmp_path_factory: pytest.TempPathFactory,
    batches: list[list[tuple[Any, ...]]],
    data: st.DataObject,
) -> None:
    assert_found_through_the_index(table_and_probes(tmp_path_factory, batches, data), LOOKUP)


@settings(max_examples=25, deadline=None)
@given(batches=BATCHES, data=st.data())
def test_lookups_by_some_columns_equal_reading_the_table(
    tmp_path_factory: pytest.TempPathFactory,
    batches: list[list[tuple[Any, ...]]],
    data: st.DataObject,
) -> None:
    """A semi join on some of the columns: the rows found through an index of those
    columns, with their other columns read at the positions found, are the rows a read
    of the table finds (copies, NULLs, rows marked deleted, rows that differ only in the
    columns not looked up)."""
    names = ["k", "s", "d", "m", "day"]
    looked_up = data.draw(
        st.lists(st.sampled_from(names), min_size=1, max_size=len(names) - 1, unique=True)
    )
    session = table_and_probes(tmp_path_factory, batches, data)
    on = " AND ".join(f"p.{n} <=> t.{n}" for n in reversed(looked_up))  # any order
    lookup = (
        "SELECT t.k, t.s, t.d, t.m, t.day, count(*) AS copies"
        f" FROM t SEMI JOIN probe AS p ON {on} GROUP BY t.k, t.s, t.d, t.m, t.day"
    )
    assert_found_through_the_index(session, lookup)


def test_an_index_of_some_columns_is_kept_beside_the_full_one(tmp_path: Path) -> None:
    """Each set of looked-up columns has an index file of its own per data file; VACUUM
    keeps both, as both are of the table's schema."""
    session = indexed_session(tmp_path / "w")
    session.sql(
        "CREATE TABLE t (k INT, v STRING) USING delta"
        " TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')"
    )
    session.sql("INSERT INTO t SELECT CAST(id AS INT), CAST(id * 2 AS STRING) FROM range(30)")
    session.sql("CREATE TABLE probe (k INT, v STRING) USING delta")
    session.sql("INSERT INTO probe VALUES (3, '6'), (4, 'no'), (NULL, NULL)")
    by_key = "SELECT t.* FROM t SEMI JOIN probe AS p ON t.k <=> p.k"
    by_row = "SELECT t.* FROM t SEMI JOIN probe AS p ON t.k <=> p.k AND t.v <=> p.v"
    rows = session.sql(by_key).collect()
    assert sorted((row["k"], row["v"]) for row in rows) == [(3, "6"), (4, "8")]
    assert [(row["k"], row["v"]) for row in session.sql(by_row).collect()] == [(3, "6")]
    assert len(index_files(session)) == 2
    session.conf.set("spark.databricks.delta.retentionDurationCheck.enabled", "false")
    session.sql("VACUUM t RETAIN 0 HOURS")
    assert len(index_files(session)) == 2


def test_a_refresh_merge_finds_its_rows_through_the_index(tmp_path: Path) -> None:
    """The MERGE a refresh runs (delete the copies of changed rows, insert the new copies)
    marks exactly the rows a read of the table finds."""
    session = indexed_session(tmp_path / "w")
    session.sql(
        "CREATE TABLE t (k INT, v STRING) USING delta"
        " TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')"
    )
    session.sql(
        "INSERT INTO t SELECT CAST(id % 100 AS INT), CAST(id % 7 AS STRING) FROM range(700)"
    )
    session.sql("CREATE TABLE twin (k INT, v STRING) USING delta")
    session.sql("INSERT INTO twin SELECT * FROM t")
    generator = random.Random(3)
    for _ in range(4):
        keys = generator.sample(range(120), 20)
        values = ", ".join(f"({k}, '{k % 7}', {str(k % 2 == 0).lower()})" for k in keys)
        for name in ("t", "twin"):
            session.sql(
                f"MERGE INTO {name} USING (SELECT * FROM VALUES {values} AS s(k, v, remove)) AS s"
                f" ON s.remove AND ({name}.k <=> s.k AND {name}.v <=> s.v)"
                " WHEN MATCHED THEN DELETE WHEN NOT MATCHED AND NOT s.remove THEN INSERT (k, v)"
                " VALUES (s.k, s.v)"
            )
        assert session_rows(session, "SELECT * FROM t") == session_rows(
            session, "SELECT * FROM twin"
        )
    assert index_files(session)


def test_damaged_or_foreign_indexes_are_built_again(tmp_path: Path) -> None:
    session = indexed_session(tmp_path / "w")
    session.sql(
        f"CREATE TABLE t ({COLUMNS}) USING delta"
        " TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')"
    )
    session.sql(f"CREATE TABLE probe ({COLUMNS}) USING delta")
    session.sql(
        "INSERT INTO t SELECT CAST(id AS INT), 'x', 1.0, 2.00, DATE'2024-01-01' FROM range(50)"
    )
    session.sql(
        "INSERT INTO probe SELECT CAST(id AS INT), 'x', 1.0, 2.00, DATE'2024-01-01'"
        " FROM range(0, 100, 3)"
    )
    expected = session_rows(session, LOOKUP)
    (index,) = index_files(session)
    row_index._opened.clear()  # as a new process finds it
    index.write_bytes(index.read_bytes()[:-8])  # cut short
    assert session_rows(session, LOOKUP) == expected
    assert index.stat().st_size > 0
    assert index_files(session) == [index]
    row_index._opened.clear()
    foreign = index.with_name(index.name.replace(row_index.TAG, "rows-v0-duckdb-0.0.0"))
    index.rename(foreign)
    assert session_rows(session, LOOKUP) == expected
    assert index.exists()  # built again under this tag
    session.conf.set("spark.databricks.delta.retentionDurationCheck.enabled", "false")
    session.sql("VACUUM t RETAIN 0 HOURS")
    assert index_files(session) == [index]  # the other tag's file is gone, this one stays


def test_a_column_added_later_gets_indexes_of_its_own(tmp_path: Path) -> None:
    """Old files read the new column as NULL: their rows hash otherwise than before, so
    the index of the old schema is not used (it would find nothing)."""
    session = indexed_session(tmp_path / "w")
    session.sql(
        "CREATE TABLE t (k INT) USING delta TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')"
    )
    session.sql("INSERT INTO t SELECT CAST(id AS INT) FROM range(20)")
    session.sql("CREATE TABLE probe (k INT, extra STRING) USING delta")
    session.sql("INSERT INTO probe SELECT CAST(id AS INT), NULL FROM range(0, 20, 2)")
    lookup = "SELECT t.* FROM t SEMI JOIN probe AS p ON t.k <=> p.k"
    assert sum(session_rows(session, lookup).values()) == 10
    # A column added by another writer (delta-rs), behind the session's back.
    DeltaTable(str(location_of(session, "t"))).alter.add_columns(
        [Field("extra", "string", nullable=True)]
    )
    lookup = "SELECT t.* FROM t SEMI JOIN probe AS p ON t.k <=> p.k AND t.extra <=> p.extra"
    through_index, read = indexed_and_read(session, lookup)
    assert through_index == read
    assert sum(read.values()) == 10
    assert len(index_files(session)) == 2  # one per schema
    session.conf.set("spark.databricks.delta.retentionDurationCheck.enabled", "false")
    session.sql("VACUUM t RETAIN 0 HOURS")
    assert len(index_files(session)) == 1  # the old schema's is no longer read


def test_a_search_finds_every_copy_of_a_value() -> None:
    """Each probe's matches are every entry of its hash, however many (one, none, or more
    than the search steps through before it searches for the end of the run)."""
    generator = np.random.default_rng(7)
    for _ in range(50):
        hashes = np.sort(generator.integers(0, 12, generator.integers(0, 80)).astype(np.uint64))
        probes = generator.integers(0, 15, generator.integers(1, 20)).astype(np.uint64)
        index = row_index.FileIndex(
            hashes, np.zeros(hashes.size, np.uint32), np.arange(hashes.size, dtype=np.uint32)
        )
        hashed = row_index.RowHashes(probes, np.zeros(probes.size, np.uint32))
        found = row_index.matches(index, hashed.sort())
        columns = (found.column("probe").to_pylist(), found.column("position").to_pylist())
        pairs = zip(*columns, strict=True)
        expected = [
            (probe, int(position))
            for probe, value in enumerate(probes)
            for position in np.nonzero(hashes == value)[0]
        ]
        assert sorted(pairs) == sorted(expected)


def test_a_table_too_small_for_the_index_is_read(tmp_path: Path) -> None:
    """Below ``sparkshim.rowIndex.minRows`` stored rows a semi join reads the table (no
    index is built); from that many on it goes through the index; both answer alike."""
    session = ShimSession(warehouse=str(tmp_path / "w"))
    session.conf.set(ROW_INDEX_MIN_ROWS_CONF, "20")
    session.sql(
        "CREATE TABLE t (k INT, v STRING) USING delta"
        " TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')"
    )
    session.sql("INSERT INTO t SELECT CAST(id AS INT), CAST(id AS STRING) FROM range(19)")
    session.sql("CREATE TABLE probe (k INT) USING delta")
    session.sql("INSERT INTO probe VALUES (3), (18), (19), (NULL)")
    lookup = "SELECT t.* FROM t SEMI JOIN probe AS p ON t.k <=> p.k"
    found = session.sql(lookup).collect()
    assert sorted((row["k"], row["v"]) for row in found) == [(3, "3"), (18, "18")]
    assert not index_files(session)
    session.sql("INSERT INTO t VALUES (19, '19')")
    through_index, read = indexed_and_read(session, lookup)
    assert through_index == read
    assert sum(read.values()) == 3
    assert index_files(session)
    session.conf.set(ROW_INDEX_MIN_ROWS_CONF, "many")
    with pytest.raises(AnalysisException, match=r"rowIndex\.minRows is 'many'.*whole number"):
        session.sql(lookup)


def test_wide_decimals_duckdb_hashes_alike_are_told_apart(tmp_path: Path) -> None:
    """DuckDB hashes a DECIMAL of more than 18 digits (a 128-bit integer) by XOR-ing its
    halves' hashes: -1 and 0 (-0.0001 and 0.0000 at scale 4) hash alike. A dynamic
    table's refresh that removed the -0.0001 row found the 0.0000 row instead."""
    from dyntables import DynamicTables

    dt = DynamicTables(warehouse=tmp_path / "warehouse")
    dt.sql("CREATE TABLE s (id INT, d DECIMAL(20, 4), n DECIMAL(38, 0))")
    dt.sql("INSERT INTO s VALUES (1, 0.0000, 0), (2, -0.0001, -1), (3, 1.5, 7)")
    for name, query in {
        "ds": "SELECT DISTINCT d FROM s",
        "ns": "SELECT DISTINCT n FROM s",
    }.items():
        dt.sql(
            f"CREATE DYNAMIC TABLE {name} TARGET_LAG = '1 minute' REFRESH_MODE = INCREMENTAL"
            f" AS {query}"
        )
    dt.sql("DELETE FROM s WHERE id = 2")
    for name, query in (("ds", "SELECT DISTINCT d FROM s"), ("ns", "SELECT DISTINCT n FROM s")):
        assert dt.sql(f"ALTER DYNAMIC TABLE {name} REFRESH").collect()[0].action == "INCREMENTAL"
        held = sorted(tuple(row) for row in dt.sql(f"SELECT * FROM {name}").collect())
        assert held == sorted(tuple(row) for row in dt.sql(query).collect()), name


def test_values_duckdb_hashes_alike_get_different_row_hashes() -> None:
    """-1 and 0 of a DECIMAL of more than 18 digits (DuckDB's hash of a 128-bit integer
    XORs its halves' hashes), alone or inside a nested value, get different row hashes."""
    import duckdb
    import pyarrow as pa
    from sqlglot import exp

    wide = pa.decimal128(20, 4)
    rows = pa.table(
        {
            "d": pa.array([-1, 0], pa.int64()).cast(pa.decimal128(38, 0)),
            "w": pa.array(["-0.0001", "0.0000"]).cast(wide),
            "st": pa.array([{"a": "-0.0001"}, {"a": "0.0000"}]).cast(pa.struct([("a", wide)])),
            "xs": pa.array([["-0.0001"], ["0.0000"]]).cast(pa.list_(wide)),
        }
    )
    connection = duckdb.connect()
    connection.register("rows", rows)
    for field in rows.schema:
        first, second = row_index.hash_columns([(exp.column(field.name), field.type)])
        hashed = connection.sql(
            f"SELECT {first.sql('duckdb')}, {second.sql('duckdb')} FROM rows"
        ).fetchall()
        assert hashed[0] != hashed[1], field.name
