"""The incremental-refresh derivation as emitted SQL, without an engine (the embedded
property tests check the same rules against a full recompute)."""

from __future__ import annotations

import re

import pyarrow as pa
import pytest
from sqlglot import exp

from dyntables.catalog import Definition, ObjectKind
from dyntables.errors import CannotRefreshIncrementallyError
from dyntables.formats.delta import DeltaFormat
from dyntables.planner.capabilities import inserts_are_appends
from dyntables.planner.key_types import KeyTyping
from dyntables.planner.read_columns import read_column_names
from dyntables.planner.structure import (
    check_structure,
    group_keys,
    inline_ctes,
    key_definitions,
    key_outputs,
    keyed_join,
    parse_query,
)
from dyntables.refresh.changes import (
    ChangeDeriver,
    Versions,
    cancelled_out,
    netting_partition,
    touched_by,
)
from dyntables.refresh.incremental import _netting_pays
from dyntables.sql.dialect import to_spark_sql as spark

COLUMNS = {"shop.orders": ["id", "cid", "amount"], "shop.customers": ["cid", "region"]}


def deriver(old: dict[str, int | None], new: dict[str, int | None]) -> ChangeDeriver:
    return ChangeDeriver(None, DeltaFormat(embedded=True), Versions(old, new), COLUMNS.__getitem__)


def change_sql(query: str, old: dict[str, int | None], new: dict[str, int | None]) -> str:
    change = deriver(old, new).change(inline_ctes(parse_query(query)))
    return "" if change is None else spark(change).replace("TABLE_CHANGES(", "table_changes(")


def test_a_source_change_is_its_signed_change_feed() -> None:
    sql = change_sql(
        "SELECT id FROM shop.orders WHERE amount > 1", {"shop.orders": 3}, {"shop.orders": 5}
    )
    assert "table_changes('shop.orders', 4, 5)" in sql
    assert "CASE WHEN _change_type IN ('insert', 'update_postimage') THEN 1 ELSE -1 END" in sql
    assert "WHERE amount > 1" in sql


def test_an_unchanged_source_has_no_change() -> None:
    assert change_sql("SELECT id FROM shop.orders", {"shop.orders": 3}, {"shop.orders": 3}) == ""


def test_a_join_is_the_telescoping_sum_with_old_and_new_pins() -> None:
    query = "SELECT o.id, c.region FROM shop.orders o JOIN shop.customers c ON o.cid = c.cid"
    sql = change_sql(
        query, {"shop.orders": 1, "shop.customers": 7}, {"shop.orders": 2, "shop.customers": 9}
    )
    first, second = sql.split(" UNION ALL ")
    # Δorders ⋈ customers(old), then orders(new) ⋈ Δcustomers.
    assert "table_changes('shop.orders', 2, 2)" in first
    assert "shop.customers VERSION AS OF 7" in first
    assert "shop.orders VERSION AS OF 2" in second
    assert "table_changes('shop.customers', 8, 9)" in second


def test_only_changed_inputs_contribute_terms() -> None:
    query = "SELECT o.id, c.region FROM shop.orders o JOIN shop.customers c ON o.cid = c.cid"
    sql = change_sql(
        query, {"shop.orders": 1, "shop.customers": 7}, {"shop.orders": 1, "shop.customers": 9}
    )
    assert "UNION ALL" not in sql
    assert "shop.orders VERSION AS OF 1" in sql


def test_union_all_distributes_and_ctes_are_inlined_per_use() -> None:
    query = (
        "WITH big AS (SELECT id FROM shop.orders WHERE amount > 9)"
        " SELECT id FROM big UNION ALL SELECT id FROM big"
    )
    sql = change_sql(query, {"shop.orders": 1}, {"shop.orders": 2})
    assert sql.count("table_changes('shop.orders', 2, 2)") == 2
    assert "WITH" not in sql


