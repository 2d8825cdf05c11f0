"""The live data files of a Delta table at a version, replayed from its log by sparkshim.

delta-rs lists a table's files (``get_add_actions``), but bringing its table up to date
after another writer's commit costs milliseconds (it lists the log), and it does not give
the files' deletion vectors. A refresh's row-level commit needs both for the one table it
writes, every time. So this module replays the log itself: the newest checkpoint at or
before the version (classic, multi-part or V2 with its sidecars), then the JSON commits
after it. Each live file keeps what a commit that marks rows in it must carry forward:
its size, modification time, partition values, statistics and deletion vector.

A logical file is its path *and* its vector: a DELETE that adds a vector to a file commits
an ``add`` of the path with the new vector and a ``remove`` of the path with the old one,
in either order.

Kept per table: a later version is carried forward from the newest one replayed by
reading only the commits after it (commit files never change); an older one, or one of a
table since recreated (its commit file at the kept version is another file), is replayed
from its checkpoint.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from sparkshim import log
from sparkshim.deletion_vectors import Descriptor, local_path
from sparkshim.errors import AnalysisException


@dataclass(frozen=True)
class LiveFile:
    """One data file of a snapshot, as its ``add`` action describes it."""

    path: str  # as the log spells it (URL-encoded, relative to the table)
    size: int
    modification_time: int  # milliseconds since the epoch
    stats: str | None  # the action's statistics (JSON text), when it has them
    deletion_vector: Descriptor | None
    partition_values: dict[str, str | None] = field(default_factory=dict)
    # The rows the file stores (its vector's among them), as its statistics say; read
    # from them once, when the action is (row counts and compaction checks sum it over
    # every live file, at every commit).
    num_records: int | None = None

    @classmethod
    def from_action(cls, add: dict[str, Any]) -> LiveFile:
        vector = add.get("deletionVector")
        stats = add.get("stats")
        return cls(
            path=add["path"],
            size=int(add.get("size") or 0),
            modification_time=int(add.get("modificationTime") or 0),
            stats=stats,
            deletion_vector=Descriptor.from_json(vector) if vector else None,
            partition_values=_partition_values(add.get("partitionValues")),
            num_records=_records(stats),
        )

    @property
    def vector_id(self) -> str | None:
        return self.deletion_vector.unique_id if self.deletion_vector else None


def _records(stats: str | None) -> int | None:
    """``numRecords`` of a file's statistics (JSON text), when they have it."""
    if not stats:
        return None
    records = json.loads(stats).get("numRecords")
    return records if isinstance(records, int) and not isinstance(records, bool) else None


def at(location: Path, version: int) -> dict[str, LiveFile]:
    """The live files of the table at ``location`` at ``version``, by path."""
    key = str(location)
    with _lock:
        kept = _replayed.get(key)
    if kept is not None:
        kept_version, identity, files = kept
        current = log.file_identity(log.commit_path(location, kept_version))
        trusted = identity is not None and identity == current
        if trusted and kept_version == version:
            return dict(files)
        if trusted and kept_version < version:
            advanced = _advance(location, dict(files), kept_version + 1, version)
            if advanced is not None:
                _keep(location, version, advanced)
                return dict(advanced)
    files = _replay(location, version)
    _keep(location, version, files)
    return dict(files)


def vectors(location: Path, version: int) -> dict[str, Descriptor]:
    """The deletion vector of each data file of the table at ``version`` that has one,
    by the file's path as the log spells it."""
    return {
        path: file.deletion_vector
        for path, file in at(location, version).items()
        if file.deletion_vector is not None
    }


def stored_rows(files: Iterable[LiveFile]) -> int | None:
    """The rows ``files`` store (their ``numRecords``, removed rows included); None when a
    file has no statistics."""
    total = 0
    for file in files:
        records = file.num_records
        if records is None:
            return None
        total += records
    return total


def removed_rows(files: Iterable[LiveFile]) -> int:
    """The rows the deletion vectors of ``files`` remove."""
    return sum(file.deletion_vector.cardinality for file in files if file.deletion_vector)


_lock = threading.Lock()
_replayed: dict[str, tuple[int, tuple[int, int] | None, dict[str, LiveFile]]] = {}


def _keep(location: Path, version: int, files: dict[str, LiveFile]) -> None:
    identity = log.file_identity(log.commit_path(location, version))
    with _lock:
        newest = _replayed.get(str(location))
        if newest is None or newest[0] <= version:
            _replayed[str(location)] = (version, identity, files)


