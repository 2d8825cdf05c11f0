"""The rows of the information_schema table functions of the scheduler:
``dynamic_tables()`` (lag accounting) and ``dynamic_table_graph_history()`` (each dynamic
table's inputs and state), computed from the graph as ``graph.build`` sees it.
"""

from __future__ import annotations

import datetime
import json
from typing import Any

from dyntables.scheduler.core import to_datetime
from dyntables.scheduler.graph import DagNode, DagView

_NAME_COLUMNS = (
    ("name", "STRING"),
    ("schema_name", "STRING"),
    ("database_name", "STRING"),
    ("qualified_name", "STRING"),
)
COLUMNS: dict[str, tuple[tuple[str, str], ...]] = {
    "dynamic_tables": (
        *_NAME_COLUMNS,
        ("target_lag_type", "STRING"),
        ("target_lag_sec", "BIGINT"),
        ("refresh_period_sec", "DOUBLE"),
        ("mean_lag_sec", "DOUBLE"),
        ("maximum_lag_sec", "DOUBLE"),
        ("time_within_target_lag_ratio", "DOUBLE"),
        ("last_completed_refresh_state", "STRING"),
        ("data_timestamp", "TIMESTAMP"),
        ("scheduling_state", "STRING"),
        ("suspend_reason", "STRING"),
        ("refresh_mode", "STRING"),
    ),
    "dynamic_table_graph_history": (
        *_NAME_COLUMNS,
        ("inputs", "STRING"),
        ("target_lag_type", "STRING"),
        ("target_lag_sec", "BIGINT"),
        ("query_text", "STRING"),
        ("valid_from", "TIMESTAMP"),
        ("valid_to", "TIMESTAMP"),
        ("scheduling_state", "STRING"),
        ("suspend_reason", "STRING"),
        ("refresh_mode", "STRING"),
        ("last_completed_refresh_state", "STRING"),
        ("data_timestamp", "TIMESTAMP"),
    ),
}


def _names(qualified: str) -> list[Any]:
    parts = qualified.split(".")
    catalog = parts[-3] if len(parts) > 2 else "spark_catalog"
    return [parts[-1], parts[-2] if len(parts) > 1 else "", catalog, qualified]


def _lag_type(node: DagNode) -> str:
    return "DOWNSTREAM" if node.target_lag == "DOWNSTREAM" else "USER_DEFINED"


def _data_timestamp(node: DagNode) -> datetime.datetime | None:
    stamp = node.lag.data_timestamp
    return to_datetime(stamp) if stamp is not None else None


def _dynamic_table_row(node: DagNode) -> list[Any]:
    return [
        *_names(node.name),
        _lag_type(node),
        node.target_lag_sec,
        node.period_sec,
        node.lag.mean_lag,
        node.lag.maximum_lag,
        node.lag.within_target_ratio,
        node.last_state,
        _data_timestamp(node),
        node.scheduling_state,
        node.suspend_reason,
        node.refresh_mode,
    ]


def _graph_history_row(node: DagNode, view: DagView) -> list[Any]:
    inputs = [{"name": name, "kind": view.nodes[name].kind} for name in node.inputs]
    created = datetime.datetime.fromisoformat(node.created_on) if node.created_on else None
    if created is not None and created.tzinfo is not None:
        created = created.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    return [
        *_names(node.name),
        json.dumps(inputs),
        _lag_type(node),
        node.target_lag_sec,
        node.query,
        created,
        None,
        node.scheduling_state,
        node.suspend_reason,
        node.refresh_mode,
        node.last_state,
        _data_timestamp(node),
    ]


def rows(function: str, view: DagView, wanted: str | None) -> list[list[Any]]:
    """The rows of ``function`` (a key of ``COLUMNS``), of every dynamic table or only of
    ``wanted`` (a qualified name)."""
    return [
        _dynamic_table_row(node) if function == "dynamic_tables" else _graph_history_row(node, view)
        for node in view.dynamic_tables
        if wanted is None or node.name == wanted
    ]
