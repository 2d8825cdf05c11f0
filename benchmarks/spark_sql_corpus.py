"""sparkshim against real PySpark on Apache Spark's own SQL test files.

Spark's repository keeps its SQL tests as plain ``.sql`` files
(``sql/core/src/test/resources/sql-tests/inputs/``). They are not part of this project; bring
the ones you want into a folder of your own and point this script at it::

    .venv/bin/python benchmarks/spark_sql_corpus.py --inputs /path/to/inputs \\
        [--files group-by.sql,window.sql] [--report corpus-report.json]

or ``make corpus SPARK_SQL_TESTS=/path/to/inputs``.

Each file is split into statements as Spark's test runner splits it: lines starting with ``--``
are comments (``--SET k=v`` sets options for the file, ``--IMPORT other.sql`` runs another
file's statements first; ``--CONFIG_DIM``, ``--ONLY_IF`` and the like are ignored, so one
configuration runs), and statements end at a ``;`` outside quotes and comments. The statements
of a file run in order on local PySpark (one new session and database per file) and on a
``ShimSession`` (one new warehouse per file). Queries (``SELECT``, ``WITH``, ``VALUES``,
``FROM``, ``TABLE``) are compared; every other statement (``CREATE``, ``INSERT``, ``SET`` ...) is
setup, run on both, and a setup statement Spark runs but the shim fails on is counted apart.

For every query Spark answers, the shim's outcome is one of:

* ``EXACT``: the same rows (a multiset, or a sequence under a top-level ``ORDER BY``), column
  names and Spark types (``df.schema``, nullability aside);
* ``SAME_VALUES``: the same rows, but some column names or types differ (both recorded);
* ``DIFFERENT``: other rows (a different value, row count, column count, or order);
* ``REFUSED``: ``sparkshim.errors.UnsupportedSqlError``;
* ``LEAKED``: any other error, recorded as ``spark-style`` (a pyspark error whose message
  starts with ``[ERROR_CLASS]`` and names no engine internals) or ``internal`` (DuckDB, sqlglot
  or Python text, or a non-pyspark exception);
* ``BLOCKED``: an error in a query over a table or view whose setup statement the shim
  failed (counted once, as a setup failure, not again as a leak per query);
* ``TIMEOUT``: no answer within ``--timeout`` seconds.

Tables the files create ``USING parquet`` are created ``USING delta`` on the shim (it stores
every table as Delta and refuses other formats; the tables only hold the test rows).

Values are compared strictly: Python types must match; a Decimal must have the same value
and scale; floats agree to 1e-9 relative (NaN equals NaN); nested rows, lists and maps are
compared element by element. Queries Spark fails on are left out of every rate; the report
says whether the shim failed too.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import math
import os
import re
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from pyspark.errors import PySparkException
from pyspark.sql import Row, SparkSession
from pyspark.sql.types import StructType
from sqlglot import exp

from sparkshim.errors import UnsupportedSqlError
from sparkshim.session import ShimSession
from sparkshim.translate import parse_spark

QUERY_START = re.compile(r"^[\s(]*(SELECT|WITH|VALUES|FROM|TABLE)\b", re.IGNORECASE)
SPARK_STYLE = re.compile(r"^\s*\[[A-Z][A-Z0-9_]*(\.[A-Z0-9_]+)*\]")
# Text that gives away the engine underneath or a Python failure inside the shim.
INTERNAL_MARKERS = (
    "Binder Error",
    "Catalog Error",
    "Conversion Error",
    "Out of Range Error",
    "Parser Error",
    "Invalid Input Error",
    "Not implemented Error",
    "Internal Error",
    "Dependency Error",
    "Constraint Error",
    "No function matches",
    "duckdb",
    "DuckDB",
    "sqlglot",
    "Traceback",
    "Required keyword",
    "AttributeError",
    "KeyError",
    "TypeError",
    "ValueError",
    "IndexError",
    "AssertionError",
    "NotImplementedError",
    "RuntimeError",
    "ANY_VALUE",
)
EXCERPT_ROWS = 10
EXCERPT_CHARS = 600
REL_TOL = 1e-9

# ---------------------------------------------------------------- test files


@dataclass(frozen=True)
class Statement:
    """One statement of a test file, with the line it starts on."""

    line: int
    sql: str

    @property
    def is_query(self) -> bool:
        return QUERY_START.match(self.sql) is not None


@dataclass(frozen=True)
class TestFile:
    name: str
    statements: list[Statement]
    settings: dict[str, str]


def read_test_file(inputs: Path, name: str) -> TestFile:
    """A test file's statements (its ``--IMPORT``ed files' first) and ``--SET`` options."""
    text = (inputs / name).read_text(encoding="utf-8")
    settings: dict[str, str] = {}
    statements: list[Statement] = []
    for directive in _directives(text):
        if directive.upper().startswith("SET "):
            settings.update(_settings(directive[4:]))
        elif directive.upper().startswith("IMPORT "):
            imported = read_test_file(inputs, str(Path(name).parent / directive[7:].strip()))
            statements.extend(imported.statements)
            settings.update(imported.settings)
    statements.extend(split_statements(text))
    return TestFile(name, statements, settings)


def _directives(text: str) -> Iterable[str]:
    """The text after ``--`` of comment lines that hold a directive (``--SET``, ``--IMPORT``)."""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("--") and re.match(r"--(SET|IMPORT) ", stripped, re.IGNORECASE):
            yield stripped[2:]


def _settings(text: str) -> dict[str, str]:
    pairs = (item.split("=", 1) for item in text.split(",") if "=" in item)
    return {key.strip(): value.strip() for key, value in pairs}


def split_statements(text: str) -> list[Statement]:
    """Statements ended by ``;`` outside quotes and comments; whole-line ``--`` comments out.

    >>> [s.sql for s in split_statements("-- note\\nSELECT ';'; SELECT 2 -- two;\\n;")]
    ["SELECT ';'", 'SELECT 2 -- two;']
    """
    code = "\n".join("" if ln.strip().startswith("--") else ln for ln in text.splitlines())
    statements: list[Statement] = []
    start = 0
    for end in _semicolons(code):
        _append_statement(statements, code, start, end)
        start = end + 1
    _append_statement(statements, code, start, len(code))
    return statements


LEADING_COMMENTS = re.compile(r"(\s+|--[^\n]*|/\*.*?\*/)*", re.DOTALL)


def _append_statement(statements: list[Statement], code: str, start: int, end: int) -> None:
    """Add ``code[start:end]`` without the blanks and comments before it (a comment after
    the previous statement's ``;`` belongs to neither)."""
    leading = LEADING_COMMENTS.match(code, start, end)
    begin = leading.end() if leading else start
    sql = code[begin:end].strip()
    if sql:
        statements.append(Statement(code.count("\n", 0, begin) + 1, sql))


def _semicolons(code: str) -> Iterable[int]:
    """Offsets of the ``;`` that end statements: not in a quoted string or identifier, not in
    a ``--`` or ``/* */`` comment. A backslash escapes the next character in a string."""
    quote = ""
    i = 0
    while i < len(code):
        char = code[i]
        if quote:
            if char == "\\" and quote != "`":
                i += 1
            elif char == quote:
                quote = ""
        elif char in "'\"`":
            quote = char
        elif code.startswith("--", i):
            i = _end_of(code, "\n", i)
        elif code.startswith("/*", i):
            i = _end_of(code, "*/", i) + 1
        elif char == ";":
            yield i
        i += 1


def _end_of(code: str, marker: str, start: int) -> int:
    found = code.find(marker, start)
    return len(code) - 1 if found < 0 else found


def top_level_order(sql: str) -> list[exp.Ordered]:
    """The keys of a top-level ``ORDER BY`` (none if sqlglot cannot read the statement)."""
    try:
        tree = parse_spark(sql)
    except Exception:  # a statement sqlglot cannot read has no order to compare
        return []
    order = tree.args.get("order") if isinstance(tree, exp.Query) else None
    return list(order.expressions) if isinstance(order, exp.Order) else []


def order_keys_query(sql: str) -> tuple[str, list[int]] | None:
    """The query with its ``ORDER BY`` keys appended to its columns, and the output positions
    of positional keys (``ORDER BY 1``); None where that cannot be done (a set operation, a
    ``SELECT DISTINCT``)."""
    tree = parse_spark(sql)
    if not isinstance(tree, exp.Select) or tree.args.get("distinct"):
        return None
    positions: list[int] = []
    for number, key in enumerate(top_level_order(sql)):
        if isinstance(key.this, exp.Literal) and key.this.is_int:
            positions.append(int(key.this.name) - 1)
        else:
            tree.select(exp.alias_(key.this.copy(), f"corpus_order_key_{number}"), copy=False)
    return tree.sql(dialect="spark"), positions


# ---------------------------------------------------------------- running statements


@dataclass(frozen=True)
class Answer:
    columns: list[str]
    types: list[str]
    rows: list[Row]


@dataclass(frozen=True)
class Failure:
    error_type: str
    message: str
    pyspark_error: bool  # raised as one of pyspark's error classes

    @property
    def refused(self) -> bool:
        return self.error_type == UnsupportedSqlError.__name__

    @property
    def style(self) -> str:
        """``spark-style`` for a pyspark error with an error class and no internals in it."""
        internal = any(marker in self.message for marker in INTERNAL_MARKERS)
        if self.pyspark_error and SPARK_STYLE.match(self.message) and not internal:
            return "spark-style"
        return "internal"


@dataclass(frozen=True)
class TimedOut:
    seconds: float


Result = Answer | Failure | TimedOut


def answer_of(run: Callable[[], tuple[list[str], StructType, list[Row]]]) -> Answer | Failure:
    try:
        columns, schema, rows = run()
    except Exception as error:  # every failure is an outcome to record
        return failure_of(error)
    return Answer(columns, [f.dataType.simpleString() for f in schema.fields], rows)


def failure_of(error: BaseException) -> Failure:
    from_pyspark = isinstance(error, PySparkException)
    kind = type(error).__name__ if from_pyspark else _qualified(error)
    return Failure(kind, str(error).strip()[:EXCERPT_CHARS], from_pyspark)


def _qualified(error: BaseException) -> str:
    return f"{type(error).__module__}.{type(error).__qualname__}"


def run_on_spark(spark: SparkSession, sql: str) -> Answer | Failure:
    def run() -> tuple[list[str], StructType, list[Row]]:
        frame = spark.sql(sql)
        return frame.columns, frame.schema, frame.collect()

    return answer_of(run)


class ShimRunner:
    """Runs statements on one ``ShimSession`` in a worker thread, so that a statement that
    hangs is abandoned after ``timeout`` seconds (its thread is left behind, a new one
    serves the next statement)."""

    def __init__(self, session: ShimSession, timeout: float) -> None:
        self.session = session
        self.timeout = timeout
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)

    def run(self, sql: str) -> Result:
        def run() -> tuple[list[str], StructType, list[Row]]:
            frame = self.session.sql(sql)
            return frame.columns, frame.schema, frame.collect()

        future = self._pool.submit(answer_of, run)
        try:
            return future.result(timeout=self.timeout)
        except concurrent.futures.TimeoutError:
            self._pool.shutdown(wait=False)
            self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
            return TimedOut(self.timeout)

    def close(self) -> None:
        self._pool.shutdown(wait=False)


