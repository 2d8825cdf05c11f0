"""UPDATE, DELETE and MERGE on the shim: hand-computed results, Delta's change data feed,
and a model-based property test against plain Python."""

from __future__ import annotations

from collections import Counter
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.errors import AnalysisException, ParseException

from sparkshim.session import ShimSession

pytestmark = pytest.mark.embedded


@pytest.fixture
def spark(tmp_path: Path) -> ShimSession:
    session = ShimSession(warehouse=tmp_path / "warehouse")
    session.sql(
        "CREATE TABLE t (id INT, name STRING, qty BIGINT)"
        " TBLPROPERTIES (delta.enableChangeDataFeed = true)"
    )
    session.sql("INSERT INTO t VALUES (1, 'a', 10), (1, 'a', 10), (2, 'b', 20), (3, NULL, NULL)")
    return session


def rows(spark: ShimSession, sql: str = "SELECT * FROM t") -> Counter[tuple[object, ...]]:
    return Counter(tuple(row) for row in spark.sql(sql).collect())


def session_with_table(tmp_path: Path, table: str, vectors: bool) -> ShimSession:
    """A session with ``table`` (its name and columns) created with its change feed on and
    deletion vectors on or off."""
    spark = ShimSession(warehouse=tmp_path / "warehouse")
    spark.sql(
        f"CREATE TABLE {table} TBLPROPERTIES (delta.enableChangeDataFeed = true,"
        f" delta.enableDeletionVectors = {str(vectors).lower()})"
    )
    return spark


def changes_since(spark: ShimSession, version: int) -> Counter[tuple[object, ...]]:
    return rows(spark, f"SELECT id, name, qty, _change_type FROM table_changes('t', {version})")


def test_update_changes_every_copy_and_records_pre_and_post_images(spark: ShimSession) -> None:
    spark.sql("UPDATE t SET qty = qty + 1, name = upper(name) WHERE id = 1")
    assert rows(spark) == Counter({(1, "A", 11): 2, (2, "b", 20): 1, (3, None, None): 1})
    assert changes_since(spark, 2) == Counter(
        {(1, "a", 10, "update_preimage"): 2, (1, "A", 11, "update_postimage"): 2}
    )


def test_the_change_feed_of_an_update_reads_binary_columns(spark: ShimSession) -> None:
    """delta-rs reads a BINARY column of a change feed as an Arrow view type: it is still
    Spark's BINARY (a dynamic table over such a column refreshes incrementally from it)."""
    spark.sql(
        "CREATE TABLE b (id INT, raw BINARY) TBLPROPERTIES (delta.enableChangeDataFeed = true)"
    )
    spark.sql("INSERT INTO b VALUES (1, X'01'), (2, NULL)")
    spark.sql("UPDATE b SET raw = X'0203' WHERE id = 1")
    feed = spark.sql("SELECT id, raw, _change_type FROM table_changes('b', 2)")
    assert feed.schema["raw"].dataType.simpleString() == "binary"
    found = Counter((row[0], bytes(row[1]), row[2]) for row in feed.collect())
    assert found == Counter(
        {(1, b"\x01", "update_preimage"): 1, (1, b"\x02\x03", "update_postimage"): 1}
    )


def test_update_with_null_keys_and_no_where(spark: ShimSession) -> None:
    spark.sql("UPDATE t SET qty = coalesce(qty, 0) * 2")
    assert rows(spark) == Counter({(1, "a", 20): 2, (2, "b", 40): 1, (3, None, 0): 1})


def test_delete_uses_spark_semantics_for_null_predicates(spark: ShimSession) -> None:
    spark.sql("DELETE FROM t WHERE name <> 'b'")  # NULL <> 'b' is NULL: row 3 stays
    assert rows(spark) == Counter({(2, "b", 20): 1, (3, None, None): 1})
    assert changes_since(spark, 2) == Counter({(1, "a", 10, "delete"): 2})


