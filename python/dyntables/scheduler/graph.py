"""The graph of dynamic tables as users look at it: ``dt.graph()``, ``dyntables status``,
and the information_schema functions ``dynamic_tables()`` and
``dynamic_table_graph_history()``.

``DagView`` holds each dynamic table with its inputs, lag, period, state, last refresh and
lag summary, and each base table it reads. It prints as text (``to_text``), and draws
itself as SVG with no dependency at all (``to_svg``; notebooks show it through
``_repr_svg_``), or as PNG with matplotlib (``save("dag.png")``; ``pip install
spark-dynamic-tables[graph]``). Nodes are coloured by state.
"""

from __future__ import annotations

import datetime
import html
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlglot import exp

from dyntables.catalog import ObjectKind, SchedulingState, table_key
from dyntables.ddl.lifecycle import Lifecycle
from dyntables.engine import Engine
from dyntables.errors import DynamicTableError
from dyntables.history import REFRESH_HISTORY, SYSTEM_SCHEMA, SystemTables, utc_now
from dyntables.scheduler.core import to_datetime, to_epoch
from dyntables.scheduler.lag import LagSummary, Refresh, summarize
from dyntables.scheduler.period import SchedulerConfig, refresh_period

# Lag is measured over the refreshes of this window (as Snowflake's functions do).
LAG_WINDOW = datetime.timedelta(days=7)

COLOURS = {
    "SUCCEEDED": "#c8e6c9",
    "FAILED": "#ffcdd2",
    "UPSTREAM_FAILED": "#ffe0b2",
    "SKIPPED": "#fff9c4",
    "SUSPENDED": "#e0e0e0",
    "NEVER": "#ffffff",
    "TABLE": "#e3f2fd",
}


@dataclass(frozen=True)
class DagNode:
    name: str
    kind: str  # DYNAMIC_TABLE or TABLE (a base table some dynamic table reads)
    inputs: tuple[str, ...] = ()
    target_lag: str = ""
    target_lag_sec: int | None = None
    period_sec: float | None = None
    scheduling_state: str | None = None
    suspend_reason: str | None = None
    refresh_mode: str | None = None
    query: str = ""
    created_on: str = ""
    last_state: str | None = None
    last_action: str | None = None
    last_refresh_end: datetime.datetime | None = None
    lag: LagSummary = field(default_factory=lambda: LagSummary(None, None, None, None))

    @property
    def colour_key(self) -> str:
        if self.kind == "TABLE":
            return "TABLE"
        if self.scheduling_state == SchedulingState.SUSPENDED.value:
            return "SUSPENDED"
        return self.last_state or "NEVER"


