"""Execute one Spark SQL statement on the shim: queries, DDL, DML and utility commands.

``execute`` parses the statement with the shim's Spark dialect and hands it to the handler
for its kind. Each handler returns the statement's result as an Arrow table (empty for
commands, as Spark returns an empty DataFrame). Statements the shim cannot run exactly
as Spark would raise ``UnsupportedSqlError``.
"""

from __future__ import annotations

import datetime
import fnmatch
import json
import math
import re
import uuid
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.errors import PySparkException
from sqlglot import exp
from sqlglot.errors import SqlglotError

from sparkshim import column_names, delta, dml, live_files, sources
from sparkshim.catalog import ObjectName, is_delta_table
from sparkshim.config import OVERWRITE_SCHEMA_CONF, RETENTION_CHECK_CONF
from sparkshim.error_mapping import (
    cast_invalid_input,
    engine_error,
    table_not_found,
    unsupported_statement,
)
from sparkshim.errors import AnalysisException, ParseException, UnsupportedSqlError
from sparkshim.maintenance import optimize, vacuum
from sparkshim.parses import Parses
from sparkshim.query import run_query
from sparkshim.syntax import check_statement, statement_words
from sparkshim.types import align_to_schema, is_text, parse_ddl_type, to_spark_type

if TYPE_CHECKING:
    from sparkshim.session_protocol import SessionProtocol

EMPTY = pa.table({})
# The trees of the statements run lately, shared by every session of the process
# (parses.py): a refresh's statements differ between runs only in the versions they read.
PARSES = Parses()
_Result = TypeVar("_Result")

# Utility statements sqlglot does not parse; matched on their text.
# A table name, or ``delta.`path``` (a backtick-quoted part may hold any character).
_NAME = r"(?P<name>(?:`(?:[^`]|``)*`|[\w.])+)"
_SHOW_TABLES = re.compile(
    r"SHOW\s+TABLES(?:\s+(?:IN|FROM)\s+(?P<db>[\w`]+))?(?:\s+(?:LIKE\s+)?'(?P<like>[^']*)')?\s*$",
    re.IGNORECASE,
)
_SHOW_DATABASES = re.compile(r"SHOW\s+(?:DATABASES|SCHEMAS)\s*$", re.IGNORECASE)
_SHOW_TBLPROPERTIES = re.compile(
    rf"SHOW\s+TBLPROPERTIES\s+{_NAME}(?:\s*\(\s*(?P<key>'[^']*'|[\w.]+)\s*\))?\s*$",
    re.IGNORECASE,
)
_SET_READ = re.compile(r"SET\s+(?P<key>[\w.]+)\s*$", re.IGNORECASE)
# SET key = value, the value as written (Spark reads the rest of the statement as text:
# ``America/Los_Angeles`` is a value, not a division); a value in quotes is unquoted.
_SET_WRITE = re.compile(r"SET\s+(?P<key>[\w.]+)\s*=\s*(?P<value>\S(?:.*\S)?)\s*$", re.I | re.S)
_DESCRIBE_HISTORY_LIMIT = re.compile(
    rf"(?:DESCRIBE|DESC)\s+HISTORY\s+{_NAME}\s+LIMIT\s+(?P<limit>\d+)\s*$", re.IGNORECASE
)
_DESCRIBE_DETAIL = re.compile(rf"(?:DESCRIBE|DESC)\s+DETAIL\s+{_NAME}\s*$", re.IGNORECASE)
_OPTIMIZE = re.compile(
    rf"OPTIMIZE\s+{_NAME}(?:\s+WHERE\s+(?P<where>.+?))?"
    r"(?:\s+ZORDER\s+BY\s*(?P<zorder>\([^)]*\)|[\w`,\s]+?))?\s*$",
    re.IGNORECASE | re.DOTALL,
)
_REORG_PURGE = re.compile(
    rf"REORG\s+TABLE\s+{_NAME}(?:\s+WHERE\s+(?P<where>.+?))?\s+APPLY\s*\(\s*PURGE\s*\)\s*$",
    re.IGNORECASE | re.DOTALL,
)
_VACUUM = re.compile(
    rf"VACUUM\s+{_NAME}(?:\s+RETAIN\s+(?P<hours>\d+(?:\.\d+)?)\s+HOURS?)?"
    r"(?P<dry_run>\s+DRY\s+RUN)?\s*$",
    re.IGNORECASE,
)
_UNSET_TBLPROPERTIES = re.compile(
    rf"ALTER\s+TABLE\s+{_NAME}\s+UNSET\s+TBLPROPERTIES\s+(?P<if_exists>IF\s+EXISTS\s+)?"
    r"\((?P<keys>[^)]*)\)\s*$",
    re.IGNORECASE,
)


def execute(session: SessionProtocol, text: str) -> pa.Table:
    """Run one statement; its result rows (empty for commands)."""
    statement = text.strip().rstrip(";").strip()
    for pattern, handler in _UTILITY_STATEMENTS:
        match = pattern.match(statement)
        if match:
            return _guarded(None, partial(handler, session, match))
    tree = _guarded(None, partial(PARSES.parse, statement))
    for kind, tree_handler in _HANDLERS:
        if isinstance(tree, kind):
            return _guarded(tree, partial(tree_handler, session, tree))
    check_statement(statement, tree)  # a statement sqlglot accepts where Spark would not
    raise UnsupportedSqlError(f"the statement {statement_words(statement)}")


# Python errors that mean a defect or a gap of the translation, never the user's mistake;
# sqlglot's too (the user's statement is parsed into Spark's errors before: a sqlglot error
# after that is the translation's, as when it reads back SQL it generated).
_INTERNAL_ERRORS = (
    AttributeError,
    IndexError,
    KeyError,
    NotImplementedError,
    TypeError,
    ValueError,
    SqlglotError,
)


def _guarded(tree: exp.Expr | None, run: Callable[[], _Result]) -> _Result:
    """``run()``, with DuckDB's errors as Spark's and Python's internal errors as a refusal
    of the statement (each keeps its cause chained, for debugging)."""
    try:
        return run()
    except PySparkException:
        raise
    except duckdb.Error as failure:
        raise engine_error(failure, tree) from failure
    except _INTERNAL_ERRORS as failure:
        raise unsupported_statement(tree) from failure


# ---- queries ----


def query(session: SessionProtocol, tree: exp.Expr) -> pa.Table:
    return run_query(session, tree)


# ---- databases ----


def create(session: SessionProtocol, tree: exp.Create) -> pa.Table:
    kind = str(tree.args.get("kind", "")).upper()
    if kind in ("SCHEMA", "DATABASE"):
        target = tree.this
        name = target.db or target.name
        session.catalog_store.create_database(name, if_not_exists=bool(tree.args.get("exists")))
        return EMPTY
    if kind == "VIEW":
        return create_view(session, tree)
    if kind == "TABLE":
        return create_table(session, tree)
    raise UnsupportedSqlError(f"CREATE {kind}")


