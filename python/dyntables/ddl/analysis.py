"""The checks of a defining query at CREATE, which change nothing: it parses and resolves
on the refresh session, reads only tables (no temporary views, no fixed versions, not
itself; a Delta table may be named by its path, which is recorded absolute), forms no
cycle with its upstreams, respects the target-lag rule, and has distinct, typed output
columns; a column list renames and casts them. Also the FROZEN WHERE predicate checked
against the columns, and the change tracking the sources need.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp
from sqlglot.optimizer.scope import Scope, traverse_scope

from dyntables.catalog import (
    Definition,
    is_path,
    key_to_table,
    path_of,
    path_table,
    table_key,
)
from dyntables.engine import Engine
from dyntables.errors import DynamicTableError, first_line
from dyntables.planner.predicates import check_frozen_predicate, to_spark_predicate
from dyntables.sql.columns import RESERVED_PREFIX
from dyntables.sql.dialect import parse_one, to_spark_sql
from dyntables.statements import ColumnDef, TargetLag


@dataclass(frozen=True)
class AnalyzedQuery:
    """A defining query checked against the catalog."""

    query: str  # Spark SQL, every source qualified, output columns explicit
    columns: tuple[tuple[str, str], ...]
    sources: tuple[str, ...]
    upstreams: tuple[str, ...]
    # The query as written (qualified): what the planner judges. ``query`` may wrap it to
    # fix the output columns (a column list, or a SELECT * expanded at CREATE).
    planning_query: str
    # Each source's properties as the analysis read them (the checks after it use them
    # instead of reading them again).
    source_properties: dict[str, dict[str, str]] = field(default_factory=dict, compare=False)


class QueryAnalyzer:
    """Checks defining queries against the engine's catalog."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def analyze(
        self, table: exp.Table, query_text: str, columns: tuple[ColumnDef, ...] | None
    ) -> AnalyzedQuery:
        tree = parse_one(query_text)
        if not isinstance(tree, exp.Query):
            raise DynamicTableError(
                "a dynamic table is defined by a query (SELECT ...), not"
                f" {type(tree).__name__.upper()}"
            )
        sources: list[str] = []
        cte_names = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
        for reference in list(tree.find_all(exp.Table)):
            if not reference.name or (not reference.db and reference.name.lower() in cte_names):
                continue
            key = self.qualify_source(table, reference)
            if key not in sources:
                sources.append(key)
        # Each source's columns read once (a schema read), by every check that needs them.
        columns_of = functools.cache(self._source_columns)
        _check_reserved_names(tree, {key: columns_of(key) for key in sources})
        resolve_group_by_all(tree)
        resolve_group_by_aliases(tree, columns_of)
        written = tree
        tree = resolve_qualify(written, columns_of, lambda: self._output_names(table, written))
        query = to_spark_sql(tree)
        schema = self._resolve(table, to_spark_sql(tree.limit(0)))
        output = [(field.name, field.dataType.simpleString()) for field in schema.fields]
        _check_distinct_names([name for name, _ in output])
        for name, type_sql in output:
            if type_sql == "void":
                raise DynamicTableError(
                    f"column {name} of the query is an untyped NULL: cast it to a type"
                )
        planning_query = query
        query, output = _apply_column_list(query, output, columns, tree)
        _check_reserved_output([name for name, _ in output])
        read = {key: self.engine.properties(key_to_table(key)) for key in sources}
        upstreams = tuple(key for key in sources if Definition.from_properties(read[key] or {}))
        known = {key: properties for key, properties in read.items() if properties is not None}
        return AnalyzedQuery(query, tuple(output), tuple(sources), upstreams, planning_query, known)

    def _source_columns(self, key: str) -> set[str] | None:
        """A source's column names (lower case); None where it cannot be read."""
        try:
            schema = self.engine.schema_of(self.engine.refresh_session, key)
        except Exception:  # the probe that follows says what is wrong
            return None
        return {field.name.lower() for field in schema.fields}

    def _output_names(self, table: exp.Table, tree: exp.Query) -> list[str]:
        """The names of the columns ``tree`` returns, each QUALIFY aside (it keeps rows,
        not columns), as the engine resolves them."""
        unfiltered = tree.copy()
        for select in unfiltered.find_all(exp.Select):
            select.set("qualify", None)
        schema = self._resolve(table, to_spark_sql(unfiltered.limit(0)))
        return [field.name for field in schema.fields]

    def _resolve(self, table: exp.Table, probe: str) -> Any:
        """The schema of the query (``probe`` returns no rows), resolved on the session the
        refreshes run on, where the user's temporary views and functions do not exist."""
        try:
            return self.engine.refresh_session.sql(probe).schema
        except Exception as failure:
            problem = first_line(failure)
            try:
                self.engine.sql(probe)
            except Exception:
                raise DynamicTableError(
                    f"the query of {table_key(table)} does not resolve: {problem}"
                ) from failure
            raise DynamicTableError(
                f"the query of {table_key(table)} uses something of this session only (a"
                " temporary view or function): refreshes run on their own session, where it"
                f" does not exist ({problem}); use a permanent table or function"
            ) from failure

    def qualify_source(self, table: exp.Table, reference: exp.Table) -> str:
        """Check a source ``table``'s definition reads (``check_source``), qualify the
        reference in place with its database (and catalog; a path made absolute), and
        return the source's key."""
        source = self.check_source(table, reference)
        reference.set("db", source.args.get("db"))
        if source.args.get("catalog") is not None:
            reference.set("catalog", source.args.get("catalog"))
        if path_of(source) is not None:
            reference.set("this", source.this.copy())
        return table_key(source)

    def check_source(self, table: exp.Table, reference: exp.Table) -> exp.Table:
        if reference.args.get("version") is not None:
            raise DynamicTableError(
                f"the query reads {to_spark_sql(reference)} at a fixed version; a dynamic table"
                " reads its sources at each refresh's data timestamp"
            )
        path = path_of(reference)
        if path is not None:
            return self.check_path_source(path)
        _check_not_files(reference)
        bare = exp.table_(
            reference.name, db=reference.db or None, catalog=reference.catalog or None
        )
        if self.engine.is_temporary_view(bare):
            raise DynamicTableError(
                f"the query reads the temporary view {reference.name}: refreshes run on their"
                " own session, where it does not exist; use a table"
            )
        source = self.engine.qualify(bare)
        if table_key(source) == table_key(table):
            raise DynamicTableError(f"{table_key(table)} cannot read itself")
        if not self.engine.table_exists(source):
            raise DynamicTableError(f"the query reads {table_key(source)}, which does not exist")
        if self.engine.is_view(source):
            raise DynamicTableError(
                f"the query reads the view {table_key(source)}; dynamic tables read tables"
                " (so that each refresh can pin a version): select from the view's tables"
            )
        return source

    def check_path_source(self, path: str) -> exp.Table:
        """The source ``delta.`path``` with the path made absolute (a dynamic table must not
        depend on the working folder of whoever refreshes it), checked to be a Delta table
        this engine reads."""
        if not self.engine.table_format.reads_delta_paths:
            raise DynamicTableError(
                f"the query reads delta.`{path}`, a Delta table named by its path, but this"
                f" engine's tables are {self.engine.table_format.name}: read a table of its"
                " catalog instead"
            )
        source = path_table(absolute_path(path))
        if not self.engine.table_exists(source):
            raise DynamicTableError(
                f"the query reads {table_key(source)}, but no Delta table is at"
                f" {path_of(source)}: check the path, or create the table there first"
            )
        return source

    def check_upstreams(
        self, table: exp.Table, analyzed: AnalyzedQuery, lag: TargetLag | None
    ) -> None:
        own = table_key(table)
        # The definitions read, by table key: each is read once however many paths meet.
        definitions: dict[str, Definition | None] = {
            key: Definition.from_properties(properties)
            for key, properties in analyzed.source_properties.items()
        }
        for upstream in analyzed.upstreams:
            path = self._path_to(upstream, own, [own, upstream], definitions)
            if path is not None:
                raise DynamicTableError(
                    "the dynamic tables would form a cycle: " + " -> ".join(path)
                )
            definition = self._definition(upstream, definitions)
            assert definition is not None
            check_lag_order(own, lag, upstream, definition)

    def _definition(self, key: str, known: dict[str, Definition | None]) -> Definition | None:
        """The definition of ``key``, read unless ``known`` holds it."""
        if key not in known:
            known[key] = self.engine.definition(key_to_table(key))
        return known[key]

    def _path_to(
        self, start: str, goal: str, path: list[str], known: dict[str, Definition | None]
    ) -> list[str] | None:
        definition = self._definition(start, known)
        if definition is None:
            return None
        for upstream in definition.upstreams:
            if upstream == goal:
                return [*path, goal]
            if upstream not in path:
                found = self._path_to(upstream, goal, [*path, upstream], known)
                if found is not None:
                    return found
        return None

    def enable_change_tracking(self, analyzed: AnalyzedQuery) -> str | None:
        problems = []
        for key in analyzed.sources:
            problem = self.engine.table_format.enable_change_tracking(
                self.engine.session, key_to_table(key), analyzed.source_properties.get(key)
            )
            if problem is not None:
                problems.append(problem)
        return "; ".join(problems) or None


