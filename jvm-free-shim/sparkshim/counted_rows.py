"""A signed multiset of rows applied to a Delta table in one commit, with no statement to
parse: the embedded engine's write of a dynamic table's incremental change (a change
netted per row value, a GROUP BY's affected groups as old rows out and new rows in).

Each row of the change is a row value with how many copies of it the table gains (a
count above zero) or loses (below zero). The copies lost are found through the table's
row index (row_index.py) and marked in their files' deletion vectors; the copies gained
are written as one new data file; the change data feed records exactly those rows as
deleted and inserted. That is the commit a MERGE would make, without what a MERGE needs
first: a MERGE removes every copy of a value it matches, so the copies the table holds
must be counted (a join of the change with the table) and written back, and its SQL
parsed and translated.

It applies to tables whose row-level writes mark removed rows
(``append.marks_removed_rows``); elsewhere ``apply_view`` returns None and writes
nothing, and the caller writes the change with a MERGE.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
from sqlglot import exp

from sparkshim import append, delta, row_index
from sparkshim.errors import AnalysisException
from sparkshim.merge_on_read import Written, commit_marked
from sparkshim.query import (
    FILE_COLUMN,
    POSITION_COLUMN,
    PROBE_COLUMN,
    hashable_as_written,
    locate,
    row_hashes,
)
from sparkshim.translate import ShimSpark

if TYPE_CHECKING:
    from pathlib import Path

    from sparkshim.session import ShimSession


class RowsNotHeldError(AnalysisException):
    """The table holds fewer copies of a row value than the change removes: it is not the
    table the change was computed against. Nothing was written."""


@dataclass(frozen=True)
class Applied:
    """What the write did: rows inserted and deleted, and whether it committed (a change
    that writes nothing, or an idempotent write already applied, commits nothing)."""

    inserted: int
    deleted: int
    committed: bool
    # The version it committed and when (UTC), where it knows (a blind append leaves
    # them to the history).
    version: int | None = None
    committed_at: datetime | None = None


def apply_view(
    session: ShimSession, table_name: str, view_name: str, count_column: str
) -> Applied | None:
    """Apply the rows of the temporary view ``view_name`` (the table's columns by name,
    each row value once, and ``count_column``: the copies gained or lost) to the table
    ``table_name`` in one commit, made with the session's commit settings (user metadata,
    expected version). None where it does not apply (nothing written): the view is not
    one that holds its rows, the table does not mark removed rows, or the view's columns
    do not convert exactly to the table's types."""
    rows = session.temp_view(view_name)
    if not isinstance(rows, pa.Table):
        return None
    return apply(session, table_name, rows, count_column)


def apply(
    session: ShimSession, table_name: str, rows: pa.Table, count_column: str
) -> Applied | None:
    """``apply_view`` of rows given as an Arrow table."""
    target = exp.to_table(table_name, dialect=ShimSpark)
    entry = session.catalog_store.lookup(session.qualify(target))
    if entry is None or entry.location is None:
        return None
    location = entry.location
    state = delta.table_state(location)
    if state is None or not append.marks_removed_rows(state):
        return None
    options = session.commit_options()
    if delta.already_committed(location, options):
        return Applied(0, 0, committed=False)
    read_version = state.version
    delta.check_at_version(location, options, read_version)
    schema = delta.arrow_schema_of(state.schema_json)
    values = _in_table_types(rows, schema)
    if values is None:
        return None
    counts = rows.column(count_column).to_numpy(zero_copy_only=False).astype(np.int64)
    gained = np.nonzero(counts > 0)[0]
    lost = np.nonzero(counts < 0)[0]
    copies_gained = np.repeat(gained, counts[gained])
    inserted = values.take(pa.array(copies_gained, pa.int64()))
    if not lost.size:  # only copies gained: a blind append, as an INSERT commits it
        if not inserted.num_rows:
            return Applied(0, 0, committed=False)
        delta.write(location, inserted, overwrite=False, options=options)
        return Applied(inserted.num_rows, 0, committed=True)
    # Every value's hashes in one query: the lost ones are looked up, the gained ones
    # index the new file.
    hashes = row_hashes(session.cursor(), values, schema.names)
    located = _copies_lost(session, location, read_version, schema, hashes, lost, -counts[lost])
    deleted = values.take(pa.array(lost[located.column(PROBE_COLUMN).to_numpy()], pa.int64()))
    if not inserted.num_rows and not deleted.num_rows:
        return Applied(0, 0, committed=False)
    written = Written(deleted, schema.empty_table(), schema.empty_table(), inserted)
    marked = commit_marked(location, read_version, options, located, written, "MERGE")
    if marked.new_file is not None and deleted.num_rows and hashable_as_written(schema):
        # A table whose changes remove rows will be looked up again: its new file is
        # indexed now from the hashes in hand, not by reading the file back at the next
        # lookup.
        index = row_index.index_path(location, marked.new_file, schema)
        row_index.write(index, hashes.take(copies_gained))
    return Applied(
        inserted.num_rows,
        deleted.num_rows,
        True,
        marked.version,
        delta.commit_time(marked.timestamp_ms),
    )


