"""Custom incrementalization (seed 003), run by every engine tier.

The seed's three examples run verbatim (stream-static enrichment, the audit log of
deletes, running player totals), plus a top-K leaderboard and a full-CDC MERGE with
deletes. Every expected state is computed in Python from the changes the test made.
Each tier subclasses ``CustomScenario`` with an ``env`` fixture (``lifecycle_scenario.Env``)
and ``expire_changes`` (make a source's changes since the last refresh unreadable).
"""

from __future__ import annotations

import datetime
import time
from collections import Counter
from typing import Any

import pytest
from lifecycle_scenario import Env
from sqlglot import exp

from dyntables import DynamicTableError

ENRICHED_CLICKS = """CREATE OR REPLACE DYNAMIC TABLE dt_enriched_clicks (
  click_id INT,
  user_id INT,
  page_title STRING,
  section STRING,
  click_ts TIMESTAMP
)
  TARGET_LAG = '1 minute'
  WAREHOUSE = transform_wh
  REFRESH USING (
    INSERT INTO SELF
    SELECT c.click_id, c.user_id, p.page_title, p.section, c.click_ts
    FROM clicks CHANGES(INFORMATION => APPEND_ONLY) AS c
    LEFT OUTER JOIN pages AS p ON c.page_id = p.page_id
  );"""

DELETIONS_LOG = """CREATE OR REPLACE DYNAMIC TABLE dt_deletions_log (
  id INT,
  name STRING,
  email STRING
)
  TARGET_LAG = '1 minute'
  WAREHOUSE = transform_wh
  INITIALIZE = ON_SCHEDULE
  REFRESH USING (
    INSERT INTO SELF
    SELECT * EXCLUDE (METADATA$ISUPDATE, METADATA$ACTION)
    FROM users CHANGES(INFORMATION => DEFAULT)
    WHERE NOT METADATA$ISUPDATE AND METADATA$ACTION = 'DELETE'
  );"""

PLAYER_SCORES = """CREATE OR REPLACE DYNAMIC TABLE dt_player_scores (
  player_id INT,
  total_score INT
)
  TARGET_LAG = '1 minute'
  WAREHOUSE = transform_wh
  REFRESH USING (
    MERGE INTO SELF AS tgt
    USING (
      SELECT player_id, SUM(score) AS batch_score
      FROM match_results CHANGES(INFORMATION => APPEND_ONLY)
      GROUP BY player_id
    ) AS src
    ON tgt.player_id = src.player_id
    WHEN MATCHED THEN
      UPDATE SET tgt.total_score = tgt.total_score + src.batch_score
    WHEN NOT MATCHED THEN
      INSERT (player_id, total_score) VALUES (src.player_id, src.batch_score)
  );"""

LEADERBOARD = """CREATE DYNAMIC TABLE top_scores (player_id INT, score INT)
  TARGET_LAG = '1 minute' WAREHOUSE = transform_wh
  REFRESH USING (
    MERGE INTO SELF AS tgt
    USING (
      SELECT player_id, score FROM (
        SELECT player_id, score FROM match_results CHANGES(INFORMATION => APPEND_ONLY)
        UNION ALL
        SELECT player_id, score FROM SELF AS cur
      ) AS candidates
      QUALIFY row_number() OVER (ORDER BY score DESC, player_id) <= 3
    ) AS best
    ON tgt.player_id = best.player_id AND tgt.score = best.score
    WHEN NOT MATCHED THEN INSERT (player_id, score) VALUES (best.player_id, best.score)
    WHEN NOT MATCHED BY SOURCE THEN DELETE
  )"""

