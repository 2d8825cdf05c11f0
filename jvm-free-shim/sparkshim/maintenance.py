"""Delta's table maintenance: ``OPTIMIZE``, ``REORG TABLE … APPLY (PURGE)`` and ``VACUUM``.

``OPTIMIZE table [WHERE partition_predicate] [ZORDER BY (columns)]`` rewrites small files
into larger ones (or in Z-order) in a commit that changes no rows (``dataChange`` false),
so that readers of the change data feed see nothing and a table written by many small
appends stays cheap to scan. It is compact.py's, not delta-rs's optimize: delta-rs
commits a compaction on top of a concurrent one and duplicates every row (see there). As
on Delta, the ``WHERE`` clause may only name partition columns, as a conjunction of
comparisons (or ``IN`` lists) of a partition column with literals: delta-rs's
``(column, operator, value)`` filters select the partitions. The result is Delta's: the
table's ``path`` and a ``metrics`` struct, with Delta's fields in Delta's order
(``numFilesAdded``, ``numFilesRemoved``, ``filesAdded``, ``filesRemoved``,
``partitionsOptimized``, ``numBatches``, ``totalConsideredFiles``, ``totalFilesSkipped``,
``preserveInsertionOrder``).

``VACUUM table [RETAIN n HOURS] [DRY RUN]`` is delta-rs's ``vacuum``: it deletes the files
no version within the retention period needs (the table's
``delta.deletedFileRetentionDuration``, a week by default); deletion vector files, which
delta-rs leaves, are deleted here by the same rule. As on Delta, a shorter
retention is refused unless ``spark.databricks.delta.retentionDurationCheck.enabled`` is
false; ``DRY RUN`` lists the files instead of deleting them.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from deltalake.exceptions import DeltaError
from sqlglot import exp

from sparkshim import compact, deletion_vectors, delta, live_files, log, row_index
from sparkshim.config import RETENTION_CHECK_CONF
from sparkshim.errors import AnalysisException, IllegalArgumentException, UnsupportedSqlError
from sparkshim.translate import parse_spark

if TYPE_CHECKING:
    from deltalake import DeltaTable

# delta-rs's filter operators, by the comparison that reads the same with the column first.
_OPERATORS: dict[type[exp.Expr], str] = {
    exp.EQ: "=",
    exp.NEQ: "!=",
    exp.LT: "<",
    exp.LTE: "<=",
    exp.GT: ">",
    exp.GTE: ">=",
}
# The operator that reads the same with the sides swapped (``5 < p`` is ``p > 5``).
_SWAPPED = {"=": "=", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}

_FILE_STATS = pa.struct(
    [
        ("min", pa.int64()),
        ("max", pa.int64()),
        ("avg", pa.float64()),
        ("totalFiles", pa.int64()),
        ("totalSize", pa.int64()),
    ]
)
_METRICS = pa.struct(
    [
        ("numFilesAdded", pa.int64()),
        ("numFilesRemoved", pa.int64()),
        ("filesAdded", _FILE_STATS),
        ("filesRemoved", _FILE_STATS),
        ("partitionsOptimized", pa.int64()),
        ("numBatches", pa.int64()),
        ("totalConsideredFiles", pa.int64()),
        ("totalFilesSkipped", pa.int64()),
        ("preserveInsertionOrder", pa.bool_()),
    ]
)

Filter = tuple[str, str, Any]


def optimize(
    location: Path,
    predicate: str | None,
    zorder_columns: list[str],
    options: delta.CommitOptions,
    purge: bool = False,
) -> pa.Table:
    """Compact (or Z-order) the table's files, those of the partitions ``predicate``
    keeps if given; Delta's result row. ``purge``: ``REORG TABLE … APPLY (PURGE)``, the
    files with a deletion vector written again without the rows it removes."""
    table = delta.open_table(location)
    partition_columns = list(table.metadata().partition_columns)
    filters = partition_filters(predicate, partition_columns) if predicate else None
    data_columns = _checked_zorder(zorder_columns, delta.arrow_schema(table), partition_columns)
    metrics = compact.optimize(
        location,
        table,
        filters=filters,
        zorder_columns=data_columns,
        predicate=predicate,
        options=options,
        purge=purge,
    )
    return pa.table(
        {
            "path": [location.as_uri()],
            "metrics": pa.array([_spark_metrics(metrics)], _METRICS),
        }
    )


def partition_filters(predicate: str, partition_columns: list[str]) -> list[Filter]:
    """delta-rs's filters for an ``OPTIMIZE … WHERE`` predicate."""
    select = parse_spark(f"SELECT 1 WHERE {predicate}")
    where = select.args.get("where")
    if where is None:
        raise UnsupportedSqlError(f"the OPTIMIZE predicate {predicate}")
    condition = where.this.unnest()
    conjuncts = condition.flatten() if isinstance(condition, exp.And) else [condition]
    return [_filter(c.unnest(), partition_columns) for c in conjuncts]


