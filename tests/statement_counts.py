"""Counting the engine statements an operation runs: every ``session.sql`` call on the
user's session and on the refresh session, in order. Statement counts are deterministic
(unlike times) and each statement has a fixed cost (on Spark 100 ms or more), so the count
tests of each engine tier fail when a refresh, a tick or a listing gains one."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from dyntables import DynamicTables


@contextmanager
def counting(tables: DynamicTables) -> Iterator[list[str]]:
    """The statements run inside the block, as one-line texts."""
    seen: list[str] = []
    sessions = {id(s): s for s in (tables.engine.session, tables.engine.refresh_session)}
    originals = {key: session.sql for key, session in sessions.items()}

    def recorder(real: Callable[..., Any]) -> Callable[..., Any]:
        def sql(text: str, *args: Any, **kwargs: Any) -> Any:
            seen.append(" ".join(str(text).split()))
            return real(text, *args, **kwargs)

        return sql

    for key, session in sessions.items():
        session.sql = recorder(originals[key])
    try:
        yield seen
    finally:
        for key, session in sessions.items():
            session.sql = originals[key]