@pytest.mark.parametrize(
    ("query", "reason"),
    [
        ("SELECT id FROM shop.orders UNION SELECT cid FROM shop.customers", "UNION"),
        ("SELECT q.n FROM (SELECT count(*) AS n FROM shop.orders) q", "scalar aggregate"),
        (
            "SELECT o.id FROM shop.orders o LEFT JOIN shop.customers c ON o.cid > c.cid",
            "equality between its two sides",
        ),
        # Joins on several keys whose last join has no equality with the joins before it.
        (
            "SELECT o.id FROM shop.orders o LEFT JOIN shop.customers c ON o.cid = c.cid"
            " LEFT JOIN shop.orders d ON d.amount > o.amount",
            "every join of its SELECT matches on one key",
        ),
        (
            "SELECT id, row_number() OVER (ORDER BY id) AS n FROM shop.orders",
            "PARTITION BY",
        ),
        (
            "SELECT id, rank() OVER (PARTITION BY cid ORDER BY id) AS a,"
            " rank() OVER (PARTITION BY id ORDER BY cid) AS b FROM shop.orders",
            "PARTITION BY column they all share",
        ),
        ("SELECT q.id FROM (SELECT id FROM shop.orders LIMIT 3) q", "LIMIT"),
        (
            "SELECT cid, count(*) AS n FROM shop.orders GROUP BY ROLLUP (cid)",
            "ROLLUP",
        ),
    ],
)
def test_constructs_not_incremental_yet_are_refused(query: str, reason: str) -> None:
    with pytest.raises(CannotRefreshIncrementallyError, match=reason):
        check_structure(inline_ctes(parse_query(query)), COLUMNS.__getitem__)


@pytest.mark.parametrize(
    "query",
    [
        # an outer join on equality keys, unqualified columns placed by the sources' schemas
        "SELECT o.id, region FROM shop.orders o FULL JOIN shop.customers c ON o.cid = c.cid",
        "SELECT id, region FROM shop.orders LEFT JOIN shop.customers USING (cid)",
        # DISTINCT over a star: the columns it stands for are the keys
        "SELECT DISTINCT * FROM shop.orders",
        # ... over a USING join, whose keys it gives once (as Spark expands it)
        "SELECT DISTINCT * FROM shop.orders JOIN shop.customers USING (cid)",
        "SELECT DISTINCT o.*, c.region FROM shop.orders o JOIN shop.customers c ON o.cid = c.cid",
        # outer and inner joins among each other, all on one key (through a chain of ON
        # equalities)
        "SELECT o.id, c.region, d.region AS r2 FROM shop.orders o"
        " LEFT JOIN shop.customers c ON o.cid = c.cid JOIN shop.customers d ON c.cid = d.cid",
        # joins on several keys, the last an inner or LEFT join on an equality with the
        # joins before it (which are incremental by the same rules): another key than the
        # earlier joins', two equalities, a key from a side the earlier join pads, `<=>`
        "SELECT o.id FROM shop.orders o LEFT JOIN shop.customers c ON o.cid = c.cid"
        " JOIN shop.orders d ON d.id = o.id",
        "SELECT o.id FROM shop.orders o LEFT JOIN shop.customers c ON o.amount = c.region"
        " LEFT JOIN shop.orders d ON d.cid = o.cid AND d.cid = c.cid",
        "SELECT o.id FROM shop.orders o LEFT JOIN shop.customers c ON o.cid = c.cid"
        " LEFT JOIN shop.orders d ON d.cid <=> c.cid",
        "SELECT o.id FROM shop.orders o LEFT JOIN shop.customers c ON o.cid = c.cid"
        " LEFT JOIN shop.orders d ON d.amount = o.amount LEFT JOIN shop.orders e ON e.id = d.id",
        # a last RIGHT or FULL join: its rows' key from the side they keep
        "SELECT o.id FROM shop.orders o LEFT JOIN shop.customers c ON o.cid = c.cid"
        " FULL JOIN shop.orders d ON d.id = o.id",
        "SELECT d.id FROM shop.orders o JOIN shop.customers c ON o.cid = c.cid"
        " RIGHT JOIN shop.orders d ON d.amount = o.amount",
        # windows sharing a PARTITION BY column, under a filter
        "SELECT id, rank() OVER (PARTITION BY cid ORDER BY amount) AS r,"
        " sum(amount) OVER (PARTITION BY cid, id) AS s FROM shop.orders WHERE amount > 0",
        # a GROUP BY below the top, and one whose key is not an output column
        "SELECT q.cid FROM (SELECT cid, count(*) AS n FROM shop.orders GROUP BY cid) q"
        " WHERE q.n > 1",
        "SELECT count(*) AS n FROM shop.orders GROUP BY cid",
        # LATERAL VIEW of a generator over one row
        "SELECT id, x FROM shop.orders LATERAL VIEW explode(array(id, cid)) t AS x",
    ],
)
def test_keyed_and_lateral_constructs_are_incremental(query: str) -> None:
    check_structure(inline_ctes(parse_query(query)), COLUMNS.__getitem__)


