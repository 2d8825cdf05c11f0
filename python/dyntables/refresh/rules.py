"""When a refresh of an INCREMENTAL dynamic table recomputes in full, and why: every
per-refresh rule in one place (the create-time mode and its reason code are the planner's).

* ``reinitialize_reason``: the definition, a frozen region or a source's shape changed, or
  something wrote to the table outside a refresh: the refresh recomputes afresh
  (REINITIALIZE, with the reason).
* ``appends_as_they_come``: only inserts reached a query linear in their sources (outer
  joins included, when they pad none of them); they are appended as they
  come, whatever their number.
* ``too_large_for_incremental`` (the cost rule): the sources' change feeds hold more than
  ``FULL_REFRESH_FRACTION`` of their rows.
* An operator the change derivation meets that it cannot derive raises
  ``CannotRefreshIncrementallyError``; the executor then refreshes in full and records
  "FULL instead of INCREMENTAL: <why>".
"""

from __future__ import annotations

from collections.abc import Callable

from dyntables.catalog import Definition
from dyntables.formats import Commit
from dyntables.planner.capabilities import inserts_are_appends
from dyntables.refresh.context import inserts_only
from dyntables.refresh.state import Watermark, WatermarkState

# An incremental refresh becomes full when the sources' change feeds hold more than this
# fraction of their rows (measured: above about a fifth, recomputing is as fast, and it
# rewrites the table in one pass), unless the sources are smaller than COST_RULE_MIN_ROWS,
# where either way is cheap.
FULL_REFRESH_FRACTION = 0.2
COST_RULE_MIN_ROWS = 10_000

TABLE_CHANGED_OUTSIDE_A_REFRESH = "TABLE_CHANGED_OUTSIDE_A_REFRESH"


def reinitialize_reason(
    definition: Definition,
    state: WatermarkState,
    fingerprints: dict[str, str],
    replace_definition: dict[str, str] | None,
    recreated: list[str] | None = None,
) -> str | None:
    """Why this refresh must recompute everything afresh, if it must (``recreated``: the
    sources dropped and created again since the last refresh)."""
    previous = state.watermark
    if replace_definition is not None:
        return "DEFINITION_REPLACED"
    if previous is None:
        return None
    reason = _changed_since(definition, previous, fingerprints)
    if reason is None and recreated:
        reason = f"UPSTREAM_RECREATED: {recreated[0]}"
    if reason is None and state.foreign_changes:
        # Something wrote to the table outside a refresh: its rows are not the query's.
        reason = TABLE_CHANGED_OUTSIDE_A_REFRESH
    return reason


def _changed_since(
    definition: Definition, previous: Watermark, fingerprints: dict[str, str]
) -> str | None:
    if previous.definition_hash != definition.definition_hash:
        return "DEFINITION_CHANGED"
    if definition.frozen_reinitialize == "ALL":
        return "FROZEN_REGION_REMOVED"
    if definition.frozen_reinitialize is not None:
        return "FROZEN_REGION_CHANGED"
    for key, fingerprint in fingerprints.items():
        if previous.fingerprints.get(key, fingerprint) != fingerprint:
            return f"UPSTREAM_SCHEMA_CHANGED: {key}"
    return None


def appends_as_they_come(definition: Definition, moved: dict[str, list[Commit] | None]) -> bool:
    """Whether the sources' changes since the last refresh are inserts only, into a query
    linear in those sources (``inserts_are_appends``): they are then inserts into the
    table, appended without reading it."""
    return inserts_only(moved) and inserts_are_appends(definition, set(moved))


def too_large_for_incremental(
    moved: dict[str, list[Commit] | None],
    versions: dict[str, int | None],
    rows_at: Callable[[str, int], int],
) -> str | None:
    """Why a full refresh is cheaper, when the sources' change feeds hold more than
    ``FULL_REFRESH_FRACTION`` of their rows (the change from the commits' metrics, no
    decision when a commit does not say how many rows it changed; each source's rows at
    its version from ``rows_at``)."""
    changed = 0
    for commits in moved.values():
        counts = [c.changed_rows for c in commits or [] if c.changes_data]
        if commits is None or None in counts:
            return None
        changed += sum(count for count in counts if count is not None)
    if changed < FULL_REFRESH_FRACTION * COST_RULE_MIN_ROWS:
        return None  # too few to matter, whatever the sources' size
    total = 0
    for key, version in versions.items():
        if version is not None:
            total += rows_at(key, version)
    if total < COST_RULE_MIN_ROWS or changed <= FULL_REFRESH_FRACTION * total:
        return None
    return (
        f"the sources' change feeds hold {changed:,} rows, {changed / total:.0%} of"
        f" their {total:,} rows: above {FULL_REFRESH_FRACTION:.0%} a full refresh is"
        " cheaper"
    )


__all__ = [
    "COST_RULE_MIN_ROWS",
    "FULL_REFRESH_FRACTION",
    "appends_as_they_come",
    "reinitialize_reason",
    "too_large_for_incremental",
]
