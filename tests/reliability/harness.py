"""The embedded driver: kill trials, concurrency rounds and scheduler starts on a warehouse
shared by real worker processes (``worker``), with the checks of ``invariants`` after each.

Kill trials: one worker at a time refreshes, ticks the scheduler and compacts while the
driver lands source changes; it is SIGKILLed at a random moment, or kills itself at a
chosen commit point (``killpoints``). The driver then checks, with a fresh
``DynamicTables``: the invariants as the kill left the tables, one refresh of every table
(each must succeed), that the scheduler lease frees itself, and the invariants again. A
table found wrong is dropped and created afresh, and a source whose rows drifted from the
model is taken as it is, so that each trial stands on its own; every violation is kept
with the kill point of its trial.

Concurrency rounds: several workers released together by a file barrier refresh and
compact the same tables while the driver lands changes; a refresh that loses must raise
``DynamicTableError`` and say so in words.

Scheduler starts: two ``dyntables scheduler run`` processes started at once on a fresh,
empty warehouse must both stay up, and both exit 0 on SIGTERM.
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dyntables import DynamicTables

from .invariants import Checker, CheckResult, Violation, judge_refresh_error
from .killpoints import (
    CHECKPOINT,
    COMPACTION,
    HISTORY_APPEND,
    LEASE_WRITE,
    LOG_LINK,
    REFRESH_COMMIT,
    WATERMARK_ONLY,
    KillTarget,
    parse_progress,
    point_of,
)
from .profile import Profile
from .workload import (
    DYNAMIC_TABLES,
    SOURCES,
    Lander,
    SourceModel,
    create_workload,
    dynamic_table_statement,
)

TESTS_FOLDER = Path(__file__).resolve().parents[1]
DATABASE = "default"
LEASE_SECONDS = 2.0
# Commit points aimed at, most telling first (the short profile takes the first few).
AIMED = (
    (REFRESH_COMMIT, "after"),  # between the data commit and the history append
    (WATERMARK_ONLY, "after"),
    (COMPACTION, "during"),
    (LEASE_WRITE, "after"),
    (HISTORY_APPEND, "before"),
    (LOG_LINK, "before"),  # a commit file staged, not yet put into the log
    (CHECKPOINT, "during"),
    (REFRESH_COMMIT, "during"),
    (WATERMARK_ONLY, "before"),
    (COMPACTION, "after"),
    (LEASE_WRITE, "during"),
    (HISTORY_APPEND, "after"),
    (LOG_LINK, "after"),
    (CHECKPOINT, "after"),
    (REFRESH_COMMIT, "before"),
    (COMPACTION, "before"),
)


# ---- worker processes ----


class WorkerProcess:
    """One ``python -m reliability.worker``, waiting for its go file."""

    def __init__(
        self,
        folder: Path,
        warehouse: Path,
        name: str,
        *,
        go: Path,
        seed: int,
        iterations: int,
        sleep: float = 0.0,
        ready: bool = False,
    ) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.name = name
        self.go_file = go
        self.progress_file = folder / f"{name}.progress"
        self.results_file = folder / f"{name}.results.json"
        self.log_file = folder / f"{name}.log"
        self.ready_file = folder / f"{name}.ready" if ready else None
        command = [
            sys.executable,
            "-m",
            "reliability.worker",
            "--warehouse",
            str(warehouse),
            "--progress",
            str(self.progress_file),
            "--go",
            str(go),
            "--results",
            str(self.results_file),
            "--seed",
            str(seed),
            "--iterations",
            str(iterations),
            "--sleep",
            str(sleep),
        ]
        if self.ready_file is not None:
            command += ["--ready", str(self.ready_file)]
        environment = dict(os.environ)
        environment["PYTHONPATH"] = os.pathsep.join(
            [str(TESTS_FOLDER), *filter(None, [environment.get("PYTHONPATH")])]
        )
        with self.log_file.open("wb") as log:
            self.process = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, env=environment
            )

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.poll() is None

    def ready(self) -> bool:
        return self.ready_file is not None and self.ready_file.exists()

    def start(self, plan: dict[str, Any]) -> None:
        write_atomically(self.go_file, json.dumps(plan))

    def kill(self) -> None:
        if self.alive():
            os.kill(self.process.pid, signal.SIGKILL)

    def wait(self, timeout: float = 60.0) -> int:
        return self.process.wait(timeout)

    def progress(self) -> dict[str, Any]:
        text = self.progress_file.read_text() if self.progress_file.exists() else ""
        return parse_progress(text)

    def started(self) -> bool:
        return bool(self.progress()["started"])

    def results(self) -> dict[str, Any] | None:
        if not self.results_file.exists():
            return None
        results: dict[str, Any] = json.loads(self.results_file.read_text())
        return results

    def log_tail(self, lines: int = 25) -> str:
        text = self.log_file.read_text(errors="replace") if self.log_file.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def stop(self) -> None:
        """Kill it if it still runs (nothing outlives a test)."""
        self.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):  # reported by the caller
            self.process.wait(30)


def write_atomically(path: Path, text: str) -> None:
    staged = path.with_name(path.name + ".tmp")
    staged.write_text(text)
    os.replace(staged, path)


def wait_until(condition: Callable[[], bool], timeout: float) -> bool:
    """Whether ``condition`` held within ``timeout`` seconds (a bound on hangs only)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