def test_joins_on_one_key_restrict_every_input_by_its_own_key_expression() -> None:
    changes, session = _feeds_deriver()  # orders changed
    session.values = (3,)  # three keys touched (the count the touched keys' view holds)
    change = changes.change(
        inline_ctes(
            parse_query(
                "SELECT o.id, c.id AS same, p.amount FROM shop.orders o"
                " LEFT JOIN shop.orders c ON o.cid = c.cid"
                " LEFT JOIN shop.orders p ON p.cid = o.cid AND p.amount > o.amount"
            )
        )
    )
    assert change is not None
    sql = spark(change)
    for key in ("o.cid", "c.cid", "p.cid"):
        assert f"`__dt_touched`.`__dt_key0` IS NOT DISTINCT FROM {key}" in sql, key


def test_group_keys_map_to_output_columns() -> None:
    select = parse_query(
        "SELECT c.region AS r, count(*) AS n FROM shop.customers c GROUP BY c.region"
    )
    assert isinstance(select, exp.Select)
    assert [(key.sql(), name) for key, name in group_keys(select) or []] == [("c.region", "r")]
    by_position = parse_query("SELECT region, count(*) AS n FROM shop.customers GROUP BY 1")
    assert isinstance(by_position, exp.Select)
    assert [name for _, name in group_keys(by_position) or []] == ["region"]
    hidden = parse_query("SELECT count(*) AS n FROM shop.customers GROUP BY region")
    assert isinstance(hidden, exp.Select)
    assert group_keys(hidden) is None  # recomputed by key instead (a keyed change)


def test_keys_named_in_another_case_are_the_same_key() -> None:
    """Spark resolves names in any case: a key spelled otherwise in GROUP BY than in the
    SELECT list, or in a derived table's GROUP BY, is still that key."""
    select = parse_query(
        "SELECT C.Region AS r, count(*) AS n FROM shop.customers c GROUP BY c.REGION"
    )
    assert isinstance(select, exp.Select)
    assert [name for _, name in group_keys(select) or []] == ["r"]
    inner = parse_query("SELECT Region, count(*) AS n FROM shop.customers GROUP BY region")
    assert isinstance(inner, exp.Select)
    definitions = key_definitions(inner, [exp.column("REGION", table="s")])
    assert [spark(d) for d in definitions or []] == ["Region"]


