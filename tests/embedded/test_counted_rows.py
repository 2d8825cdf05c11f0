"""sparkshim's native write of a counted change (``sparkshim.counted_rows``): each row value
with the copies the table gains or loses, applied in one commit that marks the lost copies
in deletion vectors and writes the gained ones.

Oracles: the multiset arithmetic itself (the table before, plus and minus the counts),
delta-rs's own query engine reading the result (an independent reader of the vectors),
and the change data feed holding exactly the rows gained and lost."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from delta_readers import delta_rs_rows, location_of, multiset, session_rows

from dyntables import DynamicTables
from dyntables.errors import CannotRefreshIncrementallyError
from sparkshim import counted_rows, row_index
from sparkshim.delta import TableMovedError
from sparkshim.session import ShimSession

pytestmark = pytest.mark.embedded

VECTORS = "'delta.enableDeletionVectors' = 'true', 'delta.enableChangeDataFeed' = 'true'"
SCHEMA = pa.schema([("k", pa.int32()), ("g", pa.string()), ("n", pa.int64())])


@pytest.fixture
def session(tmp_path: Path) -> ShimSession:
    spark = ShimSession(warehouse=str(tmp_path / "warehouse"))
    spark.sql(f"CREATE TABLE t (k INT, g STRING) USING delta TBLPROPERTIES ({VECTORS})")
    # Two files; three copies of (1, 'a'), two of (2, NULL).
    spark.sql("INSERT INTO t VALUES (1, 'a'), (1, 'a'), (2, NULL), (3, 'c')")
    spark.sql("INSERT INTO t VALUES (1, 'a'), (2, NULL), (4, 'd')")
    return spark


def counts(rows: list[tuple[Any, Any, int]]) -> pa.Table:
    return pa.Table.from_pylist([{"k": k, "g": g, "n": n} for k, g, n in rows], schema=SCHEMA)


def table_rows(session: ShimSession) -> Counter[tuple[Any, ...]]:
    return Counter(tuple(row) for row in session.sql("SELECT k, g FROM t").collect())


def data_files(location: Path) -> list[str]:
    """The table's data, change and vector files (its row index is a cache beside them)."""
    found = [p for p in location.rglob("*") if p.suffix in (".parquet", ".bin")]
    return sorted(str(p.relative_to(location)) for p in found)


def written(applied: counted_rows.Applied | None) -> tuple[int, int, bool]:
    """What a counted write says it did: rows inserted, rows deleted, committed."""
    assert applied is not None
    return applied.inserted, applied.deleted, applied.committed


def version(session: ShimSession) -> int:
    return int(session.sql("DESCRIBE HISTORY t LIMIT 1").collect()[0]["version"])


def test_copies_lost_and_gained_in_one_commit(session: ShimSession) -> None:
    before, at = table_rows(session), version(session)
    change = [(1, "a", -2), (2, None, -2), (3, "c", 1), (5, "e", 2), (4, "d", -1)]
    applied = counted_rows.apply(session, "t", counts(change), "n")
    assert written(applied) == (3, 5, True)
    # The commit it names is the one the history lists.
    newest = session.sql("DESCRIBE HISTORY t LIMIT 1").collect()[0]
    assert applied.version == newest["version"]
    assert applied.committed_at is not None
    committed = applied.committed_at.astimezone().replace(tzinfo=None)  # as collect() gives
    assert committed == newest["timestamp"]
    expected = before.copy()
    for k, g, n in change:
        expected[(k, g)] += n
    assert table_rows(session) == +expected
    assert version(session) == at + 1
    location = location_of(session, "t")
    assert delta_rs_rows(location) == session_rows(session, "SELECT * FROM t")
    feed = Counter(
        tuple(row)
        for row in session.sql(
            f"SELECT k, g, _change_type FROM table_changes('t', {at + 1})"
        ).collect()
    )
    assert feed == Counter(
        {
            (1, "a", "delete"): 2,
            (2, None, "delete"): 2,
            (4, "d", "delete"): 1,
            (3, "c", "insert"): 1,
            (5, "e", "insert"): 2,
        }
    )
    history = session.sql("DESCRIBE HISTORY t LIMIT 1").collect()[0]
    assert history["operation"] == "MERGE"
    assert history["operationMetrics"]["numTargetRowsDeleted"] == "5"
    assert history["operationMetrics"]["numTargetRowsInserted"] == "3"


def test_copies_only_gained_are_a_blind_append(session: ShimSession) -> None:
    """Nothing lost: nothing is looked up, and the commit is an append (its change feed is
    its added file, as for an INSERT)."""
    at = version(session)
    applied = counted_rows.apply(session, "t", counts([(7, "g", 2), (1, "a", 1)]), "n")
    assert written(applied) == (3, 0, True)
    history = session.sql("DESCRIBE HISTORY t LIMIT 1").collect()[0]
    assert (history["version"], history["operation"]) == (at + 1, "WRITE")
    feed = Counter(
        tuple(row)
        for row in session.sql(
            f"SELECT k, g, _change_type FROM table_changes('t', {at + 1})"
        ).collect()
    )
    assert feed == Counter({(7, "g", "insert"): 2, (1, "a", "insert"): 1})
    assert written(counted_rows.apply(session, "t", counts([]), "n")) == (0, 0, False)
    assert version(session) == at + 1