def test_delete_everything(spark: ShimSession) -> None:
    spark.sql("DELETE FROM t")
    assert rows(spark) == Counter()


def test_merge_with_every_clause_kind(spark: ShimSession) -> None:
    spark.sql("CREATE TABLE s (id INT, name STRING, qty BIGINT)")
    spark.sql("INSERT INTO s VALUES (1, 'one', 1), (2, 'two', 2), (4, 'four', 4), (5, 'five', 5)")
    spark.sql(
        """
        MERGE INTO t AS tgt USING s AS src ON tgt.id = src.id
        WHEN MATCHED AND src.id = 2 THEN DELETE
        WHEN MATCHED THEN UPDATE SET tgt.qty = tgt.qty + src.qty
        WHEN NOT MATCHED AND src.id = 5 THEN INSERT (id, name) VALUES (src.id, 'new five')
        WHEN NOT MATCHED THEN INSERT *
        WHEN NOT MATCHED BY SOURCE THEN UPDATE SET name = 'orphan'
        """
    )
    assert rows(spark) == Counter(
        {
            (1, "a", 11): 2,
            (3, "orphan", None): 1,
            (4, "four", 4): 1,
            (5, "new five", None): 1,
        }
    )


def test_merge_from_a_subquery_with_update_set_star(spark: ShimSession) -> None:
    spark.sql(
        "MERGE INTO t USING (SELECT 2 AS id, 'B' AS name, CAST(99 AS BIGINT) AS qty) AS u"
        " ON t.id = u.id WHEN MATCHED THEN UPDATE SET *"
    )
    assert rows(spark)[(2, "B", 99)] == 1


def test_merge_source_reading_the_target_sees_it_as_before(spark: ShimSession) -> None:
    # Only a DELETE clause, a null-safe match, and a source that reads the target: every
    # row of t is deleted and re-inserted with qty + 1 (the source computed once, first).
    before = rows(spark)
    spark.sql(
        "MERGE INTO t USING (SELECT DISTINCT id, name, qty, 'delete' AS kind FROM t"
        " UNION ALL SELECT id, name, qty + 1, 'insert' FROM t) AS s"
        " ON s.kind = 'delete' AND t.id <=> s.id AND t.name <=> s.name AND t.qty <=> s.qty"
        " WHEN MATCHED THEN DELETE"
        " WHEN NOT MATCHED AND s.kind = 'insert' THEN INSERT (id, name, qty)"
        " VALUES (s.id, s.name, s.qty)"
    )
    expected = Counter()
    for (id_, name, qty), copies in before.items():
        expected[(id_, name, None if qty is None else qty + 1)] += copies
    assert rows(spark) == expected


@pytest.mark.parametrize("vectors", [False, True])
def test_merge_clauses_that_set_values_of_other_types_combine(
    tmp_path: Path, vectors: bool
) -> None:
    # The matched clause sets qty from a BIGINT column, the not-matched-by-source one from
    # an INT literal, and a column no clause sets stays: the change rows of both kinds go
    # to one commit (they failed to combine and the MERGE was refused).
    spark = session_with_table(tmp_path, "t (id INT, name STRING, qty BIGINT)", vectors)
    spark.sql("INSERT INTO t VALUES (1, 'a', 10), (2, 'b', 20), (3, NULL, 30), (4, 'd', 40)")
    spark.sql("CREATE TABLE s (id INT, qty BIGINT)")
    spark.sql("INSERT INTO s VALUES (1, 100), (5, 500)")
    spark.sql(
        "MERGE INTO t USING s ON t.id = s.id"
        " WHEN MATCHED THEN UPDATE SET qty = s.qty"
        " WHEN NOT MATCHED THEN INSERT (id, qty) VALUES (s.id, s.qty)"
        " WHEN NOT MATCHED BY SOURCE AND t.qty > 25 THEN UPDATE SET qty = -1"
        " WHEN NOT MATCHED BY SOURCE THEN DELETE"
    )
    assert rows(spark) == Counter(
        {(1, "a", 100): 1, (3, None, -1): 1, (4, "d", -1): 1, (5, None, 500): 1}
    )