@pytest.mark.parametrize(
    ("query", "outputs"),
    [
        ("SELECT cid, rank() OVER (PARTITION BY cid ORDER BY id) AS r FROM shop.orders", ["cid"]),
        ("SELECT id, rank() OVER (PARTITION BY cid ORDER BY id) AS r FROM shop.orders", None),
        # A LEFT JOIN's key read from its left side, or a RIGHT JOIN's from its right side.
        (
            "SELECT o.cid AS k, c.region FROM shop.orders o"
            " LEFT JOIN shop.customers c ON o.cid = c.cid",
            ["k"],
        ),
        (
            "SELECT c.cid, c.region FROM shop.orders o"
            " RIGHT JOIN shop.customers c ON o.cid = c.cid",
            ["cid"],
        ),
        # The padded side's key is NULL on the rows it did not match.
        (
            "SELECT c.cid, c.region FROM shop.orders o LEFT JOIN shop.customers c ON o.cid = c.cid",
            None,
        ),
        (
            "SELECT o.cid, c.region FROM shop.orders o FULL JOIN shop.customers c ON o.cid = c.cid",
            None,
        ),
        ("SELECT id, amount FROM shop.orders WHERE amount > 1", None),  # not keyed
    ],
)
def test_keys_held_by_output_columns(query: str, outputs: list[str] | None) -> None:
    select = parse_query(query)
    assert isinstance(select, exp.Select)
    assert key_outputs(select, COLUMNS.__getitem__) == outputs


@pytest.mark.parametrize(
    ("inner", "definitions"),
    [
        ("SELECT cid AS k, count(*) AS n FROM shop.orders GROUP BY cid", ["cid"]),
        ("SELECT upper(region) AS k FROM shop.customers", ["UPPER(region)"]),
        ("SELECT DISTINCT cid AS k FROM shop.orders", ["cid"]),
        ("SELECT count(*) AS k FROM shop.orders GROUP BY cid", None),  # an aggregate
        ("SELECT cid AS k, count(*) AS n FROM shop.orders GROUP BY cid, id", ["cid"]),
        ("SELECT cid + 1 AS k, count(*) AS n FROM shop.orders GROUP BY cid", None),
        ("SELECT max(cid) AS k FROM shop.orders", None),  # a scalar aggregate
        ("SELECT cid AS k, rank() OVER (ORDER BY id) AS r FROM shop.orders", None),
        ("SELECT cid AS k FROM shop.orders LIMIT 3", None),
        ("SELECT * FROM shop.orders", None),
    ],
)
def test_a_derived_tables_key_is_restricted_inside_where_it_is_one_of_its_rows_columns(
    inner: str, definitions: list[str] | None
) -> None:
    select = parse_query(inner)
    assert isinstance(select, exp.Select)
    found = key_definitions(select, [exp.column("k", table="d")])
    assert (None if found is None else [spark(d) for d in found]) == definitions


def test_an_outer_joins_grouped_input_is_restricted_before_it_groups() -> None:
    changes, session = _feeds_deriver()  # orders changed
    session.values = (3,)
    change = changes.change(
        inline_ctes(
            parse_query(
                "WITH n AS (SELECT cid, count(*) AS n FROM shop.orders GROUP BY cid)"
                " SELECT o.id, n.n FROM shop.orders o LEFT JOIN n ON n.cid = o.cid"
            )
        )
    )
    assert change is not None
    sql = spark(change)
    restricted = "IS NOT DISTINCT FROM cid) GROUP BY cid"
    assert sql.count(restricted) == 2, sql  # the new and old recomputes


def test_a_grouped_inputs_touched_keys_come_from_its_input_rows() -> None:
    """Not from its own change (a recompute of its groups at both versions): the keys of
    its input rows' change, a superset of the groups whose values changed."""
    select = inline_ctes(
        parse_query(
            "WITH n AS (SELECT cid, count(*) AS n FROM shop.orders WHERE amount > 0"
            " GROUP BY cid) SELECT o.id, n.n FROM shop.orders o LEFT JOIN n ON n.cid = o.cid"
        )
    )
    assert isinstance(select, exp.Select)
    assert [spark(probe) for probe in keyed_join(select, COLUMNS.__getitem__).probes] == [
        "SELECT o.cid AS `__dt_key0` FROM shop.orders AS o",
        "SELECT cid AS `__dt_key0` FROM shop.orders WHERE amount > 0",
    ]


