"""CREATE, REPLACE, ALTER and DROP of dynamic tables and materialized views.

Validation comes first and changes nothing: the query must parse and resolve, read only
tables (no temporary views: refreshes run on their own session), form no cycle, and
respect the target-lag rule against its upstreams. Then the table is created with the
query's schema and the definition in its properties, and the initial refresh runs; a
failure anywhere drops what was created. A replace commits the new rows together with a
watermark that carries the new definition, then the properties; an interrupted replace
is finished the next time the table is used (``finish_interrupted_replace``).
"""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from dyntables.catalog import (
    PREFIX,
    UPSTREAM_SUSPENDED_DUE_TO_ERRORS,
    Definition,
    NameCache,
    ObjectKind,
    SchedulingState,
    key_to_table,
    table_key,
)
from dyntables.ddl import custom
from dyntables.ddl.backfill import backfill_rows
from dyntables.engine import Engine
from dyntables.errors import DynamicTableError, first_line
from dyntables.history import SystemTables, utc_now
from dyntables.planner import Plan, plan_definition
from dyntables.planner.predicates import check_frozen_predicate, expands, to_spark_predicate
from dyntables.refresh import Refresher, RefreshResult, Trigger, Watermark, custom_sql
from dyntables.sql.dialect import parse_one, to_spark_sql
from dyntables.statements import (
    AlterAction,
    AlterDynamicTable,
    BackfillFrom,
    ColumnDef,
    CreateDynamicTable,
    CreateMaterializedView,
    Initialize,
    RefreshMode,
    TableName,
    TargetLag,
)


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


