"""``dyntables-sql``: a SQL shell shaped like ``spark-sql``, with dynamic tables.

``-e`` runs the given SQL, ``-f`` a script file; with neither, an interactive prompt reads
statements until ``quit;``, ``exit;`` or end of input. Each statement's rows print as
tab-separated values (``NULL`` for nulls), as ``spark-sql`` prints them, and a
``Time taken: … seconds, Fetched N row(s)`` line follows on standard error. The column
names print first when asked (``--print-header``, ``SET hive.cli.print.header=true`` or
``spark.sql.cli.print.header``), and always for a refresh (``ALTER DYNAMIC TABLE …
REFRESH``, ``REFRESH MATERIALIZED VIEW``), whose values alone do not say what they are.
``SHOW DYNAMIC TABLES`` prints the columns that fit a line (name, schema, target lag, mode,
state, data timestamp, rows) and ``SHOW FULL DYNAMIC TABLES`` every column of its result.
Errors print as ``Error: …``; in ``-e``/``-f`` mode the first one stops the run with exit
status 1.
``--debug`` shows the traceback.

By default the statements run on the embedded JVM-free engine over ``--warehouse``;
``--master`` builds a real local SparkSession and ``--remote`` a Spark Connect one.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import decimal
import struct
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from dyntables.errors import DynamicTableError

PROMPT = "spark-sql"
_QUIT_COMMANDS = ("quit", "exit")
# What --print-header does, as session settings: spark-sql honours Hive's key (SET
# hive.cli.print.header=true, --hiveconf) and Spark's own; either one set to true is enough.
_PRINT_HEADER_CONFS = ("hive.cli.print.header", "spark.sql.cli.print.header")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_argument_parser()
    args = parser.parse_args(argv)
    try:
        return run(args, stdin=sys.stdin, stdout=sys.stdout, stderr=sys.stderr)
    except StatementError as failure:
        if args.debug:
            raise failure.cause from None
        print(f"Error: {failure}", file=sys.stderr)
        return 1
    except DynamicTableError as error:  # before any statement: the options or the engine
        if args.debug:
            raise
        print(f"Error: {error}", file=sys.stderr)
        return 1


def build_argument_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dyntables-sql",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    source = parser.add_mutually_exclusive_group()
    source.add_argument("-e", dest="execute", metavar="SQL", help="SQL to run, ';'-separated")
    source.add_argument(
        "-f", dest="file", metavar="FILE", help="a SQL script to run (- for standard input)"
    )
    parser.add_argument(
        "-i",
        dest="init_files",
        metavar="INIT_FILE",
        action="append",
        default=[],
        help="a SQL script to run first, before -e, -f or the prompt (repeatable)",
    )
    add_engine_arguments(parser)
    parser.add_argument(
        "--hiveconf",
        dest="conf",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        type=_key_value,
        help="as --conf (spark-sql's spelling, e.g. --hiveconf hive.cli.print.header=true)",
    )
    parser.add_argument(
        "--print-header",
        action="store_true",
        help="print the column names before the rows (spark-sql: hive.cli.print.header)",
    )
    parser.add_argument(
        "-S", "--silent", action="store_true", help="do not print the 'Time taken' lines"
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks of errors")
    return parser


def add_engine_arguments(parser: argparse.ArgumentParser) -> None:
    """The engine flags, shared with ``dyntables scheduler run`` and ``dyntables status``."""
    parser.add_argument("--database", metavar="DB", help="the database to USE first")
    parser.add_argument(
        "--conf",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        type=_key_value,
        help="a session configuration to set (repeatable)",
    )
    engine = parser.add_mutually_exclusive_group()
    engine.add_argument(
        "--warehouse",
        metavar="DIR",
        help="the embedded engine's warehouse folder (the default engine; ./spark-warehouse)",
    )
    engine.add_argument(
        "--master",
        metavar="URL",
        help="run on a real SparkSession with this master, e.g. local[*] (needs Java)",
    )
    engine.add_argument(
        "--remote",
        metavar="sc://HOST:PORT",
        help="run on a Spark Connect server (untested in this project's test suite)",
    )
    parser.add_argument(
        "--table-format",
        choices=("delta", "iceberg"),
        help="the format of dynamic tables on --master/--remote sessions, when"
        " spark.sql.extensions does not tell (the embedded engine stores Delta)",
    )


def _key_value(text: str) -> tuple[str, str]:
    key, equals, value = text.partition("=")
    if not equals or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key.strip(), value


class StatementError(Exception):
    """A statement's error, with the statement's own exception kept as ``cause``."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(error_message(cause))
        self.cause = cause