def test_several_matches_count_every_matched_pair_unless_every_clause_is_a_matched_one(
    spark: ShimSession,
) -> None:
    # As Delta: a MERGE of MATCHED clauses only checks the pairs some clause's condition
    # holds for; with a NOT MATCHED clause too, every pair the ON condition matches.
    spark.sql("CREATE TABLE s (id INT, kind STRING)")
    spark.sql("INSERT INTO s VALUES (2, 'x'), (2, 'y'), (8, 'x')")
    spark.sql("MERGE INTO t USING s ON t.id = s.id WHEN MATCHED AND s.kind = 'x' THEN DELETE")
    assert (2, "b", 20) not in rows(spark)
    spark.sql("INSERT INTO t VALUES (2, 'b', 20)")
    before = rows(spark)
    with pytest.raises(AnalysisException, match="MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW"):
        spark.sql(
            "MERGE INTO t USING s ON t.id = s.id WHEN MATCHED AND s.kind = 'x' THEN DELETE"
            " WHEN NOT MATCHED THEN INSERT (id, name) VALUES (s.id, s.kind)"
        )
    assert rows(spark) == before


def test_an_unconditional_matched_delete_beside_other_clauses_may_match_many_times(
    spark: ShimSession,
) -> None:
    # Delta checks that one source row at most matches each target row unless the only
    # MATCHED clause is an unconditional DELETE, whatever the other clauses.
    spark.sql("CREATE TABLE s (id INT)")
    spark.sql("INSERT INTO s VALUES (2), (2), (7)")
    spark.sql(
        "MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN DELETE"
        " WHEN NOT MATCHED THEN INSERT (id, name) VALUES (s.id, 'new')"
        " WHEN NOT MATCHED BY SOURCE AND t.id = 3 THEN UPDATE SET qty = 0"
    )
    assert rows(spark) == Counter({(1, "a", 10): 2, (3, None, 0): 1, (7, "new", None): 1})


@pytest.mark.parametrize(
    ("clauses", "error_class"),
    [
        (
            "WHEN MATCHED THEN DELETE WHEN MATCHED AND s.id > 1 THEN UPDATE SET qty = 1",
            "NON_LAST_MATCHED_CLAUSE_OMIT_CONDITION",
        ),
        (
            "WHEN NOT MATCHED THEN INSERT * WHEN NOT MATCHED AND s.id > 1 THEN INSERT *",
            "NON_LAST_NOT_MATCHED_BY_TARGET_CLAUSE_OMIT_CONDITION",
        ),
        (
            "WHEN NOT MATCHED BY SOURCE THEN DELETE"
            " WHEN NOT MATCHED BY SOURCE AND t.id > 1 THEN UPDATE SET qty = 1",
            "NON_LAST_NOT_MATCHED_BY_SOURCE_CLAUSE_OMIT_CONDITION",
        ),
    ],
)
def test_a_clause_without_condition_before_another_of_its_kind_is_spark_s_parse_error(
    spark: ShimSession, clauses: str, error_class: str
) -> None:
    spark.sql("CREATE TABLE s (id INT, name STRING, qty BIGINT)")
    spark.sql("INSERT INTO s VALUES (2, 'x', 1), (9, 'y', 2)")
    before = rows(spark)
    with pytest.raises(ParseException, match=error_class):
        spark.sql(f"MERGE INTO t USING s ON t.id = s.id {clauses}")
    assert rows(spark) == before


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE t SET qty = qty + 1, qty = 2 WHERE id = 1",
        "UPDATE t SET name = 'x', NAME = 'y'",
        "MERGE INTO t USING t AS s ON t.id = s.id WHEN MATCHED THEN UPDATE SET qty = 1, qty = 2",
    ],
)
def test_a_column_set_twice_is_delta_s_conflict_error(spark: ShimSession, statement: str) -> None:
    before = rows(spark)
    with pytest.raises(AnalysisException, match=r"DELTA_CONFLICT_SET_COLUMN.*\[`(qty|name)`\]"):
        spark.sql(statement)
    assert rows(spark) == before


