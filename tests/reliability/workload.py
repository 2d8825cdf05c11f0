"""The reliability workload, engine-neutral: three sources, five dynamic tables, and the
driver's model of the sources.

Sources: ``src (id, k, v)``, ``dim (k, name)``, ``scores (player_id, score)``. Dynamic
tables, all ``TARGET_LAG = '1 minute'``: a filter, a GROUP BY and a join (INCREMENTAL), a
GROUP BY with ``max`` (FULL), and ``totals``, a REFRESH USING running total over the
append-only changes of ``scores``.

Only the driver changes the sources, and it knows every change it landed: ``SourceModel``
holds the rows each source must hold (a multiset), so that a compaction that duplicates or
loses rows shows up against it. Changes are chosen so that every kind of commit happens
often: inserts, updates and deletes on ``src``; rows that the filter and the join drop
(their refreshes change nothing: a watermark-only move); inserts on ``scores``; updates
and new keys on ``dim``.
"""

from __future__ import annotations

import json
import random
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

SOURCES = ("src", "dim", "scores")
SOURCE_COLUMNS = {
    "src": ("id", "k", "v"),
    "dim": ("k", "name"),
    "scores": ("player_id", "score"),
}
SOURCE_SCHEMAS = {
    "src": "id BIGINT, k BIGINT, v BIGINT",
    "dim": "k BIGINT, name STRING",
    "scores": "player_id INT, score INT",
}

LAG = "TARGET_LAG = '1 minute'"
QUERIES = {
    "f_dt": "SELECT id, k, v FROM src WHERE v % 3 <> 0",
    "g_dt": "SELECT k, count(*) AS n, sum(v) AS s FROM src GROUP BY k",
    "j_dt": "SELECT s.id, s.v, d.name FROM src s JOIN dim d ON s.k = d.k",
    "full_dt": "SELECT k, max(v) AS m FROM src GROUP BY k",
}
MODES = {"f_dt": "INCREMENTAL", "g_dt": "INCREMENTAL", "j_dt": "INCREMENTAL", "full_dt": "FULL"}
TOTALS = "totals"
TOTALS_SQL = f"""CREATE DYNAMIC TABLE {TOTALS} (player_id INT, total_score INT)
  {LAG}
  REFRESH USING (
    MERGE INTO SELF AS tgt
    USING (SELECT player_id, SUM(score) AS batch_score FROM scores
           CHANGES(INFORMATION => APPEND_ONLY) GROUP BY player_id) AS src
    ON tgt.player_id = src.player_id
    WHEN MATCHED THEN UPDATE SET tgt.total_score = tgt.total_score + src.batch_score
    WHEN NOT MATCHED THEN INSERT (player_id, total_score)
      VALUES (src.player_id, src.batch_score))"""
DYNAMIC_TABLES = (*QUERIES, TOTALS)

# Keys of src: dim holds 0..7 at first; 8..11 may be added later; 12 and 13 never join.
DIM_KEYS = range(8)
NEW_DIM_KEYS = (8, 9, 10, 11)
SRC_KEYS = 14
UNJOINED_KEYS = (12, 13)
PLAYERS = 10


def source_statements(using: str) -> list[str]:
    """CREATE TABLE of the three sources, ``USING`` the given format."""
    return [f"CREATE TABLE {name} ({SOURCE_SCHEMAS[name]}) USING {using}" for name in SOURCES]


def dynamic_table_statement(name: str) -> str:
    """The CREATE DYNAMIC TABLE of one of the five tables."""
    if name == TOTALS:
        return TOTALS_SQL
    return f"CREATE DYNAMIC TABLE {name} {LAG} REFRESH_MODE = {MODES[name]} AS {QUERIES[name]}"


@dataclass
class Change:
    """One statement the driver lands on a source, and what it does to the model."""

    table: str
    sql: str
    apply: Callable[[SourceModel], None]
    kind: str