# ---------------------------------------------------------------- comparing answers


def plain(value: Any) -> Any:
    """A value with its containers made comparable: a struct's field names are left to the
    schema comparison, a map becomes its entries in a stable order."""
    if isinstance(value, Row):
        return ("struct", tuple(plain(v) for v in value))
    if isinstance(value, (list, tuple)):
        return ("array", tuple(plain(v) for v in value))
    if isinstance(value, dict):
        entries = ((plain(k), plain(v)) for k, v in value.items())
        return ("map", tuple(sorted(entries, key=repr)))
    if isinstance(value, bytearray):
        return bytes(value)
    return value


def same_value(a: Any, b: Any) -> bool:
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        if math.isinf(a) or math.isinf(b):
            return a == b
        return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=1e-12)
    if isinstance(a, Decimal) and isinstance(b, Decimal):
        # the scale is part of Spark's result type, so 1.0 and 1.00 differ
        return a == b and a.as_tuple().exponent == b.as_tuple().exponent
    return type(a) is type(b) and bool(a == b)


def same_rows(shim: Sequence[Row], spark: Sequence[Row], ordered: bool) -> bool:
    got = [plain(tuple(r)) for r in shim]
    want = [plain(tuple(r)) for r in spark]
    if len(got) != len(want):
        return False
    if ordered:
        return all(same_value(g, w) for g, w in zip(got, want, strict=True))
    unmatched = list(got)
    for row in want:
        match = next((i for i, g in enumerate(unmatched) if same_value(g, row)), None)
        if match is None:
            return False
        unmatched.pop(match)
    return True


