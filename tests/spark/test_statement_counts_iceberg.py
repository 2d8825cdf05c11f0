"""How many engine statements a refresh, an idle scheduler tick and SHOW run on Spark +
Iceberg (every ``session.sql`` on the user's and the refresh session): deterministic, so a
change that adds a statement fails here. Spark reads table metadata through statements
(``SHOW TBLPROPERTIES`` of each table, the snapshot metadata tables of all of them in one
statement), and each costs 100 ms or more.
The bounds these counts meet, as on the embedded engine
(tests/embedded/test_statement_counts.py): NO_DATA at most 3, an incremental refresh at
most 10, a tick over N tables at most N + 10, SHOW at most N + 5."""

from __future__ import annotations

import pytest
from lifecycle_scenario import spark_env
from pyspark.sql import SparkSession
from statement_counts import build_pipeline, idle_tick, measure_pipeline

from dyntables import DynamicTables

pytestmark = pytest.mark.spark

TABLES = 3  # two filters and a GROUP BY


def test_statements_of_refreshes_ticks_and_show(other_catalog_spark: SparkSession) -> None:
    env = spark_env(other_catalog_spark, "iceberg")
    build_pipeline(env.dt, TABLES, "iceberg")
    # A new DynamicTables: a new process, as far as what it knows of the tables goes.
    tables = DynamicTables(other_catalog_spark)
    measured = measure_pipeline(tables, TABLES)
    counts = {name: statements for name, (statements, _) in measured.items()}
    tick = counts.pop("idle tick")
    assert counts == {
        # Also: the system tables created, the history rows of earlier refreshes looked up,
        # the history table's files counted for compaction.
        "NO_DATA, first in a process": 8,
        "NO_DATA": 3,  # the definition, the histories (one statement), the history row
        # The definition, the histories, the changelog view, the net change, the copies
        # the table holds of it, the MERGE (staged), the snapshots (the staged one and
        # main), the publish branch moved to it, main fast-forwarded, the history row.
        "incremental filter": 10,
        # The definition, the histories, the history rows of earlier refreshes looked up
        # (its first refresh in this process), the affected groups (the changelog view
        # made for the filter is reused: the same range), the MERGE, the snapshots, the
        # publish (two), the history row.
        "incremental GROUP BY": 9,
        "SHOW": 7,  # N + 4 (SHOW lists the current database only)
        # The query's schema, the source's properties (its definition, if any, and its
        # change tracking), CREATE TABLE, the histories of the table and its source, the
        # INSERT OVERWRITE (staged), the snapshots, the publish (two), the history row;
        # rows before and after from the snapshot summaries.
        "CREATE": 9,
    }
    # A tick covers every dynamic table of the catalog (this test's own: see the fixture).
    # Its listing reads each database and table once, then the histories of all tables in
    # one statement; its refreshes read each upstream's definition (a source's schema comes
    # from the catalog, with no statement): within the N + 10.
    assert tick == _listing_statements(other_catalog_spark) + _sources_read(tables) + 1
    # What a tick costs per table: three more dynamic tables (the one whose CREATE was
    # measured, two more; on the same source) cost one statement each (its definition).
    for name in ("e0", "e1"):
        env.sql(
            f"CREATE DYNAMIC TABLE {name} TARGET_LAG = '1 minute' REFRESH_MODE = INCREMENTAL"
            " AS SELECT k FROM src WHERE v > 500"
        )
    more, _ = idle_tick(tables)
    assert more - tick == 3


def _listing_statements(spark: SparkSession) -> int:
    """SHOW DATABASES, SHOW TABLES of each database and SHOW TBLPROPERTIES of each table
    (the system tables' database is skipped)."""
    databases = [d.name for d in spark.catalog.listDatabases() if d.name != "dyntables_system"]
    tables = sum(len(spark.catalog.listTables(database)) for database in databases)
    return 1 + len(databases) + tables


def _sources_read(tables: DynamicTables) -> int:
    """Each dynamic table read by another (its definition, per reader)."""
    managed = [definition for _, definition in tables.lifecycle.managed_tables()]
    return sum(len(definition.upstreams) for definition in managed)
