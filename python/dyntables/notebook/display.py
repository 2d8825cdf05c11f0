"""How results look: HTML tables in notebooks, Spark's ``show()`` text in terminals, and
the progress of long statements.

``ResultTable`` wraps a DataFrame (PySpark classic or Connect, or sparkshim's) for
IPython's display system: ``_repr_html_`` in notebooks, ``__repr__`` (the ``show()``
text) in terminals. At most ``limit`` rows are fetched and shown, with a note when there
are more. sparkshim's DataFrame renders the same way (``html_table``).

>>> import pyarrow as pa
>>> from sparkshim.dataframe import DataFrame
>>> class Session:
...     time_zone = "UTC"
...     def register_temp_view(self, name, table): pass
>>> frame = DataFrame(Session(), pa.table({"id": [1, 2, 3], "name": ["a", None, "<b>"]}))
>>> print(html_table(frame, limit=2))  # doctest: +NORMALIZE_WHITESPACE
<table class="dyntables-result">
<thead><tr><th>id</th><th>name</th></tr></thead>
<tbody>
<tr><td>1</td><td>a</td></tr>
<tr><td>2</td><td><i>NULL</i></td></tr>
</tbody>
</table>
<p class="dyntables-note">Showing the first 2 rows.</p>
"""

from __future__ import annotations

import datetime
import html
import importlib
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TextIO

from dyntables.engine import made_by_sparkshim

# Rows fetched and shown by default (``%%sql -l N`` changes it per cell).
DEFAULT_LIMIT = 1000
# Characters of one cell shown in HTML before it is cut.
CELL_CHARACTERS = 500
# Characters of one cell in the terminal text before it is cut (show()'s truncate).
TEXT_CHARACTERS = 80
# A statement shows its progress once it has run this long (seconds).
PROGRESS_AFTER = 1.0


@dataclass(frozen=True)
class Cells:
    """The first rows of a result as display strings."""

    columns: list[str]
    rows: list[list[str | None]]  # None: SQL NULL
    more: bool  # whether the result has more rows than ``rows``


def cells(frame: Any, limit: int = DEFAULT_LIMIT) -> Cells:
    """Fetch at most ``limit`` rows (and learn whether there are more)."""
    columns = list(frame.columns)
    if made_by_sparkshim(frame):  # rendered from its Arrow rows, as sparkshim's show() does
        rows = _shim_cells(frame, limit + 1)
    else:
        rows = [[_text(value) for value in row] for row in frame.limit(limit + 1).collect()]
    return Cells(columns, rows[:limit], len(rows) > limit)


def html_table(frame: Any, limit: int = DEFAULT_LIMIT) -> str:
    """The first ``limit`` rows of ``frame`` as an HTML table, with a truncation note."""
    return render_html(cells(frame, limit))


def render_html(table: Cells) -> str:
    header = "".join(f"<th>{html.escape(name)}</th>" for name in table.columns)
    body = "\n".join(
        "<tr>" + "".join(f"<td>{_html_cell(value)}</td>" for value in row) + "</tr>"
        for row in table.rows
    )
    lines = [
        '<table class="dyntables-result">',
        f"<thead><tr>{header}</tr></thead>",
        "<tbody>",
        *([body] if body else []),
        "</tbody>",
        "</table>",
    ]
    if table.more:
        lines.append(f'<p class="dyntables-note">Showing the first {len(table.rows)} rows.</p>')
    elif not table.rows:
        lines.append('<p class="dyntables-note">No rows.</p>')
    return "\n".join(lines)


class ResultTable:
    """A statement's result as notebooks and terminals show it: ``columns`` of it (every
    one when None); ``frame`` is the DataFrame itself, every column included."""

    def __init__(
        self, frame: Any, limit: int = DEFAULT_LIMIT, columns: Sequence[str] | None = None
    ) -> None:
        self.frame = frame
        self.limit = limit
        self.columns = None if columns is None else list(columns)

    def shown(self) -> Any:
        """The DataFrame displayed: ``frame``, or its ``columns``."""
        return self.frame if self.columns is None else self.frame.select(*self.columns)

    def _repr_html_(self) -> str:
        return html_table(self.shown(), self.limit)

    def __repr__(self) -> str:
        # Spark's own showString, "only showing top N rows" note included.
        shown = min(self.limit, 20)
        return str(self.shown()._show_string(shown, TEXT_CHARACTERS)).rstrip("\n")