def drop(session: SessionProtocol, tree: exp.Drop) -> pa.Table:
    kind = str(tree.args.get("kind", "")).upper()
    if_exists = bool(tree.args.get("exists"))
    for target in tree.args.get("tables") or [tree.this]:
        if kind in ("SCHEMA", "DATABASE"):
            name = target.db or target.name
            cascade = bool(tree.args.get("cascade"))
            session.catalog_store.drop_database(name, if_exists, cascade)
        elif kind in ("TABLE", "VIEW"):
            drop_table_or_view(session, target, kind, if_exists)
        else:
            raise UnsupportedSqlError(f"DROP {kind}")
    return EMPTY


def drop_table_or_view(
    session: SessionProtocol, target: exp.Table, kind: str, if_exists: bool
) -> None:
    if kind == "VIEW" and not target.db and session.drop_temp_view(target.name):
        return
    name = session.qualify(target)
    entry = session.catalog_store.lookup(name)
    if entry is None:
        if if_exists:
            return
        raise table_not_found("spark_catalog", name.database, name.name)
    if (kind == "VIEW") != entry.is_view:
        expected = "a view" if kind == "VIEW" else "a table"
        raise AnalysisException(
            message=f"`{name}` is not {expected}: use DROP {'TABLE' if kind == 'VIEW' else 'VIEW'}"
        )
    session.catalog_store.drop(name)


def use(session: SessionProtocol, tree: exp.Use) -> pa.Table:
    session.catalog.setCurrentDatabase(tree.this.name or tree.this.db)
    return EMPTY


# ---- tables ----


def create_table(session: SessionProtocol, tree: exp.Create) -> pa.Table:
    target = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
    name = session.qualify(target)
    source = sources.addressed(target)  # delta.`path`, unless a table has that name
    if (
        source is not None
        and source.format == sources.DELTA
        and session.catalog_store.lookup(name) is None
    ):
        return _create_at_path(session, tree, source.path)
    session.catalog_store.require_database(name.database)
    options = _table_options(tree)
    existing = session.catalog_store.lookup(name)
    replace = bool(tree.args.get("replace"))
    if existing is not None and not replace:
        if tree.args.get("exists"):
            return EMPTY
        raise _already_exists(name)
    if existing is not None and existing.is_view:
        raise AnalysisException(message=f"`{name}` is a view: DROP VIEW it first")
    location = options.location or session.catalog_store.managed_location(name)
    if options.location is not None and not replace and is_delta_table(location):
        _register_existing(session, tree, name, options)
        return EMPTY
    where = f": no Delta table is at {location}" if options.location is not None else ""
    schema, data = _new_table_contents(session, tree, str(name), where)
    options.partition_by = _partition_columns(options.partition_by, schema, name)
    if data is not None:
        delta.check_partition_values(options.partition_by, data)
    try:
        _create_delta(location, schema, options, replace=existing is not None)
    except Exception:
        if existing is not None or session.catalog_store.lookup(name) is None:
            raise
        # Another process created it since the lookup: IF NOT EXISTS is satisfied.
        if tree.args.get("exists"):
            return EMPTY
        raise _already_exists(name) from None
    if options.location is not None:
        session.catalog_store.register_external_table(name, location)
    _write_rows(session, location, data)
    return EMPTY


def _create_at_path(session: SessionProtocol, tree: exp.Create, path: Path) -> pa.Table:
    """``CREATE [OR REPLACE] TABLE [IF NOT EXISTS] delta.`p` [(columns)] [AS query]``: the
    Delta table at ``p``, named by its path and entered in no catalog (what
    ``df.write.save(p)`` runs)."""
    options = _table_options(tree)
    if options.location is not None and options.location != path.resolve():
        raise AnalysisException(
            message=f"CREATE TABLE delta.`{path}` names its location already: leave out"
            f" LOCATION '{options.location}'"
        )
    exists = is_delta_table(path)
    if exists and not tree.args.get("replace"):
        if tree.args.get("exists"):
            return EMPTY
        raise AnalysisException(
            message=f"[DELTA_TABLE_ALREADY_EXISTS] Table delta.`{path}` already exists: use"
            " CREATE OR REPLACE TABLE, or CREATE TABLE IF NOT EXISTS"
        )
    schema, data = _new_table_contents(session, tree, f"delta.`{path}`")
    options.partition_by = _partition_columns(options.partition_by, schema, f"delta.`{path}`")
    if data is not None:
        delta.check_partition_values(options.partition_by, data)
    _create_delta(path, schema, options, replace=exists)
    _write_rows(session, path, data)
    return EMPTY


def _create_delta(
    location: Path, schema: pa.Schema, options: _TableOptions, *, replace: bool
) -> None:
    """The Delta table a CREATE TABLE makes at ``location``, with its ``options``
    (``_table_options``: partitioning, properties, comment)."""
    delta.create(
        location,
        schema,
        partition_by=options.partition_by,
        properties=options.properties,
        comment=options.comment,
        replace=replace,
    )


def _partition_columns(written: list[str], schema: pa.Schema, table: ObjectName | str) -> list[str]:
    """A new table's PARTITIONED BY columns as its schema spells them (``PARTITIONED BY
    (region)`` of a column ``Region`` partitions by ``Region``), or Spark's
    COLUMN_NOT_DEFINED_IN_TABLE."""
    partitioning = []
    for name in written:
        column = column_names.resolve(name, schema.names)
        if column is None:
            defined = ", ".join(f"`{column}`" for column in schema.names)
            raise AnalysisException(
                message=f"[COLUMN_NOT_DEFINED_IN_TABLE] partition column `{name}` is not"
                f" defined in table {table}, defined table columns are: {defined}."
            )
        partitioning.append(column)
    column_names.check_unique(partitioning)
    return partitioning


def _write_rows(session: SessionProtocol, location: Path, data: pa.Table | None) -> None:
    """A new table's first rows (from its AS query), if any."""
    if data is not None and data.num_rows:
        delta.write(location, data, overwrite=False, options=session.commit_options())


def _new_table_contents(
    session: SessionProtocol, tree: exp.Create, name: str, where: str = ""
) -> tuple[pa.Schema, pa.Table | None]:
    """The schema of the table ``tree`` creates (its column list or its query's) and the
    rows of its query, if it has one."""
    data = run_query(session, tree.expression) if tree.expression is not None else None
    if data is not None:
        column_names.check_unique(data.column_names)
    declared = _declared_schema(tree)
    if data is not None and declared is not None:
        raise AnalysisException(message="CREATE TABLE ... AS SELECT cannot also declare columns")
    schema = declared or (data.schema if data is not None else None)
    if schema is None:
        raise AnalysisException(
            message=f"CREATE TABLE {name} needs a column list or AS <query>{where}"
        )
    return schema, data