def error_message(error: BaseException) -> str:
    """What follows ``Error: `` for an error of a statement.

    Our errors and Spark's (AnalysisException, ParseException, …) are reported in their own
    words; anything else is a surprise, so its type is named too.
    """
    text = str(error).strip()
    if isinstance(error, DynamicTableError) or _is_spark_error(error):
        return text or type(error).__name__
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _is_spark_error(error: BaseException) -> bool:
    pyspark_errors = sys.modules.get("pyspark.errors")
    base = getattr(pyspark_errors, "PySparkException", None)
    return base is not None and isinstance(error, base)


# ---- the session ----


def run(args: argparse.Namespace, *, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    shell = Shell(
        open_tables(args),
        stdout=stdout,
        stderr=stderr,
        print_header=args.print_header,
        silent=args.silent,
    )
    for path in args.init_files:
        shell.run_script(_read(path, stdin), timings=False)
    if args.execute is not None:
        shell.run_script(args.execute)
        return 0
    if args.file is not None:
        shell.run_script(_read(args.file, stdin))
        return 0
    return shell.interact(stdin, debug=args.debug)


def open_tables(args: argparse.Namespace) -> Any:
    """The ``DynamicTables`` the options ask for, configured and in ``--database``."""
    from dyntables.api import DynamicTables  # lazy: --help must not load the engine

    confs: list[tuple[str, str]] = args.conf
    if args.master is not None or args.remote is not None:
        from pyspark.sql import SparkSession  # lazy: only these modes need real Spark

        builder: Any = SparkSession.builder
        builder = (
            builder.master(args.master) if args.master is not None else builder.remote(args.remote)
        )
        builder = builder.appName("dyntables-sql")
        for key, value in confs:
            builder = builder.config(key, value)
        tables = DynamicTables(builder.getOrCreate(), table_format=args.table_format)
    else:
        tables = DynamicTables(
            warehouse=args.warehouse or "spark-warehouse", table_format=args.table_format
        )
        for key, value in confs:
            tables.session.conf.set(key, value)
    if args.database is not None:
        try:
            tables.session.catalog.setCurrentDatabase(args.database)
        except Exception as error:
            raise StatementError(error) from error
    return tables


def _read(path: str, stdin: TextIO) -> str:
    if path == "-":
        return stdin.read()
    try:
        with open(path, encoding="utf-8") as script:
            return script.read()
    except OSError as error:
        raise DynamicTableError(f"cannot read {path}: {error.strerror}") from error


@dataclass
class Shell:
    """Runs statements one at a time and prints each result as spark-sql does."""

    tables: Any
    stdout: TextIO
    stderr: TextIO
    print_header: bool = False
    silent: bool = False

    def run_script(self, text: str, *, timings: bool = True) -> None:
        """Run every statement of ``text``; the first failure raises ``StatementError``."""
        for statement in statements_of(text):
            self.run_statement(statement, timings=timings)

    def run_statement(self, statement: str, *, timings: bool = True) -> None:
        from dyntables.parser import parse  # lazy: loads ANTLR

        started = time.monotonic()
        try:
            parsed = parse(statement)
            frame = self.tables.run(parsed, statement)
            if frame is None:
                raise DynamicTableError("no SQL statement to run: the text is empty")
            columns = list(frame.columns)
            rows = frame.collect() if columns else []
        except Exception as error:
            raise StatementError(error) from error
        if columns:
            shown = _shown_columns(parsed[-1], columns)
            if self.print_header or self._conf_says_header() or _is_refresh(parsed[-1]):
                print("\t".join(columns[i] for i in shown), file=self.stdout)
            fields = frame.schema.fields
            types = [fields[i].dataType for i in shown]
            for row in rows:
                print(format_row([row[i] for i in shown], types), file=self.stdout)
        self.stdout.flush()
        if timings and not self.silent:
            taken = round(time.monotonic() - started, 3)
            fetched = f", Fetched {len(rows)} row(s)" if rows else ""
            print(f"Time taken: {taken} seconds{fetched}", file=self.stderr)

    def _conf_says_header(self) -> bool:
        conf = self.tables.session.conf
        for key in _PRINT_HEADER_CONFS:
            try:
                value = conf.get(key, "false")
            except Exception:  # a session that refuses the key: not set
                continue
            if str(value).strip().lower() == "true":
                return True
        return False

    # ---- the prompt ----

    def prompt(self) -> str:
        try:
            database = self.tables.session.catalog.currentDatabase()
        except Exception:
            return f"{PROMPT}> "
        return f"{PROMPT} ({database})> "

    def interact(self, stdin: TextIO, *, debug: bool = False) -> int:
        """Read statements from ``stdin`` until ``quit;``, ``exit;`` or end of input."""
        pending = ""
        while True:
            prompt = self.prompt()
            if pending:
                prompt = " " * (len(prompt) - 2) + "> "
            try:
                line = _read_line(stdin, self.stdout, prompt)
            except KeyboardInterrupt:  # Ctrl-C drops the statement being typed
                print(file=self.stdout)
                pending = ""
                continue
            if line is None:  # end of input
                if stdin.isatty():
                    print(file=self.stdout)
                return 0
            pending += line if line.endswith("\n") else line + "\n"
            complete, rest = take_complete(pending)
            pending = rest
            for statement in complete:
                if statement.strip().rstrip(";").strip().lower() in _QUIT_COMMANDS:
                    return 0
                try:
                    self.run_statement(statement)
                except StatementError as failure:
                    if debug:
                        import traceback

                        traceback.print_exception(
                            type(failure.cause),
                            failure.cause,
                            failure.cause.__traceback__,
                            file=self.stderr,
                        )
                    print(f"Error: {failure}", file=self.stderr)
                    self.stderr.flush()


def _is_refresh(statement: Any) -> bool:
    """Whether ``statement`` is a manual refresh, whose result (name, action, reason, state,
    data timestamp, rows inserted and deleted) prints with its header: unlike Spark's
    results, its values do not say what they are."""
    from dyntables.statements import AlterAction, AlterDynamicTable, RefreshMaterializedView

    if isinstance(statement, AlterDynamicTable):
        return statement.action is AlterAction.REFRESH
    return isinstance(statement, RefreshMaterializedView)


def _shown_columns(statement: Any, columns: list[str]) -> list[int]:
    """The positions of the columns printed of ``statement``'s result: all of them, except
    where a terminal prints fewer (``dyntables.api.terminal_columns``)."""
    from dyntables.api import terminal_columns

    wanted = terminal_columns(statement)
    if wanted is None:
        return list(range(len(columns)))
    return [columns.index(name) for name in wanted]


def _read_line(stdin: TextIO, stdout: TextIO, prompt: str) -> str | None:
    if stdin is sys.stdin and stdin.isatty() and stdout is sys.stdout:
        with contextlib.suppress(ImportError):
            import readline  # noqa: F401  (line editing and history for input())
        try:
            return input(prompt)
        except EOFError:
            return None
    stdout.write(prompt)
    stdout.flush()
    line = stdin.readline()
    return line or None


def statements_of(text: str) -> list[str]:
    """The statements of a script, split on top-level ``;`` as the parser splits them.

    >>> statements_of("SELECT ';' AS s; -- done\\nSELECT 2")
    ["SELECT ';' AS s", '-- done\\nSELECT 2']
    """
    from dyntables.parser.splitter import split_statements

    return [text[piece.start : piece.stop] for piece in split_statements(text)]


def take_complete(buffer: str) -> tuple[list[str], str]:
    """The statements of ``buffer`` that a top-level ``;`` has ended, and the rest.

    >>> take_complete("SELECT 1; SELECT\\n")
    (['SELECT 1'], ' SELECT\\n')
    >>> take_complete("SELECT ';\\n")
    ([], "SELECT ';\\n")
    """
    from dyntables.parser.splitter import split_statements

    pieces = split_statements(buffer)
    complete: list[str] = []
    consumed = 0
    for piece in pieces:
        if piece.stop >= len(buffer) or buffer[piece.stop] != ";":
            break  # runs to the end: not ended yet
        complete.append(buffer[piece.start : piece.stop])
        consumed = piece.stop + 1
    rest = buffer[consumed:]
    if complete and not rest.strip():
        rest = ""
    elif not buffer.strip(" \t\r\n;"):
        rest = ""  # only blanks and semicolons: nothing to wait for
    return complete, rest


# ---- values as spark-sql prints them (Spark's HiveResult.toHiveString) ----


def format_row(row: Sequence[Any], types: Sequence[Any]) -> str:
    """One result row as a line of tab-separated values.

    >>> format_row((1, None, True, decimal.Decimal("1.50")), [None] * 4)
    '1\\tNULL\\ttrue\\t1.50'
    """
    return "\t".join(
        format_value(value, types[i] if i < len(types) else None) for i, value in enumerate(row)
    )


def format_value(value: Any, data_type: Any = None, *, nested: bool = False) -> str:
    """A value as spark-sql prints it; ``data_type`` is its pyspark type when known.

    Nested values differ from top-level ones as in Spark: nulls print as ``null`` and
    strings in double quotes.

    >>> format_value(None)
    'NULL'
    >>> format_value([1, None, 3])
    '[1,null,3]'
    >>> format_value({"b": 2, "a": 1})
    '{"a":1,"b":2}'
    >>> format_value(datetime.datetime(2025, 1, 15, 8, 30, 0, 120000))
    '2025-01-15 08:30:00.12'
    >>> format_value(1e20)
    '1.0E20'
    """
    type_name = _type_name(data_type)
    if value is None:
        return "null" if nested else "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, decimal.Decimal):
        return _plain_decimal(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _java_float(value) if type_name == "float" else _java_double(value)
    if isinstance(value, str):
        return f'"{value}"' if nested else value
    if isinstance(value, datetime.datetime):
        return _timestamp(value)
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("utf-8", errors="replace")
    if isinstance(value, dict):
        key_type = getattr(data_type, "keyType", None)
        value_type = getattr(data_type, "valueType", None)
        entries = sorted(
            format_value(key, key_type, nested=True)
            + ":"
            + format_value(item, value_type, nested=True)
            for key, item in value.items()
        )
        return "{" + ",".join(entries) + "}"
    if _is_row(value):
        fields = list(getattr(data_type, "fields", None) or [])
        names = list(getattr(value, "__fields__", None) or [f.name for f in fields])
        parts = []
        for i, item in enumerate(value):
            name = names[i] if i < len(names) else f"col{i + 1}"
            item_type = fields[i].dataType if i < len(fields) else None
            parts.append(f'"{name}":' + format_value(item, item_type, nested=True))
        return "{" + ",".join(parts) + "}"
    if isinstance(value, (list, tuple)):
        element_type = getattr(data_type, "elementType", None)
        return "[" + ",".join(format_value(v, element_type, nested=True) for v in value) + "]"
    return str(value)


def _type_name(data_type: Any) -> str | None:
    type_name = getattr(data_type, "typeName", None)
    return str(type_name()) if callable(type_name) else None


def _is_row(value: Any) -> bool:
    return isinstance(value, tuple) and hasattr(value, "__fields__")


def _plain_decimal(value: decimal.Decimal) -> str:
    """Java's ``BigDecimal.toPlainString``: no exponent, the scale kept."""
    if not value.is_finite():
        return str(value)
    return format(value, "f")


def _timestamp(value: datetime.datetime) -> str:
    """``yyyy-MM-dd HH:mm:ss`` and the fraction of a second without trailing zeros."""
    text = value.strftime("%Y-%m-%d %H:%M:%S")
    if len(text) < 19:  # strftime does not pad years below 1000 everywhere
        text = f"{value.year:04d}" + text[text.index("-") :]
    if value.microsecond:
        text += "." + f"{value.microsecond:06d}".rstrip("0")
    return text


def _java_double(value: float) -> str:
    """Java's ``Double.toString``: shortest digits, scientific outside [1e-3, 1e7).

    >>> [_java_double(v) for v in (1.5, 100.0, 1e7, 1.25e-4, -0.0)]
    ['1.5', '100.0', '1.0E7', '1.25E-4', '-0.0']
    """
    return _java_number(value, repr(value))


def _java_float(value: float) -> str:
    """Java's ``Float.toString``: the shortest digits that read back as the same float.

    >>> _java_float(0.10000000149011612)
    '0.1'
    """
    if value != value or value in (float("inf"), float("-inf")):
        return _java_number(value, repr(value))
    single = _as_single(value)
    for precision in range(1, 10):
        digits = f"{single:.{precision}g}"
        if _as_single(float(digits)) == single:
            return _java_number(single, digits)
    return _java_number(single, repr(single))


def _as_single(value: float) -> float:
    result: float = struct.unpack("f", struct.pack("f", value))[0]
    return result


def _java_number(value: float, shortest: str) -> str:
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if str(value).startswith("-") else "0.0"
    sign, digit_tuple, exponent = decimal.Decimal(shortest).normalize().as_tuple()
    assert isinstance(exponent, int)
    digits = "".join(map(str, digit_tuple))
    scientific = len(digits) - 1 + exponent
    prefix = "-" if sign else ""
    if -3 <= scientific < 7:
        plain = format(decimal.Decimal(shortest).copy_abs().normalize(), "f")
        return prefix + (plain if "." in plain else plain + ".0")
    return f"{prefix}{digits[0]}.{digits[1:] or '0'}E{scientific}"


if __name__ == "__main__":
    sys.exit(main())
