"""spark-dynamic-tables: Snowflake-style dynamic tables for Apache Spark and Delta Lake.

Importing this package starts nothing and imports neither Spark nor the parser runtime:
``parse`` loads the ANTLR-generated parser on first use.

>>> import dyntables
>>> statement, = dyntables.parse("ALTER DYNAMIC TABLE dt_orders SUSPEND")
>>> statement.action
<AlterAction.SUSPEND: 'SUSPEND'>
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dyntables import statements
from dyntables.errors import (
    ConcurrentRefreshError,
    DynamicTableError,
    DynamicTableSyntaxError,
    UnsupportedStatementError,
)
from dyntables.statements import Statement

if TYPE_CHECKING:  # at run time it is imported on first use (``__getattr__``)
    from dyntables.api import DynamicTables

__version__ = "0.1.0.dev0"


def __getattr__(name: str) -> object:
    # DynamicTables is imported on first use, so that ``import dyntables`` stays light.
    if name == "DynamicTables":
        from dyntables.api import DynamicTables

        return DynamicTables
    raise AttributeError(f"module 'dyntables' has no attribute {name!r}")


def install(spark: Any, *, table_format: str | None = None) -> DynamicTables:
    """Make ``spark.sql`` on this session accept dynamic-table statements; ordinary SQL
    still reaches Spark's own ``sql`` byte-exact (``dyntables.notebook.install``)."""
    from dyntables.notebook.install import install as install_on

    return install_on(spark, table_format=table_format)


def uninstall(spark: Any) -> bool:
    """Give ``spark`` back its own ``sql``; False when nothing was installed."""
    from dyntables.notebook.install import uninstall as uninstall_from

    return uninstall_from(spark)


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext dyntables``: the ``%%sql``, ``%sql`` and ``%%dtsql`` magics."""
    from dyntables.notebook.magics import load

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext dyntables``: removes the magics this extension registered."""
    from dyntables.notebook.magics import unload

    unload(ipython)


def parse(text: str) -> list[Statement]:
    """Split ``text`` into statements and parse the dynamic-table ones (see
    ``dyntables.parser.parse``)."""
    from dyntables.parser import parse as parse_statements  # lazy: loads ANTLR

    return parse_statements(text)


__all__ = [
    "ConcurrentRefreshError",
    "DynamicTableError",
    "DynamicTableSyntaxError",
    "DynamicTables",
    "Statement",
    "UnsupportedStatementError",
    "install",
    "load_ipython_extension",
    "parse",
    "statements",
    "uninstall",
    "unload_ipython_extension",
]
