"""Crashes and concurrent refreshers never lose, duplicate or double-apply a change
(DESIGN.md §3), on the embedded engine, with real processes and real SIGKILLs.

The profile (``DYNTABLES_RELIABILITY_PROFILE``: ``short`` by default, ``long`` in ``make
test-reliability``) sets the counts; the figures go to the terminal summary and to a JSON
file in each test's tmp dir.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from .harness import run_concurrency_rounds, run_kill_trials, run_scheduler_starts
from .profile import Profile
from .report import publish, violation_report

pytestmark = pytest.mark.embedded


def test_a_sigkill_at_any_point_loses_and_duplicates_nothing(
    tmp_path: Path, profile: Profile, seed: int, request: pytest.FixtureRequest
) -> None:
    figures, violations = run_kill_trials(tmp_path, profile, random.Random(seed))
    report = {"seed": seed, **figures.to_json()}
    publish(request.config, f"kill trials, {profile.name} profile", report, tmp_path / "kills.json")
    assert not violations.distinct, violation_report(violations.distinct, violations.seen)
    assert figures.kills_done >= profile.kills, (
        f"{figures.kills_done} of {profile.kills} kills landed in {figures.attempts} attempts"
    )


def test_concurrent_refreshers_give_one_right_answer(
    tmp_path: Path, profile: Profile, seed: int, request: pytest.FixtureRequest
) -> None:
    figures, violations = run_concurrency_rounds(tmp_path, profile, random.Random(seed))
    report = {"seed": seed, **figures.to_json()}
    publish(
        request.config,
        f"concurrency rounds, {profile.name} profile",
        report,
        tmp_path / "rounds.json",
    )
    assert not violations.distinct, violation_report(violations.distinct, violations.seen)
    assert figures.rounds == profile.rounds


def test_two_schedulers_started_together_on_a_fresh_warehouse(
    tmp_path: Path, profile: Profile, request: pytest.FixtureRequest
) -> None:
    figures, violations = run_scheduler_starts(tmp_path, profile)
    publish(
        request.config,
        f"scheduler pairs, {profile.name} profile",
        figures.to_json(),
        tmp_path / "schedulers.json",
    )
    assert not violations.distinct, violation_report(violations.distinct, violations.seen)
    assert figures.starts == profile.scheduler_starts
