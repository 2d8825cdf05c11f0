"""The dynamic-table lifecycle scenario, run by every engine tier.

Each tier subclasses ``LifecycleScenario`` and provides an ``env`` fixture: a
``DynamicTables`` on its engine, working in a database of its own. The oracle for every
refresh is the defining query itself, run on the same sources.
"""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass
from typing import Any

import pytest
from sqlglot import exp

from dyntables import DynamicTableError, DynamicTables, compaction, history


@dataclass
class Env:
    dt: DynamicTables
    database: str
    using: str  # the table format's USING keyword

    def sql(self, text: str) -> Any:
        return self.dt.sql(text)

    @property
    def changed_action(self) -> str:
        """The action of a refresh after a source change, where the query can be
        incremental: INCREMENTAL where the format's incremental refresh exists."""
        return "INCREMENTAL" if self.dt.engine.table_format.supports_incremental else "FULL"

    def rows(self, text: str) -> Counter[tuple[Any, ...]]:
        """The multiset of rows ``text`` returns."""
        return Counter(tuple(row) for row in self.dt.sql(text).collect())

    def source(self, name: str, columns: str, values: str | None = None) -> None:
        self.sql(f"CREATE TABLE {name} ({columns}) USING {self.using}")
        if values is not None:
            self.sql(f"INSERT INTO {name} VALUES {values}")

    def history(self, name: str) -> list[tuple[str, str, str]]:
        """(trigger, action, state) of each refresh of ``name``, oldest first."""
        rows = self.dt.sql(
            "SELECT refresh_trigger, refresh_action, state, refresh_start_time FROM"
            f" information_schema.dynamic_table_refresh_history(NAME => '{name}')"
        ).collect()
        ordered = sorted(rows, key=lambda row: row[3])
        return [(row[0], row[1], row[2]) for row in ordered]

    def show(self, like: str) -> dict[str, Any]:
        rows = self.dt.sql(f"SHOW DYNAMIC TABLES LIKE '{like}'").collect()
        assert len(rows) == 1, rows
        return rows[0].asDict()


_spark_databases = itertools.count()


def spark_env(session: Any, table_format: str) -> Env:
    """An ``Env`` on a real SparkSession, in a fresh database of its own."""
    database = f"shop_{next(_spark_databases)}"
    dt = DynamicTables(session)
    assert dt.engine.table_format.name == table_format  # detected from the session
    session.sql(f"CREATE DATABASE {database}")
    session.sql(f"USE {database}")
    return Env(dt=dt, database=database, using=table_format)


ORDERS = "order_id BIGINT, customer_id BIGINT, amount DECIMAL(10, 2), status STRING"
ORDER_ROWS = "(1, 10, 20.00, 'paid'), (2, 10, 5.50, 'returned'), (3, 11, 7.25, 'paid')"
CLEAN_QUERY = "SELECT order_id, customer_id, amount FROM orders WHERE status <> 'returned'"


