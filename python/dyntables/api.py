"""``DynamicTables``: the one object users talk to; the CLI and magics are shells over it.

``sql(text)`` runs a script statement by statement. Dynamic-table statements go to the
lifecycle; ordinary SQL goes to the session byte-exact, unless it names a dynamic table
or materialized view, or ``information_schema``'s dynamic-table functions: then it is
checked (DML into a dynamic table is refused), stale materialized views it reads are
refreshed first, and the information_schema functions are rewritten into queries over
the system tables.
"""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from dyntables.catalog import Definition, NameCache, ObjectKind, key_to_table, table_key
from dyntables.ddl.lifecycle import Lifecycle
from dyntables.engine import Engine
from dyntables.errors import DynamicTableError, first_line
from dyntables.history import SYSTEM_SCHEMA, SystemTables, new_id, utc_now
from dyntables.parser.recognizer import leading_words
from dyntables.planner import Plan, explain_rows
from dyntables.planner.predicates import bind_current_time, is_frozen
from dyntables.refresh import RefreshResult
from dyntables.scheduler.functions import COLUMNS as SCHEDULER_FUNCTIONS
from dyntables.sql.columns import qualified
from dyntables.sql.dialect import parse_one, to_spark_sql
from dyntables.sql.literals import typed_literal
from dyntables.statements import (
    AlterDynamicTable,
    CreateDynamicTable,
    CreateMaterializedView,
    DescribeDynamicTable,
    DropDynamicTable,
    DropMaterializedView,
    ExplainCreateDynamicTable,
    ExplainDynamicTable,
    PassThrough,
    RefreshMaterializedView,
    ShowDynamicTables,
    Statement,
)

_REFRESH_RESULT_SCHEMA = (
    "name STRING, action STRING, reason STRING, state STRING, data_timestamp TIMESTAMP,"
    " rows_inserted BIGINT, rows_deleted BIGINT"
)
# SHOW DYNAMIC TABLES: Snowflake's columns (those that mean something here), FULL or not.
_SHOW_COLUMNS = (
    ("created_on", "STRING"),
    ("name", "STRING"),
    ("database_name", "STRING"),
    ("schema_name", "STRING"),
    ("cluster_by", "STRING"),
    ("rows", "BIGINT"),
    ("target_lag", "STRING"),
    ("refresh_mode", "STRING"),
    ("refresh_mode_reason", "STRING"),
    ("warehouse", "STRING"),
    ("comment", "STRING"),
    ("text", "STRING"),
    ("scheduling_state", "STRING"),
    ("suspend_reason", "STRING"),
    ("data_timestamp", "TIMESTAMP"),
    ("initialize", "STRING"),
    ("immutable_where", "STRING"),
    ("kind", "STRING"),
)
_SHOW_SCHEMA = ", ".join(f"{name} {kind}" for name, kind in _SHOW_COLUMNS)
# What a terminal prints of SHOW DYNAMIC TABLES (the dyntables-sql shell, the magics): the
# columns of the full set that fit a line. SHOW FULL prints every column.
SHOW_TERMINAL_COLUMNS = (
    "name",
    "schema_name",
    "target_lag",
    "refresh_mode",
    "scheduling_state",
    "data_timestamp",
    "rows",
)
# information_schema.materialized_views; invalid / invalid_reason as in Snowflake's
# SHOW MATERIALIZED VIEWS.
_MATERIALIZED_VIEW_COLUMNS = (
    ("table_catalog", "STRING"),
    ("table_schema", "STRING"),
    ("table_name", "STRING"),
    ("last_refresh_time", "STRING"),
    ("refresh_watermark", "STRING"),
    ("is_stale", "BOOLEAN"),
    ("invalid", "BOOLEAN"),
    ("invalid_reason", "STRING"),
)
_DML = (exp.Insert, exp.Update, exp.Delete, exp.Merge, exp.TruncateTable)
_WRITE_WORDS = {"INSERT", "UPDATE", "DELETE", "MERGE", "TRUNCATE"}


if TYPE_CHECKING:
    from dyntables.scheduler.daemon import Service
    from dyntables.scheduler.runner import EngineRunner


