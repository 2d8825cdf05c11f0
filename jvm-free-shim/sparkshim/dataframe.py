"""The shim's DataFrame: a materialized Arrow table with PySpark's everyday surface.

The shim executes eagerly, so a DataFrame is a result, not a plan. What it shows the user
(``show()``, ``printSchema()``, ``collect()``, ``repr``) matches PySpark 3.5 byte for byte.

>>> import pyarrow as pa
>>> class Session:
...     time_zone = "UTC"
...     def register_temp_view(self, name, table): pass
>>> df = DataFrame(Session(), pa.table({"id": [1, 2], "name": ["a", None]}))
>>> df
DataFrame[id: bigint, name: string]
>>> df.show()
+---+----+
| id|name|
+---+----+
|  1|   a|
|  2|NULL|
+---+----+
<BLANKLINE>
>>> df.first()
Row(id=1, name='a')
"""

from __future__ import annotations

import datetime
import decimal
import importlib
from collections.abc import Callable
from typing import Any, Protocol, overload

import pyarrow as pa
from pyspark.errors import AnalysisException, PySparkTypeError
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    MapType,
    Row,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from sparkshim.config import EAGER_EVAL_MAX_ROWS_CONF, EAGER_EVAL_TRUNCATE_CONF
from sparkshim.types import (
    format_double,
    format_float,
    normalize_table,
    to_python_converter,
    to_rows,
    to_spark_schema,
)

__all__ = ["DataFrame", "SessionLike"]


class SessionLike(Protocol):
    """What a DataFrame needs from its session."""

    @property
    def time_zone(self) -> str:
        """The session time zone (``spark.sql.session.timeZone``)."""
        ...

    def register_temp_view(self, name: str, table: pa.Table, /) -> None:
        """Make ``table`` queryable as the temporary view ``name``."""
        ...


