"""System tables in schema ``dyntables_system``: refresh history and the statement log.

Both are ordinary tables of the engine's format, appended to (blind appends, which
never conflict with each other), so that every process and engine sees the same
history. They are created on first use.

Each append adds one small data file, and every read of a system table (SHOW, the
refresh-history function, the scheduler's start) opens all of them, so the system tables
are compacted as they grow (compaction.py).
"""

from __future__ import annotations

import datetime
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, fields
from typing import Any

from sqlglot import exp

from dyntables.compaction import Compactor
from dyntables.engine import Engine
from dyntables.sql.dialect import to_spark_sql
from dyntables.sql.literals import typed_literal

SYSTEM_SCHEMA = "dyntables_system"
REFRESH_HISTORY = "refresh_history"
STATEMENTS = "statements"


@dataclass(frozen=True)
class RefreshRecord:
    """One row of ``refresh_history``: one refresh of one dynamic table."""

    name: str
    schema_name: str
    state: str
    state_message: str | None
    query_id: str
    refresh_trigger: str
    refresh_action: str | None  # None for a refresh that did not run (SKIPPED, UPSTREAM_FAILED)
    refresh_action_reason: str | None
    data_timestamp: datetime.datetime | None
    refresh_start_time: datetime.datetime
    refresh_end_time: datetime.datetime
    rows_inserted: int | None
    rows_deleted: int | None
    table_version: int | None
    statement_id: str | None


_REFRESH_HISTORY_COLUMNS = (
    ("name", "STRING"),
    ("schema_name", "STRING"),
    ("state", "STRING"),
    ("state_message", "STRING"),
    ("query_id", "STRING"),
    ("refresh_trigger", "STRING"),
    ("refresh_action", "STRING"),
    ("refresh_action_reason", "STRING"),
    ("data_timestamp", "TIMESTAMP"),
    ("refresh_start_time", "TIMESTAMP"),
    ("refresh_end_time", "TIMESTAMP"),
    ("rows_inserted", "BIGINT"),
    ("rows_deleted", "BIGINT"),
    ("table_version", "BIGINT"),
    ("statement_id", "STRING"),
)

_STATEMENT_COLUMNS = (
    ("statement_id", "STRING"),
    ("statement_text", "STRING"),
    ("started_at", "TIMESTAMP"),
    ("finished_at", "TIMESTAMP"),
    ("table_name", "STRING"),
    ("table_version", "BIGINT"),
)


def new_id() -> str:
    return str(uuid.uuid4())


def utc_now() -> datetime.datetime:
    """Now, as a naive UTC timestamp (how Spark's TIMESTAMP literals are written here)."""
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)


