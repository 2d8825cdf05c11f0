"""Which dynamic tables refresh at a tick, and in which order.

A dynamic table with a time lag is *owed* a refresh at tick ``T`` when its period's latest
tick at or before ``T`` is later than the last tick it was refreshed for (or attempted at).
The tick refreshes the owed tables together with every dynamic table upstream of them,
DOWNSTREAM ones included (seed 000: a DOWNSTREAM table refreshes when a consumer with a
time lag needs it, and never otherwise), upstream first, all at data timestamp ``T``.

>>> graph = Graph.of([Node("b", (), 60), Node("a", ("b",), 120)])
>>> periods = graph.periods(SchedulerConfig())
>>> periods
{'b': 48.0, 'a': 96.0}
>>> tick_plan(graph, 96.0, periods, covered={"a": 0.0, "b": 48.0})
['b', 'a']
>>> tick_plan(graph, 144.0, periods, covered={"a": 96.0, "b": 96.0})
['b']
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from dyntables.errors import DynamicTableError
from dyntables.scheduler.period import SchedulerConfig, latest_tick, refresh_period


@dataclass(frozen=True)
class Node:
    """One dynamic table as the scheduler sees it.

    ``lag_seconds`` is None for ``TARGET_LAG = DOWNSTREAM``; ``upstreams`` are the dynamic
    tables it reads (base tables are not nodes)."""

    name: str
    upstreams: tuple[str, ...]
    lag_seconds: float | None
    suspended: bool = False
    suspend_reason: str | None = None


@dataclass(frozen=True)
class Graph:
    """The dynamic tables of a catalog and their dependencies."""

    nodes: dict[str, Node]
    downstreams: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @classmethod
    def of(cls, nodes: Iterable[Node]) -> Graph:
        by_name = {node.name: node for node in nodes}
        consumers: dict[str, list[str]] = {name: [] for name in by_name}
        for node in by_name.values():
            for upstream in node.upstreams:
                if upstream in consumers:
                    consumers[upstream].append(node.name)
        return cls(by_name, {name: tuple(sorted(c)) for name, c in consumers.items()})

    def upstreams(self, name: str) -> tuple[str, ...]:
        """The dynamic tables ``name`` reads (upstreams no longer in the graph are left out)."""
        return tuple(u for u in self.nodes[name].upstreams if u in self.nodes)

    def periods(self, config: SchedulerConfig) -> dict[str, float]:
        """The refresh period of every dynamic table with a time lag (a lag under the
        configured minimum is scheduled as the minimum)."""
        return {
            name: refresh_period(max(node.lag_seconds, config.min_target_lag_seconds), config)
            for name, node in self.nodes.items()
            if node.lag_seconds is not None
        }

    def all_downstream(self, name: str) -> list[str]:
        """Every dynamic table that reads ``name``, directly or not (nearest first)."""
        found: list[str] = []
        queue = list(self.downstreams.get(name, ()))
        while queue:
            current = queue.pop(0)
            if current not in found:
                found.append(current)
                queue.extend(self.downstreams.get(current, ()))
        return found

    def all_upstream(self, names: Iterable[str]) -> set[str]:
        """``names`` and every dynamic table they read, directly or not."""
        found: set[str] = set()
        stack = list(names)
        while stack:
            current = stack.pop()
            if current in found or current not in self.nodes:
                continue
            found.add(current)
            stack.extend(self.upstreams(current))
        return found

    def in_dependency_order(self, names: Iterable[str]) -> list[str]:
        """``names`` sorted so that every table comes after the tables it reads (ties by
        name); a cycle is an error naming it."""
        wanted = set(names)
        ordered: list[str] = []
        done: set[str] = set()

        def visit(name: str, path: list[str]) -> None:
            if name in done:
                return
            if name in path:
                cycle = [*path[path.index(name) :], name]
                raise DynamicTableError("the dynamic tables form a cycle: " + " -> ".join(cycle))
            for upstream in sorted(self.upstreams(name)):
                if upstream in wanted:
                    visit(upstream, [*path, name])
            done.add(name)
            ordered.append(name)

        for name in sorted(wanted):
            visit(name, [])
        return ordered


def owed(
    graph: Graph, tick: float, periods: Mapping[str, float], covered: Mapping[str, float]
) -> list[str]:
    """The active dynamic tables with a time lag that ``tick`` owes a refresh."""
    return sorted(
        name
        for name, period in periods.items()
        if not graph.nodes[name].suspended
        and latest_tick(tick, period) > covered.get(name, float("-inf"))
    )


def tick_plan(
    graph: Graph, tick: float, periods: Mapping[str, float], covered: Mapping[str, float]
) -> list[str]:
    """The dynamic tables to refresh at ``tick``, upstream first: the owed ones and every
    dynamic table they read."""
    return graph.in_dependency_order(graph.all_upstream(owed(graph, tick, periods, covered)))


def grid_period(periods: Mapping[str, float]) -> float | None:
    """The shortest period: every table's ticks are ticks of it (None without any)."""
    return min(periods.values()) if periods else None