def _register_existing(
    session: SessionProtocol, tree: exp.Create, name: ObjectName, options: _TableOptions
) -> None:
    """``CREATE TABLE t [(columns)] USING delta LOCATION 'p'`` where p holds a Delta table:
    t names that table, with the schema, partitioning and properties of its log (those the
    statement declares must be the log's). Nothing is written to the table."""
    assert options.location is not None
    location = options.location
    if tree.expression is not None:
        raise AnalysisException(
            message=f"[DELTA_TABLE_LOCATION_MISMATCH] {location} already holds a Delta table:"
            f" CREATE TABLE {name} USING delta LOCATION '{location}' without AS <query>"
            " registers it; INSERT INTO adds rows to it"
        )
    declared = _declared_schema(tree)
    table = delta.open_table(location)
    if declared is not None:
        differences = _schema_differences(declared, delta.arrow_schema(table))
        if differences:
            raise AnalysisException(
                message=f"[DELTA_CREATE_TABLE_SCHEMA_MISMATCH] The columns declared for {name}"
                f" are not those of the Delta table at {location}: {'; '.join(differences)}."
                " Declare the table's columns, or leave the column list out to take them"
                " from the table"
            )
    partitioning = list(table.metadata().partition_columns)
    if options.partition_by and [c.lower() for c in options.partition_by] != [
        c.lower() for c in partitioning
    ]:
        raise AnalysisException(
            message=f"[DELTA_CREATE_TABLE_WITH_DIFFERENT_PARTITIONING] The Delta table at"
            f" {location} is partitioned by ({', '.join(partitioning)}), not by"
            f" ({', '.join(options.partition_by)}): leave PARTITIONED BY out"
        )
    existing = dict(table.metadata().configuration)
    for key, value in options.properties.items():
        if existing.get(key) != value:
            raise AnalysisException(
                message=f"[DELTA_CREATE_TABLE_WITH_DIFFERENT_PROPERTY] The Delta table at"
                f" {location} has {key}={existing.get(key)!r}, not {value!r}: leave"
                " TBLPROPERTIES out, and change properties with ALTER TABLE ... SET"
                " TBLPROPERTIES"
            )
    session.catalog_store.register_external_table(name, location)


def _schema_differences(declared: pa.Schema, existing: pa.Schema) -> list[str]:
    """How a declared column list differs from a table's columns (names in any case,
    types as Spark names them; nullability is not compared)."""
    declared_types = {f.name.lower(): to_spark_type(f.type).simpleString() for f in declared}
    existing_types = {f.name.lower(): to_spark_type(f.type).simpleString() for f in existing}
    differences = []
    for column, spark_type in declared_types.items():
        actual = existing_types.get(column)
        if actual is None:
            differences.append(f"`{column}` is not a column of the table")
        elif actual != spark_type:
            differences.append(f"`{column}` is {actual} in the table, declared {spark_type}")
    missing = [f"`{column}`" for column in existing_types if column not in declared_types]
    if missing:
        differences.append(f"the table's columns not declared: {', '.join(missing)}")
    if not differences and list(declared_types) != list(existing_types):
        differences.append(f"the table's column order is {', '.join(existing_types)}")
    return differences


def _already_exists(name: ObjectName) -> AnalysisException:
    return AnalysisException(
        message=f"[TABLE_OR_VIEW_ALREADY_EXISTS] Cannot create table or view `{name.database}`."
        f"`{name.name}` because it already exists."
    )


class _TableOptions:
    def __init__(self) -> None:
        self.location: Path | None = None
        self.partition_by: list[str] = []
        self.properties: dict[str, str] = {}
        self.comment: str | None = None


def _table_options(tree: exp.Create) -> _TableOptions:
    options = _TableOptions()
    properties = tree.args.get("properties")
    for prop in properties.expressions if properties is not None else []:
        if isinstance(prop, exp.FileFormatProperty):
            provider = prop.name.lower()
            if provider != "delta":
                raise UnsupportedSqlError(
                    f"tables USING {provider}", "the shim stores every table as Delta: USING delta"
                )
        elif isinstance(prop, exp.LocationProperty):
            options.location = Path(prop.this.name).resolve()
        elif isinstance(prop, exp.PartitionedByProperty):
            columns = prop.this.expressions if isinstance(prop.this, exp.Schema) else [prop.this]
            options.partition_by = [column.name for column in columns]
        elif isinstance(prop, exp.SchemaCommentProperty):
            options.comment = prop.this.name
        elif isinstance(prop, exp.DynamicProperty):
            raise UnsupportedSqlError(
                "CREATE DYNAMIC TABLE",
                "Spark has no dynamic tables; run it through DynamicTables.sql, or install"
                " dyntables on the session (dyntables.install(spark))",
            )
        elif isinstance(prop, exp.Property) and "value" in prop.args:
            options.properties[_property_key(prop)] = _property_value(prop.args["value"])
        else:
            raise UnsupportedSqlError(f"the table option {prop.sql('spark')}")
    delta.check_property_values(options.properties)
    return options


def _property_key(prop: exp.Property) -> str:
    key = prop.this
    return key.name if isinstance(key, exp.Literal) else key.sql("spark").replace("`", "")


def _property_value(value: exp.Expr) -> str:
    if isinstance(value, exp.Boolean):
        return "true" if value.this else "false"
    return value.name if isinstance(value, exp.Literal) else value.sql("spark")


def _added_columns(actions: list[exp.Expr]) -> list[pa.Field] | None:
    """The columns ``ALTER TABLE t ADD COLUMN[S] …`` adds, as nullable fields with their
    comments (Delta adds no NOT NULL column to a table that may hold rows); None for
    another ALTER TABLE."""
    definitions: list[exp.Expr] = []
    for action in actions:
        if isinstance(action, exp.Schema):
            definitions.extend(action.expressions)
        elif isinstance(action, exp.ColumnDef):
            definitions.append(action)
        else:
            return None
    if not definitions:
        return None
    fields = []
    for definition in definitions:
        column, type_ = _column_definition(definition)
        _refuse_computed_values(column)
        comment = None
        for constraint in column.constraints:
            if isinstance(constraint.kind, exp.NotNullColumnConstraint):
                raise AnalysisException(
                    message="[DELTA_OPERATION_NOT_ALLOWED] Operation not allowed: `NOT NULL in"
                    " ALTER TABLE ADD COLUMNS` is not supported for Delta tables."
                )
            if isinstance(constraint.kind, exp.CommentColumnConstraint):
                comment = constraint.kind.name
            else:
                raise UnsupportedSqlError(f"ALTER TABLE ADD COLUMN {column.sql('spark')}")
        metadata = {"comment": comment} if comment is not None else None
        fields.append(pa.field(column.name, type_, True, metadata=metadata))
    column_names.check_unique([field.name for field in fields])
    return fields


