"""Delta's ``OPTIMIZE`` (bin-packing and Z-order), committed here rather than by delta-rs.

delta-rs's optimize retries its commit on top of concurrent commits, and its conflict
check does not notice that the winner already removed the same files: two processes
compacting one table at once both commit, and every row of the compacted files is then
there twice (an OPTIMIZE racing a DELETE or MERGE likewise brings back the rows they
removed). ``max_commit_retries`` does not reach its optimize. So the compaction is
planned, written and committed here, in three steps:

* ``plan``: the files of the partitions the ``WHERE`` clause keeps, grouped by partition
  and by what their Parquet columns hold (``Layout``), and packed into bins of up to the
  target size (``delta.targetFileSize``, else delta-rs's 100 MiB). For compaction only
  files smaller than the target are taken, in log order, and files with a deletion
  vector whatever their size; a bin of one file is left alone unless the file has a
  vector; for ``ZORDER BY`` every file of each group is one bin, as on Delta.
* ``rewrite``: each bin's files read exactly as stored (physical columns, no cast), less
  the rows their deletion vectors remove, and written again as one new file (for
  Z-order, sorted by the interleaved bits of each column's rank and split into files of
  about the target size), in the folder of the files it replaces. A new file must hold
  its columns as they did (same Arrow types, Parquet physical and logical types, field
  ids and nesting), else the bin is left alone.
  Its statistics are its row and NULL counts, and bounds only for the types whose JSON
  form in the log is certain (``bounded_columns``).
* ``commit``: ``remove`` actions for the old files (each with its deletion vector, which
  names the logical file removed) and ``add`` actions for the new ones, without vectors,
  all with ``dataChange`` false (so the change data feed and appendOnly tables see no
  change), put into the log only at the version after the one read. A compaction that
  finds that version taken deletes what it wrote and changes nothing: the table moved
  under it, so the files it read may be gone already.

What is never merged, so that no value is reinterpreted:

* files of different partitions, or of different layouts (written before and after a
  schema change, or by writers that store a type otherwise: each keeps its own);
* files the log names by an absolute path (shallow clones).

Tables whose commits need more than ``add`` and ``remove`` actions (row tracking, domain
metadata, in-commit timestamps, liquid clustering) are refused by name.
"""

from __future__ import annotations

import json
import math
import os
import re
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from sparkshim import append, deletion_vectors, delta, live_files
from sparkshim.errors import UnsupportedSqlError
from sparkshim.parquet_stats import statistics_columns
from sparkshim.types import is_text

if TYPE_CHECKING:
    from deltalake import DeltaTable

# delta-rs's default target file size (Delta on Spark's ``optimize.maxFileSize`` is 1 GiB).
DEFAULT_TARGET_SIZE = 100 * 1024 * 1024
_TARGET_SIZE_PROPERTY = "delta.targetFileSize"
_SIZE_UNITS = {"": 1, "b": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}
# Writer features that ask of a commit more than add and remove actions.
_UNSUPPORTED_WRITER_FEATURES = {
    "rowTracking": "row tracking",
    "domainMetadata": "domain metadata",
    "inCommitTimestamp": "in-commit timestamps",
    "clustering": "liquid clustering",
}
# Delta types whose min/max statistics are written for the new files: JSON numbers,
# dates as ISO text and strings, compared as Delta compares them (UTF-8 bytes).
_BOUNDED_TYPES = {"byte", "short", "integer", "long", "date", "string"}
# Longer strings get no bounds (Delta truncates them, and a truncated maximum needs care).
_MAX_BOUND_LENGTH = 32
# Spark's reading precision for INT96 timestamps (it writes microseconds).
_INT96_UNIT = "us"


@dataclass(frozen=True)
class DataFile:
    """An active data file of the table."""

    path: str  # relative to the table and URL-encoded, as in the log
    size: int
    modification_time: int
    vector: deletion_vectors.Descriptor | None = None  # the rows it no longer holds


