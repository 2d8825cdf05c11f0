"""Golden tests for the DDL front-end: ``parse(sql)`` against hand-written typed statements.

Each case in ``tests/fixtures/grammar/*.yaml`` holds the input SQL and, beside it, the
statement it means::

    - name: alter_suspend
      sql: ALTER DYNAMIC TABLE dt_orders SUSPEND
      expect:
        type: AlterDynamicTable
        name: [dt_orders]
        action: SUSPEND

``expect`` is one statement (the SQL holds exactly one) or a list of statements (a
script). It is turned into the dataclasses of ``dyntables.statements`` (fields left out
take the dataclass defaults) and compared with the WHOLE parsed statement; spans are
excluded from equality by design and are checked by the tests at the end of this file.

The expectations are written by hand from what the SQL means, never pasted from the
parser's output: when the two disagree, the parser is wrong.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from dyntables import parse
from dyntables.statements import (
    AlterAction,
    AlterDynamicTable,
    BackfillFrom,
    ColumnDef,
    CreateDynamicTable,
    CreateMaterializedView,
    DescribeDynamicTable,
    DropDynamicTable,
    DropMaterializedView,
    ExplainCreateDynamicTable,
    ExplainDynamicTable,
    Initialize,
    PassThrough,
    RefreshMaterializedView,
    RefreshMode,
    ShowDynamicTables,
    Span,
    Statement,
    TableName,
    TargetLag,
    TimePoint,
    TimePointBy,
    TimePointKind,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "grammar"

STATEMENT_TYPES: dict[str, type[Statement]] = {
    cls.__name__: cls
    for cls in (
        PassThrough,
        CreateDynamicTable,
        AlterDynamicTable,
        DropDynamicTable,
        ShowDynamicTables,
        DescribeDynamicTable,
        ExplainDynamicTable,
        ExplainCreateDynamicTable,
        CreateMaterializedView,
        RefreshMaterializedView,
        DropMaterializedView,
    )
}

# ---- YAML → dataclasses ----------------------------------------------------------------


def table_name(parts: list[str]) -> TableName:
    """``[sales, dt_orders]`` → ``TableName(("sales", "dt_orders"))``."""
    if not isinstance(parts, list) or not all(isinstance(part, str) for part in parts):
        raise TypeError(f"a table name is a list of parts, got {parts!r}")
    return TableName(tuple(parts))


def target_lag(spec: dict[str, Any]) -> TargetLag:
    """``{seconds: 600}`` or ``{seconds: null, downstream: true}``."""
    return TargetLag(**spec)


def time_point(spec: dict[str, Any]) -> TimePoint:
    """``{kind: AT, by: TIMESTAMP, expr_sql: "..."}``."""
    return TimePoint(TimePointKind[spec["kind"]], TimePointBy[spec["by"]], spec["expr_sql"])


def backfill_from(spec: dict[str, Any]) -> BackfillFrom:
    """``{table: [snapshot], point: {...}}``; ``point`` may be left out."""
    point = spec.get("point")
    return BackfillFrom(table_name(spec["table"]), None if point is None else time_point(point))


def columns(specs: list[dict[str, Any]]) -> tuple[ColumnDef, ...]:
    """``[{name: id, type_sql: INT, not_null: true}, {name: total, type_sql: null}]``."""
    return tuple(ColumnDef(**spec) for spec in specs)


def properties(pairs: dict[str, str]) -> tuple[tuple[str, str], ...]:
    """A mapping, in the order written: ``{delta.appendOnly: "true"}``."""
    for key, value in pairs.items():
        if not isinstance(value, str):  # YAML reads true, 1 ... as non-strings
            raise TypeError(f"property {key!r}: quote the value {value!r}, values are text")
    return tuple(pairs.items())


FIELD_CONVERTERS: dict[str, Callable[[Any], Any]] = {
    "name": table_name,
    "in_schema": table_name,
    "target_lag": target_lag,
    "refresh_mode": lambda name: RefreshMode[name],
    "initialize": lambda name: Initialize[name],
    "backfill_from": backfill_from,
    "start_at": time_point,
    "columns": columns,
    "cluster_by": tuple,
    "partitioned_by": tuple,
    "properties": properties,
    "action": lambda name: AlterAction[name],
    "create": lambda spec: build(CreateDynamicTable, spec),
}

# An ALTER's ``value`` depends on its action (see ``statements.AlterValue``); the
# actions not listed here carry a string or nothing.
ALTER_VALUE_CONVERTERS: dict[AlterAction, Callable[[Any], Any]] = {
    AlterAction.SET_TARGET_LAG: target_lag,
    AlterAction.SET_REFRESH_MODE: lambda name: RefreshMode[name],
    AlterAction.RENAME_TO: table_name,
}


def build(cls: type[Statement], spec: dict[str, Any]) -> Statement:
    """An instance of ``cls`` from a fixture mapping (without its ``type`` key)."""
    fields = {key: FIELD_CONVERTERS.get(key, _as_is)(value) for key, value in spec.items()}
    if cls is AlterDynamicTable and fields.get("value") is not None:
        fields["value"] = ALTER_VALUE_CONVERTERS.get(fields["action"], _as_is)(fields["value"])
    return cls(**fields)


def statement(spec: dict[str, Any]) -> Statement:
    """The statement a fixture's ``expect`` mapping describes."""
    spec = dict(spec)
    return build(STATEMENT_TYPES[spec.pop("type")], spec)


