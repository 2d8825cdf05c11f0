"""What a refresh reads, records and reports: the watermark a refresh commits with its rows,
the sources it pinned, and its result. Every strategy reads and writes these; nothing here
runs a statement.

>>> text = Watermark("r1", "2026-01-01T00:00:00", {"db.t": 3}, "h", Action.FULL).to_json()
>>> Watermark.from_json(text).sources
{'db.t': 3}
>>> Watermark.from_json('{"not": "ours"}') is None
True
"""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from dyntables.catalog import Definition
from dyntables.formats import Commit
from dyntables.history import new_id

# The key that marks a commit's JSON payload as a refresh watermark.
WATERMARK_MARKER = "dyntables"


class Trigger:
    CREATION = "CREATION"
    MANUAL = "MANUAL"
    SCHEDULED = "SCHEDULED"


class Action:
    NO_DATA = "NO_DATA"
    FULL = "FULL"
    INCREMENTAL = "INCREMENTAL"
    REINITIALIZE = "REINITIALIZE"


@dataclass(frozen=True)
class PinnedSources:
    """What a refresh read of its sources before computing anything."""

    versions: dict[str, int | None]
    fingerprints: dict[str, str]  # each source's shape (schema, upstream definition)
    columns: dict[str, list[str]]
    # Each column's type (Spark's simple string), in the order of ``columns``.
    types: dict[str, list[str]] = field(default_factory=dict)
    # When each source's pinned version was committed (ISO, UTC), where its history says.
    commit_times: dict[str, str] = field(default_factory=dict)

    def commit_times_of(self, versions: dict[str, int | None]) -> dict[str, str]:
        """The commit times of those of ``versions`` that are the pinned ones."""
        return {
            key: time
            for key, time in self.commit_times.items()
            if key in versions and versions[key] == self.versions.get(key)
        }


@dataclass(frozen=True)
class Watermark:
    """What a refresh commit records: the source versions it read and why."""

    refresh_id: str
    data_timestamp: str
    sources: dict[str, int | None]
    definition_hash: str
    action: str
    definition: dict[str, str] | None = None  # set on a REPLACE commit: see ddl/lifecycle.py
    fingerprints: dict[str, str] = field(default_factory=dict)  # each source's shape
    trigger: str | None = None  # what started the refresh (for a history row recovered)
    # When each source's version in ``sources`` was committed: a source whose commit at
    # that version has another time since was dropped and created again.
    source_commit_times: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> str:
        payload: dict[str, Any] = {
            WATERMARK_MARKER: 1,
            "refresh_id": self.refresh_id,
            "data_timestamp": self.data_timestamp,
            "sources": self.sources,
            "definition_hash": self.definition_hash,
            "action": self.action,
            "fingerprints": self.fingerprints,
        }
        if self.definition is not None:
            payload["definition"] = self.definition
        if self.trigger is not None:
            payload["trigger"] = self.trigger
        if self.source_commit_times:
            payload["source_commit_times"] = self.source_commit_times
        return json.dumps(payload, sort_keys=True)

    @classmethod
    def from_json(cls, text: str | None) -> Watermark | None:
        if not text:
            return None
        try:
            payload = json.loads(text)
        except ValueError:
            return None
        if not isinstance(payload, dict) or payload.get(WATERMARK_MARKER) != 1:
            return None
        return cls(
            refresh_id=payload["refresh_id"],
            data_timestamp=payload["data_timestamp"],
            sources=dict(payload["sources"]),
            definition_hash=payload["definition_hash"],
            action=payload["action"],
            definition=payload.get("definition"),
            fingerprints=dict(payload.get("fingerprints", {})),
            trigger=payload.get("trigger"),
            source_commit_times=dict(payload.get("source_commit_times", {})),
        )


@dataclass(frozen=True)
class AsOf:
    """Pins a refresh to one data timestamp (the scheduler's tick): its sources are read
    at ``versions`` (each source's version as of the timestamp, and upstream dynamic
    tables as refreshed at it); a source not listed is read at its current version."""

    data_timestamp: datetime.datetime
    versions: dict[str, int | None]


@dataclass
class RefreshResult:
    """What ``ALTER DYNAMIC TABLE … REFRESH`` reports."""

    name: str
    action: str
    state: str
    data_timestamp: datetime.datetime
    rows_inserted: int | None = None
    rows_deleted: int | None = None
    message: str | None = None
    reason: str | None = None
    table_version: int | None = None
    query_id: str = field(default_factory=new_id)
    trigger: str | None = None
    # The refresh id of the watermark the refresh started from (None: the first).
    read_refresh_id: str | None = None
    # The data files the table reads after the refresh's commit, where the commit's
    # metadata says (compaction then need not count them).
    data_files: int | None = None


def new_watermark(
    result: RefreshResult,
    definition: Definition,
    versions: dict[str, int | None],
    fingerprints: dict[str, str],
    replace_definition: dict[str, str] | None = None,
    commit_times: dict[str, str] | None = None,
) -> Watermark:
    """The watermark a refresh commits with its rows (``commit_times``: when each source's
    version in ``versions`` was committed, where known)."""
    return Watermark(
        refresh_id=result.query_id,
        data_timestamp=result.data_timestamp.isoformat(),
        sources=versions,
        definition_hash=definition.definition_hash,
        action=result.action,
        definition=replace_definition,
        fingerprints=fingerprints,
        trigger=result.trigger,
        source_commit_times=dict(commit_times or {}),
    )


@dataclass(frozen=True)
class WatermarkState:
    """A table's newest watermark, the commit time of the commit carrying it, and the
    table's current version."""

    watermark: Watermark | None
    table_version: int | None
    committed_at: datetime.datetime | None
    # Whether rows changed after the watermark's commit by other means than a refresh.
    foreign_changes: bool = False


@dataclass(frozen=True)
class Applied:
    """What a strategy's write did: whether it committed (it may have made no commit, e.g. a
    MERGE that touched no row), and the rows it changed as it counted them (None: as its
    commit's metrics say)."""

    rows_inserted: int | None
    rows_deleted: int | None
    committed: bool
    # The commit it made, where the format named it (else it is found in the history).
    made: Commit | None = None


@dataclass(frozen=True)
class RefreshJob:
    """One refresh asked for: the table and its definition, the result it fills in, the
    data timestamp it is pinned to (the scheduler's tick), and on CREATE OR REPLACE the new
    definition's properties and the backfill rows."""

    table: exp.Table
    definition: Definition
    result: RefreshResult
    at: AsOf | None = None
    replace_definition: dict[str, str] | None = None
    backfill: exp.Query | None = None


@dataclass(frozen=True)
class RefreshInputs:
    """What a query refresh read before computing: the table's last watermark, its sources
    pinned, each moved source's commits since the watermark, and the active region of a
    frozen table at this refresh's data timestamp (None: every row)."""

    state: WatermarkState
    pinned: PinnedSources
    moved: dict[str, list[Commit] | None]
    active: exp.Expr | None
