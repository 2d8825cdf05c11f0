"""IPython magics: ``%load_ext dyntables``.

* ``%%dtsql`` (cell) and ``%dtsql`` (line), always;
* ``%%sql`` and ``%sql``, the Databricks spelling, unless another extension already owns
  them: an existing ``sql`` magic is never replaced unless the user asks
  (``%dtsql --claim-sql``).

A cell holds one or more ``;``-separated statements; they run in order and the last one's
result is displayed (an HTML table in notebooks, ``show()`` text in terminals): every
column, except for ``SHOW DYNAMIC TABLES``, which shows the few that fit a line (``SHOW
FULL DYNAMIC TABLES`` shows them all; ``-o`` stores every column either way). Options,
on the magic's line before any SQL:

* ``-o NAME`` / ``--output NAME``: also store the last result DataFrame in ``NAME``;
* ``-l N`` / ``--limit N``: rows displayed (default 1000);
* ``-q`` / ``--quiet``: display nothing (``-o`` still stores).

``{name}`` in the SQL is replaced by the text of the Python variable ``name`` (``{{`` and
``}}`` are literal braces); it is text substitution, not a bind parameter.

The statements run on the ``spark`` of the user namespace, installing dyntables on it
(``dyntables.install``); without one, an embedded session over ``./spark-warehouse`` is
made and put in the namespace as ``spark`` (and ``dt``, when those names are free).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class, no_var_expand

from dyntables.api import terminal_columns
from dyntables.errors import DynamicTableError
from dyntables.notebook import display
from dyntables.notebook.install import Installation, install, installation, statements_of

# The magic names this extension registers; ``sql`` only when free (or claimed).
OWN_NAME = "dtsql"
SHARED_NAME = "sql"

_OPTION = re.compile(
    r"\s*(?:(?P<flag>-o|--output|-l|--limit)(?:\s+|=)(?P<value>\S+)|(?P<switch>-q|--quiet|--claim-sql))(?=\s|$)"
)
_VARIABLE = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass
class Options:
    output: str | None = None
    limit: int = display.DEFAULT_LIMIT
    quiet: bool = False
    claim_sql: bool = False


def parse_line(line: str) -> tuple[Options, str]:
    """The options at the start of a magic's line, and the SQL after them.

    >>> parse_line("-o df -l 5 SELECT 1")
    (Options(output='df', limit=5, quiet=False, claim_sql=False), 'SELECT 1')
    >>> parse_line("SELECT -1 AS minus_one")[1]
    'SELECT -1 AS minus_one'
    """
    options = Options()
    rest = line
    while True:
        match = _OPTION.match(rest)
        if match is None:
            break
        rest = rest[match.end() :]
        flag, value, switch = match.group("flag", "value", "switch")
        if flag in ("-o", "--output"):
            if not value.isidentifier():
                raise UsageError(f"{flag} takes a Python variable name, not {value!r}")
            options.output = value
        elif flag in ("-l", "--limit"):
            if not value.isdigit():
                raise UsageError(f"{flag} takes a number of rows, not {value!r}")
            options.limit = int(value)
        elif switch in ("-q", "--quiet"):
            options.quiet = True
        elif switch == "--claim-sql":
            options.claim_sql = True
    return options, rest.strip()


def substitute(sql: str, namespace: dict[str, Any]) -> str:
    """``{name}`` replaced by ``str(namespace[name])``; ``{{``/``}}`` by one brace.

    >>> substitute("SELECT * FROM t WHERE d > '{day}' AND m = '{{x}}'", {"day": "2025-01-01"})
    "SELECT * FROM t WHERE d > '2025-01-01' AND m = '{x}'"
    """

    def replace(match: re.Match[str]) -> str:
        if match.group(0) == "{{":
            return "{"
        if match.group(0) == "}}":
            return "}"
        name = match.group(1)
        if name not in namespace:
            raise UsageError(
                f"{{{name}}} names no Python variable (write {{{{{name}}}}} for literal braces)"
            )
        return str(namespace[name])

    return _VARIABLE.sub(replace, sql)


@magics_class
class DynamicTableMagics(Magics):
    """``%%dtsql`` / ``%dtsql`` (and ``%%sql`` / ``%sql`` where free)."""

    @no_var_expand
    @line_cell_magic
    def dtsql(self, line: str, cell: str | None = None) -> Any:
        """Run dynamic-table and Spark SQL: ``%%dtsql [-o NAME] [-l ROWS] [-q]``."""
        options, inline_sql = parse_line(line)
        if options.claim_sql:
            claim_sql(self._user_shell())
            if not inline_sql and not cell:
                return None
        text = cell if cell is not None else inline_sql
        if cell is not None and inline_sql:
            raise UsageError(f"put the SQL in the cell, not after the options: {inline_sql!r}")
        if not text or not text.strip():
            raise UsageError("no SQL to run")
        return self.run(substitute(text, self._user_shell().user_ns), options)

    def run(self, text: str, options: Options) -> Any:
        shell = self._user_shell()
        installed = session_installation(shell)
        statements = statements_of(text, script=True)
        if not statements:
            raise UsageError("no SQL statement in the cell")
        result: Any = None
        notebook = _in_notebook(shell)
        with display.progress(len(statements), notebook=notebook) as progress:
            for index, statement in enumerate(statements):
                progress.step(index, type(statement).__name__)
                result = installed.tables.run([statement], text)
        if options.output is not None:
            shell.user_ns[options.output] = result
        if options.quiet:
            return None
        return display.displayable(result, options.limit, terminal_columns(statements[-1]))

    def _user_shell(self) -> Any:
        if self.shell is None:
            raise UsageError("the dyntables magics need an IPython shell")
        return self.shell


def session_installation(shell: Any) -> Installation:
    """dyntables installed on the user's ``spark`` (made, embedded, when absent)."""
    namespace = shell.user_ns
    spark = namespace.get("spark")
    if spark is None:
        from sparkshim import ShimSession

        spark = ShimSession(warehouse="spark-warehouse")
        namespace["spark"] = spark
    try:
        tables = install(spark)
    except DynamicTableError as error:
        raise UsageError(
            f"{error} (for the magics: run dyntables.install(spark, table_format=...) first)"
        ) from error
    namespace.setdefault("dt", tables)
    found = installation(spark)
    assert found is not None
    return found


