"""A simulated clock and an engine-free runner, for driving the scheduler core in tests."""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace

from dyntables.scheduler.core import FAILED, SUCCEEDED, Outcome, Tick
from dyntables.scheduler.plan import Graph, Node

# 2022-12-01 00:00:00 UTC, the first row of the seed's schedule (a multiple of 96 s).
SEED_START = 1669852800.0


class SimClock:
    """Time that moves only when told: refreshes advance it by their duration."""

    def __init__(self, start: float, end: float = float("inf")) -> None:
        self.time = start
        self.end = end

    def now(self) -> float:
        return self.time

    def wait(self, seconds: float, stop: threading.Event) -> None:
        self.time += max(seconds, 0.0)
        if self.time >= self.end:
            stop.set()

    def advance(self, seconds: float) -> None:
        self.time += seconds


@dataclass(frozen=True)
class Entry:
    """One row of the simulated refresh history."""

    name: str
    tick: float
    start: float
    end: float
    state: str
    message: str | None = None
    # For a refresh that ran: the data timestamp of each upstream version it read.
    read: dict[str, float] = field(default_factory=dict)


class FakeRunner:
    """Dynamic tables in memory; each refresh takes ``duration(name, tick)`` simulated
    seconds and fails when ``fails(name, tick)``."""

    def __init__(
        self,
        clock: SimClock,
        nodes: list[Node],
        duration: Callable[[str, float], float] = lambda name, tick: 0.0,
        fails: Callable[[str, float], bool] = lambda name, tick: False,
        refreshed_until: dict[str, float] | None = None,
    ) -> None:
        self.clock = clock
        self.nodes = {node.name: node for node in nodes}
        self.duration = duration
        self.fails = fails
        self.done: dict[str, float] = dict(refreshed_until or {})
        self.version: dict[str, int] = {name: 0 for name in self.nodes}
        self.data_timestamp_of: dict[tuple[str, int], float] = {}
        self.log: list[Entry] = []
        self.suspended: dict[str, tuple[float, str]] = {}

    def reading(self) -> AbstractContextManager[None]:
        return nullcontext()  # nothing is read from an engine

    def graph(self) -> Graph:
        return Graph.of(self.nodes.values())

    def refreshed_until(self) -> dict[str, float]:
        return dict(self.done)

    def consecutive_failures(self) -> dict[str, int]:
        return {}

    def refresh(self, name: str, tick: Tick) -> Outcome:
        start = self.clock.now()
        read = {}
        for upstream in self.nodes[name].upstreams:
            pinned = tick.versions.get(upstream)
            assert pinned is not None, f"{name} read {upstream} without a version pinned"
            read[upstream] = self.data_timestamp_of.get((upstream, pinned), -1.0)
        self.clock.advance(self.duration(name, tick.data_timestamp))
        if self.fails(name, tick.data_timestamp):
            outcome = Outcome(FAILED, "simulated failure")
        else:
            self.version[name] += 1
            tick.versions[name] = self.version[name]
            self.data_timestamp_of[(name, self.version[name])] = tick.data_timestamp
            self.done[name] = tick.data_timestamp
            outcome = Outcome(SUCCEEDED, action="FULL")
        self.log.append(
            Entry(name, tick.data_timestamp, start, self.clock.now(), outcome.state, None, read)
        )
        return outcome

    def record(self, name: str, data_timestamp: float, outcome: Outcome) -> None:
        now = self.clock.now()
        self.log.append(Entry(name, data_timestamp, now, now, outcome.state, outcome.message))

    def suspend(self, name: str, reason: str) -> None:
        self.nodes[name] = replace(self.nodes[name], suspended=True, suspend_reason=reason)
        self.suspended[name] = (self.clock.now(), reason)

    # ---- reading the log ----

    def ran(self, name: str) -> list[Entry]:
        """The refreshes of ``name`` that ran (succeeded or failed)."""
        return [e for e in self.log if e.name == name and e.state in (SUCCEEDED, FAILED)]

    def ticks(self, name: str, state: str = SUCCEEDED) -> list[float]:
        return [e.tick for e in self.log if e.name == name and e.state == state]