# ---- the warehouse ----


@dataclass
class Warehouse:
    """The shared warehouse, the driver's writer and its model of the sources."""

    path: Path
    rng: random.Random
    writer: DynamicTables = field(init=False)
    model: SourceModel = field(init=False)
    lander: Lander = field(init=False)

    def __post_init__(self) -> None:
        self.writer = DynamicTables(warehouse=self.path)
        self.model = SourceModel(self.rng)
        self.lander = Lander(self.writer.sql, self.writer.session, self.model, tagged=True)

    def create(self) -> None:
        create_workload(self.writer.sql, self.lander, "DELTA")
        # Checkpoints every 5 commits, so that kills land in and around them too.
        tables = [*SOURCES, *DYNAMIC_TABLES, "dyntables_system.refresh_history"]
        for table in tables:
            self.writer.session.sql(
                f"ALTER TABLE {table} SET TBLPROPERTIES ('delta.checkpointInterval' = '5')"
            )

    def land_one(self, *, quiet: bool = False) -> None:
        self.lander.land(self.model.next_change(quiet=quiet))

    def checker(self, context: str) -> Checker:
        """A checker on a fresh ``DynamicTables``: it reads everything from the tables."""
        return Checker(
            DynamicTables(warehouse=self.path), database=DATABASE, model=self.model, context=context
        )

    def repair(self, result: CheckResult) -> list[str]:
        """Make the next trial stand on its own: recreate dynamic tables found wrong, and
        take a source that drifted from the model as it is."""
        repaired = []
        wrong = {v.table for v in result.violations if v.invariant in ("1", "2")}
        for name in sorted(wrong & set(DYNAMIC_TABLES)):
            try:
                self.writer.sql(f"DROP DYNAMIC TABLE IF EXISTS {name}")
                self.writer.sql(dynamic_table_statement(name))
                repaired.append(f"recreated {name}")
            except Exception as failure:
                repaired.append(f"could not recreate {name}: {failure}")
        drifted = {v.table for v in result.violations if v.invariant == "3"}
        for name in sorted(drifted):
            rows = self.writer.session.sql(f"SELECT * FROM {name}").collect()
            found = Counter(tuple(row) for row in rows)
            if name == "src":
                self.model.src = {i: (k, v) for (i, k, v) in found}
            elif name == "dim":
                self.model.dim = dict(found)
            else:
                self.model.scores = found
            repaired.append(f"took {name} as it is")
        return repaired


class Violations:
    """Distinct violations, each with the trials or rounds it was seen in."""

    def __init__(self) -> None:
        self.distinct: list[Violation] = []
        self.seen: dict[Any, list[str]] = collections.defaultdict(list)

    def add(self, violations: list[Violation], where: str) -> list[Violation]:
        """Record ``violations``; the ones not seen before."""
        new = []
        for violation in violations:
            signature = violation.signature()
            if signature not in self.seen:
                self.distinct.append(violation)
                new.append(violation)
            self.seen[signature].append(where)
        return new

    def by_invariant(self) -> dict[str, int]:
        return dict(Counter(v.invariant for v in self.distinct))


# ---- kill trials ----


def kill_plan(count: int, rng: random.Random) -> list[tuple[str, KillTarget | None]]:
    """Half the kills aimed at a kind of commit point, a quarter at the n-th commit of any
    kind, a quarter at a random moment."""
    plan: list[tuple[str, KillTarget | None]] = []
    aimed = 0
    for index in range(count):
        if index % 4 == 1:
            plan.append(("random", None))
        elif index % 4 == 3:
            when = rng.choice(("before", "after", "during"))
            plan.append(("n", KillTarget("n", when, n=rng.randint(1, 80))))
        else:
            kind, when = AIMED[aimed % len(AIMED)]
            plan.append(("aimed", KillTarget("kind", when, kind=kind, k=rng.randint(1, 3))))
            aimed += 1
    return plan