def test_string_keys_beside_numbers_are_compared_as_numbers() -> None:
    """An INT key beside a STRING one (``o.cid = c.code``): Spark compares the STRING as
    an INT, so its probe and restriction cast it; beside another STRING, nothing is cast."""
    shapes = {
        "shop.orders": (["id", "cid"], ["bigint", "int"]),
        "shop.customers": (["code", "region"], ["string", "string"]),
    }
    typing = KeyTyping(shapes.__getitem__)
    columns = {key: names for key, (names, _) in shapes.items()}
    mixed = parse_query(
        "SELECT o.id, c.region FROM shop.orders o LEFT JOIN shop.customers c ON o.cid = c.code"
    )
    assert isinstance(mixed, exp.Select)
    plan = keyed_join(mixed, columns.__getitem__, typing)
    assert [spark(probe) for probe in plan.probes] == [
        "SELECT o.cid AS `__dt_key0` FROM shop.orders AS o",
        "SELECT CAST(c.code AS INT) AS `__dt_key0` FROM shop.customers AS c",
    ]
    alike = parse_query(
        "SELECT c.code FROM shop.customers c LEFT JOIN shop.customers d ON c.code = d.region"
    )
    assert isinstance(alike, exp.Select)
    assert "CAST" not in " ".join(
        spark(probe) for probe in keyed_join(alike, columns.__getitem__, typing).probes
    )


def test_touched_keys_are_matched_null_safely_through_a_relation() -> None:
    keys = [exp.column("id", table="o", quoted=True), exp.column("region", quoted=True)]
    touched = exp.select("*").from_("touched_view")
    assert spark(touched_by(keys, touched)) == (
        "EXISTS(SELECT 1 FROM (SELECT * FROM touched_view) AS __dt_touched"
        " WHERE `__dt_touched`.`__dt_key0` IS NOT DISTINCT FROM `o`.`id`"
        " AND `__dt_touched`.`__dt_key1` IS NOT DISTINCT FROM `region`)"
    )


BOTH = ("shop.orders", "shop.customers")
LEFT = "SELECT o.id, c.region FROM shop.orders o LEFT JOIN shop.customers c ON o.cid = c.cid"


@pytest.mark.parametrize(
    ("query", "changed", "appended"),
    [
        ("SELECT id, amount FROM shop.orders WHERE amount > 1", BOTH, True),
        (
            "SELECT o.id, c.region FROM shop.orders o JOIN shop.customers c ON o.cid = c.cid",
            BOTH,
            True,
        ),
        ("WITH big AS (SELECT * FROM shop.orders WHERE amount > 9) SELECT id FROM big", BOTH, True),
        ("SELECT cid, count(*) AS n FROM shop.orders GROUP BY cid", BOTH, False),
        ("SELECT DISTINCT cid FROM shop.orders", BOTH, False),
        (
            "SELECT o.id FROM (SELECT cid FROM shop.customers GROUP BY cid) c"
            " JOIN shop.orders o ON o.cid = c.cid",
            BOTH,
            False,
        ),
        # A keyed block whose sources did not change adds no change.
        (
            "SELECT o.id FROM (SELECT cid FROM shop.customers GROUP BY cid) c"
            " JOIN shop.orders o ON o.cid = c.cid",
            ("shop.orders",),
            True,
        ),
        (
            "SELECT id, rank() OVER (PARTITION BY cid ORDER BY id) AS r FROM shop.orders",
            BOTH,
            False,
        ),
        # Outer joins: inserts into a preserved side only are appended.
        (LEFT, BOTH, False),
        (LEFT, ("shop.orders",), True),
        (LEFT, ("shop.customers",), False),
        (LEFT.replace("LEFT", "RIGHT"), ("shop.customers",), True),
        (LEFT.replace("LEFT", "RIGHT"), ("shop.orders",), False),
        (LEFT.replace("LEFT", "FULL"), ("shop.orders",), False),
        (
            "SELECT o.id, c.n FROM shop.orders o LEFT JOIN"
            " (SELECT cid, count(*) AS n FROM shop.customers GROUP BY cid) c ON o.cid = c.cid",
            ("shop.orders",),
            True,
        ),
    ],
)
def test_inserts_into_sources_a_query_is_linear_in_are_appended(
    query: str, changed: tuple[str, ...], appended: bool
) -> None:
    columns = tuple((name, "bigint") for name in ("a", "b", "c"))
    definition = Definition(
        kind=ObjectKind.DYNAMIC_TABLE,
        text=query,
        query=query,
        columns=columns,
        sources=BOTH,
    )
    assert inserts_are_appends(definition, set(changed)) is appended


