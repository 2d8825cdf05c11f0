"""The scheduler: keeps every dynamic table within its target lag (seed 000).

* ``period`` — target lag → a canonical refresh period aligned to the epoch;
* ``plan`` — the graph of dynamic tables, and which of them a tick refreshes, in order;
* ``core`` — ticks, skips and auto-suspend, with the clock and the refresh injected;
* ``runner`` — the engine side: refresh at one data timestamp, history, suspend;
* ``lease`` — one active scheduler per catalog;
* ``daemon`` — ``dyntables scheduler run`` and ``dt.start()`` / ``dt.stop()``;
* ``lag`` — lag accounting for ``information_schema.dynamic_tables()``;
* ``graph`` — ``dt.graph()`` and its picture;
* ``functions`` — the rows of ``information_schema.dynamic_tables()`` and
  ``dynamic_table_graph_history()``.

Importing it starts nothing: threads start only in ``daemon``, when asked.
"""

from dyntables.scheduler.core import Event, Outcome, Scheduler, Tick
from dyntables.scheduler.period import SchedulerConfig, refresh_period
from dyntables.scheduler.plan import Graph, Node

__all__ = [
    "Event",
    "Graph",
    "Node",
    "Outcome",
    "Scheduler",
    "SchedulerConfig",
    "Tick",
    "refresh_period",
]