def same_up_to_ties(spark: SparkSession, sql: str, shim: Answer, answer: Answer) -> bool:
    """Whether the shim's rows are Spark's, ordered the same but for rows whose ``ORDER BY``
    keys are equal (ties, whose order SQL leaves open). Spark gives the key values: rows
    with equal keys sit at the same positions in both answers, and must be the same
    multiset there."""
    keyed = order_keys_query(sql)
    if keyed is None:
        return False
    keyed_sql, positions = keyed
    keyed_answer = run_on_spark(spark, keyed_sql)
    if not isinstance(keyed_answer, Answer) or len(keyed_answer.rows) != len(answer.rows):
        return False
    width = len(answer.columns)
    keys = [
        plain(tuple(row[width:]) + tuple(row[p] for p in positions)) for row in keyed_answer.rows
    ]
    start = 0
    for end in range(1, len(keys) + 1):
        if end == len(keys) or not same_value(keys[end], keys[start]):
            if not same_rows(shim.rows[start:end], answer.rows[start:end], ordered=False):
                return False
            start = end
    return True


@dataclass
class QueryReport:
    file: str
    index: int
    line: int
    sql: str
    kind: str  # "query" or "setup"
    outcome: str
    detail: str = ""
    error_style: str = ""
    name_diffs: list[dict[str, Any]] = field(default_factory=list)
    type_diffs: list[dict[str, Any]] = field(default_factory=list)
    spark: dict[str, Any] = field(default_factory=dict)
    shim: dict[str, Any] = field(default_factory=dict)


