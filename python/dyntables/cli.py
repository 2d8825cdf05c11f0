"""The ``dyntables`` command line: a thin shell over the library.

* ``dyntables parse FILE`` checks a SQL script and prints how each statement is understood;
* ``dyntables scheduler run [--once]`` keeps every dynamic table within its target lag
  (a daemon until SIGINT/SIGTERM; ``--once`` refreshes what is due and exits);
* ``dyntables status`` prints the graph of dynamic tables with lag, state and last refresh;
* ``dyntables shell`` starts IPython with ``spark`` and ``dt`` ready and the magics loaded.

The engine commands take the engine flags of ``dyntables-sql`` (``--warehouse``,
``--master``, ``--remote``, ``--conf``, ``--database``, ``--table-format``). Errors print
as ``Error: …`` with exit status 1; ``--debug`` shows the traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import fields
from enum import Enum
from typing import TextIO

from dyntables.errors import DynamicTableError
from dyntables.sql_cli import StatementError, add_engine_arguments
from dyntables.statements import PassThrough, Statement


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_argument_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.run(args))
    except (DynamicTableError, StatementError) as error:
        if args.debug:
            raise
        print(f"Error: {error}", file=sys.stderr)
        return 1


def build_argument_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dyntables", description=__doc__)
    parser.add_argument("--debug", action="store_true", help="show tracebacks of errors")
    commands = parser.add_subparsers(required=True, metavar="COMMAND")
    parse_command = commands.add_parser(
        "parse", help="check a SQL script and print each statement as the parser sees it"
    )
    parse_command.add_argument(
        "script", type=argparse.FileType("r"), help="a .sql file, or - for standard input"
    )
    parse_command.set_defaults(run=run_parse)

    scheduler = commands.add_parser("scheduler", help="the scheduler of dynamic tables")
    scheduler_commands = scheduler.add_subparsers(required=True, metavar="COMMAND")
    run_command = scheduler_commands.add_parser(
        "run",
        help="keep every dynamic table within its target lag (until SIGINT/SIGTERM)",
        description="Refresh dynamic tables on schedule. One scheduler per catalog is active:"
        " it holds a lease in dyntables_system; a second one waits as a standby.",
    )
    add_engine_arguments(run_command)
    run_command.add_argument(
        "--once",
        action="store_true",
        help="refresh what is due now and exit (for cron, Airflow, Databricks Jobs); exits 0"
        " naming the holder when another scheduler holds the lease",
    )
    run_command.add_argument(
        "--lease-seconds", type=float, default=30.0, help="how long the lease lasts unrenewed"
    )
    run_command.add_argument(
        "--poll-seconds",
        type=float,
        default=5.0,
        help="how often the catalog is re-read for new or altered dynamic tables",
    )
    run_command.add_argument(
        "--min-target-lag",
        type=float,
        default=1.0,
        metavar="SECONDS",
        help="the shortest target lag scheduled as written (Snowflake's is 60)",
    )
    run_command.add_argument(
        "--base-period",
        type=float,
        default=48.0,
        metavar="SECONDS",
        help="the base of the canonical refresh periods (base * 2^k)",
    )
    run_command.add_argument(
        "-q", "--quiet", action="store_true", help="print only warnings and errors"
    )
    run_command.set_defaults(run=run_scheduler)

    status_command = commands.add_parser(
        "status", help="print the dynamic tables with their lag, state and last refresh"
    )
    add_engine_arguments(status_command)
    status_command.set_defaults(run=run_status)

    shell_command = commands.add_parser(
        "shell",
        help="IPython with spark and dt ready and the %%sql magics loaded",
        description="An IPython shell with `spark` (dyntables installed on it) and `dt`"
        " ready and the %%sql / %%dtsql magics loaded. Arguments after -- go to IPython.",
    )
    add_engine_arguments(shell_command)
    shell_command.add_argument(
        "ipython_args", nargs="*", metavar="-- IPYTHON_ARGS", help="arguments for IPython"
    )
    shell_command.set_defaults(run=run_shell)
    return parser


def run_scheduler(args: argparse.Namespace) -> int:
    import logging
    import signal
    import threading

    from dyntables.scheduler.daemon import Progress, log_to
    from dyntables.scheduler.period import SchedulerConfig
    from dyntables.sql_cli import open_tables

    log_to(sys.stderr, logging.WARNING if args.quiet else logging.INFO)
    config = SchedulerConfig(
        base_period_seconds=args.base_period, min_target_lag_seconds=args.min_target_lag
    )
    tables = open_tables(args)
    service = tables.scheduler_service(
        config=config,
        lease_seconds=args.lease_seconds,
        poll_seconds=args.poll_seconds,
        progress=Progress(None if args.quiet else sys.stderr),
    )
    if args.once:
        holder = service.run_once()
        if holder is not None:
            print(f"the scheduler lease is held by {holder.describe()}: not refreshing")
        return 0
    stop = threading.Event()

    def on_signal(number: int, frame: object) -> None:
        if stop.is_set():  # a second signal: abandon the refresh in flight (atomic commit)
            raise KeyboardInterrupt
        print(
            f"{signal.Signals(number).name}: stopping after the refresh in flight",
            file=sys.stderr,
        )
        stop.set()

    stop_signals = (signal.SIGINT, signal.SIGTERM)
    previous = {number: signal.signal(number, on_signal) for number in stop_signals}
    try:
        service.run(stop)
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
    return 0


def run_status(args: argparse.Namespace) -> int:
    from dyntables.sql_cli import open_tables

    print(open_tables(args).graph().to_text())
    return 0


def run_shell(args: argparse.Namespace) -> int:
    from dyntables.notebook.shell import run  # lazy: imports IPython

    return run(args)


def run_parse(args: argparse.Namespace) -> int:
    from dyntables.parser import parse  # lazy: loads the ANTLR runtime

    script: TextIO = args.script
    with script:
        statements = parse(script.read())
    for statement in statements:
        print(describe(statement))
    return 0


def describe(statement: Statement) -> str:
    """One line per statement: where it starts, its kind, and the fields that are set.

    >>> from dyntables.statements import DropDynamicTable, TableName
    >>> describe(DropDynamicTable(TableName(("dt",)), if_exists=True))
    'DropDynamicTable name=dt if_exists=True'
    """
    span = getattr(statement, "span", None)
    where = f"{span.line}:{span.column} " if span is not None else ""
    kind = type(statement).__name__
    if isinstance(statement, PassThrough):
        code_lines = [line for line in statement.sql.splitlines() if _is_code(line)]
        first_line = code_lines[0].strip() if code_lines else statement.sql.strip()
        return f"{where}{kind} (to Spark) {_short(first_line)}"
    settings = []
    for field in fields(statement):
        value = getattr(statement, field.name)
        if field.name == "span" or value is None or value is False or value == ():
            continue
        settings.append(f"{field.name}={_short(value)}")
    return f"{where}{kind} " + " ".join(settings)


def _is_code(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith(("--", "/*"))


def _short(value: object) -> str:
    text = " ".join(str(value.value if isinstance(value, Enum) else value).split())
    return text if len(text) <= 60 else text[:57] + "..."


if __name__ == "__main__":
    sys.exit(main())
