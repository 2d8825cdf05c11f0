"""``python -m reliability.worker``: one worker process of the embedded harness.

A fresh interpreter (delta-rs must never be forked). It imports everything, installs the
kill points (``killpoints``), says it is ready, and waits for its go file: the barrier of a
concurrency round, and the moment a kill trial starts (the driver spawns the next worker
while it checks the last one). The go file holds the plan: where to kill itself, if
anywhere.

Then it loops: refresh every dynamic table (in a random order) with ``ALTER DYNAMIC TABLE
… REFRESH``, run a scheduler tick (``Service.run_once``, the path of ``dyntables scheduler
run --once``), and run ``OPTIMIZE`` on a dynamic table or on ``src``, with compaction after
nearly every commit (``COMPACT_AT_FILES = 3``, ``CHECK_EVERY = 1``). Every error is logged
to the progress file at once (``ERR`` lines: a SIGKILL loses none) and in the results file
at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from .invariants import error_record
from .killpoints import Killer, KillSwitch, KillTarget
from .workload import DYNAMIC_TABLES

GO_TIMEOUT_SECONDS = 600.0
LEASE_SECONDS = 2.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="reliability.worker")
    parser.add_argument("--warehouse", required=True)
    parser.add_argument("--progress", required=True)
    parser.add_argument("--go", required=True)
    parser.add_argument("--ready")
    parser.add_argument("--results", required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--iterations", type=int, default=6)
    parser.add_argument("--sleep", type=float, default=0.0, help="longest nap between steps")
    args = parser.parse_args(argv)

    progress_fd = os.open(args.progress, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    rng = random.Random(args.seed)
    killer = Killer()  # before delta-rs is loaded
    # Everything is imported (and the parser loaded) before the barrier.
    import dyntables
    from dyntables import DynamicTables, compaction

    dyntables.parse("ALTER DYNAMIC TABLE warm_up REFRESH")
    switch = KillSwitch(progress_fd, None, rng, killer)
    switch.install()
    if args.ready:
        _write_atomically(Path(args.ready), str(os.getpid()))
    plan = _wait_for(Path(args.go))
    if plan is None:
        return 3
    switch.target = KillTarget.from_json(plan.get("kill"))
    switch.log("GO")
    compaction.COMPACT_AT_FILES = 3
    compaction.CHECK_EVERY = 1

    outcomes: Counter[str] = Counter()
    errors: list[dict[str, Any]] = []

    def failed(where: str, failure: BaseException) -> None:
        error = error_record(where, failure)
        errors.append(error)
        switch.log("ERR " + json.dumps(error))

    def nap() -> None:
        if args.sleep > 0:
            time.sleep(rng.uniform(0.0, args.sleep))

    dt = DynamicTables(warehouse=args.warehouse)
    service = dt.scheduler_service(
        lease_seconds=LEASE_SECONDS,
        poll_seconds=0.5,
    )
    for _ in range(args.iterations):
        names = list(DYNAMIC_TABLES)
        rng.shuffle(names)
        for name in names:
            switch.step(f"refresh {name}")
            try:
                row = dt.sql(f"ALTER DYNAMIC TABLE {name} REFRESH").collect()[0]
                outcomes[f"refresh {row['state']} {row['action']}"] += 1
            except Exception as failure:
                failed(f"refresh {name}", failure)
            nap()
        if rng.random() < 0.6:
            switch.step("scheduler tick")
            try:
                holder = service.run_once()
                outcomes["scheduler tick" if holder is None else "scheduler standby"] += 1
            except Exception as failure:
                failed("scheduler tick", failure)
            nap()
        if rng.random() < 0.6:
            target = rng.choice(["src", *DYNAMIC_TABLES])
            switch.step(f"optimize {target}")
            try:
                dt.sql(f"OPTIMIZE {target}").collect()
                outcomes["optimize"] += 1
            except Exception as failure:
                failed(f"optimize {target}", failure)
            nap()
    switch.step("done")
    results = {"outcomes": dict(outcomes), "errors": errors, "events": switch.sequence}
    _write_atomically(Path(args.results), json.dumps(results))
    return 0


def _wait_for(go: Path) -> dict[str, Any] | None:
    """The plan in the go file, once the driver wrote it (None: the driver is gone)."""
    deadline = time.monotonic() + GO_TIMEOUT_SECONDS
    parent = os.getppid()
    while not go.exists():
        if time.monotonic() > deadline or os.getppid() != parent:
            return None
        time.sleep(0.005)
    plan: dict[str, Any] = json.loads(go.read_text())
    return plan


def _write_atomically(path: Path, text: str) -> None:
    staged = path.with_name(path.name + f".{os.getpid()}.tmp")
    staged.write_text(text)
    os.replace(staged, path)


if __name__ == "__main__":
    sys.exit(main())