class Lifecycle:
    def __init__(self, engine: Engine, system: SystemTables, names: NameCache) -> None:
        self.engine = engine
        self.system = system
        self.names = names
        self.refresher = Refresher(engine, system)

    # ---- lookups ----

    def table_of(self, name: TableName) -> exp.Table:
        parts = [exp.to_identifier(part) for part in name.parts]
        table = exp.Table(this=parts[-1])
        if len(parts) > 1:
            table.set("db", parts[-2])
        if len(parts) > 2:
            table.set("catalog", parts[-3])
        return self.engine.qualify(table)

    def load(self, table: exp.Table, *, kind: ObjectKind | None = None) -> Definition:
        """The definition of an existing dynamic table (or MV), else a clear error."""
        definition = self.engine.definition(table)
        noun = "materialized view" if kind is ObjectKind.MATERIALIZED_VIEW else "dynamic table"
        if definition is None:
            if self.engine.table_exists(table):
                raise DynamicTableError(
                    f"{table_key(table)} is not a {noun} but an ordinary table: use the"
                    " ordinary table statements for it"
                )
            raise DynamicTableError(f"{noun} {table_key(table)} does not exist")
        if kind is not None and definition.kind is not kind:
            other = (
                "materialized view"
                if definition.kind is ObjectKind.MATERIALIZED_VIEW
                else "dynamic table"
            )
            raise DynamicTableError(
                f"{table_key(table)} is a {other}, not a {noun}: use the {other} statements"
            )
        return self.finish_interrupted_replace(table, definition)

    def finish_interrupted_replace(self, table: exp.Table, definition: Definition) -> Definition:
        """Apply the definition a REPLACE committed with its data, if its properties
        commit never happened (the process stopped in between)."""
        watermark = self.refresher.last_watermark(table).watermark
        if watermark is None or watermark.definition is None:
            return definition
        committed = Definition.from_properties(watermark.definition)
        if committed is None or committed.definition_hash == definition.definition_hash:
            return definition
        if watermark.definition_hash != committed.definition_hash:
            return definition
        self.engine.table_format.set_properties(self.engine.session, table, watermark.definition)
        return committed

    def managed_tables(self, database: str | None = None) -> list[tuple[exp.Table, Definition]]:
        """Every dynamic table and MV of ``database`` (all databases when None)."""
        return [
            (table, self.finish_interrupted_replace(table, definition))
            for table, definition in self._stored_definitions(database)
        ]

    def managed_names(self) -> list[str]:
        """The managed tables' names, for the cheap check on ordinary SQL (the definitions
        are read as stored: names do not change when a replace is finished)."""
        return [table_key(table) for table, _ in self._stored_definitions(None)]

    def _stored_definitions(self, database: str | None) -> list[tuple[exp.Table, Definition]]:
        databases = [database] if database is not None else self.engine.databases()
        found = []
        for name in databases:
            if name.lower() == "dyntables_system":
                continue
            for table in self.engine.table_names(name):
                definition = self.engine.definition(table)
                if definition is not None:
                    found.append((table, definition))
        return found

    # ---- CREATE ----

    def create(
        self, statement: CreateDynamicTable, text: str, statement_id: str
    ) -> RefreshResult | None:
        if statement.partitioned_by:
            raise DynamicTableError(
                "PARTITIONED BY on a dynamic table is not supported yet: create it without,"
                " or partition a downstream table"
            )
        if statement.refresh_using is not None:
            return self._create_custom(statement, text, statement_id)
        mode = statement.refresh_mode or RefreshMode.AUTO
        table = self.table_of(statement.name)
        assert statement.query is not None
        return self._create(
            table,
            statement.query,
            statement.columns,
            kind=ObjectKind.DYNAMIC_TABLE,
            text=text,
            or_replace=statement.or_replace,
            if_not_exists=statement.if_not_exists,
            target_lag=statement.target_lag,
            warehouse=statement.warehouse,
            initialize=(statement.initialize or Initialize.ON_CREATE).value,
            comment=statement.comment,
            cluster_by=statement.cluster_by,
            statement_id=statement_id,
            requested_mode=mode.value,
            table_properties=dict(statement.properties),
            frozen_where=statement.frozen_where,
            backfill=statement.backfill_from,
            extra=(
                {"data_retention_days": str(statement.data_retention_days)}
                if statement.data_retention_days is not None
                else {}
            ),
        )

    def create_materialized_view(
        self, statement: CreateMaterializedView, text: str, statement_id: str
    ) -> RefreshResult | None:
        return self._create(
            self.table_of(statement.name),
            statement.query,
            statement.columns,
            kind=ObjectKind.MATERIALIZED_VIEW,
            text=text,
            or_replace=statement.or_replace,
            if_not_exists=statement.if_not_exists,
            target_lag=None,
            warehouse=None,
            initialize=Initialize.ON_CREATE.value,
            comment=statement.comment,
            cluster_by=(),
            statement_id=statement_id,
            table_properties=dict(statement.properties),
        )

    def _create(
        self,
        table: exp.Table,
        query_text: str,
        columns: tuple[ColumnDef, ...] | None,
        *,
        kind: ObjectKind,
        text: str,
        or_replace: bool,
        if_not_exists: bool,
        target_lag: TargetLag | None,
        warehouse: str | None,
        initialize: str,
        comment: str | None,
        cluster_by: tuple[str, ...],
        statement_id: str,
        table_properties: dict[str, str],
        requested_mode: str = "FULL",
        frozen_where: str | None = None,
        backfill: BackfillFrom | None = None,
        extra: dict[str, str] | None = None,
    ) -> RefreshResult | None:
        existing, skip = self._existing(table, table_properties, or_replace, if_not_exists)
        if skip:
            return None
        analyzed = self.analyze(table, query_text, columns)
        if frozen_where is not None:
            frozen_where = self._frozen_predicate(frozen_where, analyzed.columns)
        self._check_upstreams(table, analyzed, target_lag)
        backfill_query = None
        if backfill is not None:
            source = self.table_of(backfill.table)
            if table_key(source) == table_key(table):
                raise DynamicTableError(f"{table_key(table)} cannot be backfilled from itself")
            backfill_query = backfill_rows(self.engine, source, backfill.point, analyzed.columns)
            extra = {**(extra or {}), "backfill_from": to_spark_sql(backfill_query)}
        change_problem = self._enable_change_tracking(analyzed)
        definition = Definition(
            kind=kind,
            text=text,
            query=analyzed.query,
            columns=analyzed.columns,
            sources=analyzed.sources,
            upstreams=analyzed.upstreams,
            target_lag_seconds=target_lag.seconds if target_lag is not None else None,
            downstream=bool(target_lag is not None and target_lag.downstream),
            warehouse=warehouse,
            refresh_mode="FULL",
            initialize=initialize,
            comment=comment,
            frozen_where=frozen_where,
            cluster_by=cluster_by,
            change_tracking_problem=change_problem,
            created_on=datetime.datetime.now(datetime.timezone.utc).isoformat(),
            extra={**(extra or {}), **_planning_extra(analyzed)},
        )
        definition = self._resolve_refresh_mode(definition, requested_mode)
        if existing is not None:
            return self._replace(
                table, existing, definition, statement_id, table_properties, backfill_query
            )
        return self._create_new(table, definition, statement_id, table_properties, backfill_query)

    def _existing(
        self,
        table: exp.Table,
        table_properties: dict[str, str],
        or_replace: bool,
        if_not_exists: bool,
    ) -> tuple[Definition | None, bool]:
        """The dynamic table a CREATE would replace (None: a new one), and whether the
        CREATE has nothing to do (IF NOT EXISTS of an existing one)."""
        reserved = [key for key in table_properties if key.lower().startswith(PREFIX)]
        if reserved:
            raise DynamicTableError(
                f"table property {reserved[0]} is reserved: the prefix {PREFIX} holds the"
                " dynamic table's own definition"
            )
        existing = self.engine.definition(table)
        if self.engine.table_exists(table):
            if existing is None:
                raise DynamicTableError(
                    f"{table_key(table)} exists and is an ordinary table; a dynamic table never"
                    " replaces one: choose another name, or drop the table first"
                )
            if if_not_exists:
                return existing, True
            if not or_replace:
                raise DynamicTableError(
                    f"{table_key(table)} already exists: use CREATE OR REPLACE, or IF NOT EXISTS"
                )
        return existing, False

    def _create_custom(
        self, statement: CreateDynamicTable, text: str, statement_id: str
    ) -> RefreshResult | None:
        """CREATE … REFRESH USING ( … ): the statement checked (``custom.analyze``), the
        table created with the declared columns, and its first refresh (``refresh/custom.py``)."""
        table = self.table_of(statement.name)
        properties = dict(statement.properties)
        existing, skip = self._existing(
            table, properties, statement.or_replace, statement.if_not_exists
        )
        if skip:
            return None
        assert statement.refresh_using is not None
        assert statement.columns is not None
        declared = [(column.name, column.type_sql or "") for column in statement.columns]
        body = custom.analyze(
            self.engine, table, statement.refresh_using, declared, self._check_source
        )
        upstreams = tuple(key for key in body.sources if self.engine.definition(key_to_table(key)))
        analyzed = AnalyzedQuery(
            body.statement, body.columns, body.sources, upstreams, body.statement
        )
        self._check_upstreams(table, analyzed, statement.target_lag)
        changed = custom_sql.change_sources(body.statement)
        extra: dict[str, str] = {}
        if statement.data_retention_days is not None:
            extra["data_retention_days"] = str(statement.data_retention_days)
        if statement.start_at is not None:
            extra[custom_sql.START_VERSIONS] = json.dumps(
                custom.resolve_start(self.engine, sorted(changed), statement.start_at)
            )
            extra["start_at"] = f"{statement.start_at.by.value} => {statement.start_at.expr_sql}"
        self._check_keys(changed)
        backfill_query = None
        if statement.backfill_from is not None:
            backfill = statement.backfill_from
            source = self.table_of(backfill.table)
            if table_key(source) == table_key(table):
                raise DynamicTableError(f"{table_key(table)} cannot be backfilled from itself")
            backfill_query = backfill_rows(self.engine, source, backfill.point, body.columns)
            extra["backfill_from"] = to_spark_sql(backfill_query)
        problem = self._enable_change_tracking(analyzed)
        if problem is not None:
            raise DynamicTableError(
                f"REFRESH USING reads its sources' changes, and {problem}: enable the change"
                " feed on the source yourself"
            )
        requested = statement.refresh_mode or RefreshMode.AUTO
        definition = Definition(
            kind=ObjectKind.DYNAMIC_TABLE,
            text=text,
            query=body.statement,
            columns=body.columns,
            sources=body.sources,
            upstreams=upstreams,
            target_lag_seconds=statement.target_lag.seconds,
            downstream=statement.target_lag.downstream,
            warehouse=statement.warehouse,
            refresh_mode=RefreshMode.CUSTOM_INCREMENTAL.value,
            refresh_mode_reason=custom.MODE_REASON[requested.value],
            initialize=(statement.initialize or Initialize.ON_CREATE).value,
            comment=statement.comment,
            cluster_by=statement.cluster_by,
            created_on=datetime.datetime.now(datetime.timezone.utc).isoformat(),
            extra=extra,
        )
        if existing is not None:
            return self._replace(
                table, existing, definition, statement_id, properties, backfill_query
            )
        return self._create_new(table, definition, statement_id, properties, backfill_query)

    def _check_keys(self, changed: dict[str, set[str]]) -> None:
        """Where the change feed cannot pair an update's images (Iceberg), CHANGES with
        INFORMATION => DEFAULT needs a key on the source."""
        fmt = self.engine.table_format
        if fmt.pairs_updates:
            return
        session = self.engine.refresh_session
        for key, modes in sorted(changed.items()):
            columns = list(self.engine.schema_of(session, key).names)
            if custom_sql.DEFAULT in modes and not custom_sql.source_key(self.engine, key, columns):
                raise DynamicTableError(
                    f"CHANGES(INFORMATION => DEFAULT) on {key} needs a key to pair an updated"
                    f" row's two images on {fmt.name} tables: declare one (ALTER TABLE {key} ADD"
                    " CONSTRAINT <name> PRIMARY KEY (<columns>) RELY, or SET IDENTIFIER FIELDS),"
                    " or read CHANGES(INFORMATION => APPEND_ONLY)"
                )

    def _create_new(
        self,
        table: exp.Table,
        definition: Definition,
        statement_id: str,
        table_properties: dict[str, str],
        backfill: exp.Query | None = None,
    ) -> RefreshResult | None:
        fmt = self.engine.table_format
        properties = {
            **table_properties,
            **definition.to_properties(),
            **fmt.change_tracking_properties,
        }
        self.engine.sql(fmt.create_table_sql(table, list(definition.columns), properties))
        self.names.invalidate()
        if definition.initialize == Initialize.ON_SCHEDULE.value and backfill is None:
            return None  # (a backfill populates the table now, whatever INITIALIZE says)
        try:
            return self.refresher.refresh(
                table, definition, Trigger.CREATION, statement_id=statement_id, backfill=backfill
            )
        except Exception:
            self.engine.sql(f"DROP TABLE IF EXISTS {table.sql('spark')}")  # leave nothing behind
            self.names.invalidate()
            raise

    def _replace(
        self,
        table: exp.Table,
        old: Definition,
        new: Definition,
        statement_id: str,
        table_properties: dict[str, str],
        backfill: exp.Query | None = None,
    ) -> RefreshResult:
        """Replace in place: the rows and a watermark carrying the new definition commit
        first (readers see the old table until then); then the properties."""
        new = new.with_changes(created_on=old.created_on or new.created_on)
        new_properties = new.to_properties()
        stale_keys = [
            key
            for key in self.engine.table_format.properties(self.engine.session, table)
            if key.startswith(PREFIX) and key not in new_properties
        ]
        result = self.refresher.refresh(
            table,
            new,
            Trigger.CREATION,
            statement_id=statement_id,
            replace_definition=new_properties,
            backfill=backfill,
        )
        fmt = self.engine.table_format
        fmt.set_properties(self.engine.session, table, {**table_properties, **new_properties})
        fmt.unset_properties(self.engine.session, table, stale_keys)
        self.names.invalidate()
        return result

    def _resolve_refresh_mode(self, definition: Definition, requested: str) -> Definition:
        """AUTO becomes INCREMENTAL where every operator of the query can refresh that way,
        else FULL with the reason; INCREMENTAL that cannot be is an error naming why."""
        plan = self.plan(definition, requested)
        reason = plan.reason if plan.reason_code is None else f"{plan.reason_code}: {plan.reason}"
        return definition.with_changes(refresh_mode=plan.mode, refresh_mode_reason=reason)

    def plan(self, definition: Definition, requested: str) -> Plan:
        """The planner's decision for ``definition`` on this engine's table format."""
        fmt = self.engine.table_format
        format_limit = (
            None
            if fmt.supports_incremental
            else f"incremental refresh of {fmt.name} tables is not built yet"
        )
        return plan_definition(
            definition, requested, columns_of=self._source_columns, format_limit=format_limit
        )

    def _source_columns(self, key: str) -> list[str]:
        return list(self.engine.schema_of(self.engine.refresh_session, key).names)

    def explain(self, name: TableName) -> Plan:
        """How an existing dynamic table refreshes: its recorded mode and reason, with the
        strategy of each operator."""
        table = self.table_of(name)
        definition = self.load(table, kind=ObjectKind.DYNAMIC_TABLE)
        if definition.refresh_mode == RefreshMode.CUSTOM_INCREMENTAL.value:
            return Plan(definition.refresh_mode, None, definition.refresh_mode_reason, ())
        operators = self.plan(definition, "AUTO").operators
        code, _, sentence = definition.refresh_mode_reason.partition(": ")
        if definition.refresh_mode == "INCREMENTAL" or not sentence:
            return Plan(definition.refresh_mode, None, definition.refresh_mode_reason, operators)
        return Plan(definition.refresh_mode, code, sentence, operators)

    def explain_create(self, statement: CreateDynamicTable) -> Plan:
        """What CREATE would decide, checked like CREATE, creating nothing."""
        table = self.table_of(statement.name)
        if statement.refresh_using is not None:
            assert statement.columns is not None
            declared = [(column.name, column.type_sql or "") for column in statement.columns]
            custom.analyze(
                self.engine, table, statement.refresh_using, declared, self._check_source
            )
            mode = (statement.refresh_mode or RefreshMode.AUTO).value
            return Plan(RefreshMode.CUSTOM_INCREMENTAL.value, None, custom.MODE_REASON[mode], ())
        assert statement.query is not None
        analyzed = self.analyze(table, statement.query, statement.columns)
        self._check_upstreams(table, analyzed, statement.target_lag)
        definition = Definition(
            kind=ObjectKind.DYNAMIC_TABLE,
            text="",
            query=analyzed.query,
            columns=analyzed.columns,
            sources=analyzed.sources,
            upstreams=analyzed.upstreams,
            extra=_planning_extra(analyzed),
        )
        requested = (statement.refresh_mode or RefreshMode.AUTO).value
        return self.plan(definition, requested)

    # ---- analysis ----

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
            source = self._check_source(table, reference)
            reference.set("db", source.args.get("db"))
            if source.args.get("catalog") is not None:
                reference.set("catalog", source.args.get("catalog"))
            if table_key(source) not in sources:
                sources.append(table_key(source))
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
        upstreams = tuple(key for key in sources if self.engine.definition(key_to_table(key)))
        return AnalyzedQuery(query, tuple(output), tuple(sources), upstreams, planning_query)

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

    def _check_source(self, table: exp.Table, reference: exp.Table) -> exp.Table:
        if reference.args.get("version") is not None:
            raise DynamicTableError(
                f"the query reads {reference.sql('spark')} at a fixed version; a dynamic table"
                " reads its sources at each refresh's data timestamp"
            )
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

    def _check_upstreams(
        self, table: exp.Table, analyzed: AnalyzedQuery, lag: TargetLag | None
    ) -> None:
        own = table_key(table)
        for upstream in analyzed.upstreams:
            path = self._path_to(upstream, own, [own, upstream])
            if path is not None:
                raise DynamicTableError(
                    "the dynamic tables would form a cycle: " + " -> ".join(path)
                )
            definition = self.engine.definition(key_to_table(upstream))
            assert definition is not None
            _check_lag_order(own, lag, upstream, definition)

    def _path_to(self, start: str, goal: str, path: list[str]) -> list[str] | None:
        definition = self.engine.definition(key_to_table(start))
        if definition is None:
            return None
        for upstream in definition.upstreams:
            if upstream == goal:
                return [*path, goal]
            if upstream not in path:
                found = self._path_to(upstream, goal, [*path, upstream])
                if found is not None:
                    return found
        return None

    def _enable_change_tracking(self, analyzed: AnalyzedQuery) -> str | None:
        problems = []
        for key in analyzed.sources:
            problem = self.engine.table_format.enable_change_tracking(
                self.engine.session, key_to_table(key)
            )
            if problem is not None:
                problems.append(problem)
        return "; ".join(problems) or None

    # ---- ALTER and DROP ----

    def alter(self, statement: AlterDynamicTable, statement_id: str) -> RefreshResult | None:
        table = self.table_of(statement.name)
        if statement.if_exists and not self.engine.table_exists(table):
            return None
        definition = self.load(table, kind=ObjectKind.DYNAMIC_TABLE)
        action = statement.action
        if action is AlterAction.REFRESH:
            return self.refresher.refresh(
                table, definition, Trigger.MANUAL, statement_id=statement_id
            )
        if action is AlterAction.SUSPEND:
            changed = definition.with_changes(
                scheduling_state=SchedulingState.SUSPENDED, suspend_reason="USER_SUSPENDED"
            )
        elif action is AlterAction.RESUME:
            changed = definition.with_changes(
                scheduling_state=SchedulingState.ACTIVE,
                suspend_reason=None,
                # The scheduler counts consecutive failures from here on.
                extra={**definition.extra, "resumed_at": utc_now().isoformat()},
            )
            self._resume_suspended_with(table)
        elif action is AlterAction.SET_TARGET_LAG:
            assert isinstance(statement.value, TargetLag)
            changed = self._with_lag(table, definition, statement.value)
        elif action is AlterAction.SET_WAREHOUSE:
            changed = definition.with_changes(warehouse=str(statement.value))
        elif action is AlterAction.SET_COMMENT:
            changed = definition.with_changes(comment=str(statement.value))
        elif action is AlterAction.SET_FROZEN_WHERE:
            if definition.refresh_mode == RefreshMode.CUSTOM_INCREMENTAL.value:
                raise DynamicTableError(
                    "FROZEN WHERE (IMMUTABLE WHERE) cannot be combined with REFRESH USING: the"
                    " statement decides which rows change"
                )
            changed = self._with_frozen_region(table, definition, str(statement.value))
        elif action is AlterAction.UNSET_FROZEN_WHERE:
            changed = definition.with_changes(
                frozen_where=None,
                frozen_reinitialize="ALL" if definition.frozen_where else None,
            )
        elif action is AlterAction.RENAME_TO:
            raise DynamicTableError(
                f"RENAME of a dynamic table is not supported on this catalog: create the new"
                f" name with the same definition (SHOW DYNAMIC TABLES shows it) and drop"
                f" {table_key(table)}"
            )
        else:
            raise DynamicTableError(
                f"ALTER DYNAMIC TABLE ... {action.value.replace('_', ' ')} is not available yet"
            )
        self.engine.table_format.set_properties(self.engine.session, table, changed.to_properties())
        return None

    def _resume_suspended_with(self, table: exp.Table) -> None:
        """RESUME of a table the scheduler suspended after failures also resumes the
        dynamic tables it suspended downstream of it."""
        reason = f"{UPSTREAM_SUSPENDED_DUE_TO_ERRORS}: {table_key(table)}"
        for downstream_table, downstream in self.managed_tables():
            if downstream.suspend_reason == reason:
                resumed = downstream.with_changes(
                    scheduling_state=SchedulingState.ACTIVE, suspend_reason=None
                )
                self.engine.table_format.set_properties(
                    self.engine.session, downstream_table, resumed.to_properties()
                )

    # ---- frozen regions ----

    def _frozen_predicate(self, predicate: str, columns: tuple[tuple[str, str], ...]) -> str:
        """The predicate checked against the table's columns, as Spark SQL."""
        check_frozen_predicate(predicate, [name for name, _ in columns])
        return to_spark_predicate(predicate)

    def _with_frozen_region(
        self, table: exp.Table, definition: Definition, predicate: str
    ) -> Definition:
        """SET FROZEN WHERE: a region that only grows (every row frozen before stays
        frozen, proven) or a first region costs nothing; any other change recomputes the
        active region at the next refresh."""
        new = self._frozen_predicate(predicate, definition.columns)
        primary, uniques = rely_keys(definition)
        _check_frozen_columns_in_keys(new, primary, uniques + self._format_keys(table))
        pending = definition.frozen_reinitialize
        if definition.frozen_where is not None and not expands(
            parse_one(definition.frozen_where), parse_one(new)
        ):
            pending = pending or "ACTIVE_REGION"
        return definition.with_changes(frozen_where=new, frozen_reinitialize=pending)

    # ---- RELY constraints ----

    def add_rely_constraint(self, table: exp.Table, constraint: exp.Constraint) -> None:
        """``ALTER TABLE dt ADD CONSTRAINT name PRIMARY KEY | UNIQUE (…) RELY``: recorded as
        ``dynamic_table.primary_key`` / ``dynamic_table.unique_keys`` (not enforced), after
        checking seed 001's rule against the frozen predicate."""
        definition = self.load(table, kind=ObjectKind.DYNAMIC_TABLE)
        kind, columns, rely = _constraint_parts(constraint)
        if not rely:
            raise DynamicTableError(
                f"a {kind} on a dynamic table is declared, not enforced: add RELY"
                f" (ALTER TABLE … ADD CONSTRAINT {constraint.name} {kind} (…) RELY)"
            )
        known = {name.lower(): name for name, _ in definition.columns}
        unknown = [column for column in columns if column.lower() not in known]
        if unknown:
            raise DynamicTableError(
                f"{unknown[0]} is not a column of {table_key(table)}"
                f" (its columns: {', '.join(known.values())})"
            )
        key = [known[column.lower()] for column in columns]
        primary, uniques = rely_keys(definition)
        if kind == "PRIMARY KEY":
            if primary:
                raise DynamicTableError(
                    f"{table_key(table)} already has a RELY primary key ({', '.join(primary)})"
                )
            primary = key
        else:
            uniques = [*uniques, key]
        format_keys = self._format_keys(table)
        _check_frozen_columns_in_keys(definition.frozen_where, primary, uniques + format_keys)
        extra = {**definition.extra, "primary_key": json.dumps(primary)}
        extra["unique_keys"] = json.dumps(uniques)
        changed = definition.with_changes(extra=extra)
        self.engine.table_format.set_properties(self.engine.session, table, changed.to_properties())

    def add_source_key(self, reference: exp.Table, constraint: exp.Constraint) -> bool:
        """``ALTER TABLE t ADD CONSTRAINT name PRIMARY KEY (…) RELY`` on an ordinary table:
        recorded as its ``dynamic_table.primary_key`` (not enforced), the key by which
        ``CHANGES()`` nets a source's changes (seed 003). False for any other constraint,
        which goes to the engine as written."""
        kind, columns, rely = _constraint_parts(constraint)
        if kind != "PRIMARY KEY" or not rely:
            return False
        table = self.engine.qualify(reference)
        if not self.engine.table_exists(table):
            raise DynamicTableError(f"table {table_key(table)} does not exist")
        names = list(self.engine.schema_of(self.engine.session, table_key(table)).names)
        known = {name.lower(): name for name in names}
        unknown = [column for column in columns if column.lower() not in known]
        if unknown:
            raise DynamicTableError(
                f"{unknown[0]} is not a column of {table_key(table)} (its columns:"
                f" {', '.join(names)})"
            )
        key = json.dumps([known[column.lower()] for column in columns])
        self.engine.table_format.set_properties(
            self.engine.session, table, {custom_sql.PRIMARY_KEY_PROPERTY: key}
        )
        return True

    def _format_keys(self, table: exp.Table) -> list[list[str]]:
        """Keys the table format declares on the table (Iceberg's identifier fields), which
        count as RELY keys for seed 001's rule."""
        return self.engine.table_format.keys(self.engine.session, table)

    def _with_lag(self, table: exp.Table, definition: Definition, lag: TargetLag) -> Definition:
        own = table_key(table)
        for upstream in definition.upstreams:
            upstream_definition = self.engine.definition(key_to_table(upstream))
            if upstream_definition is not None:
                _check_lag_order(own, lag, upstream, upstream_definition)
        for downstream_table, downstream in self.managed_tables():
            if own in downstream.upstreams:
                downstream_lag = TargetLag(downstream.target_lag_seconds, downstream.downstream)
                changed = definition.with_changes(
                    target_lag_seconds=lag.seconds, downstream=lag.downstream
                )
                _check_lag_order(table_key(downstream_table), downstream_lag, own, changed)
        return definition.with_changes(target_lag_seconds=lag.seconds, downstream=lag.downstream)

    def drop(self, name: TableName, if_exists: bool, kind: ObjectKind) -> None:
        table = self.table_of(name)
        if if_exists and not self.engine.table_exists(table):
            return
        self.load(table, kind=kind)
        self.engine.sql(f"DROP TABLE {table.sql('spark')}")
        self.names.invalidate()

    def refresh_materialized_view(self, name: TableName, statement_id: str) -> RefreshResult:
        table = self.table_of(name)
        definition = self.load(table, kind=ObjectKind.MATERIALIZED_VIEW)
        return self.refresher.refresh(table, definition, Trigger.MANUAL, statement_id=statement_id)

    def is_stale(self, table: exp.Table, definition: Definition) -> bool:
        watermark = self.refresher.last_watermark(table).watermark
        if watermark is None:
            return True
        session = self.engine.refresh_session
        versions = {
            key: self.engine.table_format.current_version(session, key_to_table(key))
            for key in definition.sources
        }
        return self.refresher.sources_changed(watermark, versions)

    def watermark_of(self, table: exp.Table) -> Watermark | None:
        return self.refresher.last_watermark(table).watermark


