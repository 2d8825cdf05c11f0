"""A MERGE that deletes matched rows and inserts others, committed here rather than by
delta-rs.

``MERGE … WHEN MATCHED THEN DELETE WHEN NOT MATCHED THEN INSERT`` is how an incremental
refresh applies a change: delete every copy of each touched row value, insert the new
copies. delta-rs's MERGE costs 60 to 150 ms even when it touches a few rows of one file
(DataFusion plans and runs a join of the whole action table with the target). On a plain
table the same commit is only this:

* find the data files holding a deleted row value (one DuckDB query over the files);
* write each such file again without those rows (DuckDB ``COPY``), and the inserted rows
  as a new file;
* if the table records its change data feed, write a ``_change_data`` file with every
  deleted row (each copy) and every inserted row, with their ``_change_type``;
* commit ``remove`` and ``add`` actions (and the ``cdc`` one) at the version read, only if
  that version is still free.

Plain means what it means for appends (append.py), and no deletion vectors: a data file
holds exactly its rows of the table. Any other table goes through delta-rs.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq
from sqlglot import exp

from sparkshim import append, delta, log
from sparkshim.query import Registrations, parquet_scan
from sparkshim.types import align_to_schema

if TYPE_CHECKING:
    from deltalake import DeltaTable

    from sparkshim.session import ShimSession

# The column a scan of the data files names each row's file in.
_FILE = "__sparkshim_file"
_CHANGE_TYPE = "_change_type"


@dataclass(frozen=True)
class _Rewritten:
    """What the data files became: their actions and the rows they lost."""

    removed: list[dict[str, Any]]
    added: list[dict[str, Any]]
    deleted_rows: pa.Table  # every copy, in the table's schema
    copied_rows: int


def delete_and_insert(
    session: ShimSession,
    location: Path,
    read_version: int,
    deleted_values: pa.Table,
    inserted: pa.Table | None,
    merge_predicate: str,
) -> bool:
    """Delete every row equal (null-safe, all columns) to a row of ``deleted_values``
    and insert ``inserted``, in one commit after ``read_version`` (the version the two
    were computed from). False, with nothing written, when the table is not plain or has
    moved since: the caller then goes through delta-rs."""
    state = delta.table_state(location)
    if state is None or state.version != read_version or not _is_plain(state):
        return False
    options = session.commit_options()
    if options.expected_version is not None and options.expected_version != read_version:
        return False  # check_expected_version refuses it, with its message
    table = delta.open_table(location)
    if table.version() != read_version:
        return False
    schema = delta.arrow_schema(table)
    inserted = align_to_schema(inserted, schema.names, schema) if inserted is not None else None
    if inserted is not None and not append.fits(state, inserted):
        return False  # a NOT NULL column given NULL: delta-rs refuses it, with its message
    rewritten = _rewrite_files(session, location, table, schema, deleted_values)
    inserted_count = inserted.num_rows if inserted is not None else 0
    if not rewritten.deleted_rows.num_rows and not inserted_count:
        return True  # nothing changes: no commit, as delta-rs makes none
    added = list(rewritten.added)
    if inserted is not None and inserted.num_rows:
        added.append(append.data_file(location, inserted))
    actions: list[dict[str, Any]] = []
    change_feed = state.configuration.get("delta.enableChangeDataFeed", "").lower() == "true"
    if change_feed and (rewritten.deleted_rows.num_rows or inserted_count):
        actions.append(_change_file(location, rewritten.deleted_rows, inserted))
    info = _commit_info(
        read_version,
        merge_predicate,
        source_rows=deleted_values.num_rows + inserted_count,
        deleted=rewritten.deleted_rows.num_rows,
        inserted=inserted_count,
        copied=rewritten.copied_rows,
        files_added=len(added),
        files_removed=len(rewritten.removed),
        metadata=delta.commit_metadata(options),
    )
    now = info["commitInfo"]["timestamp"]
    commit = [info, *delta.transaction_actions(options, now), *rewritten.removed, *added]
    commit.extend(actions)
    if not delta.put_if_absent(location / "_delta_log", read_version + 1, commit):
        _discard(location, [*added, *actions])
        return False
    if append.checkpoint_due(state, read_version + 1):
        delta.checkpoint(delta.open_table(location))
    return True


def _is_plain(state: log.TableState) -> bool:
    return append.is_plain_table(state) and "deletionVectors" not in state.reader_features


def _rewrite_files(
    session: ShimSession,
    location: Path,
    table: DeltaTable,
    schema: pa.Schema,
    deleted_values: pa.Table,
) -> _Rewritten:
    """Write each data file holding a deleted value again without those rows."""
    no_rows = schema.empty_table()
    if deleted_values.num_rows == 0:
        return _Rewritten([], [], no_rows, 0)
    sizes = _file_sizes(table)
    by_file = {str(location / relative): relative for relative in sizes}
    registrations = Registrations(session.cursor())
    cursor = registrations.cursor
    try:
        values = registrations.arrow(align_to_schema(deleted_values, schema.names, schema))
        deleted = exp.alias_(values, "d", table=True)
        scan = parquet_scan(cursor, tuple(by_file), schema, file_column=_FILE)
        target: exp.Expr = exp.maybe_parse(scan, dialect="duckdb").subquery("t")
        matches = _null_safe_equal(schema.names, "t", "d")
        columns = [exp.column(name, table="t", quoted=True) for name in schema.names]
        # Every copy of a deleted value, with its file: the files to write again.
        deleted_query = (
            exp.select(*columns, exp.column(_FILE, table="t"))
            .from_(target)
            .join(deleted, on=matches, join_type="semi")
        )
        deleted_rows = cursor.sql(deleted_query.sql("duckdb")).to_arrow_table()
        touched = sorted(set(deleted_rows.column(_FILE).to_pylist()))
        if not touched:
            return _Rewritten([], [], no_rows, 0)
        # DuckDB reads only the files a filter on the file name keeps.
        in_touched = exp.column(_FILE, table="t").isin(*touched)
        kept_query = (
            exp.select(*columns)
            .from_(target.copy())
            .join(deleted.copy(), on=matches.copy(), join_type="anti")
            .where(in_touched)
        )
        added, copied = _write_kept_rows(cursor, location, kept_query.sql("duckdb"))
    finally:
        registrations.drop_all()
    deleted_rows = align_to_schema(deleted_rows.drop_columns([_FILE]), schema.names, schema)
    now = int(time.time() * 1000)
    removed = [_remove(by_file[path], sizes[by_file[path]], now) for path in touched]
    return _Rewritten(removed, added, deleted_rows, copied)


def _write_kept_rows(cursor: Any, location: Path, query: str) -> tuple[list[dict[str, Any]], int]:
    """Write the rows of ``query`` as a new data file; its add action (none when there are
    no rows) and how many rows it holds."""
    name = f"part-00000-{uuid.uuid4()}-c000.snappy.parquet"
    path = location / name
    copy = f"COPY ({query}) TO {exp.Literal.string(str(path)).sql('duckdb')}"
    written = cursor.execute(f"{copy} (FORMAT parquet, COMPRESSION snappy)").fetchone()
    count = int(written[0]) if written else 0
    if count == 0:
        path.unlink(missing_ok=True)
        return [], 0
    return [_add(name, path, count)], count


def _change_file(location: Path, deleted: pa.Table, inserted: pa.Table | None) -> dict[str, Any]:
    """Write the commit's change data (every deleted copy, every inserted row) as a
    ``_change_data`` file; its cdc action."""
    parts = [
        deleted.append_column(_CHANGE_TYPE, pa.array(["delete"] * deleted.num_rows, pa.string()))
    ]
    if inserted is not None and inserted.num_rows:
        parts.append(
            inserted.append_column(
                _CHANGE_TYPE, pa.array(["insert"] * inserted.num_rows, pa.string())
            )
        )
    name = f"_change_data/cdc-00000-{uuid.uuid4()}.c000.snappy.parquet"
    path = location / name
    path.parent.mkdir(exist_ok=True)
    pq.write_table(pa.concat_tables(parts), path, compression="snappy")
    return {
        "cdc": {
            "path": name,
            "partitionValues": {},
            "size": path.stat().st_size,
            "dataChange": False,
        }
    }


def _commit_info(
    read_version: int,
    merge_predicate: str,
    *,
    source_rows: int,
    deleted: int,
    inserted: int,
    copied: int,
    files_added: int,
    files_removed: int,
    metadata: dict[str, Any],
) -> dict[str, Any]:
    """A MERGE's ``commitInfo``, with delta-rs's parameter and metric names (as its own
    MERGE records them, so that DESCRIBE HISTORY reads both alike)."""
    info: dict[str, Any] = {
        "timestamp": int(time.time() * 1000),
        "operation": "MERGE",
        "operationParameters": {
            "mergePredicate": merge_predicate,
            "matchedPredicates": json.dumps([{"actionType": "delete"}]),
            "notMatchedPredicates": json.dumps([{"actionType": "insert"}]),
            "notMatchedBySourcePredicates": "[]",
        },
        "readVersion": read_version,
        "engineInfo": "sparkshim",
        "isBlindAppend": False,
        "operationMetrics": {
            "num_source_rows": source_rows,
            "num_target_rows_inserted": inserted,
            "num_target_rows_updated": 0,
            "num_target_rows_deleted": deleted,
            "num_target_rows_copied": copied,
            "num_output_rows": inserted + copied,
            "num_target_files_added": files_added,
            "num_target_files_removed": files_removed,
        },
    }
    info.update(metadata)
    return {"commitInfo": info}


def _file_sizes(table: DeltaTable) -> dict[str, int]:
    """Each data file's size, by its path relative to the table."""
    actions = pa.table(table.get_add_actions(flatten=True))
    return dict(
        zip(
            actions.column("path").to_pylist(),
            actions.column("size_bytes").to_pylist(),
            strict=True,
        )
    )


def _remove(relative: str, size: int, now: int) -> dict[str, Any]:
    return {
        "remove": {
            "path": relative,
            "dataChange": True,
            "deletionTimestamp": now,
            "extendedFileMetadata": True,
            "partitionValues": {},
            "size": size,
        }
    }


def _add(name: str, path: Path, rows: int) -> dict[str, Any]:
    return {
        "add": {
            "path": name,
            "partitionValues": {},
            "size": path.stat().st_size,
            "modificationTime": int(time.time() * 1000),
            "dataChange": True,
            "stats": json.dumps({"numRecords": rows}),
        }
    }


def _discard(location: Path, actions: list[dict[str, Any]]) -> None:
    """Remove the files of a commit that was not made."""
    for action in actions:
        for kind in ("add", "cdc"):
            if kind in action:
                (location / action[kind]["path"]).unlink(missing_ok=True)


def _null_safe_equal(names: list[str], left: str, right: str) -> exp.Expr:
    return exp.and_(
        *[
            exp.NullSafeEQ(
                this=exp.column(name, table=left, quoted=True),
                expression=exp.column(name, table=right, quoted=True),
            )
            for name in names
        ]
    )