def excerpt(result: Result) -> dict[str, Any]:
    if isinstance(result, Answer):
        return {
            "columns": result.columns,
            "types": result.types,
            "row_count": len(result.rows),
            "rows": [repr(tuple(r)) for r in result.rows[:EXCERPT_ROWS]],
        }
    if isinstance(result, Failure):
        return {"error_type": result.error_type, "error": result.message}
    return {"timeout_seconds": result.seconds}


def classify_query(report: QueryReport, spark: SparkSession, answer: Answer, shim: Result) -> None:
    """Fill in the outcome of a query Spark answers."""
    if isinstance(shim, TimedOut):
        report.outcome = "TIMEOUT"
    elif isinstance(shim, Failure):
        report.outcome = "REFUSED" if shim.refused else "LEAKED"
        report.error_style = "" if shim.refused else shim.style
    elif len(shim.columns) != len(answer.columns):
        report.outcome, report.detail = "DIFFERENT", "column count"
    elif not same_rows(shim.rows, answer.rows, ordered=bool(top_level_order(report.sql))):
        report.detail = _difference(shim, answer)
        if report.detail == "same rows in another order" and same_up_to_ties(
            spark, report.sql, shim, answer
        ):
            report.detail = "rows with equal ORDER BY keys in another order"
            _compare_names_and_types(report, shim, answer)
        else:
            report.outcome = "DIFFERENT"
    else:
        _compare_names_and_types(report, shim, answer)


def _compare_names_and_types(report: QueryReport, shim: Answer, answer: Answer) -> None:
    report.name_diffs = _name_diffs(shim, answer)
    report.type_diffs = _type_diffs(shim, answer)
    report.outcome = "SAME_VALUES" if report.name_diffs or report.type_diffs else "EXACT"


def _difference(shim: Answer, spark: Answer) -> str:
    if len(shim.rows) != len(spark.rows):
        return f"row count {len(shim.rows)} (Spark {len(spark.rows)})"
    if same_rows(shim.rows, spark.rows, ordered=False):
        return "same rows in another order"
    return "values"


def _name_diffs(shim: Answer, spark: Answer) -> list[dict[str, Any]]:
    pairs = enumerate(zip(shim.columns, spark.columns, strict=True))
    return [{"position": i, "shim": s, "spark": p} for i, (s, p) in pairs if s != p]


def _type_diffs(shim: Answer, spark: Answer) -> list[dict[str, Any]]:
    pairs = enumerate(zip(shim.types, spark.types, strict=True))
    return [
        {"position": i, "column": spark.columns[i], "shim": s, "spark": p}
        for i, (s, p) in pairs
        if s != p
    ]


