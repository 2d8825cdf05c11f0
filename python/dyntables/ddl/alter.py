"""ALTER and DROP of dynamic tables: manual refresh, SUSPEND/RESUME, the target lag,
warehouse and comment, the frozen region, RELY constraints (on a dynamic table, and a
source's primary key for CHANGES), DROP; and REFRESH of a materialized view.
"""

from __future__ import annotations

import json

from sqlglot import exp

from dyntables.catalog import (
    UPSTREAM_SUSPENDED_DUE_TO_ERRORS,
    Definition,
    NameCache,
    ObjectKind,
    SchedulingState,
    key_to_table,
    table_key,
)
from dyntables.ddl.analysis import check_lag_order, frozen_predicate
from dyntables.ddl.definitions import Definitions
from dyntables.engine import Engine
from dyntables.errors import DynamicTableError
from dyntables.history import utc_now
from dyntables.planner.predicates import expands
from dyntables.refresh import Refresher, RefreshResult, Trigger, Watermark, custom_sql
from dyntables.sql.dialect import parse_one, to_spark_sql
from dyntables.statements import (
    AlterAction,
    AlterDynamicTable,
    RefreshMode,
    TableName,
    TargetLag,
)


class Alterer:
    """Runs ALTER and DROP statements on existing dynamic tables and materialized views."""

    def __init__(
        self, engine: Engine, names: NameCache, refresher: Refresher, definitions: Definitions
    ) -> None:
        self.engine = engine
        self.names = names
        self.refresher = refresher
        self.definitions = definitions

    def alter(self, statement: AlterDynamicTable, statement_id: str) -> RefreshResult | None:
        table = self.definitions.table_of(statement.name)
        if statement.if_exists and not self.engine.table_exists(table):
            return None
        definition = self.definitions.load(table, kind=ObjectKind.DYNAMIC_TABLE)
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
            assert action is AlterAction.SET_REFRESH_MODE, action
            # As in Snowflake: the mode decides how the table's state is kept, so a
            # table changes mode by being recreated (its first refresh fills it).
            raise DynamicTableError(
                f"the refresh mode of dynamic table {table_key(table)} cannot be changed:"
                " recreate it with CREATE OR REPLACE DYNAMIC TABLE ... REFRESH_MODE = <mode>"
                " AS <its query> (SHOW DYNAMIC TABLES shows the query)"
            )
        self.engine.table_format.set_properties(self.engine.session, table, changed.to_properties())
        self.refresher.context.wrote(table)
        return None

    def _resume_suspended_with(self, table: exp.Table) -> None:
        """RESUME of a table the scheduler suspended after failures also resumes the
        dynamic tables it suspended downstream of it."""
        reason = f"{UPSTREAM_SUSPENDED_DUE_TO_ERRORS}: {table_key(table)}"
        for downstream_table, downstream in self.definitions.managed_tables():
            if downstream.suspend_reason == reason:
                resumed = downstream.with_changes(
                    scheduling_state=SchedulingState.ACTIVE, suspend_reason=None
                )
                self.engine.table_format.set_properties(
                    self.engine.session, downstream_table, resumed.to_properties()
                )
                self.refresher.context.wrote(downstream_table)

    def _with_frozen_region(
        self, table: exp.Table, definition: Definition, predicate: str
    ) -> Definition:
        """SET FROZEN WHERE: a region that only grows (every row frozen before stays
        frozen, proven) or a first region costs nothing; any other change recomputes the
        active region at the next refresh."""
        new = frozen_predicate(predicate, definition.columns)
        primary, uniques = rely_keys(definition)
        _check_frozen_columns_in_keys(new, primary, uniques + self._format_keys(table))
        pending = definition.frozen_reinitialize
        if definition.frozen_where is not None and not expands(
            parse_one(definition.frozen_where), parse_one(new)
        ):
            pending = pending or "ACTIVE_REGION"
        return definition.with_changes(frozen_where=new, frozen_reinitialize=pending)

    def add_rely_constraint(self, table: exp.Table, constraint: exp.Constraint) -> None:
        """``ALTER TABLE dt ADD CONSTRAINT name PRIMARY KEY | UNIQUE (…) RELY``: recorded as
        ``dynamic_table.primary_key`` / ``dynamic_table.unique_keys`` (not enforced), after
        checking seed 001's rule against the frozen predicate."""
        definition = self.definitions.load(table, kind=ObjectKind.DYNAMIC_TABLE)
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
        self.refresher.context.wrote(table)

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
        self.refresher.context.wrote(table)
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
                check_lag_order(own, lag, upstream, upstream_definition)
        for downstream_table, downstream in self.definitions.managed_tables():
            if own in downstream.upstreams:
                downstream_lag = TargetLag(downstream.target_lag_seconds, downstream.downstream)
                changed = definition.with_changes(
                    target_lag_seconds=lag.seconds, downstream=lag.downstream
                )
                check_lag_order(table_key(downstream_table), downstream_lag, own, changed)
        return definition.with_changes(target_lag_seconds=lag.seconds, downstream=lag.downstream)

    def drop(self, name: TableName, if_exists: bool, kind: ObjectKind) -> None:
        table = self.definitions.table_of(name)
        if if_exists and not self.engine.table_exists(table):
            return
        self.definitions.load(table, kind=kind)
        self.engine.sql(to_spark_sql(exp.Drop(tables=[table.copy()], kind="TABLE")))
        self.names.invalidate()

    def refresh_materialized_view(self, name: TableName, statement_id: str) -> RefreshResult:
        table = self.definitions.table_of(name)
        definition = self.definitions.load(table, kind=ObjectKind.MATERIALIZED_VIEW)
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
