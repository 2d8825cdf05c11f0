"""The scheduling core on simulated time: the seed's schedule, DOWNSTREAM, skips, auto-suspend,
and properties over random graphs of dynamic tables."""

from __future__ import annotations

import io
import itertools
import logging
import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scheduler_sim import SEED_START, Entry, FakeRunner, SimClock

from dyntables.errors import DynamicTableError
from dyntables.scheduler.core import (
    FAILED,
    SKIPPED,
    SUCCEEDED,
    SUSPENDED_DUE_TO_ERRORS,
    UPSTREAM_FAILED,
    UPSTREAM_SUSPENDED_DUE_TO_ERRORS,
    Event,
    Outcome,
    Scheduler,
)
from dyntables.scheduler.daemon import Progress
from dyntables.scheduler.period import SchedulerConfig, refresh_period
from dyntables.scheduler.plan import Graph, Node

CONFIG = SchedulerConfig()


def simulate(runner: FakeRunner, clock: SimClock, config: SchedulerConfig = CONFIG) -> Scheduler:
    scheduler = Scheduler(runner, clock, config)
    scheduler.run_until(threading.Event(), poll_seconds=3600)
    return scheduler


def offsets(ticks: list[float]) -> list[float]:
    return [tick - SEED_START for tick in ticks]


# ---- periods ----


def test_the_seeds_lags_of_two_and_one_minutes_refresh_every_96_and_48_seconds() -> None:
    assert refresh_period(120, CONFIG) == 96
    assert refresh_period(60, CONFIG) == 48


@pytest.mark.parametrize("lag", [1, 2, 3, 5, 7, 10, 45, 60, 61, 90, 600, 3600, 86400, 7 * 86400])
def test_a_period_is_canonical_and_leaves_a_fifth_of_the_lag_for_the_refresh(lag: int) -> None:
    period = refresh_period(lag, CONFIG)
    ratio = period / CONFIG.base_period_seconds
    assert ratio == 2.0 ** round(__import__("math").log2(ratio))  # base · 2**k
    assert period <= 0.8 * lag < 2 * period


def test_periods_divide_one_another_so_slower_refreshes_coincide_with_faster_ones() -> None:
    periods = sorted({refresh_period(lag, CONFIG) for lag in range(1, 5000, 7)})
    for shorter, longer in itertools.pairwise(periods):
        assert longer % shorter == 0


def test_the_base_and_minimum_are_configurable() -> None:
    snowflake = SchedulerConfig(base_period_seconds=48, min_target_lag_seconds=60)
    with pytest.raises(DynamicTableError, match="shorter than the scheduler's minimum of 60 s"):
        refresh_period(30, snowflake)
    assert refresh_period(60, SchedulerConfig(base_period_seconds=50)) == 25
    # The scheduler runs a lag under the minimum at the minimum's period.
    graph = Graph.of([Node("fast", (), 1)])
    assert graph.periods(snowflake) == {"fast": 48}


# ---- the seed's schedule ----


def test_the_seeds_schedule_a_every_96_s_and_b_every_48_s_at_common_ticks() -> None:
    clock = SimClock(SEED_START, end=SEED_START + 150)
    nodes = [Node("a", ("b",), 120), Node("b", (), 60)]
    runner = FakeRunner(clock, nodes, refreshed_until={"a": SEED_START - 1, "b": SEED_START - 1})
    simulate(runner, clock)
    # 00:00:00 A, B; 00:00:48 B; 00:01:36 A, B; 00:02:24 B
    assert offsets(runner.ticks("a")) == [0, 96]
    assert offsets(runner.ticks("b")) == [0, 48, 96, 144]
    for entry in runner.ran("a"):  # A read B as refreshed at the same tick
        assert entry.read == {"b": entry.tick}
    order = [(e.tick, e.name) for e in runner.log]
    assert order.index((SEED_START, "b")) < order.index((SEED_START, "a"))


# ---- DOWNSTREAM: the seed's four rows ----


def seed_row(dt1_lag: float | None, dt2_lag: float | None) -> FakeRunner:
    clock = SimClock(SEED_START, end=SEED_START + 3 * 600)
    nodes = [Node("dt1", (), dt1_lag), Node("dt2", ("dt1",), dt2_lag)]
    runner = FakeRunner(clock, nodes, refreshed_until={"dt1": SEED_START, "dt2": SEED_START})
    simulate(runner, clock)
    return runner


