"""How much the harness does: ``DYNTABLES_RELIABILITY_PROFILE`` = ``short`` | ``long``.

``short`` runs inside ``make test`` (a few minutes at most on a busy 2-core machine);
``long`` is ``make test-reliability``, the bar: at least 100 SIGKILLs, 20 concurrency
rounds and 20 scheduler pairs started together. Timeouts here only bound hangs; nothing
asserts on a duration.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

PROFILE_VARIABLE = "DYNTABLES_RELIABILITY_PROFILE"


@dataclass(frozen=True)
class Profile:
    name: str
    kills: int  # SIGKILLs of a refreshing worker, each followed by the checks
    rounds: int  # concurrency rounds
    workers_per_round: int
    iterations_per_round: int  # refresh passes over every table, per worker and round
    scheduler_starts: int  # pairs of schedulers started together on a fresh warehouse
    # How long a scheduler pair must stay up (the bar: no crash within about 5 s).
    scheduler_watch_seconds: float = 5.0
    # Bounds on hangs only: a worker or round that exceeds them is reported as a hang.
    worker_timeout_seconds: float = 180.0
    round_timeout_seconds: float = 300.0


PROFILES = {
    "short": Profile(
        "short",
        kills=8,
        rounds=2,
        workers_per_round=3,
        iterations_per_round=3,
        scheduler_starts=3,
    ),
    "long": Profile(
        "long",
        kills=100,
        rounds=20,
        workers_per_round=3,
        iterations_per_round=4,
        scheduler_starts=20,
    ),
}


def current_profile() -> Profile:
    name = os.environ.get(PROFILE_VARIABLE, "short").strip().lower() or "short"
    if name not in PROFILES:
        raise ValueError(f"{PROFILE_VARIABLE}={name!r}: expected one of {', '.join(PROFILES)}")
    return PROFILES[name]