@dataclass(frozen=True)
class DagView:
    """The dynamic tables of the catalog and the tables they read."""

    nodes: dict[str, DagNode]

    @property
    def dynamic_tables(self) -> list[DagNode]:
        return [node for node in self.nodes.values() if node.kind == "DYNAMIC_TABLE"]

    def edges(self) -> list[tuple[str, str]]:
        """(input, dynamic table) pairs."""
        return [(source, node.name) for node in self.dynamic_tables for source in node.inputs]

    def layers(self) -> list[list[str]]:
        """Nodes by depth: base tables first, each table after everything it reads."""
        depth: dict[str, int] = {}

        def depth_of(name: str, seen: tuple[str, ...] = ()) -> int:
            if name not in depth:
                inputs = [i for i in self.nodes[name].inputs if i in self.nodes and i not in seen]
                depth[name] = 1 + max((depth_of(i, (*seen, name)) for i in inputs), default=-1)
            return depth[name]

        for name in self.nodes:
            depth_of(name)
        layers: list[list[str]] = [[] for _ in range(max(depth.values(), default=-1) + 1)]
        for name in sorted(self.nodes):
            layers[depth[name]].append(name)
        return layers

    # ---- text ----

    def to_text(self) -> str:
        """One line per dynamic table, upstream first: lag, refresh mode, state, last
        refresh, inputs (``str()`` and ``repr()`` print it)."""
        if not self.dynamic_tables:
            return "no dynamic tables"
        lines = []
        for layer in self.layers():
            for name in layer:
                node = self.nodes[name]
                if node.kind != "DYNAMIC_TABLE":
                    continue
                lines.append(_status_line(node))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_text()

    def __repr__(self) -> str:  # a plain REPL prints the text picture, not the nodes
        return self.to_text()

    # ---- pictures ----

    def _layout(self) -> dict[str, tuple[float, float]]:
        positions: dict[str, tuple[float, float]] = {}
        for column, layer in enumerate(self.layers()):
            for row, name in enumerate(layer):
                positions[name] = (20 + column * (_BOX_W + 70), 20 + row * (_BOX_H + 30))
        return positions

    def to_svg(self) -> str:
        """The graph as an SVG document, nodes coloured by state."""
        positions = self._layout()
        width = max((x for x, _ in positions.values()), default=0) + _BOX_W + 20
        height = max((y for _, y in positions.values()), default=0) + _BOX_H + 20
        parts = [
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}"'
            ' font-family="sans-serif" font-size="12">',
            '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8"'
            ' markerHeight="8" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker>'
            "</defs>",
        ]
        for source, target in self.edges():
            if source not in positions:
                continue
            (x1, y1), (x2, y2) = positions[source], positions[target]
            parts.append(
                f'<line x1="{x1 + _BOX_W:.0f}" y1="{y1 + _BOX_H / 2:.0f}" x2="{x2:.0f}"'
                f' y2="{y2 + _BOX_H / 2:.0f}" stroke="#555" marker-end="url(#arrow)"/>'
            )
        for name, (x, y) in positions.items():
            node = self.nodes[name]
            fill = COLOURS[node.colour_key]
            parts.append(
                f"<g><title>{html.escape(_status_line(node) if node.kind != 'TABLE' else name)}"
                f'</title><rect x="{x:.0f}" y="{y:.0f}" width="{_BOX_W}" height="{_BOX_H}"'
                f' rx="6" fill="{fill}" stroke="#333"/>'
            )
            for index, text in enumerate(_box_lines(node)):
                weight = ' font-weight="bold"' if index == 0 else ""
                parts.append(
                    f'<text x="{x + 8:.0f}" y="{y + 18 + 15 * index:.0f}"{weight}>'
                    f"{html.escape(text)}</text>"
                )
            parts.append("</g>")
        parts.append("</svg>")
        return "\n".join(parts)

    def _repr_svg_(self) -> str:  # Jupyter shows the picture
        return self.to_svg()

    def save(self, path: str | Path) -> Path:
        """Write the picture: ``.svg`` needs nothing, ``.png`` needs matplotlib."""
        target = Path(path)
        if target.suffix.lower() == ".svg":
            target.write_text(self.to_svg(), encoding="utf-8")
        elif target.suffix.lower() == ".png":
            self._save_png(target)
        else:
            raise DynamicTableError(f"save the graph as .svg or .png, not {target.suffix!r}")
        return target

    def _save_png(self, target: Path) -> None:
        try:
            import matplotlib

            matplotlib.use("Agg")
            from matplotlib import pyplot
            from matplotlib.patches import FancyBboxPatch
        except ImportError as missing:
            raise DynamicTableError(
                "a PNG picture needs matplotlib: pip install 'spark-dynamic-tables[graph]'"
                " (or save as .svg, which needs nothing)"
            ) from missing
        positions = self._layout()
        width = max((x for x, _ in positions.values()), default=0) + _BOX_W + 20
        height = max((y for _, y in positions.values()), default=0) + _BOX_H + 20
        figure = pyplot.figure(figsize=(width / 100, height / 100), dpi=100)
        axes = figure.add_axes((0, 0, 1, 1))
        axes.set_xlim(0, width)
        axes.set_ylim(height, 0)
        axes.axis("off")
        for source, target_name in self.edges():
            if source in positions:
                (x1, y1), (x2, y2) = positions[source], positions[target_name]
                axes.annotate(
                    "",
                    xy=(x2, y2 + _BOX_H / 2),
                    xytext=(x1 + _BOX_W, y1 + _BOX_H / 2),
                    arrowprops={"arrowstyle": "->", "color": "#555"},
                )
        for name, (x, y) in positions.items():
            node = self.nodes[name]
            axes.add_patch(
                FancyBboxPatch(
                    (x, y),
                    _BOX_W,
                    _BOX_H,
                    boxstyle="round,pad=0,rounding_size=6",
                    facecolor=COLOURS[node.colour_key],
                    edgecolor="#333",
                )
            )
            for index, text in enumerate(_box_lines(node)):
                axes.text(
                    x + 8,
                    y + 18 + 15 * index,
                    text,
                    fontsize=8,
                    fontweight="bold" if index == 0 else "normal",
                )
        figure.savefig(target)
        pyplot.close(figure)


_BOX_W = 230
_BOX_H = 64


def _box_lines(node: DagNode) -> list[str]:
    if node.kind == "TABLE":
        return [node.name, "table"]
    state = (
        node.scheduling_state
        if node.scheduling_state == SchedulingState.SUSPENDED.value
        else node.last_state or "never refreshed"
    )
    return [node.name, f"lag {node.target_lag}", state]