def _declared_schema(tree: exp.Create) -> pa.Schema | None:
    if not isinstance(tree.this, exp.Schema):
        return None
    fields = []
    for definition in tree.this.expressions:
        column, type_ = _column_definition(definition)
        _refuse_computed_values(column)
        for constraint in column.constraints:
            if not isinstance(
                constraint.kind, exp.NotNullColumnConstraint | exp.CommentColumnConstraint
            ):
                raise UnsupportedSqlError(f"the column definition {column.sql('spark')}")
        nullable = not any(
            isinstance(constraint.kind, exp.NotNullColumnConstraint)
            for constraint in column.constraints
        )
        fields.append(pa.field(column.name, type_, nullable))
    column_names.check_unique([field.name for field in fields])
    return pa.schema(fields)


def _refuse_computed_values(column: exp.ColumnDef) -> None:
    """Refuse a column whose values Delta computes when rows are written (a generated or
    identity column, a DEFAULT value): the embedded engine writes what the statement gives,
    so such a column would hold NULL where Delta stores the computed value."""
    for constraint in column.constraints:
        kind = constraint.kind
        if isinstance(kind, exp.ComputedColumnConstraint):
            raise UnsupportedSqlError(
                f"the generated column `{column.name}` (GENERATED ALWAYS AS"
                f" ({kind.this.sql('spark')}))",
                "the embedded engine does not compute generated columns. Create the table"
                " with Delta Lake on Spark, or declare a plain column and compute its value"
                " in each INSERT",
            )
        if isinstance(kind, exp.GeneratedAsIdentityColumnConstraint):
            raise UnsupportedSqlError(
                f"the identity column `{column.name}`",
                "the embedded engine does not number the rows of identity columns. Create the"
                " table with Delta Lake on Spark, or declare a plain column and give its"
                " values in each INSERT",
            )
        if isinstance(kind, exp.DefaultColumnConstraint):
            raise UnsupportedSqlError(
                f"the DEFAULT value of column `{column.name}`",
                "the embedded engine does not fill in DEFAULT values. Create the table with"
                " Delta Lake on Spark, or declare the column without DEFAULT and give its"
                " value in each INSERT",
            )


def _column_definition(column: exp.Expr) -> tuple[exp.ColumnDef, pa.DataType]:
    """A column definition (CREATE TABLE, ALTER TABLE ADD COLUMNS) and its Arrow type."""
    if not isinstance(column, exp.ColumnDef) or column.args.get("kind") is None:
        raise AnalysisException(message=f"invalid column definition {column.sql('spark')}")
    return column, parse_ddl_type(column.args["kind"].sql("spark"))


def create_view(session: SessionProtocol, tree: exp.Create) -> pa.Table:
    target = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
    temporary = any(
        isinstance(prop, exp.TemporaryProperty)
        for prop in (tree.args.get("properties") or exp.Properties(expressions=[])).expressions
    )
    body = tree.expression
    data = run_query(session, body)  # a view that cannot be queried is an error now
    if isinstance(tree.this, exp.Schema):
        qualified = session.qualify(target)
        shown_name = (
            f"`{target.name}`"
            if temporary
            else f"`spark_catalog`.`{qualified.database}`.`{qualified.name}`"
        )
        body = _renamed_view_body(body, tree.this.expressions, data.schema.names, shown_name)
    view_sql = body.sql("spark")
    if temporary:
        if session.temp_view(target.name) is not None and not tree.args.get("replace"):
            raise AnalysisException(message=f"Temporary view `{target.name}` already exists")
        session.register_temp_view(target.name, view_sql)
        return EMPTY
    name = session.qualify(target)
    existing = session.catalog_store.lookup(name)
    if existing is not None:
        if tree.args.get("exists"):
            return EMPTY
        if not tree.args.get("replace") or not existing.is_view:
            raise AnalysisException(
                message=f"[TABLE_OR_VIEW_ALREADY_EXISTS] Cannot create view `{name}` because it"
                " already exists."
            )
    session.catalog_store.save_view(name, view_sql)
    return EMPTY


def _renamed_view_body(
    body: exp.Expr, declared: list[exp.Expr], data_columns: list[str], view: str
) -> exp.Expr:
    """``CREATE VIEW v(a, b) AS q``: q's columns renamed a, b (a column's COMMENT is
    kept by no one here: sparkshim has no DESCRIBE of view columns); the counts must match
    as in Spark."""
    names = [column.this if isinstance(column, exp.ColumnDef) else column for column in declared]
    if len(names) != len(data_columns):
        reason = (
            ("NOT_ENOUGH_DATA_COLUMNS", "not enough data columns")
            if len(names) > len(data_columns)
            else ("TOO_MANY_DATA_COLUMNS", "too many data columns")
        )
        view_list = ", ".join(f"`{name.name}`" for name in names)
        data_list = ", ".join(f"`{name}`" for name in data_columns)
        raise AnalysisException(
            message=f"[CREATE_VIEW_COLUMN_ARITY_MISMATCH.{reason[0]}] Cannot create view "
            f"{view}, the reason is {reason[1]}:\nView columns: {view_list}.\n"
            f"Data columns: {data_list}."
        )
    alias = exp.TableAlias(this=exp.to_identifier("_view"), columns=[name.copy() for name in names])
    query = exp.select("*").from_(body.copy()) if isinstance(body, exp.Values) else body.copy()
    return exp.select("*").from_(exp.Subquery(this=query, alias=alias))