class DataFrame:
    """A query result held as an Arrow table, with the everyday PySpark DataFrame methods."""

    def __init__(self, session: SessionLike, table: pa.Table) -> None:
        self._session = session
        self._table = normalize_table(table)
        self._schema = to_spark_schema(self._table.schema)

    # ---- schema ----

    @property
    def sparkSession(self) -> SessionLike:  # noqa: N802 - PySpark's name
        return self._session

    @property
    def schema(self) -> StructType:
        """The schema as a pyspark ``StructType``."""
        return self._schema

    @property
    def columns(self) -> list[str]:
        return list(self._schema.names)

    @property
    def dtypes(self) -> list[tuple[str, str]]:
        """Column names with their Spark SQL type names, as PySpark lists them.

        >>> DataFrame(_NoSession(), pa.table({"x": pa.array([1], pa.int32())})).dtypes
        [('x', 'int')]
        """
        return [(f.name, f.dataType.simpleString()) for f in self._schema.fields]

    def printSchema(self, level: int | None = None) -> None:  # noqa: N802 - PySpark's name
        """Print the schema as a tree, as Spark's ``StructType.treeString`` does.

        >>> DataFrame(_NoSession(), pa.table({"a": [[1]]})).printSchema()
        root
         |-- a: array (nullable = true)
         |    |-- element: long (containsNull = true)
        <BLANKLINE>
        """
        print(tree_string(self._schema, level or 0))

    def __repr__(self) -> str:
        return "DataFrame[{}]".format(", ".join(f"{name}: {t}" for name, t in self.dtypes))

    # ---- rows ----

    def collect(self) -> list[Row]:
        """All rows, with the Python values PySpark's ``collect()`` returns (timestamps as
        naive datetimes in this process's local time zone, as PySpark does)."""
        return to_rows(self._table)

    def count(self) -> int:
        return int(self._table.num_rows)

    def isEmpty(self) -> bool:  # noqa: N802 - PySpark's name
        return bool(self._table.num_rows == 0)

    def limit(self, num: int) -> DataFrame:
        if num < 0:
            raise AnalysisException(
                message=f'The limit like expression "{num}" must be equal to or greater than 0,'
                f" but got {num}."
            )
        return DataFrame(self._session, _head(self._table, num))

    def take(self, num: int) -> list[Row]:
        return self.limit(num).collect()

    @overload
    def head(self) -> Row | None: ...

    @overload
    def head(self, n: int) -> list[Row]: ...

    def head(self, n: int | None = None) -> Row | list[Row] | None:
        if n is None:
            return self.first()
        return self.take(n)

    def first(self) -> Row | None:
        rows = self.take(1)
        return rows[0] if rows else None

    def toArrow(self) -> pa.Table:  # noqa: N802 - PySpark's name
        """The data as an Arrow table (in the shim's Arrow types for the Spark schema)."""
        return self._table

    def toPandas(self) -> Any:  # noqa: N802 - PySpark's name
        """The data as a pandas DataFrame, built as PySpark 3.5 builds it without Arrow
        (its default): from the collected rows, each column then given PySpark's dtype."""
        from pyspark.sql.pandas.types import _create_converter_to_pandas

        pd = importlib.import_module("pandas")
        rows = self.collect()
        if rows:
            pdf = pd.DataFrame.from_records(rows, index=range(len(rows)), columns=self.columns)
        else:
            pdf = pd.DataFrame(columns=self.columns)
        if len(pdf.columns) == 0:
            return pdf
        converters = [
            _create_converter_to_pandas(
                field.dataType,
                field.nullable,
                timezone=self._session.time_zone,
                struct_in_pandas="row",
                error_on_duplicated_field_names=False,
                timestamp_utc_localized=False,
            )
            for field in self._schema.fields
        ]
        columns = [
            convert(series) for (_, series), convert in zip(pdf.items(), converters, strict=True)
        ]
        return pd.concat(columns, axis="columns")

    def createOrReplaceTempView(self, name: str) -> None:  # noqa: N802 - PySpark's name
        self._session.register_temp_view(name, self._table)

    # ---- show ----

    def show(self, n: int = 20, truncate: bool | int = True, vertical: bool = False) -> None:
        """Print the first ``n`` rows as Spark's ``Dataset.showString`` does."""
        print(self._show_string(n, truncate, vertical))

    def _repr_html_(self) -> str:
        """The first rows as an HTML table, in the markup PySpark's ``_repr_html_`` gives
        with ``spark.sql.repl.eagerEval.enabled`` (the shim runs eagerly, so always):
        at most ``spark.sql.repl.eagerEval.maxNumRows`` rows (20), cells cut to
        ``spark.sql.repl.eagerEval.truncate`` characters (20).

        >>> frame = DataFrame(_NoSession(), pa.table({"a": [1, 2], "b": ["<x>", None]}))
        >>> print(frame._repr_html_())
        <table border='1'>
        <tr><th>a</th><th>b</th></tr>
        <tr><td>1</td><td>&lt;x&gt;</td></tr>
        <tr><td>2</td><td>NULL</td></tr>
        </table>
        <BLANKLINE>
        """
        import html

        limit = max(_conf_int(self._session, EAGER_EVAL_MAX_ROWS_CONF, 20), 0)
        width = _conf_int(self._session, EAGER_EVAL_TRUNCATE_CONF, 20)
        head = _head(self._table, limit + 1)
        cells = [
            pretty_strings(column, field.dataType, self._session.time_zone)
            for column, field in zip(head.columns, self._schema.fields, strict=True)
        ]
        rows = [list(r) for r in zip(*cells, strict=True)] if cells else [[]] * head.num_rows
        more = len(rows) > limit

        def line(tag: str, values: list[str]) -> str:
            escaped = [html.escape(_truncate(escape_meta_characters(v), width)) for v in values]
            return f"<tr><{tag}>" + f"</{tag}><{tag}>".join(escaped) + f"</{tag}></tr>\n"

        markup = "<table border='1'>\n" + line("th", list(self._schema.names))
        markup += "".join(line("td", row) for row in rows[:limit]) + "</table>\n"
        if more:
            markup += f"only showing top {limit} {'row' if limit == 1 else 'rows'}\n"
        return markup

    def _show_string(self, n: int = 20, truncate: bool | int = True, vertical: bool = False) -> str:
        if not isinstance(n, int) or isinstance(n, bool):
            raise PySparkTypeError(
                error_class="NOT_INT",
                message_parameters={"arg_name": "n", "arg_type": type(n).__name__},
            )
        if not isinstance(vertical, bool):
            raise PySparkTypeError(
                error_class="NOT_BOOL",
                message_parameters={"arg_name": "vertical", "arg_type": type(vertical).__name__},
            )
        if isinstance(truncate, bool) and truncate:
            width = 20
        else:
            try:
                width = int(truncate)
            except ValueError:
                raise PySparkTypeError(
                    error_class="NOT_BOOL",
                    message_parameters={
                        "arg_name": "truncate",
                        "arg_type": type(truncate).__name__,
                    },
                ) from None
        num_rows = max(n, 0)
        head = _head(self._table, num_rows + 1)
        cells = [
            pretty_strings(column, field.dataType, self._session.time_zone)
            for column, field in zip(head.columns, self._schema.fields, strict=True)
        ]
        header = [escape_meta_characters(name) for name in self._schema.names]
        rows = [list(r) for r in zip(*cells, strict=True)] if cells else [[]] * head.num_rows
        data = [[_truncate(escape_meta_characters(cell), width) for cell in row] for row in rows]
        return show_string(header, data, num_rows, width, vertical)