def _as_is(value: Any) -> Any:
    return value


# ---- the fixtures -----------------------------------------------------------------------


def fixture_cases() -> Iterator[dict[str, Any]]:
    for path in sorted(FIXTURES.glob("*.yaml")):
        for case in yaml.safe_load(path.read_text(encoding="utf-8")):
            yield {**case, "file": path.name}


CASES = list(fixture_cases())


def test_fixture_names_are_unique() -> None:
    names = [case["name"] for case in CASES]
    assert len(CASES) > 100
    assert sorted(name for name in set(names) if names.count(name) > 1) == []


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_golden(case: dict[str, Any]) -> None:
    assert set(case) == {"name", "sql", "expect", "file"}, f"unexpected keys in {case['name']}"
    specs = case["expect"] if isinstance(case["expect"], list) else [case["expect"]]
    expected = [statement(spec) for spec in specs]

    parsed = parse(case["sql"])

    assert parsed == expected
    # Equality cannot tell RefreshMode.FULL from "FULL" (a str enum); the repr can.
    assert repr(parsed) == repr(expected)


# ---- verbatim slices ----------------------------------------------------------------------

MIXED = """\
SELECT 1;
create or replace Transient Dynamic Table Sales.`Dt Orders` (
    Order_Id   BIGINT  not null  comment 'the key',
    Amount     decimal( 10 ,2 )
)
  target_lag = '10 Minutes'   -- fresh enough
  /* no warehouse here */
  Frozen Where (  Order_Date < '2025-01-01'::Timestamp_NTZ  )
  Cluster By ( Order_Date ,  substr(Region, 1, 2) )
As
  -- a comment before the query is not part of it
  WITH recent AS (SELECT * FROM Raw_Orders /* all of them */)
  SELECT /*+ BROADCAST(r) */ Order_Id,
         Line_Total   AS   Amount  -- the money
  FROM   recent r
  WHERE  r.Status != 'Returned'   -- trailing comment ends the statement
;"""


def test_verbatim_slices_keep_the_users_spelling() -> None:
    _, create = parse(MIXED)

    assert isinstance(create, CreateDynamicTable)
    assert create.name == TableName(("Sales", "Dt Orders"))
    assert create.columns == (
        ColumnDef("Order_Id", "BIGINT", comment="the key", not_null=True),
        ColumnDef("Amount", "decimal( 10 ,2 )"),
    )
    assert create.target_lag == TargetLag(seconds=600)
    assert create.frozen_where == "Order_Date < '2025-01-01'::Timestamp_NTZ"
    assert create.cluster_by == ("Order_Date", "substr(Region, 1, 2)")
    assert create.query == (
        "WITH recent AS (SELECT * FROM Raw_Orders /* all of them */)\n"
        "  SELECT /*+ BROADCAST(r) */ Order_Id,\n"
        "         Line_Total   AS   Amount  -- the money\n"
        "  FROM   recent r\n"
        "  WHERE  r.Status != 'Returned'"
    )


def test_verbatim_refresh_using_keeps_the_users_spelling() -> None:
    sql = (
        "CREATE DYNAMIC TABLE t (a INT)\n"
        "  TARGET_LAG = DOWNSTREAM\n"
        "  REFRESH USING (\n"
        "    /* leading comment */ merge INTO self AS Tgt   -- keep me\n"
        "    USING (SELECT a FROM src CHANGES(information => default)) s ON Tgt.a = s.a\n"
        "    WHEN NOT MATCHED THEN INSERT (a) VALUES (s.a)  /* trailing */\n"
        "  )"
    )

    (create,) = parse(sql)

    assert isinstance(create, CreateDynamicTable)
    assert create.refresh_using == (
        "merge INTO self AS Tgt   -- keep me\n"
        "    USING (SELECT a FROM src CHANGES(information => default)) s ON Tgt.a = s.a\n"
        "    WHEN NOT MATCHED THEN INSERT (a) VALUES (s.a)"
    )


def test_verbatim_time_point_expressions() -> None:
    sql = (
        "CREATE DYNAMIC TABLE t (a INT) TARGET_LAG = '1 minute'\n"
        "  BACKFILL FROM snap BEFORE (timestamp => CAST( '2025-04-01'  AS timestamp ))\n"
        "  START AT (OFFSET =>  - 60 * 60)\n"
        "  REFRESH USING (INSERT INTO SELF SELECT 1)"
    )

    (create,) = parse(sql)

    assert isinstance(create, CreateDynamicTable)
    assert create.backfill_from == BackfillFrom(
        TableName(("snap",)),
        TimePoint(
            TimePointKind.BEFORE, TimePointBy.TIMESTAMP, "CAST( '2025-04-01'  AS timestamp )"
        ),
    )
    assert create.start_at == TimePoint(TimePointKind.AT, TimePointBy.OFFSET, "- 60 * 60")


