"""``install(spark)``: dynamic-table statements through a session's own ``spark.sql``.

The session *instance* gets an ``sql`` attribute that shadows the class's method; no
class, module or other session changes. The replacement hands the text to a
``DynamicTables`` on that session:

* a text of ordinary SQL reaches the original ``sql`` with the caller's exact string (and
  exact arguments: parameterized calls are never ours), unless it names a dynamic table,
  a ``METADATA$`` column or ``information_schema``'s dynamic-table functions, which
  ``DynamicTables`` checks and rewrites as ``dt.sql`` does;
* a text with a dynamic-table statement runs as ``dt.sql`` runs it: statement by
  statement when there are several, the last one's DataFrame returned.

The library's own work calls ``session.sql`` on the same session (catalog look-ups,
system tables); those calls come from ``dyntables``/``sparkshim`` code and go straight to
the original method, on every thread (the scheduler's too), so nothing recurses.

>>> import tempfile
>>> from sparkshim import ShimSession
>>> spark = ShimSession(warehouse=tempfile.mkdtemp())
>>> dt = install(spark)
>>> spark.sql("CREATE TABLE src (id INT) USING DELTA").collect()
[]
>>> spark.sql("CREATE DYNAMIC TABLE d TARGET_LAG = '1 minute' AS SELECT id FROM src").collect()
[Row(status='Dynamic table d successfully created.')]
>>> install(spark) is dt
True
>>> uninstall(spark)
True
>>> "sql" in vars(spark)
False
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dyntables.api import DynamicTables
from dyntables.errors import DynamicTableError
from dyntables.statements import PassThrough, Statement

# The attribute under which an installed session keeps its installation.
_MARK = "_dyntables_installation"
# Calls from these packages are the library's own: they reach the original ``sql``.
_OWN_PACKAGES = ("dyntables", "sparkshim")


@dataclass(frozen=True)
class Installation:
    """What ``install`` put on a session, and what ``uninstall`` restores."""

    tables: DynamicTables
    original: Callable[..., Any]  # the ``sql`` the session had: a bound method, usually
    shadowed: bool  # whether ``original`` was an instance attribute (another patch) already
    wrapper: Callable[..., Any]


def install(
    spark: Any, *, table_format: str | None = None, tables: DynamicTables | None = None
) -> DynamicTables:
    """Make ``spark.sql`` accept dynamic-table statements; the ``DynamicTables`` behind it
    (``tables``, when given one on this session, else a new one).

    Installing again returns the same object (``table_format`` must then agree or be
    None). Works on classic and Spark Connect SparkSessions and on sparkshim's."""
    existing = installation(spark)
    if existing is not None:
        current = existing.tables.engine.table_format.name
        if table_format is not None and table_format != current:
            raise DynamicTableError(
                f"dyntables is already installed on this session with table_format={current!r};"
                " uninstall(spark) first to change it"
            )
        return existing.tables
    if tables is None:
        tables = DynamicTables(spark, table_format=table_format)
    elif tables.session is not spark:
        raise DynamicTableError("install(spark, tables=dt) needs dt.session to be spark")
    own = vars(spark)
    shadowed = "sql" in own
    original: Callable[..., Any] = spark.sql
    wrapper = _routing_sql(tables, original)
    own[_MARK] = Installation(tables, original, shadowed, wrapper)
    own["sql"] = wrapper
    return tables


def uninstall(spark: Any) -> bool:
    """Give ``spark`` back its own ``sql``; False when nothing was installed. A background
    scheduler started with ``dt.start()`` keeps running until ``dt.stop()``."""
    found = installation(spark)
    if found is None:
        return False
    own = vars(spark)
    if own.get("sql") is not found.wrapper:
        raise DynamicTableError(
            "spark.sql was replaced again after dyntables.install (by another library):"
            " remove that patch first, then uninstall"
        )
    if found.shadowed:
        own["sql"] = found.original
    else:
        del own["sql"]
    del own[_MARK]
    return True


def installation(spark: Any) -> Installation | None:
    """The installation on ``spark``, if any."""
    found = vars(spark).get(_MARK)
    return found if isinstance(found, Installation) else None


def _routing_sql(tables: DynamicTables, original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def sql(sqlQuery: Any, args: Any = None, **kwargs: Any) -> Any:  # noqa: N803 (PySpark's)
        if args is not None or kwargs or not isinstance(sqlQuery, str) or _from_library():
            return original(sqlQuery, args, **kwargs)
        return route(tables, original, sqlQuery)

    return sql


def route(tables: DynamicTables, original: Callable[..., Any], text: str) -> Any:
    """Run ``text`` as the installed ``spark.sql`` does."""
    statements = statements_of(text)
    if not statements:
        return original(text)  # nothing but comments or blanks: Spark's own answer (an error)
    return tables.run(statements, text)


def statements_of(text: str, *, script: bool = False) -> list[Statement]:
    """The statements of ``text`` as the installed ``spark.sql`` runs them: a text of
    ordinary SQL only is one statement with the caller's exact string (so Spark answers
    it, its own error for several statements included). With ``script`` (the magics),
    several statements run one by one; a lone one still keeps its exact text.

    >>> statements_of("SELECT 1 ;")[0].sql
    'SELECT 1 ;'
    >>> [s.sql for s in statements_of("SELECT 1; SELECT 2")]
    ['SELECT 1; SELECT 2']
    >>> [s.sql for s in statements_of("SELECT 1; SELECT 2", script=True)]
    ['SELECT 1', 'SELECT 2']
    """
    from dyntables.parser import parse  # lazy: loads ANTLR

    statements = parse(text)
    ordinary = [s for s in statements if isinstance(s, PassThrough)]
    if not ordinary or len(ordinary) < len(statements):
        return statements
    if len(ordinary) == 1 or not script:
        return [PassThrough(text, ordinary[0].span)]
    return statements


def _from_library() -> bool:
    """Whether the caller of the installed ``sql`` is the library's own code: a function
    defined in a file of the ``dyntables`` or ``sparkshim`` packages (doctests and user
    code run from elsewhere)."""
    caller = sys._getframe(2).f_code.co_filename
    return caller.startswith(_own_folders())


@functools.cache
def _own_folders() -> tuple[str, ...]:
    import importlib.util

    folders = []
    for package in _OWN_PACKAGES:
        spec = importlib.util.find_spec(package)
        for location in (spec.submodule_search_locations or []) if spec else []:
            folders.append(os.path.join(os.path.realpath(location), ""))
            folders.append(os.path.join(os.path.abspath(location), ""))
    return tuple(folders)
