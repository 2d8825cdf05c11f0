"""How many change-feed rows a Delta commit holds, read from its operationMetrics as Delta
on Spark writes them (sparkshim reports the same names)."""

from __future__ import annotations

import pytest
from pyspark.sql import Row

from dyntables.formats.delta import _changed_rows


def _commit(operation: str, metrics: dict[str, str], mode: str | None = None) -> Row:
    parameters = {} if mode is None else {"mode": mode}
    return Row(operation=operation, operationParameters=parameters, operationMetrics=metrics)


@pytest.mark.parametrize(
    ("commit", "rows"),
    [
        (_commit("WRITE", {"numFiles": "1", "numOutputRows": "7"}, "Append"), 7),
        (_commit("DELETE", {"numDeletedRows": "3", "numRemovedFiles": "1"}), 3),
        (_commit("UPDATE", {"numUpdatedRows": "2", "numCopiedRows": "9"}), 4),
        (
            _commit(
                "MERGE",
                {
                    "numTargetRowsInserted": "1",
                    "numTargetRowsDeleted": "2",
                    "numTargetRowsUpdated": "3",
                    "numOutputRows": "40",
                },
            ),
            9,
        ),
        # Overwrites do not count the rows they remove: unknown.
        (_commit("WRITE", {"numOutputRows": "5"}, "Overwrite"), None),
        (_commit("WRITE", {"numOutputRows": "5", "numRemovedFiles": "2"}), None),
        (_commit("TRUNCATE", {"numRemovedFiles": "2"}), None),
        (_commit("CREATE TABLE", {}), None),
    ],
)
def test_changed_rows_come_from_the_commit_metrics(commit: Row, rows: int | None) -> None:
    assert _changed_rows(commit) == rows
