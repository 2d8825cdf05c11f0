"""Run a Spark query in DuckDB: resolve every table reference, then translate and execute.

Table references are resolved as Spark resolves them: a CTE name, then a temporary view,
then a table or view of the named (or current) database. Delta tables are registered in
the thread's DuckDB cursor at the requested snapshot (``VERSION AS OF``, ``TIMESTAMP AS
OF``): as a scan of the snapshot's parquet files where those files alone hold its rows, so
that DuckDB reads only the columns and row groups the query needs; as a scan of the files
as the log says to read them where deletion vectors remove rows or column mapping renames
columns (each file less its vector's positions, partition values joined by file); else
as the materialized snapshot. Views are expanded in place; ``table_changes('t', start[,
end])`` becomes the table's change data feed. What one query registers is dropped when it
finishes.
"""

from __future__ import annotations

import itertools
import re
import threading
import warnings
from collections import OrderedDict
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import duckdb
import numpy as np
import pyarrow as pa
from sqlglot import exp

from sparkshim import append, deletion_vectors, delta, live_files, row_index, sources
from sparkshim.column_names import spell_struct_fields, star_widths
from sparkshim.config import (
    ALLOW_PRECISION_LOSS_CONF,
    HAVING_AS_WHERE_CONF,
    LEGACY_COUNT_CONF,
    ROW_INDEX_CONF,
    ROW_INDEX_MIN_ROWS,
    ROW_INDEX_MIN_ROWS_CONF,
    SETOPS_PRECEDENCE_CONF,
)
from sparkshim.error_mapping import check_functions_exist, engine_error, table_not_found
from sparkshim.errors import AnalysisException, UnsupportedSqlError
from sparkshim.intervals import annotate_date_arithmetic, mark_date_arithmetic
from sparkshim.naming import (
    NameEdges,
    name_select_items,
    result_name_edges,
    result_names,
    strip_duplicate_marker,
    with_edge_names,
)
from sparkshim.natural_joins import joins_by_exact_names
from sparkshim.qualified import qualified_copy
from sparkshim.scalar_subqueries import check_correlated_counts
from sparkshim.spark_typing import annotate, mark_typed_nodes
from sparkshim.translate import (
    parse_spark,
    regression_counts_and_averages,
    to_duckdb,
    try_arithmetic_as_operators,
)
from sparkshim.translations import TranslationKey, Translations, bind, by_position
from sparkshim.type_mismatches import check_types
from sparkshim.types import has_interval_columns, to_spark_type, with_interval_columns

if TYPE_CHECKING:
    from deltalake import DeltaTable

    from sparkshim.session_protocol import SessionProtocol

_registration_ids = itertools.count()

# The translations of the statements run lately, shared by every session of the process
# (each is keyed by everything it depends on, the settings it reads included).
TRANSLATIONS = Translations()


