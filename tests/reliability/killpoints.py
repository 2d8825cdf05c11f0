"""Commit points of an embedded worker, and a switch that SIGKILLs the worker at one.

Installed only in a worker process (never in pytest's): it wraps

* ``ShimSession.sql`` — every write statement (INSERT, MERGE, UPDATE, DELETE, ALTER TABLE,
  OPTIMIZE, CREATE, …) is an event, named by what it is for (``classify``): a refresh's
  data commit, a watermark-only move, a refresh-history append, a compaction, a lease
  write, …;
* the calls underneath, which inherit the statement's phase and add their own label:
  ``os.link`` into a ``_delta_log`` folder (sparkshim's put-if-absent: the commit file
  staged but not linked, or linked but the staging file not removed), delta-rs's writer,
  merge, optimize, property and checkpoint calls.

Every event is logged before and after it to the progress file (``B``/``A`` lines, one
``write`` each, so that a SIGKILL loses none), which tells the driver where a kill at a
random moment landed. A ``KillTarget`` makes the worker SIGKILL itself right ``before`` or
``after`` an event, or ``during`` one (a few milliseconds into it, from a killer
process: delta-rs may hold the GIL): the ``n``-th event of any kind, or
the ``k``-th event of a phase or label.
"""

from __future__ import annotations

import functools
import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# Phases: what a write statement is for.
REFRESH_COMMIT = "refresh-commit"
WATERMARK_ONLY = "watermark-only"
HISTORY_APPEND = "history-append"
STATEMENT_LOG = "statement-log"
LEASE_WRITE = "lease-write"
COMPACTION = "compaction"
PROPERTIES = "properties"
CREATE = "create"
SOURCE_DML = "source-dml"
OTHER_WRITE = "other-write"
# Labels of the commits underneath a statement.
LOG_LINK = "log-link"
CHECKPOINT = "checkpoint"