def _conf_int(session: SessionLike, key: str, default: int) -> int:
    conf = getattr(session, "conf", None)
    value = conf.get(key, None) if conf is not None else None
    try:
        return int(value) if value is not None else default
    except ValueError:
        return default


def _head(table: pa.Table, count: int) -> pa.Table:
    # Arrow does not clamp a slice of a table without columns to its length.
    return table.slice(0, min(count, table.num_rows))


class _NoSession:
    """A stand-in session for doctests."""

    time_zone = "UTC"

    def register_temp_view(self, name: str, table: pa.Table, /) -> None:
        del name, table


# ---------------------------------------------------------------------------------------
# Dataset.showString
# ---------------------------------------------------------------------------------------

_MINIMUM_COLUMN_WIDTH = 3


def show_string(
    header: list[str], rows: list[list[str]], num_rows: int, truncate: int, vertical: bool
) -> str:
    """Spark 3.5's ``Dataset.showString`` over cells already rendered, escaped and
    truncated; ``rows`` may hold one row more than ``num_rows``, which means "more data".

    >>> print(show_string(["a"], [["1"], ["2"]], 1, 20, False), end="")
    +---+
    |  a|
    +---+
    |  1|
    +---+
    only showing top 1 row
    """
    has_more = len(rows) > num_rows
    rows = rows[:num_rows]
    lines: list[str] = []
    if not vertical:
        widths = [_MINIMUM_COLUMN_WIDTH] * len(header)
        for row in [header, *rows]:
            for i, cell in enumerate(row):
                widths[i] = max(widths[i], string_half_width(cell))

        def render(row: list[str]) -> str:
            padded = []
            for cell, width in zip(row, widths, strict=True):
                padding = " " * (width - string_half_width(cell))
                padded.append(padding + cell if truncate > 0 else cell + padding)
            return "|" + "|".join(padded) + "|"

        separator = "+" + "+".join("-" * width for width in widths) + "+"
        lines += [separator, render(header), separator]
        lines += [render(row) for row in rows]
        lines.append(separator)
    else:
        name_width = max([_MINIMUM_COLUMN_WIDTH, *map(string_half_width, header)])
        data_width = max(
            [_MINIMUM_COLUMN_WIDTH, *(string_half_width(cell) for row in rows for cell in row)]
        )
        for number, row in enumerate(rows):
            lines.append(_right_pad(f"-RECORD {number}", name_width + data_width + 5, "-"))
            for name, cell in zip(header, row, strict=True):
                name_cell = name + " " * (name_width - string_half_width(name))
                data_cell = cell + " " * (data_width - string_half_width(cell))
                lines.append(f" {name_cell} | {data_cell} ")
    if vertical and not rows:
        lines.append("(0 rows)")
    elif has_more:
        lines.append(f"only showing top {num_rows} {'row' if num_rows == 1 else 'rows'}")
    return "".join(line + "\n" for line in lines)