def _filter(condition: exp.Expr, partition_columns: list[str]) -> Filter:
    """One conjunct as a filter: ``column op literal`` (either way round) or
    ``column [NOT] IN (literals)``."""
    negated = isinstance(condition, exp.Not) and isinstance(condition.this, exp.In)
    if negated or isinstance(condition, exp.In):
        in_list = condition.this if negated else condition
        values = in_list.expressions
        if isinstance(in_list.this, exp.Column) and values and all(map(_is_literal, values)):
            name = _partition_column(in_list.this, partition_columns)
            return (name, "not in" if negated else "in", [_value(v) for v in values])
    operator = _OPERATORS.get(type(condition))
    if operator is not None:
        left, right = condition.this, condition.expression
        if isinstance(right, exp.Column) and _is_literal(left):
            left, right, operator = right, left, _SWAPPED[operator]
        if isinstance(left, exp.Column) and _is_literal(right):
            return (_partition_column(left, partition_columns), operator, _value(right))
    for column in condition.find_all(exp.Column):
        _partition_column(column, partition_columns)  # Delta's error first
    raise UnsupportedSqlError(
        f"the OPTIMIZE predicate {condition.sql('spark')}",
        "write the predicate as comparisons (=, <>, <, <=, >, >=, IN, NOT IN) of partition"
        " columns with literals, joined by AND",
    )


def _partition_column(column: exp.Column, partition_columns: list[str]) -> str:
    """The partition column ``column`` names (case-insensitively), as the table spells it."""
    name = next((p for p in partition_columns if p.lower() == column.name.lower()), None)
    if name is None:
        raise AnalysisException(
            message=f"Predicate references non-partition column '{column.name}'. Only the"
            f" partition columns may be referenced: [{', '.join(partition_columns)}]"
        )
    return name


def _is_literal(node: exp.Expr) -> bool:
    if isinstance(node, exp.Neg):
        return _is_literal(node.this)
    return isinstance(node, exp.Literal)


def _value(literal: exp.Expr) -> str:
    """A partition value as delta-rs compares it: the text of the literal."""
    if isinstance(literal, exp.Neg):
        return f"-{_value(literal.this)}"
    assert isinstance(literal, exp.Literal)
    return literal.name


def _checked_zorder(
    columns: list[str], schema: pa.Schema, partition_columns: list[str]
) -> list[str]:
    """The Z-order columns as the table names them, refused as Delta refuses them."""
    by_lower_name = {name.lower(): name for name in schema.names}
    partitions = {name.lower() for name in partition_columns}
    checked = []
    for column in columns:
        if column.lower() in partitions:
            raise AnalysisException(
                message=f"{column} is a partition column. Z-Ordering can only be performed"
                " on data columns"
            )
        name = by_lower_name.get(column.lower())
        if name is None:
            raise AnalysisException(
                message=f"Z-Ordering column {column} does not exist in data schema."
            )
        if pa.types.is_nested(schema.field(name).type):
            raise UnsupportedSqlError(
                f"ZORDER BY the column {name} of type {schema.field(name).type}",
                "Z-order by columns of atomic types",
            )
        checked.append(name)
    return checked


def _spark_metrics(metrics: dict[str, Any]) -> dict[str, Any]:
    """compact.py's metrics (delta-rs's names) as Delta's struct (file statistics may come
    as JSON, as delta-rs records them)."""
    result = {field.name: metrics.get(field.name) for field in _METRICS}
    for name in ("filesAdded", "filesRemoved"):
        stats = metrics.get(name)
        result[name] = json.loads(stats) if isinstance(stats, str) else stats
    return result


