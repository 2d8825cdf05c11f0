"""DELETE, UPDATE and MERGE as deletion vectors (merge-on-read): a statement marks the rows
it removes in a per-file bitmap and writes only the rows it adds, instead of writing every
touched data file again.

A table asks for this with ``delta.enableDeletionVectors = true`` (its protocol then lists
the ``deletionVectors`` reader and writer features). Each touched data file gets a new
vector: the positions of its rows the statement removes, merged with the vector it had;
the commit removes the file with its old vector and adds it again with the new one, its
statistics kept (no longer tight bounds: ``tightBounds`` false). A file all of whose rows
are removed is only removed. Every vector of a commit is stored in one
``deletion_vector_<uuid>.bin`` file, as Delta on Spark writes them. New rows (inserted, or
the new values of updated rows) go to one new data file; the change data feed, when the
table records it, gets one ``_change_data`` file with every row the statement deleted,
inserted and updated (pre- and post-image).

Only tables whose writes sparkshim commits itself (``append.is_plain_table``: no
partitions, no column mapping, no constraints) are written this way; others keep
copy-on-write through delta-rs.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import unquote

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyroaring import BitMap64
from sqlglot import exp

from sparkshim import append, commits, deletion_vectors, delta, live_files
from sparkshim.action_table import ACTION, NEW
from sparkshim.query import FILE_COLUMN, POSITION_COLUMN, run_query
from sparkshim.types import align_to_schema

if TYPE_CHECKING:
    from sparkshim.session_protocol import SessionProtocol


@dataclass(frozen=True)
class Marking:
    """What marking rows did to the data files: their actions and vector counts."""

    removed: list[dict[str, Any]]  # each touched file, with its old vector
    added: list[dict[str, Any]]  # each touched file with rows left, with its new vector
    vectors_added: int  # files that had no vector and now have one
    vectors_updated: int  # files whose vector grew
    vectors_removed: int  # files removed whole that had a vector

    def metrics(self, prefix: str) -> dict[str, int]:
        """Delta's vector metrics (``num_deletion_vectors_added`` …; a MERGE's prefix is
        ``target_``), with delta-rs's spelling of metric names."""
        return {
            f"num_{prefix}deletion_vectors_added": self.vectors_added,
            f"num_{prefix}deletion_vectors_removed": self.vectors_removed,
            f"num_{prefix}deletion_vectors_updated": self.vectors_updated,
        }


def mark(location: Path, version: int, located: pa.Table) -> Marking:
    """Mark the rows ``located`` names (``FILE_COLUMN``, ``POSITION_COLUMN``: a file path as
    a located scan gives it, a position in it) in the vectors of the files of the table at
    ``location`` at ``version``."""
    files = live_files.at(location, version)
    by_name = {Path(unquote(relative)).name: relative for relative in files}
    touched = _positions_by_file(located)
    now = int(time.time() * 1000)
    removed: list[dict[str, Any]] = []
    kept: list[tuple[live_files.LiveFile, BitMap64]] = []
    added = updated = dropped = 0
    for path, positions in touched.items():
        relative = by_name.get(Path(path).name)
        if relative is None:
            raise delta.TableMovedError(
                message=f"[DELTA_CONCURRENT_WRITE] {location} moved while this statement read"
                " it; nothing was written: re-read the table and retry"
            )
        entry = files[relative]
        old = entry.deletion_vector
        bitmap = BitMap64(positions)
        if old is not None:
            bitmap |= deletion_vectors.read(location, old)
        removed.append(commits.remove_action(entry, now))
        if len(bitmap) >= _stored_rows(location, entry):
            dropped += old is not None
            continue
        added += old is None
        updated += old is not None
        kept.append((entry, bitmap))
    descriptors = deletion_vectors.write_vectors(location, [b for _, b in kept]) if kept else []
    adds = [_add(entry, vector) for (entry, _), vector in zip(kept, descriptors, strict=True)]
    return Marking(removed, adds, added, updated, dropped)


def _positions_by_file(located: pa.Table) -> dict[str, list[int]]:
    """The positions ``located`` names in each file, grouped by arrays (a MERGE that
    replaces a quarter of a 16M-row table marks millions of rows)."""
    files = located.column(FILE_COLUMN).combine_chunks().dictionary_encode()
    positions = located.column(POSITION_COLUMN).to_numpy()
    codes = files.indices.to_numpy(zero_copy_only=False)
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(len(files.dictionary) + 1))
    return {
        str(path): positions[order[start:end]].tolist()
        for path, start, end in zip(
            files.dictionary.to_pylist(), bounds[:-1], bounds[1:], strict=True
        )
    }