def _right_pad(text: str, size: int, pad: str) -> str:
    return text + pad * (size - java_length(text))


def _truncate(cell: str, truncate: int) -> str:
    if truncate <= 0 or java_length(cell) <= truncate:
        return cell
    if truncate < 4:
        return _java_substring(cell, truncate)
    return _java_substring(cell, truncate - 3) + "..."


def java_length(text: str) -> int:
    """``String.length()`` in Java: UTF-16 code units (a character beyond the BMP is two).

    >>> java_length("naïve 😀")
    8
    """
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def _java_substring(text: str, units: int) -> str:
    out: list[str] = []
    used = 0
    for ch in text:
        size = 2 if ord(ch) > 0xFFFF else 1
        if used + size > units:
            if used < units:
                # Java keeps the lone high surrogate, which prints as "?".
                out.append("?")
            break
        out.append(ch)
        used += size
    return "".join(out)


# Spark's Utils.fullWidthRegex: characters that take two columns in a terminal.
_FULL_WIDTH_RANGES = (
    (0x1100, 0x115F),
    (0x2E80, 0xA4CF),
    (0xAC00, 0xD7A3),
    (0xF900, 0xFAFF),
    (0xFE10, 0xFE19),
    (0xFE30, 0xFE6F),
    (0xFF00, 0xFF60),
    (0xFFE0, 0xFFE6),
)


def string_half_width(text: str) -> int:
    """Spark's ``Utils.stringHalfWidth``: the Java length plus one per full-width character.

    >>> string_half_width("日本"), string_half_width("ab")
    (4, 2)
    """
    wide = sum(1 for ch in text if any(lo <= ord(ch) <= hi for lo, hi in _FULL_WIDTH_RANGES))
    return java_length(text) + wide


