"""A table may be named like a function (``first_value``, ``last_value``: legal names in
Spark). ``CREATE TABLE first_value (id BIGINT)`` was read as a call (a name before a
parenthesis), stored under a private name, and the table could not be read; the refresh
fuzzer found it. The same names still call their functions."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparkshim import ShimSession

pytestmark = pytest.mark.embedded


@pytest.mark.parametrize("name", ["first_value", "last_value", "default.first_value"])
def test_a_table_named_like_a_function(tmp_path: Path, name: str) -> None:
    session = ShimSession(warehouse=str(tmp_path / "warehouse"))
    session.sql(f"CREATE TABLE IF NOT EXISTS {name} (id BIGINT, v INT) USING delta")
    session.sql(f"INSERT INTO {name} (id, v) VALUES (1, 10), (2, 20)")
    rows = session.sql(
        f"SELECT id, first_value(v) OVER (ORDER BY id DESC) AS f FROM {name} ORDER BY id"
    ).collect()
    assert [tuple(row) for row in rows] == [(1, 20), (2, 20)]