def _status_line(node: DagNode) -> str:
    period = f" (every {node.period_sec:g} s)" if node.period_sec is not None else ""
    state = node.scheduling_state or ""
    if node.suspend_reason:
        state += f" ({node.suspend_reason})"
    if node.last_state is None:
        last = "never refreshed"
    else:
        stamp = to_datetime(node.lag.data_timestamp) if node.lag.data_timestamp else None
        last = f"last {node.last_state}" + (f" {node.last_action}" if node.last_action else "")
        if node.last_refresh_end is not None:
            last += f" at {node.last_refresh_end.isoformat(sep=' ', timespec='seconds')}"
        if stamp is not None:
            last += f", data timestamp {stamp.isoformat(sep=' ', timespec='milliseconds')}"
    inputs = f"  reads {', '.join(node.inputs)}" if node.inputs else ""
    lag = f"lag {node.target_lag}{period}"
    if node.lag.maximum_lag is not None and node.target_lag_sec is not None:
        lag += f", max {node.lag.maximum_lag:.1f} s"
    mode = f"  mode {node.refresh_mode}" if node.refresh_mode else ""
    return f"{node.name}  {lag}{mode}  {state}  {last}{inputs}"


def build(
    engine: Engine,
    system: SystemTables,
    lifecycle: Lifecycle,
    config: SchedulerConfig | None = None,
) -> DagView:
    """The graph as the catalog and the refresh history describe it now: the managed
    tables come from ``lifecycle``, their recent refreshes from ``system``'s history (read
    on ``engine``'s refresh session). Given these, not the ``DynamicTables`` facade above
    the scheduler."""
    config = config or SchedulerConfig()
    now = utc_now()
    rows = _recent_history(system, engine, now - LAG_WINDOW)
    nodes: dict[str, DagNode] = {}
    for table, definition in lifecycle.managed_tables():
        if definition.kind is not ObjectKind.DYNAMIC_TABLE:
            continue
        key = table_key(table)
        mine = rows.get(key, [])
        completed = [row for row in mine if row[0] != "EXECUTING"]
        last = max(completed, key=lambda row: row[3], default=None)
        lag_seconds = None if definition.downstream else definition.target_lag_seconds
        summary = summarize(
            [
                Refresh(to_epoch(row[2]), to_epoch(row[3]))
                for row in mine
                if row[0] == "SUCCEEDED" and row[2] is not None
            ],
            lag_seconds,
            to_epoch(now),
        )
        nodes[key] = DagNode(
            name=key,
            kind="DYNAMIC_TABLE",
            inputs=tuple(definition.sources),
            target_lag=definition.target_lag_text,
            target_lag_sec=lag_seconds,
            period_sec=refresh_period(max(lag_seconds, config.min_target_lag_seconds), config)
            if lag_seconds is not None
            else None,
            scheduling_state=definition.scheduling_state.value,
            suspend_reason=definition.suspend_reason,
            refresh_mode=definition.refresh_mode,
            query=definition.query,
            created_on=definition.created_on,
            last_state=last[0] if last else None,
            last_action=last[1] if last else None,
            last_refresh_end=last[3] if last else None,
            lag=summary,
        )
    for node in list(nodes.values()):
        for source in node.inputs:
            nodes.setdefault(source, DagNode(name=source, kind="TABLE"))
    return DagView(nodes)


def _recent_history(
    system: SystemTables, engine: Engine, since: datetime.datetime
) -> dict[str, list[tuple[Any, ...]]]:
    """Each dynamic table's refreshes since ``since``: (state, action, data timestamp,
    end time)."""
    system.ensure()
    system.read_fresh(engine.refresh_session)  # rows other processes recorded too
    query = (
        exp.select(
            "schema_name", "name", "state", "refresh_action", "data_timestamp", "refresh_end_time"
        )
        .from_(exp.table_(REFRESH_HISTORY, db=SYSTEM_SCHEMA))
        .where(
            exp.GTE(
                this=exp.column("refresh_end_time"),
                expression=exp.cast(
                    exp.Literal.string(since.strftime("%Y-%m-%d %H:%M:%S.%f")),
                    exp.DataType.build("TIMESTAMP"),
                ),
            )
        )
    )
    found: dict[str, list[tuple[Any, ...]]] = {}
    for row in engine.refresh_session.sql(query.sql("spark")).collect():
        key = f"{row[0]}.{row[1]}".lower()
        found.setdefault(key, []).append((row[2], row[3], row[4], row[5]))
    return found