class _Rows:
    """What a recording session's ``sql`` returns: one row of ``values``, or
    (``toArrow``) ``rows`` rows of the summary columns the statement computes, each of
    its value in ``values`` by position."""

    def __init__(self, text: str, values: tuple[object, ...], rows: int) -> None:
        self.text, self.values, self.rows = text, values, rows

    def createOrReplaceTempView(self, name: str) -> None:  # noqa: N802 (Spark's name)
        pass

    def collect(self) -> list[tuple[object, ...]]:
        return [self.values]  # (the statements collected are aggregates: one row)

    def toArrow(self) -> pa.Table:  # noqa: N802 (Spark's name)
        names = re.findall(r"__dt_summary\d+", self.text)
        columns = {"id": [1] * self.rows}
        columns.update(
            {name: [value] * self.rows for name, value in zip(names, self.values, strict=False)}
        )
        return pa.table(columns)

    def drop_columns(self, names: list[str]) -> _Rows:
        return self


class _Recording:
    """A session that records the statements it is given."""

    def __init__(self) -> None:
        self.statements: list[str] = []
        self.values: tuple[object, ...] = (1, 2)  # the values of every statement's rows
        self.rows = 1  # how many rows every statement returns

    def sql(self, text: str) -> _Rows:
        self.statements.append(text)
        return _Rows(text, self.values, self.rows)

    def createDataFrame(self, rows: pa.Table) -> _Rows:  # noqa: N802 (Spark's name)
        return _Rows("", self.values, rows.num_rows)


def _feeds_deriver() -> tuple[ChangeDeriver, _Recording]:
    session = _Recording()
    versions = Versions({"shop.orders": 1}, {"shop.orders": 2})
    fmt = DeltaFormat(embedded=True)
    changes = ChangeDeriver(session, fmt, versions, COLUMNS.__getitem__, materialize_feeds=True)
    return changes, session


def test_a_feed_read_once_by_a_statement_is_written_into_it() -> None:
    changes, session = _feeds_deriver()
    delta = changes.change(parse_query("SELECT id FROM shop.orders WHERE amount > 1"))
    assert delta is not None
    assert session.statements == []
    changes.materialize(exp.select("id").from_(delta.subquery("d")))
    (statement,) = session.statements
    assert "TABLE_CHANGES('shop.orders', 2, 2)" in statement


def test_a_feed_read_twice_is_computed_once_into_a_view() -> None:
    changes, session = _feeds_deriver()
    query = "SELECT a.id FROM shop.orders a JOIN shop.orders b ON a.cid = b.cid"
    delta = changes.change(parse_query(query))
    assert delta is not None
    changes.materialize(exp.select("id").from_(delta.subquery("d")))
    feed, net = session.statements
    assert "TABLE_CHANGES" in feed
    assert "TABLE_CHANGES" not in net
    view = re.search(r"__dt_changes_\w+", net)
    assert view is not None
    assert net.count(view.group()) == 2