class SystemTables:
    """Reads and appends to the system tables of one engine."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._ready = False
        # Compacts the system tables here, and the dynamic tables a refresh commits to.
        self.compactor = Compactor(engine)
        # The refresh-history rows of the current scheduler tick, per thread (``batching``).
        self._batches = threading.local()

    def table(self, name: str) -> exp.Table:
        return exp.table_(name, db=SYSTEM_SCHEMA)

    def ensure(self) -> None:
        if self._ready:
            return
        schema = exp.Create(this=exp.table_(SYSTEM_SCHEMA), kind="DATABASE", exists=True)
        self.engine.session.sql(to_spark_sql(schema))
        for name, columns in (
            (REFRESH_HISTORY, _REFRESH_HISTORY_COLUMNS),
            (STATEMENTS, _STATEMENT_COLUMNS),
        ):
            self.create_if_absent(self.table(name), columns)
        self._ready = True

    def create_if_absent(self, table: exp.Table, columns: tuple[tuple[str, str], ...]) -> None:
        """Create a system table unless it exists. Every process creates what it needs on
        first use, so two may create the same table at once: the one that loses finds the
        other's table there, which is all it wanted."""
        create = self.engine.table_format.create_table(table, list(columns), {})
        create.set("exists", True)  # IF NOT EXISTS
        try:
            self.engine.session.sql(to_spark_sql(create))
        except Exception:
            if not self.engine.table_exists(table):
                raise

    def read_fresh(self, session: Any, name: str = REFRESH_HISTORY) -> exp.Table:
        """The system table ``name``, for a read on ``session`` that sees what other
        processes appended: Iceberg's catalog caches a table per session, and a history
        read from that copy would miss rows (a row looked for in recovery, then added
        twice)."""
        table = self.table(name)
        self.engine.table_format.forget_cached(session, table)
        return table

    def recorded_refreshes(self, query_ids: list[str]) -> set[str]:
        """Which of the refreshes ``query_ids`` the refresh history holds a row of."""
        if not query_ids:
            return set()
        self.ensure()
        column = exp.column("query_id")
        query = (
            exp.select(column)
            .distinct()
            .from_(self.read_fresh(self.engine.session))
            .where(column.copy().isin(*[exp.Literal.string(q) for q in query_ids]))
        )
        return {str(row[0]) for row in self.engine.session.sql(to_spark_sql(query)).collect()}

    def record_refresh(self, record: RefreshRecord) -> None:
        """Append a refresh's row, or keep it for the end of the tick (``batching``)."""
        values = [getattr(record, f.name) for f in fields(record)]
        batch: list[list[Any]] | None = getattr(self._batches, "rows", None)
        if batch is not None:
            batch.append(values)
            return
        self.ensure()
        self._append(REFRESH_HISTORY, _REFRESH_HISTORY_COLUMNS, [values])

    @contextmanager
    def batching(self) -> Iterator[None]:
        """Within the block (a scheduler tick), the refresh-history rows recorded on this
        thread are written at its end, in one insert. A process that stops before then
        leaves them out; the next refresh of each table adds the rows of committed refreshes
        (``RefreshContext.ensure_recorded``)."""
        if getattr(self._batches, "rows", None) is not None:
            yield  # a tick within a tick: the outer one writes
            return
        self._batches.rows = []
        try:
            yield
        finally:
            rows, self._batches.rows = self._batches.rows, None
            if rows:
                self.ensure()
                self._append(REFRESH_HISTORY, _REFRESH_HISTORY_COLUMNS, rows)

    def record_statement(
        self,
        statement_id: str,
        text: str,
        started_at: datetime.datetime,
        committed: dict[str, int],
    ) -> None:
        """Log a statement that committed table versions (one row per table)."""
        if not committed:
            return
        self.ensure()
        finished_at = utc_now()
        rows = [
            [statement_id, text, started_at, finished_at, table_name, version]
            for table_name, version in committed.items()
        ]
        self._append(STATEMENTS, _STATEMENT_COLUMNS, rows)

    def latest_data_timestamps(self) -> dict[str, datetime.datetime]:
        """Each table's data timestamp as of its latest successful refresh, NO_DATA ones
        included (which commit nothing, so the table's own watermark does not move),
        keyed ``schema.name`` in lower case."""
        self.ensure()
        query = (
            exp.select("schema_name", "name", exp.func("max", exp.column("data_timestamp")))
            .from_(self.read_fresh(self.engine.session))
            .where(exp.column("state").eq(exp.Literal.string("SUCCEEDED")))
            .group_by("schema_name", "name")
        )
        rows = self.engine.session.sql(to_spark_sql(query)).collect()
        return {f"{r[0]}.{r[1]}".lower(): r[2] for r in rows if r[2] is not None}

    def _append(
        self, name: str, columns: tuple[tuple[str, str], ...], rows: list[list[Any]]
    ) -> None:
        self._insert_rows(name, columns, rows)
        self.compactor.committed(self.table(name), self.engine.session)

    def _insert_rows(
        self, name: str, columns: tuple[tuple[str, str], ...], rows: list[list[Any]]
    ) -> None:
        """Rows appended in one commit."""
        if self.engine.appends_rows_as_dataframes:
            self._append_through_view(name, columns, rows)
            return
        tuples = [
            exp.Tuple(
                expressions=[
                    typed_literal(value, type_sql)
                    for value, (_, type_sql) in zip(values, columns, strict=True)
                ]
            )
            for values in rows
        ]
        insert = exp.Insert(this=self.table(name), expression=exp.Values(expressions=tuples))
        self.engine.session.sql(to_spark_sql(insert))

    def _append_through_view(
        self, name: str, columns: tuple[tuple[str, str], ...], rows: list[list[Any]]
    ) -> None:
        """The rows as a DataFrame (``Engine.appends_rows_as_dataframes``, sparkshim):
        parsing and translating an ``INSERT … VALUES`` of typed literals costs sparkshim
        more than the append itself (about 8 of 20 ms). Not on Spark, where a naive
        datetime in a DataFrame is read in the driver's time zone and a literal in the
        session's."""
        session = self.engine.session
        schema = ", ".join(f"{column} {type_sql}" for column, type_sql in columns)
        view = f"__dyntables_row_{uuid.uuid4().hex}"
        session.createDataFrame([tuple(values) for values in rows], schema).createOrReplaceTempView(
            view
        )
        try:
            # Read under a fixed name: the statement's text is then the same each time
            # (sparkshim keeps the translations of statements it has seen).
            rows_read = exp.to_table(view).as_("new_row")
            insert = exp.insert(exp.select("*").from_(rows_read), self.table(name))
            session.sql(to_spark_sql(insert))
        finally:
            session.catalog.dropTempView(view)
