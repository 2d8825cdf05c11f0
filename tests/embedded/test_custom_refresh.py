"""Custom incrementalization (seed 003) on the embedded engine (sparkshim, Delta)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from custom_scenario import CustomScenario
from lifecycle_scenario import Env

from dyntables import DynamicTableError, DynamicTables

pytestmark = pytest.mark.embedded


class TestEmbeddedCustom(CustomScenario):
    @pytest.fixture
    def env(self, tmp_path: Path) -> Env:
        dt = DynamicTables(warehouse=tmp_path / "warehouse")
        dt.sql("CREATE DATABASE shop")
        dt.sql("USE shop")
        self.warehouse = tmp_path / "warehouse"
        return Env(dt=dt, database="shop", using="delta")

    def expire_changes(self, env: Env, table: str) -> None:
        """Vacuum every file the current version does not need (the change data files
        and the data files of older versions), as on Spark's Delta."""
        check = "spark.databricks.delta.retentionDurationCheck.enabled"
        env.dt.session.conf.set(check, "false")
        try:
            env.sql(f"VACUUM {table} RETAIN 0 HOURS")
        finally:
            env.dt.session.conf.unset(check)


CHANGES_SEEN = """CREATE DYNAMIC TABLE changes_seen (
  id INT, name STRING, action STRING, is_update BOOLEAN
) TARGET_LAG = '1 minute' WAREHOUSE = w
REFRESH USING (
  INSERT INTO SELF
  SELECT id, name, METADATA$ACTION, METADATA$ISUPDATE FROM users CHANGES() AS u
)"""


@pytest.fixture
def dt(tmp_path: Path) -> DynamicTables:
    tables = DynamicTables(warehouse=tmp_path / "warehouse")
    tables.sql("CREATE TABLE users (id INT, name STRING) USING delta")
    tables.sql("INSERT INTO users VALUES (1, 'ann'), (2, 'bob')")
    return tables


def seen(dt: DynamicTables) -> Counter[tuple[object, ...]]:
    return Counter(tuple(row) for row in dt.sql("SELECT * FROM changes_seen").collect())


def change_some_users(dt: DynamicTables) -> None:
    dt.sql("UPDATE users SET name = 'anna' WHERE id = 1")
    dt.sql("DELETE FROM users WHERE id = 2")
    dt.sql("INSERT INTO users VALUES (2, 'bob')")  # back as it was
    dt.sql("INSERT INTO users VALUES (3, 'cy')")
    dt.sql("UPDATE users SET name = 'cyd' WHERE id = 3")


def test_without_a_key_changes_are_what_the_change_feed_recorded(dt: DynamicTables) -> None:
    dt.sql(CHANGES_SEEN)
    initial = Counter([(1, "ann", "INSERT", False), (2, "bob", "INSERT", False)])
    assert seen(dt) == initial  # the first refresh: the rows as INSERTs
    change_some_users(dt)
    dt.sql("ALTER DYNAMIC TABLE changes_seen REFRESH")
    assert seen(dt) == initial + Counter(
        [
            (1, "ann", "DELETE", True),  # an update is a DELETE + INSERT pair
            (1, "anna", "INSERT", True),
            (2, "bob", "DELETE", False),  # deleted and inserted again: two rows
            (2, "bob", "INSERT", False),
            (3, "cy", "INSERT", False),
            (3, "cy", "DELETE", True),
            (3, "cyd", "INSERT", True),
        ]
    )


def test_with_a_rely_key_changes_are_netted_per_key(dt: DynamicTables) -> None:
    dt.sql("ALTER TABLE users ADD CONSTRAINT users_pk PRIMARY KEY (id) RELY")
    dt.sql(CHANGES_SEEN)
    initial = Counter([(1, "ann", "INSERT", False), (2, "bob", "INSERT", False)])
    change_some_users(dt)
    refreshed = dt.sql("ALTER DYNAMIC TABLE changes_seen REFRESH").collect()[0]
    assert (refreshed.rows_inserted, refreshed.rows_deleted) == (3, 0)
    assert seen(dt) == initial + Counter(
        [
            (1, "ann", "DELETE", True),
            (1, "anna", "INSERT", True),
            (3, "cyd", "INSERT", False),  # inserted and updated since: one new row
        ]
    )


def test_rely_keys_on_sources_are_checked(dt: DynamicTables) -> None:
    with pytest.raises(DynamicTableError, match="nope is not a column of"):
        dt.sql("ALTER TABLE users ADD CONSTRAINT pk PRIMARY KEY (nope) RELY")
    properties = {r.key: r.value for r in dt.sql("SHOW TBLPROPERTIES users").collect()}
    assert "dynamic_table.primary_key" not in properties
    assert dt.sql("SHOW DYNAMIC TABLES").collect() == []


def test_explain_shows_the_custom_mode(dt: DynamicTables) -> None:
    dt.sql(CHANGES_SEEN)
    rows = dt.sql("EXPLAIN DYNAMIC TABLE changes_seen").collect()
    explained = {row.operator: row.strategy for row in rows}
    assert explained["refresh_mode"] == "CUSTOM_INCREMENTAL"


def test_explain_create_checks_the_statement_and_creates_nothing(dt: DynamicTables) -> None:
    rows = dt.sql(f"EXPLAIN {CHANGES_SEEN}").collect()
    assert {row.operator: row.strategy for row in rows}["refresh_mode"] == "CUSTOM_INCREMENTAL"
    with pytest.raises(DynamicTableError, match="does not resolve"):
        dt.sql(f"EXPLAIN {CHANGES_SEEN.replace('SELECT id,', 'SELECT nothing,')}")
    assert dt.sql("SHOW DYNAMIC TABLES").collect() == []