def insert(session: SessionProtocol, tree: exp.Insert) -> pa.Table:
    """``INSERT INTO|OVERWRITE t [PARTITION (…)] [(columns) | BY NAME] query`` and
    ``INSERT INTO t REPLACE WHERE cond query``, as Spark runs them on a Delta table.

    A partition column given a value in the PARTITION clause (static) takes that value in
    every row, and the query supplies the table's other columns, in the table's order (a
    partition column named without a value among them); INSERT OVERWRITE then replaces
    only the rows of that partition. BY NAME matches the query's columns to the table's
    by name, in any case; a column the query lacks is NULL."""
    target = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
    name = session.qualify(target)
    location = target_location(session, target)
    spec = target.args.get("partition")
    if spec is not None:  # the table alone, for the statements built below
        target = target.copy()
        target.set("partition", None)
    listed = tree.this.expressions if isinstance(tree.this, exp.Schema) else None
    by_name = bool(tree.args.get("by_name"))
    if by_name and listed is not None:
        raise ParseException(
            message="[PARSE_SYNTAX_ERROR] Syntax error at or near 'BY': INSERT ... BY NAME takes"
            " no column list (the query's column names choose the columns)"
        )
    replace_where = tree.args.get("where")
    if spec is not None and replace_where is not None:
        raise ParseException(
            message="[PARSE_SYNTAX_ERROR] Syntax error at or near 'REPLACE': INSERT ... REPLACE"
            " WHERE takes no PARTITION clause (put the partition's condition in the WHERE)"
        )
    overwrite = bool(tree.args.get("overwrite"))
    if overwrite:
        delta.check_rows_removable(location, target.sql("spark"))
    table_schema = delta.latest_schema(location)
    partitioning = _table_partitioning(location)
    static = _partition_spec(spec, table_schema.names, partitioning) if spec is not None else {}
    if overwrite and replace_where is None:
        _check_partition_overwrite_mode(session, partitioning, static)
    source = tree.expression
    if isinstance(source, exp.Values):
        source = exp.select("*").from_(source)
    statement_ctes = tree.args.get("with_")
    if statement_ctes is not None:  # WITH … INSERT …: the CTEs belong to the query
        source = source.copy()
        source.set("with_", statement_ctes.copy())
    values = _static_values(session, static, table_schema)  # before the query: it may fail
    rows = _arrow_view_rows(session, source)
    if rows is None:
        rows = run_query(session, source)
    if overwrite and _overwrites_schema(session, tree, spec):
        delta.write(
            location,
            rows,
            overwrite=True,
            options=session.commit_options(),
            overwrite_schema=True,
        )
        return EMPTY
    if by_name:
        columns = _by_name_columns(rows.column_names, table_schema, static, name)
    elif listed is not None:
        columns = _listed_columns(listed, table_schema)
        _check_not_static(columns, static)
    else:
        columns = [column for column in table_schema.names if column not in static]
    if rows.num_columns != len(columns):
        raise AnalysisException(
            message=f"[INSERT_COLUMN_ARITY_MISMATCH] Cannot write to `{name}`: the table has"
            f" {len(columns)} column(s) but the inserted data has {rows.num_columns}."
        )
    rows = _as_spark_text(session, rows, columns, table_schema)
    for column, value in values.items():
        rows = rows.append_column(column, pa.repeat(value, rows.num_rows))
    data = align_to_schema(rows, [*columns, *values], table_schema)
    if replace_where is not None:
        if isinstance(replace_where, exp.Where):
            replace_where = replace_where.this
        dml.replace_where(session, target, replace_where, data, location)
        return EMPTY
    if overwrite and static:  # the rows of that partition replaced, in one commit
        dml.replace_where(session, target, _in_partition(static, table_schema), data, location)
        return EMPTY
    delta.write(location, data, overwrite=overwrite, options=session.commit_options())
    return EMPTY


def _listed_columns(listed: list[exp.Expr], schema: pa.Schema) -> list[str]:
    """An INSERT's column list as the table spells its columns (``(myid)`` names
    ``MyId``); a column the table lacks, or one listed twice, is Spark's error."""
    columns = [column_names.require(column.name, schema.names) for column in listed]
    column_names.check_unique(columns)
    return columns


# Spark's setting for what INSERT OVERWRITE of a partitioned table replaces.
PARTITION_OVERWRITE_MODE_CONF = "spark.sql.sources.partitionOverwriteMode"


def _table_partitioning(location: Path) -> list[str]:
    """The Delta table's partition columns, as its log spells them."""
    state = delta.table_state(location)
    if state is not None:
        return list(state.partition_columns)
    return list(delta.open_table(location).metadata().partition_columns)


def _partition_spec(
    spec: exp.Expr, columns: list[str], partitioning: list[str]
) -> dict[str, exp.Expr]:
    """The static values of an INSERT's PARTITION clause, by partition column as the table
    spells it (``PARTITION (region = 'r')`` gives ``Region``). A column named without a
    value (dynamic) is checked and left to the query. A column that is no partition column
    is Spark's NON_PARTITION_COLUMN; one named twice its DUPLICATE_KEY."""
    static: dict[str, exp.Expr] = {}
    seen: set[str] = set()
    for entry in spec.expressions:
        written = entry.this if isinstance(entry, exp.EQ) else entry
        if not isinstance(written, exp.Column | exp.Identifier):
            raise UnsupportedSqlError(f"the PARTITION clause entry {entry.sql('spark')}")
        if written.name.lower() in seen:
            raise ParseException(message=f"[DUPLICATE_KEY] Found duplicate keys `{written.name}`.")
        seen.add(written.name.lower())
        column = column_names.resolve(written.name, partitioning)
        if column is None:
            where = (
                f"the table's partition columns are {', '.join(f'`{c}`' for c in partitioning)}"
                if partitioning
                else "the table is not partitioned"
            )
            raise AnalysisException(
                message=f"[NON_PARTITION_COLUMN] PARTITION clause cannot contain the"
                f" non-partition column: `{written.name}`. ({where}: name the column in the"
                " column list or the query instead)"
            )
        if isinstance(entry, exp.EQ):
            static[column] = entry.expression
    return static


def _check_partition_overwrite_mode(
    session: SessionProtocol, partitioning: list[str], static: dict[str, exp.Expr]
) -> None:
    """Refuse INSERT OVERWRITE of a partitioned table in Spark's dynamic partition
    overwrite mode, where Spark replaces only the partitions the rows fall in (the shim
    would replace the whole table), unless every partition column has a static value (then
    both modes replace that one partition)."""
    mode = str(session.conf.get(PARTITION_OVERWRITE_MODE_CONF, "static") or "static")
    if mode.lower() != "dynamic" or not partitioning or len(static) == len(partitioning):
        return
    raise UnsupportedSqlError(
        f"INSERT OVERWRITE with {PARTITION_OVERWRITE_MODE_CONF}=dynamic",
        "give every partition column a value, one partition at a time (INSERT OVERWRITE t"
        " PARTITION (c = value) ...), use INSERT INTO t REPLACE WHERE <condition> SELECT ...,"
        f" or set {PARTITION_OVERWRITE_MODE_CONF}=static to replace the whole table",
    )


_INTEGRAL_TEXT = re.compile(r"\s*[+-]?\d+\s*")


def _static_values(
    session: SessionProtocol, static: dict[str, exp.Expr], schema: pa.Schema
) -> dict[str, pa.Scalar]:
    """Each static partition value as a value of its column's type: Spark reads the value
    as text and casts it strictly (``'01'`` into an INT column is 1, ``'1.5'`` is Spark's
    CAST_INVALID_INPUT)."""
    if not static:
        return {}
    texts = {column: _partition_value_text(value) for column, value in static.items()}
    casts = []
    for index, (column, text) in enumerate(texts.items()):
        field = schema.field(column)
        spark_type = to_spark_type(field.type).simpleString()
        integral = pa.types.is_integer(field.type)
        if text is not None and integral and not _INTEGRAL_TEXT.fullmatch(text):
            raise cast_invalid_input(text, spark_type.upper())
        value = exp.null() if text is None else exp.Literal.string(text)
        kind = exp.DataType.build(spark_type, dialect="spark")
        casts.append(exp.alias_(exp.cast(value, kind), f"v{index}"))
    cast = run_query(session, exp.select(*casts))
    values = {}
    for index, (column, text) in enumerate(texts.items()):
        value = cast.column(index)[0]
        if text is not None and not value.is_valid:
            spark_type = to_spark_type(schema.field(column).type).simpleString()
            raise cast_invalid_input(text, spark_type.upper())
        values[column] = value
    return values