@dataclass(frozen=True)
class Layout:
    """What a Parquet file's columns hold: files with equal layouts read into one Arrow
    table, which is written back as the same columns.

    The names of the groups inside lists and maps, and whether a decimal is stored as an
    integer or as fixed-length bytes, are left out: writers differ in them (delta-rs and
    Spark store small decimals as integers, pyarrow as bytes by default) and no reader
    reads a value differently for them.
    """

    arrow_schema: str  # with field metadata (Parquet field ids), without file metadata
    leaves: tuple[tuple[object, ...], ...]  # each leaf's physical and logical type, levels

    @property
    def has_int96(self) -> bool:
        return any(leaf[0] == "INT96" for leaf in self.leaves)


@dataclass(frozen=True)
class Bin:
    """Files of one partition, written under one layout, rewritten together."""

    partition_values: dict[str, str | None]  # physical column names, as the log spells them
    layout: Layout
    files: tuple[DataFile, ...]


@dataclass(frozen=True)
class Plan:
    """What an OPTIMIZE rewrites, read from the table at ``read_version``."""

    read_version: int
    target_size: int
    zorder: tuple[str, ...]  # physical column names
    bounded: frozenset[str]  # physical names of the columns whose bounds are recorded
    bins: tuple[Bin, ...]
    considered_files: int  # every active file of the selected partitions


@dataclass(frozen=True)
class Rewritten:
    """A bin and the files (``add`` actions) it became."""

    bin: Bin
    added: tuple[dict[str, Any], ...]


def optimize(
    location: Path,
    table: DeltaTable,
    *,
    filters: list[tuple[str, str, Any]] | None,
    zorder_columns: list[str],
    predicate: str | None,
    options: delta.CommitOptions,
    purge: bool = False,
) -> dict[str, Any]:
    """Compact (or Z-order) the table as read in ``table``, committed only at the version
    after it; delta-rs's metrics (as its own OPTIMIZE reports them). ``purge``: ``REORG
    TABLE … APPLY (PURGE)``, which writes again only the files with a deletion vector
    (without the rows it removes), packed into bins of the target size."""
    read_version = table.version()
    if options.expected_version is not None and read_version != options.expected_version:
        raise delta.TableMovedError(
            message=f"[DELTA_CONCURRENT_WRITE] {location} is at version {read_version}, not"
            f" {options.expected_version} as read: re-read the table and retry"
        )
    state = delta.table_state(location)
    chosen = plan(location, table, filters=filters, zorder_columns=zorder_columns, purge=purge)
    done = rewrite(location, chosen)
    if done:
        operation = "REORG" if purge else "OPTIMIZE"
        version = commit(
            location, chosen, done, predicate=predicate, options=options, operation=operation
        )
        if state is not None and append.checkpoint_due(state, version):
            delta.checkpoint(delta.open_table(location))
    return metrics(chosen, done)


# --- plan ---------------------------------------------------------------------------


def plan(
    location: Path,
    table: DeltaTable,
    *,
    filters: list[tuple[str, str, Any]] | None,
    zorder_columns: list[str],
    purge: bool = False,
) -> Plan:
    """The bins to rewrite among the files of the partitions ``filters`` keep (``purge``:
    only files with a deletion vector)."""
    check_writable(table)
    target = target_size(table.metadata().configuration)
    physical = physical_names(table)
    zorder = tuple(physical.get(c, c) for c in zorder_columns)
    active = _with_deletion_vectors(location, table, _active_files(table))
    bins: list[Bin] = []
    considered = 0
    for values, paths in _partition_files(table, filters):
        files = [active[p] for p in paths if p in active]
        considered += len(paths)
        candidates = [
            f for f in files if f.vector is not None or (not purge and (zorder or f.size < target))
        ]
        alone = len(candidates) < (1 if zorder else 2)
        if alone and not any(f.vector is not None for f in candidates):
            continue
        partition_values = {physical.get(k, k): v for k, v in values.items()}
        for layout, group in _by_layout(location, candidates).items():
            if zorder:
                bins.append(Bin(partition_values, layout, tuple(group)))
            else:
                bins.extend(
                    Bin(partition_values, layout, packed)
                    for packed in pack(group, target)
                    if len(packed) > 1 or packed[0].vector is not None
                )
    return Plan(table.version(), target, zorder, bounded_columns(table), tuple(bins), considered)