def vacuum(
    location: Path,
    retain_hours: int | None,
    *,
    dry_run: bool,
    check_retention: bool,
    options: delta.CommitOptions,
) -> pa.Table:
    """Delete (or, for a dry run, list) the files older versions alone need; Delta's
    result: the files a dry run would delete, else the table's path."""
    table = delta.open_table(location)
    try:
        paths = table.vacuum(
            retention_hours=retain_hours,
            dry_run=dry_run,
            enforce_retention_duration=check_retention,
            commit_properties=options.properties(),
        )
    except DeltaError as failure:
        if "retention" not in str(failure).lower():
            raise
        raise IllegalArgumentException(
            message="requirement failed: Are you sure you would like to vacuum files with"
            " such a low retention period? If you have writers that are currently writing to"
            " this table, there is a risk that you may corrupt the state of your Delta"
            " table. If you are certain that there are no operations being performed on"
            " this table, such as insert/upsert/delete/optimize, then you may turn off this"
            f" check by setting: {RETENTION_CHECK_CONF} = false ({failure})"
        ) from failure
    # What delta-rs leaves, by the same rule: files no version within the retention period
    # reads, written before it (a writer's file not committed yet stays).
    cutoff = time.time() - _retention_hours(table, retain_hours) * 3600
    leftovers = _unneeded_vector_files(location, table, cutoff)
    stale_indexes = row_index.stale_files(location, delta.arrow_schema(table))
    leftovers += [path for path in stale_indexes if path.stat().st_mtime < cutoff]
    if dry_run:
        listed = [(location / p).as_uri() for p in paths] + [p.as_uri() for p in leftovers]
        unique = list(dict.fromkeys(listed))  # delta-rs names a file once per removal
        return pa.table({"path": pa.array(unique, pa.string())})
    for leftover in leftovers:
        leftover.unlink(missing_ok=True)
    return pa.table({"path": [location.as_uri()]})


_DEFAULT_RETENTION_HOURS = 7 * 24
_RETENTION = re.compile(r"^\s*(?:interval\s+)?(\d+)\s*(week|day|hour|minute|second)s?\s*$", re.I)
_HOURS_PER_UNIT = {"week": 168.0, "day": 24.0, "hour": 1.0, "minute": 1 / 60, "second": 1 / 3600}


def _unneeded_vector_files(location: Path, table: DeltaTable, cutoff: float) -> list[Path]:
    """The deletion vector files no version after ``cutoff`` (seconds) needs: those the
    current version's files do not name, that no file removed since named, written
    before it."""
    stored = [p for p in location.rglob("deletion_vector_*.bin") if "_delta_log" not in p.parts]
    if not stored:
        return []
    cutoff_ms = cutoff * 1000
    needed = {
        vector.file_path(location)
        for vector in live_files.vectors(location, table.version()).values()
        if vector.storage_type != "i"
    }
    needed |= _vectors_removed_since(location, table.version(), cutoff_ms)
    return sorted(
        path for path in stored if path not in needed and path.stat().st_mtime * 1000 < cutoff_ms
    )


def _retention_hours(table: DeltaTable, retain_hours: int | None) -> float:
    """``RETAIN n HOURS`` if given, else ``delta.deletedFileRetentionDuration`` in hours
    (``interval 1 weeks``, …), else a week."""
    if retain_hours is not None:
        return retain_hours
    configured = table.metadata().configuration.get("delta.deletedFileRetentionDuration")
    match = _RETENTION.match(configured or "")
    if match is None:
        return _DEFAULT_RETENTION_HOURS
    return int(match[1]) * _HOURS_PER_UNIT[match[2].lower()]


def _vectors_removed_since(location: Path, version: int, cutoff_ms: float) -> set[Path]:
    """The vector files of the files removed at or after ``cutoff_ms``: the versions within
    the retention period read them (commits are read newest first, down to the first one
    older than the period)."""
    needed: set[Path] = set()
    while version >= 0:
        path = log.commit_path(location, version)
        if not path.exists() or path.stat().st_mtime * 1000 < cutoff_ms:
            break
        for action in log.read_commit(location, version) or []:
            remove = action.get("remove")
            if (
                remove
                and remove.get("deletionVector")
                and remove.get("deletionTimestamp", 0) >= cutoff_ms
            ):
                vector = deletion_vectors.Descriptor.from_json(remove["deletionVector"])
                if vector.storage_type != "i":
                    needed.add(vector.file_path(location))
        version -= 1
    return needed
