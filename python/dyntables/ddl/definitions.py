"""Where the DDL finds dynamic tables: a statement's name qualified to a table, a table's
stored definition (with an interrupted REPLACE finished first), and every managed table.
"""

from __future__ import annotations

from sqlglot import exp

from dyntables.catalog import Definition, ObjectKind, key_to_table, table_key
from dyntables.engine import Engine
from dyntables.errors import DynamicTableError
from dyntables.refresh import Refresher
from dyntables.statements import TableName


class Definitions:
    """Reads the definitions of dynamic tables and materialized views from their tables."""

    def __init__(self, engine: Engine, refresher: Refresher) -> None:
        self.engine = engine
        self.refresher = refresher

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
        # The table's history and its sources', at once where the format can: a refresh
        # or EXPLAIN of the table reads them next.
        sources = [key_to_table(key) for key in definition.sources]
        self.refresher.context.read_histories([table, *sources])
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
        self.refresher.context.wrote(table)
        return committed

    def managed_tables(self, database: str | None = None) -> list[tuple[exp.Table, Definition]]:
        """Every dynamic table and MV of ``database`` (all databases when None)."""
        stored = self._stored_definitions(database)
        # Every table's history and its sources', at once where the format can: a tick's
        # refreshes read them next.
        read = {table_key(table): table for table, _ in stored}
        for _, definition in stored:
            read.update((key, key_to_table(key)) for key in definition.sources)
        self.refresher.context.read_histories(list(read.values()))
        return [
            (table, self.finish_interrupted_replace(table, definition))
            for table, definition in stored
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