def _stored_rows(location: Path, entry: live_files.LiveFile) -> int:
    """How many rows the data file stores (its vector aside): its statistics say, else its
    Parquet footer."""
    if entry.num_records is not None:
        return entry.num_records
    path = deletion_vectors.local_path(location, entry.path)
    return int(pq.ParquetFile(path).metadata.num_rows)


def _add(entry: live_files.LiveFile, vector: deletion_vectors.Descriptor) -> dict[str, Any]:
    """The file added again with its new vector; its statistics kept, as wide bounds now
    (``numRecords`` counts the rows the file stores, as Delta's protocol says)."""
    add: dict[str, Any] = {
        "path": entry.path,
        "partitionValues": entry.partition_values,
        "size": entry.size,
        "modificationTime": entry.modification_time,
        "dataChange": True,
    }
    if entry.stats:
        stats = json.loads(entry.stats)
        stats["tightBounds"] = False
        add["stats"] = json.dumps(stats)
    add["deletionVector"] = vector.to_json()
    return {"add": add}


# --- DELETE, UPDATE, MERGE by value ---------------------------------------------------


@dataclass(frozen=True)
class RowChanges:
    """A statement's change rows (dml.py's action table): each distinct target row value
    that changes (``__action`` 'delete' or 'update', new values in ``__new_<column>``),
    and rows to insert."""

    changes: pa.Table | None
    inserts: pa.Table | None  # the table's columns


def apply(
    session: SessionProtocol,
    location: Path,
    target: exp.Table,
    read_version: int,
    schema: pa.Schema,
    row_changes: RowChanges,
    operation: str,
) -> None:
    """Apply ``row_changes`` to the table at ``location`` (named ``target``) in one commit
    after ``read_version``: every copy of each changed row value marked removed, updated
    rows' new values and inserted rows written as a new file."""
    options = session.commit_options()
    if delta.already_committed(location, options):
        return
    delta.check_at_version(location, options, read_version)
    matched = _matched_rows(session, location, target, schema, row_changes.changes)
    action = matched.column(ACTION)
    deleted = matched.filter(pc.equal(action, "delete")).select(schema.names)
    updates = matched.filter(pc.equal(action, "update"))
    before = updates.select(schema.names)
    after = updates.select([f"{NEW}{n}" for n in schema.names]).rename_columns(schema.names)
    after = align_to_schema(after, schema.names, schema)
    inserted = (
        align_to_schema(row_changes.inserts, schema.names, schema)
        if row_changes.inserts is not None
        else schema.empty_table()
    )
    if not matched.num_rows and not inserted.num_rows:
        return
    located = matched.select([FILE_COLUMN, POSITION_COLUMN])
    written = Written(deleted, before, after, inserted)
    commit_marked(location, read_version, options, located, written, operation)


@dataclass(frozen=True)
class Written:
    """What a row-level commit does to the table's rows (each in the table's columns): for
    its change data feed and its metrics."""

    deleted: pa.Table
    before: pa.Table  # updated rows' old values
    after: pa.Table  # their new values, in the same order
    inserted: pa.Table


class Marked(NamedTuple):
    """The commit ``commit_marked`` made: its version, its time (milliseconds since the
    epoch, as its ``commitInfo`` says) and its new data file's path relative to the
    table (None when it wrote no new row)."""

    version: int
    timestamp_ms: int
    new_file: str | None


def commit_marked(
    location: Path,
    read_version: int,
    options: delta.CommitOptions,
    located: pa.Table,
    written: Written,
    operation: str,
) -> Marked:
    """Commit after ``read_version``: the rows ``located`` names (``FILE_COLUMN``,
    ``POSITION_COLUMN``: the deleted and the updated rows) marked removed, the updated
    rows' new values and the inserted rows written as one new file, and the change data
    feed's file when the table records it."""
    marking = mark(location, read_version, located)
    new_rows = pa.concat_tables([written.after, written.inserted])
    added = list(marking.added)
    new_file = None
    if new_rows.num_rows:
        added.append(append.data_file(location, new_rows))
        new_file = str(added[-1]["add"]["path"])
    state = delta.table_state(location)
    assert state is not None
    change_files = []
    if state.configuration.get("delta.enableChangeDataFeed", "").lower() == "true":
        parts = [
            (written.deleted, "delete"),
            (written.before, "update_preimage"),
            (written.after, "update_postimage"),
            (written.inserted, "insert"),
        ]
        change_files.append(commits.change_file(location, parts))
    counts = _Counts(
        written.deleted.num_rows,
        written.before.num_rows,
        written.inserted.num_rows,
        len(added),
        len(marking.removed),
    )
    info = _commit_info(operation, read_version, counts, marking, delta.commit_metadata(options))
    commits.put(location, read_version, options, info, [*marking.removed, *added, *change_files])
    if append.checkpoint_due(state, read_version + 1):
        delta.checkpoint(delta.open_table(location))
    return Marked(read_version + 1, int(info["commitInfo"]["timestamp"]), new_file)