class Registrations:
    """The relations one query registers in a DuckDB cursor, dropped when it finishes."""

    def __init__(self, cursor: duckdb.DuckDBPyConnection, files_of: Path | None = None) -> None:
        self.cursor = cursor
        # The table whose latest snapshot is scanned with each row's data file path in
        # FILE_COLUMN (for a statement that rewrites the files holding some rows).
        self.files_of = files_of
        self.arrow_names: list[str] = []
        self.view_names: list[str] = []
        self.names: list[str] = []  # both kinds, in the order they were registered
        # Each registered relation's columns and their Spark types, for type inference.
        self.schemas: dict[str, dict[str, str]] = {}

    def arrow(self, data: pa.Table) -> exp.Expr:
        name = _new_name()
        self.cursor.register(name, data)
        self._registered(name, self.arrow_names, data.schema)
        return exp.to_table(name)

    def delta_snapshot(self, table: DeltaTable, located: bool = False) -> exp.Expr:
        """A relation of the snapshot's rows; ``located``: each with its data file's path in
        FILE_COLUMN and its position in that file in POSITION_COLUMN."""
        delta.check_readable(table)
        files = delta.plain_data_files(table)
        if files is not None:
            schema = delta.arrow_schema(table)
            if not located:
                return self._view(parquet_scan(self.cursor, tuple(files), schema), schema)
            rows = files_scan(
                self.cursor, tuple(files), schema, {}, FILE_COLUMN, row_positions=True
            )
            return self._view(
                f"SELECT * EXCLUDE ({_identifier(_POSITION_FILE)}) FROM ({rows})", schema
            )
        reshaped = delta.file_scan(table)
        if reshaped is not None:
            return self._view(self._file_scan(reshaped, located), reshaped.schema)
        if located:
            raise UnsupportedSqlError("naming the data file of a row of this table")
        return self.arrow(delta.snapshot(table))

    def latest_delta(self, location: Path, located: bool = False) -> exp.Expr | None:
        """``delta_snapshot`` of the table's latest version, from sparkshim's own replay of
        its log (``delta.latest_file_scan``: a table with deletion vectors or column
        mapping); None where that does not apply."""
        scan = delta.latest_file_scan(location)
        if scan is None:
            return None
        return self._view(self._file_scan(scan, located), scan.schema)

    def _view(self, scan: str, schema: pa.Schema) -> exp.Expr:
        name = _new_name()
        # A view in SQL: about 1.5 ms, where the relation API's create_view takes 4-5 ms,
        # and a query registers every table it reads. Kept for dropping once it exists
        # (it fails to bind where a file it reads is gone).
        self.cursor.execute(f"CREATE TEMPORARY VIEW {name} AS {scan}")
        self._registered(name, self.view_names, schema)
        return exp.to_table(name)

    def _file_scan(self, scan: delta.FileScan, located: bool) -> str:
        """DuckDB SQL reading the rows of ``scan``: the files without a deletion vector
        as they are stored (as ``parquet_scan`` reads them), the others by each row's
        position in its file, less the positions their vectors list; partition values
        joined by file. ``located``: each row's file and position too."""
        if not scan.files:
            empty = self.arrow(scan.schema.empty_table()).sql("duckdb")
            columns = [exp.column(n, quoted=True).sql("duckdb") for n in scan.schema.names]
            if located:
                columns.append(f"CAST(NULL AS VARCHAR) AS {_identifier(FILE_COLUMN)}")
                columns.append(f"CAST(NULL AS BIGINT) AS {_identifier(POSITION_COLUMN)}")
            return f"SELECT {', '.join(columns)} FROM {empty}"
        path = _identifier(delta.PATH_COLUMN)
        need_path = scan.partitions is not None or located
        # A located scan keeps each row's position (and drops the file's second copy).
        dropped = (_POSITION_FILE,) if located else (_POSITION, _POSITION_FILE)
        excluded = ", ".join(_identifier(name) for name in dropped)
        path_column = delta.PATH_COLUMN if need_path else None
        whole = tuple(f for f in scan.files if f not in scan.deleted)
        parts = []
        if whole:
            rows = self._files_rows(scan, whole, path_column, row_positions=located)
            parts.append(f"SELECT * EXCLUDE ({excluded}) FROM ({rows})" if located else rows)
        marked = tuple(f for f in scan.files if f in scan.deleted)
        if marked:
            deleted = self.arrow(_positions_table(scan.deleted)).sql("duckdb")
            rows = self._files_rows(scan, marked, path_column, row_positions=True)
            parts.append(
                f"SELECT * EXCLUDE ({excluded})"
                f" FROM ({rows}) AS __rows ANTI JOIN {deleted} AS __deleted USING"
                f" ({_identifier(_POSITION_FILE)}, {_identifier(_POSITION)})"
            )
        union = " UNION ALL ".join(f"({part})" for part in parts)
        stored = set(scan.data_schema.names)
        columns = [
            f"__rows.{_identifier(name)}" if name in stored else f"__partitions.{_identifier(name)}"
            for name in scan.schema.names
        ]
        if located:
            columns.append(f"__rows.{path} AS {_identifier(FILE_COLUMN)}")
            columns.append(f"__rows.{_identifier(POSITION_COLUMN)}")
        sql = f"SELECT {', '.join(columns)} FROM ({union}) AS __rows"
        if scan.partitions is not None:
            partitions = self.arrow(scan.partitions).sql("duckdb")
            sql += f" JOIN {partitions} AS __partitions USING ({path})"
        return sql

    def _files_rows(
        self,
        scan: delta.FileScan,
        files: tuple[str, ...],
        path_column: str | None,
        *,
        row_positions: bool,
    ) -> str:
        """DuckDB SQL reading ``files`` of ``scan`` as they are stored (``files_scan``)."""
        return files_scan(
            self.cursor,
            files,
            scan.data_schema,
            scan.physical,
            path_column,
            row_positions=row_positions,
        )

    def _registered(self, name: str, kind: list[str], schema: pa.Schema) -> None:
        """Keep ``name`` (registered in the cursor) for dropping, with its Spark schema."""
        kind.append(name)
        self.names.append(name)
        self.schemas[name] = {
            field.name: to_spark_type(field.type).simpleString() for field in schema
        }

    def drop_all(self) -> None:
        for name in self.arrow_names:
            self.cursor.unregister(name)
        for name in self.view_names:
            self.cursor.execute(exp.Drop(tables=[exp.to_table(name)], kind="VIEW").sql("duckdb"))
        self.arrow_names.clear()
        self.view_names.clear()
        self.names.clear()


def _new_name() -> str:
    return f"__shim_{next(_registration_ids)}"


def parquet_scan(
    cursor: duckdb.DuckDBPyConnection, files: tuple[str, ...], schema: pa.Schema
) -> str:
    """DuckDB SQL reading the table's rows from ``files``, in its column order and types."""
    return files_scan(cursor, files, schema, {})


def files_scan(
    cursor: duckdb.DuckDBPyConnection,
    files: tuple[str, ...],
    schema: pa.Schema,
    physical: dict[str, str],
    path_column: str | None = None,
    *,
    row_positions: bool = False,
) -> str:
    """DuckDB SQL reading the columns of ``schema`` from ``files``, in its column order
    and types: each stored under its ``physical`` name (its own name when absent). With
    ``path_column``, each row's file path in that column; with ``row_positions``, the
    row's position in its file in ``_POSITION`` and its file again in ``_POSITION_FILE``
    (to be matched with a deletion vector's positions).

    Kept per file list and schema (data files never change once written): the statements
    of one refresh read the same snapshots many times. The stored types are kept per file,
    so that a new snapshot reads only its new files' footers.
    """
    key = (files, schema.to_string(), tuple(physical.items()), path_column, row_positions)
    with _SCANS_LOCK:
        scan = _SCANS.get(key)
    if scan is None:
        stored, uniform = _stored_types(cursor, files)
        if row_positions and _ROW_NUMBER in stored:
            raise UnsupportedSqlError(
                f"reading the deletion vectors of data files that store a column named"
                f" {_ROW_NUMBER}",
                "rewrite the table on Spark (REORG TABLE ... APPLY (PURGE))",
            )
        columns = [c.sql("duckdb") for c in _columns_as_in(schema, stored, cursor, physical)]
        # Matching the files' columns by name makes DuckDB read every file's footer when
        # it binds the statement (130 ms for 600 files); files that all store the same
        # columns need only the first one's. Partition values come from the log, never
        # from folder names.
        options = f"union_by_name = {'false' if uniform else 'true'}, hive_partitioning = false"
        if path_column is not None or row_positions:
            name = path_column if path_column is not None else _POSITION_FILE
            options += f", filename = {_string_literal(name)}"
            columns.append(_identifier(name))
            if row_positions and name != _POSITION_FILE:
                columns.append(f"{_identifier(name)} AS {_identifier(_POSITION_FILE)}")
        if row_positions:
            options += ", file_row_number = true"
            columns.append(f"{_ROW_NUMBER} AS {_identifier(_POSITION)}")
        paths = ", ".join(_string_literal(path) for path in files)
        scan = f"SELECT {', '.join(columns)} FROM read_parquet([{paths}], {options})"
        _keep(_SCANS, key, scan, _KEPT_SCANS)
    return scan


