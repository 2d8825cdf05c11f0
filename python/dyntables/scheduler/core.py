"""The scheduling core: ticks, skips and auto-suspend, with time and refreshes injected.

``Scheduler.run_due()`` processes the latest tick at or before now. Ticks are multiples of
the shortest refresh period of the catalog (every period divides the longer ones, see
``period.py``). At a tick ``T`` the owed dynamic tables and everything upstream of them
refresh one after another, upstream first, all at data timestamp ``T`` (the runner reads
every source as of ``T``), so tables that depend on each other always hold the same
snapshot.

* A table whose upstream failed records ``UPSTREAM_FAILED``; one whose upstream was skipped
  (or is suspended) records ``SKIPPED``: it never reads an upstream at another snapshot.
* Refreshes run one at a time. When a tick's refreshes take longer than the time to the
  next tick, the ticks that passed meanwhile are not run late: each table owed at them
  records one ``SKIPPED`` (its previous refresh was still running) and the scheduler
  catches up at the latest tick, at that tick's data timestamp.
* After ``max_consecutive_failures`` failed scheduled refreshes in a row (manual refreshes
  do not count) a table is suspended, and so is everything downstream of it; RESUME
  clears it.

Nothing here knows an engine: ``Runner`` is the engine side (``runner.py``), and tests
drive the core with a simulated clock and a fake runner.
"""

from __future__ import annotations

import datetime
import math
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Protocol

from dyntables.catalog import SUSPENDED_DUE_TO_ERRORS, UPSTREAM_SUSPENDED_DUE_TO_ERRORS
from dyntables.scheduler.period import SchedulerConfig, latest_tick
from dyntables.scheduler.plan import Graph, grid_period, tick_plan

SUCCEEDED = "SUCCEEDED"
FAILED = "FAILED"
SKIPPED = "SKIPPED"
UPSTREAM_FAILED = "UPSTREAM_FAILED"


@dataclass(frozen=True)
class Outcome:
    """How one table fared at one tick."""

    state: str
    message: str | None = None
    action: str | None = None  # NO_DATA, INCREMENTAL, FULL, REINITIALIZE when it ran


@dataclass
class Tick:
    """One tick being processed: its data timestamp, the versions pinned for it so far
    (the runner's business: sources as of the tick, upstreams as refreshed at it), and
    each table's outcome."""

    data_timestamp: float
    versions: dict[str, int | None] = field(default_factory=dict)
    outcomes: dict[str, Outcome] = field(default_factory=dict)


class Runner(Protocol):
    """The engine side of the scheduler."""

    def reading(self) -> AbstractContextManager[None]:
        """The scope of one tick: the engine reads each table's state once for all of the
        tick's refreshes, and keeps nothing after it."""

    def graph(self) -> Graph:
        """The dynamic tables now, read afresh (other sessions create, alter, suspend)."""

    def refreshed_until(self) -> dict[str, float]:
        """Each table's data timestamp as of its last successful refresh (epoch seconds)."""

    def consecutive_failures(self) -> dict[str, int]:
        """Each table's failed scheduled refreshes since its last successful one (or its
        last RESUME)."""

    def refresh(self, name: str, tick: Tick) -> Outcome:
        """Refresh ``name`` at ``tick.data_timestamp``, reading its sources at the versions
        the tick pinned, and record it in the refresh history."""

    def record(self, name: str, data_timestamp: float, outcome: Outcome) -> None:
        """Record a refresh that did not run (``SKIPPED``, ``UPSTREAM_FAILED``)."""

    def suspend(self, name: str, reason: str) -> None:
        """Suspend ``name`` with this reason (shown by SHOW as ``suspend_reason``)."""


class Clock(Protocol):
    def now(self) -> float:
        """Epoch seconds."""

    def wait(self, seconds: float, stop: threading.Event) -> None:
        """Sleep up to ``seconds``; return early when ``stop`` is set."""


