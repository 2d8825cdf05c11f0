"""Typed statements: what the front-end hands to the rest of the system.

``dyntables.parse`` turns text into these frozen dataclasses at once; nothing past the
front-end sees ANTLR types. Embedded SQL (queries, predicates, the REFRESH USING body,
time-point expressions, column types) is kept verbatim as the user wrote it, sliced from
the original text, so that later stages hand it to sqlglot with the user's spelling.

Every node carries a ``span`` (where it came from in the text given to ``parse``) that is
excluded from equality, so two statements that mean the same thing compare equal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum


@dataclass(frozen=True)
class Span:
    """A half-open character range ``[start, stop)`` of the parsed text, with the
    1-based line and column of ``start``."""

    start: int
    stop: int
    line: int
    column: int


def _span() -> Span | None:
    """A ``span`` field: excluded from equality, hashing and repr."""
    return field(default=None, compare=False, hash=False, repr=False)


_PLAIN_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*\Z")


@dataclass(frozen=True)
class TableName:
    """A possibly qualified object name; ``parts`` hold the unquoted identifiers.

    >>> str(TableName(("sales", "daily_totals")))
    'sales.daily_totals'
    >>> str(TableName(("my db", "t")))
    '`my db`.t'
    """

    parts: tuple[str, ...]
    span: Span | None = _span()

    @property
    def name(self) -> str:
        """The last part: the object's own name without its namespace."""
        return self.parts[-1]

    @property
    def namespace(self) -> tuple[str, ...]:
        """Every part but the last (catalog and/or schema), possibly empty."""
        return self.parts[:-1]

    def __str__(self) -> str:
        return ".".join(
            part if _PLAIN_IDENTIFIER.match(part) else "`" + part.replace("`", "``") + "`"
            for part in self.parts
        )


@dataclass(frozen=True)
class ColumnDef:
    """One entry of a column list: ``name [type_sql] [NOT NULL] [COMMENT 'comment']``.

    ``type_sql`` is the type exactly as written (``DECIMAL(10, 2)``, ``ARRAY<STRING>``),
    or ``None`` where the query determines it (allowed for ``AS <query>`` tables only).
    """

    name: str
    type_sql: str | None
    comment: str | None = None
    not_null: bool = False
    span: Span | None = _span()


@dataclass(frozen=True)
class TargetLag:
    """``TARGET_LAG = '<n> <unit>'`` (``seconds`` set) or ``TARGET_LAG = DOWNSTREAM``."""

    seconds: int | None
    downstream: bool = False
    span: Span | None = _span()


class RefreshMode(str, Enum):
    AUTO = "AUTO"
    FULL = "FULL"
    INCREMENTAL = "INCREMENTAL"
    CUSTOM_INCREMENTAL = "CUSTOM_INCREMENTAL"


class Initialize(str, Enum):
    ON_CREATE = "ON_CREATE"
    ON_SCHEDULE = "ON_SCHEDULE"


class TimePointKind(str, Enum):
    """Whether a time point is the state AT it or just BEFORE it."""

    AT = "AT"
    BEFORE = "BEFORE"


class TimePointBy(str, Enum):
    """What a time point is measured by."""

    TIMESTAMP = "TIMESTAMP"
    OFFSET = "OFFSET"
    STATEMENT = "STATEMENT"
    VERSION = "VERSION"
    STREAM = "STREAM"


@dataclass(frozen=True)
class TimePoint:
    """``AT | BEFORE (<by> => <expr>)``; ``START AT (...)`` is always ``kind = AT``.

    ``expr_sql`` is the expression as written: ``'2025-04-01 12:00:00'::TIMESTAMP_NTZ``,
    ``-3600``, ``'<statement_id>'``.
    """

    kind: TimePointKind
    by: TimePointBy
    expr_sql: str
    span: Span | None = _span()


@dataclass(frozen=True)
class BackfillFrom:
    """``BACKFILL FROM table [AT | BEFORE (...)]``."""

    table: TableName
    point: TimePoint | None = None
    span: Span | None = _span()


@dataclass(frozen=True)
class Statement:
    """Base of every statement ``parse`` returns."""


@dataclass(frozen=True)
class PassThrough(Statement):
    """Ordinary SQL, for the session's own ``sql``: ``sql`` is the exact text."""

    sql: str
    span: Span | None = _span()


