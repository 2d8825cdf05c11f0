"""Errors raised by sparkshim: pyspark's own classes, so code that catches them works
unchanged whether it runs on Spark or on the shim."""

from __future__ import annotations

from pyspark.errors import (
    AnalysisException,
    IllegalArgumentException,
    ParseException,
    SparkUpgradeException,
)

__all__ = [
    "AnalysisException",
    "IllegalArgumentException",
    "ParseException",
    "SparkUpgradeException",
    "UnsupportedSqlError",
]


class UnsupportedSqlError(AnalysisException):
    """Spark SQL the shim cannot run with Spark's exact semantics, so it refuses it
    rather than return a different answer. The message names the construct and, where
    there is one, the way out."""

    def __init__(self, construct: str, hint: str = "") -> None:
        self.construct = construct
        message = f"sparkshim does not support {construct}"
        super().__init__(message=f"{message}: {hint}" if hint else message)