def _partition_value_text(value: exp.Expr) -> str | None:
    """A static partition value as Spark reads it: the text of its literal (``1.50``,
    ``true``, ``-1``, the string of ``'x'`` or of ``DATE '2024-01-02'``); None for NULL."""
    if isinstance(value, exp.Null):
        return None
    if isinstance(value, exp.Boolean):
        return "true" if value.this else "false"
    if isinstance(value, exp.Literal):
        return value.name
    inner = value.this
    if isinstance(value, exp.Neg) and isinstance(inner, exp.Literal) and not inner.is_string:
        return f"-{inner.name}"
    if isinstance(value, exp.Cast) and isinstance(inner, exp.Literal) and inner.is_string:
        return inner.name  # a typed literal: DATE '2024-01-02'
    raise ParseException(
        message=f"[PARSE_SYNTAX_ERROR] Syntax error at or near '{value.sql('spark')}': a"
        " PARTITION clause value is a literal (PARTITION (c = 'value'))"
    )


def _check_not_static(columns: list[str], static: dict[str, exp.Expr]) -> None:
    """Spark's error for a column both given a static value and supplied by the query."""
    for column in columns:
        if column in static:
            raise AnalysisException(
                message=f"[STATIC_PARTITION_COLUMN_IN_INSERT_COLUMN_LIST] Static partition"
                f" column `{column}` is also specified in the column list."
            )


def _by_name_columns(
    names: list[str], schema: pa.Schema, static: dict[str, exp.Expr], table: ObjectName
) -> list[str]:
    """``INSERT INTO t BY NAME query``: the table column each of the query's columns goes
    into (its name in any case), or Spark's INCOMPATIBLE_DATA_FOR_TABLE for a column the
    table lacks or one named twice."""
    shown = f"`spark_catalog`.`{table.database}`.`{table.name}`"
    seen: set[str] = set()
    for name in names:
        if name.lower() in seen:
            raise AnalysisException(
                message=f"[INCOMPATIBLE_DATA_FOR_TABLE.AMBIGUOUS_COLUMN_NAME] Cannot write"
                f" incompatible data for the table {shown}: Ambiguous column name in the input"
                f" data `{name.lower()}`."
            )
        seen.add(name.lower())
    extra = [name for name in names if column_names.resolve(name, schema.names) is None]
    if extra:
        listed = ", ".join(f"`{name}`" for name in extra)
        raise AnalysisException(
            message=f"[INCOMPATIBLE_DATA_FOR_TABLE.EXTRA_COLUMNS] Cannot write incompatible"
            f" data for the table {shown}: Cannot write extra columns {listed}."
        )
    columns = [column_names.require(name, schema.names) for name in names]
    _check_not_static(columns, static)
    return columns


def _in_partition(static: dict[str, exp.Expr], schema: pa.Schema) -> exp.Expr:
    """The condition of the rows of the partition that INSERT OVERWRITE t PARTITION (…)
    replaces: each static column null-safe equal to its value, in its type."""
    conditions: list[exp.Expr] = []
    for column, value in static.items():
        text = _partition_value_text(value)
        spark_type = to_spark_type(schema.field(column).type).simpleString()
        literal = exp.null() if text is None else exp.Literal.string(text)
        typed = exp.cast(literal, exp.DataType.build(spark_type, dialect="spark"))
        conditions.append(exp.NullSafeEQ(this=exp.column(column, quoted=True), expression=typed))
    return exp.and_(*conditions)


def _as_spark_text(
    session: SessionProtocol, rows: pa.Table, columns: list[str], schema: pa.Schema
) -> pa.Table:
    """``rows`` (inserted into ``columns`` of a table of ``schema``) with each non-string
    value going into a STRING column as Spark's store assignment writes it: its CAST's
    text (a TIMESTAMP ``2024-05-06 01:02:03``, a DOUBLE ``1.0E20``), computed by a query;
    Arrow's own conversion, which the store would apply, writes other text
    (``2024-05-06 01:02:03.000000Z``, ``1e+20``)."""
    converted = [
        index
        for index, name in enumerate(columns)
        if name in schema.names
        and is_text(schema.field(name).type)
        and not (
            is_text(rows.schema.field(index).type)
            or pa.types.is_null(rows.schema.field(index).type)
        )
    ]
    if not converted:
        return rows
    view = f"__shim_stored_text_{uuid.uuid4().hex}"
    session.register_temp_view(view, pa.table({f"c{i}": rows.column(i) for i in converted}))
    try:
        texts = run_query(
            session,
            exp.select(
                *[exp.alias_(exp.cast(exp.column(f"c{i}"), "STRING"), f"c{i}") for i in converted]
            ).from_(view),
        )
    finally:
        session.drop_temp_view(view)
    for index in converted:
        rows = rows.set_column(index, rows.schema.field(index).name, texts.column(f"c{index}"))
    return rows


def _arrow_view_rows(session: SessionProtocol, source: exp.Expr) -> pa.Table | None:
    """The rows of ``SELECT * FROM v`` for a temporary view ``v`` of rows (a DataFrame's),
    without a round trip through DuckDB; None for any other source."""
    if not isinstance(source, exp.Select):
        return None
    if {key for key, value in source.args.items() if value} != {"expressions", "from_"}:
        return None  # a WHERE, a join, a LIMIT, …
    if not (len(source.expressions) == 1 and isinstance(source.expressions[0], exp.Star)):
        return None
    from_ = source.args.get("from_")
    relation = from_.this if from_ is not None else None
    if not isinstance(relation, exp.Table) or relation.db or relation.args.get("version"):
        return None
    view = session.temp_view(relation.name)
    return view if isinstance(view, pa.Table) else None


def _overwrites_schema(
    session: SessionProtocol, tree: exp.Insert, spec: exp.Expr | None = None
) -> bool:
    if (session.conf.get(OVERWRITE_SCHEMA_CONF, "false") or "").lower() != "true":
        return False
    if isinstance(tree.this, exp.Schema) or tree.args.get("where") is not None or spec:
        raise AnalysisException(
            message=f"{OVERWRITE_SCHEMA_CONF} needs a plain INSERT OVERWRITE t SELECT ..."
        )
    return True