@dataclass(frozen=True)
class CreateDynamicTable(Statement):
    """``CREATE [OR REPLACE] [TRANSIENT] DYNAMIC TABLE ...``.

    Exactly one of ``query`` (after ``AS``) and ``refresh_using`` (the DML statement
    inside ``REFRESH USING ( ... )``) is set; both are verbatim text. ``columns`` is
    ``None`` when no column list was written. ``frozen_where`` is the predicate without
    its outer parentheses, from ``FROZEN WHERE`` or the legacy ``IMMUTABLE WHERE``.
    ``properties`` are the ``TBLPROPERTIES`` pairs in the order written.
    """

    name: TableName
    target_lag: TargetLag
    query: str | None = None
    refresh_using: str | None = None
    columns: tuple[ColumnDef, ...] | None = None
    or_replace: bool = False
    if_not_exists: bool = False
    transient: bool = False
    warehouse: str | None = None
    refresh_mode: RefreshMode | None = None
    initialize: Initialize | None = None
    frozen_where: str | None = None
    backfill_from: BackfillFrom | None = None
    start_at: TimePoint | None = None
    comment: str | None = None
    cluster_by: tuple[str, ...] = ()
    partitioned_by: tuple[str, ...] = ()
    data_retention_days: int | None = None
    properties: tuple[tuple[str, str], ...] = ()
    copy_grants: bool = False
    span: Span | None = _span()


class AlterAction(str, Enum):
    """What an ``ALTER DYNAMIC TABLE`` does; the IMMUTABLE spellings map to FROZEN."""

    SUSPEND = "SUSPEND"
    RESUME = "RESUME"
    REFRESH = "REFRESH"
    SET_TARGET_LAG = "SET_TARGET_LAG"
    SET_WAREHOUSE = "SET_WAREHOUSE"
    SET_REFRESH_MODE = "SET_REFRESH_MODE"
    SET_FROZEN_WHERE = "SET_FROZEN_WHERE"
    UNSET_FROZEN_WHERE = "UNSET_FROZEN_WHERE"
    RENAME_TO = "RENAME_TO"
    SET_COMMENT = "SET_COMMENT"


AlterValue = TargetLag | RefreshMode | TableName | str | None
"""The value an ALTER action carries, by action: SET_TARGET_LAG → ``TargetLag``;
SET_REFRESH_MODE → ``RefreshMode``; RENAME_TO → ``TableName``; SET_WAREHOUSE (the
warehouse name), SET_FROZEN_WHERE (the predicate without outer parentheses) and
SET_COMMENT (the comment) → ``str``; the others → ``None``."""


@dataclass(frozen=True)
class AlterDynamicTable(Statement):
    """``ALTER DYNAMIC TABLE [IF EXISTS] name <action>``."""

    name: TableName
    action: AlterAction
    value: AlterValue = None
    if_exists: bool = False
    span: Span | None = _span()


@dataclass(frozen=True)
class DropDynamicTable(Statement):
    name: TableName
    if_exists: bool = False
    span: Span | None = _span()


@dataclass(frozen=True)
class ShowDynamicTables(Statement):
    """``SHOW [FULL] DYNAMIC TABLES [LIKE 'pattern'] [IN {ACCOUNT | [SCHEMA | DATABASE]
    name}]``.

    ``like`` is the SQL LIKE pattern (``%`` and ``_``), matched case-insensitively as in
    Snowflake. ``in_schema`` names the schema (a Spark database) to list; ``in_account``
    asks for every schema; neither means the current schema. The result has Snowflake's
    columns either way; ``full`` asks a terminal (the ``dyntables-sql`` shell, the magics)
    to print every one of them instead of the few that fit a line.
    """

    like: str | None = None
    in_schema: TableName | None = None
    in_account: bool = False
    full: bool = False
    span: Span | None = _span()


@dataclass(frozen=True)
class DescribeDynamicTable(Statement):
    name: TableName
    span: Span | None = _span()


@dataclass(frozen=True)
class ExplainDynamicTable(Statement):
    name: TableName
    span: Span | None = _span()


@dataclass(frozen=True)
class ExplainCreateDynamicTable(Statement):
    """``EXPLAIN CREATE DYNAMIC TABLE ...``: check a definition without creating it."""

    create: CreateDynamicTable
    span: Span | None = _span()


@dataclass(frozen=True)
class CreateMaterializedView(Statement):
    name: TableName
    query: str
    or_replace: bool = False
    if_not_exists: bool = False
    columns: tuple[ColumnDef, ...] | None = None
    comment: str | None = None
    properties: tuple[tuple[str, str], ...] = ()
    span: Span | None = _span()


@dataclass(frozen=True)
class RefreshMaterializedView(Statement):
    """``REFRESH MATERIALIZED VIEW name`` (or BigQuery's
    ``CALL BQ.REFRESH_MATERIALIZED_VIEW('name')``)."""

    name: TableName
    span: Span | None = _span()


@dataclass(frozen=True)
class DropMaterializedView(Statement):
    name: TableName
    if_exists: bool = False
    span: Span | None = _span()


DynamicTableStatement = (
    CreateDynamicTable
    | AlterDynamicTable
    | DropDynamicTable
    | ShowDynamicTables
    | DescribeDynamicTable
    | ExplainDynamicTable
    | ExplainCreateDynamicTable
    | CreateMaterializedView
    | RefreshMaterializedView
    | DropMaterializedView
)
"""Every statement that is ours (anything else is a ``PassThrough``)."""
