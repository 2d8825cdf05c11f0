"""BACKFILL FROM's time points resolved against a table's history, without an engine:
the newest commit at or before the instant, in the history's order (Iceberg snapshot ids
are random), with commit times in UTC."""

from __future__ import annotations

import datetime
import os
import time
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from sqlglot import exp

from dyntables import DynamicTableError
from dyntables.ddl.backfill import resolve_version
from dyntables.formats import Commit
from dyntables.formats.iceberg import _aware_utc
from dyntables.statements import TimePoint, TimePointBy, TimePointKind


def _engine(ages: dict[int, int]) -> Any:
    """An engine whose source has one commit per snapshot id, ``ages`` seconds ago (from
    now: the OFFSET points below are resolved against the clock too), listed newest first
    as a format's history is."""
    now = datetime.datetime.now(datetime.timezone.utc)
    commits = [
        Commit(version, "append", True, None, now - datetime.timedelta(seconds=age))
        for version, age in sorted(ages.items(), key=lambda item: item[1])
    ]
    table_format = SimpleNamespace(history=lambda session, table: commits)
    return SimpleNamespace(table_format=table_format, refresh_session=None)


def _offset(seconds: int, kind: TimePointKind = TimePointKind.AT) -> TimePoint:
    return TimePoint(kind=kind, by=TimePointBy.OFFSET, expr_sql=str(seconds))


def test_the_newest_commit_at_or_before_the_instant_wins_whatever_its_id() -> None:
    engine = _engine({900: 300, 5: 200, 700: 10})
    assert resolve_version(engine, exp.to_table("t"), _offset(-100)) == 5
    assert resolve_version(engine, exp.to_table("t"), _offset(-250)) == 900
    with pytest.raises(DynamicTableError, match="has no version BEFORE"):
        resolve_version(engine, exp.to_table("t"), _offset(-400, TimePointKind.BEFORE))


@pytest.fixture
def new_york() -> Iterator[None]:
    previous = os.environ.get("TZ")
    os.environ["TZ"] = "America/New_York"
    time.tzset()
    yield
    if previous is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = previous
    time.tzset()


def test_collected_commit_times_are_read_as_the_process_local_time(new_york: None) -> None:
    # PySpark returns TIMESTAMPs naive, in the Python process's time zone.
    local = datetime.datetime(2026, 1, 15, 7, 0)
    assert _aware_utc(local) == datetime.datetime(2026, 1, 15, 12, 0, tzinfo=datetime.timezone.utc)
