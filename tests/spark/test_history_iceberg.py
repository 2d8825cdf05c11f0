"""The refresh history read on Spark + Iceberg sees rows other processes appended: Iceberg's
catalog caches a table per session (and keeps a table accessed within its expiry cached),
so a read from that copy would miss them — a refresh recovered as missing would get a
second row. Another session of the same Spark application has its own catalog and cache,
as another process does."""

from __future__ import annotations

import datetime
import uuid

import pytest
from pyspark.sql import SparkSession

from dyntables import DynamicTables
from dyntables.history import RefreshRecord

pytestmark = pytest.mark.spark


def _record(query_id: str) -> RefreshRecord:
    now = datetime.datetime(2026, 1, 1)
    return RefreshRecord(
        name="t",
        schema_name="s",
        state="SUCCEEDED",
        state_message=None,
        query_id=query_id,
        refresh_trigger="MANUAL",
        refresh_action="FULL",
        refresh_action_reason=None,
        data_timestamp=now,
        refresh_start_time=now,
        refresh_end_time=now,
        rows_inserted=1,
        rows_deleted=0,
        table_version=1,
        statement_id=None,
    )


def test_the_history_read_sees_rows_another_session_appended(iceberg_spark: SparkSession) -> None:
    reader = DynamicTables(iceberg_spark).system
    writer = DynamicTables(iceberg_spark.newSession()).system
    first, second = str(uuid.uuid4()), str(uuid.uuid4())
    writer.record_refresh(_record(first))
    assert reader.recorded_refreshes([first, second]) == {first}  # the table now cached
    writer.record_refresh(_record(second))
    assert reader.recorded_refreshes([first, second]) == {first, second}