ORDERS_MIRROR = """CREATE DYNAMIC TABLE orders_mirror (
  order_id INT, customer STRING, amount INT
)
  TARGET_LAG = '1 minute' WAREHOUSE = transform_wh REFRESH_MODE = CUSTOM_INCREMENTAL
  REFRESH USING (
    MERGE INTO SELF AS t
    USING (
      SELECT o.order_id, c.name AS customer, o.amount::INT AS amount, o.METADATA$ACTION AS action
      FROM orders CHANGES(INFORMATION => DEFAULT) AS o
      LEFT JOIN customers AS c ON o.customer_id = c.customer_id
      WHERE NOT (o.METADATA$ACTION = 'DELETE' AND o.METADATA$ISUPDATE)
    ) AS s
    ON t.order_id = s.order_id
    WHEN MATCHED AND s.action = 'DELETE' THEN DELETE
    WHEN MATCHED THEN UPDATE SET t.customer = s.customer, t.amount = s.amount
    WHEN NOT MATCHED AND s.action = 'INSERT' THEN
      INSERT (order_id, customer, amount) VALUES (s.order_id, s.customer, s.amount)
  )"""

# A statement that fails while it runs when an order's customer is not in the dimension.
REGION_TOTALS = """CREATE DYNAMIC TABLE region_totals (region STRING, total INT)
  TARGET_LAG = '1 minute' WAREHOUSE = transform_wh
  REFRESH USING (
    MERGE INTO SELF AS t
    USING (
      SELECT c.region, SUM(o.amount + coalesce(assert_true(c.region IS NOT NULL), 0)) AS amount
      FROM orders CHANGES(INFORMATION => APPEND_ONLY) AS o
      LEFT JOIN customers AS c ON o.customer_id = c.customer_id
      GROUP BY c.region
    ) AS s
    ON t.region = s.region
    WHEN MATCHED THEN UPDATE SET t.total = t.total + s.amount
    WHEN NOT MATCHED THEN INSERT (region, total) VALUES (s.region, s.amount)
  )"""


def ts(minute: int) -> datetime.datetime:
    return datetime.datetime(2025, 1, 1, 10, minute)


def refresh(env: Env, name: str) -> Any:
    return env.sql(f"ALTER DYNAMIC TABLE {name} REFRESH").collect()[0]


def history(env: Env, name: str) -> list[tuple[str, str, int | None, int | None]]:
    """(action, state, rows inserted, rows deleted) of each refresh, oldest first."""
    rows = env.sql(
        "SELECT refresh_action, state, rows_inserted, rows_deleted, refresh_start_time FROM"
        f" information_schema.dynamic_table_refresh_history(NAME => '{name}')"
    ).collect()
    return [(r[0], r[1], r[2], r[3]) for r in sorted(rows, key=lambda row: row[4])]


def track_changes(env: Env, name: str) -> None:
    """Turn the source's change feed on now (CREATE of the dynamic table would do it)."""
    engine = env.dt.engine
    table = engine.qualify(exp.to_table(name))
    assert engine.table_format.enable_change_tracking(engine.session, table) is None


def totals(rows: list[tuple[int, int]]) -> Counter[tuple[Any, ...]]:
    summed: dict[int, int] = {}
    for key, value in rows:
        summed[key] = summed.get(key, 0) + value
    return Counter(summed.items())