def displayable(
    frame: Any, limit: int = DEFAULT_LIMIT, columns: Sequence[str] | None = None
) -> ResultTable | None:
    """What a magic shows for ``frame``: nothing for a statement without columns (most
    DDL on Spark), else its table (of ``columns`` only, when given)."""
    if frame is None or not list(frame.columns):
        return None
    return ResultTable(frame, limit, columns)


def register_formatters(shell: Any) -> None:
    """Plain-text forms for IPython: ``dt.graph()`` prints as its text picture (notebooks
    show its SVG)."""
    plain = shell.display_formatter.formatters["text/plain"]
    plain.for_type_by_name("dyntables.scheduler.graph", "DagView", _pretty_graph)


def _pretty_graph(graph: Any, printer: Any, cycle: bool) -> None:
    printer.text(graph.to_text())


# ---- progress ----


class Progress:
    """The progress of a cell's statements: nothing for quick ones; past ``after``
    seconds a bar (``statement i of n``, elapsed time) that updates while the statement
    runs: in notebooks an HTML ``<progress>`` element updated in place (a display
    handle, so no widget library is needed), in terminals a text line on ``stream``."""

    def __init__(
        self,
        total: int,
        *,
        notebook: bool,
        stream: TextIO | None = None,
        after: float = PROGRESS_AFTER,
    ) -> None:
        self.total = total
        self.notebook = notebook
        self.stream = stream if stream is not None else sys.stderr
        self.after = after
        self.started = time.monotonic()
        self.index = 0
        self.label = ""
        self.shown = False
        self._handle: Any = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker = threading.Thread(target=self._tick, name="dyntables-progress", daemon=True)

    def __enter__(self) -> Progress:
        self._ticker.start()
        return self

    def __exit__(self, *failure: object) -> None:
        self._stop.set()
        self._ticker.join()
        with self._lock:
            if self.shown:
                self.index = self.total
                self._render(done=failure[0] is None)

    def step(self, index: int, label: str) -> None:
        """Statement ``index`` (0-based) starts."""
        with self._lock:
            self.index = index
            self.label = label
            if self.shown:
                self._render(done=False)

    def _tick(self) -> None:
        while not self._stop.wait(0.25):
            with self._lock:
                if not self.shown and time.monotonic() - self.started < self.after:
                    continue
                self.shown = True
                self._render(done=False)

    def text(self, *, done: bool) -> str:
        elapsed = time.monotonic() - self.started
        width = 20
        filled = width * self.index // max(self.total, 1)
        bar = "#" * filled + "-" * (width - filled)
        state = "done" if done else f"statement {min(self.index + 1, self.total)} of {self.total}"
        label = f" {self.label}" if self.label and not done else ""
        return f"[{bar}] {state}, {elapsed:.1f} s{label}"

    def _render(self, *, done: bool) -> None:
        if not self.notebook:
            end = "\n" if done else ""
            self.stream.write(f"\r{self.text(done=done)}{end}")
            self.stream.flush()
            return
        shown: Any = importlib.import_module("IPython.display")  # notebooks only
        value = self.index if not done else self.total
        markup = shown.HTML(
            f'<progress value="{value}" max="{self.total}"></progress>'
            f" <code>{html.escape(self.text(done=done))}</code>"
        )
        if self._handle is None:
            self._handle = shown.display(markup, display_id=True)
        else:
            self._handle.update(markup)


@contextmanager
def progress(total: int, *, notebook: bool, after: float = PROGRESS_AFTER) -> Iterator[Progress]:
    with Progress(total, notebook=notebook, after=after) as shown:
        yield shown


# ---- cells ----


def _shim_cells(frame: Any, count: int) -> list[list[str | None]]:
    """sparkshim's rows rendered as Spark's ``show()`` renders them (NULL as None)."""
    from sparkshim.dataframe import pretty_strings

    table = frame.toArrow().slice(0, count)
    columns = []
    for column, field in zip(table.columns, frame.schema.fields, strict=True):
        texts = pretty_strings(column, field.dataType, frame.sparkSession.time_zone)
        nulls = column.is_null().to_pylist()
        columns.append([None if null else text for text, null in zip(texts, nulls, strict=True)])
    return [list(row) for row in zip(*columns, strict=True)] if columns else []


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, (list, tuple)) and not hasattr(value, "asDict"):
        return "[" + ", ".join(_text(item) or "NULL" for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} -> {_text(v) or 'NULL'}" for k, v in value.items()) + "}"
    return str(value)


def _html_cell(value: str | None) -> str:
    if value is None:
        return "<i>NULL</i>"
    if len(value) > CELL_CHARACTERS:
        value = value[: CELL_CHARACTERS - 1] + "…"
    return html.escape(value)