def resolve_group_by_all(tree: exp.Expr) -> None:
    """Replace, in place, each ``GROUP BY ALL`` by its keys, as Spark resolves it: every
    SELECT item without an aggregate (``SELECT g, upper(h) AS u, max(v) ... GROUP BY ALL``
    groups by ``g, upper(h)``); with none, the query is a global aggregate. The refresh
    derives a GROUP BY's keys from its expressions. Left as written where Spark's reading
    is not told here: a star, a window, a function not known to be or not be an aggregate,
    or an item without a column (a constant key, which GROUP BY reads as a position)."""
    for select in tree.find_all(exp.Select):
        group = select.args.get("group")
        if group is None or not group.args.get("all") or group.expressions:
            continue
        items = [projection.unalias() for projection in select.expressions]
        if any(item.is_star or item.find(exp.Window, exp.Anonymous) is not None for item in items):
            continue
        keys = [item for item in items if item.find(exp.AggFunc) is None]
        if any(key.find(exp.Column) is None for key in keys):
            continue
        if keys:
            select.set("group", exp.Group(expressions=[key.copy() for key in keys]))
        else:
            select.set("group", None)


def resolve_group_by_aliases(tree: exp.Expr, columns_of: Callable[[str], set[str] | None]) -> None:
    """Replace, in place, each GROUP BY key that names an output alias (Spark's
    ``spark.sql.groupByAliases``) by the aliased expression: ``SELECT upper(g) AS u ...
    GROUP BY u`` groups by ``upper(g)``. As in Spark, a name that is a column of the
    SELECT's inputs is that column (``SELECT upper(g) AS g ... GROUP BY g`` groups by the
    input g); where an input's columns cannot be told, nothing is replaced. The refresh
    derives a GROUP BY's keys from the input rows, where an alias does not exist."""
    for scope in traverse_scope(tree):
        select = scope.expression
        if not isinstance(select, exp.Select) or select.args.get("group") is None:
            continue
        inputs = _input_columns(scope, columns_of)
        if inputs is None:
            continue
        aliased = {
            projection.alias.lower(): projection.this
            for projection in select.expressions
            if isinstance(projection, exp.Alias)
        }
        for key in select.args["group"].expressions:
            named = key.name.lower() if isinstance(key, exp.Column) and not key.table else None
            if named is not None and named in aliased and named not in inputs:
                key.replace(aliased[named].copy())


