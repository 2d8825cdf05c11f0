"""The DDL of dynamic tables and materialized views, behind one object: ``Lifecycle`` hands
each statement to the module that runs it — ``create`` (CREATE [OR REPLACE], EXPLAIN of a
CREATE), ``alter`` (ALTER, DROP, RELY constraints, REFRESH of a materialized view) — and
gives the API and the scheduler what they read of existing tables (``definitions``).
"""

from __future__ import annotations

from sqlglot import exp

from dyntables.catalog import Definition, NameCache, ObjectKind
from dyntables.ddl.alter import Alterer
from dyntables.ddl.analysis import QueryAnalyzer
from dyntables.ddl.create import Creator
from dyntables.ddl.definitions import Definitions
from dyntables.engine import Engine
from dyntables.history import SystemTables
from dyntables.planner import Plan
from dyntables.refresh import Refresher, RefreshResult, Watermark
from dyntables.statements import (
    AlterDynamicTable,
    CreateDynamicTable,
    CreateMaterializedView,
    TableName,
)


class Lifecycle:
    """CREATE, ALTER, DROP and EXPLAIN of the dynamic tables of one engine."""

    def __init__(self, engine: Engine, system: SystemTables, names: NameCache) -> None:
        self.engine = engine
        self.system = system
        self.names = names
        self.refresher = Refresher(engine, system)
        self.definitions = Definitions(engine, self.refresher)
        analyzer = QueryAnalyzer(engine)
        self.creator = Creator(engine, names, self.refresher, self.definitions, analyzer)
        self.alterer = Alterer(engine, names, self.refresher, self.definitions)

    # ---- existing tables ----

    def table_of(self, name: TableName) -> exp.Table:
        return self.definitions.table_of(name)

    def load(self, table: exp.Table, *, kind: ObjectKind | None = None) -> Definition:
        return self.definitions.load(table, kind=kind)

    def managed_tables(self, database: str | None = None) -> list[tuple[exp.Table, Definition]]:
        return self.definitions.managed_tables(database)

    def managed_names(self) -> list[str]:
        return self.definitions.managed_names()

    def is_stale(self, table: exp.Table, definition: Definition) -> bool:
        return self.alterer.is_stale(table, definition)

    def watermark_of(self, table: exp.Table) -> Watermark | None:
        return self.alterer.watermark_of(table)

    # ---- CREATE and EXPLAIN ----

    def create(
        self, statement: CreateDynamicTable, text: str, statement_id: str
    ) -> RefreshResult | None:
        return self.creator.create(statement, text, statement_id)

    def create_materialized_view(
        self, statement: CreateMaterializedView, text: str, statement_id: str
    ) -> RefreshResult | None:
        return self.creator.create_materialized_view(statement, text, statement_id)

    def explain(self, name: TableName) -> Plan:
        return self.creator.explain(name)

    def explain_create(self, statement: CreateDynamicTable) -> Plan:
        return self.creator.explain_create(statement)

    # ---- ALTER and DROP ----

    def alter(self, statement: AlterDynamicTable, statement_id: str) -> RefreshResult | None:
        return self.alterer.alter(statement, statement_id)

    def add_rely_constraint(self, table: exp.Table, constraint: exp.Constraint) -> None:
        self.alterer.add_rely_constraint(table, constraint)

    def add_source_key(self, reference: exp.Table, constraint: exp.Constraint) -> bool:
        return self.alterer.add_source_key(reference, constraint)

    def drop(self, name: TableName, if_exists: bool, kind: ObjectKind) -> None:
        self.alterer.drop(name, if_exists, kind)

    def refresh_materialized_view(self, name: TableName, statement_id: str) -> RefreshResult:
        return self.alterer.refresh_materialized_view(name, statement_id)