class SystemClock:
    def now(self) -> float:
        return time.time()

    def wait(self, seconds: float, stop: threading.Event) -> None:
        stop.wait(max(seconds, 0.0))


@dataclass(frozen=True)
class Event:
    """What the scheduler reports as it goes (for progress output and logs)."""

    kind: str  # "tick", "start", "end", "skip", "suspend"
    tick: float
    name: str | None = None
    position: int = 0
    total: int = 0
    outcome: Outcome | None = None


class Scheduler:
    def __init__(
        self,
        runner: Runner,
        clock: Clock | None = None,
        config: SchedulerConfig | None = None,
        listener: Callable[[Event], None] | None = None,
    ) -> None:
        self.runner = runner
        self.clock = clock or SystemClock()
        self.config = config or SchedulerConfig()
        self.listener = listener
        self.last_tick: float | None = None
        self._covered: dict[str, float] | None = None
        self._failures: dict[str, int] = {}
        self._grid: float | None = None
        self._tick_now = 0.0  # the tick being processed
        # Set to stop: the refresh in flight finishes, the rest of its tick is abandoned.
        self.stopping: threading.Event | None = None
        # Asked before each refresh; False abandons the rest of the tick (the daemon: the
        # lease is lost, another scheduler is active now).
        self.may_continue: Callable[[], bool] = lambda: True

    # ---- the loop's two questions ----

    def run_due(self) -> Tick | None:
        """Process the latest tick at or before now, unless it was processed already."""
        with self.runner.reading():
            return self._run_due()

    def _run_due(self) -> Tick | None:
        graph = self.runner.graph()
        periods = graph.periods(self.config)
        self._grid = grid_period(periods)
        if self._grid is None:
            return None
        tick = latest_tick(self.clock.now(), self._grid)
        if self.last_tick is not None and tick <= self.last_tick:
            return None
        covered = self._start()
        for name, node in graph.nodes.items():
            if node.suspended:  # a RESUME starts the count afresh
                self._failures[name] = 0
        self._record_missed(graph, periods, tick, covered)
        return self._run_tick(graph, periods, tick, covered)

    def next_wakeup(self) -> float | None:
        """When the next tick is due (None before any table with a time lag is known)."""
        if self._grid is None:
            return None
        after = self.last_tick if self.last_tick is not None else self.clock.now()
        return latest_tick(after, self._grid) + self._grid

    def run_until(self, stop: threading.Event, poll_seconds: float = 5.0) -> None:
        """Run ticks as they come until ``stop`` is set; the graph is re-read at least
        every ``poll_seconds`` (new tables, changed lags)."""
        self.stopping = stop
        while not stop.is_set():
            self.run_due()
            wake = self.next_wakeup()
            now = self.clock.now()
            delay = poll_seconds if wake is None else min(max(wake - now, 0.0), poll_seconds)
            self.clock.wait(delay, stop)

    # ---- one tick ----

    def _start(self) -> dict[str, float]:
        if self._covered is None:
            self._covered = dict(self.runner.refreshed_until())
            self._failures = dict(self.runner.consecutive_failures())
        return self._covered

    def _record_missed(
        self, graph: Graph, periods: dict[str, float], tick: float, covered: dict[str, float]
    ) -> None:
        """One SKIPPED per table owed at ticks that passed while refreshes ran."""
        if self.last_tick is None:
            return  # at start-up the first tick catches up; nothing was missed while running
        for name, period in sorted(periods.items()):
            if graph.nodes[name].suspended:
                continue
            since = max(self.last_tick, covered.get(name, -math.inf))
            last_missed = latest_tick(math.nextafter(tick, -math.inf), period)
            if last_missed <= since:
                continue
            first_missed = latest_tick(since, period) + period
            count = round((last_missed - first_missed) / period) + 1
            outcome = Outcome(
                SKIPPED,
                f"skipped to catch up: the previous refresh was still running at"
                f" {count} tick{'s' if count > 1 else ''} from {_text(first_missed)} to"
                f" {_text(last_missed)}; refreshing at {_text(tick)} instead",
            )
            self.runner.record(name, last_missed, outcome)
            self._emit(Event("skip", last_missed, name, outcome=outcome))

    def _run_tick(
        self, graph: Graph, periods: dict[str, float], tick: float, covered: dict[str, float]
    ) -> Tick:
        plan = tick_plan(graph, tick, periods, covered)
        current = Tick(tick)
        self._tick_now = tick
        # Taken before it runs: a tick that stops half-way (a stop, an error) is abandoned,
        # never run again, so no table is refreshed twice for it.
        self.last_tick = tick
        self._emit(Event("tick", tick, total=len(plan)))
        for position, name in enumerate(plan, start=1):
            if self.stopping is not None and self.stopping.is_set():
                break
            if not self.may_continue():
                break
            self._emit(Event("start", tick, name, position, len(plan)))
            outcome = self._refresh_one(graph, name, current)
            current.outcomes[name] = outcome
            covered[name] = tick
            self._count(graph, name, outcome)
            self._emit(Event("end", tick, name, position, len(plan), outcome))
        return current

    def _refresh_one(self, graph: Graph, name: str, current: Tick) -> Outcome:
        node = graph.nodes[name]
        if node.suspended:  # read by a table that is due: it stays as it is, unrecorded
            return Outcome(SKIPPED, f"{name} is suspended")
        for upstream in graph.upstreams(name):
            upstream_outcome = current.outcomes.get(upstream)
            if upstream_outcome is None or upstream_outcome.state == SUCCEEDED:
                continue
            if upstream_outcome.state in (FAILED, UPSTREAM_FAILED):
                outcome = Outcome(UPSTREAM_FAILED, f"upstream {upstream} failed at this tick")
            elif graph.nodes[upstream].suspended:
                outcome = Outcome(SKIPPED, f"upstream {upstream} is suspended")
            else:
                outcome = Outcome(SKIPPED, f"upstream {upstream} was skipped at this tick")
            self.runner.record(name, current.data_timestamp, outcome)
            return outcome
        return self.runner.refresh(name, current)

    def _count(self, graph: Graph, name: str, outcome: Outcome) -> None:
        """Failure accounting; suspends after too many failed refreshes in a row."""
        if outcome.state == SUCCEEDED:
            self._failures[name] = 0
        if outcome.state != FAILED:
            return
        self._failures[name] = self._failures.get(name, 0) + 1
        limit = self.config.max_consecutive_failures
        if self._failures[name] < limit:
            return
        reason = (
            f"{SUSPENDED_DUE_TO_ERRORS}: {limit} consecutive scheduled refreshes failed"
            f" (last: {outcome.message or 'no message'})"
        )
        self._suspend(name, reason)
        for downstream in graph.all_downstream(name):
            if not graph.nodes[downstream].suspended:
                self._suspend(downstream, f"{UPSTREAM_SUSPENDED_DUE_TO_ERRORS}: {name}")

    def _suspend(self, name: str, reason: str) -> None:
        self.runner.suspend(name, reason)
        self._failures[name] = 0
        event = Event("suspend", self._tick_now, name, outcome=Outcome(SKIPPED, reason))
        self._emit(event)

    def _emit(self, event: Event) -> None:
        if self.listener is not None:
            self.listener(event)


def to_datetime(epoch_seconds: float) -> datetime.datetime:
    """Epoch seconds as a naive UTC timestamp (how timestamps are stored here)."""
    moment = datetime.datetime.fromtimestamp(epoch_seconds, tz=datetime.timezone.utc)
    return moment.replace(tzinfo=None)


def to_epoch(moment: datetime.datetime) -> float:
    """A (naive = UTC) timestamp as epoch seconds."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.timezone.utc)
    return moment.timestamp()


def _text(epoch_seconds: float) -> str:
    return to_datetime(epoch_seconds).isoformat(sep=" ", timespec="milliseconds")
