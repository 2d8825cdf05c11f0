"""Checks shared by the embedded tier's refresh tests: after each batch of source changes
and a refresh, the dynamic table holds its query's rows (as multisets)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from dyntables import DynamicTables


def rows(dt: DynamicTables, sql: str) -> Counter[tuple[Any, ...]]:
    """The rows ``sql`` returns, as a multiset."""
    return Counter(tuple(row) for row in dt.sql(sql).collect())


def check_refreshes(
    dt: DynamicTables,
    table: str,
    query: str,
    changes: Iterable[str | Sequence[str]],
    *,
    action: str | None = "INCREMENTAL",
) -> None:
    """Apply each change (a statement, or several run together), refresh ``table`` and
    check that it holds ``query``'s rows; and that the refresh was ``action`` (None: any)."""
    for change in changes:
        for statement in [change] if isinstance(change, str) else change:
            dt.sql(statement)
        refreshed = dt.sql(f"ALTER DYNAMIC TABLE {table} REFRESH").collect()[0]
        if action is not None:
            assert refreshed.action == action, refreshed
        assert rows(dt, f"SELECT * FROM {table}") == rows(dt, query), change