def test_merge_refuses_several_source_rows_for_one_target_row(spark: ShimSession) -> None:
    spark.sql("CREATE TABLE s (id INT)")
    spark.sql("INSERT INTO s VALUES (2), (2)")
    before = rows(spark)
    with pytest.raises(AnalysisException, match="MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW"):
        spark.sql("MERGE INTO t USING s ON t.id = s.id WHEN MATCHED AND s.id > 0 THEN DELETE")
    assert rows(spark) == before
    # As in Delta, an unconditional DELETE as the only matched clause may match many times.
    spark.sql("MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN DELETE")
    assert rows(spark) == Counter({k: n for k, n in before.items() if k[0] != 2})


Row_ = tuple[int, int | None]
_statements = st.one_of(
    st.tuples(
        st.just("insert"),
        st.lists(st.tuples(st.integers(0, 4), st.none() | st.integers(0, 3)), max_size=4),
    ),
    st.tuples(st.just("update"), st.integers(0, 4)),
    st.tuples(st.just("delete"), st.integers(0, 4)),
    st.tuples(st.just("merge"), st.lists(st.integers(0, 5), max_size=3, unique=True)),
)


def apply_to_model(model: Counter[Row_], statement: tuple[str, object]) -> Counter[Row_]:
    kind, argument = statement
    result: Counter[Row_] = Counter()
    if kind == "insert":
        result = model + Counter(argument)  # type: ignore[arg-type]
    elif kind == "update":  # UPDATE m SET v = coalesce(v, 0) + 1 WHERE k = argument
        for (k, v), n in model.items():
            result[(k, (v or 0) + 1) if k == argument else (k, v)] += n
    elif kind == "delete":  # DELETE FROM m WHERE v > argument
        for (k, v), n in model.items():
            if not (v is not None and v > argument):  # type: ignore[operator]
                result[(k, v)] += n
    else:  # MERGE: matched keys get v = -1, unmatched source keys are inserted with v NULL
        keys = set(argument)  # type: ignore[arg-type]
        for (k, v), n in model.items():
            result[(k, -1) if k in keys else (k, v)] += n
        existing = {k for k, _ in model}
        for key in sorted(keys - existing):
            result[(key, None)] += 1
    return +result


def to_sql(statement: tuple[str, object]) -> str | None:
    kind, argument = statement
    if kind == "insert":
        values = ", ".join(f"({k}, {'NULL' if v is None else v})" for k, v in argument)  # type: ignore[attr-defined]
        return f"INSERT INTO m VALUES {values}" if values else None
    if kind == "update":
        return f"UPDATE m SET v = coalesce(v, 0) + 1 WHERE k = {argument}"
    if kind == "delete":
        return f"DELETE FROM m WHERE v > {argument}"
    keys = (
        " UNION ALL ".join(f"SELECT {key} AS k" for key in argument) or "SELECT 1 AS k WHERE false"
    )  # type: ignore[attr-defined]
    return (
        f"MERGE INTO m USING ({keys}) AS s ON m.k = s.k"
        " WHEN MATCHED THEN UPDATE SET v = -1 WHEN NOT MATCHED THEN INSERT (k) VALUES (s.k)"
    )


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(statements=st.lists(_statements, min_size=1, max_size=6))
def test_random_dml_matches_a_python_model(
    tmp_path: Path, statements: list[tuple[str, object]]
) -> None:
    spark = ShimSession(warehouse=tmp_path / f"w{abs(hash(str(statements)))}")
    spark.sql("CREATE TABLE m (k INT, v INT)")
    model: Counter[Row_] = Counter()
    for statement in statements:
        sql = to_sql(statement)
        if sql is not None:
            spark.sql(sql)
        model = apply_to_model(model, statement)
    assert Counter(tuple(row) for row in spark.sql("SELECT k, v FROM m").collect()) == model


