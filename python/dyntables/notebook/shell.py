"""``dyntables shell``: IPython with ``spark`` and ``dt`` ready and the magics loaded —
the ``pyspark`` shell experience for dynamic tables.

The session is the embedded engine over ``--warehouse`` (``./spark-warehouse``) by
default, a local SparkSession with ``--master``, or Spark Connect with ``--remote``;
``dyntables.install`` is applied to it, so ``spark.sql`` takes the DDL as well as
``%sql``/``%%sql``/``%%dtsql`` do.
"""

from __future__ import annotations

import argparse
from typing import Any

from dyntables.notebook.install import install

BANNER = """dyntables shell: Snowflake-style dynamic tables on {engine}.
  spark   the session (spark.sql accepts CREATE DYNAMIC TABLE ... too)
  dt      its DynamicTables: dt.sql(...), dt.graph(), dt.start() / dt.stop()
  %sql, %%sql, %%dtsql   SQL magics (-o NAME keeps the result; {{var}} substitutes)
"""


def namespace(args: argparse.Namespace) -> dict[str, Any]:
    """``spark`` and ``dt`` for the engine the options ask for, installed."""
    from dyntables.sql_cli import open_tables

    tables = open_tables(args)
    install(tables.session, tables=tables)
    return {"spark": tables.session, "dt": tables}


def describe_engine(args: argparse.Namespace) -> str:
    if args.master is not None:
        return f"Spark (master {args.master})"
    if args.remote is not None:
        return f"Spark Connect ({args.remote})"
    return f"the embedded engine (warehouse {args.warehouse or 'spark-warehouse'})"


def run(args: argparse.Namespace) -> int:
    """Start IPython; its exit status."""
    import IPython  # lazy: only the shell needs it
    from traitlets.config import Config

    user_ns = namespace(args)
    tables = user_ns["dt"]  # IPython clears its namespace on exit
    config = Config()
    config.InteractiveShellApp.extensions = ["dyntables"]
    config.TerminalInteractiveShell.banner2 = BANNER.format(engine=describe_engine(args))
    try:
        IPython.start_ipython(argv=list(args.ipython_args), user_ns=user_ns, config=config)
    finally:
        tables.stop()  # a scheduler started in the shell stops with it
    return 0