def test_a_feed_a_statement_read_before_is_read_from_a_view() -> None:
    changes, session = _feeds_deriver()
    delta = changes.change(parse_query("SELECT id FROM shop.orders"))
    assert delta is not None
    changes.materialize(delta)  # read inside: one statement
    changes.materialize(delta)  # read again: the feed into a view, then the statement
    assert [("TABLE_CHANGES" in s, "__dt_changes_" in s) for s in session.statements] == [
        (True, False),
        (True, False),
        (False, True),
    ]


def test_a_summary_is_computed_with_the_rows_where_the_engine_does_not_checkpoint() -> None:
    """Where results hold their rows (sparkshim), the summary's aggregates are windows
    over the statement's result, read from its first row: one statement."""
    changes, session = _feeds_deriver()
    _, values = changes.summarized(
        exp.select("id").from_("shop.orders"), [exp.func("min", exp.column("id"))]
    )
    assert values == (1,)  # the first row's summary column (the recording session's value)
    (statement,) = session.statements
    assert "MIN(id) OVER () AS `__dt_summary0`" in statement


def test_a_summary_of_no_rows_of_counts_sums_and_extremes_runs_no_statement() -> None:
    """A change that nets out to nothing: the aggregates of no rows are known (a count is
    0, a sum, min, max or average NULL), so only the rows' statement runs."""
    changes, session = _feeds_deriver()
    session.rows = 0
    session.values = (7,) * 6  # what a statement would give: not what is asserted
    summary = [
        exp.func("count", exp.Star()),
        exp.func("count_if", exp.column("ok")),
        exp.func("sum", exp.column("id")),
        exp.func("min", exp.column("id")),
        exp.func("max", exp.column("id")),
        exp.func("avg", exp.column("id")),
    ]
    _, values = changes.summarized(exp.select("id", "ok").from_("shop.orders"), summary)
    assert values == (0, 0, None, None, None, None)
    (statement,) = session.statements
    assert "COUNT(*) OVER ()" in statement


def test_a_summary_of_no_rows_of_another_aggregate_is_one_query_over_the_view() -> None:
    changes, session = _feeds_deriver()
    session.rows = 0
    rows, values = changes.summarized(
        exp.select("id").from_("shop.orders"), [exp.func("bool_and", exp.column("id"))]
    )
    assert values == (1, 2)  # the summary query's row (what the recording session returns)
    _, summary = session.statements
    view = rows.find(exp.Table)
    assert view is not None
    # The view under a fixed alias: the statement's text is the same at each refresh.
    assert summary == f"SELECT BOOL_AND(id) FROM {view.name} AS __dt_changes"


@pytest.mark.parametrize(
    ("query", "read"),
    [
        ("SELECT o.id, count(*) AS n FROM shop.orders o GROUP BY o.id", {"id", "n", "o"}),
        ("SELECT sum(amount) FILTER (WHERE cid > 1) AS s FROM shop.orders", {"amount", "cid"}),
        ("SELECT a.x FROM shop.t a JOIN shop.u b USING (k)", {"x", "k"}),
        ("SELECT s.f, transform(arr, v -> v + 1) AS y FROM shop.t", {"f", "s", "arr", "v"}),
        ("SELECT * FROM shop.orders", None),
        ("SELECT o.* FROM shop.orders o", None),
        ("SELECT hash(*) AS h FROM shop.orders", None),
        ("SELECT id FROM shop.orders NATURAL JOIN shop.customers", None),
        ("SELECT id FROM shop.orders PIVOT (sum(amount) FOR cid IN (1, 2))", None),
        ("SELECT _metadata.file_path AS f FROM shop.orders", None),
        ("SELECT id, _file, _pos FROM shop.orders", None),
    ],
)
def test_the_columns_a_query_reads_are_every_name_it_uses(
    query: str, read: set[str] | None
) -> None:
    names = read_column_names(query)
    if read is None:
        assert names is None
    else:
        assert names is not None
        assert read <= names