def _matched_rows(
    session: SessionProtocol,
    location: Path,
    target: exp.Table,
    schema: pa.Schema,
    changes: pa.Table | None,
) -> pa.Table:
    """Every target row some change row's old values equal (null-safe), with its file,
    position, action and new values."""
    if changes is None or not changes.num_rows:
        return _no_matched_rows(schema)
    view = f"__sparkshim_changes_{uuid.uuid4().hex}"
    new_columns = [f"{NEW}{n}" for n in schema.names]
    if new_columns[0] not in changes.column_names:  # deletions carry no new values
        changes = changes.select([*schema.names, ACTION])
        for name in new_columns:
            changes = changes.append_column(name, pa.nulls(changes.num_rows))
    session.register_temp_view(view, changes.select([*schema.names, ACTION, *new_columns]))
    try:
        scanned = target.copy()
        scanned.set("alias", exp.TableAlias(this=exp.to_identifier("__target")))
        equal = [
            exp.NullSafeEQ(this=exp.column(n, "__target"), expression=exp.column(n, "__changes"))
            for n in schema.names
        ]
        query = (
            exp.select(
                *[exp.alias_(exp.column(n, "__target"), n) for n in schema.names],
                exp.column(FILE_COLUMN, "__target"),
                exp.column(POSITION_COLUMN, "__target"),
                exp.column(ACTION, "__changes"),
                *[exp.column(n, "__changes") for n in new_columns],
            )
            .from_(scanned)
            .join(exp.to_table(view).as_("__changes"), on=exp.and_(*equal))
        )
        return run_query(session, query, files_of=location)
    finally:
        session.drop_temp_view(view)


@dataclass(frozen=True)
class _Counts:
    deleted: int
    updated: int
    inserted: int
    files_added: int
    files_removed: int


def _commit_info(
    operation: str, read_version: int, counts: _Counts, marking: Marking, metadata: dict[str, Any]
) -> dict[str, Any]:
    """The ``commitInfo`` of a DELETE, UPDATE or MERGE, with delta-rs's metric names for
    what both write (so that DESCRIBE HISTORY reads both alike) and Delta's vector
    metrics."""
    metrics: dict[str, int]
    if operation == "MERGE":
        metrics = {
            "num_target_rows_inserted": counts.inserted,
            "num_target_rows_updated": counts.updated,
            "num_target_rows_deleted": counts.deleted,
            "num_target_rows_copied": 0,
            "num_output_rows": counts.inserted + counts.updated,
            "num_target_files_added": counts.files_added,
            "num_target_files_removed": counts.files_removed,
            **marking.metrics("target_"),
        }
    else:
        metrics = {
            "num_added_files": counts.files_added,
            "num_removed_files": counts.files_removed,
            "num_copied_rows": 0,
            **marking.metrics(""),
        }
        metrics["num_updated_rows" if operation == "UPDATE" else "num_deleted_rows"] = (
            counts.updated if operation == "UPDATE" else counts.deleted
        )
    info: dict[str, Any] = {
        "timestamp": int(time.time() * 1000),
        "operation": operation,
        "operationParameters": {},
        "readVersion": read_version,
        "engineInfo": "sparkshim",
        "isBlindAppend": False,
        "operationMetrics": metrics,
    }
    info.update(metadata)
    return {"commitInfo": info}


def _no_matched_rows(schema: pa.Schema) -> pa.Table:
    fields = [
        *schema,
        pa.field(FILE_COLUMN, pa.string()),
        pa.field(POSITION_COLUMN, pa.int64()),
        pa.field(ACTION, pa.string()),
        *[pa.field(f"{NEW}{f.name}", f.type) for f in schema],
    ]
    return pa.schema(fields).empty_table()
