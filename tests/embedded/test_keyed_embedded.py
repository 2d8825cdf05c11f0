"""Keyed recomputes (tests/keyed_scenario.py) on the embedded engine."""

from __future__ import annotations

from pathlib import Path

import pytest
from keyed_scenario import (
    run_keyed_recomputes,
    run_mixed_type_join_keys,
    run_unread_column_updates,
    run_unread_columns_of_every_type,
)
from lifecycle_scenario import Env

from dyntables import DynamicTables

pytestmark = pytest.mark.embedded


def test_keyed_recomputes_follow_their_query(tmp_path: Path) -> None:
    dt = DynamicTables(warehouse=tmp_path / "warehouse")
    dt.sql("CREATE DATABASE shop")
    dt.sql("USE shop")
    run_keyed_recomputes(Env(dt=dt, database="shop", using="delta"))


def test_updates_of_unread_columns_recompute_nothing(tmp_path: Path) -> None:
    dt = DynamicTables(warehouse=tmp_path / "warehouse")
    run_unread_column_updates(Env(dt=dt, database="default", using="delta"))


def test_feeds_netted_on_columns_of_every_type(tmp_path: Path) -> None:
    dt = DynamicTables(warehouse=tmp_path / "warehouse")
    run_unread_columns_of_every_type(Env(dt=dt, database="default", using="delta"))


def test_outer_joins_on_keys_of_mixed_types(tmp_path: Path) -> None:
    dt = DynamicTables(warehouse=tmp_path / "warehouse")
    run_mixed_type_join_keys(Env(dt=dt, database="default", using="delta"))
