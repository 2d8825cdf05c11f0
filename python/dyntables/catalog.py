"""Dynamic tables and materialized views as their own tables describe them.

A dynamic table is an ordinary Delta or Iceberg table whose definition lives in its
table properties under the prefix ``dynamic_table.``: another process, or another
engine, can refresh it from the table alone. ``Definition`` is that record, typed
(read from and written to the properties); ``table_key`` and ``key_to_table`` turn table
names into the keys used everywhere else (``db.table``, or ``delta.`path``` for a Delta
table named by its path); ``NameCache`` keeps the names of the
tables that carry a definition, so that ordinary SQL can be checked for references to
them without a catalog round trip.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any

from sqlglot import exp

PREFIX = "dynamic_table."
FORMAT_VERSION = "1"


class ObjectKind(str, Enum):
    DYNAMIC_TABLE = "DYNAMIC_TABLE"
    MATERIALIZED_VIEW = "MATERIALIZED_VIEW"


class SchedulingState(str, Enum):
    ACTIVE = "ACTIVE"
    SUSPENDED = "SUSPENDED"


# Why the scheduler suspended a table (the start of its suspend reason).
SUSPENDED_DUE_TO_ERRORS = "SUSPENDED_DUE_TO_ERRORS"
UPSTREAM_SUSPENDED_DUE_TO_ERRORS = "UPSTREAM_SUSPENDED_DUE_TO_ERRORS"


@dataclass(frozen=True)
class Definition:
    """Everything needed to refresh one dynamic table (or materialized view).

    ``query`` is the defining query as Spark SQL (translated from the user's dialect
    once, at CREATE); ``text`` is the CREATE statement as the user wrote it.
    ``columns`` are the output columns with their Spark types; ``sources`` every table
    the query reads, by ``table_key`` (qualified and lower case, or ``delta.`path```),
    ``upstreams`` those of them that are dynamic tables or materialized views.
    """

    kind: ObjectKind
    text: str
    query: str
    columns: tuple[tuple[str, str], ...]
    sources: tuple[str, ...]
    upstreams: tuple[str, ...] = ()
    target_lag_seconds: int | None = None
    downstream: bool = False
    warehouse: str | None = None
    refresh_mode: str = "FULL"
    refresh_mode_reason: str = ""
    initialize: str = "ON_CREATE"
    comment: str | None = None
    frozen_where: str | None = None
    # A frozen-region change the next refresh applies: "ACTIVE_REGION" (the region shrank
    # or changed shape: recompute the active region) or "ALL" (removed: recompute all).
    frozen_reinitialize: str | None = None
    cluster_by: tuple[str, ...] = ()
    scheduling_state: SchedulingState = SchedulingState.ACTIVE
    suspend_reason: str | None = None
    change_tracking_problem: str | None = None
    created_on: str = ""
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def definition_hash(self) -> str:
        """Identifies what the table's contents are a function of: query and columns. (The
        frozen region is not part of it: ALTER ... FROZEN WHERE decides what to recompute,
        recorded in ``frozen_reinitialize``.)"""
        payload = json.dumps([self.query, self.columns])
        return hashlib.sha256(payload.encode()).hexdigest()[:16]

    @property
    def target_lag_text(self) -> str:
        if self.downstream:
            return "DOWNSTREAM"
        if self.target_lag_seconds is None:
            return ""
        return format_lag(self.target_lag_seconds)

    def with_changes(self, **changes: Any) -> Definition:
        return replace(self, **changes)

    def to_properties(self) -> dict[str, str]:
        """The table properties that store this definition (every key prefixed)."""
        values: dict[str, str | None] = {
            "format_version": FORMAT_VERSION,
            "kind": self.kind.value,
            "text": self.text,
            "query": self.query,
            "columns": json.dumps([list(column) for column in self.columns]),
            "sources": json.dumps(list(self.sources)),
            "upstreams": json.dumps(list(self.upstreams)),
            "target_lag_seconds": _optional_int(self.target_lag_seconds),
            "downstream": "true" if self.downstream else "false",
            "warehouse": self.warehouse,
            "refresh_mode": self.refresh_mode,
            "refresh_mode_reason": self.refresh_mode_reason,
            "initialize": self.initialize,
            "comment": self.comment,
            "frozen_where": self.frozen_where,
            "frozen_reinitialize": self.frozen_reinitialize,
            "cluster_by": json.dumps(list(self.cluster_by)),
            "scheduling_state": self.scheduling_state.value,
            "suspend_reason": self.suspend_reason,
            "change_tracking_problem": self.change_tracking_problem,
            "created_on": self.created_on,
            "definition_hash": self.definition_hash,
            **self.extra,
        }
        # An unset value is stored as an empty string: one ALTER sets every key at once.
        return {PREFIX + key: "" if value is None else value for key, value in values.items()}

    @classmethod
    def from_properties(cls, properties: dict[str, str]) -> Definition | None:
        """The definition these properties store, or None for an ordinary table."""
        values = {
            key[len(PREFIX) :]: value for key, value in properties.items() if key.startswith(PREFIX)
        }
        if "kind" not in values or "query" not in values:
            return None
        known = {f.name for f in cls.__dataclass_fields__.values()} | {
            "format_version",
            "definition_hash",
            "target_lag_seconds",
        }
        return cls(
            kind=ObjectKind(values["kind"]),
            text=values.get("text", ""),
            query=values["query"],
            columns=tuple(
                (str(name), str(type_sql))
                for name, type_sql in json.loads(values.get("columns") or "[]")
            ),
            sources=tuple(json.loads(values.get("sources") or "[]")),
            upstreams=tuple(json.loads(values.get("upstreams") or "[]")),
            target_lag_seconds=int(values["target_lag_seconds"])
            if values.get("target_lag_seconds")
            else None,
            downstream=values.get("downstream") == "true",
            warehouse=values.get("warehouse") or None,
            refresh_mode=values.get("refresh_mode") or "FULL",
            refresh_mode_reason=values.get("refresh_mode_reason", ""),
            initialize=values.get("initialize") or "ON_CREATE",
            comment=values.get("comment") or None,
            frozen_where=values.get("frozen_where") or None,
            frozen_reinitialize=values.get("frozen_reinitialize") or None,
            cluster_by=tuple(json.loads(values.get("cluster_by") or "[]")),
            scheduling_state=SchedulingState(values.get("scheduling_state") or "ACTIVE"),
            suspend_reason=values.get("suspend_reason") or None,
            change_tracking_problem=values.get("change_tracking_problem") or None,
            created_on=values.get("created_on", ""),
            extra={key: value for key, value in values.items() if key not in known},
        )


def _optional_int(value: int | None) -> str | None:
    return None if value is None else str(value)


_LAG_UNITS = (("day", 86400), ("hour", 3600), ("minute", 60), ("second", 1))


def format_lag(seconds: int) -> str:
    """``600`` → ``'10 minutes'``: the largest unit that divides the lag exactly.

    >>> format_lag(600), format_lag(90), format_lag(86400)
    ('10 minutes', '90 seconds', '1 day')
    """
    for unit, size in _LAG_UNITS:
        if seconds % size == 0:
            count = seconds // size
            return f"{count} {unit}{'' if count == 1 else 's'}"
    raise AssertionError("every lag is a whole number of seconds")


# The format of the tables a source may name by path (``delta.`/data/events```):
# Delta, whose log gives the versions and change feed a dynamic table reads.
PATH_FORMAT = "delta"
_PATH_KEY_START = f"{PATH_FORMAT}.`"


def path_of(table: exp.Table) -> str | None:
    """The path a ``delta.`path``` reference names, as written; None for a table name.

    A path is told from a database ``delta``'s table by a ``/`` or ``:`` in it, which a
    table name does not hold.

    >>> path_of(exp.to_table("delta.`/data/Events.v2`", dialect="spark"))
    '/data/Events.v2'
    >>> path_of(exp.to_table("delta.events")) is None
    True
    """
    if table.args.get("catalog") is not None or table.db.lower() != PATH_FORMAT:
        return None
    return table.name if is_path(table.name) else None


def is_path(text: str) -> bool:
    """Whether a name read as a table (``format.`text```) is a path."""
    return "/" in text or ":" in text


def path_table(path: str) -> exp.Table:
    """The reference ``delta.`path``` (the path kept exactly)."""
    return exp.table_(exp.to_identifier(path, quoted=True), db=exp.to_identifier(PATH_FORMAT))


def table_key(table: exp.Table) -> str:
    """A table's identity, used wherever sources are recorded (properties, watermarks,
    ``table_changes``, the upstream list): a named table's dotted parts in lower case; a
    Delta table named by path, ``delta.`path``` with the path as written (paths are case
    sensitive and hold dots; a backtick in one is doubled).

    >>> table_key(exp.to_table("Sales.Orders"))
    'sales.orders'
    >>> table_key(exp.to_table("delta.`/data/Events.v2`", dialect="spark"))
    'delta.`/data/Events.v2`'
    """
    path = path_of(table)
    if path is not None:
        return _PATH_KEY_START + path.replace("`", "``") + "`"
    return ".".join(part.name.lower() for part in table.parts)


def key_to_table(key: str) -> exp.Table:
    """The table a ``table_key`` names (``table_key(key_to_table(key)) == key``).

    >>> key_to_table("delta.`/data/a.b`").sql("spark")
    'delta.`/data/a.b`'
    """
    if key.startswith(_PATH_KEY_START) and key.endswith("`"):
        return path_table(key[len(_PATH_KEY_START) : -1].replace("``", "`"))
    parts = key.split(".")
    return exp.table_(
        exp.to_identifier(parts[-1], quoted=True),
        db=exp.to_identifier(parts[-2], quoted=True) if len(parts) > 1 else None,
        catalog=exp.to_identifier(parts[-3], quoted=True) if len(parts) > 2 else None,
    )


class NameCache:
    """The names of managed tables, for the cheap check on ordinary SQL.

    Refilled when older than ``ttl_seconds`` or after this process changed the set;
    another process's CREATE becomes visible within the TTL.
    """

    def __init__(self, ttl_seconds: float = 5.0) -> None:
        self.ttl_seconds = ttl_seconds
        self._names: set[str] | None = None
        self._pattern: re.Pattern[str] | None = None
        self._filled_at = 0.0
        self._lock = threading.Lock()

    def get(self, fill: Any) -> tuple[set[str], re.Pattern[str] | None]:
        with self._lock:
            stale = time.monotonic() - self._filled_at > self.ttl_seconds
            if self._names is None or stale:
                self._names = {name.lower() for name in fill()}
                bare = sorted({name.rsplit(".", 1)[-1] for name in self._names}, key=len)
                self._pattern = (
                    re.compile(
                        r"(?<![\w$])(?:"
                        + "|".join(re.escape(n) for n in bare[::-1])
                        + r")(?![\w$])",
                        re.IGNORECASE,
                    )
                    if bare
                    else None
                )
                self._filled_at = time.monotonic()
            return self._names, self._pattern

    def invalidate(self) -> None:
        with self._lock:
            self._names = None
