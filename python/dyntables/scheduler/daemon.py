"""Running the scheduler: ``dyntables scheduler run [--once]`` and ``dt.start()``.

``Service.run(stop)`` holds the catalog's lease (waiting as a standby while another
scheduler holds it), runs ticks until ``stop`` is set, and releases the lease. A stop
lets the refresh in flight finish (it commits, or fails and leaves the table as it was:
every refresh commit is atomic) and abandons the rest of the tick. ``Service.run_once()``
refreshes what is due now and returns, for cron, Airflow or Databricks Jobs.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from typing import TextIO

from dyntables.ddl.lifecycle import Lifecycle
from dyntables.engine import Engine
from dyntables.history import SystemTables
from dyntables.refresh import Refresher
from dyntables.scheduler.core import Clock, Event, Scheduler, SystemClock, to_datetime
from dyntables.scheduler.lease import Lease, LeaseRecord
from dyntables.scheduler.period import SchedulerConfig
from dyntables.scheduler.runner import EngineRunner

log = logging.getLogger("dyntables.scheduler")


class Progress:
    """Progress of ticks: a one-line bar on a terminal, log lines otherwise (a refresh
    that takes longer than ``slow_seconds`` is logged when it starts and ends)."""

    def __init__(self, out: TextIO | None = None, slow_seconds: float = 5.0) -> None:
        self.out = out
        self.slow_seconds = slow_seconds
        self._started: dict[str, float] = {}

    @property
    def terminal(self) -> bool:
        return self.out is not None and self.out.isatty()

    def __call__(self, event: Event) -> None:
        when = to_datetime(event.tick).isoformat(sep=" ", timespec="milliseconds")
        if event.kind == "start" and event.name is not None:
            self._started[event.name] = time.monotonic()
            if self.terminal:
                self._bar(event, f"refreshing {event.name}")
        elif event.kind == "end" and event.name is not None and event.outcome is not None:
            took = time.monotonic() - self._started.pop(event.name, time.monotonic())
            outcome = event.outcome
            detail = outcome.action or outcome.message or ""
            line = f"tick {when}: {event.name} {outcome.state} {detail} ({took:.1f} s)"
            if self.terminal:
                self._bar(event, f"{event.name} {outcome.state}")
                if event.position == event.total:
                    self._write("\n")
            if outcome.state != "SUCCEEDED" or took >= self.slow_seconds or not self.terminal:
                log.info(line)
        elif event.kind in ("skip", "suspend") and event.outcome is not None:
            log.warning("tick %s: %s %s", when, event.name, event.outcome.message)

    def _bar(self, event: Event, text: str) -> None:
        width = 20
        done = event.position - (0 if event.kind == "end" else 1)
        filled = width * done // max(event.total, 1)
        bar = "#" * filled + "-" * (width - filled)
        self._write(f"\r[{bar}] {done}/{event.total} {text[:60]:<60}")

    def _write(self, text: str) -> None:
        assert self.out is not None
        self.out.write(text)
        self.out.flush()


class Service:
    """The scheduler of one engine, with its lease.

    It takes the collaborators its runner and lease use (see ``EngineRunner``), so that
    whoever builds it (``DynamicTables.start``, the CLI, a test) wires them in.
    """

    def __init__(
        self,
        engine: Engine,
        system: SystemTables,
        lifecycle: Lifecycle,
        refresher: Refresher,
        *,
        config: SchedulerConfig | None = None,
        clock: Clock | None = None,
        lease_seconds: float = 30.0,
        poll_seconds: float = 5.0,
        progress: Progress | None = None,
    ) -> None:
        self.config = config or SchedulerConfig()
        self.clock = clock or SystemClock()
        self.poll_seconds = poll_seconds
        self.progress = progress or Progress(None)
        self.runner = EngineRunner(
            engine, system, lifecycle, refresher, self.config.max_consecutive_failures
        )
        self.lease = Lease(engine, system, self.clock, lease_seconds)
        self.scheduler = Scheduler(self.runner, self.clock, self.config, self.progress)
        self.scheduler.may_continue = self._keep_lease

    def _keep_lease(self) -> bool:
        """Before each refresh: renew the lease when due (so a long tick keeps it); a lost
        lease abandons the rest of the tick to the scheduler that holds it now."""
        if self.lease.held() and not self.lease.renewal_due():
            return True
        holder = self.lease.acquire()
        if holder is not None:
            log.warning("lost the scheduler lease to %s", holder.describe())
        return holder is None

    def run(self, stop: threading.Event) -> None:
        """Run until ``stop`` is set: standby while another scheduler holds the lease."""
        self.scheduler.stopping = stop
        waiting_for: str | None = None
        announced = False
        try:
            while not stop.is_set():
                if not self.lease.held() or self.lease.renewal_due():
                    holder = self.lease.acquire()
                    if holder is not None:
                        if holder.holder != waiting_for:
                            log.info(
                                "standby: the scheduler lease is held by %s", holder.describe()
                            )
                            waiting_for = holder.holder
                        self.clock.wait(self._standby_wait(holder), stop)
                        continue
                    if waiting_for is not None or not announced:
                        log.info("active: holding the scheduler lease as %s", self.lease.holder)
                        waiting_for, announced = None, True
                try:
                    self.scheduler.run_due()
                except Exception:  # the catalog or history could not be read: try again
                    log.exception("the tick failed before its refreshes; retrying")
                self.clock.wait(self._next_wait(), stop)
        finally:
            self.lease.release()

    def run_once(self) -> LeaseRecord | None:
        """Refresh what is due now; None when done, else the lease's other holder."""
        holder = self.lease.acquire()
        if holder is not None:
            return holder
        try:
            self.scheduler.run_due()
        finally:
            self.lease.release()
        return None

    def _standby_wait(self, holder: LeaseRecord) -> float:
        remaining = holder.expires_at - self.clock.now()
        return min(max(remaining, 0.05), self.lease.duration / 3, self.poll_seconds)

    def _next_wait(self) -> float:
        now = self.clock.now()
        wake = self.scheduler.next_wakeup()
        wait = self.poll_seconds if wake is None else wake - now
        return max(min(wait, self.poll_seconds, self.lease.duration / 3), 0.0)


class Background:
    """``dt.start()``: the service in a daemon thread of this process."""

    def __init__(self, service: Service) -> None:
        self.service = service
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self._run, name="dyntables-scheduler", daemon=True)
        self.error: BaseException | None = None

    def start(self) -> None:
        self.thread.start()

    def _run(self) -> None:
        try:
            self.service.run(self.stop_event)
        except BaseException as failure:  # kept for stop() to report
            self.error = failure
            log.exception("the scheduler stopped on an error")

    def stop(self, timeout: float | None = None) -> None:
        self.stop_event.set()
        self.thread.join(timeout)

    @property
    def running(self) -> bool:
        return self.thread.is_alive()


def log_to(stream: TextIO = sys.stderr, level: int = logging.INFO) -> None:
    """Send the scheduler's log lines to ``stream`` (the CLI's choice)."""
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    log.addHandler(handler)
    log.setLevel(level)