def check_writable(table: DeltaTable) -> None:
    """Refuse tables whose commits need more than ``add`` and ``remove`` actions."""
    features = set(table.protocol().writer_features or ())
    needing_more = sorted(f for f in features if f in _UNSUPPORTED_WRITER_FEATURES)
    if needing_more:
        named = ", ".join(_UNSUPPORTED_WRITER_FEATURES[f] for f in needing_more)
        raise UnsupportedSqlError(
            f"OPTIMIZE of a table with {named} (writer features {needing_more})",
            "run OPTIMIZE on Spark with Delta Lake",
        )


def target_size(configuration: dict[str, str]) -> int:
    """The table's target file size in bytes (``delta.targetFileSize``: bytes, or a size
    such as ``128mb``), else delta-rs's default.

    >>> target_size({"delta.targetFileSize": "128mb"})
    134217728
    >>> target_size({}) == DEFAULT_TARGET_SIZE
    True
    """
    text = configuration.get(_TARGET_SIZE_PROPERTY, "").strip().lower()
    match = re.fullmatch(r"(\d+)\s*([kmgt]?)(?:i?b)?", text)
    if match is None:
        return DEFAULT_TARGET_SIZE
    return int(match[1]) * _SIZE_UNITS[match[2]]


def physical_names(table: DeltaTable) -> dict[str, str]:
    """The physical (stored) name of each top-level column, by its logical name, under
    column mapping; empty without it (the names are the same)."""
    mode = table.metadata().configuration.get("delta.columnMapping.mode", "none")
    if mode.lower() == "none":
        return {}
    fields = json.loads(table.schema().to_json())["fields"]
    return {
        f["name"]: f.get("metadata", {}).get("delta.columnMapping.physicalName", f["name"])
        for f in fields
    }


def bounded_columns(table: DeltaTable) -> frozenset[str]:
    """The physical names of the top-level columns whose minimum and maximum a new file
    records: integers, dates and strings (binary collation), the types whose JSON form in
    the log is certain. Other columns get none: readers then skip no file on them, where
    a wrong bound would make them skip rows."""
    fields = json.loads(table.schema().to_json())["fields"]
    physical = physical_names(table)
    return frozenset(
        physical.get(f["name"], f["name"])
        for f in fields
        if str(f["type"]) in _BOUNDED_TYPES and "__COLLATIONS" not in f.get("metadata", {})
    )


def _active_files(table: DeltaTable) -> dict[str, DataFile]:
    """The table's data files by their path relative to it as stored on disk (decoded);
    files the log names by an absolute path are left out."""
    actions = pa.table(table.get_add_actions(flatten=True))
    files = {}
    for path, size, modified in zip(
        actions.column("path").to_pylist(),
        actions.column("size_bytes").to_pylist(),
        actions.column("modification_time").to_pylist(),
        strict=True,
    ):
        if "://" in path or path.startswith("/"):
            continue
        files[unquote(path)] = DataFile(path, size, modified)
    return files


def _with_deletion_vectors(
    location: Path, table: DeltaTable, active: dict[str, DataFile]
) -> dict[str, DataFile]:
    """``active`` with each file's deletion vector (read from the log: delta-rs does not
    give them). Each vector must belong to an active file named by a relative path, else
    the compaction is refused: merging a file whose vector went unnoticed would bring
    its deleted rows back."""
    if "deletionVectors" not in set(table.protocol().reader_features or ()):
        return active
    by_log_path = {f.path: disk for disk, f in active.items()}
    vectors = live_files.vectors(location, table.version())
    with_vectors = dict(active)
    for path, vector in vectors.items():
        disk = by_log_path.get(path)
        if disk is None:
            raise UnsupportedSqlError(
                f"OPTIMIZE of a table whose deletion vector of {path} matches no data file"
                " it can rewrite",
                "run OPTIMIZE on Spark with Delta Lake",
            )
        with_vectors[disk] = replace(active[disk], vector=vector)
    return with_vectors