# The column of a QUALIFY's condition in the derived table that filters by it.
QUALIFY_COLUMN = "__dt_qualify"


def resolve_qualify(
    tree: exp.Query,
    columns_of: Callable[[str], set[str] | None],
    top_names: Callable[[], list[str]],
) -> exp.Query:
    """``tree`` with each ``QUALIFY c`` (a Snowflake form Spark 3.5 lacks) as Spark runs
    it: the SELECT without it, with ``c`` as one more column, as a derived table filtered
    on that column, which then gives the SELECT's own columns by name (its DISTINCT, ORDER
    BY and LIMIT after the filter, where QUALIFY comes before them). A name in ``c`` that
    is an output alias and no input column is the aliased expression (``QUALIFY rn = 1``).
    The top SELECT's column names are the engine's (``top_names``: a star, an expression
    without an alias); a nested SELECT's must be plain columns or aliases, else it is
    refused. (sqlglot's own rewrite, which generating Spark SQL would otherwise apply,
    leaves its helper column in a ``SELECT *`` and reads a qualified ``t.v`` as an output
    alias ``v``.)"""
    for scope in traverse_scope(tree):
        select = scope.expression
        if not isinstance(select, exp.Select) or select.args.get("qualify") is None:
            continue
        top = select is tree
        names = top_names() if top else _item_names(select)
        filtered = _filtered_by_qualify(select, names, _input_columns(scope, columns_of))
        if top:
            tree = filtered
        else:
            select.replace(filtered)
    return tree


def _item_names(select: exp.Select) -> list[str]:
    """The column names of a nested SELECT with QUALIFY: its items must name themselves."""
    items = select.expressions
    if any(item.is_star or not isinstance(item, (exp.Alias, exp.Column)) for item in items):
        raise DynamicTableError(
            "a subquery with QUALIFY must name each of its columns (a column or an"
            " expression AS name, no *): move QUALIFY to the outer query or name them"
        )
    return [item.alias_or_name for item in items]


