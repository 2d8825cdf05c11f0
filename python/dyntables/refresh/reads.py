"""What one statement or one scheduler tick has read of its tables' histories: each table's
newest commits are read once and shared by every refresh of the statement or tick (the
table's last watermark, a source's current version, the commits since a watermark), until
this process writes to the table.

A scope is per thread (the user's statements and a background scheduler each have their
own) and opened by whoever runs a statement or a tick (``RefreshContext.reading_once``);
it ends with them. Outside a scope nothing is kept. What another process
commits meanwhile is not seen until the next scope; a refresh that started from such a
read loses its conditional commit (``ConcurrentRefreshError``) and changes nothing.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from dyntables.formats import Commit


@dataclass
class Page:
    """The newest commits of a table, newest first, as read with ``limit`` (None: all)."""

    limit: int | None
    commits: list[Commit]

    @property
    def complete(self) -> bool:
        """Whether the page holds the table's whole history."""
        return self.limit is None or len(self.commits) < self.limit


@dataclass
class Reads:
    """The pages read in one scope, by table key, and the schemas of tables whose schema
    can change without a new version (Iceberg)."""

    pages: dict[str, Page] = field(default_factory=dict)
    schemas: dict[str, Any] = field(default_factory=dict)


class ReadScopes:
    """The current scope of each thread (None outside one)."""

    def __init__(self) -> None:
        self._local = threading.local()

    @property
    def current(self) -> Reads | None:
        reads: Reads | None = getattr(self._local, "reads", None)
        return reads

    def open(self) -> bool:
        """Open a scope on this thread unless one is open; whether this call opened it."""
        if self.current is not None:
            return False
        self._local.reads = Reads()
        return True

    def close(self) -> None:
        self._local.reads = None

    def page(self, key: str) -> Page | None:
        reads = self.current
        return reads.pages.get(key) if reads is not None else None

    def keep(self, key: str, page: Page) -> None:
        reads = self.current
        if reads is not None:
            reads.pages[key] = page

    def schema(self, key: str) -> Any:
        reads = self.current
        return reads.schemas.get(key) if reads is not None else None

    def keep_schema(self, key: str, schema: Any) -> None:
        reads = self.current
        if reads is not None:
            reads.schemas[key] = schema

    def forget(self, key: str) -> None:
        """Drop what the scope read of a table this process has just written to."""
        reads = self.current
        if reads is not None:
            reads.pages.pop(key, None)
            reads.schemas.pop(key, None)
