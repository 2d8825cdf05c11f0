"""The newest commits of a Delta log, read from its JSON files without delta-rs.

Bringing a delta-rs table up to date (``update_incremental``) replays the log since the
last checkpoint: 5 to 40 ms, growing with the commits since it, and a statement that only
wants the newest commit or two (``DESCRIBE HISTORY … LIMIT n``, the version a conditional
write read, the protocol and schema an append checks) paid it each time. Commit files are
numbered without gaps and never change once written, so these come from a few stats and
small reads:

* ``latest_version``: stat forward from the last version seen (or the last checkpoint);
* ``history``: the ``commitInfo`` of the newest commit files, as delta-rs reports it;
* ``TableState``: the protocol, metadata and schema at the latest version, carried
  forward from a state delta-rs read by replaying only the commits after it;
* ``change_files``: the files holding a run of commits' change data feed: the ``cdc``
  files a commit wrote, or the data files an append-only commit added.

Anything the JSON files cannot answer (a commit cleaned up from the log) gives None, and the
caller asks delta-rs.
"""

from __future__ import annotations

import json
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from deltalake import DeltaTable

_lock = threading.Lock()
# The highest version seen per table: where the next stat-forward starts. Only a hint;
# it is checked against the log before use (a recreated table starts again at 0).
_seen_versions: dict[str, int] = {}
# The last TableState built per table.
_states: dict[str, TableState] = {}


def commit_path(location: Path, version: int) -> Path:
    return location / "_delta_log" / f"{version:020d}.json"


def latest_version(location: Path) -> int | None:
    """The table's latest version, or None when there is no log."""
    start = _seen_versions.get(str(location))
    if start is None or not commit_path(location, start).exists():
        start = _checkpoint_version(location)
    if start is None:
        if not commit_path(location, 0).exists():
            return None
        start = 0
    version = start
    while commit_path(location, version + 1).exists():
        version += 1
    with _lock:
        _seen_versions[str(location)] = version
    return version


