"""Small appends, committed here rather than by delta-rs's writer.

A delta-rs write costs about 17 ms whatever its size (most of it in the commit), which is
most of the time of a one-row ``INSERT … VALUES`` and of a refresh that appends a few
thousand rows. An append to a plain table needs only a Parquet file and a commit of two
actions, ``commitInfo`` and ``add``, put into the log if no other commit took its version
(the put-if-absent delta-rs itself uses on a local file system): about 2 ms.

Only plain tables take this path: no partitions, no column mapping, no CHECK constraints,
generated or identity columns, and no writer feature that asks more of a commit. Any other
table, and any large append, goes through delta-rs, which checks and writes all of that.
"""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq

from sparkshim.parquet_stats import statistics_columns

if TYPE_CHECKING:
    from sparkshim.log import TableState

# Above this, delta-rs writes (it splits large appends into files of a target size and
# records column statistics).
MAX_ROWS = 100_000
# Writer features an append needs nothing more for: its commit is an add action. (A file
# added with no deletion vector holds all its rows; a commit that removes a file with a
# vector names the vector too, as rewrite.py and compact.py do. Invariants live in column
# metadata, checked below; delta-rs lists ``invariants`` and ``variantType`` on every
# table it creates with table features, and a table with no variant column uses none.)
_PLAIN_WRITER_FEATURES = {
    "appendOnly",
    "changeDataFeed",
    "timestampNtz",
    "deletionVectors",
    "invariants",
    "variantType",
}
# Legacy writer versions: 2 adds invariants, 3 CHECK constraints, 4 generated columns and the
# change data feed; each is checked for below. 5 and above (column mapping, identity columns,
# table features) are looked at through their writer features.
_LEGACY_WRITER_VERSIONS = 4
# Column metadata that makes a write do more than store the values.
_ACTIVE_COLUMN_METADATA = ("delta.generationExpression", "delta.invariants", "delta.identity")
# delta-rs's default for ``delta.checkpointInterval`` (Delta on Spark's is 10).
_DEFAULT_CHECKPOINT_INTERVAL = 100


def is_plain(table: TableState, data: pa.Table) -> bool:
    """Whether appending ``data`` to the table (at ``table``) is only adding a file."""
    if data.num_rows > MAX_ROWS or data.num_rows == 0:
        return False
    return is_plain_table(table) and fits(table, data)


def is_plain_table(table: TableState) -> bool:
    """Whether adding a file of rows is all a write to the table needs: no partitions,
    column mapping, CHECK constraints, generated, identity or invariant columns, and no
    writer feature that asks more of a commit."""
    features = table.writer_features
    if table.min_writer_version > _LEGACY_WRITER_VERSIONS and not (
        features and features <= _PLAIN_WRITER_FEATURES
    ):
        return False
    configuration = table.configuration
    if table.partition_columns or any(k.startswith("delta.constraints.") for k in configuration):
        return False
    if configuration.get("delta.columnMapping.mode", "none") != "none":
        return False
    if '"variant"' in table.schema_json:  # a variant column: delta-rs writes it
        return False
    fields = json.loads(table.schema_json)["fields"]
    return not any(
        key.startswith(_ACTIVE_COLUMN_METADATA)
        for field in fields
        for key in field.get("metadata", {})
    )


def marks_removed_rows(table: TableState) -> bool:
    """Whether DELETE, UPDATE and MERGE on the table mark the rows they remove in deletion
    vectors (merge_on_read.py): the table asks for it (``delta.enableDeletionVectors``),
    its protocol has the feature, and sparkshim commits its writes (a plain table)."""
    asked = table.configuration.get("delta.enableDeletionVectors", "").lower() == "true"
    feature = "deletionVectors"
    supported = feature in table.reader_features and feature in (table.writer_features or ())
    return asked and supported and is_plain_table(table)


def fits(table: TableState, data: pa.Table) -> bool:
    """Whether ``data`` (in the table's column order) has no NULL in a NOT NULL column
    (delta-rs refuses it, with its own message)."""
    fields = json.loads(table.schema_json)["fields"]
    return not any(
        not field["nullable"] and column.null_count
        for field, column in zip(fields, data.columns, strict=True)
    )


def data_file(location: Path, data: pa.Table) -> dict[str, Any]:
    """Write ``data`` as a new Parquet file of the table; its ``add`` action."""
    name = f"part-00000-{uuid.uuid4()}-c000.snappy.parquet"
    path = location / name
    pq.write_table(
        data,
        path,
        compression="snappy",
        write_statistics=statistics_columns(data),
        use_dictionary=dictionary_columns(data),
    )
    stats = {
        "numRecords": data.num_rows,
        "nullCount": {
            column_name: column.null_count
            for column_name, column in zip(data.column_names, data.columns, strict=True)
            if not pa.types.is_nested(column.type)
        },
    }
    return add_action(name, path, stats)


def dictionary_columns(data: pa.Table) -> list[str]:
    """The columns of a small file written here that are dictionary-encoded: the strings
    and byte strings, where a repeated value is worth keeping once. A number is not: for a
    few thousand rows the dictionary costs more to build than it saves (4,000 rows of
    four columns: 2.1 ms and 50 KB with every column encoded, 1.2 ms and 38 KB so)."""
    return [
        field.name
        for field in data.schema
        if pa.types.is_string(field.type)
        or pa.types.is_large_string(field.type)
        or pa.types.is_binary(field.type)
        or pa.types.is_large_binary(field.type)
    ]


def add_action(name: str, path: Path, stats: dict[str, Any]) -> dict[str, Any]:
    """The ``add`` action of the new data file ``name`` (at ``path``) with its ``stats``."""
    return {
        "add": {
            "path": name,
            "partitionValues": {},
            "size": path.stat().st_size,
            "modificationTime": int(time.time() * 1000),
            "dataChange": True,
            "stats": json.dumps(stats),
        }
    }


def commit_info(rows: int, metadata: dict[str, Any]) -> dict[str, Any]:
    """The ``commitInfo`` of an append of ``rows`` rows, with delta-rs' metric names (as
    its own writes record them, so that DESCRIBE HISTORY reads both alike)."""
    info: dict[str, Any] = {
        "timestamp": int(time.time() * 1000),
        "operation": "WRITE",
        "operationParameters": {"mode": "Append"},
        "engineInfo": "sparkshim",
        "isBlindAppend": True,
        "operationMetrics": {
            "num_added_files": 1,
            "num_removed_files": 0,
            "num_partitions": 0,
            "num_added_rows": rows,
        },
    }
    info.update(metadata)
    return {"commitInfo": info}


def checkpoint_due(table: TableState, version: int) -> bool:
    """Whether commit ``version`` is one after which a checkpoint is written (without one,
    opening the table replays ever more commit files)."""
    configured = table.configuration.get("delta.checkpointInterval")
    interval = int(configured) if configured else _DEFAULT_CHECKPOINT_INTERVAL
    return version > 0 and version % interval == 0