def _in_table_types(rows: pa.Table, schema: pa.Schema) -> pa.Table | None:
    """The table's columns of ``rows`` (by name, in any case) in the table's types; None
    when a column is missing, is a MAP (not comparable) or does not convert exactly."""
    by_name = {name.lower(): name for name in rows.column_names}
    columns = []
    for field in schema:
        name = by_name.get(field.name.lower())
        if name is None or pa.types.is_map(field.type):
            return None
        column = rows.column(name)
        if column.type != field.type:
            try:
                column = column.cast(field.type, safe=True)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                return None
        columns.append(column)
    return pa.Table.from_arrays(columns, schema=schema)


def _copies_lost(
    session: ShimSession,
    location: Path,
    version: int,
    schema: pa.Schema,
    hashes: row_index.RowHashes,
    lost: np.ndarray[Any, Any],
    wanted: np.ndarray[Any, Any],
) -> pa.Table:
    """For each lost row value (the change's values at ``lost``; ``hashes``: the row
    hashes of all of them), the first ``wanted`` of its live copies (``PROBE_COLUMN``: its
    number among the lost, ``FILE_COLUMN``, ``POSITION_COLUMN``); ``RowsNotHeldError``
    when the table holds fewer."""
    found = locate(session.cursor(), location, version, schema, hashes.take(lost))
    probe = found.column(PROBE_COLUMN).to_numpy()
    order = np.argsort(probe, kind="stable")
    sorted_probe = probe[order]
    starts = np.searchsorted(sorted_probe, np.arange(len(lost)))
    held = np.bincount(sorted_probe, minlength=len(lost))
    if np.any(held < wanted):
        short = int(np.argmax(held < wanted))
        raise RowsNotHeldError(
            message=f"[DT_ROWS_NOT_HELD] the change removes {int(wanted[short])} copies of a"
            f" row the table holds {int(held[short])} of; nothing was written: refresh the"
            " table in full"
        )
    rank = np.arange(len(order)) - starts[sorted_probe]
    kept = order[rank < wanted[sorted_probe]]
    kept.sort()  # file by file, as located
    chosen = found.take(pa.array(kept, pa.int64()))
    if _repeats_a_row(chosen):
        raise AnalysisException(
            message="[DT_DUPLICATE_ROW_VALUES] a counted change must hold each row value once"
        )
    return chosen


def _repeats_a_row(located: pa.Table) -> bool:
    """Whether two located copies are the same row of the same file (two change rows of
    one value would otherwise mark one copy twice and remove too few)."""
    files = located.column(FILE_COLUMN).combine_chunks().dictionary_encode()
    codes = files.indices.to_numpy(zero_copy_only=False).astype(np.uint64)
    positions = located.column(POSITION_COLUMN).to_numpy().astype(np.uint64)
    keys = (codes << np.uint64(32)) | positions
    return bool(np.unique(keys).size != keys.size)