class CustomScenario:
    def expire_changes(self, env: Env, table: str) -> None:
        """Make the changes of ``table`` since the last refresh unreadable."""
        raise NotImplementedError

    # ---- the seed's examples ----

    def test_stream_static_enrichment(self, env: Env) -> None:
        env.source("clicks", "click_id INT, user_id INT, page_id INT, click_ts TIMESTAMP")
        env.source("pages", "page_id INT, page_title STRING, section STRING")
        env.sql("INSERT INTO pages VALUES (1, 'Home', 'main'), (2, 'Docs', 'help')")
        env.sql(
            "INSERT INTO clicks VALUES (1, 10, 1, TIMESTAMP'2025-01-01 10:00:00'),"
            " (2, 11, 3, TIMESTAMP'2025-01-01 10:01:00')"
        )
        env.sql(ENRICHED_CLICKS)
        expected = Counter([(1, 10, "Home", "main", ts(0)), (2, 11, None, None, ts(1))])
        assert env.rows("SELECT * FROM dt_enriched_clicks") == expected
        # The dimension is read at each refresh, not incrementally: a page renamed after
        # a click was enriched does not change that click's row.
        env.sql("UPDATE pages SET page_title = 'Start' WHERE page_id = 1")
        env.sql(
            "INSERT INTO clicks VALUES (3, 12, 2, TIMESTAMP'2025-01-01 10:02:00'),"
            " (4, 12, 1, TIMESTAMP'2025-01-01 10:03:00')"
        )
        refreshed = refresh(env, "dt_enriched_clicks")
        assert (refreshed.action, refreshed.rows_inserted, refreshed.rows_deleted) == (
            "INCREMENTAL",
            2,
            0,
        )
        expected += Counter([(3, 12, "Docs", "help", ts(2)), (4, 12, "Start", "main", ts(3))])
        assert env.rows("SELECT * FROM dt_enriched_clicks") == expected
        # A dimension change alone runs the statement over no new clicks.
        env.sql("UPDATE pages SET section = 'other'")
        assert refresh(env, "dt_enriched_clicks").action == "INCREMENTAL"
        assert refresh(env, "dt_enriched_clicks").action == "NO_DATA"
        assert env.rows("SELECT * FROM dt_enriched_clicks") == expected
        assert history(env, "dt_enriched_clicks") == [
            ("FULL", "SUCCEEDED", 2, 0),
            ("INCREMENTAL", "SUCCEEDED", 2, 0),
            ("INCREMENTAL", "SUCCEEDED", 0, 0),
            ("NO_DATA", "SUCCEEDED", None, None),
        ]
        shown = env.show("dt_enriched_clicks")
        assert shown["refresh_mode"] == "CUSTOM_INCREMENTAL"
        assert "AUTO resolves to CUSTOM_INCREMENTAL" in shown["refresh_mode_reason"]

    def test_audit_log_of_deletes(self, env: Env) -> None:
        env.source("users", "id INT, name STRING, email STRING")
        env.sql("INSERT INTO users VALUES (1, 'ann', 'a@x'), (2, 'bob', 'b@x'), (3, 'cy', 'c@x')")
        # With a RELY key, a row deleted and inserted again unchanged is no change.
        env.sql("ALTER TABLE users ADD CONSTRAINT users_pk PRIMARY KEY (id) RELY")
        env.sql(DELETIONS_LOG)
        assert history(env, "dt_deletions_log") == []  # INITIALIZE = ON_SCHEDULE
        assert env.rows("SELECT * FROM dt_deletions_log") == Counter()
        # The first refresh shows the current rows as INSERTs: no delete to log.
        assert refresh(env, "dt_deletions_log").rows_inserted == 0
        env.sql("DELETE FROM users WHERE id = 2")
        env.sql("UPDATE users SET email = 'ann@x' WHERE id = 1")  # an update is not logged
        env.sql("DELETE FROM users WHERE id = 3")
        env.sql("INSERT INTO users VALUES (3, 'cy', 'c@x')")  # back as it was: no change
        env.sql("INSERT INTO users VALUES (4, 'dee', 'd@x')")
        refresh(env, "dt_deletions_log")
        assert env.rows("SELECT * FROM dt_deletions_log") == Counter([(2, "bob", "b@x")])
        env.sql("DELETE FROM users WHERE id IN (1, 4)")
        refresh(env, "dt_deletions_log")
        assert env.rows("SELECT * FROM dt_deletions_log") == Counter(
            [(2, "bob", "b@x"), (1, "ann", "ann@x"), (4, "dee", "d@x")]
        )

    def test_running_player_totals(self, env: Env) -> None:
        env.source("match_results", "match_id INT, player_id INT, score INT")
        inserted = [(1, 1, 10), (1, 2, 5)]
        env.sql("INSERT INTO match_results VALUES (1, 1, 10), (1, 2, 5)")
        env.sql(PLAYER_SCORES)
        assert env.rows("SELECT * FROM dt_player_scores") == totals(
            [(p, s) for _, p, s in inserted]
        )
        # Rows the MERGE inserted and deleted: an updated total counts as one of each.
        counts = iter([(2, 1), (3, 3)])
        for batch in ([(2, 1, 7), (2, 3, 1)], [(3, 2, 4), (3, 3, 9), (3, 1, 1)]):
            values = ", ".join(f"({m}, {p}, {s})" for m, p, s in batch)
            env.sql(f"INSERT INTO match_results VALUES {values}")
            inserted += batch
            # APPEND_ONLY: updates and deletes in the source are not seen.
            env.sql("UPDATE match_results SET score = score + 100 WHERE match_id = 1")
            refreshed = refresh(env, "dt_player_scores")
            assert refreshed.action == "INCREMENTAL"
            assert (refreshed.rows_inserted, refreshed.rows_deleted) == next(counts)
            expected = totals([(p, s) for _, p, s in inserted])
            assert env.rows("SELECT * FROM dt_player_scores") == expected
        env.sql("DELETE FROM match_results WHERE match_id = 2")
        refresh(env, "dt_player_scores")
        assert env.rows("SELECT * FROM dt_player_scores") == totals(
            [(p, s) for _, p, s in inserted]
        )

    # ---- beyond the seed ----

    def test_top_k_leaderboard(self, env: Env) -> None:
        env.source("match_results", "match_id INT, player_id INT, score INT")
        env.sql("INSERT INTO match_results VALUES (1, 1, 10), (1, 2, 5)")
        env.sql(LEADERBOARD)
        scores = [(1, 10), (2, 5)]

        def top() -> Counter[tuple[Any, ...]]:
            return Counter(sorted(scores, key=lambda ps: (-ps[1], ps[0]))[:3])

        assert env.rows("SELECT * FROM top_scores") == top()
        for batch in ([(3, 7), (4, 1)], [(5, 12), (2, 11)], [(6, 2)]):
            values = ", ".join(f"(9, {p}, {s})" for p, s in batch)
            env.sql(f"INSERT INTO match_results VALUES {values}")
            scores += batch
            refresh(env, "top_scores")
            assert env.rows("SELECT * FROM top_scores") == top()

    def test_full_cdc_merge_with_deletes(self, env: Env) -> None:
        env.source("customers", "customer_id INT, name STRING")
        env.sql("INSERT INTO customers VALUES (1, 'acme'), (2, 'globex')")
        env.source("orders", "order_id INT, customer_id INT, amount INT")
        env.sql("INSERT INTO orders VALUES (10, 1, 100), (11, 2, 200), (12, 1, 300)")
        env.sql("ALTER TABLE orders ADD CONSTRAINT orders_pk PRIMARY KEY (order_id) RELY")
        env.sql(ORDERS_MIRROR)
        names = {1: "acme", 2: "globex"}
        orders = {10: (1, 100), 11: (2, 200), 12: (1, 300)}

        def mirror() -> Counter[tuple[Any, ...]]:
            return Counter((o, names.get(c), a) for o, (c, a) in orders.items())

        assert env.rows("SELECT * FROM orders_mirror") == mirror()
        env.sql("UPDATE orders SET amount = 150 WHERE order_id = 10")
        env.sql("DELETE FROM orders WHERE order_id = 11")
        env.sql("INSERT INTO orders VALUES (13, 2, 50), (14, 3, 70)")
        env.sql("DELETE FROM orders WHERE order_id = 14")  # inserted and deleted: nothing
        orders[10] = (1, 150)
        del orders[11]
        orders[13] = (2, 50)
        refreshed = refresh(env, "orders_mirror")
        assert refreshed.action == "INCREMENTAL"
        assert env.rows("SELECT * FROM orders_mirror") == mirror()
        env.sql("UPDATE orders SET customer_id = 2 WHERE order_id = 12")
        env.sql("DELETE FROM orders WHERE order_id = 13")
        env.sql("INSERT INTO orders VALUES (11, 1, 5)")  # a deleted key comes back
        orders[12] = (2, 300)
        del orders[13]
        orders[11] = (1, 5)
        refresh(env, "orders_mirror")
        assert env.rows("SELECT * FROM orders_mirror") == mirror()

    def test_backfill_and_start_at(self, env: Env) -> None:
        env.source("match_results", "match_id INT, player_id INT, score INT")
        track_changes(env, "match_results")  # before the rows START AT reads from
        env.sql("INSERT INTO match_results VALUES (1, 1, 10), (1, 2, 5)")
        first_batch = env.dt.last_statement_id
        env.sql("INSERT INTO match_results VALUES (2, 1, 3)")
        # The totals as a task kept them up to the first batch, and more rows since.
        env.source("old_totals", "player_id INT, total_score INT", "(1, 10), (2, 5)")
        statement = PLAYER_SCORES.replace(
            "REFRESH USING",
            f"BACKFILL FROM old_totals START AT (STATEMENT => '{first_batch}') REFRESH USING",
        )
        env.sql(statement)
        assert history(env, "dt_player_scores")[0][0] == "FULL"
        assert env.rows("SELECT * FROM dt_player_scores") == Counter([(1, 10), (2, 5)])
        env.sql("INSERT INTO match_results VALUES (3, 2, 1)")
        refresh(env, "dt_player_scores")  # the changes after the first batch
        assert env.rows("SELECT * FROM dt_player_scores") == Counter([(1, 13), (2, 6)])

    def test_start_at_a_timestamp_and_an_offset(self, env: Env) -> None:
        env.source("match_results", "match_id INT, player_id INT, score INT")
        track_changes(env, "match_results")  # before the rows START AT reads from
        env.sql("INSERT INTO match_results VALUES (1, 1, 10)")
        time.sleep(1.2)
        moment = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
        time.sleep(1.2)
        env.sql("INSERT INTO match_results VALUES (2, 1, 3), (2, 2, 4)")
        # Without BACKFILL, the first refresh runs over the changes since START AT.
        env.sql(
            PLAYER_SCORES.replace(
                "REFRESH USING",
                f"START AT (TIMESTAMP => '{moment.isoformat(sep=' ')}'::TIMESTAMP) REFRESH USING",
            )
        )
        assert env.rows("SELECT * FROM dt_player_scores") == Counter([(1, 3), (2, 4)])
        time.sleep(1.2)
        env.sql(
            PLAYER_SCORES.replace("dt_player_scores", "recent_scores").replace(
                "REFRESH USING", "START AT (OFFSET => -1) REFRESH USING"
            )
        )
        assert env.rows("SELECT * FROM recent_scores") == Counter()
        env.sql("INSERT INTO match_results VALUES (3, 2, 1)")
        refresh(env, "recent_scores")
        assert env.rows("SELECT * FROM recent_scores") == Counter([(2, 1)])

    def test_create_or_replace_recomputes_from_the_sources(self, env: Env) -> None:
        env.source("match_results", "match_id INT, player_id INT, score INT")
        env.sql("INSERT INTO match_results VALUES (1, 1, 10), (1, 2, 5), (2, 1, 1)")
        env.sql(PLAYER_SCORES)
        env.sql(PLAYER_SCORES.replace("SUM(score)", "MAX(score)"))
        assert env.rows("SELECT * FROM dt_player_scores") == Counter([(1, 10), (2, 5)])
        assert [row[0] for row in history(env, "dt_player_scores")] == ["FULL", "FULL"]

    # ---- atomicity ----

    def test_a_failing_statement_rolls_back_and_the_rerun_reads_the_same_changes(
        self, env: Env
    ) -> None:
        env.source("customers", "customer_id INT, region STRING", "(1, 'east'), (2, 'west')")
        env.source("orders", "order_id INT, customer_id INT, amount INT")
        env.sql("INSERT INTO orders VALUES (1, 1, 10), (2, 2, 20)")
        env.sql(REGION_TOTALS)
        regions = {1: "east", 2: "west"}
        orders = [(1, 10), (2, 20)]

        def expected() -> Counter[tuple[Any, ...]]:
            return totals([(regions[c], a) for c, a in orders])

        assert env.rows("SELECT * FROM region_totals") == expected()
        # Customer 3 is not in the dimension yet: the statement fails mid-way.
        env.sql("INSERT INTO orders VALUES (3, 1, 5), (4, 3, 7)")
        with pytest.raises(DynamicTableError, match="region"):
            refresh(env, "region_totals")
        assert env.rows("SELECT * FROM region_totals") == expected()
        assert [row[:2] for row in history(env, "region_totals")] == [
            ("FULL", "SUCCEEDED"),
            ("INCREMENTAL", "FAILED"),
        ]
        env.sql("INSERT INTO customers VALUES (3, 'east')")
        env.sql("INSERT INTO orders VALUES (5, 2, 1)")
        regions[3] = "east"
        orders += [(1, 5), (3, 7), (2, 1)]
        refresh(env, "region_totals")  # the failed refresh's changes, once, and the new ones
        assert env.rows("SELECT * FROM region_totals") == expected()
        assert refresh(env, "region_totals").action == "NO_DATA"

    def test_a_crash_before_or_after_the_commit_applies_each_change_once(
        self, env: Env, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        env.source("match_results", "match_id INT, player_id INT, score INT")
        env.sql("INSERT INTO match_results VALUES (1, 1, 10)")
        env.sql(PLAYER_SCORES)
        fmt = env.dt.engine.table_format
        real_merge = fmt.merge

        def crash_before(*args: Any, **kwargs: Any) -> None:
            raise RuntimeError("the process stopped before the commit")

        env.sql("INSERT INTO match_results VALUES (2, 1, 5), (2, 2, 7)")
        monkeypatch.setattr(fmt, "merge", crash_before)
        with pytest.raises(DynamicTableError, match="stopped before"):
            refresh(env, "dt_player_scores")
        assert env.rows("SELECT * FROM dt_player_scores") == Counter([(1, 10)])

        def crash_after(*args: Any, **kwargs: Any) -> None:
            real_merge(*args, **kwargs)
            raise RuntimeError("the process stopped after the commit")

        monkeypatch.setattr(fmt, "merge", crash_after)
        with pytest.raises(DynamicTableError, match="stopped after"):
            refresh(env, "dt_player_scores")
        monkeypatch.setattr(fmt, "merge", real_merge)
        assert env.rows("SELECT * FROM dt_player_scores") == Counter([(1, 15), (2, 7)])
        # The watermark committed with the rows: the rerun finds nothing new.
        assert refresh(env, "dt_player_scores").action == "NO_DATA"
        env.sql("INSERT INTO match_results VALUES (3, 2, 1)")
        refresh(env, "dt_player_scores")
        assert env.rows("SELECT * FROM dt_player_scores") == Counter([(1, 15), (2, 8)])

    def test_changes_no_longer_readable_fail_the_refresh(self, env: Env) -> None:
        env.source("match_results", "match_id INT, player_id INT, score INT")
        env.sql("INSERT INTO match_results VALUES (1, 1, 10)")
        env.sql(PLAYER_SCORES)
        env.sql("INSERT INTO match_results VALUES (2, 1, 5)")
        env.sql("UPDATE match_results SET score = score * 2")  # rewrites every data file
        self.expire_changes(env, "match_results")
        with pytest.raises(DynamicTableError, match="can no longer be read") as raised:
            refresh(env, "dt_player_scores")
        assert "CREATE OR" in str(raised.value)
        assert env.rows("SELECT * FROM dt_player_scores") == Counter([(1, 10)])

    # ---- errors: each clear, each leaving nothing changed ----

    def test_errors_change_nothing(self, env: Env) -> None:
        env.source("match_results", "match_id INT, player_id INT, score INT", "(1, 1, 10)")
        env.sql(PLAYER_SCORES)
        state = env.rows("SELECT * FROM dt_player_scores")
        shown = env.show("dt_player_scores")
        properties = env.rows("SHOW TBLPROPERTIES match_results")
        body = "INSERT INTO SELF SELECT player_id, score FROM match_results CHANGES() AS m"
        cases = {
            "CREATE DYNAMIC TABLE x TARGET_LAG = '1 minute' WAREHOUSE = w"
            f" REFRESH USING ({body})": "explicit column list",
            "CREATE DYNAMIC TABLE x (a INT, b INT) TARGET_LAG = '1 minute' WAREHOUSE = w"
            f" REFRESH USING ({body}; {body})": "exactly one DML statement",
            "CREATE DYNAMIC TABLE x (a INT, b INT) TARGET_LAG = '1 minute' WAREHOUSE = w"
            " REFRESH USING (UPDATE SELF SET a = 1)": "MERGE INTO SELF or INSERT INTO SELF",
            "CREATE DYNAMIC TABLE x (a INT, b INT) TARGET_LAG = '1 minute' WAREHOUSE = w"
            " REFRESH USING (INSERT INTO match_results SELECT 1, 1, 1)": "must write SELF",
            "CREATE DYNAMIC TABLE x (a INT, b INT) TARGET_LAG = '1 minute' WAREHOUSE = w"
            " REFRESH USING (INSERT INTO SELF SELECT a, b FROM SELF CHANGES())": "CHANGES on SELF",
            "CREATE OR REPLACE DYNAMIC TABLE dt_player_scores (player_id INT, total_score INT)"
            " TARGET_LAG = '1 minute' WAREHOUSE = w REFRESH USING (INSERT INTO SELF SELECT"
            " player_id, total_score FROM dt_player_scores)": "refer to it as SELF",
            "CREATE OR REPLACE DYNAMIC TABLE dt_player_scores (player_id INT, total_score INT)"
            " TARGET_LAG = '1 minute' WAREHOUSE = w REFRESH USING (INSERT INTO dt_player_scores"
            " SELECT 1, 1)": "write it as SELF",
            "CREATE DYNAMIC TABLE x (a INT, b INT) TARGET_LAG = '1 minute' WAREHOUSE = w"
            " REFRESH USING (INSERT INTO SELF SELECT player_id, score FROM match_results"
            " CHANGES(INFORMATION => DEFAULT) AT(OFFSET => -60))": "no time bounds",
            "CREATE DYNAMIC TABLE x (a INT) TARGET_LAG = '1 minute' WAREHOUSE = w"
            f" REFRESH USING ({body})": "writes 2 columns, the table has 1",
            "CREATE DYNAMIC TABLE x (a INT, b INT) TARGET_LAG = '1 minute' WAREHOUSE = w"
            " REFRESH USING (INSERT INTO SELF SELECT nothing, score FROM match_results"
            " CHANGES())": "does not resolve",
            "CREATE DYNAMIC TABLE x (a INT, b INT) TARGET_LAG = '1 minute' WAREHOUSE = w"
            f" START AT (STREAM => 's') REFRESH USING ({body})": "no streams",
            "ALTER DYNAMIC TABLE dt_player_scores SET START AT (OFFSET => -60)": "only be set when",
            "ALTER DYNAMIC TABLE dt_player_scores SET BACKFILL FROM match_results": "CREATE OR",
            "ALTER DYNAMIC TABLE dt_player_scores SET FROZEN WHERE (player_id < 2)": "REFRESH US",
        }
        for statement, message in cases.items():
            with pytest.raises(DynamicTableError, match=message):
                env.sql(statement)
            assert not env.dt.session.catalog.tableExists(f"{env.database}.x")
        assert env.rows("SELECT * FROM dt_player_scores") == state
        assert env.show("dt_player_scores") == shown
        assert env.rows("SHOW TBLPROPERTIES match_results") == properties
        assert [row[0] for row in history(env, "dt_player_scores")] == ["FULL"]
