"""The lifecycle scenario on the embedded engine (sparkshim, Delta through delta-rs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lifecycle_scenario import Env, LifecycleScenario

from dyntables import ConcurrentRefreshError, DynamicTableError, DynamicTables

pytestmark = pytest.mark.embedded


class TestEmbeddedLifecycle(LifecycleScenario):
    @pytest.fixture
    def env(self, tmp_path: Path) -> Env:
        dt = DynamicTables(warehouse=tmp_path / "warehouse")
        dt.sql("CREATE DATABASE shop")
        dt.sql("USE shop")
        self.warehouse = tmp_path / "warehouse"
        return Env(dt=dt, database="shop", using="delta")

    def new_dynamic_tables(self, env: Env) -> DynamicTables:
        return DynamicTables(warehouse=self.warehouse)


@pytest.fixture
def dt(tmp_path: Path) -> DynamicTables:
    tables = DynamicTables(warehouse=tmp_path / "warehouse")
    tables.sql(
        "CREATE TABLE orders (order_id BIGINT, amount DECIMAL(10, 2), status STRING) USING delta"
    )
    tables.sql("INSERT INTO orders VALUES (1, 20.00, 'paid'), (2, 5.50, 'returned')")
    tables.sql(
        "CREATE DYNAMIC TABLE paid TARGET_LAG = '1 minute'"
        " AS SELECT order_id, amount FROM orders WHERE status = 'paid'"
    )
    return tables


def test_an_interrupted_replace_is_finished_on_next_use(
    dt: DynamicTables, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def crash(*args: object) -> None:
        raise RuntimeError("the process stopped here")

    # The replace commits its rows (with the new definition in the watermark), then dies
    # before the properties commit.
    monkeypatch.setattr(dt.engine.table_format, "set_properties", crash)
    with pytest.raises(DynamicTableError, match="stopped here"):
        dt.sql(
            "CREATE OR REPLACE DYNAMIC TABLE paid TARGET_LAG = '5 minutes'"
            " AS SELECT order_id FROM orders"
        )
    after_crash = DynamicTables(warehouse=tmp_path / "warehouse")
    shown = after_crash.sql("SHOW DYNAMIC TABLES LIKE 'paid'").collect()[0]
    assert shown.target_lag == "5 minutes"
    assert sorted(after_crash.sql("SELECT * FROM paid").collect()) == [(1,), (2,)]
    refreshed = after_crash.sql("ALTER DYNAMIC TABLE paid REFRESH").collect()[0]
    assert refreshed.action == "NO_DATA"


def test_a_refresh_never_overwrites_a_commit_it_did_not_read(
    dt: DynamicTables, monkeypatch: pytest.MonkeyPatch
) -> None:
    fmt = dt.engine.table_format
    real = {"overwrite": fmt.overwrite, "append": fmt.append, "replace_where": fmt.replace_where}

    def after_a_concurrent_commit(name: str) -> Any:
        def write(*args: object, **kwargs: object) -> None:
            # Another writer commits to the dynamic table after this refresh read it.
            dt.session.sql("INSERT INTO paid VALUES (99, 0.00)")
            real[name](*args, **kwargs)

        return write

    dt.sql("INSERT INTO orders VALUES (3, 1.00, 'paid')")
    for name in real:
        monkeypatch.setattr(fmt, name, after_a_concurrent_commit(name))
    with pytest.raises(ConcurrentRefreshError, match="lost a race") as lost:
        dt.sql("ALTER DYNAMIC TABLE paid REFRESH")
    assert "DELTA_CONCURRENT_WRITE" in str(lost.value.__cause__)
    assert 99 in {row[0] for row in dt.sql("SELECT * FROM paid").collect()}
    for name, write in real.items():
        monkeypatch.setattr(fmt, name, write)
    refreshed = dt.sql("ALTER DYNAMIC TABLE paid REFRESH").collect()[0]
    # The foreign row makes the table not the query's result: recomputed, not patched.
    assert (refreshed.action, refreshed.reason) == (
        "REINITIALIZE",
        "TABLE_CHANGED_OUTSIDE_A_REFRESH",
    )
    assert sorted(row.order_id for row in dt.sql("SELECT * FROM paid").collect()) == [1, 3]


def test_a_long_run_of_no_data_carries_the_watermark_forward(
    dt: DynamicTables, monkeypatch: pytest.MonkeyPatch
) -> None:
    import datetime

    from dyntables.refresh import context as refresh

    monkeypatch.setattr(refresh, "WATERMARK_RECOMMIT_AFTER", datetime.timedelta(0))
    assert dt.sql("ALTER DYNAMIC TABLE paid REFRESH").collect()[0].action == "NO_DATA"
    latest = dt.session.sql("DESCRIBE HISTORY paid LIMIT 1").collect()[0]
    assert latest.operation == "SET TBLPROPERTIES"
    assert '"dyntables": 1' in latest.userMetadata
    assert dt.sql("ALTER DYNAMIC TABLE paid REFRESH").collect()[0].action == "NO_DATA"


def test_concurrent_readers_of_a_stale_materialized_view_share_one_refresh(
    dt: DynamicTables,
) -> None:
    from concurrent.futures import ThreadPoolExecutor

    dt.sql("CREATE MATERIALIZED VIEW paid_count AS SELECT count(*) AS n FROM paid")
    dt.sql("INSERT INTO orders VALUES (3, 1.00, 'paid')")
    dt.sql("ALTER DYNAMIC TABLE paid REFRESH")  # the view's source moved: it is stale
    with ThreadPoolExecutor(max_workers=4) as pool:
        counts = list(pool.map(lambda _: dt.sql("SELECT n FROM paid_count").collect(), range(4)))
    assert counts == [[(2,)]] * 4
    history = dt.sql(
        "SELECT refresh_action FROM"
        " information_schema.dynamic_table_refresh_history(NAME => 'paid_count')"
    ).collect()
    assert sorted(row.refresh_action for row in history) == ["FULL", "FULL"]  # CREATE + one


def test_refresh_history_by_name_is_of_the_current_database_unless_qualified(
    dt: DynamicTables,
) -> None:
    dt.sql("CREATE DATABASE archive")
    dt.sql(
        "CREATE DYNAMIC TABLE archive.paid TARGET_LAG = '1 minute'"
        " AS SELECT order_id FROM default.orders"
    )
    dt.sql("ALTER DYNAMIC TABLE archive.paid REFRESH")

    def schemas(name: str) -> list[str]:
        rows = dt.sql(
            "SELECT schema_name FROM"
            f" information_schema.dynamic_table_refresh_history(NAME => '{name}')"
        ).collect()
        return sorted(row.schema_name for row in rows)

    assert schemas("paid") == ["default"]  # the fixture's CREATE
    assert schemas("archive.paid") == ["archive", "archive"]
    dt.sql("USE archive")
    assert schemas("PAID") == ["archive", "archive"]