def _partition_files(
    table: DeltaTable, filters: list[tuple[str, str, Any]] | None
) -> list[tuple[dict[str, str | None], list[str]]]:
    """Each partition ``filters`` keep: its values (logical names, as the log spells them:
    they are copied into the new files' actions unchanged) and its files' paths relative
    to the table (decoded). One listing per partition: delta-rs gives the values as
    written only per partition, not per file."""
    root = unquote(urlparse(table.table_uri).path).rstrip("/") + "/"
    columns = list(table.metadata().partition_columns)
    if not columns:
        return [({}, _relative(table.file_uris(), root))]
    partitions = []
    seen: set[str] = set()
    for values in table.partitions(file_pruning_predicate=filters or None):
        # '' selects a NULL partition value, as delta-rs spells it in a filter.
        equal = [(c, "=", "" if values.get(c) is None else values[c]) for c in columns]
        paths = _relative(table.file_uris(file_pruning_predicate=equal), root)
        fresh = [p for p in paths if p not in seen]  # "1" and "01" are one partition
        seen.update(fresh)
        if fresh:
            partitions.append(({c: values.get(c) for c in columns}, fresh))
    return partitions


def _relative(uris: Iterable[str], root: str) -> list[str]:
    return [uri[len(root) :] for uri in uris if uri.startswith(root)]


def _by_layout(location: Path, files: list[DataFile]) -> dict[Layout, list[DataFile]]:
    """``files`` grouped by how they store their columns, in log order within each."""
    groups: dict[Layout, list[DataFile]] = {}
    for file in sorted(files, key=lambda f: (f.modification_time, f.path)):
        groups.setdefault(layout(_parquet(location, file.path)), []).append(file)
    return groups


def layout(parquet: pq.ParquetFile) -> Layout:
    """The layout of an open Parquet file."""
    schema = parquet.schema
    leaves = tuple(_leaf(schema.column(i)) for i in range(len(schema)))
    arrow = pa.schema([_canonical_field(f) for f in parquet.schema_arrow])
    return Layout(arrow.to_string(truncate_metadata=False, show_schema_metadata=False), leaves)


def _canonical_field(field: pa.Field) -> pa.Field:
    """``field`` with the fields inside its lists and maps named alike (see ``Layout``)."""
    kind = field.type
    if pa.types.is_map(kind):
        key = _canonical_field(kind.key_field).with_name("key")
        value = _canonical_field(kind.item_field).with_name("value")
        kind = pa.map_(key, value, kind.keys_sorted)
    elif pa.types.is_list(kind) or pa.types.is_large_list(kind):
        element = _canonical_field(kind.value_field).with_name("element")
        kind = pa.list_(element) if pa.types.is_list(kind) else pa.large_list(element)
    elif pa.types.is_struct(kind):
        kind = pa.struct([_canonical_field(kind.field(i)) for i in range(kind.num_fields)])
    return field.with_type(kind)


def _leaf(column: pq.ColumnSchema) -> tuple[object, ...]:
    """A leaf column's storage as far as it bears on its values (see ``Layout``)."""
    logical = _CONVERSION_FLAGS.sub("", str(column.logical_type))
    decimal = column.precision > 0
    return (
        "DECIMAL" if decimal else column.physical_type,
        logical,
        0 if decimal else column.length,
        column.precision,
        column.scale,
        column.max_definition_level,
        column.max_repetition_level,
    )


# How a writer annotated a logical type (also as a legacy converted type, or not): no
# bearing on the values.
_CONVERSION_FLAGS = re.compile(r", (is_from_converted_type|force_set_converted_type)=\w+")


def _parquet(location: Path, path: str) -> pq.ParquetFile:
    return pq.ParquetFile(location / unquote(path), coerce_int96_timestamp_unit=_INT96_UNIT)


