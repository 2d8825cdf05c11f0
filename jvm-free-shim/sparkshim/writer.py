"""``DataFrameWriter``: ``df.write``, as Spark SQL statements run by the session.

``saveAsTable`` creates the table (``CREATE TABLE ... USING delta AS <the DataFrame's
query>``), replaces it (``CREATE OR REPLACE TABLE``), or appends to it (``INSERT INTO``,
columns matched by name as Spark matches them); ``insertInto`` inserts by position
(``INSERT INTO`` / ``INSERT OVERWRITE``); ``save(path)`` does what ``saveAsTable`` does to
the Delta table at a path (``delta.`path```). Other formats (``parquet(path)``, ``csv``,
``json``) are refused: only Delta is written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from pyspark.errors import AnalysisException, IllegalArgumentException
from sqlglot import exp

from sparkshim import sources
from sparkshim.catalog import is_delta_table
from sparkshim.errors import UnsupportedSqlError
from sparkshim.translate import ShimSpark

if TYPE_CHECKING:
    from sparkshim.dataframe import DataFrame

__all__ = ["DataFrameWriter"]

_MODES = {
    "append": "append",
    "overwrite": "overwrite",
    "error": "error",
    "errorifexists": "error",
    "default": "error",
    "ignore": "ignore",
}

# Options that change nothing here: overwrite replaces the schema anyway.
_OPTIONS = {"overwriteschema"}


class _Catalog(Protocol):
    def tableExists(self, tableName: str) -> bool: ...  # noqa: N802, N803


class DataFrameWriter:
    """How to write one DataFrame: format, mode, options, partitioning."""

    def __init__(self, frame: DataFrame) -> None:
        self._frame = frame
        self._format = "delta"
        self._mode = "error"
        self._options: dict[str, str] = {}
        self._partitioning: list[str] = []

    def format(self, source: str) -> DataFrameWriter:
        if source.lower() != sources.DELTA:
            raise UnsupportedSqlError(
                f"writing {source} files",
                "sparkshim writes Delta tables only: use format('delta') (the default),"
                " and spark.read.format('delta').load(path) to read them",
            )
        self._format = "delta"
        return self

    def mode(self, saveMode: str | None) -> DataFrameWriter:  # noqa: N803 - PySpark's name
        key = (saveMode or "error").lower()
        if key not in _MODES:
            raise IllegalArgumentException(
                message=f"Unknown save mode: {saveMode}. Accepted save modes are 'overwrite',"
                " 'append', 'ignore', 'error', 'errorifexists', 'default'."
            )
        self._mode = _MODES[key]
        return self

    def option(self, key: str, value: Any) -> DataFrameWriter:
        self._options[key] = str(value).lower() if isinstance(value, bool) else str(value)
        return self

    def options(self, **options: Any) -> DataFrameWriter:
        for key, value in options.items():
            self.option(key, value)
        return self

    def partitionBy(self, *cols: str | list[str]) -> DataFrameWriter:  # noqa: N802
        names = cols[0] if len(cols) == 1 and isinstance(cols[0], list) else cols
        self._partitioning = [name for name in names if isinstance(name, str)]
        return self

    # ---- actions ----

    def saveAsTable(  # noqa: N802 - PySpark's name
        self, name: str, format: str | None = None, mode: str | None = None, **options: Any
    ) -> None:
        self._apply(format, mode, options)
        target = exp.to_table(name, dialect=ShimSpark)
        exists = self._catalog().tableExists(name)
        if exists and self._mode == "error":
            raise AnalysisException(
                message=f"[TABLE_OR_VIEW_ALREADY_EXISTS] Cannot create table or view"
                f" {target.sql(dialect=ShimSpark)} because it already exists. Choose a"
                " different name, drop the existing object, or use mode('append'),"
                " mode('overwrite') or mode('ignore')."
            )
        self._write(target, exists)

    def insertInto(self, tableName: str, overwrite: bool | None = None) -> None:  # noqa: N802, N803
        """The rows into the existing table, matched by position."""
        target = exp.to_table(tableName, dialect=ShimSpark)
        replace = self._mode == "overwrite" if overwrite is None else overwrite
        self._run(self._insert(target, self._frame, overwrite=replace))

    def save(
        self,
        path: str | None = None,
        format: str | None = None,
        mode: str | None = None,
        **options: Any,
    ) -> None:
        """The rows as the Delta table at ``path`` (``delta.`path```), created there, or
        appended to, replaced or left alone by the mode when a Delta table is there."""
        self._apply(format, mode, options)
        if path is None:
            raise AnalysisException(message="save() needs a path: save('/some/dir')")
        location = sources.local_path(path)
        exists = is_delta_table(location)
        if exists and self._mode == "error":
            raise AnalysisException(
                message=f"[DELTA_PATH_EXISTS] Cannot write to already existent path"
                f" {location.as_uri()} without setting OVERWRITE = 'true': use"
                " mode('append'), mode('overwrite') or mode('ignore')."
            )
        target = exp.Table(
            this=exp.to_identifier(str(location), quoted=True),
            db=exp.to_identifier(sources.DELTA),
        )
        self._write(target, exists)

    def parquet(self, path: str, mode: str | None = None, **options: Any) -> None:
        self.format("parquet").save(path, mode=mode, **options)  # refused by format()

    def csv(self, path: str, mode: str | None = None, **options: Any) -> None:
        self.format("csv").save(path, mode=mode, **options)  # refused by format()

    def json(self, path: str, mode: str | None = None, **options: Any) -> None:
        self.format("json").save(path, mode=mode, **options)  # refused by format()

    # ---- the statements ----

    def _write(self, target: exp.Table, exists: bool) -> None:
        """Create ``target``, or (it exists) append to it, replace it or leave it, by the
        mode (``error`` was refused by the caller, with its own message)."""
        if exists and self._mode == "ignore":
            return
        if exists and self._mode == "append":
            current = self._frame.sparkSession.sql(  # type: ignore[attr-defined]
                exp.select(exp.Star()).from_(target.copy()).limit(0).sql(dialect=ShimSpark)
            )
            by_name = self._frame.select(*current.columns)  # Spark appends by name
            self._run(self._insert(target, by_name, overwrite=False))
            return
        self._run(self._create(target, replace=exists))

    def _create(self, target: exp.Table, replace: bool) -> exp.Expr:
        properties: list[exp.Expr] = [exp.FileFormatProperty(this=exp.var("DELTA"))]
        if self._partitioning:
            properties.append(
                exp.PartitionedByProperty(
                    this=exp.Schema(
                        expressions=[exp.to_identifier(n, True) for n in self._partitioning]
                    )
                )
            )
        return exp.Create(
            this=target,
            kind="TABLE",
            replace=replace,
            expression=self._frame.plan.query.copy(),
            properties=exp.Properties(expressions=properties),
        )

    @staticmethod
    def _insert(target: exp.Table, frame: DataFrame, overwrite: bool) -> exp.Expr:
        return exp.Insert(this=target, expression=frame.plan.query.copy(), overwrite=overwrite)

    def _run(self, statement: exp.Expr) -> None:
        unsupported = sorted(key for key in self._options if key.lower() not in _OPTIONS)
        if unsupported:
            raise AnalysisException(
                message=f"sparkshim's writer does not support the option '{unsupported[0]}'"
                " (it would change what is written): leave it out, or write with SQL"
                " (INSERT, MERGE, CREATE TABLE ... AS)"
            )
        self._frame.run_statement(statement)

    def _catalog(self) -> _Catalog:
        catalog: _Catalog = self._frame.sparkSession.catalog  # type: ignore[attr-defined]
        return catalog

    def _apply(self, format: str | None, mode: str | None, options: dict[str, Any]) -> None:
        if format is not None:
            self.format(format)
        if mode is not None:
            self.mode(mode)
        self.options(**options)
