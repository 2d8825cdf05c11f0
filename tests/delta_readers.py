"""What the deletion-vector tests compare: a table's rows as a multiset, read by sparkshim
or by delta-rs's own query engine (DataFusion), an independent reader of the vectors."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
from deltalake import DeltaTable, QueryBuilder

from sparkshim.session import ShimSession


def multiset(rows: list[dict[str, Any]]) -> Counter[str]:
    return Counter(json.dumps(row, sort_keys=True, default=str) for row in rows)


def delta_rs_rows(location: Path, version: int | None = None) -> Counter[str]:
    """The rows delta-rs's query engine reads at ``version`` (vectors applied)."""
    table = DeltaTable(str(location), version=version)
    query = QueryBuilder().register("t", table).execute("SELECT * FROM t")
    return multiset(pa.table(query.read_all()).to_pylist())


def session_rows(session: ShimSession, sql: str) -> Counter[str]:
    return multiset([row.asDict() for row in session.sql(sql).collect()])


def location_of(session: ShimSession, name: str) -> Path:
    uri = str(session.sql(f"DESCRIBE DETAIL {name}").collect()[0]["location"])
    return Path(uri.removeprefix("file://"))
