"""The invariants a crash or a concurrent refresher must never break, as checks that say
precisely what is wrong: which invariant, which table, expected against found.

Engine-neutral: everything goes through a ``DynamicTables`` (``dt.session.sql``, the
table-format adapter, the refresher's watermark), so the embedded tier and the Spark tiers
(Iceberg, Delta) run the same checks.

1. A dynamic table's rows (a multiset) equal its defining query with every source pinned
   at the versions its newest watermark names: right after a kill, and after the next
   refresh.
2. ``totals`` (REFRESH USING, a running total) holds, per player, the sum of the scores as
   of the version of ``scores`` its watermark names: no change applied twice or lost.
3. Every source holds exactly the rows the driver landed (``SourceModel``): compaction
   duplicates or loses none.
4. Every refresh whose watermark is in a dynamic table's commit history has exactly one
   row in ``dyntables_system.refresh_history``, SUCCEEDED (4); and every SUCCEEDED refresh
   that wrote data there has its commit (4b).
5. The next refresh of every dynamic table after a kill succeeds (5); it does not need to
   start over because of something a refresh left behind (5b: REINITIALIZE).
"""

from __future__ import annotations

import collections
import datetime
import re
import traceback
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlglot import exp

from dyntables import DynamicTables
from dyntables.catalog import key_to_table, table_key
from dyntables.refresh import Watermark
from dyntables.refresh import context as refresh
from dyntables.refresh.context import pin_query

from .workload import DYNAMIC_TABLES, SOURCE_COLUMNS, SOURCES, TOTALS, SourceModel

INVARIANTS = {
    "1": "a dynamic table equals its query at its watermark",
    "2": "the running total equals the sum of the scores at its watermark",
    "3": "a source holds exactly the rows the driver landed",
    "4": "a committed refresh has exactly one SUCCEEDED refresh_history row",
    "4b": "a SUCCEEDED refresh that wrote data has its commit",
    "5": "the next refresh after a kill succeeds",
    "5b": "the next refresh after a kill does not have to reinitialize",
    "check": "the check itself could not run",
    "error-type": "a refresh that fails raises DynamicTableError",
    "error-message": "a refresh that fails says why in words, not an engine's internals",
    "worker": "a worker fails only where a concurrent refresher can make it",
    "hang": "nothing hangs",
    "scheduler": "a scheduler started beside another stays up and stops cleanly",
}
HISTORY_TABLE = "dyntables_system.refresh_history"
SHOWN_ROWS = 5


@dataclass(frozen=True)
class Violation:
    invariant: str
    table: str
    detail: str
    stage: str = ""
    context: str = ""
    # What tells this violation from another of the same invariant and table (a refresh
    # id); repeated sightings of one violation are reported once.
    key: str = ""

    def signature(self) -> tuple[str, str, str, str]:
        return (self.invariant, self.table, self.stage, self.key)

    def describe(self) -> str:
        where = f" [{self.stage}]" if self.stage else ""
        context = f"\n      at: {self.context}" if self.context else ""
        return (
            f"invariant {self.invariant} ({INVARIANTS.get(self.invariant, '?')}){where}:"
            f" {self.table}: {self.detail}{context}"
        )


@dataclass
class CheckResult:
    violations: list[Violation] = field(default_factory=list)
    wrong_results: int = 0  # tables (sources included) whose rows were wrong
    duplicated_rows: int = 0  # rows found more often than they should be, all tables
    recovery_actions: Counter[str] = field(default_factory=Counter)

    def extend(self, other: CheckResult) -> None:
        self.violations += other.violations
        self.wrong_results += other.wrong_results
        self.duplicated_rows += other.duplicated_rows
        self.recovery_actions.update(other.recovery_actions)


@contextmanager
def no_recovery_grace() -> Iterator[None]:
    """Recover missing history rows at once (``refresh.HISTORY_RECOVERY_GRACE`` zero)."""
    kept = refresh.HISTORY_RECOVERY_GRACE
    refresh.HISTORY_RECOVERY_GRACE = datetime.timedelta(0)
    try:
        yield
    finally:
        refresh.HISTORY_RECOVERY_GRACE = kept