# DuckDB's column of a row's position in its file, and the columns a scan of files with
# deletion vectors matches their positions by.
_ROW_NUMBER = "file_row_number"
_POSITION = "__sparkshim_position"
_POSITION_FILE = "__sparkshim_position_file"


def _positions_table(deleted: dict[str, Any]) -> pa.Table:
    """The positions deletion vectors remove, a row each: its file and position. The file
    column is dictionary-encoded (one string per file, not per position: a vector may list
    a million positions)."""
    paths = pa.array(list(deleted), pa.string())
    counts = [len(positions) for positions in deleted.values()]
    indices = np.repeat(np.arange(len(counts), dtype=np.int32), counts)
    files = pa.DictionaryArray.from_arrays(pa.array(indices, pa.int32()), paths)
    positions = [pa.array(p, pa.int64()) for p in deleted.values()]
    return pa.table(
        {
            _POSITION_FILE: files,
            _POSITION: pa.chunked_array(positions, pa.int64()).combine_chunks(),
        }
    )


def _identifier(name: str) -> str:
    return exp.to_identifier(name, quoted=True).sql("duckdb")


def _keep(cache: dict[Any, Any], key: Any, value: Any, limit: int) -> None:
    """Put ``value`` in one of this module's caches, dropping its oldest entry when full."""
    with _SCANS_LOCK:
        if len(cache) >= limit:
            cache.pop(next(iter(cache)))
        cache[key] = value


# The scans of recently read snapshots (see parquet_scan), shared by every thread.
_KEPT_SCANS = 256
_SCANS: dict[tuple[Any, ...], str] = {}
_SCANS_LOCK = threading.Lock()


def _columns_as_in(
    schema: pa.Schema,
    stored_types: dict[str, str],
    cursor: duckdb.DuckDBPyConnection,
    physical: dict[str, str] | None = None,
) -> list[exp.Expr]:
    """The table's columns, in its order and types, from its data files' ``stored_types``
    (each column stored under its ``physical`` name, if given).

    A column missing from every file (added after they were written) is NULL, as in Delta;
    a column stored in another type (a file written by another engine) is cast.
    """
    wanted_types = _duckdb_types(cursor, schema)
    physical = physical or {}
    columns: list[exp.Expr] = []
    for field, wanted in zip(schema, wanted_types, strict=True):
        stored_name = physical.get(field.name, field.name)
        stored = stored_types.get(stored_name)
        value: exp.Expr = exp.column(stored_name, quoted=True)
        if stored is None:
            value = exp.Null()
        if stored is None or stored != wanted:
            value = exp.cast(value, exp.DataType.build(wanted, dialect="duckdb"))
        columns.append(exp.alias_(value, field.name, quoted=True))
    return columns


def _stored_types(
    cursor: duckdb.DuckDBPyConnection, files: tuple[str, ...]
) -> tuple[dict[str, str], bool]:
    """Each column's type in the files (as DuckDB reads them with ``union_by_name``): from
    each file's kept types when the files agree, else from DuckDB's union of them; and
    whether every file stores the same columns, in the same order and types."""
    merged: dict[str, str] = {}
    first = _file_types(cursor, files[0]) if files else {}
    uniform = True
    for path in files:
        types = _file_types(cursor, path)
        uniform = uniform and list(types.items()) == list(first.items())
        for name, stored in types.items():
            if merged.setdefault(name, stored) != stored:
                union = cursor.read_parquet(list(files), union_by_name=True)
                union_types = zip(union.columns, union.types, strict=True)
                return {n: str(t) for n, t in union_types}, False
    return merged, uniform


def _string_literal(text: str) -> str:
    """``text`` as a SQL string literal (in DuckDB, as in standard SQL, a quote is doubled
    and nothing else is escaped); sqlglot's generator takes 60 µs a literal."""
    return "'" + text.replace("'", "''") + "'"


def _file_types(cursor: duckdb.DuckDBPyConnection, path: str) -> dict[str, str]:
    """The column types one data file stores (its footer, read once per file)."""
    with _SCANS_LOCK:
        types = _FILE_TYPES.get(path)
    if types is None:
        relation = cursor.read_parquet(path)
        types = {n: str(t) for n, t in zip(relation.columns, relation.types, strict=True)}
        _keep(_FILE_TYPES, path, types, _KEPT_FILE_TYPES)
    return types


def _duckdb_types(cursor: duckdb.DuckDBPyConnection, schema: pa.Schema) -> list[str]:
    """The DuckDB types of a table schema's columns (kept per schema)."""
    key = schema.to_string()
    with _SCANS_LOCK:
        types = _WANTED_TYPES.get(key)
    if types is None:
        types = [str(t) for t in cursor.from_arrow(schema.empty_table()).types]
        _keep(_WANTED_TYPES, key, types, _KEPT_SCANS)
    return types


# Data files' stored types, and table schemas' DuckDB types (see parquet_scan).
_KEPT_FILE_TYPES = 16_384
_FILE_TYPES: dict[str, dict[str, str]] = {}
_WANTED_TYPES: dict[str, list[str]] = {}


# The columns a scan of ``Registrations.files_of`` names each row's data file in (its path
# on the file system) and its position in that file (from 0, as deletion vectors count).
FILE_COLUMN = "__sparkshim_file"
POSITION_COLUMN = _POSITION
PROBE_COLUMN = "__sparkshim_probe"  # which looked-up row a located copy equals