def alter(session: SessionProtocol, tree: exp.Alter) -> pa.Table:
    location = target_location(session, tree.this)
    actions = tree.args.get("actions") or []
    added = _added_columns(actions)
    if added is not None:
        delta.add_columns(location, added, session.commit_options())
        return EMPTY
    properties: dict[str, str] = {}
    for action in actions:
        if not isinstance(action, exp.AlterSet):
            raise UnsupportedSqlError(f"ALTER TABLE ... {action.sql('spark')}")
        for prop in action.expressions:
            for item in prop.expressions if isinstance(prop, exp.Properties) else [prop]:
                properties[_property_key(item)] = _property_value(item.args["value"])
    if not properties:
        raise UnsupportedSqlError(f"the ALTER TABLE statement {tree.sql('spark')}")
    delta.set_properties(location, properties, session.commit_options())
    return EMPTY


def target_location(session: SessionProtocol, table: exp.Table) -> Path:
    """Where the Delta table a statement writes is: a table's name, or ``delta.`path```."""
    name = session.qualify(table)
    if session.catalog_store.lookup(name) is None:
        location = sources.delta_location(table)
        if location is not None:
            return location
        raise table_not_found(table.catalog, table.db, table.name)  # named as written
    return table_location(session, name)


def table_location(session: SessionProtocol, name: ObjectName) -> Path:
    entry = session.catalog_store.lookup(name)
    if entry is None or entry.location is None:
        raise AnalysisException(
            message=f"[TABLE_OR_VIEW_NOT_FOUND] The table `{name.database}`.`{name.name}`"
            " cannot be found."
        )
    return entry.location


# ---- SET and descriptions ----


def set_config(session: SessionProtocol, tree: exp.Set) -> pa.Table:
    if not tree.expressions:  # SET: every setting
        settings = sorted(session.conf.getAll().items())
        return pa.table(
            {"key": [k for k, _ in settings], "value": [v for _, v in settings]},
            schema=pa.schema([("key", pa.string()), ("value", pa.string())]),
        )
    key = ""
    for item in tree.expressions:
        assignment = item.this
        if not isinstance(assignment, exp.EQ):
            raise UnsupportedSqlError(f"SET {item.sql('spark')}")
        key = assignment.this.sql("spark").replace("`", "")
        value = assignment.expression
        session.conf.set(
            key, value.name if isinstance(value, exp.Literal | exp.Var) else value.sql("spark")
        )
    return pa.table({"key": [key], "value": [session.conf.get(key)]})


def write_config(session: SessionProtocol, match: re.Match[str]) -> pa.Table:
    key, value = match["key"], match["value"]
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        value = value[1:-1]
    session.conf.set(key, value)
    return pa.table({"key": [key], "value": [session.conf.get(key)]})


def show_config(session: SessionProtocol, match: re.Match[str]) -> pa.Table:
    """``SET key``: the setting's value, ``<undefined>`` when unset (as Spark shows it)."""
    key = match["key"]
    value = session.conf.get(key, None)
    return pa.table({"key": [key], "value": [value if value is not None else "<undefined>"]})


def describe(session: SessionProtocol, tree: exp.Describe) -> pa.Table:
    style = str(tree.args.get("style") or "").upper()
    if style == "HISTORY":
        return describe_history(target_location(session, tree.this))
    if style not in ("", "EXTENDED", "FORMATTED"):
        raise UnsupportedSqlError(f"DESCRIBE {style}")
    schema = run_query(session, exp.select("*").from_(tree.this.copy()).limit(0)).schema
    return pa.table(
        {
            "col_name": [field.name for field in schema],
            "data_type": [to_spark_type(field.type).simpleString() for field in schema],
            "comment": pa.nulls(len(schema), pa.string()),
        }
    )


def describe_history_limit(session: SessionProtocol, match: re.Match[str]) -> pa.Table:
    location = target_location(session, exp.to_table(match["name"], dialect="spark"))
    return describe_history(location, limit=int(match["limit"]))


def describe_history(location: Path, limit: int | None = None) -> pa.Table:
    return pa.Table.from_pylist(history_rows(location, limit), schema=_HISTORY_SCHEMA)


def history_rows(location: Path, limit: int | None = None) -> list[dict[str, Any]]:
    """``DESCRIBE HISTORY``'s rows (newest first, the ``limit`` newest if given), each as a
    dict of its columns; the commit time an aware UTC datetime."""
    return [
        {
            "version": commit.get("version"),
            "timestamp": _commit_time(commit.get("timestamp")),
            "operation": str(commit.get("operation")),
            "operationParameters": {
                str(k): json.dumps(v) if not isinstance(v, str) else v
                for k, v in (commit.get("operationParameters") or {}).items()
            },
            "userMetadata": commit.get("userMetadata"),
            "operationMetrics": delta.spark_metrics(commit.get("operationMetrics") or {}),
        }
        for commit in delta.history(location, limit)
    ]


def _commit_time(milliseconds: int | None) -> datetime.datetime | None:
    return None if milliseconds is None else delta.commit_time(milliseconds)


_HISTORY_SCHEMA = pa.schema(
    [
        ("version", pa.int64()),
        ("timestamp", pa.timestamp("ms", tz="UTC")),
        ("operation", pa.string()),
        ("operationParameters", pa.map_(pa.string(), pa.string())),
        ("userMetadata", pa.string()),
        ("operationMetrics", pa.map_(pa.string(), pa.string())),
    ]
)


def describe_detail(session: SessionProtocol, match: re.Match[str]) -> pa.Table:
    """Delta's DESCRIBE DETAIL row (its columns in its order), then the version read."""
    name = session.qualify(exp.to_table(match["name"], dialect="spark"))
    location = table_location(session, name)
    table = delta.open_table(location)
    metadata = table.metadata()
    protocol = table.protocol()
    properties = dict(metadata.configuration)
    files = pa.table(table.get_add_actions(flatten=True))
    features = sorted({*(protocol.reader_features or ()), *(protocol.writer_features or ())})
    vectors = (
        live_files.vectors(location, table.version())
        if "deletionVectors" in (protocol.reader_features or ())
        else {}
    )
    statistics = {
        "numRowsDeletedByDeletionVectors": sum(v.cardinality for v in vectors.values()),
        "numDeletionVectors": len(vectors),
    }
    last_modified = pc.max(files.column("modification_time")).as_py() if files.num_rows else None
    return pa.table(
        {
            "format": ["delta"],
            "id": [metadata.id],
            "name": [f"spark_catalog.{name}"],
            "description": pa.array([metadata.description], pa.string()),
            "location": [location.as_uri()],
            "createdAt": pa.array([metadata.created_time], pa.timestamp("ms", tz="UTC")),
            "lastModified": pa.array([last_modified], pa.timestamp("ms", tz="UTC")),
            "partitionColumns": pa.array([list(metadata.partition_columns)], pa.list_(pa.string())),
            "clusteringColumns": pa.array([[]], pa.list_(pa.string())),
            "numFiles": pa.array([files.num_rows], pa.int64()),
            "sizeInBytes": pa.array([pc.sum(files.column("size_bytes")).as_py() or 0], pa.int64()),
            "properties": pa.array([list(properties.items())], pa.map_(pa.string(), pa.string())),
            "minReaderVersion": pa.array([protocol.min_reader_version], pa.int32()),
            "minWriterVersion": pa.array([protocol.min_writer_version], pa.int32()),
            "tableFeatures": pa.array([features], pa.list_(pa.string())),
            "statistics": pa.array([list(statistics.items())], pa.map_(pa.string(), pa.int64())),
            "version": pa.array([table.version()], pa.int64()),
        }
    )