@dataclass
class SourceModel:
    """What each source must hold: every change the driver landed, applied in order."""

    rng: random.Random
    src: dict[int, tuple[int, int]] = field(default_factory=dict)  # id -> (k, v)
    dim: dict[int, str] = field(default_factory=dict)  # k -> name
    scores: Counter[tuple[int, int]] = field(default_factory=Counter)
    next_id: int = 0
    generation: int = 0

    def rows(self, table: str) -> Counter[tuple[Any, ...]]:
        if table == "src":
            return Counter((i, k, v) for i, (k, v) in self.src.items())
        if table == "dim":
            return Counter(self.dim.items())
        if table == "scores":
            return Counter(self.scores)
        raise KeyError(table)

    # ---- the first rows ----

    def seed_changes(self, src_rows: int = 300) -> list[Change]:
        """Inserts that give every source its first rows."""
        rows = [(self._new_id(), i % SRC_KEYS, (i * 7) % 50) for i in range(src_rows)]
        dims = [(k, f"n{k}") for k in DIM_KEYS]
        scores = [(i % PLAYERS, 1 + (i * 13) % 40) for i in range(3 * PLAYERS)]
        return [
            self._insert_src(rows, "seed"),
            Change("dim", _insert("dim", dims), lambda m: m.dim.update(dims), "seed"),
            Change("scores", _insert("scores", scores), lambda m: m.scores.update(scores), "seed"),
        ]

    # ---- changes while refreshes run ----

    def insert_src(self) -> Change:
        """3 to 15 new rows of ``src``: ``g_dt`` (incremental) and ``full_dt`` (full) each
        have something to write at their next refresh."""
        rows = [
            (self._new_id(), self.rng.randrange(SRC_KEYS), self.rng.randrange(60))
            for _ in range(self.rng.randint(3, 15))
        ]
        return self._insert_src(rows, "insert")

    def next_change(self, *, quiet: bool = False) -> Change:
        """A random change; the model is changed only by ``Change.apply``, once it landed.
        ``quiet`` changes only ``scores``, and rewrites rows of ``src`` and ``dim`` as they
        are: the refreshes of ``f_dt`` and ``j_dt`` find changes that net out, and move
        only their watermarks."""
        rng = self.rng
        if quiet:
            return rng.choice((self._touch_src, self._touch_src, self._touch_dim, self._scores))()
        choice = rng.choices(
            (
                "insert",
                "insert_dropped",
                "update",
                "update_filtered",
                "delete",
                "scores",
                "dim_update",
                "dim_insert",
                "touch",
            ),
            weights=(4, 2, 3, 1, 2, 4, 1, 1, 1),
        )[0]
        if choice == "touch":
            return self._touch_src() if rng.random() < 0.7 else self._touch_dim()
        if choice == "insert":
            return self.insert_src()
        if choice == "insert_dropped":
            return self._insert_dropped()
        if choice in ("update", "update_filtered"):
            residue = rng.randrange(7)
            step = 1 if choice == "update" else 3
            keep_filtered = choice == "update_filtered"
            sql = f"UPDATE src SET v = v + {step} WHERE id % 7 = {residue}"
            if keep_filtered:  # rows the filter drops stay dropped
                sql += " AND v % 3 = 0"

            def update(model: SourceModel) -> None:
                for key, (k, v) in list(model.src.items()):
                    if key % 7 == residue and (not keep_filtered or v % 3 == 0):
                        model.src[key] = (k, v + step)

            return Change("src", sql, update, choice)
        if choice == "delete":
            residue, key = rng.randrange(17), rng.randrange(SRC_KEYS)
            sql = f"DELETE FROM src WHERE id % 17 = {residue} OR (k = {key} AND v > 55)"

            def delete(model: SourceModel) -> None:
                for i, (k, v) in list(model.src.items()):
                    if i % 17 == residue or (k == key and v > 55):
                        del model.src[i]

            return Change("src", sql, delete, choice)
        if choice == "scores":
            return self._scores()
        if choice == "dim_insert":
            missing = [k for k in NEW_DIM_KEYS if k not in self.dim]
            if missing:
                key = rng.choice(missing)
                name = f"late{key}"
                return Change(
                    "dim",
                    _insert("dim", [(key, name)]),
                    lambda m: m.dim.__setitem__(key, name),
                    choice,
                )
        key = rng.choice(sorted(self.dim))
        self.generation += 1
        name = f"n{key}_{self.generation}"
        return Change(
            "dim",
            f"UPDATE dim SET name = '{name}' WHERE k = {key}",
            lambda m: m.dim.__setitem__(key, name),
            "dim_update",
        )

    def _insert_dropped(self) -> Change:
        """Rows neither the filter (v % 3 = 0) nor the join (no dim key) keeps: f_dt's and
        j_dt's refreshes find no change to write, only a watermark to move."""
        rows = [
            (self._new_id(), self.rng.choice(UNJOINED_KEYS), 3 * self.rng.randrange(20))
            for _ in range(self.rng.randint(1, 5))
        ]
        return self._insert_src(rows, "insert_dropped")

    def _touch_src(self) -> Change:
        """An update that rewrites rows as they are (its change feed nets out)."""
        residue = self.rng.randrange(7)
        sql = f"UPDATE src SET v = v WHERE id % 7 = {residue}"
        return Change("src", sql, lambda model: None, "touch_src")

    def _touch_dim(self) -> Change:
        key = self.rng.choice(sorted(self.dim))
        sql = f"UPDATE dim SET name = name WHERE k = {key}"
        return Change("dim", sql, lambda model: None, "touch_dim")

    def _scores(self) -> Change:
        batch = [
            (self.rng.randrange(PLAYERS), self.rng.randint(1, 100))
            for _ in range(self.rng.randint(1, 6))
        ]
        return Change(
            "scores", _insert("scores", batch), lambda m: m.scores.update(batch), "scores"
        )

    def _new_id(self) -> int:
        self.next_id += 1
        return self.next_id

    def _insert_src(self, rows: list[tuple[int, int, int]], kind: str) -> Change:
        def insert(model: SourceModel) -> None:
            for i, k, v in rows:
                model.src[i] = (k, v)

        return Change("src", _insert("src", rows), insert, kind)