def multiset_difference(
    expected: Counter[tuple[Any, ...]], found: Counter[tuple[Any, ...]]
) -> tuple[str, int]:
    """How ``found`` differs from ``expected`` (empty when equal), and how many rows it
    holds more often than expected (at least twice: duplicated)."""
    if expected == found:
        return "", 0
    missing = expected - found
    extra = found - expected
    duplicated = sum(
        count - max(expected[row], 1)
        for row, count in found.items()
        if count > max(expected[row], 1)
    )
    parts = [f"expected {sum(expected.values())} rows, found {sum(found.values())}"]
    if missing:
        parts.append(f"missing {sum(missing.values())}: {_sample(missing)}")
    if extra:
        parts.append(f"extra {sum(extra.values())}: {_sample(extra)}")
    if duplicated:
        parts.append(f"{duplicated} duplicated")
    return "; ".join(parts), duplicated


def _sample(rows: Counter[tuple[Any, ...]]) -> str:
    shown = sorted(rows.items(), key=repr)[:SHOWN_ROWS]
    text = ", ".join(f"{row}x{count}" if count > 1 else str(row) for row, count in shown)
    return text + (" ..." if len(rows) > SHOWN_ROWS else "")


class Checker:
    """The checks, through one ``DynamicTables`` (make a fresh one for each check after a
    kill: it then reads everything from the tables)."""

    def __init__(
        self,
        dt: DynamicTables,
        *,
        database: str,
        model: SourceModel | None,
        context: str = "",
        tables: Iterable[str] = DYNAMIC_TABLES,
    ) -> None:
        self.dt = dt
        self.database = database
        self.model = model
        self.context = context
        self.tables = tuple(tables)
        self.fmt = dt.engine.table_format

    # ---- the stages ----

    def right_after_a_kill(self) -> CheckResult:
        """Invariants 1-3, before anything touches the tables."""
        return self._contents("after-kill")

    def recover(self) -> CheckResult:
        """Invariant 5: one refresh of every dynamic table, each of which must succeed.

        Every process that refreshed these tables has stopped by now (killed, or done), so
        the refreshes recover the history rows those left out at once, without the grace
        a refresher gives a process that may still be about to record its row."""
        with no_recovery_grace():
            return self._refresh_each()

    def _refresh_each(self) -> CheckResult:
        result = CheckResult()
        for name in self.tables:
            try:
                refresh = f"ALTER DYNAMIC TABLE {self.database}.{name} REFRESH"
                row = self.dt.sql(refresh).collect()[0]
            except Exception as failure:
                result.violations.append(
                    self._violation(
                        "5", name, f"the refresh raised {_error_text(failure)}", "recovery"
                    )
                )
                continue
            action, state = row["action"], row["state"]
            result.recovery_actions[f"{action}"] += 1
            if state != "SUCCEEDED":
                result.violations.append(
                    self._violation("5", name, f"the refresh ended {state} ({action})", "recovery")
                )
            if action == "REINITIALIZE":
                result.violations.append(
                    self._violation(
                        "5b",
                        name,
                        f"the refresh had to reinitialize: {row['reason']}",
                        "recovery",
                    )
                )
        return result

    def after_recovery(self) -> CheckResult:
        """Invariants 1-4, once every table was refreshed again."""
        result = self._contents("after-recovery")
        for name in self.tables:
            result.violations += self._guarded(name, "after-recovery", self.history)
        return result

    def everything(self, stage: str) -> CheckResult:
        """Invariants 1-4 as the tables are (after a concurrency round)."""
        result = self._contents(stage)
        for name in self.tables:
            result.violations += self._guarded(name, stage, self.history)
        return result

    def _contents(self, stage: str) -> CheckResult:
        result = CheckResult()
        for name in self.tables:
            check = self.totals if name == TOTALS else self.equals_query_at_watermark
            found, duplicated = self._guarded_rows(name, stage, check)
            result.violations += found
            result.wrong_results += bool(found)
            result.duplicated_rows += duplicated
        if self.model is not None:
            for name in SOURCES:
                found, duplicated = self._guarded_rows(name, stage, self.source)
                result.violations += found
                result.wrong_results += bool(found)
                result.duplicated_rows += duplicated
        return result

    # ---- the invariants ----

    def equals_query_at_watermark(self, name: str, stage: str) -> tuple[list[Violation], int]:
        """Invariant 1."""
        table = self.table(name)
        definition = self.dt.engine.definition(table)
        if definition is None:
            return [self._violation("1", name, "it is no dynamic table any more", stage)], 0
        watermark = self._watermark(table)
        if watermark is None:
            return [self._violation("1", name, "no watermark in its history", stage)], 0
        columns = [column for column, _ in definition.columns]
        pinned = pin_query(definition.query, watermark.sources, self.fmt)
        expected = self.rows(_project(pinned.subquery("q"), columns))
        found = self.rows(_project(table, columns))
        difference, duplicated = multiset_difference(expected, found)
        if not difference:
            return [], 0
        detail = (
            f"{difference} (against the query at {_versions(watermark)}, refresh"
            f" {watermark.refresh_id} {watermark.action})"
        )
        return [self._violation("1", name, detail, stage)], duplicated

    def totals(self, name: str, stage: str) -> tuple[list[Violation], int]:
        """Invariant 2: the oracle comes from the rows of ``scores`` themselves."""
        table = self.table(name)
        watermark = self._watermark(table)
        if watermark is None:
            return [self._violation("2", name, "no watermark in its history", stage)], 0
        scores_key = table_key(self.table("scores"))
        version = watermark.sources.get(scores_key)
        if version is None:
            detail = f"its watermark names no version of {scores_key}: {_versions(watermark)}"
            return [self._violation("2", name, detail, stage)], 0
        scores = self.fmt.pinned(self.table("scores"), version)
        oracle = (
            exp.select("player_id", exp.func("sum", exp.column("score")))
            .from_(scores)
            .group_by("player_id")
        )
        expected = self.rows(oracle)
        found = self.rows(_project(table, ["player_id", "total_score"]))
        difference, duplicated = multiset_difference(expected, found)
        if not difference:
            return [], 0
        detail = (
            f"{difference} (oracle: sum(score) per player of scores at version {version};"
            f" refresh {watermark.refresh_id} {watermark.action})"
        )
        return [self._violation("2", name, detail, stage)], duplicated

    def source(self, name: str, stage: str) -> tuple[list[Violation], int]:
        """Invariant 3."""
        assert self.model is not None
        found = self.rows(_project(self.table(name), list(SOURCE_COLUMNS[name])))
        difference, duplicated = multiset_difference(self.model.rows(name), found)
        if not difference:
            return [], 0
        return [self._violation("3", name, f"{difference} (against the driver's model)", stage)], (
            duplicated
        )

    def history(self, name: str, stage: str) -> list[Violation]:
        """Invariant 4 (and 4b)."""
        table = self.table(name)
        committed: dict[str, str] = {}  # refresh id -> where it was first seen
        commits = self.fmt.history(self.dt.engine.refresh_session, table)
        # History rows of refreshes that ended before the table's first commit are those of
        # an earlier table of the same name (dropped and created again).
        born = min((_utc(c.timestamp) for c in commits if c.timestamp is not None), default=None)
        for commit in commits:
            watermark = Watermark.from_json(self.fmt.watermark(commit))
            if watermark is not None and watermark.refresh_id not in committed:
                committed[watermark.refresh_id] = (
                    f"{watermark.action} at version {commit.version} ({commit.operation})"
                )
        history_table = exp.to_table(HISTORY_TABLE)
        self.fmt.forget_cached(self.dt.session, history_table)
        query = (
            exp.select(
                "query_id",
                "state",
                "refresh_action",
                "refresh_trigger",
                "state_message",
                "refresh_end_time",
            )
            .from_(history_table)
            .where(
                exp.and_(
                    exp.func("lower", exp.column("name")).eq(
                        exp.Literal.string(table.name.lower())
                    ),
                    exp.func("lower", exp.column("schema_name")).eq(
                        exp.Literal.string(table.db.lower())
                    ),
                )
            )
        )
        rows = self.dt.session.sql(query.sql("spark")).collect()
        by_id: dict[str, list[Any]] = collections.defaultdict(list)
        for row in rows:
            by_id[str(row["query_id"])].append(row)
        violations = []
        for refresh_id, where in committed.items():
            recorded = by_id.get(refresh_id, [])
            states = [str(row["state"]) for row in recorded]
            if states == ["SUCCEEDED"]:
                continue
            if not recorded:
                detail = f"committed refresh {refresh_id} ({where}) has no refresh_history row"
            else:
                messages = {
                    str(row["state_message"])[:200]
                    for row in recorded
                    if row["state"] != "SUCCEEDED"
                }
                detail = (
                    f"committed refresh {refresh_id} ({where}) has {len(recorded)} refresh_history"
                    f" rows, states {states}"
                    + (f", messages {sorted(messages)}" if messages else "")
                )
            violations.append(self._violation("4", name, detail, stage, key=refresh_id))
        for refresh_id, recorded in by_id.items():
            for row in recorded:
                action = row["refresh_action"]
                if row["state"] != "SUCCEEDED" or action in (None, "NO_DATA"):
                    continue
                ended = row["refresh_end_time"]
                if born is not None and ended is not None and _utc(ended) < born:
                    continue
                if refresh_id not in committed:
                    detail = (
                        f"refresh_history says refresh {refresh_id} SUCCEEDED ({action},"
                        f" {row['refresh_trigger']}), but no commit of the table carries its"
                        " watermark"
                    )
                    violations.append(self._violation("4b", name, detail, stage, key=refresh_id))
        return violations

    # ---- reading ----

    def table(self, name: str) -> exp.Table:
        return key_to_table(f"{self.database}.{name}")

    def rows(self, query: exp.Expr) -> Counter[tuple[Any, ...]]:
        for reference in query.find_all(exp.Table):
            if reference.name and not reference.args.get("version"):
                self.fmt.forget_cached(self.dt.session, reference)
        rows = self.dt.session.sql(query.sql("spark")).collect()
        return Counter(tuple(_plain(value) for value in row) for row in rows)

    def _watermark(self, table: exp.Table) -> Watermark | None:
        self.fmt.forget_cached(self.dt.session, table)
        return self.dt.lifecycle.refresher.last_watermark(table).watermark

    # ---- reporting ----

    def _violation(
        self, invariant: str, name: str, detail: str, stage: str, key: str = ""
    ) -> Violation:
        return Violation(invariant, name, detail, stage, self.context, key)

    def _guarded(self, name: str, stage: str, check: Any) -> list[Violation]:
        try:
            found: list[Violation] = check(name, stage)
        except Exception as failure:  # reported, never hidden: the check could not run
            return [
                self._violation("check", name, f"{check.__name__}: {_error_text(failure)}", stage)
            ]
        return found

    def _guarded_rows(self, name: str, stage: str, check: Any) -> tuple[list[Violation], int]:
        try:
            found: tuple[list[Violation], int] = check(name, stage)
        except Exception as failure:
            text = f"{check.__name__}: {_error_text(failure)}"
            return [self._violation("check", name, text, stage)], 0
        return found


