"""Spark's text of a DOUBLE, a FLOAT and a DECIMAL, as DuckDB functions.

DuckDB's text of a number differs from the JVM's where the translation casts one to a
string (``CAST(x AS STRING)``, and a number in ``concat``): a DOUBLE reads ``1e-05``,
``inf``, ``nan`` where Spark gives ``1.0E-5``, ``Infinity``, ``NaN``; a DECIMAL below one
reads ``.5000`` and ``0.0000000001`` where Spark (Java's ``BigDecimal.toString``) gives
``0.5000`` and ``1E-10``. The functions here give the JVM's text; the translation calls
them only for the values whose DuckDB text may differ.

>>> _double_text(pa.array([1e-5, float("inf"), None])).to_pylist()
['1.0E-5', 'Infinity', None]
>>> _decimal_text(pa.array([".5000", "0.0000000001", "-.01"])).to_pylist()
['0.5000', '1E-10', '-0.01']
"""

from __future__ import annotations

import decimal

import duckdb
import pyarrow as pa
from duckdb.func import FunctionNullHandling, PythonUDFType

from sparkshim.types import format_double, format_float

__all__ = ["DECIMAL_TEXT", "DOUBLE_TEXT", "FLOAT_TEXT", "register"]

DOUBLE_TEXT = "sparkshim_double_text"
FLOAT_TEXT = "sparkshim_float_text"
# Takes DuckDB's text of the DECIMAL (a DECIMAL argument would lose its scale).
DECIMAL_TEXT = "sparkshim_decimal_text"


def _double_text(values: pa.Array) -> pa.Array:
    texts = [None if v is None else format_double(v) for v in values.to_pylist()]
    return pa.array(texts, type=pa.string())


def _float_text(values: pa.Array) -> pa.Array:
    texts = [None if v is None else format_float(v) for v in values.to_pylist()]
    return pa.array(texts, type=pa.string())


def _decimal_text(texts: pa.Array) -> pa.Array:
    # Python's str of a Decimal follows the same rule as Java's BigDecimal.toString.
    spark_texts = [None if t is None else str(decimal.Decimal(t)) for t in texts.to_pylist()]
    return pa.array(spark_texts, type=pa.string())


def register(connection: duckdb.DuckDBPyConnection) -> None:
    """Make :data:`DOUBLE_TEXT`, :data:`FLOAT_TEXT` and :data:`DECIMAL_TEXT` callable on
    ``connection``."""
    for name, function, argument in (
        (DOUBLE_TEXT, _double_text, "DOUBLE"),
        (FLOAT_TEXT, _float_text, "FLOAT"),
        (DECIMAL_TEXT, _decimal_text, "VARCHAR"),
    ):
        connection.create_function(
            name,
            function,
            [argument],
            "VARCHAR",
            type=PythonUDFType.ARROW,
            null_handling=FunctionNullHandling.SPECIAL,
            side_effects=False,
        )
