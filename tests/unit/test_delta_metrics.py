"""How many rows a Delta commit inserted and deleted (its change feed's rows), read from its
operationMetrics as Delta on Spark writes them (sparkshim reports the same names)."""

from __future__ import annotations

import pytest
from pyspark.sql import Row

from dyntables.formats import Commit
from dyntables.formats.delta import _row_counts


def _commit(operation: str, metrics: dict[str, str], mode: str | None = None) -> Row:
    parameters = {} if mode is None else {"mode": mode}
    return Row(operation=operation, operationParameters=parameters, operationMetrics=metrics)


@pytest.mark.parametrize(
    ("commit", "rows"),
    [
        (_commit("WRITE", {"numFiles": "1", "numOutputRows": "7"}, "Append"), (7, 0)),
        (_commit("DELETE", {"numDeletedRows": "3", "numRemovedFiles": "1"}), (0, 3)),
        (_commit("UPDATE", {"numUpdatedRows": "2", "numCopiedRows": "9"}), (2, 2)),
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
            (4, 5),
        ),
        # Overwrites do not count the rows they remove: unknown.
        (_commit("WRITE", {"numOutputRows": "5"}, "Overwrite"), (None, None)),
        (_commit("WRITE", {"numOutputRows": "5", "numRemovedFiles": "2"}), (None, None)),
        (_commit("TRUNCATE", {"numRemovedFiles": "2"}), (None, None)),
        (_commit("CREATE TABLE", {}), (None, None)),
    ],
)
def test_row_counts_come_from_the_commit_metrics(
    commit: Row, rows: tuple[int | None, int | None]
) -> None:
    assert _row_counts(commit) == rows


@pytest.mark.parametrize(
    ("inserted", "deleted", "changed", "inserts_only"),
    [(7, 0, 7, True), (2, 2, 4, False), (0, 3, 3, False), (None, None, None, False)],
)
def test_a_commit_knows_its_change_feed_size_and_whether_it_only_inserted(
    inserted: int | None, deleted: int | None, changed: int | None, inserts_only: bool
) -> None:
    commit = Commit(1, "WRITE", True, None, rows_inserted=inserted, rows_deleted=deleted)
    assert commit.changed_rows == changed
    assert commit.inserts_only is inserts_only
