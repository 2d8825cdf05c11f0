"""sparkshim: a JVM-free stand-in for ``SparkSession.sql()`` over Delta tables.

This is the embedded default engine of spark-dynamic-tables. It stores tables as real
Delta tables written with delta-rs, executes queries with DuckDB, and translates Spark
SQL with sqlglot; where it cannot give Spark's exact answer it raises
``UnsupportedSqlError`` instead of a different one.

Modules, in the order a statement flows through them: ``session`` (``ShimSession``) →
``commands`` (one handler per statement kind) → ``translate`` (Spark → DuckDB SQL) and
``query`` (table resolution, DuckDB execution) → ``dml`` (UPDATE/DELETE/MERGE) and
``maintenance`` (OPTIMIZE, VACUUM) → ``delta`` (delta-rs; ``deletion_vectors``, the rows a
Delta table marks deleted) and ``catalog`` (the warehouse folder); ``dataframe`` and
``types`` give results PySpark's shape. ``config`` names the settings read from
``spark.conf``; the command layer knows the session only as
``session_protocol.SessionProtocol``, so imports run one way (session → commands).

>>> import tempfile
>>> from sparkshim import ShimSession
>>> spark = ShimSession(warehouse=tempfile.mkdtemp())
>>> spark.sql("SELECT 1 AS one").collect()
[Row(one=1)]
>>> spark.stop()
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sparkshim.dataframe import DataFrame
    from sparkshim.errors import UnsupportedSqlError
    from sparkshim.session import ShimSession

__all__ = ["DataFrame", "ShimSession", "UnsupportedSqlError"]


def __getattr__(name: str) -> Any:
    """Load the engine on first use, so ``import sparkshim`` stays cheap."""
    if name == "ShimSession":
        from sparkshim.session import ShimSession

        return ShimSession
    if name == "DataFrame":
        from sparkshim.dataframe import DataFrame

        return DataFrame
    if name == "UnsupportedSqlError":
        from sparkshim.errors import UnsupportedSqlError

        return UnsupportedSqlError
    raise AttributeError(f"module 'sparkshim' has no attribute {name!r}")
