"""One active scheduler per catalog: a lease in ``dyntables_system.scheduler_lease``.

The lease is one row (holder, host, pid, acquired, renewed, expires), replaced by a
commit conditional on the version read, so that of two schedulers taking an expired lease
at once only one commit lands (on the embedded engine; on Spark the format's own conflict
detection decides, and two holders for a moment are possible). The holder renews it by
committing again; a standby takes it over when it expires; a clean stop releases it. The
lease is an optimisation: a refresh commit still fails when the table moved underneath it.
"""

from __future__ import annotations

import json
import os
import socket
import uuid
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from dyntables.engine import Engine
from dyntables.history import SYSTEM_SCHEMA, SystemTables
from dyntables.scheduler.core import Clock, to_datetime, to_epoch
from dyntables.sql.literals import typed_literal

LEASE_TABLE = "scheduler_lease"
_STORED_PRECISION = 1e-5  # seconds
_COLUMNS = (
    ("holder", "STRING"),
    ("host", "STRING"),
    ("pid", "BIGINT"),
    ("acquired_at", "TIMESTAMP"),
    ("renewed_at", "TIMESTAMP"),
    ("expires_at", "TIMESTAMP"),
)


@dataclass(frozen=True)
class LeaseRecord:
    holder: str
    host: str
    pid: int
    acquired_at: float
    renewed_at: float
    expires_at: float

    def describe(self) -> str:
        return (
            f"{self.holder} (host {self.host}, pid {self.pid}) until"
            f" {to_datetime(self.expires_at).isoformat(sep=' ', timespec='seconds')} UTC"
        )


class Lease:
    """This process's claim on the catalog's scheduler lease."""

    def __init__(
        self,
        engine: Engine,
        system: SystemTables,
        clock: Clock,
        duration_seconds: float = 30.0,
        holder: str | None = None,
    ) -> None:
        self.engine = engine
        self.system = system
        self.clock = clock
        self.duration = duration_seconds
        self.holder = holder or f"scheduler-{uuid.uuid4().hex[:8]}"
        self.held_until: float | None = None
        self._renewed_at = 0.0

    @property
    def table(self) -> exp.Table:
        return exp.table_(LEASE_TABLE, db=SYSTEM_SCHEMA)

    def ensure(self) -> None:
        self.system.ensure()
        self.system.create_if_absent(self.table, _COLUMNS)

    def read(self) -> tuple[LeaseRecord | None, int | None]:
        """The lease as committed, and the lease table's version."""
        self.ensure()
        session = self.engine.refresh_session
        version = self.engine.table_format.current_version(session, self.table)
        rows = session.sql(exp.select("*").from_(self.table).sql("spark")).collect()
        if not rows:
            return None, version
        row = rows[0]
        record = LeaseRecord(
            holder=str(row["holder"]),
            host=str(row["host"]),
            pid=int(row["pid"]),
            acquired_at=to_epoch(row["acquired_at"]),
            renewed_at=to_epoch(row["renewed_at"]),
            expires_at=to_epoch(row["expires_at"]),
        )
        return record, version

    def held(self) -> bool:
        """Whether this process holds the lease, by its own clock."""
        return self.held_until is not None and self.clock.now() < self.held_until

    def renewal_due(self) -> bool:
        return self.clock.now() - self._renewed_at >= self.duration / 3

    def acquire(self) -> LeaseRecord | None:
        """Take or renew the lease. None when this process holds it now; else the other
        holder's record."""
        record, version = self.read()
        now = self.clock.now()
        ours = record is not None and record.holder == self.holder
        # Times are stored to the microsecond: a lease released "now" may read back a
        # microsecond later than now.
        if record is not None and not ours and record.expires_at - now > _STORED_PRECISION:
            self.held_until = None
            return record
        mine = LeaseRecord(
            holder=self.holder,
            host=socket.gethostname(),
            pid=os.getpid(),
            acquired_at=record.acquired_at if ours and record is not None else now,
            renewed_at=now,
            expires_at=now + self.duration,
        )
        try:
            self._write(mine, version)
        except Exception:  # another scheduler's commit landed first
            self.held_until = None
            winner, _ = self.read()
            return winner if winner is not None and winner.holder != self.holder else mine
        winner, _ = self.read()
        if winner is None or winner.holder != self.holder:
            self.held_until = None
            return winner
        self.held_until = mine.expires_at
        self._renewed_at = now
        return None

    def release(self) -> None:
        """Let the lease expire now (a standby takes over at once)."""
        if self.held_until is None:
            return
        record, version = self.read()
        self.held_until = None
        if record is None or record.holder != self.holder:
            return
        now = self.clock.now()
        released = LeaseRecord(record.holder, record.host, record.pid, record.acquired_at, now, now)
        try:
            self._write(released, version)
        except Exception:  # someone took it already
            return

    def _write(self, record: LeaseRecord, version: int | None) -> None:
        values: list[Any] = [
            record.holder,
            record.host,
            record.pid,
            to_datetime(record.acquired_at),
            to_datetime(record.renewed_at),
            to_datetime(record.expires_at),
        ]
        row = exp.select(
            *[
                exp.alias_(typed_literal(value, type_sql), name)
                for value, (name, type_sql) in zip(values, _COLUMNS, strict=True)
            ]
        )
        note = json.dumps({"dyntables_lease": record.holder, "expires_at": record.expires_at})
        with self.engine.refresh_lock:  # the refresh session's commit settings are shared
            self.engine.table_format.overwrite(
                self.engine.refresh_session, self.table, row, note, expected_version=version
            )