def _project(relation: exp.Expr, columns: list[str]) -> exp.Select:
    return exp.select(*[exp.column(column, quoted=True) for column in columns]).from_(
        relation.copy()
    )


def _plain(value: Any) -> Any:
    """A value as Python compares it across engines (DuckDB's and Spark's integer types)."""
    if hasattr(value, "as_integer_ratio") and not isinstance(value, (int, float)):
        numerator, denominator = value.as_integer_ratio()
        return numerator if denominator == 1 else value
    return value


def _utc(moment: datetime.datetime) -> datetime.datetime:
    """A time as naive UTC (naive ones are UTC: every session here runs in UTC)."""
    if moment.tzinfo is not None:
        return moment.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    return moment


def _versions(watermark: Watermark) -> str:
    return ", ".join(f"{key}@{version}" for key, version in sorted(watermark.sources.items()))


def _error_text(failure: BaseException) -> str:
    """The error's first line, and where the error it was raised from arose (the last
    frames of its traceback), so that a failure seen once can be traced."""
    first = (str(failure).strip().splitlines() or [""])[0]
    text = f"{type(failure).__module__}.{type(failure).__name__}: {first[:500]}"
    cause = failure.__cause__ or failure.__context__
    if cause is not None:
        frames = traceback.extract_tb(cause.__traceback__)[-4:]
        where = "; ".join(f"{Path(f.filename).name}:{f.lineno} {f.name}" for f in frames)
        text += f" (from {type(cause).__name__} at {where})"
    return text