def _replay(location: Path, version: int) -> dict[str, LiveFile]:
    checkpoint = _checkpoint_at_or_before(location, version)
    files: dict[str, LiveFile] = {}
    start = 0
    if checkpoint is not None:
        checkpoint_version, parts = checkpoint
        for part in parts:
            for live in _checkpoint_adds(location, part):
                files[live.path] = live
        start = checkpoint_version + 1
    replayed = _advance(location, files, start, version)
    if replayed is None:
        raise AnalysisException(
            message=f"[DELTA_VERSIONS_NOT_CONTIGUOUS] the transaction log of {location} lacks"
            f" a commit between versions {start} and {version} and no checkpoint covers it"
        )
    return replayed


def _advance(
    location: Path, files: dict[str, LiveFile], start: int, end: int
) -> dict[str, LiveFile] | None:
    """``files`` moved through commits ``start`` to ``end`` (changed in place); None when
    a commit file is gone."""
    for version in range(start, end + 1):
        actions = log.read_commit(location, version)
        if actions is None:
            return None
        added = {
            action["add"]["path"]: LiveFile.from_action(action["add"])
            for action in actions
            if "add" in action
        }
        for action in actions:
            if "remove" in action:
                remove = action["remove"]
                path = remove["path"]
                vector = remove.get("deletionVector")
                removed_id = Descriptor.from_json(vector).unique_id if vector else None
                current = files.get(path)
                if current is not None and current.vector_id == removed_id:
                    del files[path]
        files.update(added)
    return files


_CLASSIC = re.compile(r"^(\d{20})\.checkpoint\.parquet$")
_MULTI_PART = re.compile(r"^(\d{20})\.checkpoint\.(\d{10})\.(\d{10})\.parquet$")
_V2 = re.compile(r"^(\d{20})\.checkpoint\.[0-9a-fA-F-]{36}\.(parquet|json)$")


def _checkpoint_at_or_before(location: Path, version: int) -> tuple[int, list[Path]] | None:
    """The newest complete checkpoint at or before ``version``: its version and files."""
    folder = location / "_delta_log"
    found: dict[int, dict[str, list[Path]]] = {}
    for entry in folder.iterdir():
        name = entry.name
        for kind, pattern in (("classic", _CLASSIC), ("multi", _MULTI_PART), ("v2", _V2)):
            match = pattern.match(name)
            if match and int(match[1]) <= version:
                found.setdefault(int(match[1]), {}).setdefault(kind, []).append(entry)
    for checkpoint_version in sorted(found, reverse=True):
        kinds = found[checkpoint_version]
        if "v2" in kinds:
            return checkpoint_version, [sorted(kinds["v2"])[0]]
        if "classic" in kinds:
            return checkpoint_version, kinds["classic"]
        parts = sorted(kinds.get("multi", []))
        first = _MULTI_PART.match(parts[0].name) if parts else None
        if first is not None and len(parts) == int(first[3]):
            return checkpoint_version, parts
    return None


def _checkpoint_adds(location: Path, path: Path) -> list[LiveFile]:
    """The live files a checkpoint file lists (with the files of its sidecars, for a V2
    checkpoint)."""
    if path.suffix == ".json":
        actions = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        adds = [LiveFile.from_action(a["add"]) for a in actions if "add" in a]
        sidecars = [a["sidecar"]["path"] for a in actions if "sidecar" in a]
    else:
        adds = _parquet_adds(path)
        sidecars = _parquet_sidecars(path)
    for sidecar in sidecars:
        sidecar_path = Path(local_path(location / "_delta_log" / "_sidecars", sidecar))
        adds.extend(_parquet_adds(sidecar_path))
    return adds


# The fields of a checkpoint's ``add`` column read (those it has).
_ADD_FIELDS = ("path", "size", "modificationTime", "stats", "partitionValues", "deletionVector")


def _parquet_adds(path: Path) -> list[LiveFile]:
    schema = pq.read_schema(path)
    if "add" not in schema.names:
        return []
    add_type = schema.field("add").type
    present = [name for name in _ADD_FIELDS if add_type.get_field_index(name) >= 0]
    rows = pq.read_table(path, columns=[f"add.{name}" for name in present])
    columns = dict(zip(present, (column.to_pylist() for column in rows.columns), strict=True))
    return [
        LiveFile.from_action({name: columns[name][row] for name in present})
        for row, file_path in enumerate(columns["path"])
        if file_path is not None
    ]


def _parquet_sidecars(path: Path) -> list[str]:
    if "sidecar" not in pq.read_schema(path).names:
        return []
    rows = pq.read_table(path, columns=["sidecar.path"]).column(0).to_pylist()
    return [p for p in rows if p is not None]


def _partition_values(values: Any) -> dict[str, str | None]:
    """A file's partition values: a JSON object in a commit, a list of key-value pairs
    (an Arrow map) in a checkpoint."""
    return dict(values) if values else {}
