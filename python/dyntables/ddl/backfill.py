"""BACKFILL FROM (seed 001): where a new dynamic table's first rows come from.

``BACKFILL FROM t [AT | BEFORE (TIMESTAMP | OFFSET | VERSION | STATEMENT => …)]`` copies
the rows of ``t`` at that point into the new table instead of running the definition (with
a frozen region, only the frozen region comes from ``t``; the refresh computes the active
region). This module resolves the point to one version of ``t``, checks that ``t`` has
the table's columns in the same order with compatible types, and builds the query that
reads those rows; the refresh writes them (``dyntables.refresh``).
"""

from __future__ import annotations

import datetime
import re

from sqlglot import exp

from dyntables.catalog import table_key
from dyntables.engine import Engine
from dyntables.errors import DynamicTableError
from dyntables.history import REFRESH_HISTORY, STATEMENTS, SYSTEM_SCHEMA
from dyntables.sql.dialect import parse_one, to_spark_sql
from dyntables.statements import TimePoint, TimePointBy, TimePointKind

_INTEGRAL = ["tinyint", "smallint", "int", "bigint"]
_DECIMAL = re.compile(r"decimal\((\d+),(\d+)\)")


def backfill_rows(
    engine: Engine, source: exp.Table, point: TimePoint | None, columns: tuple[tuple[str, str], ...]
) -> exp.Query:
    """The rows of ``source`` at ``point``, as the dynamic table's columns (checked)."""
    if not engine.table_exists(source):
        raise DynamicTableError(f"the backfill source {table_key(source)} does not exist")
    version = resolve_version(engine, source, point)
    pinned = engine.table_format.pinned(source, version)
    session = engine.refresh_session
    schema = session.sql(to_spark_sql(exp.select("*").from_(pinned.copy()).limit(0))).schema
    found = [(field.name, field.dataType.simpleString()) for field in schema.fields]
    check_columns(table_key(source), found, list(columns))
    return exp.select(
        *[
            exp.alias_(
                exp.cast(
                    exp.column(source_name, quoted=True),
                    exp.DataType.build(type_sql, dialect="spark"),
                ),
                name,
                quoted=True,
            )
            for (source_name, _), (name, type_sql) in zip(found, columns, strict=True)
        ]
    ).from_(pinned)


def check_columns(source: str, found: list[tuple[str, str]], wanted: list[tuple[str, str]]) -> None:
    """The source must have the table's columns, in the same order, with types that
    convert without loss; else an error naming the first mismatch."""
    if len(found) != len(wanted):
        raise DynamicTableError(
            f"the backfill source {source} has {len(found)} columns and the dynamic table"
            f" {len(wanted)}: they must have the same columns, in the same order"
        )
    for position, ((name, type_sql), (want, want_type)) in enumerate(
        zip(found, wanted, strict=True), start=1
    ):
        if name.lower() != want.lower():
            raise DynamicTableError(
                f"column {position} of the backfill source {source} is {name}, the dynamic"
                f" table's is {want}: the columns must match in name and order"
            )
        if not compatible(type_sql, want_type):
            raise DynamicTableError(
                f"column {name} of the backfill source {source} is {type_sql}, which does not"
                f" convert to the dynamic table's {want_type} without loss"
            )


def compatible(found: str, wanted: str) -> bool:
    """Whether a value of type ``found`` fits type ``wanted`` exactly."""
    if found == wanted or (found.startswith(("varchar", "char")) and wanted == "string"):
        return True
    if found in _INTEGRAL:
        if wanted in _INTEGRAL:
            return _INTEGRAL.index(found) <= _INTEGRAL.index(wanted)
        digits = {"tinyint": 3, "smallint": 5, "int": 10, "bigint": 19}[found]
        target = _DECIMAL.fullmatch(wanted)
        return wanted == "double" or (
            target is not None and int(target[1]) - int(target[2]) >= digits
        )
    source_decimal, target_decimal = _DECIMAL.fullmatch(found), _DECIMAL.fullmatch(wanted)
    if source_decimal and target_decimal:
        precision, scale = int(source_decimal[1]), int(source_decimal[2])
        to_precision, to_scale = int(target_decimal[1]), int(target_decimal[2])
        return to_scale >= scale and to_precision - to_scale >= precision - scale
    return found == "float" and wanted == "double"