def classify_spark_failure(report: QueryReport, shim: Result) -> None:
    report.outcome = "SPARK_ERROR"
    report.detail = "shim answers" if isinstance(shim, Answer) else "shim also fails"


def classify_setup(report: QueryReport, spark: Answer | Failure, shim: Result) -> None:
    if isinstance(spark, Failure):
        report.outcome = "SETUP_SPARK_ERROR"
    elif isinstance(shim, Answer):
        report.outcome = "SETUP_OK"
    else:
        report.outcome = "SETUP_FAILED"
        report.error_style = shim.style if isinstance(shim, Failure) else "timeout"


# ---------------------------------------------------------------- one file on both engines


# The shim stores every table as Delta and refuses ``USING parquet`` (its way out is ``USING
# delta``); the files' tables are only there to hold rows, so the shim is given Delta ones.
PARQUET_TABLE = re.compile(r"\bUSING\s+parquet\b", re.IGNORECASE)


def for_the_shim(statement: Statement) -> str:
    return (
        PARQUET_TABLE.sub("USING delta", statement.sql) if not statement.is_query else statement.sql
    )


def relations_created(sql: str) -> set[str]:
    """The (lower-case, unqualified) name a ``CREATE`` statement makes."""
    try:
        tree = parse_spark(sql)
    except Exception:  # not a statement sqlglot reads: it creates nothing we can name
        return set()
    if not isinstance(tree, exp.Create):
        return set()
    table = tree.find(exp.Table)
    return {table.name.lower()} if table is not None else set()


def relations_read(sql: str) -> set[str]:
    try:
        tree = parse_spark(sql)
    except Exception:  # not a statement sqlglot reads: nothing to attribute
        return set()
    return {table.name.lower() for table in tree.find_all(exp.Table)}


@dataclass
class FileRun:
    """One test file's sessions, and the relations the shim failed to create (a query over
    them fails for that reason alone: BLOCKED, not LEAKED)."""

    name: str
    spark: SparkSession
    shim: ShimRunner
    not_created: set[str] = field(default_factory=set)


def run_file(
    test: TestFile, number: int, spark_root: SparkSession, scratch: Path, timeout: float
) -> list[QueryReport]:
    spark = spark_root.newSession()
    database = f"corpus_{number}"
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {database}")
    spark.sql(f"USE {database}")
    shim = ShimSession(warehouse=scratch / f"shim-{number}")
    for key, value in test.settings.items():
        spark.conf.set(key, value)
        shim.conf.set(key, value)
    run = FileRun(test.name, spark, ShimRunner(shim, timeout))
    try:
        return [run_statement(run, i, s) for i, s in enumerate(test.statements)]
    finally:
        run.shim.close()
        spark.sql("USE default")
        spark.sql(f"DROP DATABASE IF EXISTS {database} CASCADE")


def run_statement(run: FileRun, index: int, statement: Statement) -> QueryReport:
    kind = "query" if statement.is_query else "setup"
    report = QueryReport(run.name, index, statement.line, statement.sql, kind, outcome="")
    spark_result = run_on_spark(run.spark, statement.sql)
    shim_result = run.shim.run(for_the_shim(statement))
    report.spark, report.shim = excerpt(spark_result), excerpt(shim_result)
    if kind == "setup":
        classify_setup(report, spark_result, shim_result)
        _track_created(run, report)
    elif isinstance(spark_result, Failure):
        classify_spark_failure(report, shim_result)
    else:
        classify_query(report, run.spark, spark_result, shim_result)
        blocked_by = relations_read(statement.sql) & run.not_created
        if report.outcome == "LEAKED" and blocked_by:
            report.outcome = "BLOCKED"
            report.detail = "the shim failed to create " + ", ".join(sorted(blocked_by))
    return report


def _track_created(run: FileRun, report: QueryReport) -> None:
    created = relations_created(report.sql)
    if report.outcome == "SETUP_FAILED":
        run.not_created |= created
    elif report.outcome == "SETUP_OK":
        run.not_created -= created


# ---------------------------------------------------------------- summary


COLUMNS = (
    "answered",
    "EXACT",
    "SAME_VALUES",
    "DIFFERENT",
    "REFUSED",
    "LEAKED",
    "BLOCKED",
    "TIMEOUT",
)