def run_query(
    session: SessionProtocol, tree: exp.Expr, *, files_of: Path | None = None
) -> pa.Table:
    """The rows of a Spark query (SELECT, set operation, VALUES ...) as an Arrow table.
    With ``files_of``, that table's rows also have their data file's path in
    ``FILE_COLUMN`` and their position in it in ``POSITION_COLUMN``."""
    registrations = Registrations(session.cursor(), files_of)
    try:
        translated = _translate(session, tree, registrations)
        result = _run(registrations.cursor, translated)
        result = with_interval_columns(result)
        names = translated.names
        if names is None or len(names) != result.num_columns:
            names = with_edge_names(result.column_names, translated.edges, translated.widths)
        return result.rename_columns([strip_duplicate_marker(name) for name in names])
    except duckdb.Error as failure:
        raise _spark_error(failure, tree) from failure
    finally:
        registrations.drop_all()


@dataclass(frozen=True)
class _Shape:
    """What the last run of a kept translation gave: its columns' names, which of them
    were HUGEINTs (cast to BIGINT after it, see ``_with_spark_types``), and how many
    rows."""

    names: tuple[str, ...]
    hugeint: tuple[bool, ...]
    rows: int

    @property
    def run_once(self) -> bool:
        """Whether its next run plans it once (see ``_run``)."""
        return self.rows <= _FEW_ROWS

    def select_from(self, sql: str) -> str:
        """``sql`` with its HUGEINT columns cast to BIGINT, by position (``#n``), as
        ``_with_spark_types`` would project them."""
        if not any(self.hugeint):
            return sql
        columns = []
        for position, (name, hugeint) in enumerate(zip(self.names, self.hugeint, strict=True)):
            column = f"CAST(#{position + 1} AS BIGINT)" if hugeint else f"#{position + 1}"
            columns.append(f"{column} AS {exp.to_identifier(name, quoted=True).sql('duckdb')}")
        return f"SELECT {', '.join(columns)} FROM ({sql}) AS __shim_result"


# A result of at most this many rows is fetched from one run of its statement (see _run).
_FEW_ROWS = 100_000
# DuckDB warns of that copy at every fetch: measured and chosen (see _run).
warnings.filterwarnings(
    "ignore", message="Arrow output on a DB-API result makes an extra copy", category=UserWarning
)
_KEPT_SHAPES = 1024
_SHAPES: OrderedDict[TranslationKey, _Shape] = OrderedDict()


def _run(cursor: duckdb.DuckDBPyConnection, translated: _Translated) -> pa.Table:
    """The rows of a translated statement. A relation (``cursor.sql``) binds its statement
    to learn its columns' types and plans it again when it runs: a few milliseconds for
    a refresh's long statements. A statement seen before whose result was small is run
    once (``execute``), its HUGEINT columns cast as the last run found them; its rows are
    then copied once more, which costs more than planning twice only for large results,
    hence the row count kept."""
    with _SCANS_LOCK:
        shape = _SHAPES.get(translated.key)
    if shape is not None and shape.run_once:
        result = cursor.execute(shape.select_from(translated.sql)).to_arrow_table()
        assert result is not None, "a query has a result"
        _keep(_SHAPES, translated.key, replace(shape, rows=result.num_rows), _KEPT_SHAPES)
        return result
    relation = cursor.sql(translated.sql)
    hugeint = tuple(str(column_type) == "HUGEINT" for column_type in relation.types)
    names = tuple(relation.columns)
    result = _with_spark_types(relation).to_arrow_table()
    _keep(_SHAPES, translated.key, _Shape(names, hugeint, result.num_rows), _KEPT_SHAPES)
    return result


def write_query(
    session: SessionProtocol, tree: exp.Expr, path: Path, *, files_of: Path | None = None
) -> int:
    """Write the rows of a Spark query as one Parquet file at ``path`` (DuckDB's COPY,
    snappy-compressed, in the query's column types); how many rows it wrote."""
    registrations = Registrations(session.cursor(), files_of)
    try:
        sql = _translate(session, tree, registrations).sql
        if has_interval_columns(sql):
            raise UnsupportedSqlError(
                "an interval column in a table", "store its parts as numbers (extract, datediff)"
            )
        target = exp.Literal.string(str(path)).sql("duckdb")
        copy = f"COPY ({sql}) TO {target} (FORMAT parquet, COMPRESSION snappy)"
        written = registrations.cursor.execute(copy).fetchone()
        return int(written[0]) if written else 0
    except duckdb.Error as failure:
        raise _spark_error(failure, tree) from failure
    finally:
        registrations.drop_all()


class _Translated(NamedTuple):
    sql: str  # DuckDB's
    names: list[str] | None  # the columns' Spark names, where known
    key: TranslationKey  # what the translation depends on (translations.py)
    # Where a ``*`` leaves the names to the relations: the names of the columns around
    # the ``*``s (naming.result_name_edges), and how many columns each gives where known.
    edges: NameEdges | None = None
    widths: list[int | None] | None = None


def _translate(
    session: SessionProtocol, tree: exp.Expr, registrations: Registrations
) -> _Translated:
    """The DuckDB SQL of the query ``tree``, and its columns' Spark names where known. The
    tables are resolved every time (they may have changed); the rest of the translation
    is kept per statement (translations.py)."""
    named = tree.copy()
    name_select_items(named)  # Spark's column names, rendered before any rewrite
    names = result_names(named)
    edges = result_name_edges(named) if names is None else None
    resolved = resolve_tables(session, named, registrations)
    relations = list(registrations.names)
    schemas = by_position(resolved, relations, registrations.schemas)
    # (Only the columns between two ``*``s need the widths: the others are named around.)
    widths = star_widths(resolved, schemas) if edges is not None and len(edges.stars) > 1 else None
    key = TRANSLATIONS.key(resolved, schemas, _translation_settings(session))
    kept = TRANSLATIONS.get(key, relations)
    if kept is not None:
        return _Translated(kept, names, key, edges, widths)
    if str(session.conf.get(HAVING_AS_WHERE_CONF, "false")).lower() == "true":
        _having_as_where(resolved)
    if str(session.conf.get(SETOPS_PRECEDENCE_CONF, "false")).lower() == "true":
        _check_left_to_right_set_operations(resolved)
    legacy_count = str(session.conf.get(LEGACY_COUNT_CONF, "false")).lower() == "true"
    check_correlated_counts(resolved, legacy_count=legacy_count)
    check_functions_exist(resolved)
    try_arithmetic_as_operators(resolved)
    regression_counts_and_averages(resolved)
    spell_struct_fields(resolved, schemas)
    joins_by_exact_names(resolved, schemas)
    _annotate(session, resolved, schemas)
    translated = to_duckdb(resolved, copy=False)  # resolved is a copy of its own
    TRANSLATIONS.put(key, translated)
    return _Translated(bind(translated, relations), names, key, edges, widths)