def pack(files: list[DataFile], target: int) -> list[tuple[DataFile, ...]]:
    """``files`` in order, cut into runs of at most ``target`` bytes (a file alone may
    exceed it): neighbouring files stay together, so insertion order is kept.

    >>> sizes = [DataFile(str(n), n, 0) for n in (40, 30, 50, 10, 90)]
    >>> [[f.size for f in run] for run in pack(sizes, 100)]
    [[40, 30], [50, 10], [90]]
    """
    runs: list[tuple[DataFile, ...]] = []
    current: list[DataFile] = []
    size = 0
    for file in files:
        if current and size + file.size > target:
            runs.append(tuple(current))
            current, size = [], 0
        current.append(file)
        size += file.size
    if current:
        runs.append(tuple(current))
    return runs


# --- rewrite ------------------------------------------------------------------------


def rewrite(location: Path, chosen: Plan) -> list[Rewritten]:
    """Write each bin's new files; the bins rewritten. Nothing written is left behind
    when this fails."""
    done: list[Rewritten] = []
    try:
        for bin_ in chosen.bins:
            added = _rewrite_bin(location, bin_, chosen)
            if added:
                done.append(Rewritten(bin_, added))
    except BaseException:
        delete_written(location, done)
        raise
    return done


def _rewrite_bin(location: Path, bin_: Bin, chosen: Plan) -> tuple[dict[str, Any], ...]:
    """The bin's rows written again; its ``add`` actions, or none when a new file would
    store a column otherwise than the files it replaces (then nothing is left written)."""
    data = _concatenated([_live_rows(location, f) for f in bin_.files])
    if chosen.zorder:
        data = data.take(zorder_indices(data, list(chosen.zorder)))
        size = sum(f.size for f in bin_.files)
        parts = _slices(data, math.ceil(size / chosen.target_size))
    else:
        parts = [data]
    folder = os.path.dirname(bin_.files[0].path)
    added: list[dict[str, Any]] = []
    for part in parts:
        add = _write(location, folder, part, bin_, chosen.bounded)
        added.append(add)
        if layout(_parquet(location, add["add"]["path"])) != bin_.layout:
            delete_written(location, [Rewritten(bin_, tuple(added))])
            return ()
    return tuple(added)


def _live_rows(location: Path, file: DataFile) -> pa.Table:
    """A file's rows as stored, less those its deletion vector removes."""
    rows = _parquet(location, file.path).read()
    if file.vector is None:
        return rows
    removed = deletion_vectors.read(location, file.vector)
    return rows.filter(pa.array(deletion_vectors.keep_mask(removed, rows.num_rows)))


def _concatenated(tables: list[pa.Table]) -> pa.Table:
    """``tables`` (of one layout) as one; the names of the fields inside lists and maps
    (which may differ between writers) are the first table's."""
    schema = tables[0].schema
    return pa.concat_tables([t if t.schema.equals(schema) else t.cast(schema) for t in tables])


def _slices(data: pa.Table, count: int) -> list[pa.Table]:
    """``data`` cut into ``count`` runs of rows of about equal length (at least one)."""
    count = max(1, min(count, data.num_rows))
    length = math.ceil(data.num_rows / count) if data.num_rows else 0
    return [data.slice(i * length, length) for i in range(count)]


