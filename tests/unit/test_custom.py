"""The statement rewrites of custom incrementalization (seed 003), without an engine."""

from __future__ import annotations

from sqlglot import exp

from dyntables.refresh.custom_sql import change_sources, first_rows, insert_rows
from dyntables.sql.dialect import parse_one, to_spark_sql

COLUMNS = (("id", "int"), ("total", "bigint"))


def test_a_merge_into_an_empty_self_inserts_through_its_first_matching_clause() -> None:
    merge = parse_one(
        "MERGE INTO SELF AS t USING (SELECT id, v FROM s.src) AS u ON t.id = u.id"
        " WHEN MATCHED THEN UPDATE SET t.total = u.v"
        " WHEN NOT MATCHED AND u.v > 0 THEN INSERT (id, total) VALUES (u.id, u.v)"
        " WHEN NOT MATCHED THEN INSERT (id) VALUES (u.id)"
        " WHEN NOT MATCHED BY SOURCE THEN DELETE"
    )
    assert to_spark_sql(first_rows(merge, COLUMNS)) == (
        "SELECT CAST(u.id AS INT) AS `id`, CAST(u.v AS BIGINT) AS `total`"
        " FROM (SELECT id, v FROM s.src) AS u WHERE COALESCE((u.v > 0), FALSE)"
        " UNION ALL SELECT CAST(u.id AS INT) AS `id`, CAST(NULL AS BIGINT) AS `total`"
        " FROM (SELECT id, v FROM s.src) AS u WHERE NOT COALESCE((u.v > 0), FALSE)"
    )


def test_insert_rows_follow_the_column_list() -> None:
    insert = parse_one("INSERT INTO SELF (total, id) SELECT v, id FROM s.src")
    assert isinstance(insert, exp.Insert)
    assert to_spark_sql(insert_rows(insert, COLUMNS)) == (
        "SELECT CAST(i.__dt_c1 AS INT) AS `id`, CAST(i.__dt_c0 AS BIGINT) AS `total`"
        " FROM (SELECT v, id FROM s.src) AS i(__dt_c0, __dt_c1)"
    )


def test_change_sources_lists_each_source_read_with_changes_and_its_modes() -> None:
    statement = (
        "MERGE INTO SELF USING (SELECT * FROM s.a CHANGES(INFORMATION => APPEND_ONLY)"
        " JOIN s.b ON TRUE JOIN s.a CHANGES() AS x ON TRUE JOIN SELF AS cur ON TRUE) AS u"
        " ON FALSE WHEN NOT MATCHED THEN INSERT *"
    )
    assert change_sources(statement) == {"s.a": {"APPEND_ONLY", "DEFAULT"}}