def rely_keys(definition: Definition) -> tuple[list[str], list[list[str]]]:
    """The dynamic table's RELY primary key (empty when none) and unique keys."""
    primary = json.loads(definition.extra.get("primary_key") or "[]")
    uniques = json.loads(definition.extra.get("unique_keys") or "[]")
    return [str(c) for c in primary], [[str(c) for c in key] for key in uniques]


def _constraint_parts(constraint: exp.Constraint) -> tuple[str, list[str], bool]:
    """(PRIMARY KEY | UNIQUE, its columns, whether RELY) of a table constraint."""
    for part in constraint.expressions:
        options = [str(option).upper() for option in part.args.get("options") or []]
        if isinstance(part, exp.PrimaryKey):
            return "PRIMARY KEY", [c.name for c in part.expressions], "RELY" in options
        if isinstance(part, exp.UniqueColumnConstraint) and isinstance(part.this, exp.Schema):
            return "UNIQUE", [c.name for c in part.this.expressions], "RELY" in options
    raise DynamicTableError(
        "only PRIMARY KEY (…) RELY and UNIQUE (…) RELY constraints can be added to a dynamic table"
    )


def _check_frozen_columns_in_keys(
    predicate: str | None, primary: list[str], uniques: list[list[str]]
) -> None:
    """Seed 001: with RELY keys, every column of the frozen predicate must be in each.
    ``uniques`` includes the keys the table format declares (Iceberg identifier fields)."""
    keys = ([primary] if primary else []) + uniques
    if predicate is None or not keys:
        return
    for column in sorted({c.name.lower() for c in parse_one(predicate).find_all(exp.Column)}):
        if not all(column in {k.lower() for k in key} for key in keys):
            listed = "; ".join(f"({', '.join(key)})" for key in keys)
            raise DynamicTableError(
                f"immutable where (frozen) predicate column {column.upper()} is not part of"
                " every RELY constraint: with RELY keys, the predicate's columns must be in"
                f" each of them (its keys: {listed})"
            )


def _planning_extra(analyzed: AnalyzedQuery) -> dict[str, str]:
    """The query the planner judges, recorded only where the stored query wraps it."""
    if analyzed.planning_query == analyzed.query:
        return {}
    return {"planning_query": analyzed.planning_query}


def _check_lag_order(
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
                new_type = data_type.sql("spark").lower()
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
