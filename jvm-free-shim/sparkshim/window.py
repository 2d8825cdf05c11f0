"""``Window``: PySpark's window specifications, as the OVER clause of Spark SQL.

>>> from sparkshim.column import col
>>> spec = Window.partitionBy("g").orderBy(col("x").desc())
>>> spec.over(col("n").expression).sql("spark")
'`n` OVER (PARTITION BY `g` ORDER BY `x` DESC)'
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace

from sqlglot import exp

from sparkshim.column import ColumnOrName, column_expressions

__all__ = ["Window", "WindowSpec"]


@dataclass(frozen=True)
class WindowSpec:
    """Partitioning, ordering and frame of a window; each method returns a new spec."""

    partition: tuple[exp.Expr, ...] = ()
    order: tuple[exp.Expr, ...] = ()
    frame: tuple[str, int, int] | None = None  # ("ROWS" | "RANGE", start, end)

    def partitionBy(self, *cols: ColumnOrName | list[ColumnOrName]) -> WindowSpec:  # noqa: N802
        return replace(self, partition=tuple(column_expressions(_flat(cols))))

    def orderBy(self, *cols: ColumnOrName | list[ColumnOrName]) -> WindowSpec:  # noqa: N802
        ordered = []
        for node in column_expressions(_flat(cols)):
            if not isinstance(node, exp.Ordered):
                node = exp.Ordered(this=node, desc=False, nulls_first=True)
            ordered.append(node)
        return replace(self, order=tuple(ordered))

    def rowsBetween(self, start: int, end: int) -> WindowSpec:  # noqa: N802
        return replace(self, frame=("ROWS", start, end))

    def rangeBetween(self, start: int, end: int) -> WindowSpec:  # noqa: N802
        return replace(self, frame=("RANGE", start, end))

    def over(self, function: exp.Expr) -> exp.Window:
        """``function OVER (this spec)``."""
        spec = None
        if self.frame is not None:
            kind, start, end = self.frame
            low, low_side = _bound(start)
            high, high_side = _bound(end)
            spec = exp.WindowSpec(
                kind=kind, start=low, start_side=low_side, end=high, end_side=high_side
            )
        order = exp.Order(expressions=[o.copy() for o in self.order]) if self.order else None
        return exp.Window(
            this=function,
            partition_by=[p.copy() for p in self.partition] or None,
            order=order,
            spec=spec,
        )


def _bound(offset: int) -> tuple[str | exp.Expr, str | None]:
    if offset <= Window.unboundedPreceding:
        return "UNBOUNDED", "PRECEDING"
    if offset >= Window.unboundedFollowing:
        return "UNBOUNDED", "FOLLOWING"
    if offset == 0:
        return "CURRENT ROW", None
    side = "PRECEDING" if offset < 0 else "FOLLOWING"
    return exp.Literal.number(abs(offset)), side


def _flat(cols: tuple[ColumnOrName | list[ColumnOrName], ...]) -> list[ColumnOrName]:
    if len(cols) == 1 and isinstance(cols[0], list):
        return list(cols[0])
    return [c for c in cols if not isinstance(c, list)]


class Window:
    """Builders of window specifications, as PySpark's ``Window``."""

    unboundedPreceding: int = -sys.maxsize - 1  # noqa: N815 - PySpark's name
    unboundedFollowing: int = sys.maxsize  # noqa: N815 - PySpark's name
    currentRow: int = 0  # noqa: N815 - PySpark's name

    @staticmethod
    def partitionBy(*cols: ColumnOrName | list[ColumnOrName]) -> WindowSpec:  # noqa: N802
        return WindowSpec().partitionBy(*cols)

    @staticmethod
    def orderBy(*cols: ColumnOrName | list[ColumnOrName]) -> WindowSpec:  # noqa: N802
        return WindowSpec().orderBy(*cols)

    @staticmethod
    def rowsBetween(start: int, end: int) -> WindowSpec:  # noqa: N802
        return WindowSpec().rowsBetween(start, end)