def test_a_feed_is_netted_on_the_columns_its_query_reads() -> None:
    read = read_column_names("SELECT cid, sum(amount) AS total FROM shop.orders GROUP BY cid")
    columns, types = ["id", "cid", "amount", "note"], ["bigint", "bigint", "double", "string"]
    partition = netting_partition(columns, types, read)
    assert partition is not None
    # A DOUBLE is compared as its text (0.0 and -0.0 differ); the unread id and note drop.
    assert [spark(e) for e in partition] == ["`cid`", "CAST(`amount` AS STRING)"]
    feed = exp.select("id", "cid", "amount", "note", "__dt_sign").from_("feed")
    netted = spark(cancelled_out(feed, columns, partition))
    assert "SUM(__dt_sign) OVER (PARTITION BY `cid`, CAST(`amount` AS STRING))" in netted
    assert netted.endswith("WHERE __dt_net <> 0")


@pytest.mark.parametrize(
    ("query", "types"),
    [
        ("SELECT * FROM shop.orders", ["bigint", "bigint", "double", "string"]),
        # Every column read: nothing could cancel but updates that set nothing new.
        ("SELECT id, cid, amount, note FROM shop.orders", ["bigint", "bigint", "double", "string"]),
        # Maps do not compare; a DOUBLE inside an array compares 0.0 and -0.0 equal.
        ("SELECT cid, note FROM shop.orders", ["bigint", "bigint", "double", "map<string,int>"]),
        ("SELECT cid, note FROM shop.orders", ["bigint", "bigint", "double", "array<double>"]),
    ],
)
def test_a_feed_is_not_netted_where_netting_is_not_exact_or_drops_nothing(
    query: str, types: list[str]
) -> None:
    columns = ["id", "cid", "amount", "note"]
    assert netting_partition(columns, types, read_column_names(query)) is None


@pytest.mark.parametrize(
    ("query", "columns", "pays"),
    [
        # linear: the change nets on its way to the table
        ("SELECT id, amount FROM shop.orders WHERE cid > 1", "id bigint, amount double", False),
        # a top GROUP BY merged by exact change arithmetic alone (DISTINCT counts copies)
        (
            "SELECT cid, count(*) AS n, sum(id) AS s FROM shop.orders GROUP BY cid",
            "cid bigint, n bigint, s bigint",
            False,
        ),
        ("SELECT DISTINCT cid FROM shop.orders", "cid bigint", False),
        # groups that lose a value are recomputed: a DOUBLE sum, a MAX
        (
            "SELECT cid, sum(amount) AS s FROM shop.orders GROUP BY cid",
            "cid bigint, s double",
            True,
        ),
        ("SELECT cid, max(id) AS m FROM shop.orders GROUP BY cid", "cid bigint, m bigint", True),
        # windows, outer joins, a GROUP BY below the top
        (
            "SELECT id, rank() OVER (PARTITION BY cid ORDER BY id) AS r FROM shop.orders",
            "id bigint, r int",
            True,
        ),
        (
            "SELECT c.cid, o.id FROM shop.customers c LEFT JOIN shop.orders o ON o.cid = c.cid",
            "cid bigint, id bigint",
            True,
        ),
        (
            "SELECT t.cid, t.n FROM (SELECT cid, count(*) AS n FROM shop.orders GROUP BY cid) t"
            " JOIN shop.customers c ON c.cid = t.cid",
            "cid bigint, n bigint",
            True,
        ),
    ],
)
def test_feeds_are_netted_where_a_cancelled_change_would_be_recomputed(
    query: str, columns: str, pays: bool
) -> None:
    pairs = [column.split() for column in columns.split(", ")]
    typed = tuple((name, kind) for name, kind in pairs)
    definition = Definition(
        kind=ObjectKind.DYNAMIC_TABLE,
        text="",
        query=query,
        columns=typed,
        sources=("shop.orders", "shop.customers"),
    )
    assert _netting_pays(definition) is pays
