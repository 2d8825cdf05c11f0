"""``GroupedData``: what ``df.groupBy(...)`` returns; its aggregations are one
``SELECT keys..., aggregates... GROUP BY keys`` over the DataFrame."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.errors import PySparkTypeError
from sqlglot import exp

from sparkshim.column import Column, col

if TYPE_CHECKING:
    from sparkshim.dataframe import DataFrame

__all__ = ["GroupedData"]

# PySpark's names for the aggregates of agg({"column": "function"}) (mean is avg).
_DICT_FUNCTIONS = {"mean": "avg"}


class GroupedData:
    """The rows of a DataFrame grouped by key expressions, waiting for aggregates."""

    def __init__(self, frame: DataFrame, keys: list[exp.Expr]) -> None:
        self._frame = frame
        self._keys = keys

    def agg(self, *exprs: Column | dict[str, str]) -> DataFrame:
        """The keys and one column per aggregate; ``{"x": "max"}`` means ``max(x)``."""
        if len(exprs) == 1 and isinstance(exprs[0], dict):
            aggregates = [
                _call(_DICT_FUNCTIONS.get(function.lower(), function.lower()), name)
                for name, function in exprs[0].items()
            ]
        else:
            aggregates = []
            for expr in exprs:
                if not isinstance(expr, Column):
                    raise PySparkTypeError(
                        error_class="NOT_COLUMN_OR_DICT",
                        message_parameters={"arg_name": "exprs", "arg_type": type(expr).__name__},
                    )
                aggregates.append(expr.expression)
        return self._frame.aggregate(self._keys, aggregates)

    def count(self) -> DataFrame:
        """The keys and ``count``, the number of rows of each group."""
        counted = exp.alias_(exp.func("count", exp.Star()), "count", quoted=True)
        return self._frame.aggregate(self._keys, [counted])

    def sum(self, *cols: str) -> DataFrame:
        return self._each("sum", cols)

    def avg(self, *cols: str) -> DataFrame:
        return self._each("avg", cols)

    mean = avg

    def min(self, *cols: str) -> DataFrame:
        return self._each("min", cols)

    def max(self, *cols: str) -> DataFrame:
        return self._each("max", cols)

    def _each(self, function: str, cols: tuple[str, ...]) -> DataFrame:
        """``function`` of each named column (of every numeric column when none is named)."""
        names = list(cols) or [
            name for name, kind in self._frame.dtypes if kind in _NUMERIC or "decimal" in kind
        ]
        return self._frame.aggregate(self._keys, [_call(function, name) for name in names])


_NUMERIC = {"tinyint", "smallint", "int", "bigint", "float", "double"}


def _call(function: str, name: str) -> exp.Expr:
    argument = exp.Star() if name == "*" else col(name).expression
    return exp.Anonymous(this=function, expressions=[argument])