def _translation_settings(session: SessionProtocol) -> tuple[str | None, ...]:
    """The session settings the translation of a resolved statement reads."""
    return tuple(
        session.conf.get(name, None)
        for name in (
            HAVING_AS_WHERE_CONF,
            SETOPS_PRECEDENCE_CONF,
            LEGACY_COUNT_CONF,
            ALLOW_PRECISION_LOSS_CONF,
        )
    )


def _annotate(session: SessionProtocol, tree: exp.Expr, schemas: dict[str, dict[str, str]]) -> None:
    """Record on ``tree``'s nodes the types its translation reads (Spark's static types,
    the operands of date arithmetic), from one qualified copy of it, made only when some
    node needs it; raise Spark's analysis error where those types are ones Spark refuses."""
    typed_nodes = mark_typed_nodes(tree)
    arithmetic = mark_date_arithmetic(tree)
    if not typed_nodes and not arithmetic:
        return
    typed = qualified_copy(tree, schemas)
    types = annotate(
        typed_nodes, typed, schemas, allow_precision_loss=_allow_precision_loss(session)
    )
    annotate_date_arithmetic(arithmetic, typed)
    if types is not None and typed_nodes:
        check_types(types)  # Spark's analysis errors for the types it refuses


def _allow_precision_loss(session: SessionProtocol) -> bool:
    """Spark's setting: whether a DECIMAL result beyond 38 digits drops fractional digits
    (true, the default) or is bounded to 38 digits as it is."""
    return (session.conf.get(ALLOW_PRECISION_LOSS_CONF, "true") or "true").lower() != "false"


def _having_as_where(tree: exp.Expr) -> None:
    """Spark's legacy reading of a HAVING without GROUP BY: a WHERE."""
    for select in list(tree.find_all(exp.Select)):
        having = select.args.get("having")
        if having is None or select.args.get("group") is not None:
            continue
        select.set("having", None)
        select.where(having.this.copy(), copy=False)


def _check_left_to_right_set_operations(tree: exp.Expr) -> None:
    """Spark's legacy precedence evaluates a chain of set operations left to right. It
    differs from the standard one only where an INTERSECT follows a UNION/EXCEPT, which
    sqlglot parses as a parenthesized INTERSECT, as it parses explicit parentheses: such a
    query is refused under the legacy setting (every other chain means the same)."""
    for node in tree.find_all(exp.SetOperation):
        right = node.expression
        if isinstance(right, exp.Subquery) and isinstance(right.this, exp.Intersect):
            raise UnsupportedSqlError(
                "INTERSECT after UNION/EXCEPT with spark.sql.legacy.setopsPrecedence.enabled",
                "parenthesize the set operations as meant and unset the setting",
            )


def _spark_error(failure: duckdb.Error, tree: exp.Expr) -> Exception:
    missing = _MISSING_FILE.search(str(failure))
    if missing is not None:
        return delta.missing_file_error(missing["path"])
    return engine_error(failure, tree)


def _with_spark_types(result: duckdb.DuckDBPyRelation) -> duckdb.DuckDBPyRelation:
    """``result`` with its HUGEINT columns as BIGINT, the type Spark gives an integer sum
    (translate.py leaves a sum that is a result column as DuckDB's HUGEINT sum; Spark has
    no 128-bit integer, so no other result column is a HUGEINT). A sum beyond BIGINT's
    range fails here instead of wrapping around as Spark's would."""
    types = [str(column_type) for column_type in result.types]
    if "HUGEINT" not in types:
        return result
    columns = []
    for name, column_type in zip(result.columns, types, strict=True):
        column: exp.Expr = exp.column(name, quoted=True)
        if column_type == "HUGEINT":
            column = exp.cast(column, exp.DataType.build("BIGINT"))
        columns.append(exp.alias_(column, name, quoted=True).sql("duckdb"))
    return result.project(", ".join(columns))


def _bind_session_functions(session: SessionProtocol, tree: exp.Expr) -> None:
    """Replace the functions that read session state with that state's value."""
    values = {
        exp.CurrentDatabase: session.current_database,
        exp.CurrentSchema: session.current_database,
        exp.CurrentCatalog: "spark_catalog",
        exp.CurrentTimezone: session.time_zone,
    }
    for node in list(tree.find_all(*values)):
        node.replace(exp.Literal.string(values[type(node)]))


def resolve_tables(
    session: SessionProtocol, tree: exp.Expr, registrations: Registrations
) -> exp.Expr:
    """``tree`` with every table reference replaced by what it resolves to."""
    _bind_session_functions(session, tree)
    _check_nested_cte_names(tree)
    for table in list(tree.find_all(exp.Table)):
        if isinstance(table.this, exp.Anonymous):
            _replace(table, registrations.arrow(_table_function(session, table.this)))
            continue
        if not table.name:
            continue
        if not table.db and table.name.lower() in _cte_names_in_scope(table):
            continue
        located = _located_by_index(session, table, registrations)
        if located is not None:
            _replace(table, located)
            continue
        _replace(table, _resolve_reference(session, table, registrations))
    return tree


