"""Which Iceberg commit failures are lost races (nothing committed; a rerun succeeds), as
the Spark tier's concurrency round meets them: a refresh whose error is one is reported
as ``ConcurrentRefreshError`` with a message in words, never the engine's own text."""

from __future__ import annotations

import pytest

from dyntables.formats.iceberg import IcebergFormat

FMT = IcebergFormat()


@pytest.mark.parametrize(
    "message",
    [
        "org.apache.iceberg.exceptions.CommitFailedException: Cannot commit: stale metadata",
        "org.apache.iceberg.exceptions.ValidationException: Found conflicting files that can"
        " contain records matching true: [/w/t/data/00000-1.parquet]",
        # A copy-on-write MERGE whose file another refresh (or a compaction) rewrote first.
        "org.apache.iceberg.exceptions.ValidationException: Missing required files to delete:"
        " /w/t/data/00000-4894-b5e1.parquet",
    ],
)
def test_a_commit_that_lost_to_another_is_a_lost_race(message: str) -> None:
    failure = ValueError("the refresh failed")
    failure.__cause__ = RuntimeError(message)  # the engine's error, raised from
    assert FMT.lost_race(failure)


def test_other_validation_failures_are_not_lost_races() -> None:
    failure = RuntimeError(
        "org.apache.iceberg.exceptions.ValidationException: Cannot find field 'x' in struct"
    )
    assert not FMT.lost_race(failure)