class DynamicTables:
    """Dynamic tables on a SparkSession, or on the embedded engine when given none.

    >>> import tempfile
    >>> dt = DynamicTables(warehouse=tempfile.mkdtemp())
    >>> dt.sql("SELECT 1 AS one").collect()
    [Row(one=1)]
    """

    def __init__(
        self,
        session: Any = None,
        *,
        warehouse: str | Path | None = None,
        table_format: str | None = None,
    ) -> None:
        self.engine = Engine.create(session, warehouse=warehouse, table_format=table_format)
        self.system = SystemTables(self.engine)
        self.names = NameCache()
        self.lifecycle = Lifecycle(self.engine, self.system, self.names)
        self.last_statement_id: str | None = None
        self._scheduler: Any = None  # dyntables.scheduler.daemon.Background, once started

    @property
    def session(self) -> Any:
        """The session statements run on (a SparkSession, or sparkshim's)."""
        return self.engine.session

    def sql(self, text: str) -> Any:
        """Run one or more ``;``-separated statements; the last one's DataFrame."""
        from dyntables.parser import parse  # lazy: loads ANTLR

        result: Any = None
        for statement in parse(text):
            result = self._run(statement, text)
        if result is None:
            raise DynamicTableError("no SQL statement to run: the text is empty")
        return result

    def run(self, statements: list[Statement], script: str) -> Any:
        """Run ``statements`` parsed from ``script``; the last one's DataFrame, or None when
        there is none (``dyntables.install`` parses first, so that a lone ordinary
        statement reaches Spark with the caller's exact text)."""
        result: Any = None
        for statement in statements:
            result = self._run(statement, script)
        return result

    # ---- the scheduler ----

    def start(self, **options: Any) -> None:
        """Keep every dynamic table within its target lag from a background thread of this
        process (refreshes run on their own session); ``options`` go to
        ``dyntables.scheduler.daemon.Service`` (``lease_seconds``, ``config``, …)."""
        from dyntables.scheduler.daemon import Background  # lazy: starts on request

        if self._scheduler is not None and self._scheduler.running:
            raise DynamicTableError("the scheduler is already running: call stop() first")
        self._scheduler = Background(self.scheduler_service(**options))
        self._scheduler.start()

    def scheduler_service(self, **options: Any) -> Service:
        """The scheduler of these tables with its lease, handed what it uses (``options``
        go to ``Service``: ``lease_seconds``, ``config``, …)."""
        from dyntables.scheduler.daemon import Service

        return Service(
            self.engine, self.system, self.lifecycle, self.lifecycle.refresher, **options
        )

    def scheduler_runner(self) -> EngineRunner:
        """What the scheduler runs on these tables: their graph, their refreshes."""
        from dyntables.scheduler.runner import EngineRunner

        return EngineRunner(self.engine, self.system, self.lifecycle, self.lifecycle.refresher)

    def stop(self, timeout: float | None = 60.0) -> None:
        """Stop the background scheduler: the refresh in flight finishes, the lease is
        released."""
        if self._scheduler is None:
            return
        scheduler, self._scheduler = self._scheduler, None
        scheduler.stop(timeout)
        if scheduler.error is not None:
            raise DynamicTableError(f"the scheduler had stopped on an error: {scheduler.error}")

    # ---- dispatch ----

    def _run(self, statement: Statement, script: str) -> Any:
        statement_id = new_id()
        self.last_statement_id = statement_id
        started = utc_now()
        if isinstance(statement, PassThrough):
            result = self._pass_through(statement.sql)
            self._log_write(statement_id, statement.sql, started)
            return result
        span = getattr(statement, "span", None)
        text = script[span.start : span.stop] if span is not None else ""
        try:
            with self.lifecycle.refresher.context.reading_once():  # refresh/reads.py
                return self._run_ours(statement, text, statement_id)
        except DynamicTableError:
            raise
        except Exception as failure:  # the engine's error, wrapped with its cause kept
            raise DynamicTableError(f"{first_line(failure)}") from failure

    def _log_write(self, statement_id: str, sql: str, started: datetime.datetime) -> None:
        """Record the table version an ordinary write committed, for ``STATEMENT =>``."""
        words = leading_words(sql, 1)
        if not words or words[0] not in _WRITE_WORDS:
            return
        try:
            tree = parse_one(sql)
        except DynamicTableError:
            return
        committed = {}
        for target in _dml_targets(tree) if isinstance(tree, _DML) else []:
            table = self.engine.qualify(target)
            version = self.engine.table_format.current_version(self.engine.session, table)
            if version is not None:
                committed[table_key(table)] = version
        self.system.record_statement(statement_id, sql, started, committed)

    def _run_ours(self, statement: Statement, text: str, statement_id: str) -> Any:
        lifecycle = self.lifecycle
        if isinstance(statement, CreateDynamicTable):
            lifecycle.create(statement, text, statement_id)
            return self._status(f"Dynamic table {statement.name} successfully created.")
        if isinstance(statement, CreateMaterializedView):
            lifecycle.create_materialized_view(statement, text, statement_id)
            return self._status(f"Materialized view {statement.name} successfully created.")
        if isinstance(statement, AlterDynamicTable):
            refreshed = lifecycle.alter(statement, statement_id)
            if refreshed is not None:
                return self._refresh_frame(refreshed)
            return self._status("Statement executed successfully.")
        if isinstance(statement, DropDynamicTable):
            lifecycle.drop(statement.name, statement.if_exists, ObjectKind.DYNAMIC_TABLE)
            return self._status(f"{statement.name} successfully dropped.")
        if isinstance(statement, DropMaterializedView):
            lifecycle.drop(statement.name, statement.if_exists, ObjectKind.MATERIALIZED_VIEW)
            return self._status(f"{statement.name} successfully dropped.")
        if isinstance(statement, RefreshMaterializedView):
            refreshed = lifecycle.refresh_materialized_view(statement.name, statement_id)
            return self._refresh_frame(refreshed)
        if isinstance(statement, ShowDynamicTables):
            return self._show(statement)
        if isinstance(statement, DescribeDynamicTable):
            return self._describe(statement)
        if isinstance(statement, ExplainDynamicTable):
            return self._explain(lifecycle.explain(statement.name))
        if isinstance(statement, ExplainCreateDynamicTable):
            return self._explain(lifecycle.explain_create(statement.create))
        raise DynamicTableError(f"{type(statement).__name__} is not supported")

    # ---- ordinary SQL ----

    def _pass_through(self, sql: str) -> Any:
        names, pattern = self.names.get(self.lifecycle.managed_names)
        lowered = sql.lower()
        mentions_ours = pattern is not None and pattern.search(sql) is not None
        declares_key = "constraint" in lowered and "rely" in lowered
        if not mentions_ours and not declares_key and "information_schema" not in lowered:
            return self.engine.sql(sql)  # byte-exact: the common case
        try:
            tree = parse_one(sql)
        except DynamicTableError:
            return self.engine.sql(sql)  # not ours to judge: Spark reports its own error
        constraint = _rely_constraint(tree)
        if constraint is not None and self._managed_key(constraint[0], names):
            self.lifecycle.add_rely_constraint(self.engine.qualify(constraint[0]), constraint[1])
            return self._status("Statement executed successfully.")
        if constraint is not None and self.lifecycle.add_source_key(*constraint):
            return self._status("Statement executed successfully.")
        rewritten = self._check_and_rewrite(tree, names)
        if rewritten is None:
            return self.engine.sql(sql)
        return self.engine.sql(to_spark_sql(rewritten))

    def _check_and_rewrite(self, tree: exp.Expr, names: set[str]) -> exp.Expr | None:
        """None when ``tree`` may run as written; else the tree to run instead."""
        if isinstance(tree, _DML):
            for target in _dml_targets(tree):
                if self._managed_key(target, names):
                    raise DynamicTableError(
                        f"{self._managed_key(target, names)} is a dynamic table or materialized"
                        " view: its rows come from its query; change the sources instead (DML"
                        " into it is refused)"
                    )
        if isinstance(tree, exp.Drop) and str(tree.args.get("kind", "")).upper() == "TABLE":
            for target in tree.args.get("tables") or [tree.this]:
                if isinstance(target, exp.Table) and self._managed_key(target, names):
                    raise DynamicTableError(
                        f"{self._managed_key(target, names)} is a dynamic table: use DROP DYNAMIC"
                        " TABLE (or DROP MATERIALIZED VIEW)"
                    )
        altered = tree.this if isinstance(tree, exp.Alter) else None
        if isinstance(altered, exp.Table) and self._managed_key(altered, names):
            raise DynamicTableError(
                f"{self._managed_key(altered, names)} is a dynamic table: use ALTER DYNAMIC TABLE"
            )
        changed = self._rewrite_information_schema(tree)
        changed = self._rewrite_frozen_flags(tree, names) or changed
        self._refresh_stale_materialized_views(tree, names)
        return tree if changed else None

    def _rewrite_frozen_flags(self, tree: exp.Expr, names: set[str]) -> bool:
        """``METADATA$IS_FROZEN``: whether a row of a dynamic table is in its frozen region
        as of the table's last refresh (FALSE where the predicate is NULL, and for a table
        without a region)."""
        flags = [c for c in tree.find_all(exp.Column) if c.name.upper() == FROZEN_FLAG]
        for flag in flags:
            reference = self._flagged_table(flag, names)
            table = self.engine.qualify(reference)
            definition = self.engine.definition(table)
            assert definition is not None
            if definition.frozen_where is None:
                flag.replace(exp.false())
                continue
            watermark = self.lifecycle.refresher.last_watermark(table).watermark
            as_of = (
                datetime.datetime.fromisoformat(watermark.data_timestamp)
                if watermark is not None
                else utc_now()
            )
            predicate = bind_current_time(parse_one(definition.frozen_where), as_of)
            predicate = qualified(predicate, reference.alias_or_name)
            flag.replace(exp.paren(is_frozen(predicate)))
        return bool(flags)

    def _flagged_table(self, flag: exp.Column, names: set[str]) -> exp.Table:
        """The dynamic table a METADATA$IS_FROZEN reference reads (its SELECT's only one,
        or the one its qualifier names)."""
        scope = flag.find_ancestor(exp.Select)
        tables = [
            t
            for t in (scope.find_all(exp.Table) if scope is not None else [])
            if t.find_ancestor(exp.Select) is scope and self._managed_key(t, names)
        ]
        if flag.table:
            tables = [t for t in tables if t.alias_or_name.lower() == flag.table.lower()]
        if len(tables) != 1:
            raise DynamicTableError(
                f"{FROZEN_FLAG} belongs to a dynamic table read in the same SELECT"
                + (": qualify it with the table's name or alias" if len(tables) > 1 else "")
            )
        return tables[0]

    def _managed_key(self, table: exp.Table, names: set[str]) -> str | None:
        key = table_key(self.engine.qualify(table))
        return key if key in names else None

    def _refresh_stale_materialized_views(self, tree: exp.Expr, names: set[str]) -> None:
        for reference in tree.find_all(exp.Table):
            key = self._managed_key(reference, names)
            if key is None:
                continue
            table = self.engine.qualify(reference)
            definition = self.engine.definition(table)
            if definition is None or definition.kind is not ObjectKind.MATERIALIZED_VIEW:
                continue
            # Concurrent stale readers share one refresh: the second finds it fresh.
            with self.engine.refresh_lock:
                if self.lifecycle.is_stale(table, definition):
                    self.lifecycle.refresher.refresh(table, definition, "MANUAL")

    def _rewrite_information_schema(self, tree: exp.Expr) -> bool:
        changed = False
        for reference in list(tree.find_all(exp.Table)):
            call = _table_function_call(reference)
            if call is None:
                continue
            if (
                isinstance(call, exp.Anonymous)
                and call.name.lower() == "dynamic_table_refresh_history"
            ):
                reference.replace(self._refresh_history_query(call, reference.alias))
                changed = True
            elif isinstance(call, exp.Anonymous) and call.name.lower() in SCHEDULER_FUNCTIONS:
                reference.replace(self._scheduler_function_query(call, reference.alias))
                changed = True
            elif reference.name.lower() == "materialized_views":
                reference.replace(self._materialized_views_query(reference.alias))
                changed = True
        return changed

    def _refresh_history_query(self, call: exp.Anonymous, alias: str) -> exp.Expr:
        self.system.ensure()
        self.system.read_fresh(self.engine.session)  # rows other processes recorded too
        arguments = {
            kwarg.this.name.upper(): kwarg.expression
            for kwarg in call.expressions
            if isinstance(kwarg, exp.Kwarg)
        }
        query = exp.select(
            "name",
            "schema_name",
            "state",
            "state_message",
            "query_id",
            "refresh_trigger",
            "refresh_action",
            "refresh_action_reason",
            "data_timestamp",
            "refresh_start_time",
            "refresh_end_time",
            "rows_inserted",
            "rows_deleted",
            "table_version",
            "statement_id",
        ).from_(exp.table_("refresh_history", db=SYSTEM_SCHEMA))
        if "NAME" in arguments:
            # A name without a schema is one of the current database, as in a query.
            table = self.engine.qualify(exp.to_table(arguments["NAME"].name))
            for column, value in (("name", table.name), ("schema_name", table.db)):
                query = query.where(
                    exp.func("lower", exp.column(column)).eq(exp.Literal.string(value.lower()))
                )
        if "NAME_PREFIX" in arguments:
            prefix = arguments["NAME_PREFIX"].name.lower()
            query = query.where(
                exp.func(
                    "startswith", exp.func("lower", exp.column("name")), exp.Literal.string(prefix)
                )
            )
        if "ERROR_ONLY" in arguments and arguments["ERROR_ONLY"].sql().upper() == "TRUE":
            query = query.where(exp.column("state").eq(exp.Literal.string("FAILED")))
        query = query.order_by("refresh_start_time DESC")
        if "RESULT_LIMIT" in arguments:
            query = query.limit(int(arguments["RESULT_LIMIT"].name))
        return exp.Subquery(
            this=query, alias=exp.TableAlias(this=exp.to_identifier(alias or "refresh_history"))
        )

    def _scheduler_function_query(self, call: exp.Anonymous, alias: str) -> exp.Expr:
        """``dynamic_tables()`` (lag accounting) and ``dynamic_table_graph_history()``
        (inputs and state), as rows computed from the catalog and the refresh history."""
        from dyntables.scheduler import functions, graph

        function = call.name.lower()
        arguments = {
            kwarg.this.name.upper(): kwarg.expression
            for kwarg in call.expressions
            if isinstance(kwarg, exp.Kwarg)
        }
        wanted = None
        if "NAME" in arguments:
            wanted = table_key(self.engine.qualify(exp.to_table(arguments["NAME"].name)))
        view = graph.build(self.engine, self.system, self.lifecycle)
        rows = functions.rows(function, view, wanted)
        return _typed_rows(rows, functions.COLUMNS[function], alias or function)

    def graph(self) -> Any:
        """The graph of dynamic tables with each one's lag, state and last refresh
        (``dyntables.scheduler.graph.DagView``): prints as text, shows as a picture in
        notebooks, ``.save("dag.svg")`` or ``.save("dag.png")``."""
        from dyntables.scheduler import graph

        return graph.build(self.engine, self.system, self.lifecycle)

    def _materialized_views_query(self, alias: str) -> exp.Expr:
        """One row per materialized view; one that cannot be read (a source was dropped)
        gets its own row, ``invalid`` with the reason, instead of failing the listing."""
        rows = []
        for table, definition in self.lifecycle.managed_tables():
            if definition.kind is not ObjectKind.MATERIALIZED_VIEW:
                continue
            parts = table_key(table).split(".")
            watermark = self.lifecycle.watermark_of(table)
            problem = self._materialized_view_problem(table, definition)
            stale = None if problem is not None else self.lifecycle.is_stale(table, definition)
            rows.append(
                [
                    parts[-3] if len(parts) > 2 else "spark_catalog",
                    parts[-2],
                    parts[-1],
                    watermark.data_timestamp if watermark else None,
                    watermark.to_json() if watermark else None,
                    stale,
                    problem is not None,
                    problem,
                ]
            )
        return _typed_rows(rows, _MATERIALIZED_VIEW_COLUMNS, alias or "materialized_views")

    def _materialized_view_problem(self, table: exp.Table, definition: Definition) -> str | None:
        """Why a materialized view cannot be refreshed now (a source that no longer exists),
        or None when it can."""
        missing = [
            key for key in definition.sources if not self.engine.table_exists(key_to_table(key))
        ]
        if missing:
            return (
                f"source {', '.join(missing)} does not exist: recreate it, or replace the view"
                " (CREATE OR REPLACE MATERIALIZED VIEW)"
            )
        return None

    # ---- results ----

    def _frame(self, rows: list[tuple[Any, ...]], schema: str) -> Any:
        return self.engine.session.createDataFrame(rows, schema)

    def _status(self, message: str) -> Any:
        return self._frame([(message,)], "status STRING")

    def _refresh_frame(self, result: RefreshResult) -> Any:
        row = (
            result.name,
            result.action,
            result.reason,
            result.state,
            result.data_timestamp,
            result.rows_inserted,
            result.rows_deleted,
        )
        return self._frame([row], _REFRESH_RESULT_SCHEMA)

    def _show(self, statement: ShowDynamicTables) -> Any:
        database = (
            None
            if statement.in_account
            else (
                statement.in_schema.name
                if statement.in_schema is not None
                else self.engine.current_database()
            )
        )
        rows = []
        refreshed = self.system.latest_data_timestamps()
        for table, definition in self.lifecycle.managed_tables(database):
            parts = table_key(table).split(".")
            if definition.kind is not ObjectKind.DYNAMIC_TABLE:
                continue
            if statement.like is not None and not _like(parts[-1], statement.like):
                continue
            watermark = self.lifecycle.watermark_of(table)
            count = self._row_count(table)
            rows.append(
                (
                    definition.created_on,
                    parts[-1],
                    parts[-3] if len(parts) > 2 else "spark_catalog",
                    parts[-2],
                    ", ".join(definition.cluster_by),
                    int(count),
                    definition.target_lag_text,
                    definition.refresh_mode,
                    definition.refresh_mode_reason,
                    definition.warehouse,
                    definition.comment,
                    definition.text,
                    definition.scheduling_state.value,
                    definition.suspend_reason,
                    _data_timestamp_shown(
                        watermark.data_timestamp if watermark else None,
                        refreshed.get(".".join(parts[-2:])),
                    ),
                    definition.initialize,
                    definition.frozen_where,
                    definition.kind.value,
                )
            )
        rows.sort(key=lambda row: (row[3], row[1]))
        return self._frame(rows, _SHOW_SCHEMA)

    def _row_count(self, table: exp.Table) -> int:
        """A table's rows: from its newest commit or its metadata where the format keeps
        them (read once per statement, see refresh/reads.py), else counted."""
        newest = self.lifecycle.refresher.context.newest_commit(table)
        if newest is not None and newest.total_rows is not None:
            return newest.total_rows
        count = self.engine.table_format.row_count(self.engine.session, table)
        if count is not None:
            return count
        count_rows = exp.select(exp.func("count", exp.Star())).from_(table)
        return int(self.engine.sql(to_spark_sql(count_rows)).collect()[0][0])

    def _explain(self, plan: Plan) -> Any:
        return self._frame(explain_rows(plan), "operator STRING, kind STRING, strategy STRING")

    def _describe(self, statement: DescribeDynamicTable) -> Any:
        table = self.lifecycle.table_of(statement.name)
        definition = self.lifecycle.load(table, kind=ObjectKind.DYNAMIC_TABLE)
        rows = [(name, type_sql, "COLUMN", "Y", None) for name, type_sql in definition.columns]
        return self._frame(
            rows, "name STRING, type STRING, kind STRING, `null?` STRING, comment STRING"
        )