def _located_by_index(
    session: SessionProtocol, table: exp.Table, registrations: Registrations
) -> exp.Expr | None:
    """The rows of ``table`` that a semi join looks up by some of its columns, found
    through the table's row index (row_index.py) instead of by reading the table: the
    looked-up values first (the joined relation, on its own), then the positions of the
    rows holding them in each data file (the rows' other columns read at those
    positions). None where it does not apply (then the table is read as usual): not such
    a lookup, a table without deletion vectors written here, time travel, or values whose
    types are not exactly the table's."""
    if str(session.conf.get(ROW_INDEX_CONF, "true")).lower() == "false":
        return None
    lookup = row_index.lookup_of(table)
    if lookup is None or table.args.get("version") is not None:
        return None
    if not table.db and session.temp_view(table.name) is not None:
        return None
    entry = session.catalog_store.lookup(session.qualify(table))
    if entry is None or entry.location is None:
        return None
    state = delta.table_state(entry.location)
    if state is None or not append.marks_removed_rows(state):
        return None
    # The latest version as the log's replay knows it: bringing a delta-rs table up to
    # date after another writer's commits would cost more than the lookup saves.
    if not _large_enough_for_index(session, entry.location, state.version):
        return None
    schema = delta.arrow_schema_of(state.schema_json)
    looked_up = [name for name in schema.names if name.lower() in lookup.pairs]
    if len(looked_up) != len(lookup.pairs):
        return None  # it names a column the table does not have
    probe_query = (
        exp.select(*[exp.alias_(lookup.pairs[n.lower()].copy(), n, quoted=True) for n in looked_up])
        .from_(lookup.other.copy())
        .distinct()
    )
    for condition in lookup.conditions:
        probe_query = probe_query.where(condition.copy())
    try:
        probes = run_query(session, probe_query)
    except (AnalysisException, UnsupportedSqlError):
        return None  # it reads what only the whole statement defines (a CTE …)
    if probes.schema.types != [schema.field(name).type for name in looked_up]:
        return None
    # Every live row equal to a probe on the looked-up columns: where a located scan of
    # the MERGE's table would name it (its data file and position), and its values.
    cursor = registrations.cursor
    hashes = row_hashes(cursor, probes, looked_up)
    found = locate(cursor, entry.location, state.version, schema, hashes, columns=looked_up)
    located = _rows_found(registrations.cursor, schema, probes, found)
    if entry.location == registrations.files_of:
        located = located.append_column(FILE_COLUMN, found.column(FILE_COLUMN))
        located = located.append_column(POSITION_COLUMN, found.column(POSITION_COLUMN))
    return registrations.arrow(located)


def _large_enough_for_index(session: SessionProtocol, location: Path, version: int) -> bool:
    """Whether the data files of the table at ``location`` at ``version`` store at least
    ``ROW_INDEX_MIN_ROWS_CONF`` rows (a table whose files keep no row counts is taken for
    large)."""
    setting = session.conf.get(ROW_INDEX_MIN_ROWS_CONF, None)
    try:
        least = ROW_INDEX_MIN_ROWS if setting is None else int(str(setting))
    except ValueError:
        raise AnalysisException(
            message=f"{ROW_INDEX_MIN_ROWS_CONF} is {setting!r}: set it to a whole number of rows"
        ) from None
    stored = delta.stored_rows(location, version)
    return stored is None or stored >= least


def _rows_found(
    cursor: duckdb.DuckDBPyConnection, schema: pa.Schema, probes: pa.Table, found: pa.Table
) -> pa.Table:
    """The rows ``found`` (by ``locate``) of a table of ``schema``, in its column order: the
    looked-up columns from the probe each equals, the others read from the data files at
    the positions found."""
    looked_up = probes.take(found.column(PROBE_COLUMN))
    others = [name for name in schema.names if name not in probes.column_names]
    read = _read_at_positions(cursor, schema, others, found) if others else looked_up
    columns = [(read if name in others else looked_up).column(name) for name in schema.names]
    return pa.Table.from_arrays(columns, schema=schema)


def _read_at_positions(
    cursor: duckdb.DuckDBPyConnection, schema: pa.Schema, columns: list[str], found: pa.Table
) -> pa.Table:
    """The ``columns`` of the rows at the data files and positions ``found`` names, in its
    row order: a scan of each file holding some, reading only those columns (a join on the
    position alone: naming each row's file too would cost more than the scan)."""
    files = found.column(FILE_COLUMN).to_numpy(zero_copy_only=False)
    positions = found.column(POSITION_COLUMN).to_numpy()
    parts: list[pa.Table] = []
    for path in dict.fromkeys(files.tolist()):  # (files in the order found)
        (rows,) = np.nonzero(files == path)
        wanted = pa.table(
            {"order": pa.array(rows.astype(np.int64)), "position": pa.array(positions[rows])}
        )
        name = f"__shim_wanted_{next(_registration_ids)}"
        cursor.register(name, wanted)
        try:
            scan = files_scan(cursor, (path,), schema, {}, row_positions=True)
            selected = ", ".join(f"s.{_identifier(c)}" for c in columns)
            parts.append(
                cursor.sql(
                    f"SELECT w.order, {selected} FROM ({scan}) AS s JOIN {name} AS w"
                    f" ON s.{_identifier(_POSITION)} = w.position"
                ).to_arrow_table()
            )
        finally:
            cursor.unregister(name)
    target = pa.schema([schema.field(c) for c in columns])
    if not parts:
        return target.empty_table()
    read = pa.concat_tables(parts)
    assert read.num_rows == found.num_rows, "a position found in the index is in its file"
    order = np.argsort(read.column("order").to_numpy())
    return read.take(pa.array(order)).select(columns).cast(target)