def test_insert_replace_where_swaps_the_matching_rows_in_one_commit(spark: ShimSession) -> None:
    spark.sql("INSERT INTO t REPLACE WHERE id = 1 SELECT 1, 'new', CAST(5 AS BIGINT)")
    assert rows(spark) == Counter({(1, "new", 5): 1, (2, "b", 20): 1, (3, None, None): 1})
    assert changes_since(spark, 2) == Counter(
        {(1, "a", 10, "delete"): 2, (1, "new", 5, "insert"): 1}
    )
    with pytest.raises(AnalysisException, match="REPLACE_WHERE_MISMATCH"):
        spark.sql("INSERT INTO t REPLACE WHERE id = 1 SELECT 2, 'x', CAST(1 AS BIGINT)")
    assert rows(spark)[(2, "x", 1)] == 0


def test_add_columns_reads_null_for_earlier_rows_and_keeps_the_change_feed(
    tmp_path: Path,
) -> None:
    spark = session_with_table(tmp_path, "src (k INT, g STRING)", vectors=True)
    spark.sql("INSERT INTO src VALUES (1, 'a'), (2, 'b')")
    spark.sql("ALTER TABLE src ADD COLUMN extra INT")
    spark.sql("ALTER TABLE src ADD COLUMNS (amount DECIMAL(10, 2) COMMENT 'money', note STRING)")
    assert spark.table("src").columns == ["k", "g", "extra", "amount", "note"]
    assert rows(spark, "SELECT * FROM src") == Counter(
        {(1, "a", None, None, None): 1, (2, "b", None, None, None): 1}
    )
    spark.sql("INSERT INTO src VALUES (3, 'c', 7, 1.5, 'z')")
    spark.sql("UPDATE src SET extra = 9 WHERE k = 1")
    spark.sql("DELETE FROM src WHERE k = 2")
    assert rows(spark, "SELECT k, extra, amount FROM src") == Counter(
        {(1, 9, None): 1, (3, 7, Decimal("1.50")): 1}
    )
    assert rows(spark, "SELECT k, extra, _change_type FROM table_changes('src', 2)") == Counter(
        {(3, 7, "insert"): 1, (1, None, "update_preimage"): 1, (1, 9, "update_postimage"): 1}
        | {(2, None, "delete"): 1}
    )
    before = rows(spark, "SELECT * FROM src")
    with pytest.raises(AnalysisException, match="FIELDS_ALREADY_EXISTS"):
        spark.sql("ALTER TABLE src ADD COLUMN K BIGINT")
    with pytest.raises(AnalysisException, match="NOT NULL in ALTER TABLE ADD COLUMNS"):
        spark.sql("ALTER TABLE src ADD COLUMN z INT NOT NULL")
    assert rows(spark, "SELECT * FROM src") == before
    assert spark.table("src").columns == ["k", "g", "extra", "amount", "note"]


@pytest.mark.parametrize("vectors", [False, True])
def test_truncate_deletes_every_row_in_one_commit_with_its_change_feed(
    tmp_path: Path, vectors: bool
) -> None:
    spark = session_with_table(tmp_path, "t (id INT, name STRING)", vectors)
    spark.sql("INSERT INTO t VALUES (1, 'a'), (1, 'a'), (2, NULL)")
    spark.sql("TRUNCATE TABLE t")
    assert rows(spark) == Counter()
    assert rows(spark, "SELECT id, name, _change_type FROM table_changes('t', 2)") == Counter(
        {(1, "a", "delete"): 2, (2, None, "delete"): 1}
    )
    spark.sql("INSERT INTO t VALUES (3, 'c')")
    with pytest.raises(AnalysisException, match="DELTA_TRUNCATE_TABLE_PARTITION_NOT_SUPPORTED"):
        spark.sql("TRUNCATE TABLE t PARTITION (id = 3)")
    assert rows(spark) == Counter({(3, "c"): 1})