def terminal_columns(statement: Statement) -> tuple[str, ...] | None:
    """The columns a terminal prints of ``statement``'s result (the ``dyntables-sql``
    shell, the magics), or None for every one. The result itself, ``dt.sql``'s
    DataFrame, always has them all: ``SHOW DYNAMIC TABLES`` returns Snowflake's full set
    and prints the few that fit a line; ``SHOW FULL DYNAMIC TABLES`` prints every one.

    >>> terminal_columns(ShowDynamicTables())  # doctest: +NORMALIZE_WHITESPACE
    ('name', 'schema_name', 'target_lag', 'refresh_mode', 'scheduling_state',
     'data_timestamp', 'rows')
    >>> terminal_columns(ShowDynamicTables(full=True)) is None
    True
    """
    if isinstance(statement, ShowDynamicTables) and not statement.full:
        return SHOW_TERMINAL_COLUMNS
    return None


def _dml_targets(tree: exp.Expr) -> list[exp.Table]:
    """The tables a DML statement writes."""
    if isinstance(tree, exp.TruncateTable):
        return [target for target in tree.expressions if isinstance(target, exp.Table)]
    target = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
    return [target] if isinstance(target, exp.Table) else []


def _like(name: str, pattern: str) -> bool:
    import re

    regex = "".join(".*" if ch == "%" else "." if ch == "_" else re.escape(ch) for ch in pattern)
    return re.fullmatch(regex, name, re.IGNORECASE | re.DOTALL) is not None


