"""Target lag → refresh period, from one canonical set aligned to the epoch.

Every period is ``base · 2**k`` for a whole number ``k`` (negative too), so of any two
periods the shorter divides the longer, and ticks are multiples of the period counted from
1970-01-01T00:00:00Z. A dynamic table refreshes at the longest canonical period that is at
most ``fraction`` of its target lag: the rest of the lag is left for the refresh itself
(lag just before a refresh lands = period + refresh time). With the defaults (base 48 s,
fraction 0.8) the seed's lags of 2 and 1 minutes get 96 s and 48 s, so every refresh of
the slower table coincides with one of the faster.

>>> config = SchedulerConfig()
>>> refresh_period(120, config), refresh_period(60, config)
(96.0, 48.0)
>>> refresh_period(5, config), refresh_period(1, config)
(3.0, 0.75)
>>> latest_tick(100.0, 48.0), next_tick(100.0, 48.0)
(96.0, 144.0)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dyntables.errors import DynamicTableError


@dataclass(frozen=True)
class SchedulerConfig:
    """How lags become periods, and the shortest lag accepted.

    ``min_target_lag_seconds`` defaults to 1 s so that local pipelines and tests run fast;
    Snowflake's minimum is 60 s (``SchedulerConfig(min_target_lag_seconds=60)``).
    """

    base_period_seconds: float = 48.0
    lag_fraction: float = 0.8
    min_target_lag_seconds: float = 1.0
    # Consecutive failed scheduled refreshes after which a dynamic table is suspended.
    max_consecutive_failures: int = 5

    def __post_init__(self) -> None:
        if self.base_period_seconds <= 0 or not math.isfinite(self.base_period_seconds):
            raise DynamicTableError("the base refresh period must be a positive number of seconds")
        if not 0 < self.lag_fraction <= 1:
            raise DynamicTableError("the lag fraction must be in (0, 1]")
        if self.min_target_lag_seconds <= 0:
            raise DynamicTableError("the minimum target lag must be positive")
        if self.max_consecutive_failures < 1:
            raise DynamicTableError("max_consecutive_failures must be at least 1")


def refresh_period(lag_seconds: float, config: SchedulerConfig) -> float:
    """The canonical period for a target lag: the longest ``base · 2**k`` that is at most
    ``lag_fraction · lag`` (a lag under the configured minimum is an error)."""
    if lag_seconds < config.min_target_lag_seconds:
        raise DynamicTableError(
            f"a target lag of {lag_seconds:g} s is shorter than the scheduler's minimum of"
            f" {config.min_target_lag_seconds:g} s"
        )
    budget = config.lag_fraction * lag_seconds
    exponent = math.floor(math.log2(budget / config.base_period_seconds))
    period = math.ldexp(config.base_period_seconds, exponent)
    # log2 can round either way at exact powers: settle it with exact arithmetic.
    while period > budget:
        period /= 2
    while period * 2 <= budget:
        period *= 2
    return period


def latest_tick(now: float, period: float) -> float:
    """The latest tick of ``period`` at or before ``now`` (epoch seconds).

    Periods are dyadic multiples of the base, so ``n · period`` is exact in binary
    floating point for any epoch time of this millennium."""
    return math.floor(now / period) * period


def next_tick(after: float, period: float) -> float:
    """The first tick of ``period`` strictly after ``after``."""
    tick = latest_tick(after, period)
    return tick + period
