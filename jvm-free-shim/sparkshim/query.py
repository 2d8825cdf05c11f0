"""Run a Spark query in DuckDB: resolve every table reference, then translate and execute.

Table references are resolved as Spark resolves them: a CTE name, then a temporary view,
then a table or view of the named (or current) database. Delta tables are registered in
the thread's DuckDB cursor as Arrow datasets of the requested snapshot (``VERSION AS OF``,
``TIMESTAMP AS OF``); views are expanded in place; ``table_changes('t', start[, end])``
becomes the table's change data feed.
"""

from __future__ import annotations

import itertools
import re
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb
import pyarrow as pa
from sqlglot import exp

from sparkshim import delta
from sparkshim.errors import AnalysisException, UnsupportedSqlError
from sparkshim.translate import parse_spark, to_duckdb

if TYPE_CHECKING:
    from sparkshim.session import ShimSession

_registration_ids = itertools.count()


def run_query(session: ShimSession, tree: exp.Expr) -> pa.Table:
    """The rows of a Spark query (SELECT, set operation, VALUES ...) as an Arrow table."""
    cursor = session.cursor()
    resolved = resolve_tables(session, tree.copy(), cursor)
    sql = to_duckdb(resolved)
    try:
        return cursor.sql(sql).to_arrow_table()
    except duckdb.Error as failure:
        refusal = _RUNTIME_REFUSAL.search(str(failure))
        if refusal is not None:  # a value the translation could only check at run time
            raise UnsupportedSqlError(refusal["construct"]) from failure
        raise AnalysisException(message=_spark_style_message(failure)) from failure


def resolve_tables(
    session: ShimSession, tree: exp.Expr, cursor: duckdb.DuckDBPyConnection
) -> exp.Expr:
    """``tree`` with every table reference replaced by what it resolves to."""
    cte_names = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    for table in list(tree.find_all(exp.Table)):
        if isinstance(table.this, exp.Anonymous):
            _replace(table, _register(cursor, _table_function(session, table.this)))
            continue
        if not table.name:
            continue
        if not table.db and table.name.lower() in cte_names:
            continue
        _replace(table, _resolve_reference(session, table, cursor))
    return tree


def _resolve_reference(
    session: ShimSession, table: exp.Table, cursor: duckdb.DuckDBPyConnection
) -> exp.Expr:
    """What one named table reference stands for, as a FROM item."""
    if table.args.get("catalog") is not None:
        raise UnsupportedSqlError(
            f"the three-part name {table.sql('spark')}", "the shim has one catalog"
        )
    version = table.args.get("version")
    if not table.db:
        temp_view = session.temp_view(table.name)
        if temp_view is not None:
            if version is not None:
                raise AnalysisException(message=f"Cannot time travel views: {table.name}")
            if isinstance(temp_view, pa.Table):
                return _register(cursor, temp_view)
            return _inline_view(session, temp_view, cursor)
    name = session.qualify(table)
    entry = session.catalog_store.lookup(name)
    if entry is None:
        raise AnalysisException(
            message=f"[TABLE_OR_VIEW_NOT_FOUND] The table or view `{name.database}`."
            f"`{name.name}` cannot be found. Verify the spelling and correctness of the schema"
            " and catalog."
        )
    if entry.view_sql is not None:
        if version is not None:
            raise AnalysisException(message=f"Cannot time travel views: {name}")
        return _inline_view(session, entry.view_sql, cursor)
    assert entry.location is not None
    return _register(cursor, _read_snapshot(entry.location, version))


def _read_snapshot(path: Path, version: exp.Expr | None) -> pa.Table:
    if version is None:
        return delta.snapshot(delta.open_table(path))
    point = version.args["expression"]
    if version.name.upper() == "VERSION":
        return delta.snapshot(delta.open_table(path, version=int(point.name)))
    timestamp = datetime.fromisoformat(point.name)
    return delta.snapshot(delta.open_table_at(path, timestamp))


def _table_function(session: ShimSession, call: exp.Anonymous) -> pa.Table:
    if call.name.lower() != "table_changes":
        raise UnsupportedSqlError(f"the table-valued function {call.name}")
    arguments = [argument.name for argument in call.expressions]
    if len(arguments) not in (2, 3):
        raise AnalysisException(message="table_changes takes (table, start[, end])")
    name = session.qualify(exp.to_table(arguments[0]))
    entry = session.catalog_store.lookup(name)
    if entry is None or entry.location is None:
        raise AnalysisException(message=f"[TABLE_OR_VIEW_NOT_FOUND] `{name}` is not a table")
    end = int(arguments[2]) if len(arguments) == 3 else None
    return delta.changes(entry.location, int(arguments[1]), end)


def _inline_view(
    session: ShimSession, view_sql: str, cursor: duckdb.DuckDBPyConnection
) -> exp.Expr:
    return exp.paren(resolve_tables(session, parse_spark(view_sql), cursor), copy=False)


def _register(cursor: duckdb.DuckDBPyConnection, data: pa.Table) -> exp.Expr:
    name = f"__shim_{next(_registration_ids)}"
    cursor.register(name, data)
    return exp.to_table(name)


def _replace(table: exp.Table, resolved: exp.Expr) -> None:
    """Put ``resolved`` where ``table`` was, keeping the name columns are qualified by."""
    alias = table.alias or table.name
    if not alias:  # an unaliased table function: nothing refers to it by name
        table.replace(resolved)
        return
    if isinstance(resolved, exp.Paren):
        table_alias = exp.TableAlias(this=exp.to_identifier(alias))
        replacement: exp.Expr = exp.Subquery(this=resolved.this, alias=table_alias)
    else:
        replacement = exp.alias_(resolved, alias, table=True)
    table.replace(replacement)


# translate.py plants DuckDB error() calls worded like UnsupportedSqlError's messages.
_RUNTIME_REFUSAL = re.compile(r"sparkshim does not support (?P<construct>.*)", re.DOTALL)
_UNKNOWN_COLUMN = re.compile(
    r'Referenced column "(?P<name>[^"]+)" not found|does not have a column named "(?P<other>[^"]+)"'
)
_CANDIDATES = re.compile(r"Candidate bindings: (?P<names>.*)")


def _spark_style_message(failure: duckdb.Error) -> str:
    """Spark's message for an unknown column; DuckDB's own message for anything else."""
    text = str(failure)
    unknown = _UNKNOWN_COLUMN.search(text)
    if unknown is None:
        return text.replace("__shim_", "table_")
    name = unknown["name"] or unknown["other"]
    candidates = _CANDIDATES.search(text)
    if candidates is None:
        return (
            f"[UNRESOLVED_COLUMN.WITHOUT_SUGGESTION] A column or function parameter with name"
            f" `{name}` cannot be resolved."
        )
    names = [candidate.strip().strip('"') for candidate in candidates["names"].split(",")]
    suggestions = ", ".join(f"`{candidate}`" for candidate in names)
    return (
        f"[UNRESOLVED_COLUMN.WITH_SUGGESTION] A column or function parameter with name"
        f" `{name}` cannot be resolved. Did you mean one of the following? [{suggestions}]."
    )
