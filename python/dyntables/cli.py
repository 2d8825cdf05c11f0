"""The ``dyntables`` command line: a thin shell over the library.

Today it offers ``dyntables parse``, which checks a SQL script and prints how each
statement is understood; engine commands (shell, scheduler) arrive with the engine.
Errors print as ``Error: …`` with exit status 1; ``--debug`` shows the traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import fields
from enum import Enum
from typing import TextIO

from dyntables.errors import DynamicTableError
from dyntables.statements import PassThrough, Statement


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_argument_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.run(args))
    except DynamicTableError as error:
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
    return parser


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
