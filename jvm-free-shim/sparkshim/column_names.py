"""Column names as Spark treats them: a table keeps each name as it was written
(``MyId``), and a statement names a column in any case (``myid``, ``MYID``), as Spark
does with ``spark.sql.caseSensitive`` off, its default. Two columns of one table may not
differ only in case."""

from __future__ import annotations

from collections.abc import Sequence

from sparkshim.errors import AnalysisException


def resolve(name: str, columns: Sequence[str]) -> str | None:
    """The column of ``columns`` that ``name`` names (in any case), or None."""
    wanted = name.lower()
    return next((column for column in columns if column.lower() == wanted), None)


def require(name: str, columns: Sequence[str]) -> str:
    """The column of ``columns`` that ``name`` names, or Spark's UNRESOLVED_COLUMN with
    the columns there are."""
    column = resolve(name, columns)
    if column is None:
        suggestion = ", ".join(f"`{candidate}`" for candidate in columns)
        raise AnalysisException(
            message=f"[UNRESOLVED_COLUMN.WITH_SUGGESTION] A column or function parameter with"
            f" name `{name}` cannot be resolved. Did you mean one of the following?"
            f" [{suggestion}]."
        )
    return column


def check_unique(names: Sequence[str]) -> None:
    """Spark's COLUMN_ALREADY_EXISTS where two of ``names`` are one name in another case
    (a table's columns, a column list)."""
    seen: set[str] = set()
    for name in names:
        if name.lower() in seen:
            raise AnalysisException(
                message=f"[COLUMN_ALREADY_EXISTS] The column `{name.lower()}` already exists. "
                "Consider to choose another name or rename the existing column."
            )
        seen.add(name.lower())
