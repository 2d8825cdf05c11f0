"""``spark.read``: PySpark's ``DataFrameReader`` on the shim.

Files are read by ``sources.read_files``, the same code that reads ``csv.`path``` in SQL;
Delta paths go through ``session.sql`` as ``SELECT * FROM delta.`path``` (``VERSION AS OF``
for the ``versionAsOf`` option); ``table`` is ``spark.table``. Options Spark knows but the
shim does not honour are refused by name rather than ignored.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = (folder / "people.csv").write_text("name,age\\nann,41\\n")
>>> from sparkshim.session import ShimSession
>>> spark = ShimSession(warehouse=folder / "warehouse")
>>> spark.read.csv(str(folder / "people.csv"), header=True, inferSchema=True).collect()
[Row(name='ann', age=41)]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa
from pyspark.sql.types import StructType
from sqlglot import exp

from sparkshim import sources
from sparkshim.dataframe import DataFrame
from sparkshim.errors import AnalysisException, UnsupportedSqlError
from sparkshim.types import parse_ddl_schema, to_arrow_schema

if TYPE_CHECKING:
    from sparkshim.session import ShimSession

DEFAULT_FORMAT = "parquet"  # spark.sql.sources.default


class DataFrameReader:
    """Reads files and tables into DataFrames: ``spark.read.format(...).option(...).load(p)``."""

    def __init__(self, session: ShimSession) -> None:
        self._session = session
        self._format = DEFAULT_FORMAT
        self._options: dict[str, str] = {}
        self._schema: pa.Schema | None = None

    def format(self, source: str) -> DataFrameReader:
        self._format = source.lower()
        return self

    def option(self, key: str, value: Any) -> DataFrameReader:
        self._options[key.lower()] = _option_text(value)
        return self

    def options(self, **options: Any) -> DataFrameReader:
        for key, value in options.items():
            self.option(key, value)
        return self

    def schema(self, schema: StructType | str) -> DataFrameReader:
        """The columns to read, as a ``StructType`` or a DDL string (``"a INT, b STRING"``)."""
        spark_schema = parse_ddl_schema(schema) if isinstance(schema, str) else schema
        if not isinstance(spark_schema, StructType):
            raise AnalysisException(message="schema() takes a StructType or a DDL string")
        self._schema = to_arrow_schema(spark_schema)
        return self

    def load(
        self,
        path: str | None = None,
        format: str | None = None,  # PySpark's name
        schema: StructType | str | None = None,
        **options: Any,
    ) -> DataFrame:
        if format is not None:
            self.format(format)
        if schema is not None:
            self.schema(schema)
        self.options(**options)
        path = path if path is not None else self._options.pop("path", None)
        if path is None:
            raise AnalysisException(message="load() needs a path: load('/data/folder')")
        if not isinstance(path, str):
            raise UnsupportedSqlError("reading several paths at once", "read each and union them")
        sources.check_options(self._format, self._options)
        source = sources.FileSource(
            self._format, sources.local_path(path), dict(self._options), self._schema
        )
        if source.format == sources.DELTA:
            return self._delta(source)
        return DataFrame(self._session, sources.read_files(source, self._session.time_zone))

    def parquet(self, path: str, **options: Any) -> DataFrame:
        return self.load(path, format="parquet", **options)

    def csv(self, path: str, schema: StructType | str | None = None, **options: Any) -> DataFrame:
        """PySpark's keyword options (``header=True``, ``inferSchema=True``, ``sep=";"``,
        ``nullValue="NA"``); those left None are not set, as in PySpark."""
        given = {key: value for key, value in options.items() if value is not None}
        return self.load(path, format="csv", schema=schema, **given)

    def json(self, path: str, schema: StructType | str | None = None, **options: Any) -> DataFrame:
        given = {key: value for key, value in options.items() if value is not None}
        return self.load(path, format="json", schema=schema, **given)

    def table(self, tableName: str) -> DataFrame:  # noqa: N803  (PySpark's name)
        """``spark.table(tableName)``: the table as a DataFrame whose every action reads it
        again."""
        return self._session.table(tableName)

    def _delta(self, source: sources.FileSource) -> DataFrame:
        """``SELECT * FROM delta.`path``` [``VERSION``/``TIMESTAMP AS OF``], through SQL."""
        if source.schema is not None:
            raise AnalysisException(
                message="a Delta table has its own schema: read it without schema()"
            )
        table = exp.Table(
            this=exp.to_identifier(str(source.path), quoted=True),
            db=exp.to_identifier(sources.DELTA),
        )
        version = source.options.get("versionasof")
        timestamp = source.options.get("timestampasof")
        if version is not None and timestamp is not None:
            raise AnalysisException(
                message="versionAsOf and timestampAsOf both given: give one of them"
            )
        if version is not None:
            table.set("version", _version("VERSION", exp.Literal.number(int(version))))
        elif timestamp is not None:
            table.set("version", _version("TIMESTAMP", exp.Literal.string(timestamp)))
        return self._session.sql(exp.select(exp.Star()).from_(table).sql("spark"))


def _version(kind: str, point: exp.Expr) -> exp.Version:
    return exp.Version(this=exp.var(kind), kind="AS OF", expression=point)


def _option_text(value: Any) -> str:
    """An option's value as Spark reads it: booleans as ``true``/``false``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
