"""What sparkshim's hand-written row-level commits (rewrite.py, merge_on_read.py) share:
the change data file, the conditional put of the commit, and the removal of the files of
a commit that was not made."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from sparkshim import append, delta, live_files
from sparkshim.parquet_stats import statistics_columns


def change_file(location: Path, parts: list[tuple[pa.Table, str]]) -> dict[str, Any]:
    """Write change rows (each part's rows with its ``_change_type``) as one
    ``_change_data`` file of the table; its ``cdc`` action."""
    tables = [
        rows.append_column(
            delta.CHANGE_TYPE_COLUMN, pa.repeat(pa.scalar(kind, pa.string()), rows.num_rows)
        )
        for rows, kind in parts
        if rows.num_rows
    ]
    name = f"_change_data/cdc-00000-{uuid.uuid4()}.c000.snappy.parquet"
    path = location / name
    path.parent.mkdir(exist_ok=True)
    rows = pa.concat_tables(tables)
    pq.write_table(
        rows,
        path,
        compression="snappy",
        write_statistics=statistics_columns(rows),
        use_dictionary=append.dictionary_columns(rows),
    )
    return {
        "cdc": {
            "path": name,
            "partitionValues": {},
            "size": path.stat().st_size,
            "dataChange": False,
        }
    }


def remove_action(file: live_files.LiveFile, now: int) -> dict[str, Any]:
    """The ``remove`` action of a data file a row-level statement changed; with its
    deletion vector, if it has one (the logical file removed is the file and its vector)."""
    remove: dict[str, Any] = {
        "path": file.path,
        "dataChange": True,
        "deletionTimestamp": now,
        "extendedFileMetadata": True,
        "partitionValues": file.partition_values,
        "size": file.size,
    }
    if file.deletion_vector is not None:
        remove["deletionVector"] = file.deletion_vector.to_json()
    return {"remove": remove}


def put(
    location: Path,
    read_version: int,
    options: delta.CommitOptions,
    info: dict[str, Any],
    actions: list[dict[str, Any]],
) -> None:
    """Put the commit (``info``, the idempotent write's ``txn``, ``actions``) at the version
    after ``read_version``; when another commit took it, remove this one's new files and
    raise ``delta.TableMovedError``: its rows were computed from a version that is no
    longer the latest."""
    now = info["commitInfo"]["timestamp"]
    entries = [info, *delta.transaction_actions(options, now), *actions]
    if not delta.put_if_absent(location / "_delta_log", read_version + 1, entries):
        discard(location, actions)
        raise delta.TableMovedError(
            message=f"[DELTA_CONCURRENT_WRITE] another commit took version {read_version + 1}"
            f" of {location} while this statement was being committed; nothing was written:"
            " re-read the table and retry"
        )


def discard(location: Path, actions: list[dict[str, Any]]) -> None:
    """Remove the new data and change files of a commit that was not made (a file added
    again with a new deletion vector is an old one; a vector file no commit names is
    VACUUM's to remove)."""
    for action in actions:
        for kind in ("add", "cdc"):
            if kind in action and "deletionVector" not in action[kind]:
                (location / action[kind]["path"]).unlink(missing_ok=True)
