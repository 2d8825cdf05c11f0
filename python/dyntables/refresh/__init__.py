"""The refresh executor, as a package read in data-flow order:

* ``state``: what a refresh reads, records and reports (the watermark, pinned sources,
  the result), shared by every strategy;
* ``context``: reading the last watermark, pinning sources, paging histories, finding a
  refresh's own commit, and the refresh history rows;
* ``executor``: ``Refresher``, which decides NO_DATA and picks one strategy per refresh;
* ``rules``: every per-refresh rule that turns an incremental refresh FULL, with its reason;
* the strategies: ``full``, ``incremental`` (applies a change with one MERGE), ``custom``
  (REFRESH USING);
* beside the incremental strategy, the change derivation: ``changes`` (one rule per
  operator), ``aggregates`` (change arithmetic for GROUP BY), ``custom_sql`` (what a REFRESH
  USING statement means at a refresh, and its CHANGES reader).
"""

from dyntables.refresh.executor import Refresher, Strategy, lost_race_message
from dyntables.refresh.state import (
    Action,
    AsOf,
    PinnedSources,
    RefreshResult,
    Trigger,
    Watermark,
    WatermarkState,
)

__all__ = [
    "Action",
    "AsOf",
    "PinnedSources",
    "RefreshResult",
    "Refresher",
    "Strategy",
    "Trigger",
    "Watermark",
    "WatermarkState",
    "lost_race_message",
]