def resolve_version(engine: Engine, source: exp.Table, point: TimePoint | None) -> int:
    """The version of ``source`` a time point names (the current one when none)."""
    fmt = engine.table_format
    session = engine.refresh_session
    commits = fmt.history(session, source)  # newest first
    if not commits:
        raise DynamicTableError(f"the backfill source {table_key(source)} has no versions")
    if point is None:
        return commits[0].version
    before = point.kind is TimePointKind.BEFORE
    if point.by is TimePointBy.VERSION:
        version = int(point.expr_sql)
        known = [c.version for c in commits]
        wanted = _previous(known, version) if before else version
        if wanted is None or wanted not in known:
            raise DynamicTableError(
                f"{table_key(source)} has no version {'before ' if before else ''}{version}"
            )
        return wanted
    if point.by is TimePointBy.STATEMENT:
        committed = _statement_version(engine, source, point.expr_sql.strip().strip("'"))
        wanted = _previous([c.version for c in commits], committed) if before else committed
        if wanted is None:
            raise DynamicTableError(
                f"{table_key(source)} has no version before statement {point.expr_sql}"
            )
        return wanted
    if point.by not in (TimePointBy.TIMESTAMP, TimePointBy.OFFSET):
        raise DynamicTableError(f"BACKFILL FROM … {point.by.value} => is not supported")
    moment = _moment(engine, point)
    eligible = [
        c.version
        for c in commits
        if c.timestamp is not None
        and (_utc(c.timestamp) < moment if before else _utc(c.timestamp) <= moment)
    ]
    if not eligible:
        raise DynamicTableError(
            f"{table_key(source)} has no version {point.kind.value} {moment.isoformat()}"
            " (before its first commit, or outside its history)"
        )
    # The newest of them: the history's order (an Iceberg snapshot id says nothing of it).
    return eligible[0]


def _previous(versions: list[int], version: int) -> int | None:
    """The version just before ``version`` in a table's history (listed newest first)."""
    if version not in versions:
        return None
    position = versions.index(version)
    return versions[position + 1] if position + 1 < len(versions) else None


def _moment(engine: Engine, point: TimePoint) -> datetime.datetime:
    """The UTC instant a TIMESTAMP or OFFSET point names."""
    now = datetime.datetime.now(datetime.timezone.utc)
    if point.by is TimePointBy.OFFSET:
        return now + datetime.timedelta(seconds=float(point.expr_sql))
    as_text = exp.select(exp.cast(parse_one(point.expr_sql), exp.DataType.build("STRING")))
    text = engine.refresh_session.sql(to_spark_sql(as_text)).collect()[0][0]
    if text is None:
        raise DynamicTableError(f"the time point {point.expr_sql} is NULL")
    # A timestamp without a zone is taken as UTC (the session time zone, as elsewhere).
    return _utc(datetime.datetime.fromisoformat(str(text)))


def _utc(moment: datetime.datetime) -> datetime.datetime:
    if moment.tzinfo is None:
        return moment.replace(tzinfo=datetime.timezone.utc)
    return moment.astimezone(datetime.timezone.utc)


def _statement_version(engine: Engine, source: exp.Table, statement_id: str) -> int:
    """The version of ``source`` a statement committed: from the statement log (ordinary
    writes) or the refresh history (a statement that refreshed a dynamic table)."""
    key = table_key(source)
    literal = exp.Literal.string(statement_id)
    logged = (
        exp.select("table_version")
        .from_(exp.table_(STATEMENTS, db=SYSTEM_SCHEMA))
        .where(exp.column("statement_id").eq(literal))
        .where(exp.column("table_name").eq(exp.Literal.string(key)))
    )
    refreshed = (
        exp.select("table_version")
        .from_(exp.table_(REFRESH_HISTORY, db=SYSTEM_SCHEMA))
        .where(exp.column("statement_id").eq(literal.copy()))
        .where(
            exp.func(
                "concat", exp.column("schema_name"), exp.Literal.string("."), exp.column("name")
            ).eq(exp.Literal.string(key))
        )
        .where(exp.column("table_version").is_(exp.null()).not_())
    )
    session = engine.refresh_session
    for query in (logged, refreshed):
        try:
            rows = session.sql(to_spark_sql(query)).collect()
        except Exception:  # the system table does not exist yet: nothing was logged
            rows = []
        if rows:
            return int(rows[0][0])
    raise DynamicTableError(
        f"statement {statement_id} committed no version of {key} (the statement log knows"
        " statements run through dt.sql)"
    )