def zorder_indices(data: pa.Table, columns: list[str]) -> np.ndarray[Any, Any]:
    """The order of ``data``'s rows along a Z-order curve over ``columns``: the bits of
    each column's dense rank (NULLs first) interleaved, the first column's the most
    significant. Ranks, not values, so that every type orders and every column weighs
    the same.

    >>> grid = pa.table({"x": [1, 1, 0, 0], "y": [1, 0, 1, 0]})
    >>> grid.take(zorder_indices(grid, ["x", "y"])).to_pydict()
    {'x': [0, 0, 1, 1], 'y': [0, 1, 0, 1]}
    """
    present = [c for c in columns if c in data.column_names]  # absent: NULL, one rank
    width = max(1, int(data.num_rows).bit_length())
    bits = min(width, 64 // max(1, len(present)))
    key = np.zeros(data.num_rows, dtype=np.uint64)
    for position, column in enumerate(present):
        rank = _dense_rank(data.column(column)) >> np.uint64(width - bits)
        shift = len(present) - 1 - position
        for bit in range(bits):
            key |= ((rank >> np.uint64(bit)) & np.uint64(1)) << np.uint64(
                bit * len(present) + shift
            )
    return np.argsort(key, kind="stable")


def _dense_rank(column: pa.ChunkedArray) -> np.ndarray[Any, Any]:
    """Each value's dense rank from 0, NULLs first (0, the values then from 1)."""
    values = column.combine_chunks()
    ranks = pc.rank(values, "ascending", tiebreaker="dense").to_numpy().astype(np.uint64)
    if not values.null_count:
        dense: np.ndarray[Any, Any] = ranks - np.uint64(1)
        return dense
    nulls = values.is_null().to_numpy(zero_copy_only=False)
    dense = np.where(nulls, np.uint64(0), ranks)  # NULLs rank last: their rank is unused
    return dense


def _write(
    location: Path, folder: str, data: pa.Table, bin_: Bin, bounded: frozenset[str]
) -> dict[str, Any]:
    """Write ``data`` as a new file in ``folder`` (URL-encoded, as in the log), storing
    its columns as the bin's files do; its ``add`` action."""
    name = f"part-00000-{uuid.uuid4()}-c000.snappy.parquet"
    relative = f"{folder}/{name}" if folder else name
    path = location / unquote(relative)
    pq.write_table(
        data,
        path,
        compression="snappy",
        use_deprecated_int96_timestamps=bin_.layout.has_int96,
        store_decimal_as_integer=True,  # as Spark and delta-rs do
        write_statistics=statistics_columns(data),
    )
    action = append.add_action(relative, path, file_stats(data, bounded))
    action["add"].update(partitionValues=bin_.partition_values, dataChange=False)
    return action


def file_stats(data: pa.Table, bounded: frozenset[str]) -> dict[str, Any]:
    """A new file's statistics: its row count, each top-level column's NULL count, and
    the minimum and maximum of the ``bounded`` columns (see ``bounded_columns``)."""
    stats: dict[str, Any] = {"numRecords": data.num_rows, "nullCount": {}}
    low: dict[str, Any] = {}
    high: dict[str, Any] = {}
    for name, column in zip(data.column_names, data.columns, strict=True):
        if pa.types.is_nested(column.type):
            continue
        stats["nullCount"][name] = column.null_count
        bounds = _bounds(column) if name in bounded else None
        if bounds is not None:
            low[name], high[name] = bounds
    if low:
        stats["minValues"], stats["maxValues"] = low, high
    return stats


def _bounds(column: pa.ChunkedArray) -> tuple[Any, Any] | None:
    """The column's minimum and maximum in the log's JSON form, or None when it has no
    value or is not of a type bounded here."""
    kind = column.type
    if not (pa.types.is_integer(kind) or pa.types.is_date32(kind) or is_text(kind)):
        return None
    if column.null_count == len(column):
        return None
    extremes = pc.min_max(column)
    low, high = extremes["min"].as_py(), extremes["max"].as_py()
    if pa.types.is_date32(kind):
        return low.isoformat(), high.isoformat()
    if is_text(kind) and max(len(low), len(high)) > _MAX_BOUND_LENGTH:
        return None
    return low, high


def delete_written(location: Path, done: Iterable[Rewritten]) -> None:
    """Delete the new files of ``done`` (a compaction that is not committed)."""
    for rewritten in done:
        for add in rewritten.added:
            (location / unquote(add["add"]["path"])).unlink(missing_ok=True)


# --- commit -------------------------------------------------------------------------


def commit(
    location: Path,
    chosen: Plan,
    done: list[Rewritten],
    *,
    predicate: str | None,
    options: delta.CommitOptions,
    operation: str = "OPTIMIZE",
) -> int:
    """Put the compaction (``operation``: OPTIMIZE or REORG) into the log at the version
    after the one read; that version. When another commit took it, delete the new files
    and raise: the compaction changed nothing."""
    now = int(time.time() * 1000)
    info = _commit_info(chosen, done, predicate, now, delta.commit_metadata(options), operation)
    actions: list[dict[str, Any]] = [info, *delta.transaction_actions(options, now)]
    for rewritten in done:
        actions.extend(_remove(f, rewritten.bin.partition_values, now) for f in rewritten.bin.files)
        actions.extend(rewritten.added)
    version = chosen.read_version + 1
    if not delta.put_if_absent(location / "_delta_log", version, actions):
        delete_written(location, done)
        raise delta.TableMovedError(
            message="[DELTA_CONCURRENT_DELETE_DELETE] This OPTIMIZE attempted to remove files"
            f" that a concurrent commit may have removed: another commit (a concurrent"
            f" OPTIMIZE or write) landed on {location} at version {version} while it was"
            " being compacted; nothing was changed: run OPTIMIZE again"
        )
    return version


def _remove(file: DataFile, partition_values: dict[str, str | None], now: int) -> dict[str, Any]:
    remove: dict[str, Any] = {
        "path": file.path,
        "dataChange": False,
        "deletionTimestamp": now,
        "extendedFileMetadata": True,
        "partitionValues": partition_values,
        "size": file.size,
    }
    if file.vector is not None:  # the logical file removed is the file and its vector
        remove["deletionVector"] = file.vector.to_json()
    return {"remove": remove}


def _commit_info(
    chosen: Plan,
    done: list[Rewritten],
    predicate: str | None,
    now: int,
    metadata: dict[str, Any],
    operation: str,
) -> dict[str, Any]:
    """An OPTIMIZE's (or REORG's) ``commitInfo``: Delta's parameters, delta-rs's metrics
    (as its own OPTIMIZE records them, so that DESCRIBE HISTORY reads both alike)."""
    recorded = metrics(chosen, done)
    for name in ("filesAdded", "filesRemoved"):
        recorded[name] = json.dumps(recorded[name], separators=(",", ":"))
    info: dict[str, Any] = {
        "timestamp": now,
        "operation": operation,
        "operationParameters": {
            "predicate": json.dumps([predicate]) if predicate else "[]",
            "zOrderBy": json.dumps(list(chosen.zorder)),
            **({"applyPurge": "true"} if operation == "REORG" else {}),
        },
        "readVersion": chosen.read_version,
        "isBlindAppend": False,
        "engineInfo": "sparkshim",
        "operationMetrics": recorded,
    }
    info.update(metadata)
    return {"commitInfo": info}


def metrics(chosen: Plan, done: list[Rewritten]) -> dict[str, Any]:
    """delta-rs's OPTIMIZE metrics (file statistics as dicts)."""
    removed = [f.size for r in done for f in r.bin.files]
    added = [int(a["add"]["size"]) for r in done for a in r.added]
    partitions = {json.dumps(r.bin.partition_values, sort_keys=True) for r in done}
    return {
        "numFilesAdded": len(added),
        "numFilesRemoved": len(removed),
        "filesAdded": _size_stats(added),
        "filesRemoved": _size_stats(removed),
        "partitionsOptimized": len(partitions),
        "numBatches": len(done),
        "totalConsideredFiles": chosen.considered_files,
        "totalFilesSkipped": chosen.considered_files - len(removed),
        "preserveInsertionOrder": not chosen.zorder,
    }


def _size_stats(sizes: list[int]) -> dict[str, Any]:
    return {
        "avg": sum(sizes) / len(sizes) if sizes else 0.0,
        "max": max(sizes, default=0),
        "min": min(sizes, default=0),
        "totalFiles": len(sizes),
        "totalSize": sum(sizes),
    }