# ---- what a refresh that lost a race says ----

# Signs that an error message is an engine's internals passed through rather than a
# sentence for the user: file paths and names, Python exception names, DuckDB's,
# delta-rs's and the JVM's error kinds.
_RAW_SIGNS = (
    (re.compile(r"(?<![\w.])/(?:[\w.+=-]+/)+[\w.+=-]+"), "a file path"),
    (re.compile(r"\b[\w-]+\.(?:parquet|json|crc|avro|tmp)\b"), "a file name"),
    (re.compile(r"_delta_log"), "a Delta log folder"),
    (
        re.compile(
            r"\b(?:KeyError|IndexError|AttributeError|TypeError|ValueError|AssertionError"
            r"|FileNotFoundError|FileExistsError|OSError|RuntimeError|StopIteration)\b"
        ),
        "a Python exception name",
    ),
    (re.compile(r"Traceback \(most recent call last\)"), "a traceback"),
    (
        re.compile(
            r"\b(?:Binder|Catalog|Parser|Conversion|Invalid Input|IO|Internal|Transaction"
            r"|Constraint|Dependency|Out of Range) Error\b"
        ),
        "a DuckDB error kind",
    ),
    (
        re.compile(
            r"Generic (?:DeltaTable|delta kernel) error|Kernel error|ObjectStore|"
            r"CommitFailedError|Transaction failed|DeltaError|_internal",
            re.IGNORECASE,
        ),
        "a delta-rs error",
    ),
    (re.compile(r"\bpy4j\b|\bjava\.[a-z]|\borg\.apache\."), "a JVM class"),
    (re.compile(r":\s*'[^'\s]*'\s*$"), "a bare quoted key (a KeyError's message)"),
)