def tally(reports: Iterable[QueryReport]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for report in reports:
        counts[report.outcome] += 1
        if report.outcome == "LEAKED":
            counts[f"LEAKED:{report.error_style}"] += 1
    answered = sum(counts[c] for c in COLUMNS[1:])
    counts["answered"] = answered
    return counts


def summary_line(name: str, counts: Counter[str]) -> str:
    answered = counts["answered"] or 1
    exact = counts["EXACT"] / answered
    same = (counts["EXACT"] + counts["SAME_VALUES"]) / answered
    cells = " ".join(f"{counts[c]:>6}" for c in COLUMNS)
    extra = f"{counts['SPARK_ERROR']:>6} {counts['SETUP_FAILED']:>6}"
    return f"{name:<42} {cells} {extra} {exact:>7.1%} {same:>7.1%}"


def print_summary(by_file: dict[str, list[QueryReport]]) -> Counter[str]:
    header = " ".join(f"{c[:6]:>6}" for c in COLUMNS)
    print(f"{'file':<42} {header} {'sp-err':>6} {'setup!':>6} {'exact':>7} {'values':>7}")
    overall: Counter[str] = Counter()
    for name, reports in by_file.items():
        counts = tally(reports)
        overall.update(counts)
        print(summary_line(name, counts))
    print(summary_line("OVERALL", overall))
    answered = overall["answered"]
    print(
        f"\n{answered} queries Spark answers: EXACT {overall['EXACT']}, "
        f"SAME_VALUES {overall['SAME_VALUES']}, DIFFERENT {overall['DIFFERENT']}, "
        f"REFUSED {overall['REFUSED']}, LEAKED {overall['LEAKED']} "
        f"(internal {overall['LEAKED:internal']}, spark-style {overall['LEAKED:spark-style']}), "
        f"BLOCKED {overall['BLOCKED']} (by a relation the shim failed to create), "
        f"TIMEOUT {overall['TIMEOUT']}; Spark errors {overall['SPARK_ERROR']}; "
        f"shim setup failures {overall['SETUP_FAILED']}"
    )
    return overall


# ---------------------------------------------------------------- entry point


def start_spark(scratch: Path) -> SparkSession:
    """Local PySpark as the embedded tier builds it: one core, UTC, ANSI off."""
    session = (
        SparkSession.builder.master("local[1]")
        .appName("spark-sql-corpus")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.ansi.enabled", "false")
        .config("spark.sql.warehouse.dir", str(scratch / "warehouse"))
        .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={scratch / 'derby'}")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    return session


def test_file_names(inputs: Path, files: str | None) -> list[str]:
    if files:
        return [name.strip() for name in files.split(",") if name.strip()]
    return sorted(str(path.relative_to(inputs)) for path in inputs.rglob("*.sql"))


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--inputs", type=Path, required=True, help="folder of Spark .sql files")
    parser.add_argument("--files", help="comma-separated file names under --inputs (default all)")
    parser.add_argument("--report", type=Path, help="write the per-query JSON report here")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per shim statement")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    # PySpark and the shim both give timestamps in this process's zone: make it UTC.
    os.environ["TZ"] = "UTC"
    time.tzset()
    names = test_file_names(args.inputs, args.files)
    by_file: dict[str, list[QueryReport]] = {}
    with tempfile.TemporaryDirectory(prefix="spark-sql-corpus-") as scratch:
        spark = start_spark(Path(scratch))
        try:
            for number, name in enumerate(names):
                test = read_test_file(args.inputs, name)
                by_file[name] = run_file(test, number, spark, Path(scratch), args.timeout)
                print(f"ran {name}: {len(test.statements)} statements", file=sys.stderr)
        finally:
            spark.stop()
    overall = print_summary(by_file)
    if args.report:
        write_report(args.report, by_file, overall)
    return 0


def write_report(path: Path, by_file: dict[str, list[QueryReport]], overall: Counter[str]) -> None:
    report = {
        "overall": dict(overall),
        "files": {name: dict(tally(reports)) for name, reports in by_file.items()},
        "statements": [asdict(r) for reports in by_file.values() for r in reports],
    }
    path.write_text(json.dumps(report, indent=1, default=str) + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