def load(shell: Any) -> None:
    """Register the magics: ``dtsql`` always, ``sql`` when no other extension has it."""
    magics = DynamicTableMagics(shell)
    shell.register_magics(magics)  # registers dtsql (the class's only magic)
    display.register_formatters(shell)
    manager = shell.magics_manager
    taken = SHARED_NAME in manager.magics["cell"] or SHARED_NAME in manager.magics["line"]
    if taken and not _is_ours(manager, SHARED_NAME):
        print(
            f"dyntables: %%{SHARED_NAME} belongs to another extension and was left as it is;"
            f" use %%{OWN_NAME} (or run %{OWN_NAME} --claim-sql to take %%{SHARED_NAME})"
        )
        return
    _register_shared(shell, magics)


def claim_sql(shell: Any) -> None:
    """Make ``%%sql``/``%sql`` dyntables' (the user asked, replacing another's)."""
    manager = shell.magics_manager
    registered = manager.registry.get(DynamicTableMagics.__name__)
    magics = registered if registered is not None else DynamicTableMagics(shell)
    _register_shared(shell, magics)


def unload(shell: Any) -> None:
    manager = shell.magics_manager
    for kind in ("line", "cell"):
        for name in (OWN_NAME, SHARED_NAME):
            if _is_ours(manager, name, kind):
                del manager.magics[kind][name]


def _register_shared(shell: Any, magics: DynamicTableMagics) -> None:
    manager = shell.magics_manager
    function = getattr(magics, OWN_NAME)  # the bound magic
    manager.register_function(function, magic_kind="line_cell", magic_name=SHARED_NAME)


def _is_ours(manager: Any, name: str, kind: str | None = None) -> bool:
    kinds = [kind] if kind is not None else ["line", "cell"]
    for each in kinds:
        found = manager.magics[each].get(name)
        owner = getattr(found, "__self__", None)
        if isinstance(owner, DynamicTableMagics):
            return True
    return False


def _in_notebook(shell: Any) -> bool:
    """Whether results go to a Jupyter front-end (a kernel), not a terminal."""
    return type(shell).__name__ == "ZMQInteractiveShell"
