"""What making the product starts: nothing beyond the user's session. The refresh session
(a second session on Spark, with its own cost) is made by the first refresh that needs it."""

from __future__ import annotations

from pathlib import Path

import pytest

from dyntables import DynamicTables

pytestmark = pytest.mark.embedded


def test_making_dynamic_tables_starts_no_refresh_session(tmp_path: Path) -> None:
    tables = DynamicTables(warehouse=tmp_path / "warehouse")
    assert tables.engine._refresh_session is None
    tables.sql("CREATE TABLE src (k INT) USING delta")
    tables.sql("CREATE DYNAMIC TABLE dt TARGET_LAG = '1 minute' AS SELECT k FROM src")
    assert tables.engine._refresh_session is not None