@dataclass
class KillFigures:
    profile: str
    kills_planned: int
    kills_done: int = 0
    attempts: int = 0
    targets_not_reached: int = 0
    kills_by_mode: Counter[str] = field(default_factory=Counter)
    kills_per_phase: Counter[str] = field(default_factory=Counter)
    recoveries_correct: int = 0
    recoveries_with_violations: int = 0
    violations_persisting: int = 0  # earlier trials' violations still there at the last check
    recovery_actions: Counter[str] = field(default_factory=Counter)
    wrong_results: int = 0
    duplicated_rows: int = 0
    violations_by_invariant: dict[str, int] = field(default_factory=dict)
    driver_writes: dict[str, Any] = field(default_factory=dict)
    repairs: list[str] = field(default_factory=list)
    trials: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {key: (dict(v) if isinstance(v, Counter) else v) for key, v in vars(self).items()}


def run_kill_trials(
    folder: Path, profile: Profile, rng: random.Random
) -> tuple[KillFigures, Violations]:
    warehouse = Warehouse(folder / "warehouse", rng)
    warehouse.create()
    figures = KillFigures(profile.name, profile.kills)
    violations = Violations()
    plan = kill_plan(profile.kills, rng)
    workers_folder = folder / "workers"
    spawned = 0

    def spawn() -> WorkerProcess:
        nonlocal spawned
        spawned += 1
        name = f"kill-{spawned:03d}"
        return WorkerProcess(
            workers_folder,
            warehouse.path,
            name,
            go=workers_folder / f"{name}.go",
            seed=rng.randrange(1 << 30),
            iterations=6,
        )

    pending: list[tuple[str, KillTarget | None]] = list(plan)
    retried: set[int] = set()
    next_worker: WorkerProcess | None = spawn()
    try:
        while figures.kills_done < profile.kills and figures.attempts < 3 * profile.kills:
            figures.attempts += 1
            mode, target = pending[figures.kills_done]
            assert next_worker is not None
            worker, next_worker = next_worker, None
            try:
                trial = _kill_trial(worker, warehouse, profile, mode, target, rng)
            finally:
                worker.stop()
            next_worker = spawn()  # it imports while this trial is checked
            if trial["outcome"] == "finished":  # the target was never reached
                figures.targets_not_reached += 1
                if figures.kills_done not in retried and target is not None:
                    retried.add(figures.kills_done)
                    pending[figures.kills_done] = (mode, _sooner(target))
                else:
                    pending[figures.kills_done] = ("random", None)
                figures.trials.append(trial)
                continue
            index = figures.kills_done + 1
            figures.kills_done += 1
            figures.kills_by_mode[mode] += 1
            figures.kills_per_phase[trial["phase"]] += 1
            where = f"kill #{index} ({mode}: {trial['point']})"
            found = list(trial.pop("worker_violations"))
            checked_at = time.monotonic()
            result = CheckResult()
            checker = warehouse.checker(where)
            result.extend(checker.right_after_a_kill())
            recovery = warehouse.checker(where)
            result.extend(recovery.recover())
            result.violations += _lease_frees_itself(recovery.dt, where)
            result.extend(warehouse.checker(where).after_recovery())
            found += result.violations
            figures.recovery_actions.update(result.recovery_actions)
            figures.wrong_results += result.wrong_results
            figures.duplicated_rows += result.duplicated_rows
            trial["seconds_checking"] = round(time.monotonic() - checked_at, 2)
            new = violations.add(found, f"kill #{index}")
            # A violation an earlier trial left (a history row never written) is that
            # trial's; this recovery is judged by what is new.
            if new:
                figures.recoveries_with_violations += 1
            else:
                figures.recoveries_correct += 1
            figures.violations_persisting = len(found) - len(new)
            repairs = warehouse.repair(result)
            figures.repairs += [f"kill #{index}: {repair}" for repair in repairs]
            trial["index"] = index
            trial["violations"] = [v.describe() for v in new]
            trial["violations_seen"] = len(found)
            figures.trials.append(trial)
    finally:
        if next_worker is not None:
            next_worker.stop()
    figures.violations_by_invariant = violations.by_invariant()
    figures.driver_writes = vars(warehouse.lander.figures)
    return figures, violations