def _checkpoint_version(location: Path) -> int | None:
    """The version of the last checkpoint, from ``_last_checkpoint``; None without one."""
    try:
        text = (location / "_delta_log" / "_last_checkpoint").read_text()
        return int(json.loads(text)["version"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def read_commit(location: Path, version: int) -> list[dict[str, Any]] | None:
    """The actions of commit ``version``, or None when its file is gone (cleaned up).

    A refresh reads its tables' newest commits several times (their state, history,
    change files, live files), and parsing the JSON costs several times reading it: the
    actions are kept under the file's path with its text, and given again while the file
    reads the same (a recreated table's log has other files under the same names). The
    actions returned are shared: callers must not change them."""
    path = commit_path(location, version)
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None
    key = str(path)
    with _lock:
        kept = _commits.get(key)
        if kept is not None and kept[0] == text:
            _commits.move_to_end(key)
            return kept[1]
    actions = [json.loads(line) for line in text.splitlines() if line.strip()]
    if len(text) > _KEPT_COMMIT_TEXT:
        return actions  # a large commit (thousands of files added) is read again
    global _kept_text
    with _lock:
        previous = _commits.pop(key, None)
        if previous is not None:
            _kept_text -= len(previous[0])
        _commits[key] = (text, actions)
        _kept_text += len(text)
        while len(_commits) > _KEPT_COMMITS or _kept_text > _KEPT_COMMIT_TEXT:
            _, (dropped, _) = _commits.popitem(last=False)
            _kept_text -= len(dropped)
    return actions


# How many commit files' actions are kept (see ``read_commit``), and at most how much of
# their text in all: parsed actions take several times their text's memory, so a table
# whose commits add thousands of files with statistics must not fill memory with them.
_KEPT_COMMITS = 256
_KEPT_COMMIT_TEXT = 8 * 1024 * 1024
_commits: OrderedDict[str, tuple[str, list[dict[str, Any]]]] = OrderedDict()
_kept_text = 0  # the length of the texts kept in ``_commits``


def history(location: Path, limit: int) -> list[dict[str, Any]] | None:
    """The ``limit`` newest commits, newest first, each its ``commitInfo`` plus ``version``
    (as delta-rs's ``history`` reports them); fewer when older commit files were cleaned
    up. None when there is no log."""
    latest = latest_version(location)
    if latest is None:
        return None
    commits: list[dict[str, Any]] = []
    for version in range(latest, max(latest - limit, -1), -1):
        actions = read_commit(location, version)
        if actions is None:
            break
        info = next((a["commitInfo"] for a in actions if "commitInfo" in a), None)
        if info is None:  # a writer that records none: the file's time stands in
            mtime = commit_path(location, version).stat().st_mtime
            info = {"timestamp": int(mtime * 1000)}
        commits.append({**info, "version": version})
    return commits


@dataclass(frozen=True)
class TableState:
    """What a writer checks before adding files: the protocol and the ``metaData`` action
    (configuration, partition columns, schema as Delta JSON) at ``version``, and the
    identity of that version's commit file (a recreated table has other files)."""

    version: int
    commit_identity: tuple[int, int] | None
    min_writer_version: int
    min_reader_version: int
    writer_features: frozenset[str]
    reader_features: frozenset[str]
    configuration: dict[str, str]
    partition_columns: tuple[str, ...]
    schema_json: str

    def shape(self) -> tuple[object, ...]:
        """What an append must still find when it commits: the schema and the protocol."""
        return (
            self.schema_json,
            self.min_writer_version,
            self.writer_features,
            self.reader_features,
        )

    @classmethod
    def of(cls, location: Path, table: DeltaTable) -> TableState:
        protocol, metadata = table.protocol(), table.metadata()
        return cls(
            version=table.version(),
            commit_identity=file_identity(commit_path(location, table.version())),
            min_writer_version=protocol.min_writer_version,
            min_reader_version=protocol.min_reader_version,
            writer_features=frozenset(protocol.writer_features or ()),
            reader_features=frozenset(protocol.reader_features or ()),
            configuration=dict(metadata.configuration),
            partition_columns=tuple(metadata.partition_columns),
            schema_json=table.schema().to_json(),
        )

    def after(self, location: Path, version: int, actions: list[dict[str, Any]]) -> TableState:
        """This state moved past commit ``version`` (its ``actions``)."""
        state = replace(
            self, version=version, commit_identity=file_identity(commit_path(location, version))
        )
        for action in actions:
            if "protocol" in action:
                protocol = action["protocol"]
                state = replace(
                    state,
                    min_writer_version=int(protocol["minWriterVersion"]),
                    min_reader_version=int(protocol["minReaderVersion"]),
                    writer_features=frozenset(protocol.get("writerFeatures") or ()),
                    reader_features=frozenset(protocol.get("readerFeatures") or ()),
                )
            if "metaData" in action:
                metadata = action["metaData"]
                state = replace(
                    state,
                    configuration=dict(metadata.get("configuration") or {}),
                    partition_columns=tuple(metadata.get("partitionColumns") or ()),
                    schema_json=metadata["schemaString"],
                )
        return state


def current_state(location: Path, opened: DeltaTable | None = None) -> TableState | None:
    """The table's state at its latest version, carried forward from ``opened`` (a
    delta-rs table just read) or else from the last state built here. None when there is
    neither, when the kept state belongs to a table since dropped and recreated, or when
    a commit after it is no longer in the log: then the caller opens the table."""
    latest = latest_version(location)
    if latest is None:
        return None
    if opened is not None:
        state: TableState | None = TableState.of(location, opened)
    else:
        state = _states.get(str(location))
    if state is None or state.version > latest:
        return None
    identity = state.commit_identity
    if identity is None or identity != file_identity(commit_path(location, state.version)):
        return None
    for version in range(state.version + 1, latest + 1):
        actions = read_commit(location, version)
        if actions is None:
            return None
        state = state.after(location, version, actions)
    with _lock:
        _states[str(location)] = state
    return state


def file_identity(path: Path) -> tuple[int, int] | None:
    """A file's inode and modification time (a file rewritten or recreated has others);
    None when it is not there."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return (found.st_ino, found.st_mtime_ns)


# How a change file's rows changed: ``CDC``, each row says (its ``_change_type``);
# ``INSERT`` or ``DELETE``, all its rows (a data file a commit added, or removed).
CDC, INSERT, DELETE = "cdc", "insert", "delete"


@dataclass(frozen=True)
class ChangeFile:
    """A file holding rows of a commit's change data feed: a ``cdc`` file (its rows carry
    their ``_change_type``), a data file a commit without ``cdc`` files added (all
    inserts), or one it removed (all deletes, but for the rows its deletion vector had
    already removed)."""

    path: str  # relative to the table, as in the log
    version: int
    timestamp_ms: int  # the commit's
    kind: str  # CDC, INSERT or DELETE
    # A removed file's deletion vector (the log's descriptor), as the ``remove`` says.
    deletion_vector: dict[str, Any] | None = None
    # Its partition's values, as the log spells them (by physical name under column
    # mapping; None for a NULL): a partitioned table's files do not hold them.
    partition_values: dict[str, str | None] = field(default_factory=dict)


def change_files(location: Path, start: int, end: int) -> list[ChangeFile] | None:
    """The files holding the change data feed of commits ``start`` to ``end``: as Delta's
    protocol says, a commit that wrote ``cdc`` files has its changes in them (its ``add``
    and ``remove`` actions are ignored); any other commit's rows are those of the whole
    files it added (inserts) and removed (deletes); a ``metaData`` or ``protocol`` action
    is no change of rows. None when a commit changes a file's deletion vector without
    ``cdc`` files or adds a file with one, or when a commit file is gone."""
    files: list[ChangeFile] = []
    for version in range(start, end + 1):
        actions = read_commit(location, version)
        if actions is None:
            return None
        info = next((a["commitInfo"] for a in actions if "commitInfo" in a), None)
        if info is None or "timestamp" not in info:
            return None  # delta-rs would take the file's time: leave it to delta-rs
        stamp = int(info["timestamp"])
        written = _files_written(actions)
        if written is None:
            return None
        files.extend(
            ChangeFile(
                file["path"],
                version,
                stamp,
                kind,
                file.get("deletionVector") if kind == DELETE else None,
                dict(file.get("partitionValues") or {}),
            )
            for kind, file in written
        )
    return files


def removed_vectors_without_cdc(location: Path, start: int, end: int) -> int | None:
    """The first commit of ``start`` to ``end`` that wrote no ``cdc`` file but removes a
    file with a deletion vector without adding it back (an overwrite): its deletes are
    that file less its vector's rows, where delta-rs's ``load_cdf`` gives the vector's
    rows. (A file added back with another vector, rows deleted by vector, delta-rs reads
    right.) None when there is none, or a commit file is gone (then delta-rs says so)."""
    for version in range(start, end + 1):
        actions = read_commit(location, version) or []
        if any("cdc" in action for action in actions):
            continue
        added = {action["add"]["path"] for action in actions if "add" in action}
        for action in actions:
            remove = action.get("remove")
            if (
                remove is not None
                and remove.get("dataChange", True)
                and remove.get("deletionVector")
                and remove["path"] not in added
            ):
                return version
    return None


def _files_written(actions: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]] | None:
    """The change files of one commit's ``actions`` (see ``change_files``): each one's
    kind and its action (``cdc``, ``add`` or ``remove``). Files added or removed with
    ``dataChange`` false (a compaction rearranging rows) change no row."""
    cdc = [a["cdc"] for a in actions if "cdc" in a]
    if cdc:
        return [(CDC, c) for c in cdc]
    changed: list[tuple[str, dict[str, Any]]] = []
    for action in actions:
        for kind, name in ((INSERT, "add"), (DELETE, "remove")):
            file = action.get(name)
            if file is None or not file.get("dataChange", True):
                continue
            if kind == INSERT and file.get("deletionVector"):
                return None
            changed.append((kind, file))
    paths = [file["path"] for _, file in changed]
    if len(set(paths)) < len(paths):
        return None  # a file's vector replaced (rows deleted) without cdc files: delta-rs
    return changed