class LifecycleScenario:
    """Create, refresh, NO_DATA, history, SHOW, ALTER, DROP, DML refusal, failed CREATE
    and REPLACE, materialized views."""

    def create_clean(self, env: Env, lag: str = "'1 minute'") -> None:
        env.source("orders", ORDERS, ORDER_ROWS)
        env.sql(
            f"CREATE DYNAMIC TABLE clean_orders TARGET_LAG = {lag} WAREHOUSE = transform_wh"
            f" AS {CLEAN_QUERY}"
        )

    def test_create_refresh_and_no_data(self, env: Env) -> None:
        self.create_clean(env)
        assert env.rows("SELECT * FROM clean_orders") == env.rows(CLEAN_QUERY)
        refreshed = env.sql("ALTER DYNAMIC TABLE clean_orders REFRESH").collect()[0]
        assert (refreshed.action, refreshed.state) == ("NO_DATA", "SUCCEEDED")
        env.sql("INSERT INTO orders VALUES (4, 12, 1.00, 'paid')")
        env.sql("UPDATE orders SET status = 'returned' WHERE order_id = 1")
        refreshed = env.sql("ALTER DYNAMIC TABLE clean_orders REFRESH").collect()[0]
        assert (refreshed.action, refreshed.state) == (env.changed_action, "SUCCEEDED")
        assert env.rows("SELECT * FROM clean_orders") == env.rows(CLEAN_QUERY)
        assert env.history("clean_orders") == [
            ("CREATION", "FULL", "SUCCEEDED"),
            ("MANUAL", "NO_DATA", "SUCCEEDED"),
            ("MANUAL", env.changed_action, "SUCCEEDED"),
        ]

    def test_a_property_change_of_a_source_is_no_data(self, env: Env) -> None:
        self.create_clean(env)
        env.sql("ALTER TABLE orders SET TBLPROPERTIES ('team' = 'sales')")
        refreshed = env.sql("ALTER DYNAMIC TABLE clean_orders REFRESH").collect()[0]
        assert refreshed.action == "NO_DATA"

    def test_show_and_describe(self, env: Env) -> None:
        self.create_clean(env)
        env.sql("ALTER DYNAMIC TABLE clean_orders SET COMMENT = 'paid orders'")
        shown = env.show("clean%")
        assert shown["name"] == "clean_orders"
        assert shown["schema_name"] == env.database
        assert shown["target_lag"] == "1 minute"
        assert shown["warehouse"] == "transform_wh"
        assert shown["refresh_mode"] == env.changed_action  # AUTO: incremental where built
        assert shown["scheduling_state"] == "ACTIVE"
        assert shown["rows"] == 2
        assert shown["comment"] == "paid orders"
        assert shown["immutable_where"] is None
        assert shown["data_timestamp"] is not None
        assert "CREATE DYNAMIC TABLE clean_orders" in shown["text"]
        assert env.sql("SHOW DYNAMIC TABLES LIKE 'nothing%'").collect() == []
        described = env.sql("DESCRIBE DYNAMIC TABLE clean_orders").collect()
        assert [(row["name"], row["type"]) for row in described] == [
            ("order_id", "bigint"),
            ("customer_id", "bigint"),
            ("amount", "decimal(10,2)"),
        ]

    def test_alter_suspend_resume_lag_and_warehouse(self, env: Env) -> None:
        self.create_clean(env)
        env.sql("ALTER DYNAMIC TABLE clean_orders SUSPEND")
        assert env.show("clean_orders")["scheduling_state"] == "SUSPENDED"
        env.sql("ALTER DYNAMIC TABLE clean_orders RESUME")
        assert env.show("clean_orders")["scheduling_state"] == "ACTIVE"
        env.sql("ALTER DYNAMIC TABLE clean_orders SET TARGET_LAG = '2 hours'")
        env.sql("ALTER DYNAMIC TABLE clean_orders SET WAREHOUSE = other_wh")
        shown = env.show("clean_orders")
        assert (shown["target_lag"], shown["warehouse"]) == ("2 hours", "other_wh")
        with pytest.raises(DynamicTableError, match="RENAME"):
            env.sql("ALTER DYNAMIC TABLE clean_orders RENAME TO renamed")
        mode = env.show("clean_orders")["refresh_mode"]
        with pytest.raises(DynamicTableError, match="cannot be changed: recreate it"):
            env.sql("ALTER DYNAMIC TABLE clean_orders SET REFRESH_MODE = FULL")
        assert env.show("clean_orders")["refresh_mode"] == mode  # nothing changed
        env.sql("ALTER DYNAMIC TABLE IF EXISTS missing_dt SUSPEND")  # nothing to do

    def test_lag_rules_and_cycles(self, env: Env) -> None:
        self.create_clean(env, lag="'10 minutes'")
        with pytest.raises(DynamicTableError, match="shorter than that of its upstream"):
            env.sql(
                "CREATE DYNAMIC TABLE totals TARGET_LAG = '1 minute'"
                " AS SELECT customer_id, sum(amount) AS total FROM clean_orders GROUP BY 1"
            )
        env.sql(
            "CREATE DYNAMIC TABLE totals TARGET_LAG = DOWNSTREAM"
            " AS SELECT customer_id, sum(amount) AS total FROM clean_orders GROUP BY 1"
        )
        # The lag rule is skipped when either side is DOWNSTREAM.
        env.sql(
            "CREATE DYNAMIC TABLE report TARGET_LAG = '1 minute'"
            " AS SELECT count(*) AS customers FROM totals"
        )
        env.sql(
            "CREATE DYNAMIC TABLE big_orders TARGET_LAG = '1 hour'"
            " AS SELECT order_id FROM clean_orders WHERE amount > 10"
        )
        with pytest.raises(DynamicTableError, match="shorter than that of its upstream"):
            env.sql("ALTER DYNAMIC TABLE big_orders SET TARGET_LAG = '1 minute'")
        with pytest.raises(DynamicTableError, match="shorter than that of its upstream"):
            env.sql("ALTER DYNAMIC TABLE clean_orders SET TARGET_LAG = '2 hours'")
        assert env.show("clean_orders")["target_lag"] == "10 minutes"
        with pytest.raises(DynamicTableError, match="cycle") as raised:
            env.sql(
                "CREATE OR REPLACE DYNAMIC TABLE clean_orders TARGET_LAG = '10 minutes'"
                " AS SELECT o.order_id, o.customer_id, o.amount FROM orders o"
                " JOIN report r ON r.customers > 0"
            )
        assert "clean_orders -> " in str(raised.value)
        assert "report" in str(raised.value)

    def test_drop(self, env: Env) -> None:
        self.create_clean(env)
        env.sql(
            "CREATE DYNAMIC TABLE totals TARGET_LAG = '1 hour'"
            " AS SELECT customer_id, sum(amount) AS total FROM clean_orders GROUP BY 1"
        )
        with pytest.raises(DynamicTableError, match="DROP DYNAMIC TABLE"):
            env.sql("DROP TABLE clean_orders")
        env.sql("DROP DYNAMIC TABLE clean_orders")
        assert env.sql("SHOW DYNAMIC TABLES LIKE 'clean%'").collect() == []
        with pytest.raises(DynamicTableError, match="clean_orders"):
            env.sql("ALTER DYNAMIC TABLE totals REFRESH")
        failed = env.sql(
            "SELECT state, state_message FROM information_schema"
            ".dynamic_table_refresh_history(NAME => 'totals', ERROR_ONLY => TRUE)"
        ).collect()
        assert [row.state for row in failed] == ["FAILED"]
        assert "clean_orders" in failed[0].state_message
        env.sql("DROP DYNAMIC TABLE IF EXISTS clean_orders")
        with pytest.raises(DynamicTableError, match="ordinary table"):
            env.sql("DROP DYNAMIC TABLE orders")

    def test_a_source_dropped_and_created_again_is_read_afresh(self, env: Env) -> None:
        """The new table may have as many versions as the old had when last read (Delta's
        start over): its version alone does not tell that its rows are others."""
        env.source("src", "k INT, v INT", "(1, 10), (2, 20)")
        env.sql(
            "CREATE DYNAMIC TABLE copied TARGET_LAG = '1 minute' REFRESH_MODE = INCREMENTAL"
            " AS SELECT k, v FROM src"
        )
        for values in ("(7, 70)", "(8, 80), (9, 90)"):
            env.sql("DROP TABLE src")
            env.source("src", "k INT, v INT", values)
            refreshed = env.sql("ALTER DYNAMIC TABLE copied REFRESH").collect()[0]
            assert refreshed.action in ("REINITIALIZE", "FULL"), refreshed
            assert env.rows("SELECT * FROM copied") == env.rows("SELECT * FROM src")
            env.sql("INSERT INTO src VALUES (3, 30)")  # the next one has more versions
        env.sql("DROP TABLE src")
        env.source("src", "k INT, v INT", "(4, 40)")
        env.sql("INSERT INTO src VALUES (5, 50)")
        env.sql("INSERT INTO src VALUES (6, 60)")
        env.sql("ALTER DYNAMIC TABLE copied REFRESH")
        assert env.rows("SELECT * FROM copied") == env.rows("SELECT * FROM src")
        env.sql("INSERT INTO src VALUES (11, 110)")
        assert env.sql("ALTER DYNAMIC TABLE copied REFRESH").collect()[0].action == (
            env.changed_action
        )
        assert env.rows("SELECT * FROM copied") == env.rows("SELECT * FROM src")

    def test_dml_into_a_dynamic_table_is_refused(self, env: Env) -> None:
        self.create_clean(env)
        before = env.rows("SELECT * FROM clean_orders")
        for statement in (
            "INSERT INTO clean_orders VALUES (9, 9, 9.00)",
            "INSERT OVERWRITE clean_orders SELECT 9, 9, 9.00",
            "UPDATE clean_orders SET amount = 0",
            "DELETE FROM clean_orders",
            "MERGE INTO clean_orders t USING orders s ON t.order_id = s.order_id"
            " WHEN MATCHED THEN DELETE",
            "TRUNCATE TABLE clean_orders",
            "ALTER TABLE clean_orders SET TBLPROPERTIES ('x' = 'y')",
        ):
            with pytest.raises(DynamicTableError, match="clean_orders"):
                env.sql(statement)
        assert env.rows("SELECT * FROM clean_orders") == before

    def test_a_failed_create_leaves_nothing_behind(self, env: Env) -> None:
        env.source("orders", ORDERS, ORDER_ROWS)
        bad_queries = {
            "SELECT no_such_column FROM orders": "does not resolve",
            "SELECT * FROM no_such_table": "no_such_table",
            "SELECT order_id, order_id FROM orders": "two columns named order_id",
            # Resolves, but fails while the initial refresh runs.
            "SELECT order_id, coalesce(assert_true(order_id < 2), 1) AS ok FROM orders": "true",
            "SELECT order_id, NULL AS nothing FROM orders": "cast it to a type",
        }
        for query, message in bad_queries.items():
            with pytest.raises(DynamicTableError, match=message):
                env.sql(f"CREATE DYNAMIC TABLE broken TARGET_LAG = '1 minute' AS {query}")
            assert not env.dt.session.catalog.tableExists(f"{env.database}.broken")
        env.sql("CREATE OR REPLACE TEMPORARY VIEW recent AS SELECT * FROM orders")
        with pytest.raises(DynamicTableError, match="temporary view"):
            env.sql("CREATE DYNAMIC TABLE broken TARGET_LAG = '1 minute' AS SELECT * FROM recent")
        with pytest.raises(DynamicTableError, match="ordinary table"):
            env.sql(
                f"CREATE OR REPLACE DYNAMIC TABLE orders TARGET_LAG = '1 minute' AS {CLEAN_QUERY}"
            )
        with pytest.raises(DynamicTableError, match="column list names 2 columns"):
            env.sql(f"CREATE DYNAMIC TABLE broken (a, b) TARGET_LAG = '1 minute' AS {CLEAN_QUERY}")
        assert env.sql("SHOW DYNAMIC TABLES").collect() == []

    def test_table_properties_are_set_and_the_prefix_is_reserved(self, env: Env) -> None:
        env.source("orders", ORDERS, ORDER_ROWS)
        env.sql(
            "CREATE DYNAMIC TABLE clean_orders TARGET_LAG = '1 minute'"
            f" TBLPROPERTIES ('team' = 'sales') AS {CLEAN_QUERY}"
        )
        shown = env.sql("SHOW TBLPROPERTIES clean_orders").collect()
        properties = {row.key: row.value for row in shown}
        assert properties["team"] == "sales"
        assert properties["dynamic_table.kind"] == "DYNAMIC_TABLE"
        with pytest.raises(DynamicTableError, match="reserved"):
            env.sql(
                "CREATE DYNAMIC TABLE other TARGET_LAG = '1 minute'"
                f" TBLPROPERTIES ('dynamic_table.query' = 'x') AS {CLEAN_QUERY}"
            )
        with pytest.raises(DynamicTableError, match="PARTITIONED BY"):
            env.sql(
                "CREATE DYNAMIC TABLE other TARGET_LAG = '1 minute'"
                f" PARTITIONED BY (customer_id) AS {CLEAN_QUERY}"
            )
        assert not env.dt.session.catalog.tableExists(f"{env.database}.other")

    def test_create_or_replace_and_if_not_exists(self, env: Env) -> None:
        self.create_clean(env)
        with pytest.raises(DynamicTableError, match="already exists"):
            env.sql(f"CREATE DYNAMIC TABLE clean_orders TARGET_LAG = '1 minute' AS {CLEAN_QUERY}")
        env.sql(
            "CREATE DYNAMIC TABLE IF NOT EXISTS clean_orders TARGET_LAG = '5 minutes'"
            " AS SELECT 1 AS one"
        )
        assert env.show("clean_orders")["target_lag"] == "1 minute"
        replacement = "SELECT customer_id, count(*) AS orders FROM orders GROUP BY customer_id"
        env.sql(
            "CREATE OR REPLACE DYNAMIC TABLE clean_orders TARGET_LAG = '5 minutes'"
            f" AS {replacement}"
        )
        assert env.rows("SELECT * FROM clean_orders") == env.rows(replacement)
        assert env.show("clean_orders")["target_lag"] == "5 minutes"
        # A replacement that fails leaves the table as it was.
        with pytest.raises(DynamicTableError):
            env.sql(
                "CREATE OR REPLACE DYNAMIC TABLE clean_orders TARGET_LAG = '1 minute'"
                " AS SELECT order_id, coalesce(assert_true(order_id < 2), 1) AS ok FROM orders"
            )
        assert env.rows("SELECT * FROM clean_orders") == env.rows(replacement)
        assert env.show("clean_orders")["target_lag"] == "5 minutes"

    def test_select_star_keeps_the_columns_of_create_time(self, env: Env) -> None:
        env.source("orders", ORDERS, ORDER_ROWS)
        env.sql("CREATE DYNAMIC TABLE all_orders TARGET_LAG = '1 minute' AS SELECT * FROM orders")
        assert env.dt.sql("SELECT * FROM all_orders").columns == [
            "order_id",
            "customer_id",
            "amount",
            "status",
        ]
        env.sql(f"CREATE OR REPLACE TABLE orders ({ORDERS}, channel STRING) USING {env.using}")
        env.sql("INSERT INTO orders VALUES (7, 1, 1.00, 'paid', 'web')")
        env.sql("ALTER DYNAMIC TABLE all_orders REFRESH")
        assert env.rows("SELECT * FROM all_orders") == {(7, 1, _decimal("1.00"), "paid"): 1}

    def test_a_new_process_can_refresh_from_the_table_alone(self, env: Env) -> None:
        self.create_clean(env)
        env.sql("INSERT INTO orders VALUES (5, 13, 3.00, 'paid')")
        fresh = self.new_dynamic_tables(env)
        fresh.sql(f"USE {env.database}")
        refreshed = fresh.sql("ALTER DYNAMIC TABLE clean_orders REFRESH").collect()[0]
        assert refreshed.action == env.changed_action
        assert env.rows("SELECT * FROM clean_orders") == env.rows(CLEAN_QUERY)

    def new_dynamic_tables(self, env: Env) -> DynamicTables:
        raise NotImplementedError  # each tier says how a second client connects

    def test_materialized_views(self, env: Env) -> None:
        env.source("orders", ORDERS, ORDER_ROWS)
        report = "SELECT status, count(*) AS n FROM orders GROUP BY status"
        env.sql(f"CREATE MATERIALIZED VIEW order_report AS {report}")
        assert env.rows("SELECT * FROM order_report") == env.rows(report)
        env.sql("INSERT INTO orders VALUES (8, 10, 2.00, 'paid')")
        views = env.sql(
            "SELECT table_name, is_stale FROM information_schema.materialized_views"
        ).collect()
        assert [(row.table_name, row.is_stale) for row in views] == [("order_report", True)]
        # A read through dt.sql refreshes a stale view first.
        assert env.rows("SELECT * FROM order_report") == env.rows(report)
        views = env.sql("SELECT is_stale FROM information_schema.materialized_views").collect()
        assert [row.is_stale for row in views] == [False]
        refreshed = env.sql("REFRESH MATERIALIZED VIEW order_report").collect()[0]
        assert refreshed.action == "NO_DATA"
        with pytest.raises(DynamicTableError, match="materialized view"):
            env.sql("ALTER DYNAMIC TABLE order_report REFRESH")
        with pytest.raises(DynamicTableError, match="order_report"):
            env.sql("DELETE FROM order_report")
        env.sql("DROP MATERIALIZED VIEW order_report")
        assert not env.dt.session.catalog.tableExists(f"{env.database}.order_report")

    def test_refresh_history_arguments(self, env: Env) -> None:
        self.create_clean(env)
        env.sql(
            "CREATE DYNAMIC TABLE clean_copy TARGET_LAG = '1 hour' AS SELECT * FROM clean_orders"
        )
        env.sql("ALTER DYNAMIC TABLE clean_copy REFRESH")
        history = "information_schema.dynamic_table_refresh_history"
        by_prefix = env.sql(f"SELECT name FROM {history}(NAME_PREFIX => 'clean_c')").collect()
        assert {row.name for row in by_prefix} == {"clean_copy"}
        limited = env.sql(f"SELECT name, refresh_action FROM {history}(RESULT_LIMIT => 1)")
        assert [tuple(row) for row in limited.collect()] == [("clean_copy", "NO_DATA")]
        columns = env.sql(f"SELECT * FROM {history}()").columns
        for expected in (
            "name",
            "schema_name",
            "state",
            "state_message",
            "query_id",
            "refresh_trigger",
            "refresh_action",
            "refresh_action_reason",
            "data_timestamp",
            "refresh_start_time",
            "refresh_end_time",
            "rows_inserted",
            "rows_deleted",
        ):
            assert expected in columns

    def test_statements_are_logged_with_the_versions_they_committed(self, env: Env) -> None:
        self.create_clean(env)
        create_id = env.dt.last_statement_id
        env.sql("INSERT INTO orders VALUES (6, 14, 9.00, 'paid')")
        insert_id = env.dt.last_statement_id
        env.sql("SELECT * FROM orders").collect()
        assert env.dt.last_statement_id not in (insert_id, create_id)
        logged = env.sql(
            "SELECT statement_id, table_name, table_version FROM dyntables_system.statements"
        ).collect()
        by_id = {row.statement_id: (row.table_name, row.table_version) for row in logged}
        assert by_id[insert_id][0].endswith("orders")
        assert env.dt.last_statement_id not in by_id  # a query commits nothing
        # A refresh's statement and version are in the refresh history (not logged twice).
        refreshes = env.sql(
            "SELECT statement_id, name, table_version FROM dyntables_system.refresh_history"
        ).collect()
        assert (create_id, "clean_orders") in {(r.statement_id, r.name) for r in refreshes}

    def test_an_upstream_schema_change_reinitializes_or_names_the_missing_column(
        self, env: Env
    ) -> None:
        self.create_clean(env)
        env.sql(f"CREATE OR REPLACE TABLE orders ({ORDERS}, channel STRING) USING {env.using}")
        env.sql("INSERT INTO orders VALUES (7, 1, 1.00, 'paid', 'web')")
        refreshed = env.sql("ALTER DYNAMIC TABLE clean_orders REFRESH").collect()[0]
        assert refreshed.action == "REINITIALIZE"
        assert env.rows("SELECT * FROM clean_orders") == env.rows(CLEAN_QUERY)
        env.sql(
            "CREATE OR REPLACE TABLE orders (order_id BIGINT, amount DECIMAL(10, 2),"
            f" status STRING) USING {env.using}"
        )
        with pytest.raises(DynamicTableError, match="customer_id"):
            env.sql("ALTER DYNAMIC TABLE clean_orders REFRESH")

    def test_tables_refreshes_write_to_are_compacted(
        self, env: Env, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Checked after each commit here: the refresh history's files (this test's and
        any earlier test's) and the dynamic table's are rewritten into one, in a commit
        that changes no row and that the next refresh takes for no data."""
        monkeypatch.setattr(compaction, "COMPACT_AT_FILES", 2)
        monkeypatch.setattr(compaction, "CHECK_EVERY", 1)
        self.create_clean(env)
        env.sql("INSERT INTO orders VALUES (4, 12, 1.00, 'paid')")
        env.sql("ALTER DYNAMIC TABLE clean_orders REFRESH")
        session, table_format = env.dt.engine.session, env.dt.engine.table_format
        dynamic_table = env.dt.engine.qualify(exp.to_table("clean_orders"))
        for table in (env.dt.system.table(history.REFRESH_HISTORY), dynamic_table):
            assert table_format.data_file_count(session, table) == 1
            newest = table_format.history(session, table, limit=1)[0]
            assert (newest.operation.upper(), newest.changes_data) in {
                ("OPTIMIZE", False),  # Delta
                ("REPLACE", False),  # Iceberg's rewrite_data_files
            }
        assert env.rows("SELECT * FROM clean_orders") == env.rows(CLEAN_QUERY)
        env.sql("ALTER DYNAMIC TABLE clean_orders REFRESH")
        assert env.history("clean_orders") == [
            ("CREATION", "FULL", "SUCCEEDED"),
            ("MANUAL", env.changed_action, "SUCCEEDED"),
            ("MANUAL", "NO_DATA", "SUCCEEDED"),
        ]


def _decimal(text: str) -> Any:
    from decimal import Decimal

    return Decimal(text)