def _timestamp(text: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(text)


def _data_timestamp_shown(
    committed: str | None, refreshed: datetime.datetime | None
) -> datetime.datetime | None:
    """What SHOW reports as the data timestamp: that of the latest successful refresh,
    whether it committed data (its watermark) or found none to commit (NO_DATA)."""
    stamps = [s for s in (_timestamp(committed) if committed else None, refreshed) if s]
    return max(stamps) if stamps else None


__all__ = ["DynamicTables"]


FROZEN_FLAG = "METADATA$IS_FROZEN"


def _typed_rows(
    rows: list[list[Any]], columns: tuple[tuple[str, str], ...], alias: str
) -> exp.Expr:
    """Rows as a subquery with these column names and types (an empty one when none)."""
    selects: list[exp.Select] = []
    for values in rows or [[None] * len(columns)]:
        selects.append(
            exp.select(
                *[
                    exp.alias_(typed_literal(value, type_sql), name)
                    for value, (name, type_sql) in zip(values, columns, strict=True)
                ]
            )
        )
    query: exp.Query = selects[0]
    if not rows:
        query = selects[0].where(exp.false())
    for select in selects[1:]:
        query = exp.union(query, select, distinct=False)
    return exp.Subquery(this=query, alias=exp.TableAlias(this=exp.to_identifier(alias)))


def _rely_constraint(tree: exp.Expr) -> tuple[exp.Table, exp.Constraint] | None:
    """``ALTER TABLE t ADD CONSTRAINT name PRIMARY KEY | UNIQUE (…) [RELY]``: the table and
    the constraint; None for any other statement."""
    if not isinstance(tree, exp.Alter) or not isinstance(tree.this, exp.Table):
        return None
    actions = tree.args.get("actions") or []
    if len(actions) != 1 or not isinstance(actions[0], exp.AddConstraint):
        return None
    constraints = actions[0].expressions
    if len(constraints) != 1 or not isinstance(constraints[0], exp.Constraint):
        return None
    return tree.this, constraints[0]


def _table_function_call(reference: exp.Table) -> exp.Expr | None:
    """What an ``information_schema`` reference names: ``information_schema.f(…)``,
    Snowflake's ``TABLE(information_schema.f(…))``, or a view's name; None for others."""
    call: exp.Expr = reference.this
    if isinstance(call, exp.Anonymous) and call.name.upper() == "TABLE":
        inner = call.expressions[0] if len(call.expressions) == 1 else None
        if isinstance(inner, exp.Dot) and inner.this.name.lower() == "information_schema":
            named: exp.Expr = inner.expression
            return named
        return None
    if isinstance(reference.db, str) and reference.db.lower() == "information_schema":
        return call
    return None