def test_pass_through_is_the_exact_text() -> None:
    sql = "select  *\n  FROM t -- c\n;\n\n/* lead */ Insert Into t Values ( 1 )"

    assert parse(sql) == [
        PassThrough("select  *\n  FROM t -- c\n"),
        PassThrough("/* lead */ Insert Into t Values ( 1 )"),
    ]


# ---- spans ---------------------------------------------------------------------------------


def spanned(text: str, span: Span | None) -> str:
    assert span is not None
    return text[span.start : span.stop]


def test_spans_of_a_create_point_at_its_parts() -> None:
    _, create = parse(MIXED)

    assert isinstance(create, CreateDynamicTable)
    assert create.span is not None
    assert spanned(MIXED, create.span).startswith("create or replace Transient Dynamic Table")
    assert spanned(MIXED, create.span).endswith("r.Status != 'Returned'")
    assert (create.span.line, create.span.column) == (2, 1)
    assert spanned(MIXED, create.name.span) == "Sales.`Dt Orders`"
    assert create.name.span is not None
    assert (create.name.span.line, create.name.span.column) == (2, 43)
    assert create.columns is not None
    assert [spanned(MIXED, column.span) for column in create.columns] == [
        "Order_Id   BIGINT  not null  comment 'the key'",
        "Amount     decimal( 10 ,2 )",
    ]
    assert create.columns[1].span is not None
    assert (create.columns[1].span.line, create.columns[1].span.column) == (4, 5)
    assert spanned(MIXED, create.target_lag.span) == "'10 Minutes'"
    assert create.target_lag.span is not None
    assert (create.target_lag.span.line, create.target_lag.span.column) == (6, 16)


def test_spans_of_backfill_and_start_at() -> None:
    sql = (
        "CREATE DYNAMIC TABLE t (a INT)\n"
        "  TARGET_LAG = '1 minute'\n"
        "  BACKFILL FROM snap AT (VERSION => 3)\n"
        "  START AT (STREAM => 's')\n"
        "  REFRESH USING (INSERT INTO SELF SELECT 1)"
    )

    (create,) = parse(sql)

    assert isinstance(create, CreateDynamicTable)
    assert create.backfill_from is not None
    assert spanned(sql, create.backfill_from.span) == "BACKFILL FROM snap AT (VERSION => 3)"
    assert spanned(sql, create.backfill_from.table.span) == "snap"
    assert create.backfill_from.point is not None
    assert spanned(sql, create.backfill_from.point.span) == "VERSION => 3"
    assert create.start_at is not None
    assert spanned(sql, create.start_at.span) == "STREAM => 's'"
    assert create.start_at.span is not None
    assert (create.start_at.span.line, create.start_at.span.column) == (4, 13)


def test_spans_of_statements_in_a_script() -> None:
    sql = (
        "SELECT 1;\n"
        "  ALTER DYNAMIC TABLE a.b SET TARGET_LAG = DOWNSTREAM ;\n"
        "EXPLAIN CREATE DYNAMIC TABLE c TARGET_LAG = '1 day' AS SELECT 2;\n"
        "CALL BQ.REFRESH_MATERIALIZED_VIEW('p.d.v')"
    )

    select, alter, explain, call = parse(sql)

    assert isinstance(select, PassThrough)
    assert spanned(sql, select.span) == "SELECT 1"
    assert isinstance(alter, AlterDynamicTable)
    assert spanned(sql, alter.span) == "ALTER DYNAMIC TABLE a.b SET TARGET_LAG = DOWNSTREAM"
    assert alter.span is not None
    assert (alter.span.line, alter.span.column) == (2, 3)
    assert spanned(sql, alter.name.span) == "a.b"
    assert isinstance(alter.value, TargetLag)
    assert spanned(sql, alter.value.span) == "DOWNSTREAM"
    assert isinstance(explain, ExplainCreateDynamicTable)
    assert spanned(sql, explain.span) == (
        "EXPLAIN CREATE DYNAMIC TABLE c TARGET_LAG = '1 day' AS SELECT 2"
    )
    assert spanned(sql, explain.create.span) == (
        "CREATE DYNAMIC TABLE c TARGET_LAG = '1 day' AS SELECT 2"
    )
    assert explain.create.span is not None
    assert (explain.create.span.line, explain.create.span.column) == (3, 9)
    assert isinstance(call, RefreshMaterializedView)
    assert spanned(sql, call.span) == "CALL BQ.REFRESH_MATERIALIZED_VIEW('p.d.v')"
    assert spanned(sql, call.name.span) == "'p.d.v'"
    assert call.span is not None
    assert (call.span.line, call.span.column) == (4, 1)