def test_downstream_upstream_refreshes_exactly_when_its_consumer_does() -> None:
    runner = seed_row(None, 600)
    assert runner.ticks("dt2")
    assert runner.ticks("dt1") == runner.ticks("dt2")
    ticks = runner.ticks("dt2")
    assert all(b - a == refresh_period(600, CONFIG) for a, b in itertools.pairwise(ticks))


def test_downstream_table_with_no_time_lagged_consumer_is_never_refreshed() -> None:
    runner = seed_row(600, None)
    assert runner.ticks("dt2") == []
    assert len(runner.ticks("dt1")) >= 4


def test_slower_consumer_refreshes_with_data_its_faster_upstream_refreshed_at_the_same_tick() -> (
    None
):
    runner = seed_row(300, 600)
    assert set(runner.ticks("dt2")) < set(runner.ticks("dt1"))
    for tick in runner.ticks("dt1"):
        assert (tick - SEED_START) % refresh_period(300, CONFIG) == 0
    for entry in runner.ran("dt2"):
        assert entry.read == {"dt1": entry.tick}


def test_two_downstream_tables_are_never_refreshed() -> None:
    runner = seed_row(None, None)
    assert runner.log == []


# ---- skips and auto-suspend ----


def test_ticks_that_pass_during_a_long_refresh_are_skipped_and_caught_up() -> None:
    clock = SimClock(SEED_START, end=SEED_START + 60)
    runner = FakeRunner(
        clock,
        [Node("slow", (), 10)],  # period 6 s; each refresh takes 14 s
        duration=lambda name, tick: 14.0,
        refreshed_until={"slow": SEED_START - 1},
    )
    simulate(runner, clock)
    # Each refresh runs at the latest tick when the previous one ends: tick 0 ends at 14 s,
    # tick 12 at 28 s, tick 24 at 42 s, tick 42 at 56 s, then tick 54.
    ran = runner.ran("slow")
    for entry in ran:
        assert entry.tick <= entry.start < entry.tick + 6
    assert offsets([e.tick for e in ran]) == [0, 12, 24, 42, 54]
    skipped = [e for e in runner.log if e.state == SKIPPED]
    assert offsets([e.tick for e in skipped]) == [6, 18, 36, 48]  # one row for 30 and 36
    assert all("previous refresh was still running" in str(e.message) for e in skipped)
    assert "at 2 ticks from 2022-12-01 00:00:30.000 to 2022-12-01 00:00:36.000" in str(
        skipped[2].message
    )


def test_failing_table_is_suspended_after_five_failures_with_everything_downstream() -> None:
    clock = SimClock(SEED_START, end=SEED_START + 200)
    nodes = [Node("a", (), 10), Node("b", ("a",), 10), Node("c", ("b",), 20), Node("x", (), 10)]
    runner = FakeRunner(clock, nodes, fails=lambda name, tick: name == "a")
    simulate(runner, clock)
    assert len(runner.ticks("a", FAILED)) == 5
    assert runner.ticks("b", UPSTREAM_FAILED) == runner.ticks("a", FAILED)
    reasons = {name: reason for name, (_, reason) in runner.suspended.items()}
    assert reasons["a"].startswith(f"{SUSPENDED_DUE_TO_ERRORS}: 5 consecutive")
    assert reasons["b"] == f"{UPSTREAM_SUSPENDED_DUE_TO_ERRORS}: a"
    assert reasons["c"] == f"{UPSTREAM_SUSPENDED_DUE_TO_ERRORS}: a"
    last_failure = runner.ticks("a", FAILED)[-1]
    assert all(e.tick <= last_failure for e in runner.log if e.name in "abc")
    assert max(runner.ticks("x")) > SEED_START + 190  # the rest goes on


def test_failures_must_be_consecutive_to_suspend() -> None:
    clock = SimClock(SEED_START, end=SEED_START + 300)
    failing = {SEED_START + 6 * i for i in range(20) if i % 5 != 4}  # four in a row at most
    runner = FakeRunner(clock, [Node("a", (), 10)], fails=lambda name, tick: tick in failing)
    simulate(runner, clock)
    assert runner.suspended == {}