USER_METADATA_CONF = "spark.databricks.delta.commitInfo.userMetadata"
_WRITE = re.compile(
    r"^\s*(INSERT|MERGE|UPDATE|DELETE|ALTER\s+TABLE|OPTIMIZE|CREATE|DROP|TRUNCATE|VACUUM)\b",
    re.IGNORECASE,
)
_TARGET = re.compile(
    r"^\s*(?:INSERT\s+(?:OVERWRITE|INTO)\s+(?:TABLE\s+)?|MERGE\s+INTO\s+|ALTER\s+TABLE\s+"
    r"|OPTIMIZE\s+|UPDATE\s+|DELETE\s+FROM\s+|CREATE\s+(?:OR\s+REPLACE\s+)?TABLE\s+"
    r"(?:IF\s+NOT\s+EXISTS\s+)?|CREATE\s+(?:DATABASE|SCHEMA)\s+(?:IF\s+NOT\s+EXISTS\s+)?"
    r"|DROP\s+TABLE\s+(?:IF\s+EXISTS\s+)?|VACUUM\s+)([`\w.]+)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class KillTarget:
    """Where to kill: ``by`` is ``"n"`` (the ``n``-th event of any kind) or ``"kind"``
    (the ``k``-th event whose phase or label is ``kind``); ``when`` is ``before``,
    ``after`` or ``during``."""

    by: str
    when: str
    n: int = 0
    kind: str = ""
    k: int = 1

    def to_json(self) -> dict[str, Any]:
        return {"by": self.by, "when": self.when, "n": self.n, "kind": self.kind, "k": self.k}

    @classmethod
    def from_json(cls, payload: dict[str, Any] | None) -> KillTarget | None:
        if not payload:
            return None
        return cls(
            by=str(payload["by"]),
            when=str(payload["when"]),
            n=int(payload.get("n", 0)),
            kind=str(payload.get("kind", "")),
            k=int(payload.get("k", 1)),
        )

    def matches(self, number: int, kinds: set[str], counts: dict[str, int]) -> bool:
        """Whether event ``number`` (of these kinds, with these counts so far) is it."""
        if self.by == "n":
            return number == self.n
        return self.kind in kinds and counts[self.kind] == self.k

    def describe(self) -> str:
        if self.by == "n":
            return f"{self.when} commit event #{self.n}"
        return f"{self.when} the {_ordinal(self.k)} {self.kind}"


def classify(sql: str, user_metadata: str | None) -> tuple[str, str] | None:
    """``(phase, table)`` of a write statement; None for a statement that writes nothing."""
    if not _WRITE.match(sql):
        return None
    match = _TARGET.match(sql)
    table = match.group(1).replace("`", "").lower() if match else "?"
    verb = sql.lstrip().split(None, 1)[0].upper()
    carries_watermark = bool(user_metadata) and '"dyntables": 1' in (user_metadata or "")
    if "dyntables_system." in table:
        if verb == "OPTIMIZE":
            return COMPACTION, table
        if verb == "CREATE":
            return CREATE, table
        if table.endswith("refresh_history"):
            return HISTORY_APPEND, table
        if table.endswith("scheduler_lease"):
            return LEASE_WRITE, table
        if table.endswith("statements"):
            return STATEMENT_LOG, table
        return OTHER_WRITE, table
    if verb == "OPTIMIZE":
        return COMPACTION, table
    if verb == "CREATE":
        return CREATE, table
    if verb == "ALTER":
        return (WATERMARK_ONLY if carries_watermark else PROPERTIES), table
    if verb in ("INSERT", "MERGE") and carries_watermark:
        return REFRESH_COMMIT, table
    if verb in ("INSERT", "MERGE", "UPDATE", "DELETE"):
        return SOURCE_DML, table
    return OTHER_WRITE, table


# The killer: a process started before anything else, which SIGKILLs its parent a given
# number of seconds after it is asked to (one line on its stdin); it exits when the pipe
# closes. ``-I -S``: it imports nothing of the project.
_KILLER = """
import os, signal, sys, time
parent = int(sys.argv[1])
line = sys.stdin.readline()
if line.strip():
    time.sleep(float(line))
    os.kill(parent, signal.SIGKILL)
"""


class Killer:
    """SIGKILLs this process from outside after a delay (see ``_KILLER``)."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _KILLER, str(os.getpid())], stdin=subprocess.PIPE
        )

    def kill_in(self, seconds: float) -> None:
        assert self.process.stdin is not None
        os.write(self.process.stdin.fileno(), f"{seconds:.6f}\n".encode())


class KillSwitch:
    """Numbers commit events, logs them, and SIGKILLs this process at its target."""

    def __init__(
        self,
        progress_fd: int,
        target: KillTarget | None,
        rng: random.Random,
        killer: Killer | None = None,
    ) -> None:
        self.progress_fd = progress_fd
        self.killer = killer
        self.target = target
        self.rng = rng
        self.sequence = 0
        self.counts: dict[str, int] = {}
        self._local = threading.local()

    # ---- the log ----

    def log(self, line: str) -> None:
        os.write(self.progress_fd, (line.replace("\n", " ") + "\n").encode())

    def step(self, description: str) -> None:
        """What the worker does next (between commits)."""
        self.log(f"STEP {description}")

    # ---- events ----

    @property
    def phase_stack(self) -> list[tuple[str, str]]:
        stack: list[tuple[str, str]] | None = getattr(self._local, "stack", None)
        if stack is None:
            stack = self._local.stack = []
        return stack

    def around(self, phase: str, label: str, table: str, call: Callable[[], Any]) -> Any:
        """Run ``call`` as one commit event."""
        self.sequence += 1
        number = self.sequence
        kinds = {phase, label}
        for kind in kinds:
            self.counts[kind] = self.counts.get(kind, 0) + 1
        target = self.target
        hit = target is not None and target.matches(number, kinds, self.counts)
        due = target.when if target is not None and hit else None
        point = f"{number} {phase} {label} {table}"
        self.log(f"B {point}")
        if due == "before":
            self.kill(f"before {point}")
        if due == "during":  # a statement takes 10-50 ms, a call underneath a few
            self._arm(number, 0.015 if label == "statement" else 0.003)
        self.phase_stack.append((phase, table))
        try:
            return call()
        finally:
            self.phase_stack.pop()
            self.log(f"A {point}")
            if due == "after":
                self.kill(f"after {point}")

    def _arm(self, number: int, within: float) -> None:
        """SIGKILL this process at a random moment in the first ``within`` seconds of event
        ``number``: from the killer process, which needs no GIL (delta-rs may hold it).
        Where the kill landed is the last line of the progress file."""
        self.log(f"ARM {number}")
        if self.killer is None:
            raise RuntimeError("a kill during an event needs the killer process")
        self.killer.kill_in(self.rng.uniform(0.0, within))

    def kill(self, where: str) -> None:
        self.log(f"KILL {where}")
        os.kill(os.getpid(), signal.SIGKILL)

    # ---- wrapping ----

    def install(self) -> None:
        """Wrap sparkshim's statement entry point and the commits underneath it."""
        import deltalake
        import deltalake.table

        import sparkshim.delta
        from sparkshim.session import ShimSession

        switch = self
        depth = threading.local()
        original_sql = ShimSession.sql

        @functools.wraps(original_sql)
        def sql(session: ShimSession, sqlQuery: str, args: Any = None) -> Any:  # noqa: N803
            if getattr(depth, "value", 0):
                return original_sql(session, sqlQuery, args)
            user_metadata = session.conf.get(USER_METADATA_CONF, None)
            kind = classify(sqlQuery, user_metadata)
            depth.value = 1
            try:
                if kind is None:
                    return original_sql(session, sqlQuery, args)
                return switch.around(
                    kind[0], "statement", kind[1], lambda: original_sql(session, sqlQuery, args)
                )
            finally:
                depth.value = 0

        # Patched through Any: the wrappers take what the originals take.
        shim_session: Any = ShimSession
        shim_session.sql = sql

        def inner(label: str, function: Callable[..., Any]) -> Callable[..., Any]:
            @functools.wraps(function)
            def wrapped(*args: Any, **kwargs: Any) -> Any:
                phase, table = switch.phase_stack[-1] if switch.phase_stack else ("none", "?")
                return switch.around(phase, label, table, lambda: function(*args, **kwargs))

            return wrapped

        original_link = os.link

        @functools.wraps(original_link)
        def link(source: Any, destination: Any, *args: Any, **kwargs: Any) -> Any:
            if "_delta_log" not in str(destination):
                return original_link(source, destination, *args, **kwargs)
            return inner(LOG_LINK, original_link)(source, destination, *args, **kwargs)

        os_module: Any = os
        os_module.link = link
        shim_delta: Any = sparkshim.delta
        shim_delta.write_deltalake = inner("delta-rs:write", shim_delta.write_deltalake)
        table_module: Any = deltalake.table
        for owner, name, label in (
            (table_module.TableMerger, "execute", "delta-rs:merge"),
            (table_module.TableOptimizer, "compact", "delta-rs:optimize"),
            (table_module.TableOptimizer, "z_order", "delta-rs:optimize"),
            (table_module.TableAlterer, "set_table_properties", "delta-rs:set-properties"),
            (deltalake.DeltaTable, "delete", "delta-rs:delete"),
            (deltalake.DeltaTable, "update", "delta-rs:update"),
            (deltalake.DeltaTable, "create_checkpoint", CHECKPOINT),
            (deltalake.DeltaTable, "cleanup_metadata", "log-cleanup"),
        ):
            if hasattr(owner, name):
                setattr(owner, name, inner(label, getattr(owner, name)))
        create = deltalake.DeltaTable.__dict__.get("create")
        if isinstance(create, classmethod):
            wrapped_create = inner("delta-rs:create", create.__func__)
            delta_table: Any = deltalake.DeltaTable
            delta_table.create = classmethod(wrapped_create)


def parse_progress(text: str) -> dict[str, Any]:
    """What a worker's progress file says: where it was killed (its own ``KILL`` line, or
    its last event or step before a kill from outside), and the errors it logged."""
    last: tuple[str, str] | None = None  # the last B, A or STEP line
    last_step = ""
    kill_line = ""
    errors: list[dict[str, Any]] = []
    started = False
    for line in text.splitlines():
        tag, _, rest = line.partition(" ")
        if tag in ("B", "A", "STEP"):
            last = (tag, rest)
            if tag == "STEP":
                last_step = rest
        elif tag == "KILL":
            kill_line = rest
        elif tag == "ERR":
            errors.append(json.loads(rest))
        elif tag == "GO":
            started = True
    return {
        "last": last,
        "last_step": last_step,
        "kill": kill_line,
        "errors": errors,
        "started": started,
    }


def point_of(progress: dict[str, Any]) -> tuple[str, str]:
    """``(phase/when, description)`` of where a worker died."""
    kill = progress["kill"]
    if kill:
        when, _, rest = kill.partition(" ")
        if when in ("before", "after", "during"):
            return f"{_kind(rest)}/{when}", kill
        return "between-commits", kill
    last = progress["last"]
    step = progress["last_step"]
    if last is None:
        return "before-first-step", "before the worker's first step"
    tag, rest = last
    if tag == "STEP":
        return f"between-commits:{step.split(' ')[0]}", f"in step {step!r}, between commits"
    if tag == "B":
        return f"{_kind(rest)}/during", f"during {rest} (step {step!r})"
    return f"{_kind(rest)}/after", f"after {rest}, in step {step!r}"


def _kind(event: str) -> str:
    """``phase`` or ``phase:label`` of an event line's ``number phase label table``."""
    parts = event.split()
    phase = parts[1] if len(parts) > 1 else "?"
    label = parts[2] if len(parts) > 2 else ""
    return phase if label in ("statement", "") else f"{phase}:{label}"


def _ordinal(number: int) -> str:
    suffix = (
        "th" if 10 <= number % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    )
    return f"{number}{suffix}"
