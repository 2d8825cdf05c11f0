"""Lag accounting: how far behind its sources a dynamic table was, over time.

A table's lag at time ``t`` is ``t`` minus the data timestamp of its newest refresh that
had completed by ``t``. Between two refreshes it grows linearly; each completed refresh
(NO_DATA ones included) drops it to the refresh's own duration past its data timestamp.

>>> refreshes = [Refresh(0, 1), Refresh(10, 12), Refresh(20, 21)]
>>> summary = summarize(refreshes, target_lag=10, now=30)
>>> summary.maximum_lag, round(summary.mean_lag, 3), round(summary.within_target_ratio, 3)
(12.0, 6.19, 0.897)
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Refresh:
    """A successful refresh: its data timestamp and when it completed (epoch seconds)."""

    data_timestamp: float
    completed_at: float


@dataclass(frozen=True)
class LagSummary:
    mean_lag: float | None
    maximum_lag: float | None
    within_target_ratio: float | None
    data_timestamp: float | None


def summarize(refreshes: Iterable[Refresh], target_lag: float | None, now: float) -> LagSummary:
    """Mean and maximum lag, and the share of time within ``target_lag``, from the first
    completed refresh until ``now`` (None where there is no time to measure)."""
    ordered = sorted(refreshes, key=lambda r: r.completed_at)
    if not ordered:
        return LagSummary(None, None, None, None)
    area = 0.0
    within = 0.0
    maximum = 0.0
    held = float(ordered[0].data_timestamp)
    start = float(ordered[0].completed_at)
    maximum = start - held
    moments = [(r.completed_at, r.data_timestamp) for r in ordered[1:]] + [(now, None)]
    since = start
    for moment, arriving in moments:
        until = max(float(moment), since)
        low, high = since - held, until - held
        area += (low + high) / 2 * (until - since)
        maximum = max(maximum, high)
        if target_lag is not None:
            within += max(0.0, min(until, held + target_lag) - since)
        since = until
        if arriving is not None:
            held = max(held, arriving)
    span = since - start
    if span <= 0:
        lag = start - held
        ratio = None if target_lag is None else float(lag <= target_lag)
        return LagSummary(lag, lag, ratio, held)
    ratio = None if target_lag is None else within / span
    return LagSummary(area / span, maximum, ratio, held)