def locate(
    cursor: duckdb.DuckDBPyConnection,
    location: Path,
    version: int,
    schema: pa.Schema,
    probes: row_index.RowHashes,
    columns: list[str] | None = None,
) -> pa.Table:
    """Where the live rows of the table at ``location`` at ``version`` equal to a probe on
    ``columns`` (some of the table's, in its order; None: all of them) are, through the
    table's row index:
    ``probes`` are the ``row_hashes`` of the values looked up (over those columns, in the
    table's types); one row per match, with the probe's number (``PROBE_COLUMN``), the
    data file as a located scan names it (``FILE_COLUMN``) and the position in it
    (``POSITION_COLUMN``), file by file."""
    hashed = schema.names if columns is None else columns
    sorted_probes = probes.sort()
    files: list[pa.Array] = []
    positions: list[pa.Array] = []
    taken: list[pa.Array] = []
    for relative, file in live_files.at(location, version).items():
        path = deletion_vectors.local_path(location, relative)
        index_path = row_index.index_path(location, relative, schema, columns)
        index = row_index.load(index_path)
        if index is None:
            rows = files_scan(cursor, (path,), schema, {}, row_positions=True)
            hashed_sql = _hashes_sql(hashed, schema)
            sql = f"SELECT {hashed_sql}, {_identifier(_POSITION)} AS pos FROM ({rows})"
            index = row_index.build(cursor, index_path, sql)
        found = row_index.matches(index, sorted_probes)
        vector = file.deletion_vector
        if vector is not None and found.num_rows:
            removed = deletion_vectors.read(location, vector)
            live = deletion_vectors.kept(removed, found.column("position").to_numpy())
            found = found.filter(pa.array(live))
        files.append(pa.array([path] * found.num_rows, pa.string()))
        positions.append(found.column("position").combine_chunks())
        taken.append(found.column("probe").combine_chunks())
    return pa.table(
        {
            PROBE_COLUMN: pa.chunked_array(taken, pa.int64()),
            FILE_COLUMN: pa.chunked_array(files, pa.string()),
            POSITION_COLUMN: pa.chunked_array(positions, pa.int64()),
        }
    )


def hashable_as_written(schema: pa.Schema) -> bool:
    """Whether the values of a table of ``schema`` hash alike in Arrow and read back from
    the Parquet file they were written to (``files_scan`` reads each column in the
    schema's DuckDB type), so that a file's index can be written from the ``row_hashes``
    of the rows it was written from: so for flat columns; a nested or interval one is
    not promised."""
    return not any(
        pa.types.is_nested(field.type) or pa.types.is_interval(field.type) for field in schema
    )


def row_hashes(
    cursor: duckdb.DuckDBPyConnection, rows: pa.Table, columns: list[str]
) -> row_index.RowHashes:
    """Each row's two index hashes over ``columns`` (in the table's types), in one query."""
    name = f"__shim_hashed_{next(_registration_ids)}"
    cursor.register(name, rows)
    try:
        hashed = _hashes_sql(columns, rows.schema)
        # (Run once and fetched as numpy: a relation, ``cursor.sql``, plans the query
        # twice, and Arrow output of an executed statement is copied once more.)
        result = cursor.execute(f"SELECT {hashed} FROM {name}").fetchnumpy()
    finally:
        cursor.unregister(name)
    first = np.asarray(result["h1"]).astype("<u8", copy=False)
    second = np.asarray(result["h2"]).astype("<u4")  # (32 bits: masked in SQL)
    return row_index.RowHashes(first, second)


def _hashes_sql(columns: list[str], schema: pa.Schema) -> str:
    """The DuckDB SQL of a row's two index hashes over ``columns`` (of ``schema``, the
    table's types), as ``h1`` and ``h2``."""
    typed: list[tuple[exp.Expr, pa.DataType]] = [
        (exp.column(n, quoted=True), schema.field(n).type) for n in columns
    ]
    first, second = row_index.hash_columns(typed)
    return f"{first.sql('duckdb')} AS h1, {second.sql('duckdb')} AS h2"


def _cte_names_in_scope(node: exp.Expr) -> set[str]:
    """The CTE names a table reference at ``node`` may mean: as in Spark, a CTE is seen by
    the CTEs defined after it in its WITH and by that WITH's query, not by its own body
    (there ``WITH t AS (SELECT ... FROM t)`` reads the table t); an inner WITH hides an
    outer CTE of the same name."""
    names: set[str] = set()
    child, parent = node, node.parent
    while parent is not None:
        if isinstance(parent, exp.With) and isinstance(child, exp.CTE):
            earlier = parent.expressions[: child.index or 0]
            names.update(cte.alias_or_name.lower() for cte in earlier)
        elif isinstance(parent, exp.Query) and child.arg_key != "with_":
            defined = parent.args.get("with_")
            if defined is not None:
                names.update(cte.alias_or_name.lower() for cte in defined.expressions)
        child, parent = parent, parent.parent
    return names


def _check_nested_cte_names(tree: exp.Expr) -> None:
    """Spark 3.5's default ``spark.sql.legacy.ctePrecedencePolicy`` (EXCEPTION): a WITH
    starting a CTE's body or a subquery expression may not redefine a CTE name seen there."""
    for nested in tree.find_all(exp.With):
        query = nested.parent
        if query is None or query is tree or not _starts_a_query(query):
            continue
        outer = _cte_names_in_scope(query)
        for cte in nested.expressions:
            name = cte.alias_or_name
            if name.lower() in outer:
                raise AnalysisException(
                    message=f"[AMBIGUOUS_ALIAS_IN_NESTED_CTE] Name `{name}` is ambiguous in "
                    'nested CTE. Please set "spark.sql.legacy.ctePrecedencePolicy" to '
                    '"CORRECTED" so that name defined in inner CTE takes precedence. If set '
                    'it to "LEGACY", outer CTE definitions will take precedence.'
                )


def _starts_a_query(query: exp.Expr) -> bool:
    """Whether ``query`` is a CTE's body or a subquery expression (not a FROM item or a
    branch of a set operation)."""
    parent = query.parent
    if isinstance(parent, exp.Subquery):
        return not isinstance(parent.parent, (exp.From, exp.Join, exp.Lateral, exp.SetOperation))
    return not isinstance(parent, exp.SetOperation)