_META_CHARACTERS = str.maketrans(
    {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\f": "\\f", "\b": "\\b", "\v": "\\v", "\a": "\\a"}
)


def escape_meta_characters(text: str) -> str:
    r"""Spark's ``SchemaUtils.escapeMetaCharacters``: control characters that would break
    the table, written as escapes.

    >>> print(escape_meta_characters("a\nb\tc"))
    a\nb\tc
    """
    return text.translate(_META_CHARACTERS)


# ---------------------------------------------------------------------------------------
# ToPrettyString: how show() renders one value
# ---------------------------------------------------------------------------------------

_NULL = "NULL"


def pretty_strings(column: pa.ChunkedArray, spark_type: DataType, time_zone: str) -> list[str]:
    """The cells ``show()`` prints for a column: Spark 3.5's ``ToPrettyString``."""
    render = _pretty_renderer(spark_type)
    values = to_python_converter(spark_type, time_zone)(column)
    return [_NULL if value is None else render(value) for value in values]


def _pretty_renderer(spark_type: DataType) -> Callable[[Any], str]:
    if isinstance(spark_type, BooleanType):
        return lambda v: "true" if v else "false"
    if isinstance(spark_type, DoubleType):
        return format_double
    if isinstance(spark_type, FloatType):
        return format_float
    if isinstance(spark_type, DecimalType):
        return _plain_decimal
    if isinstance(spark_type, BinaryType):
        return lambda v: "[" + " ".join(f"{byte:02X}" for byte in v) + "]"
    if isinstance(spark_type, DateType):
        return _format_date
    if isinstance(spark_type, (TimestampType, TimestampNTZType)):
        return _format_timestamp
    if isinstance(spark_type, ArrayType):
        element = _nullable(_pretty_renderer(spark_type.elementType))
        return lambda v: "[" + ", ".join(map(element, v)) + "]"
    if isinstance(spark_type, MapType):
        key = _pretty_renderer(spark_type.keyType)
        value = _nullable(_pretty_renderer(spark_type.valueType))
        return lambda v: "{" + ", ".join(f"{key(k)} -> {value(x)}" for k, x in v.items()) + "}"
    if isinstance(spark_type, StructType):
        fields = [_nullable(_pretty_renderer(f.dataType)) for f in spark_type.fields]
        return lambda v: (
            "{" + ", ".join(render(x) for render, x in zip(fields, v, strict=True)) + "}"
        )
    return str


def _nullable(render: Callable[[Any], str]) -> Callable[[Any], str]:
    return lambda v: _NULL if v is None else render(v)


def _plain_decimal(value: decimal.Decimal) -> str:
    return format(value, "f")


def _format_date(value: datetime.date) -> str:
    return f"{value.year:04d}-{value.month:02d}-{value.day:02d}"


def _format_timestamp(value: datetime.datetime) -> str:
    text = f"{_format_date(value)} {value.hour:02d}:{value.minute:02d}:{value.second:02d}"
    if value.microsecond:
        text += "." + f"{value.microsecond:06d}".rstrip("0")
    return text


# ---------------------------------------------------------------------------------------
# StructType.treeString
# ---------------------------------------------------------------------------------------


def tree_string(schema: StructType, max_depth: int = 0) -> str:
    """Spark's ``StructType.treeString(maxDepth)``; a depth of 0 or less means all levels.

    >>> from pyspark.sql.types import LongType, StringType
    >>> print(tree_string(StructType([StructField("m", MapType(StringType(), LongType()))])))
    root
     |-- m: map (nullable = true)
     |    |-- key: string
     |    |-- value: long (valueContainsNull = true)
    <BLANKLINE>
    """
    lines = ["root"]
    depth = max_depth if max_depth > 0 else 2**31 - 1
    for field in schema.fields:
        _tree_field(field, " |", lines, depth)
    return "".join(line + "\n" for line in lines)


def _type_name(data_type: DataType) -> str:
    if isinstance(data_type, ArrayType):
        return "array"
    if isinstance(data_type, MapType):
        return "map"
    if isinstance(data_type, StructType):
        return "struct"
    return str(data_type.jsonValue())


def _tree_field(field: StructField, prefix: str, lines: list[str], depth: int) -> None:
    if depth <= 0:
        return
    name = escape_meta_characters(field.name)
    lines.append(
        f"{prefix}-- {name}: {_type_name(field.dataType)} (nullable = {_bool(field.nullable)})"
    )
    _tree_children(field.dataType, prefix + "    |", lines, depth)


def _tree_children(data_type: DataType, prefix: str, lines: list[str], depth: int) -> None:
    depth -= 1
    if depth <= 0:
        return
    if isinstance(data_type, StructType):
        for field in data_type.fields:
            _tree_field(field, prefix, lines, depth)
    elif isinstance(data_type, ArrayType):
        element = data_type.elementType
        lines.append(
            f"{prefix}-- element: {_type_name(element)}"
            f" (containsNull = {_bool(data_type.containsNull)})"
        )
        _tree_children(element, prefix + "    |", lines, depth)
    elif isinstance(data_type, MapType):
        lines.append(f"{prefix}-- key: {_type_name(data_type.keyType)}")
        _tree_children(data_type.keyType, prefix + "    |", lines, depth)
        lines.append(
            f"{prefix}-- value: {_type_name(data_type.valueType)}"
            f" (valueContainsNull = {_bool(data_type.valueContainsNull)})"
        )
        _tree_children(data_type.valueType, prefix + "    |", lines, depth)


def _bool(value: bool) -> str:
    return "true" if value else "false"
