"""CREATE [OR REPLACE] of dynamic tables and materialized views, and EXPLAIN of what a
CREATE decides.

Validation comes first and changes nothing (``analysis``). Then the table is created with
the query's schema and the definition in its properties, and the initial refresh runs; a
failure anywhere drops what was created. A replace commits the new rows together with a
watermark that carries the new definition, then the properties; an interrupted replace
is finished the next time the table is used (``Definitions.finish_interrupted_replace``).
"""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass, field

from sqlglot import exp

from dyntables.catalog import PREFIX, Definition, NameCache, ObjectKind, key_to_table, table_key
from dyntables.ddl import custom
from dyntables.ddl.analysis import (
    AnalyzedQuery,
    QueryAnalyzer,
    frozen_predicate,
    planning_extra,
)
from dyntables.ddl.backfill import backfill_rows
from dyntables.ddl.definitions import Definitions
from dyntables.engine import Engine
from dyntables.errors import DynamicTableError
from dyntables.planner import Plan, plan_definition
from dyntables.planner.capabilities import format_limit
from dyntables.refresh import Refresher, RefreshResult, Trigger, custom_sql
from dyntables.sql.dialect import to_spark_sql
from dyntables.statements import (
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
class CreateRequest:
    """One CREATE [OR REPLACE] of a table defined by a query: what the statement asks for,
    with its defaults applied (a materialized view has no lag, warehouse or frozen region
    and refreshes FULL)."""

    table: exp.Table
    kind: ObjectKind
    query_text: str
    columns: tuple[ColumnDef, ...] | None
    text: str  # the statement as written, kept in the definition
    statement_id: str
    or_replace: bool = False
    if_not_exists: bool = False
    target_lag: TargetLag | None = None
    warehouse: str | None = None
    initialize: str = Initialize.ON_CREATE.value
    comment: str | None = None
    cluster_by: tuple[str, ...] = ()
    table_properties: dict[str, str] = field(default_factory=dict)
    requested_mode: str = RefreshMode.FULL.value
    frozen_where: str | None = None
    backfill: BackfillFrom | None = None
    extra: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of_dynamic_table(
        cls, statement: CreateDynamicTable, table: exp.Table, text: str, statement_id: str
    ) -> CreateRequest:
        assert statement.query is not None
        retention = statement.data_retention_days
        return cls(
            table=table,
            kind=ObjectKind.DYNAMIC_TABLE,
            query_text=statement.query,
            columns=statement.columns,
            text=text,
            statement_id=statement_id,
            or_replace=statement.or_replace,
            if_not_exists=statement.if_not_exists,
            target_lag=statement.target_lag,
            warehouse=statement.warehouse,
            initialize=(statement.initialize or Initialize.ON_CREATE).value,
            comment=statement.comment,
            cluster_by=statement.cluster_by,
            table_properties=dict(statement.properties),
            requested_mode=(statement.refresh_mode or RefreshMode.AUTO).value,
            frozen_where=statement.frozen_where,
            backfill=statement.backfill_from,
            extra={"data_retention_days": str(retention)} if retention is not None else {},
        )

    @classmethod
    def of_materialized_view(
        cls, statement: CreateMaterializedView, table: exp.Table, text: str, statement_id: str
    ) -> CreateRequest:
        return cls(
            table=table,
            kind=ObjectKind.MATERIALIZED_VIEW,
            query_text=statement.query,
            columns=statement.columns,
            text=text,
            statement_id=statement_id,
            or_replace=statement.or_replace,
            if_not_exists=statement.if_not_exists,
            comment=statement.comment,
            table_properties=dict(statement.properties),
        )


class Creator:
    """Runs CREATE statements: validation, the table with its definition, the first refresh."""

    def __init__(
        self,
        engine: Engine,
        names: NameCache,
        refresher: Refresher,
        definitions: Definitions,
        analyzer: QueryAnalyzer,
    ) -> None:
        self.engine = engine
        self.names = names
        self.refresher = refresher
        self.definitions = definitions
        self.analyzer = analyzer

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
        table = self.definitions.table_of(statement.name)
        return self._create(CreateRequest.of_dynamic_table(statement, table, text, statement_id))

    def create_materialized_view(
        self, statement: CreateMaterializedView, text: str, statement_id: str
    ) -> RefreshResult | None:
        table = self.definitions.table_of(statement.name)
        request = CreateRequest.of_materialized_view(statement, table, text, statement_id)
        return self._create(request)

    def _create(self, request: CreateRequest) -> RefreshResult | None:
        table = request.table
        existing, skip = self._existing(
            table, request.table_properties, request.or_replace, request.if_not_exists
        )
        if skip:
            return None
        analyzed = self.analyzer.analyze(table, request.query_text, request.columns)
        frozen_where = request.frozen_where
        if frozen_where is not None:
            frozen_where = frozen_predicate(frozen_where, analyzed.columns)
        self.analyzer.check_upstreams(table, analyzed, request.target_lag)
        extra = dict(request.extra)
        backfill_query = self._backfill_rows(table, request.backfill, analyzed.columns)
        if backfill_query is not None:
            extra["backfill_from"] = to_spark_sql(backfill_query)
        change_problem = self.analyzer.enable_change_tracking(analyzed)
        lag = request.target_lag
        definition = Definition(
            kind=request.kind,
            text=request.text,
            query=analyzed.query,
            columns=analyzed.columns,
            sources=analyzed.sources,
            upstreams=analyzed.upstreams,
            target_lag_seconds=lag.seconds if lag is not None else None,
            downstream=bool(lag is not None and lag.downstream),
            warehouse=request.warehouse,
            refresh_mode="FULL",
            initialize=request.initialize,
            comment=request.comment,
            frozen_where=frozen_where,
            cluster_by=request.cluster_by,
            change_tracking_problem=change_problem,
            created_on=datetime.datetime.now(datetime.timezone.utc).isoformat(),
            extra={**extra, **planning_extra(analyzed)},
        )
        definition = self._resolve_refresh_mode(definition, request.requested_mode)
        properties = request.table_properties
        if existing is not None:
            return self._replace(
                table, existing, definition, request.statement_id, properties, backfill_query
            )
        return self._create_new(table, definition, request.statement_id, properties, backfill_query)

    def _backfill_rows(
        self, table: exp.Table, backfill: BackfillFrom | None, columns: tuple[tuple[str, str], ...]
    ) -> exp.Query | None:
        """The rows a BACKFILL FROM clause gives the table's first refresh (None without
        one), checked against the table's columns."""
        if backfill is None:
            return None
        source = self.definitions.table_of(backfill.table)
        if table_key(source) == table_key(table):
            raise DynamicTableError(f"{table_key(table)} cannot be backfilled from itself")
        return backfill_rows(self.engine, source, backfill.point, columns)

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
        table = self.definitions.table_of(statement.name)
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
            self.engine, table, statement.refresh_using, declared, self.analyzer.qualify_source
        )
        upstreams = tuple(key for key in body.sources if self.engine.definition(key_to_table(key)))
        analyzed = AnalyzedQuery(
            body.statement, body.columns, body.sources, upstreams, body.statement
        )
        self.analyzer.check_upstreams(table, analyzed, statement.target_lag)
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
        backfill_query = self._backfill_rows(table, statement.backfill_from, body.columns)
        if backfill_query is not None:
            extra["backfill_from"] = to_spark_sql(backfill_query)
        problem = self.analyzer.enable_change_tracking(analyzed)
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
            **fmt.dynamic_table_defaults,
            **table_properties,
            **definition.to_properties(),
            **fmt.change_tracking_properties,
        }
        self.engine.sql(fmt.create_table_sql(table, list(definition.columns), properties))
        self.names.invalidate()
        if definition.initialize == Initialize.ON_SCHEDULE.value and backfill is None:
            return None  # (a backfill populates the table now, whatever INITIALIZE says)
        # The new table's history and its sources', at once where the format can: the
        # first refresh reads them next.
        sources = [key_to_table(key) for key in definition.sources]
        self.refresher.context.read_histories([table, *sources])
        try:
            return self.refresher.refresh(
                table, definition, Trigger.CREATION, statement_id=statement_id, backfill=backfill
            )
        except Exception:  # leave nothing behind
            drop = exp.Drop(tables=[table.copy()], kind="TABLE", exists=True)
            self.engine.sql(to_spark_sql(drop))
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
        limit = format_limit(fmt.name, fmt.supports_incremental)
        return plan_definition(
            definition, requested, columns_of=self._source_columns, format_limit=limit
        )

    def _source_columns(self, key: str) -> list[str]:
        return list(self.engine.schema_of(self.engine.refresh_session, key).names)

    def explain(self, name: TableName) -> Plan:
        """How an existing dynamic table refreshes: its recorded mode and reason, with the
        strategy of each operator."""
        table = self.definitions.table_of(name)
        definition = self.definitions.load(table, kind=ObjectKind.DYNAMIC_TABLE)
        if definition.refresh_mode == RefreshMode.CUSTOM_INCREMENTAL.value:
            return Plan(definition.refresh_mode, None, definition.refresh_mode_reason, ())
        operators = self.plan(definition, "AUTO").operators
        code, _, sentence = definition.refresh_mode_reason.partition(": ")
        if definition.refresh_mode == "INCREMENTAL" or not sentence:
            return Plan(definition.refresh_mode, None, definition.refresh_mode_reason, operators)
        return Plan(definition.refresh_mode, code, sentence, operators)

    def explain_create(self, statement: CreateDynamicTable) -> Plan:
        """What CREATE would decide, checked like CREATE, creating nothing."""
        table = self.definitions.table_of(statement.name)
        if statement.refresh_using is not None:
            assert statement.columns is not None
            declared = [(column.name, column.type_sql or "") for column in statement.columns]
            custom.analyze(
                self.engine, table, statement.refresh_using, declared, self.analyzer.qualify_source
            )
            mode = (statement.refresh_mode or RefreshMode.AUTO).value
            return Plan(RefreshMode.CUSTOM_INCREMENTAL.value, None, custom.MODE_REASON[mode], ())
        assert statement.query is not None
        analyzed = self.analyzer.analyze(table, statement.query, statement.columns)
        self.analyzer.check_upstreams(table, analyzed, statement.target_lag)
        definition = Definition(
            kind=ObjectKind.DYNAMIC_TABLE,
            text="",
            query=analyzed.query,
            columns=analyzed.columns,
            sources=analyzed.sources,
            upstreams=analyzed.upstreams,
            extra=planning_extra(analyzed),
        )
        requested = (statement.refresh_mode or RefreshMode.AUTO).value
        return self.plan(definition, requested)