def test_a_change_losing_more_copies_than_the_table_holds_writes_nothing(
    session: ShimSession,
) -> None:
    location, at = location_of(session, "t"), version(session)
    files = data_files(location)
    with pytest.raises(counted_rows.RowsNotHeldError, match="3 copies of a row the table holds 2"):
        counted_rows.apply(session, "t", counts([(4, "d", 1), (2, None, -3)]), "n")
    assert version(session) == at
    assert data_files(location) == files


def test_a_value_given_twice_is_refused(session: ShimSession) -> None:
    with pytest.raises(counted_rows.AnalysisException, match="each row value once"):
        counted_rows.apply(session, "t", counts([(1, "a", -1), (1, "a", -1)]), "n")


def test_values_of_other_types_are_converted_exactly_or_not_written(
    session: ShimSession,
) -> None:
    wider = pa.schema([("K", pa.int64()), ("g", pa.string()), ("n", pa.int32())])
    rows = pa.Table.from_pylist([{"K": 3, "g": "c", "n": -1}], schema=wider)
    assert written(counted_rows.apply(session, "t", rows, "n")) == (0, 1, True)
    too_wide = pa.Table.from_pylist([{"K": 2**40, "g": "x", "n": 1}], schema=wider)
    at = version(session)
    assert counted_rows.apply(session, "t", too_wide, "n") is None
    assert version(session) == at


def test_a_table_without_deletion_vectors_is_not_written(session: ShimSession) -> None:
    session.sql("CREATE TABLE plain (k INT, g STRING, n BIGINT) USING delta")
    session.sql("INSERT INTO plain VALUES (1, 'a', 1)")
    assert counted_rows.apply(session, "plain", counts([(1, "a", -1)]), "n") is None
    assert session_rows(session, "SELECT k, g FROM plain") == multiset([{"k": 1, "g": "a"}])


def test_the_commit_is_conditional_on_the_version_read(session: ShimSession) -> None:
    at = version(session)
    session.conf.set("sparkshim.write.expectedTableVersion", str(at - 1))
    with pytest.raises(TableMovedError):
        counted_rows.apply(session, "t", counts([(1, "a", -1)]), "n")
    session.conf.unset("sparkshim.write.expectedTableVersion")
    assert version(session) == at


def test_the_writer_tells_dyntables_the_table_lacks_the_rows(tmp_path: Path) -> None:
    """The embedded engine's writer tells the refresh that the table is not the one the
    change was computed against: ``CannotRefreshIncrementallyError``, on which the
    executor refreshes in full."""
    dt = DynamicTables(warehouse=tmp_path / "warehouse")
    dt.sql(f"CREATE TABLE t (k INT, g STRING) USING delta TBLPROPERTIES ({VECTORS})")
    dt.sql("INSERT INTO t VALUES (1, 'a')")
    dt.session.createDataFrame(counts([(1, "a", -2)]).to_pylist()).createOrReplaceTempView("change")
    writer = dt.engine.table_format.counted_writer  # type: ignore[attr-defined]
    with pytest.raises(CannotRefreshIncrementallyError, match="does not hold the rows"):
        writer(dt.session, "default.t", "change", "n")