def test_a_suspended_upstream_skips_its_consumers_without_refreshing() -> None:
    clock = SimClock(SEED_START, end=SEED_START + 30)
    nodes = [Node("a", (), 10, suspended=True), Node("b", ("a",), 10)]
    runner = FakeRunner(clock, nodes)
    simulate(runner, clock)
    assert runner.ran("a") == []
    assert runner.ran("b") == []
    skips = [e for e in runner.log if e.name == "b"]
    assert skips
    assert all(e.state == SKIPPED and "a is suspended" in (e.message or "") for e in skips)


# ---- properties over random graphs ----

LAGS = [None, 1, 2, 5, 10, 30, 60, 120]


@st.composite
def graphs(draw: st.DrawFn) -> list[Node]:
    """Random DAGs of dynamic tables whose lags obey the lag rule."""
    count = draw(st.integers(1, 6))
    nodes: list[Node] = []
    for index in range(count):
        upstreams = tuple(
            sorted(draw(st.sets(st.sampled_from([n.name for n in nodes]), max_size=2)))
            if nodes
            else ()
        )
        lag = draw(st.sampled_from(LAGS))
        upstream_lags = [n.lag_seconds for n in nodes if n.name in upstreams]
        floor = max([u for u in upstream_lags if u is not None], default=0)
        if lag is not None:
            lag = max(lag, floor)
        nodes.append(Node(f"t{index}", upstreams, lag))
    return nodes


def time_lagged_consumer(graph: Graph, name: str) -> bool:
    return any(graph.nodes[d].lag_seconds is not None for d in graph.all_downstream(name))


def check_snapshot_isolation(runner: FakeRunner, graph: Graph) -> None:
    """Every refresh that ran read each upstream as refreshed at its own tick, upstream
    first; tables that did not run say why."""
    by_key = {(e.name, e.tick): e for e in runner.log if e.state in (SUCCEEDED, FAILED)}
    for entry in runner.log:
        if entry.state in (SUCCEEDED, FAILED):
            assert entry.read == {u: entry.tick for u in graph.upstreams(entry.name)}
            for upstream in graph.upstreams(entry.name):
                before = by_key[(upstream, entry.tick)]
                assert before.state == SUCCEEDED
                assert before.end <= entry.start
        elif entry.state == UPSTREAM_FAILED:
            assert any(
                (e.name, e.tick) in {(u, entry.tick) for u in graph.upstreams(entry.name)}
                and e.state in (FAILED, UPSTREAM_FAILED)
                for e in runner.log
            )


@given(nodes=graphs(), seed=st.integers(0, 10**6))
def test_fast_refreshes_keep_every_table_within_its_lag_at_aligned_ticks(
    nodes: list[Node], seed: int
) -> None:
    graph = Graph.of(nodes)
    periods = graph.periods(CONFIG)
    horizon = 4 * max(periods.values(), default=1.0) + 1
    clock = SimClock(SEED_START, end=SEED_START + horizon)
    # Fast enough: one tick's refreshes together take under a fifth of the shortest lag.
    budget = 0.19 * min((n.lag_seconds for n in nodes if n.lag_seconds), default=1.0)
    per_refresh = budget / len(nodes)
    runner = FakeRunner(
        clock,
        nodes,
        duration=lambda name, tick: per_refresh * ((hash((seed, name, tick)) % 100) / 100),
        refreshed_until={n.name: SEED_START - 1e-3 for n in nodes},
    )
    simulate(runner, clock)
    assert all(e.state == SUCCEEDED for e in runner.log)
    keys = [(e.name, e.tick) for e in runner.log]
    assert len(keys) == len(set(keys)), "a table refreshed twice at one tick"
    check_snapshot_isolation(runner, graph)
    for name, node in graph.nodes.items():
        entries = runner.ran(name)
        if node.lag_seconds is None:
            if not time_lagged_consumer(graph, name):
                assert entries == []  # DOWNSTREAM with no time-lagged consumer
            continue
        period = periods[name]
        for entry in entries:  # aligned: its own tick, or one a consumer needed it at
            consumers = {e.name for e in runner.log if e.tick == entry.tick}
            assert entry.tick % period == 0 or consumers & set(graph.all_downstream(name))
        # Within the lag: from each refresh's data timestamp to the next one landing.
        ends = [(e.tick, e.end) for e in entries]
        for (tick, _), (_, next_end) in itertools.pairwise(ends):
            assert next_end - tick <= node.lag_seconds
        assert clock.now() - ends[-1][0] <= node.lag_seconds + 1e-3