def _sooner(target: KillTarget) -> KillTarget:
    """The same kind of kill point, at its first occurrence."""
    if target.by == "n":
        return KillTarget("n", target.when, n=max(1, target.n // 3))
    return KillTarget("kind", target.when, kind=target.kind, k=1)


def _kill_trial(
    worker: WorkerProcess,
    warehouse: Warehouse,
    profile: Profile,
    mode: str,
    target: KillTarget | None,
    rng: random.Random,
) -> dict[str, Any]:
    """Run one worker until it dies (or finishes), landing changes meanwhile."""
    trial: dict[str, Any] = {
        "worker": worker.name,
        "mode": mode,
        "target": target.describe() if target is not None else "a random moment",
    }
    # A quarter of the trials (and every one aimed at a watermark-only move) land only
    # changes that f_dt and j_dt drop: their refreshes then move only their watermarks.
    quiet = (target is not None and target.kind == WATERMARK_ONLY) or rng.random() < 0.25
    trial["changes"] = "quiet" if quiet else "mixed"
    started_at = time.monotonic()
    worker.start({"kill": target.to_json() if target is not None else None})
    deadline = time.monotonic() + profile.worker_timeout_seconds
    kill_at = None
    hung = False
    while worker.alive():
        now = time.monotonic()
        if kill_at is None and mode == "random" and worker.started():
            kill_at = now + rng.uniform(0.05, 2.0)
        if kill_at is not None and now >= kill_at:
            worker.kill()
            break
        if now > deadline:
            hung = True
            worker.kill()
            break
        time.sleep(rng.uniform(0.02, 0.25))
        if worker.alive():
            warehouse.land_one(quiet=quiet)
    returncode = worker.wait()
    trial["seconds_running"] = round(time.monotonic() - started_at, 2)
    progress = worker.progress()
    phase, point = point_of(progress)
    trial.update(returncode=returncode, phase=phase, point=point)
    where = f"{worker.name} ({mode}: {point})"
    found: list[Violation] = []
    if hung:
        found.append(
            Violation(
                "hang",
                worker.name,
                f"the worker ran past {profile.worker_timeout_seconds:.0f} s",
                context=where,
            )
        )
    if returncode == 0:
        trial["outcome"] = "finished"
    elif returncode == -signal.SIGKILL:
        trial["outcome"] = "killed"
    else:
        trial["outcome"] = "crashed"
        found.append(
            Violation(
                "worker",
                worker.name,
                f"exited {returncode} before any kill:\n{worker.log_tail()}",
                context=where,
            )
        )
    for error in progress["errors"]:
        if error["where"].startswith("optimize"):
            continue  # ordinary SQL: the engine's own error is its answer
        found.append(
            Violation(
                "worker",
                error["where"],
                f"failed with no concurrent refresher: {error['class']}: {error['message'][:400]}",
                context=where,
                key=error["message"][:200],
            )
        )
    trial["worker_violations"] = found
    return trial


def _lease_frees_itself(dt: DynamicTables, where: str) -> list[Violation]:
    """A killed scheduler's lease blocks the next one no longer than its own timeout."""
    service = dt.scheduler_service(
        lease_seconds=LEASE_SECONDS,
        poll_seconds=0.5,
    )
    try:
        holder = service.run_once()
        if holder is None:
            return []
        remaining = holder.expires_at - time.time()
        if remaining > LEASE_SECONDS + 1.0:
            detail = f"held by {holder.describe()}, beyond the lease's own {LEASE_SECONDS} s"
            return [Violation("5", "scheduler_lease", detail, "recovery", where)]
        time.sleep(max(remaining, 0.0) + 0.2)
        holder = service.run_once()
    except Exception as failure:
        return [
            Violation("5", "scheduler_lease", f"run_once raised {failure!r}", "recovery", where)
        ]
    if holder is not None:
        detail = f"still held by {holder.describe()} after it expired"
        return [Violation("5", "scheduler_lease", detail, "recovery", where)]
    return []


# ---- concurrency rounds ----


@dataclass
class RoundFigures:
    profile: str
    rounds_planned: int
    rounds: int = 0
    workers: int = 0
    wrong_results: int = 0
    duplicated_rows: int = 0
    refresh_outcomes: Counter[str] = field(default_factory=Counter)
    error_kinds: Counter[str] = field(default_factory=Counter)
    raw_error_messages: list[str] = field(default_factory=list)
    maintenance_errors: Counter[str] = field(default_factory=Counter)
    recovery_actions: Counter[str] = field(default_factory=Counter)
    violations_by_invariant: dict[str, int] = field(default_factory=dict)
    driver_writes: dict[str, Any] = field(default_factory=dict)
    rounds_detail: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {key: (dict(v) if isinstance(v, Counter) else v) for key, v in vars(self).items()}


def run_concurrency_rounds(
    folder: Path, profile: Profile, rng: random.Random
) -> tuple[RoundFigures, Violations]:
    warehouse = Warehouse(folder / "warehouse", rng)
    warehouse.create()
    figures = RoundFigures(profile.name, profile.rounds)
    violations = Violations()
    for number in range(1, profile.rounds + 1):
        where = f"round #{number}"
        found, detail = _concurrency_round(
            folder / f"round-{number:02d}", warehouse, profile, rng, figures
        )
        result = warehouse.checker(where).everything("after-round")
        recovery = warehouse.checker(where)
        recovered = recovery.recover()
        after = warehouse.checker(where).after_recovery()
        for part in (result, recovered, after):
            found += part.violations
        figures.wrong_results += result.wrong_results + after.wrong_results
        figures.duplicated_rows += result.duplicated_rows + after.duplicated_rows
        figures.recovery_actions.update(recovered.recovery_actions)
        figures.rounds += 1
        new = violations.add(found, where)
        detail["violations"] = [v.describe() for v in new]
        figures.rounds_detail.append(detail)
        merged = CheckResult(violations=result.violations + after.violations)
        warehouse.repair(merged)
    figures.violations_by_invariant = violations.by_invariant()
    figures.driver_writes = vars(warehouse.lander.figures)
    return figures, violations


def _concurrency_round(
    folder: Path,
    warehouse: Warehouse,
    profile: Profile,
    rng: random.Random,
    figures: RoundFigures,
) -> tuple[list[Violation], dict[str, Any]]:
    where = f"round {folder.name}"
    go = folder / "go"
    folder.mkdir(parents=True)
    workers = [
        WorkerProcess(
            folder,
            warehouse.path,
            f"worker-{index}",
            go=go,
            seed=rng.randrange(1 << 30),
            iterations=profile.iterations_per_round,
            sleep=0.0 if index == 0 else 0.05,
            ready=True,
        )
        for index in range(profile.workers_per_round)
    ]
    found: list[Violation] = []
    detail: dict[str, Any] = {"round": folder.name}
    try:
        if not wait_until(lambda: all(w.ready() or not w.alive() for w in workers), 120):
            found.append(Violation("hang", "workers", "not ready within 120 s", context=where))
        write_atomically(go, json.dumps({"kill": None}))  # the barrier opens
        deadline = time.monotonic() + profile.round_timeout_seconds
        landed = 0
        while any(w.alive() for w in workers):
            if time.monotonic() > deadline:
                found.append(
                    Violation(
                        "hang",
                        "workers",
                        f"still running after {profile.round_timeout_seconds:.0f} s",
                        context=where,
                    )
                )
                break
            time.sleep(rng.uniform(0.05, 0.25))
            warehouse.land_one()
            landed += 1
        detail["changes_landed"] = landed
    finally:
        for worker in workers:
            worker.stop()
    figures.workers += len(workers)
    for worker in workers:
        returncode = worker.process.returncode
        results = worker.results()
        if returncode != 0 or results is None:
            found.append(
                Violation(
                    "worker",
                    worker.name,
                    f"exited {returncode} (results: {results is not None}):\n{worker.log_tail()}",
                    context=where,
                )
            )
        errors = results["errors"] if results is not None else worker.progress()["errors"]
        if results is not None:
            figures.refresh_outcomes.update(results["outcomes"])
        for error in errors:
            found += _judge_error(error, where, figures)
    return found, detail


def _judge_error(error: dict[str, Any], where: str, figures: RoundFigures) -> list[Violation]:
    """Count an error of a worker; OPTIMIZE is ordinary SQL, its errors are only counted."""
    kind = error["class"].rsplit(".", 1)[-1]
    if error["where"].startswith("optimize"):
        figures.maintenance_errors[kind] += 1
        return []
    figures.error_kinds[kind] += 1
    found = judge_refresh_error(error, where)
    figures.raw_error_messages += [v.detail for v in found if v.invariant == "error-message"]
    return found


# ---- two schedulers started together ----


@dataclass
class StartFigures:
    profile: str
    starts_planned: int
    starts: int = 0
    crashed: int = 0
    unclean_exits: int = 0
    both_active: int = 0  # both logged "active": told, not asserted (timing-dependent)
    starts_detail: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return dict(vars(self))


@contextmanager
def _scheduler_pair(folder: Path) -> Iterator[list[tuple[subprocess.Popen[bytes], Path]]]:
    warehouse = folder / "warehouse"  # does not exist yet: no system tables, nothing
    command = [
        sys.executable,
        "-m",
        "dyntables",
        "scheduler",
        "run",
        "--warehouse",
        str(warehouse),
        "--lease-seconds",
        "3",
        "--poll-seconds",
        "0.5",
    ]
    logs = [folder / "first.log", folder / "second.log"]
    handles = [log.open("wb") for log in logs]
    started: list[tuple[subprocess.Popen[bytes], Path]] = []
    try:
        for handle, log in zip(handles, logs, strict=True):  # back to back: the same instant
            started.append(
                (subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT), log)
            )
        yield started
    finally:
        for process, _ in started:
            if process.poll() is None:
                process.kill()
                process.wait(30)
        for handle in handles:
            handle.close()


def run_scheduler_starts(folder: Path, profile: Profile) -> tuple[StartFigures, Violations]:
    figures = StartFigures(profile.name, profile.scheduler_starts)
    violations = Violations()
    for number in range(1, profile.scheduler_starts + 1):
        where = f"start #{number}"
        pair_folder = folder / f"start-{number:02d}"
        pair_folder.mkdir(parents=True)
        found: list[Violation] = []
        detail: dict[str, Any] = {"start": number}
        with _scheduler_pair(pair_folder) as pair:
            # Watched from the moment both run their loop (their signal handlers are in
            # place then): a busy machine may take many seconds to import them, and a
            # SIGTERM before that ends a process as any process ends, not cleanly.
            _wait_until_running(pair, profile.worker_timeout_seconds)
            deadline = time.monotonic() + profile.scheduler_watch_seconds
            while time.monotonic() < deadline and all(p.poll() is None for p, _ in pair):
                time.sleep(0.1)
            for index, (process, log) in enumerate(pair):
                if process.poll() is not None:
                    figures.crashed += 1
                    found.append(
                        Violation(
                            "scheduler",
                            f"scheduler {index + 1}",
                            f"exited {process.returncode} within"
                            f" {profile.scheduler_watch_seconds:.0f} s:\n{_tail(log)}",
                            context=where,
                            key="early-exit",
                        )
                    )
            for process, _ in pair:
                if process.poll() is None:
                    process.send_signal(signal.SIGTERM)
            for index, (process, log) in enumerate(pair):
                try:
                    code = process.wait(60)
                except subprocess.TimeoutExpired:
                    code = None
                text = log.read_text(errors="replace")
                if code != 0 or "Traceback" in text:
                    figures.unclean_exits += 1
                    found.append(
                        Violation(
                            "scheduler",
                            f"scheduler {index + 1}",
                            f"after SIGTERM: exit {code}, log:\n{_tail(log)}",
                            context=where,
                            key="unclean-exit",
                        )
                    )
            actives = ["active: holding the scheduler lease" in log.read_text() for _, log in pair]
            figures.both_active += all(actives)
            detail["active"] = actives
        figures.starts += 1
        new = violations.add(found, where)
        detail["violations"] = [v.describe() for v in new]
        figures.starts_detail.append(detail)
    return figures, violations


# What a scheduler logs once it runs its loop, active or on standby.
_RUNNING_MARKS = ("active: holding the scheduler lease", "standby: the scheduler lease")


def _wait_until_running(
    pair: list[tuple[subprocess.Popen[bytes], Path]], timeout_seconds: float
) -> None:
    """Wait until each scheduler of ``pair`` has logged that it runs its loop, or has
    exited (the checks after it say so), for at most ``timeout_seconds``."""
    deadline = time.monotonic() + timeout_seconds
    while time.monotonic() < deadline:
        if all(
            process.poll() is not None
            or any(mark in log.read_text(errors="replace") for mark in _RUNNING_MARKS)
            for process, log in pair
        ):
            return
        time.sleep(0.1)


def _tail(log: Path, lines: int = 25) -> str:
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