def looks_raw(message: str) -> str | None:
    """Why ``message`` looks like an engine's internals rather than a sentence for the user
    (None when it does not)."""
    for pattern, reason in _RAW_SIGNS:
        if pattern.search(message):
            return reason
    return None


def judge_refresh_error(error: dict[str, Any], context: str) -> list[Violation]:
    """A refresh (or a scheduler tick) that lost a race must raise ``DynamicTableError``
    and say what happened in words. ``error``: ``where``, ``class`` (qualified),
    ``dynamic_table_error``, ``message``, and ``traceback`` when it is no
    ``DynamicTableError``."""
    kind = str(error["class"]).rsplit(".", 1)[-1]
    first_line = (str(error["message"]).splitlines() or [""])[0]
    if not error["dynamic_table_error"]:
        detail = (
            f"raised {error['class']}, not a DynamicTableError: {first_line[:300]}"
            f"\n{error.get('traceback', '')}"
        )
        return [Violation("error-type", error["where"], detail, context=context, key=kind)]
    reason = looks_raw(str(error["message"]))
    if reason is None:
        return []
    detail = f"{kind} whose message shows {reason}: {first_line[:400]}"
    return [
        Violation("error-message", error["where"], detail, context=context, key=f"{kind}:{reason}")
    ]


def error_record(where: str, failure: BaseException) -> dict[str, Any]:
    """What ``judge_refresh_error`` reads, from an exception caught in this process."""
    import traceback

    from dyntables import DynamicTableError

    record: dict[str, Any] = {
        "where": where,
        "class": f"{type(failure).__module__}.{type(failure).__name__}",
        "dynamic_table_error": isinstance(failure, DynamicTableError),
        "message": str(failure)[:1000],
    }
    if not isinstance(failure, DynamicTableError):
        record["traceback"] = "".join(traceback.format_exception(failure)[-6:])[-3000:]
    return record
