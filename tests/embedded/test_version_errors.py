"""Time travel and change feeds past a table's versions are refused in Delta's words,
naming the versions there are. They raised delta-rs's own errors ("Kernel error: Generic
delta kernel error: LogSegment end version 1 not the same as the specified end version
99", "Invalid table version: 5"); the refresh fuzzer found them."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparkshim import ShimSession
from sparkshim.errors import AnalysisException

pytestmark = pytest.mark.embedded


@pytest.fixture
def session(tmp_path: Path) -> ShimSession:
    shim = ShimSession(warehouse=str(tmp_path / "warehouse"))
    shim.sql(
        "CREATE TABLE t (id BIGINT) USING delta TBLPROPERTIES (delta.enableChangeDataFeed = true)"
    )
    shim.sql("INSERT INTO t VALUES (1)")
    return shim


@pytest.mark.parametrize("version", [99, 2, -1])
def test_a_version_the_log_does_not_hold(session: ShimSession, version: int) -> None:
    with pytest.raises(AnalysisException, match=r"DELTA_VERSION_NOT_FOUND.*\[0, 1\]"):
        session.sql(f"SELECT * FROM t VERSION AS OF {version}").collect()
    assert session.sql("SELECT * FROM t VERSION AS OF 1").collect()[0][0] == 1


def test_changes_from_after_the_latest_version(session: ShimSession) -> None:
    with pytest.raises(
        AnalysisException, match=r"Start version\(5\).*latest version of the table\(1\)"
    ):
        session.sql("SELECT * FROM table_changes('t', 5, 7)").collect()
    assert len(session.sql("SELECT * FROM table_changes('t', 1, 7)").collect()) == 1