def _filtered_by_qualify(
    select: exp.Select, names: list[str], inputs: set[str] | None
) -> exp.Select:
    """``select`` (with QUALIFY) as a derived table with the condition as a column,
    filtered on it; see ``resolve_qualify``."""
    inner = select.copy()
    condition = inner.args["qualify"].this
    inner.set("qualify", None)
    aliased = {
        item.alias.lower(): item.this for item in inner.expressions if isinstance(item, exp.Alias)
    }
    for column in list(condition.find_all(exp.Column)):
        name = column.name.lower()
        if column.table or name not in aliased or inputs is None or name in inputs:
            continue
        column.replace(aliased[name].copy())
    moved = {arg: inner.args.get(arg) for arg in ("with_", "distinct", "order", "limit", "offset")}
    for arg in moved:
        inner.set(arg, None)
    if (moved["limit"] is not None or moved["offset"] is not None) and moved["order"] is not None:
        _check_orders_by_outputs(moved["order"], names)
    inner.set(
        "expressions", [*inner.expressions, exp.alias_(condition, QUALIFY_COLUMN, quoted=True)]
    )
    outer = exp.select(
        *[exp.column(name, table="__dt_qualified", quoted=True) for name in names]
    ).from_(inner.subquery("__dt_qualified"))
    outer = outer.where(exp.column(QUALIFY_COLUMN, table="__dt_qualified", quoted=True))
    for arg, value in moved.items():
        if value is not None and (arg != "order" or moved["limit"] or moved["offset"]):
            outer.set(arg, value)
    return outer


def _check_orders_by_outputs(order: exp.Order, names: list[str]) -> None:
    """A LIMIT after QUALIFY orders the filtered rows: only by the SELECT's columns."""
    known = {name.lower() for name in names}
    for key in order.expressions:
        value = key.this if isinstance(key, exp.Ordered) else key
        if not isinstance(value, exp.Column) or value.name.lower() not in known:
            raise DynamicTableError(
                "ORDER BY … LIMIT after QUALIFY may only order by the query's own columns:"
                f" {value.sql(dialect='spark')} is not one of them"
            )


def _input_columns(scope: Scope, columns_of: Callable[[str], set[str] | None]) -> set[str] | None:
    """The column names a SELECT's FROM and JOINs give it, or None where one of them
    cannot be told (a star in a derived table, a source unknown)."""
    names: set[str] = set()
    for source in scope.sources.values():
        if isinstance(source, exp.Table):
            columns = columns_of(table_key(source))
            if columns is None:
                return None
            names |= columns
        elif isinstance(source, Scope) and isinstance(source.expression, exp.Select):
            if any(projection.is_star for projection in source.expression.expressions):
                return None
            names |= {name.lower() for name in source.expression.named_selects}
        else:
            return None
    return names


def frozen_predicate(predicate: str, columns: tuple[tuple[str, str], ...]) -> str:
    """A FROZEN WHERE predicate checked against the table's columns, as Spark SQL."""
    check_frozen_predicate(predicate, [name for name, _ in columns])
    return to_spark_predicate(predicate)


def planning_extra(analyzed: AnalyzedQuery) -> dict[str, str]:
    """The query the planner judges, recorded only where the stored query wraps it."""
    if analyzed.planning_query == analyzed.query:
        return {}
    return {"planning_query": analyzed.planning_query}


def check_lag_order(
    own: str, own_lag: TargetLag | None, upstream: str, upstream_definition: Definition
) -> None:
    """A dynamic table may not be fresher than what it reads."""
    if own_lag is None or own_lag.downstream or own_lag.seconds is None:
        return
    if upstream_definition.downstream or upstream_definition.target_lag_seconds is None:
        return
    if own_lag.seconds < upstream_definition.target_lag_seconds:
        raise DynamicTableError(
            f"the target lag of {own} ({own_lag.seconds} s) is shorter than that of its"
            f" upstream {upstream} ({upstream_definition.target_lag_text}): a dynamic table"
            " cannot be fresher than what it reads; use a lag of at least"
            f" {upstream_definition.target_lag_text}, or TARGET_LAG = DOWNSTREAM"
        )