def test_a_refresh_takes_its_commit_from_the_counted_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The write names the version it committed: the refresh reads the table's history
    once (its last watermark), not again to find its own commit."""
    dt = DynamicTables(warehouse=tmp_path / "warehouse")
    dt.sql(f"CREATE TABLE t (k INT, g STRING) USING delta TBLPROPERTIES ({VECTORS})")
    dt.sql("INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, NULL)")
    dt.sql("CREATE DYNAMIC TABLE d TARGET_LAG = '1 minute' AS SELECT k, g FROM t WHERE k > 1")
    dt.sql("UPDATE t SET g = 'c' WHERE k = 2")
    fmt = dt.engine.table_format
    read: list[str] = []
    real_history = fmt.history

    def history(session: Any, table: Any, limit: int | None = None) -> Any:
        read.append(table.name)
        return real_history(session, table, limit)

    monkeypatch.setattr(fmt, "history", history)
    refreshed = dt.sql("ALTER DYNAMIC TABLE d REFRESH").collect()[0]
    assert (refreshed.action, refreshed.rows_inserted, refreshed.rows_deleted) == (
        "INCREMENTAL",
        1,
        1,
    )
    assert read.count("d") == 1
    newest = dt.sql("DESCRIBE HISTORY d LIMIT 1").collect()[0]
    recorded = dt.sql(
        "SELECT table_version FROM"
        " TABLE(information_schema.dynamic_table_refresh_history(name => 'd'))"
        " ORDER BY refresh_start_time DESC LIMIT 1"
    ).collect()[0]
    assert recorded.table_version == newest["version"]
    assert Counter(tuple(r) for r in dt.sql("SELECT * FROM d").collect()) == Counter(
        {(2, "c"): 1, (3, None): 1}
    )


TYPED_COLUMNS = (
    "id INT, big BIGINT, price DECIMAL(10, 3), ratio DOUBLE, name STRING, day DATE,"
    " at TIMESTAMP, local TIMESTAMP_NTZ, flag BOOLEAN, raw BINARY, small TINYINT, f FLOAT"
)
TYPED_ROWS = [
    "(1, 10, 1.500, 0.5, 'a', DATE'2024-01-01', TIMESTAMP'2024-01-01 10:00:00',"
    " TIMESTAMP_NTZ'2024-01-01 10:00:00', true, X'01', 1, 1.5)",
    "(2, NULL, NULL, double('NaN'), NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
    "(3, 30, -2.250, -0.0, 'ü', DATE'1999-12-31', TIMESTAMP'1999-12-31 23:59:59.123456',"
    " TIMESTAMP_NTZ'1999-12-31 23:59:59', false, X'', -128, float('-inf'))",
]
FILLER = "INSERT INTO typed SELECT id + 100, id, NULL, NULL, 'f', NULL, NULL, NULL, NULL, NULL,"
FILLER += " NULL, NULL FROM range(40)"


def test_a_filter_over_every_column_type_is_written_by_counted_writes(tmp_path: Path) -> None:
    """Rows of every scalar column type (NULLs, NaN, -0.0, infinities, empty binaries,
    copies) are found again by the counted write: the incremental refresh equals the
    query (40 more rows keep each change below the size that refreshes in full)."""
    dt = DynamicTables(warehouse=tmp_path / "warehouse")
    dt.sql(f"CREATE TABLE typed ({TYPED_COLUMNS})")
    dt.sql(f"INSERT INTO typed VALUES {', '.join(TYPED_ROWS + TYPED_ROWS)}")
    dt.sql(FILLER)
    query = "SELECT * FROM typed WHERE id <> 99"
    dt.sql(f"CREATE DYNAMIC TABLE every_type TARGET_LAG = '1 minute' AS {query}")
    for change in (
        "UPDATE typed SET big = big + 1 WHERE id = 1",
        "UPDATE typed SET name = 'n' WHERE id = 2",
        "DELETE FROM typed WHERE id = 3 AND big IS NOT NULL",
        f"INSERT INTO typed VALUES {TYPED_ROWS[2]}",
        "UPDATE typed SET ratio = double('NaN'), raw = X'02' WHERE id = 3",
        "UPDATE typed SET ratio = 0.0 WHERE id = 3",
    ):
        dt.sql(change)
        refreshed = dt.sql("ALTER DYNAMIC TABLE every_type REFRESH").collect()[0]
        assert refreshed.action == "INCREMENTAL", change
        shown = session_rows(dt.session, "SELECT * FROM every_type")
        assert shown == session_rows(dt.session, query), change


def test_the_index_of_a_written_file_equals_the_one_read_back_from_it(tmp_path: Path) -> None:
    """A counted write that removes rows indexes its new file from the rows it holds; that
    index is the one a lookup would build by reading the file (every scalar type, NULLs,
    NaN, -0.0, copies), so later lookups find the file's rows through it."""
    session = ShimSession(warehouse=str(tmp_path / "warehouse"))
    session.sql(f"CREATE TABLE typed ({TYPED_COLUMNS}) USING delta TBLPROPERTIES ({VECTORS})")
    session.sql(f"INSERT INTO typed VALUES {', '.join(TYPED_ROWS)}")
    rows = session.sql("SELECT * FROM typed ORDER BY id").toArrow()
    location = location_of(session, "typed")
    before = set(location.glob("part-*.parquet"))
    change = rows.append_column("n", pa.array([-1, 1, 1], pa.int64()))  # one lost, two gained
    applied = counted_rows.apply(session, "typed", change, "n")
    assert written(applied) == (2, 1, True)
    (new_file,) = set(location.glob("part-*.parquet")) - before
    (index_file,) = (location / row_index.FOLDER).glob(f"{new_file.name}.*")
    from_rows = row_index.load(index_file)
    assert from_rows is not None
    kept = [np.array(a) for a in (from_rows.first, from_rows.second, from_rows.positions)]
    row_index._opened.clear()  # as a new process finds it
    index_file.unlink()
    # A lookup of the file's rows builds its index again, from the file.
    lost = rows.slice(1).append_column("n", pa.array([-1, -1], pa.int64()))
    assert written(counted_rows.apply(session, "typed", lost, "n")) == (0, 2, True)
    from_file = row_index.load(index_file)
    assert from_file is not None
    read_back = [np.array(a) for a in (from_file.first, from_file.second, from_file.positions)]
    for ours, theirs in zip(kept, read_back, strict=True):
        assert np.array_equal(ours, theirs)
