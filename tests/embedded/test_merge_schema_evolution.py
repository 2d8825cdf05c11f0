"""MERGE with ``spark.databricks.delta.schema.autoMerge.enabled``: Delta adds the source's
columns that the target lacks when a clause is ``UPDATE SET *`` or ``INSERT *``. The
embedded engine once dropped those columns silently; it now refuses the statement,
naming them, and changes nothing (add them first with ALTER TABLE ADD COLUMNS)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sparkshim import ShimSession
from sparkshim.errors import UnsupportedSqlError

pytestmark = pytest.mark.embedded

AUTO_MERGE = "spark.databricks.delta.schema.autoMerge.enabled"
SOURCE = "(SELECT 1 AS id, 11 AS v, 'n' AS Extra, 2 AS more UNION ALL SELECT 3, 30, 'm', 4) s"


@pytest.fixture
def shim(tmp_path: Path) -> Iterator[Any]:
    session = ShimSession(warehouse=str(tmp_path / "warehouse"))
    session.sql("CREATE TABLE t (Id INT, V INT) USING delta")
    session.sql("INSERT INTO t VALUES (1, 10), (2, 20)")
    yield session
    session.stop()


def _state(session: Any) -> tuple[Any, ...]:
    frame = session.sql("SELECT * FROM t")
    rows = sorted(tuple(row) for row in frame.collect())
    version = session.sql("DESCRIBE HISTORY t").collect()[0].version
    return frame.columns, rows, version


@pytest.mark.parametrize(
    "clauses",
    [
        "WHEN MATCHED THEN UPDATE SET *",
        "WHEN NOT MATCHED THEN INSERT *",
        "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *",
        "WHEN MATCHED THEN DELETE WHEN NOT MATCHED THEN INSERT *",
    ],
)
def test_auto_merge_with_new_source_columns_is_refused(shim: Any, clauses: str) -> None:
    shim.conf.set(AUTO_MERGE, "true")
    before = _state(shim)
    with pytest.raises(UnsupportedSqlError, match=r"`Extra`, `more`.*ALTER TABLE t ADD COLUMNS"):
        shim.sql(f"MERGE INTO t USING {SOURCE} ON t.id = s.id {clauses}")
    assert _state(shim) == before


def test_auto_merge_after_adding_the_columns_merges(shim: Any) -> None:
    shim.conf.set(AUTO_MERGE, "TRUE")
    with pytest.raises(UnsupportedSqlError):
        shim.sql(f"MERGE INTO t USING {SOURCE} ON t.id = s.id WHEN NOT MATCHED THEN INSERT *")
    shim.sql("ALTER TABLE t ADD COLUMNS (extra STRING, More INT)")
    shim.sql(
        f"MERGE INTO t USING {SOURCE} ON t.id = s.id"
        " WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
    )
    assert _state(shim)[:2] == (
        ["Id", "V", "extra", "More"],
        [(1, 11, "n", 2), (2, 20, None, None), (3, 30, "m", 4)],
    )
    # Explicit assignments evolve nothing in Delta: extra source columns are fine.
    shim.sql(f"MERGE INTO t USING {SOURCE} ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = s.v + 1")
    assert _state(shim)[1][0] == (1, 12, "n", 2)