def _check_reserved_names(tree: exp.Query, source_columns: dict[str, set[str] | None]) -> None:
    """Refuse a query naming anything (a column, an alias, a CTE) with the reserved
    prefix, or reading a source that has a column of such a name."""
    for identifier in tree.find_all(exp.Identifier):
        if identifier.name.lower().startswith(RESERVED_PREFIX):
            raise DynamicTableError(
                f"the query names {identifier.name}: names starting with {RESERVED_PREFIX}"
                " are reserved for the refresh's own columns; choose another name"
            )
    for key, columns in source_columns.items():
        reserved = sorted(c for c in columns or () if c.startswith(RESERVED_PREFIX))
        if reserved:
            raise DynamicTableError(
                f"source {key} has a column {reserved[0]}: names starting with"
                f" {RESERVED_PREFIX} are reserved for the refresh's own columns; rename it"
                " (ALTER TABLE ... RENAME COLUMN) or read the source through a table that"
                " does not have it"
            )


def _check_reserved_output(names: list[str]) -> None:
    """Refuse an output column (of the column list) with the reserved prefix."""
    for name in names:
        if name.lower().startswith(RESERVED_PREFIX):
            raise DynamicTableError(
                f"column {name} of the dynamic table: names starting with {RESERVED_PREFIX}"
                " are reserved for the refresh's own columns; choose another name"
            )


def _check_distinct_names(names: list[str]) -> None:
    seen: set[str] = set()
    for name in names:
        if name.lower() in seen:
            raise DynamicTableError(
                f"the query returns two columns named {name}: give them distinct aliases"
            )
        seen.add(name.lower())


def _apply_column_list(
    query: str,
    output: list[tuple[str, str]],
    columns: tuple[ColumnDef, ...] | None,
    tree: exp.Query,
) -> tuple[str, list[tuple[str, str]]]:
    """The stored query: explicit output columns (a ``SELECT *`` stays as it was at
    CREATE even if a source gains columns), renamed and cast as the column list says."""
    has_star = any(
        isinstance(item, exp.Star) or (isinstance(item, exp.Column) and item.is_star)
        for select in tree.find_all(exp.Select)
        for item in select.expressions
    )
    if columns is None and not has_star:
        return query, output
    if columns is not None and len(columns) != len(output):
        raise DynamicTableError(
            f"the column list names {len(columns)} columns but the query returns {len(output)}"
            f" ({', '.join(name for name, _ in output)})"
        )
    projections: list[exp.Expr] = []
    final: list[tuple[str, str]] = []
    for index, (name, type_sql) in enumerate(output):
        value: exp.Expr = exp.column(name, table="dt_query", quoted=True)
        new_name, new_type = name, type_sql
        if columns is not None:
            new_name = columns[index].name
            declared = columns[index].type_sql
            if declared is not None:
                data_type = exp.DataType.build(declared, dialect="spark")
                new_type = to_spark_sql(data_type).lower()
                value = exp.cast(value, data_type)
        projections.append(exp.alias_(value, new_name, quoted=True))
        final.append((new_name, new_type))
    _check_distinct_names([name for name, _ in final])
    wrapped = exp.select(*projections).from_(
        exp.Subquery(
            this=parse_one(query), alias=exp.TableAlias(this=exp.to_identifier("dt_query"))
        )
    )
    return to_spark_sql(wrapped), final


# Spark's formats of files read by path (``parquet.`/data/p```, spark.sql.runSQLOnFiles),
# which have no versions: a dynamic table cannot read them.
_FILE_FORMATS = frozenset({"parquet", "csv", "json", "orc", "avro", "text"})


def _check_not_files(reference: exp.Table) -> None:
    """Refuse files named by their path: they have no versions, so a refresh could not
    pin them nor read what changed."""
    kind = reference.db.lower()
    if kind not in _FILE_FORMATS or not is_path(reference.name):
        return
    raise DynamicTableError(
        f"the query reads {kind}.`{reference.name}`, files that have no versions: a dynamic"
        " table reads tables, so that each refresh can pin their versions; copy the files"
        f" into a Delta table (CREATE TABLE name AS SELECT * FROM {kind}.`{reference.name}`)"
        " and select from that table"
    )


def absolute_path(path: str) -> str:
    """A path as a source records it: a URI (``s3://…``, ``file:/…``) as written, a local
    path made absolute and normal (relative paths are read from the working folder, as
    Spark reads them).

    >>> absolute_path("/data/./events/")
    '/data/events'
    >>> absolute_path("s3://bucket/Events")
    's3://bucket/Events'
    """
    if _URI_SCHEME.match(path):
        return path
    return os.path.abspath(path)


_URI_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