def _resolve_reference(
    session: SessionProtocol, table: exp.Table, registrations: Registrations
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
                return registrations.arrow(temp_view)
            return _inline_view(session, temp_view, registrations)
    name = session.qualify(table)
    entry = session.catalog_store.lookup(name)
    if entry is None:
        source = sources.addressed(table)
        if source is None:
            raise table_not_found(table.db, table.name)
        return _resolve_path(session, source, version, registrations)
    if entry.view_sql is not None:
        if version is not None:
            raise AnalysisException(message=f"Cannot time travel views: {name}")
        return _inline_view(session, entry.view_sql, registrations)
    assert entry.location is not None
    if version is None:
        located = entry.location == registrations.files_of
        latest = registrations.latest_delta(entry.location, located=located)
        if latest is not None:
            return latest
    snapshot = _open_snapshot(entry.location, version)
    if version is None and entry.location == registrations.files_of:
        return registrations.delta_snapshot(snapshot, located=True)
    return registrations.delta_snapshot(snapshot)


def _resolve_path(
    session: SessionProtocol,
    source: sources.FileSource,
    version: exp.Expr | None,
    registrations: Registrations,
) -> exp.Expr:
    """What a ``format.`path``` reference stands for, as a FROM item: a Delta table (at
    the version asked for), or the files' rows."""
    if source.format == sources.DELTA:
        snapshot = _open_snapshot(sources.delta_table_at(source.path), version)
        located = version is None and source.path == registrations.files_of
        return registrations.delta_snapshot(snapshot, located=located)
    if version is not None:
        raise AnalysisException(
            message=f"Cannot time travel {source.format} files: only Delta tables have versions"
        )
    return registrations.arrow(sources.read_files(source, session.time_zone))


def _open_snapshot(path: Path, version: exp.Expr | None) -> DeltaTable:
    if version is None:
        return delta.open_table(path)
    point = version.args["expression"]
    if version.name.upper() == "VERSION":
        # (A negative version parses as a negation, whose name is the number's.)
        asked = -int(point.this.name) if isinstance(point, exp.Neg) else int(point.name)
        delta.check_version_exists(path, asked)
        return delta.open_table(path, version=asked)
    return delta.open_table_at(path, datetime.fromisoformat(point.name))


_MAX_RANGE_ROWS = 10_000_000


def _range_table(call: exp.Anonymous) -> pa.Table:
    """Spark's range(end) / range(start, end[, step[, numPartitions]]): BIGINT ``id``s,
    materialized here (the bounds must be integer literals)."""
    bounds = []
    for argument in call.expressions:
        negative = isinstance(argument, exp.Neg)
        literal = argument.this if negative else argument
        if not isinstance(literal, exp.Literal) or not literal.is_int:
            raise UnsupportedSqlError("range() with non-literal bounds", "write integer literals")
        bounds.append(-int(literal.this) if negative else int(literal.this))
    if not 1 <= len(bounds) <= 4:
        raise AnalysisException(
            message="[WRONG_NUM_ARGS.WITHOUT_SUGGESTION] The `range` requires [1, 2, 3, 4] "
            f"parameters but the actual number is {len(bounds)}."
        )
    start, end = (0, bounds[0]) if len(bounds) == 1 else (bounds[0], bounds[1])
    step = bounds[2] if len(bounds) >= 3 else 1
    if step == 0:
        raise AnalysisException(
            message="[FAILED_FUNCTION_CALL] Failed preparing of the function `range` for call. "
            "Please, double check function's arguments."
        )
    ids = range(start, end, step)
    if len(ids) > _MAX_RANGE_ROWS:
        raise UnsupportedSqlError(f"range() of more than {_MAX_RANGE_ROWS} rows")
    return pa.table({"id": pa.array(ids, pa.int64())})


def _table_function(session: SessionProtocol, call: exp.Anonymous) -> pa.Table:
    function = call.name.lower()
    if function == "range":
        return _range_table(call)
    if function not in ("table_changes", "table_changes_by_path"):
        raise UnsupportedSqlError(f"the table-valued function {call.name}")
    arguments = [argument.name for argument in call.expressions]
    if len(arguments) not in (2, 3):
        raise AnalysisException(message=f"{function} takes (table, start[, end])")
    if function == "table_changes_by_path":
        location = sources.delta_table_at(sources.local_path(arguments[0]))
    else:
        location = _changes_location(session, exp.to_table(arguments[0], dialect="spark"))
    end = int(arguments[2]) if len(arguments) == 3 else None
    return delta.changes(location, int(arguments[1]), end)


def _changes_location(session: SessionProtocol, table: exp.Table) -> Path:
    """Where the table ``table_changes`` names is: a table's name, or ``delta.`path```."""
    name = session.qualify(table)
    entry = session.catalog_store.lookup(name)
    if entry is None:
        location = sources.delta_location(table)
        if location is not None:
            return location
    if entry is None or entry.location is None:
        raise AnalysisException(message=f"[TABLE_OR_VIEW_NOT_FOUND] `{name}` is not a table")
    return entry.location


def _inline_view(session: SessionProtocol, view_sql: str, registrations: Registrations) -> exp.Expr:
    view = parse_spark(view_sql)
    name_select_items(view)
    return exp.paren(resolve_tables(session, view, registrations), copy=False)


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
    # FROM t PIVOT (...): the pivot stays on what t resolves to (translate.py rewrites it).
    replacement.set("pivots", table.args.get("pivots"))
    joins = table.args.get("joins")
    if joins:  # `(A JOIN B ON ...)`: sqlglot hangs the joins on the parenthesized A
        replacement.set("joins", [join.pop() for join in list(joins)])
    table.replace(replacement)


_MISSING_FILE = re.compile(r'No files found that match the pattern "(?P<path>[^"]+)"')