@pytest.mark.parametrize(
    "statement",
    [
        "DELETE FROM t WHERE id = 99",  # refused even where it would touch no row
        "UPDATE t SET qty = 0",
        "TRUNCATE TABLE t",
        "INSERT OVERWRITE t VALUES (9, 'z', 90)",
        "INSERT INTO t REPLACE WHERE id = 1 VALUES (1, 'y', 11)",
        "MERGE INTO t USING (SELECT 1 AS id) s ON t.id = s.id WHEN MATCHED THEN DELETE",
        "MERGE INTO t USING (SELECT 9 AS id) s ON t.id = s.id"
        " WHEN NOT MATCHED BY SOURCE THEN UPDATE SET qty = 0",
    ],
)
def test_an_append_only_table_refuses_what_removes_rows(spark: ShimSession, statement: str) -> None:
    spark.sql("ALTER TABLE t SET TBLPROPERTIES (delta.appendOnly = true)")
    before, version = rows(spark), _latest_version(spark)
    with pytest.raises(AnalysisException, match=r"DELTA_CANNOT_MODIFY_APPEND_ONLY.*appendOnly"):
        spark.sql(statement)
    assert (rows(spark), _latest_version(spark)) == (before, version)


def test_an_append_only_table_takes_appends(spark: ShimSession) -> None:
    spark.sql("ALTER TABLE t SET TBLPROPERTIES (delta.appendOnly = true)")
    spark.sql("INSERT INTO t VALUES (4, 'd', 40)")
    spark.sql(
        "MERGE INTO t USING (SELECT 5 AS id) s ON t.id = s.id"
        " WHEN NOT MATCHED THEN INSERT (id, name, qty) VALUES (s.id, 'e', 50)"
    )
    assert rows(spark, "SELECT id FROM t WHERE id > 3") == Counter([(4,), (5,)])
    spark.sql("ALTER TABLE t SET TBLPROPERTIES (delta.appendOnly = false)")
    spark.sql("DELETE FROM t WHERE id > 3")
    assert rows(spark, "SELECT id FROM t WHERE id > 3") == Counter()


@pytest.mark.parametrize(
    ("properties", "message"),
    [
        ("delta.appendOnly = 'maybe'", "must be true or false, not 'maybe'"),
        ("delta.checkpointInterval = 'x'", "must be a whole number of at least 1"),
        ("'delta.minReaderVersion' = '3'", "protocol or layout"),  # delta-rs panicked
        ("'delta.columnMapping.mode' = 'name'", "protocol or layout"),
    ],
)
def test_table_properties_the_table_cannot_take_change_nothing(
    spark: ShimSession, properties: str, message: str
) -> None:
    before, version = rows(spark), _latest_version(spark)
    with pytest.raises(Exception, match=message) as refused:
        spark.sql(f"ALTER TABLE t SET TBLPROPERTIES ({properties})")
    assert "Delta" not in type(refused.value).__name__  # the engine's error, not delta-rs's
    assert (rows(spark), _latest_version(spark)) == (before, version)
    spark.sql("INSERT INTO t VALUES (4, 'd', 40)")  # still writable
    if "=" in properties and "'" not in properties.split("=")[0]:
        with pytest.raises(AnalysisException, match=message):
            spark.sql(f"CREATE TABLE u (a INT) TBLPROPERTIES ({properties})")


def _latest_version(spark: ShimSession) -> int:
    return int(spark.sql("DESCRIBE HISTORY t LIMIT 1").collect()[0]["version"])