def show_tables(session: SessionProtocol, match: re.Match[str]) -> pa.Table:
    database = (match["db"] or session.current_database).strip("`").lower()
    session.catalog_store.require_database(database)
    names = [(database, name, False) for name in session.catalog_store.list_objects(database)]
    names += [("", name, True) for name in session.temp_view_names()]
    pattern = match["like"]
    if pattern is not None:  # Spark's SHOW TABLES LIKE: '*' any, '|' alternatives
        alternatives = [alt.strip().lower() for alt in pattern.split("|")]
        names = [
            row for row in names if any(fnmatch.fnmatchcase(row[1], alt) for alt in alternatives)
        ]
    return pa.table(
        {
            "namespace": [row[0] for row in names],
            "tableName": [row[1] for row in names],
            "isTemporary": pa.array([row[2] for row in names], pa.bool_()),
        }
    )


def show_databases(session: SessionProtocol, match: re.Match[str]) -> pa.Table:
    return pa.table({"namespace": session.catalog_store.list_databases()})


def show_tblproperties(session: SessionProtocol, match: re.Match[str]) -> pa.Table:
    table = exp.to_table(match["name"], dialect="spark")
    name = session.qualify(table)
    properties = delta.properties(target_location(session, table))
    key = match["key"]
    if key is not None:
        key = key.strip("'")
        value = properties.get(key, f"Table {name} does not have property: {key}")
        return pa.table({"key": [key], "value": [value]})
    return pa.table({"key": list(properties), "value": list(properties.values())})


def unset_tblproperties(session: SessionProtocol, match: re.Match[str]) -> pa.Table:
    location = target_location(session, exp.to_table(match["name"], dialect="spark"))
    keys = [key.strip().strip("'\"`") for key in match["keys"].split(",") if key.strip()]
    if not keys:
        raise ParseException(message="[PARSE_SYNTAX_ERROR] UNSET TBLPROPERTIES needs a key")
    options = session.commit_options()
    delta.unset_properties(location, keys, if_exists=bool(match["if_exists"]), options=options)
    return EMPTY


def optimize_table(session: SessionProtocol, match: re.Match[str]) -> pa.Table:
    location = target_location(session, exp.to_table(match["name"], dialect="spark"))
    zorder = (match["zorder"] or "").strip().strip("()")
    columns = [column.strip().strip("`") for column in zorder.split(",") if column.strip()]
    if match["zorder"] is not None and not columns:
        raise ParseException(message="[PARSE_SYNTAX_ERROR] ZORDER BY needs a column")
    return optimize(location, match["where"], columns, session.commit_options())


def reorg_purge(session: SessionProtocol, match: re.Match[str]) -> pa.Table:
    location = target_location(session, exp.to_table(match["name"], dialect="spark"))
    return optimize(location, match["where"], [], session.commit_options(), purge=True)


def vacuum_table(session: SessionProtocol, match: re.Match[str]) -> pa.Table:
    location = target_location(session, exp.to_table(match["name"], dialect="spark"))
    hours = match["hours"]
    check = str(session.conf.get(RETENTION_CHECK_CONF, "true")).lower() != "false"
    return vacuum(
        location,
        math.ceil(float(hours)) if hours is not None else None,
        dry_run=match["dry_run"] is not None,
        check_retention=check,
        options=session.commit_options(),
    )


def update(session: SessionProtocol, tree: exp.Update) -> pa.Table:
    dml.update(session, tree, target_location(session, tree.this))
    return EMPTY


def delete(session: SessionProtocol, tree: exp.Delete) -> pa.Table:
    dml.delete(session, tree, target_location(session, tree.this))
    return EMPTY


def truncate(session: SessionProtocol, tree: exp.TruncateTable) -> pa.Table:
    """``TRUNCATE TABLE t``: every row deleted in one commit, as Delta does it (a delete
    without condition: the change feed holds the rows removed); Delta's error for a
    partition spec, which Delta does not truncate."""
    if tree.args.get("partition") is not None:
        raise AnalysisException(
            message="[DELTA_TRUNCATE_TABLE_PARTITION_NOT_SUPPORTED] Operation not allowed:"
            " TRUNCATE TABLE on Delta tables does not support partition predicates; use DELETE"
            " to delete specific partitions or rows."
        )
    if len(tree.expressions) != 1 or not isinstance(tree.expressions[0], exp.Table):
        raise UnsupportedSqlError(f"the statement {tree.sql('spark')}")
    table = tree.expressions[0]
    dml.delete(session, exp.Delete(this=table.copy()), target_location(session, table), "TRUNCATE")
    return EMPTY


def merge(session: SessionProtocol, tree: exp.Merge) -> pa.Table:
    dml.merge(session, tree, target_location(session, tree.this))
    return EMPTY


_UTILITY_STATEMENTS: tuple[
    tuple[re.Pattern[str], Callable[[SessionProtocol, re.Match[str]], pa.Table]], ...
] = (
    (_SHOW_TABLES, show_tables),
    (_SHOW_DATABASES, show_databases),
    (_SHOW_TBLPROPERTIES, show_tblproperties),
    (_DESCRIBE_DETAIL, describe_detail),
    (_UNSET_TBLPROPERTIES, unset_tblproperties),
    (_OPTIMIZE, optimize_table),
    (_REORG_PURGE, reorg_purge),
    (_VACUUM, vacuum_table),
    (_DESCRIBE_HISTORY_LIMIT, describe_history_limit),
    (_SET_READ, show_config),
    (_SET_WRITE, write_config),
)

# Each handler takes the node of its kind (typed Any: the dispatch has checked the type).
_HANDLERS: tuple[tuple[type[exp.Expr], Callable[[SessionProtocol, Any], pa.Table]], ...] = (
    (exp.Query, query),
    (exp.Create, create),
    (exp.Drop, drop),
    (exp.Use, use),
    (exp.Insert, insert),
    (exp.Alter, alter),
    (exp.Set, set_config),
    (exp.Describe, describe),
    (exp.Update, update),
    (exp.Delete, delete),
    (exp.TruncateTable, truncate),
    (exp.Merge, merge),
)