@given(
    nodes=graphs(),
    seed=st.integers(0, 10**6),
    slowness=st.floats(0.0, 3.0),
    failure_rate=st.sampled_from([0.0, 0.2, 0.6, 1.0]),
)
def test_slow_and_failing_refreshes_skip_but_never_break_snapshot_isolation(
    nodes: list[Node], seed: int, slowness: float, failure_rate: float
) -> None:
    graph = Graph.of(nodes)
    periods = graph.periods(CONFIG)
    grid = min(periods.values(), default=1.0)
    horizon = 6 * max(periods.values(), default=1.0) + 1
    clock = SimClock(SEED_START, end=SEED_START + horizon)

    def draw(name: str, tick: float, salt: int) -> float:
        return (hash((seed, name, tick, salt)) % 1000) / 1000

    runner = FakeRunner(
        clock,
        nodes,
        duration=lambda name, tick: slowness * grid * draw(name, tick, 1),
        fails=lambda name, tick: draw(name, tick, 2) < failure_rate,
    )
    simulate(runner, clock)
    keys = [(e.name, e.tick) for e in runner.log if e.state in (SUCCEEDED, FAILED)]
    assert len(keys) == len(set(keys)), "a table refreshed twice at one tick"
    assert all(e.tick % grid == 0 for e in runner.log)
    check_snapshot_isolation(runner, graph)
    # Ticks are processed in order, never late ones after later ones.
    ticks = [e.tick for e in runner.log if e.state != SKIPPED or "catch up" not in str(e.message)]
    assert ticks == sorted(ticks)
    # Auto-suspend: five failures in a row suspend a table and everything downstream.
    for name in graph.nodes:
        states = [e.state for e in runner.ran(name)]
        streak = _longest_failure_streak(states)
        assert streak <= CONFIG.max_consecutive_failures
        if streak == CONFIG.max_consecutive_failures:
            assert states[-1] == FAILED
            assert name in runner.suspended
            at, _ = runner.suspended[name]
            for downstream in graph.all_downstream(name):
                assert downstream in runner.suspended
                assert all(e.start <= at for e in runner.ran(downstream))


def _longest_failure_streak(states: list[str]) -> int:
    longest = current = 0
    for state in states:
        current = current + 1 if state == FAILED else 0
        longest = max(longest, current)
    return longest


def test_entries_compare_by_value() -> None:
    assert Entry("a", 1.0, 0.0, 0.0, SUCCEEDED) == Entry("a", 1.0, 0.0, 0.0, SUCCEEDED)


# ---- progress ----


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def tick_events(progress: Progress) -> None:
    progress(Event("tick", SEED_START, total=2))
    for position, name in enumerate(["db.a", "db.b"], start=1):
        progress(Event("start", SEED_START, name, position, 2))
        progress(Event("end", SEED_START, name, position, 2, Outcome(SUCCEEDED, action="FULL")))


def test_progress_is_a_bar_on_a_terminal() -> None:
    terminal = Terminal()
    tick_events(Progress(terminal))
    shown = terminal.getvalue()
    assert "[----------" in shown
    assert "[##########----------] 1/2 db.a SUCCEEDED" in shown
    assert shown.endswith("\n")
    assert "[####################] 2/2 db.b SUCCEEDED" in shown


def test_progress_is_log_lines_elsewhere(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="dyntables.scheduler"):
        tick_events(Progress(io.StringIO()))
    assert [r.getMessage().split(" (")[0] for r in caplog.records] == [
        "tick 2022-12-01 00:00:00.000: db.a SUCCEEDED FULL",
        "tick 2022-12-01 00:00:00.000: db.b SUCCEEDED FULL",
    ]


def test_a_tick_is_abandoned_when_the_scheduler_may_not_continue() -> None:
    clock = SimClock(SEED_START, end=SEED_START + 20)
    nodes = [Node("a", (), 10), Node("b", ("a",), 10)]
    runner = FakeRunner(clock, nodes, refreshed_until={"a": SEED_START - 1, "b": SEED_START - 1})
    scheduler = Scheduler(runner, clock, CONFIG)
    scheduler.may_continue = lambda: len(runner.log) < 1  # e.g. the lease was lost
    scheduler.run_due()
    assert [(e.name, e.state) for e in runner.log] == [("a", SUCCEEDED)]
    assert scheduler.run_due() is None  # the abandoned tick is never run again