def _insert(table: str, rows: list[tuple[Any, ...]]) -> str:
    values = ", ".join("(" + ", ".join(_literal(v) for v in row) + ")" for row in rows)
    return f"INSERT INTO {table} VALUES {values}"


def _literal(value: Any) -> str:
    return f"'{value}'" if isinstance(value, str) else str(value)


# ---- landing changes ----

USER_METADATA_CONF = "spark.databricks.delta.commitInfo.userMetadata"


@dataclass
class WriteFigures:
    landed: int = 0
    retried: int = 0
    # The statement raised, yet its commit is in the table's history: a user who retries
    # (as the error invites) applies the change twice.
    raised_but_landed: list[str] = field(default_factory=list)


class Lander:
    """Lands the driver's changes through ``run`` (``DynamicTables.sql``) and applies
    each one to the model once it is in the table.

    With ``tagged`` (Delta commits carry ``userMetadata``), every write is tagged with a
    fresh id; when the statement raises (it lost a race with a worker's OPTIMIZE), the
    table's newest commits tell whether it landed anyway, and it is retried only if not.
    Untagged, a failing write is an error of the test itself.
    """

    def __init__(
        self,
        run: Callable[[str], Any],
        session: Any,
        model: SourceModel,
        *,
        tagged: bool,
        attempts: int = 20,
    ) -> None:
        self.run = run
        self.session = session
        self.model = model
        self.tagged = tagged
        self.attempts = attempts
        self.figures = WriteFigures()

    def land(self, change: Change) -> None:
        if not self.tagged:
            self.run(change.sql)
            change.apply(self.model)
            self.figures.landed += 1
            return
        tag = json.dumps({"reliability_change": uuid.uuid4().hex})
        failure: BaseException | None = None
        for _ in range(self.attempts):
            self.session.conf.set(USER_METADATA_CONF, tag)
            try:
                self.run(change.sql)
                landed = True
            except Exception as error:  # lost a race with a worker: did it land anyway?
                failure = error
                landed = self._landed(change.table, tag)
                if landed:
                    first_line = (str(error).splitlines() or [""])[0]
                    self.figures.raised_but_landed.append(
                        f"{change.sql[:80]} raised {type(error).__name__}: {first_line[:300]}"
                    )
                else:
                    self.figures.retried += 1
            finally:
                self.session.conf.unset(USER_METADATA_CONF)
            if landed:
                break
        else:
            raise AssertionError(
                f"the driver could not land {change.sql[:80]} in {self.attempts} attempts;"
                f" last error: {failure!r}"
            )
        change.apply(self.model)
        self.figures.landed += 1

    def _landed(self, table: str, tag: str) -> bool:
        rows = self.session.sql(f"DESCRIBE HISTORY {table} LIMIT 50").collect()
        return any(row["userMetadata"] == tag for row in rows)


def create_workload(run: Callable[[str], Any], lander: Lander, using: str) -> None:
    """Create the sources, give them their first rows, and create the dynamic tables."""
    for statement in source_statements(using):
        run(statement)
    for change in lander.model.seed_changes():
        lander.land(change)
    for name in DYNAMIC_TABLES:
        run(dynamic_table_statement(name))
