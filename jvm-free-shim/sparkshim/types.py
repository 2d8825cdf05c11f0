"""Spark types and values on Arrow: the one place that knows how the two correspond.

The shim keeps data as Arrow tables and shows it to the user as PySpark would. This module
maps between the two type systems, parses Spark's DDL type strings, turns Arrow values into
the Python values PySpark's ``collect()`` returns, turns ``createDataFrame`` input into Arrow,
and renders floating-point numbers as the JVM does.

>>> import pyarrow as pa
>>> to_spark_type(pa.list_(pa.int32()))
ArrayType(IntegerType(), True)
>>> parse_ddl_type("DECIMAL(10,2)")
Decimal128Type(decimal128(10, 2))
>>> parse_ddl_schema("a INT, b STRING NOT NULL").simpleString()
'struct<a:int,b:string>'
>>> format_double(1e10), format_double(1e-5), format_float(0.1)
('1.0E10', '1.0E-5', '0.1')
"""

from __future__ import annotations

import datetime
import decimal
import importlib
import itertools
import math
import re
import struct
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache, reduce
from typing import Any, cast
from zoneinfo import ZoneInfo

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.errors import AnalysisException, ArithmeticException, ParseException
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    ByteType,
    CharType,
    DataType,
    DateType,
    DayTimeIntervalType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    NullType,
    Row,
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
    VarcharType,
    YearMonthIntervalType,
    _create_converter,
    _create_row,
    _has_nulltype,
    _infer_schema,
    _make_type_verifier,
    _merge_type,
    _parse_datatype_json_string,
)

from sparkshim.errors import UnsupportedSqlError

__all__ = [
    "format_double",
    "format_float",
    "from_python",
    "has_interval_columns",
    "interval_column_alias",
    "normalize_table",
    "parse_ddl_schema",
    "parse_ddl_spark_type",
    "parse_ddl_type",
    "parse_schema_string",
    "to_arrow_schema",
    "to_arrow_type",
    "to_python_converter",
    "to_rows",
    "to_spark_schema",
    "to_spark_type",
    "with_interval_columns",
]

# The name Spark (and delta-rs) give the element field of an Arrow list.
LIST_ELEMENT = "element"

# Arrow's default 38 digits is also Spark's maximum decimal precision.
MAX_DECIMAL_PRECISION = 38


# ----------------------------------------------------------------------------------------
# Arrow -> Spark
# ----------------------------------------------------------------------------------------


def holds_type(kind: pa.DataType, leaf: Callable[[pa.DataType], bool]) -> bool:
    """Whether values of ``kind`` hold a value of a type ``leaf`` accepts, at any depth
    (in a struct's fields, a map's keys and values, a list's elements).

    >>> holds_type(pa.list_(pa.float64()), pa.types.is_floating)
    True
    """
    if leaf(kind):
        return True
    if pa.types.is_struct(kind):
        return any(holds_type(kind.field(index).type, leaf) for index in range(kind.num_fields))
    if pa.types.is_map(kind):
        return holds_type(kind.key_type, leaf) or holds_type(kind.item_type, leaf)
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        return holds_type(kind.value_type, leaf)
    return False


def is_text(kind: pa.DataType) -> bool:
    """Whether ``kind`` is Arrow's text (a Spark STRING)."""
    return bool(pa.types.is_string(kind) or pa.types.is_large_string(kind))


def to_spark_type(arrow_type: pa.DataType) -> DataType:
    """The Spark type of an Arrow type.

    >>> to_spark_type(pa.timestamp("us", tz="UTC")), to_spark_type(pa.timestamp("ns"))
    (TimestampType(), TimestampNTZType())
    >>> to_spark_type(pa.map_(pa.string(), pa.int64()))
    MapType(StringType(), LongType(), True)
    >>> to_spark_type(pa.time64("us"))
    Traceback (most recent call last):
    ...
    sparkshim.errors.UnsupportedSqlError: sparkshim does not support the Arrow type time64[us]...
    """
    t = arrow_type
    simple = _ARROW_TO_SPARK.get(t.id)
    if simple is not None:
        return simple()
    if pa.types.is_decimal128(t):
        dec = cast(pa.Decimal128Type, t)
        return DecimalType(dec.precision, dec.scale)
    if pa.types.is_duration(t):
        return DayTimeIntervalType()  # PySpark's Arrow type of an INTERVAL DAY TO SECOND
    if pa.types.is_timestamp(t):
        return TimestampType() if cast(pa.TimestampType, t).tz else TimestampNTZType()
    if pa.types.is_map(t):
        m = cast(pa.MapType, t)
        return MapType(to_spark_type(m.key_type), to_spark_type(m.item_type), m.item_field.nullable)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        field = cast(pa.ListType, t).value_field
        return ArrayType(to_spark_type(field.type), field.nullable)
    if pa.types.is_struct(t):
        return StructType([_to_spark_field(f) for f in cast(pa.StructType, t)])
    if pa.types.is_dictionary(t):
        return to_spark_type(cast(pa.DictionaryType, t).value_type)
    raise UnsupportedSqlError(
        f"the Arrow type {t}", "Spark has no type for it; cast it to one Spark has"
    )


def to_spark_schema(schema: pa.Schema) -> StructType:
    """The Spark schema of an Arrow schema; nullability comes from the Arrow fields.

    >>> to_spark_schema(pa.schema([pa.field("a", pa.int64(), nullable=False)]))
    StructType([StructField('a', LongType(), False)])
    """
    return StructType([_to_spark_field(f) for f in schema])


def _to_spark_field(field: pa.Field) -> StructField:
    interval = (field.metadata or {}).get(_SPARK_INTERVAL_KEY)
    spark_type = _interval_type(interval.decode()) if interval else to_spark_type(field.type)
    return StructField(field.name, spark_type, field.nullable)


# An ANSI interval result column: DuckDB has one INTERVAL type, so translate.py gives Spark's
# value (months of a year-month interval, microseconds of a day-time one) under a column
# name that carries Spark's type; :func:`with_interval_columns` makes it the Arrow value
# PySpark's conversion expects, its Spark type kept in the field's metadata.
_INTERVAL_MARK = "\u2063spark "
_SPARK_INTERVAL_KEY = b"sparkshim.interval"
_INTERVAL_FIELDS = {"day": 0, "hour": 1, "minute": 2, "second": 3, "year": 0, "month": 1}


def interval_column_alias(name: str, spark_type_name: str) -> str:
    """The DuckDB column name of a result column ``name`` of the Spark interval type
    ``spark_type_name`` (``interval day to second``) holding months or microseconds."""
    return f"{name}{_INTERVAL_MARK}{spark_type_name}"


def has_interval_columns(sql: str) -> bool:
    """Whether the DuckDB query ``sql`` has a column named by :func:`interval_column_alias`."""
    return _INTERVAL_MARK in sql


def with_interval_columns(table: pa.Table) -> pa.Table:
    """``table`` with its :func:`interval_column_alias` columns as Spark's intervals:
    ``duration[us]`` for a day-time interval, ``int32`` months for a year-month one."""
    if not any(_INTERVAL_MARK in name for name in table.column_names):
        return table
    fields, columns = [], []
    for field, column in zip(table.schema, table.columns, strict=True):
        name, _, interval = field.name.partition(_INTERVAL_MARK)
        if interval:
            year_month = "year" in interval or "month" in interval
            target = pa.int32() if year_month else pa.duration("us")
            column = column.cast(pa.int32() if year_month else pa.int64()).cast(target)
            metadata = {_SPARK_INTERVAL_KEY: interval.encode()}
            field = pa.field(name, target, field.nullable, metadata)
        fields.append(field)
        columns.append(column)
    return pa.Table.from_arrays(columns, schema=pa.schema(fields))


def _interval_type(name: str) -> DataType:
    """The Spark type of an interval type's name (``interval year to month``)."""
    units = name.removeprefix("interval ").split(" to ")
    start, end = _INTERVAL_FIELDS[units[0]], _INTERVAL_FIELDS[units[-1]]
    if units[0] in ("year", "month"):
        return YearMonthIntervalType(start, end)
    return DayTimeIntervalType(start, end)


_ARROW_TO_SPARK: dict[int, Callable[[], DataType]] = {
    pa.int8().id: ByteType,
    pa.int16().id: ShortType,
    pa.int32().id: IntegerType,
    pa.int64().id: LongType,
    pa.float32().id: FloatType,
    pa.float64().id: DoubleType,
    pa.string().id: StringType,
    pa.large_string().id: StringType,
    pa.string_view().id: StringType,
    pa.binary().id: BinaryType,
    pa.large_binary().id: BinaryType,
    pa.binary_view().id: BinaryType,  # (delta-rs reads BINARY change feeds as views)
    pa.bool_().id: BooleanType,
    pa.date32().id: DateType,
    pa.null().id: NullType,
}


# ----------------------------------------------------------------------------------------
# Spark -> Arrow
# ----------------------------------------------------------------------------------------


def to_arrow_type(spark_type: DataType) -> pa.DataType:
    """The Arrow type the shim stores a Spark type as.

    TIMESTAMP is an instant, kept in UTC; TIMESTAMP_NTZ is a wall-clock time without a zone.

    >>> to_arrow_type(TimestampType()), to_arrow_type(TimestampNTZType())
    (TimestampType(timestamp[us, tz=UTC]), TimestampType(timestamp[us]))
    >>> to_arrow_type(ArrayType(StringType(), containsNull=False))
    ListType(list<element: string not null>)
    """
    simple = _SPARK_TO_ARROW.get(type(spark_type))
    if simple is not None:
        return simple
    if isinstance(spark_type, DecimalType):
        return pa.decimal128(spark_type.precision, spark_type.scale)
    if isinstance(spark_type, DayTimeIntervalType):
        return pa.duration("us")  # as PySpark: a datetime.timedelta in Python
    if isinstance(spark_type, YearMonthIntervalType):
        return pa.int32()  # as PySpark: the number of months in Python
    if isinstance(spark_type, ArrayType):
        element = _arrow_field(LIST_ELEMENT, spark_type.elementType, spark_type.containsNull)
        return pa.list_(element)
    if isinstance(spark_type, MapType):
        if isinstance(spark_type.keyType, NullType):
            # Arrow's map keys may not be null, and its null type is always nullable.
            raise UnsupportedSqlError("a map with keys of type void, such as map()")
        key = _arrow_field("key", spark_type.keyType, nullable=False)
        value = _arrow_field("value", spark_type.valueType, spark_type.valueContainsNull)
        return pa.map_(key, value)
    if isinstance(spark_type, StructType):
        return pa.struct([_to_arrow_field(f) for f in spark_type.fields])
    raise UnsupportedSqlError(f"the Spark type {spark_type.simpleString()}")


def to_arrow_schema(schema: StructType) -> pa.Schema:
    """The Arrow schema the shim stores a Spark schema as.

    >>> to_arrow_schema(parse_ddl_schema("a INT NOT NULL, b STRING"))
    a: int32 not null
    b: string
    """
    return pa.schema([_to_arrow_field(f) for f in schema.fields])


def _to_arrow_field(field: StructField) -> pa.Field:
    return _arrow_field(field.name, field.dataType, field.nullable)


def _arrow_field(name: str, spark_type: DataType, nullable: bool) -> pa.Field:
    # Arrow has no non-nullable field of its null type (Spark's `array()` is array<void>
    # without nulls), so such a field becomes nullable.
    nullable = nullable or isinstance(spark_type, NullType)
    if isinstance(spark_type, (DayTimeIntervalType, YearMonthIntervalType)):
        metadata = {_SPARK_INTERVAL_KEY: spark_type.simpleString().encode()}
        return pa.field(name, to_arrow_type(spark_type), nullable, metadata)
    return pa.field(name, to_arrow_type(spark_type), nullable)


_SPARK_TO_ARROW: dict[type[DataType], pa.DataType] = {
    ByteType: pa.int8(),
    ShortType: pa.int16(),
    IntegerType: pa.int32(),
    LongType: pa.int64(),
    FloatType: pa.float32(),
    DoubleType: pa.float64(),
    StringType: pa.string(),
    CharType: pa.string(),
    VarcharType: pa.string(),
    BinaryType: pa.binary(),
    BooleanType: pa.bool_(),
    DateType: pa.date32(),
    TimestampType: pa.timestamp("us", tz="UTC"),
    TimestampNTZType: pa.timestamp("us"),
    NullType: pa.null(),
}


def normalize_table(table: pa.Table) -> pa.Table:
    """``table`` cast to the Arrow types the shim uses for its Spark schema.

    Large and view strings become strings, timestamps become microseconds (nanoseconds are
    truncated, as Spark does) in UTC, dictionaries are decoded, list elements are named
    ``element``. A table already in that form is returned as it is.

    >>> t = pa.table({"s": pa.array(["x"], pa.large_string())})
    >>> normalize_table(t).schema
    s: string
    """
    target = to_arrow_schema(to_spark_schema(table.schema))
    if table.schema.equals(target):
        return table
    columns = [
        _cast_column(column, field.type)
        for column, field in zip(table.columns, target, strict=True)
    ]
    return pa.Table.from_arrays(columns, schema=target)


def _cast_column(column: pa.ChunkedArray, target: pa.DataType) -> pa.ChunkedArray:
    if column.type.equals(target):
        return column
    return pc.cast(column, target, safe=False)


# ----------------------------------------------------------------------------------------
# Spark DDL type strings
# ----------------------------------------------------------------------------------------


def align_to_schema(rows: pa.Table, columns: list[str], schema: pa.Schema) -> pa.Table:
    """``rows`` as a table of ``schema``: its columns named ``columns`` (by position), the
    schema's other columns NULL, cast with Spark's store-assignment rules (overflow is an
    error, not a silent wrap or NULL)."""
    by_name = dict(zip(columns, rows.columns, strict=True))
    arrays = []
    for field in schema:
        if field.name not in by_name:
            arrays.append(pa.nulls(rows.num_rows, field.type))
            continue
        try:
            arrays.append(_store_assigned(by_name[field.name], field.type))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as failure:
            spark_type = to_spark_type(field.type).simpleString()
            if "does not fit in precision" in str(failure):
                given = to_spark_type(by_name[field.name].type).simpleString().upper()
                raise ArithmeticException(
                    message=f'[CAST_OVERFLOW_IN_TABLE_INSERT] Fail to insert a value of "{given}"'
                    f' type into the "{spark_type.upper()}" type column `{field.name}` due to an'
                    " overflow. Use `try_cast` on the input value to tolerate overflow and"
                    " return NULL instead."
                ) from failure
            raise AnalysisException(
                message=f"Cannot write to column `{field.name}` ({spark_type}): {failure}"
            ) from failure
    return pa.Table.from_arrays(arrays, schema=schema)


def _store_assigned(values: pa.ChunkedArray, target: pa.DataType) -> pa.ChunkedArray:
    """``values`` cast to a column of type ``target`` as Spark's store assignment casts:
    an integer or a DECIMAL of more digits goes into a DECIMAL when each value fits (Arrow
    checks the types' digits, not the values: an INT refused for DECIMAL(8, 2)), a
    DECIMAL of a larger scale is rounded half away from zero (1.555 is stored as 1.56), and
    a DECIMAL and a DOUBLE pass into each other's columns by their decimal text (the
    literal 2.675 is the double nearest 2.675)."""
    source = values.type
    if pa.types.is_floating(target) and pa.types.is_decimal(source):
        return _decimals_as_floats(values, target)
    if pa.types.is_decimal(target) and target.precision <= 38:
        if pa.types.is_floating(source):
            values = _floats_as_decimals(values, target.scale)
        elif pa.types.is_integer(source) and 19 + target.scale <= 38:
            values = values.cast(pa.decimal128(19 + target.scale, target.scale), safe=True)
        elif pa.types.is_decimal(source) and source.scale > target.scale:
            values = pc.round(values, ndigits=target.scale, round_mode="half_towards_infinity")
    return values.cast(target, safe=True)


def _decimals_as_floats(values: pa.ChunkedArray, target: pa.DataType) -> pa.ChunkedArray:
    """DECIMAL ``values`` as the nearest FLOAT/DOUBLE of each, as Spark's cast gives: read
    from their decimal text, since Arrow's direct cast scales by an inexact power of ten
    (2.675 became 2.6750000000000003, and an equality with the literal 2.675 missed)."""
    return values.cast(pa.string()).cast(target)


def _floats_as_decimals(values: pa.ChunkedArray, scale: int) -> pa.ChunkedArray:
    """FLOAT/DOUBLE ``values`` as DECIMAL(38, ``scale``), each read from its shortest text
    and rounded half up, as Spark reads a double as a decimal (123456789.12345679 is
    123456789.1234567900 at scale 10, where Arrow's cast rounds the binary value's exact
    expansion, 123456789.1234567910...). Values with no such decimal (NaN, infinities, more
    than 38 digits) leave all to Arrow's cast, which refuses them."""
    unit = decimal.Decimal(1).scaleb(-scale)
    limit = decimal.Decimal(10) ** (38 - scale)
    decimals: list[decimal.Decimal | None] = []
    for value in values.cast(pa.float64()).to_pylist():
        if value is None:
            decimals.append(None)
            continue
        if not math.isfinite(value) or abs(value) >= limit:
            return values
        decimals.append(decimal.Decimal(repr(value)).quantize(unit, decimal.ROUND_HALF_UP))
    return pa.chunked_array([pa.array(decimals, pa.decimal128(38, scale))])


def parse_ddl_type(type_sql: str) -> pa.DataType:
    """The Arrow type of a Spark DDL type, as written in a CREATE TABLE column list.

    >>> parse_ddl_type("STRUCT<a: INT, b STRING>")
    StructType(struct<a: int32, b: string>)
    >>> parse_ddl_type("map<string, array<bigint>>")
    MapType(map<string, list<element: int64>>)
    """
    return to_arrow_type(parse_ddl_spark_type(type_sql))


def parse_ddl_spark_type(type_sql: str) -> DataType:
    """The Spark type of a DDL type string (``INT``, ``DECIMAL(10,2)``, ``ARRAY<STRING>``...).

    CHAR(n) and VARCHAR(n) are strings, as in a Spark DataFrame's schema.

    >>> parse_ddl_spark_type("DEC"), parse_ddl_spark_type("varchar(10)")
    (DecimalType(10,0), StringType())
    >>> parse_ddl_spark_type("blob")
    Traceback (most recent call last):
    ...
    pyspark.errors.exceptions.base.ParseException: [UNSUPPORTED_DATATYPE] ...
    """
    parser = _DdlParser(type_sql)
    result = parser.data_type()
    parser.expect_end()
    return result


def parse_ddl_schema(schema_sql: str) -> StructType:
    """The Spark schema of a DDL column list: ``a INT, b STRING NOT NULL COMMENT 'x'``.

    A colon may separate a name from its type (``a: int``), as PySpark allows.

    >>> parse_ddl_schema("`my col`: bigint, b array<int>").simpleString()
    'struct<my col:bigint,b:array<int>>'
    """
    parser = _DdlParser(schema_sql)
    if parser.peek() is None:
        return StructType([])
    fields = parser.column_list()
    parser.expect_end()
    return StructType(fields)


def parse_schema_string(text: str) -> DataType:
    """What PySpark makes of a schema string passed to ``createDataFrame``: a column list
    (``a INT, b STRING``) if it is one, otherwise a single data type (``int``).

    >>> parse_schema_string("int"), parse_schema_string("a int")
    (IntegerType(), StructType([StructField('a', IntegerType(), True)]))
    """
    try:
        return parse_ddl_schema(text)
    except ParseException as as_schema:
        try:
            return parse_ddl_spark_type(text)
        except ParseException:
            raise as_schema from None


_TOKEN = re.compile(
    r"""\s*(?:
        (?P<quoted>`(?:[^`]|``)*`)
      | (?P<string>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
      | (?P<number>\d+)
      | (?P<word>[A-Za-z_][A-Za-z_0-9]*)
      | (?P<punct>[<>(),:])
    )""",
    re.VERBOSE,
)


@dataclass(frozen=True)
class _Token:
    kind: str
    text: str
    position: int


def _tokenize(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    position = 0
    while True:
        while position < len(text) and text[position].isspace():
            position += 1
        if position == len(text):
            return tokens
        match = _TOKEN.match(text, position)
        if match is None or match.lastgroup is None:
            raise _parse_error(text, position, f"unexpected character {text[position]!r}")
        kind = match.lastgroup
        tokens.append(_Token(kind, match.group(kind), match.start(kind)))
        position = match.end()


def _parse_error(text: str, position: int, reason: str) -> ParseException:
    return ParseException(message=f"{reason} at position {position} in {text!r}")


# Spark 3.5's primitive type names (AstBuilder.visitPrimitiveDataType), without length.
_PRIMITIVES: dict[str, Callable[[], DataType]] = {
    "BOOLEAN": BooleanType,
    "TINYINT": ByteType,
    "BYTE": ByteType,
    "SMALLINT": ShortType,
    "SHORT": ShortType,
    "INT": IntegerType,
    "INTEGER": IntegerType,
    "BIGINT": LongType,
    "LONG": LongType,
    "FLOAT": FloatType,
    "REAL": FloatType,
    "DOUBLE": DoubleType,
    "DATE": DateType,
    "TIMESTAMP": TimestampType,
    "TIMESTAMP_LTZ": TimestampType,
    "TIMESTAMP_NTZ": TimestampNTZType,
    "STRING": StringType,
    "BINARY": BinaryType,
    "VOID": NullType,
}
_DECIMALS = {"DECIMAL", "DEC", "NUMERIC"}
_CHARS = {"CHAR", "CHARACTER", "VARCHAR"}
_KNOWN_UNSUPPORTED = {"INTERVAL"}


class _DdlParser:
    """Recursive descent over Spark's ``dataType`` and ``colTypeList`` rules."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokenize(text)
        self.index = 0

    # -- token helpers -------------------------------------------------------------------

    def peek(self) -> _Token | None:
        return self.tokens[self.index] if self.index < len(self.tokens) else None

    def error(self, reason: str) -> ParseException:
        token = self.peek()
        position = token.position if token else len(self.text)
        found = f"{token.text!r}" if token else "end of input"
        return _parse_error(self.text, position, f"{reason}, found {found}")

    def next(self, what: str) -> _Token:
        token = self.peek()
        if token is None:
            raise self.error(f"expected {what}")
        self.index += 1
        return token

    def accept(self, text: str) -> bool:
        token = self.peek()
        if token is not None and token.kind != "quoted" and token.text.upper() == text:
            self.index += 1
            return True
        return False

    def expect(self, text: str) -> None:
        if not self.accept(text):
            raise self.error(f"expected {text!r}")

    def expect_end(self) -> None:
        if self.peek() is not None:
            raise self.error("expected the end of the type")

    def integer(self) -> int:
        token = self.peek()
        if token is None or token.kind != "number":
            raise self.error("expected a number")
        self.index += 1
        return int(token.text)

    def identifier(self) -> str:
        token = self.next("a column name")
        if token.kind == "quoted":
            return token.text[1:-1].replace("``", "`")
        if token.kind in ("word", "number"):
            return token.text
        raise _parse_error(
            self.text, token.position, f"expected a column name, found {token.text!r}"
        )

    # -- grammar ---------------------------------------------------------------------------

    def column_list(self) -> list[StructField]:
        fields = [self.column()]
        while self.accept(","):
            fields.append(self.column())
        return fields

    def column(self) -> StructField:
        name = self.identifier()
        self.accept(":")
        data_type = self.data_type()
        nullable = True
        metadata: dict[str, Any] = {}
        while True:
            if self.accept("NOT"):
                self.expect("NULL")
                nullable = False
            elif self.accept("COMMENT"):
                token = self.next("a comment string")
                if token.kind != "string":
                    raise _parse_error(self.text, token.position, "expected a comment string")
                metadata["comment"] = _unquote(token.text)
            else:
                return StructField(name, data_type, nullable, metadata or None)

    def data_type(self) -> DataType:
        token = self.next("a data type")
        name = token.text.upper()
        if token.kind != "word":
            raise _parse_error(
                self.text, token.position, f"expected a data type, found {token.text!r}"
            )
        if name == "ARRAY":
            self.expect("<")
            element = self.data_type()
            self.expect(">")
            return ArrayType(element, containsNull=True)
        if name == "MAP":
            self.expect("<")
            key = self.data_type()
            self.expect(",")
            value = self.data_type()
            self.expect(">")
            return MapType(key, value, valueContainsNull=True)
        if name == "STRUCT":
            self.expect("<")
            fields: list[StructField] = []
            if not self.accept(">"):
                fields = self.column_list()
                self.expect(">")
            return StructType(fields)
        if name in _DECIMALS:
            precision, scale = 10, 0
            if self.accept("("):
                precision = self.integer()
                if self.accept(","):
                    scale = self.integer()
                self.expect(")")
            if not 0 < precision <= MAX_DECIMAL_PRECISION or scale > precision:
                raise _parse_error(
                    self.text,
                    token.position,
                    f"[DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION] DECIMAL({precision},{scale}) is"
                    f" not valid: the precision must be 1 to {MAX_DECIMAL_PRECISION} and at"
                    " least the scale",
                )
            return DecimalType(precision, scale)
        if name in _CHARS:
            self.expect("(")
            self.integer()
            self.expect(")")
            return StringType()
        primitive = _PRIMITIVES.get(name)
        if primitive is not None:
            return primitive()
        if name in _KNOWN_UNSUPPORTED:
            raise UnsupportedSqlError(f"the {name} data type")
        raise _parse_error(
            self.text, token.position, f'[UNSUPPORTED_DATATYPE] Unsupported data type "{name}"'
        )


def _unquote(literal: str) -> str:
    body = literal[1:-1]
    return re.sub(r"\\(.)", r"\1", body)


# ----------------------------------------------------------------------------------------
# Arrow values -> the Python values of PySpark's collect()
# ----------------------------------------------------------------------------------------


def to_rows(table: pa.Table, time_zone: str | None = None) -> list[Row]:
    """The rows PySpark's ``collect()`` returns for the same data.

    TIMESTAMP values become naive datetimes in ``time_zone``; ``None`` means the Python
    process's local time zone, which is what PySpark's ``collect()`` uses.

    >>> t = pa.table({"a": [1, None], "s": [{"x": b"\\x01"}, None]})
    >>> to_rows(t)
    [Row(a=1, s=Row(x=bytearray(b'\\x01'))), Row(a=None, s=None)]
    """
    table = normalize_table(table)
    schema = to_spark_schema(table.schema)
    columns = [
        to_python_converter(field.dataType, time_zone)(column)
        for column, field in zip(table.columns, schema.fields, strict=True)
    ]
    names = schema.names
    if not columns:
        return [_create_row(names, ()) for _ in range(table.num_rows)]
    return [_create_row(names, values) for values in zip(*columns, strict=True)]


def to_python_converter(
    spark_type: DataType, time_zone: str | None = None
) -> Callable[[pa.ChunkedArray | pa.Array], list[Any]]:
    """A function from an Arrow column (of the shim's Arrow type for ``spark_type``) to the
    Python values PySpark returns for it: ``bytearray`` for binary, ``Row`` for a struct,
    ``dict`` for a map, naive datetimes for timestamps (see ``to_rows``)."""

    def convert(column: pa.ChunkedArray | pa.Array) -> list[Any]:
        array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
        return _array_to_python(array, spark_type, time_zone)

    return convert


def _array_to_python(array: pa.Array, spark_type: DataType, time_zone: str | None) -> list[Any]:
    if isinstance(spark_type, StructType):
        children = [
            _array_to_python(child, field.dataType, time_zone)
            for child, field in zip(
                cast(pa.StructArray, array).flatten(), spark_type.fields, strict=True
            )
        ]
        names = spark_type.names
        valid = array.is_valid().to_pylist()
        if not children:
            return [_create_row(names, ()) if ok else None for ok in valid]
        return [
            _create_row(names, values) if ok else None
            for ok, values in zip(valid, zip(*children, strict=True), strict=True)
        ]
    if isinstance(spark_type, ArrayType):
        lists = cast(pa.ListArray, array)
        elements = _array_to_python(lists.flatten(), spark_type.elementType, time_zone)
        return _split(elements, lists.value_lengths().to_pylist())
    if isinstance(spark_type, MapType):
        # MapArray has no flatten(); its offsets (unlike keys and items) honour slicing.
        maps = cast(pa.MapArray, array)
        offsets: list[int] = maps.offsets.to_pylist()
        start, end = offsets[0], offsets[-1]
        keys = _array_to_python(maps.keys.slice(start, end - start), spark_type.keyType, time_zone)
        items = _array_to_python(
            maps.items.slice(start, end - start), spark_type.valueType, time_zone
        )
        valid = maps.is_valid().to_pylist()
        return [
            dict(zip(keys[lo - start : hi - start], items[lo - start : hi - start], strict=True))
            if ok
            else None
            for ok, lo, hi in zip(valid, offsets, offsets[1:], strict=False)
        ]
    values: list[Any] = array.to_pylist()
    if isinstance(spark_type, BinaryType):
        return [None if v is None else bytearray(v) for v in values]
    if isinstance(spark_type, TimestampType):
        return [None if v is None else local_wall_clock(v, time_zone) for v in values]
    return values


def _split(flat: list[Any], lengths: list[int | None]) -> list[list[Any] | None]:
    out: list[list[Any] | None] = []
    position = 0
    for length in lengths:
        if length is None:
            out.append(None)
        else:
            out.append(flat[position : position + length])
            position += length
    return out


def local_wall_clock(instant: datetime.datetime, time_zone: str | None) -> datetime.datetime:
    """``instant`` as the naive wall-clock time PySpark's ``collect()`` gives (in
    ``time_zone``; None: this process's)."""
    zone = ZoneInfo(time_zone) if time_zone else None
    return instant.astimezone(zone).replace(tzinfo=None)


# ----------------------------------------------------------------------------------------
# createDataFrame input -> Arrow
# ----------------------------------------------------------------------------------------

SchemaArg = DataType | str | Sequence[str] | None


def from_python(data: Any, schema: SchemaArg = None, *, time_zone: str | None = None) -> pa.Table:
    """The Arrow table ``SparkSession.createDataFrame(data, schema)`` would hold.

    ``data`` is a list of tuples, lists, dicts or Rows, a pandas DataFrame or an Arrow
    table. ``schema`` is None (inferred as PySpark infers it), a list of column names, a
    DDL string (``"a INT, b STRING"``) or a Spark type. ``time_zone`` is the session time
    zone, used as PySpark uses it for pandas timestamps; ``None`` means the local one.

    >>> from_python([(1, "a")], ["n", "s"]).schema
    n: int64
    s: string
    >>> from_python([{"x": 1.5}]).column("x").to_pylist()
    [1.5]
    """
    resolved: DataType | list[str] | None
    if isinstance(schema, str):
        resolved = parse_schema_string(schema)
    elif isinstance(schema, DataType) or schema is None:
        resolved = schema
    else:
        resolved = [str(name) for name in schema]
    if isinstance(data, pa.Table):
        return _from_arrow(data, resolved)
    pandas = sys.modules.get("pandas")
    if pandas is not None and isinstance(data, pandas.DataFrame):
        if resolved is None:
            resolved = [str(c) for c in data.columns]
        data = _records_from_pandas(data, resolved, time_zone)
    return _from_records(data, resolved)


def _from_arrow(table: pa.Table, schema: DataType | list[str] | None) -> pa.Table:
    if schema is None:
        return normalize_table(table)
    if isinstance(schema, list):
        return normalize_table(table.rename_columns(schema))
    struct_type = _as_struct(schema)
    target = to_arrow_schema(struct_type)
    columns = [
        _cast_column(column, field.type)
        for column, field in zip(table.columns, target, strict=True)
    ]
    return pa.Table.from_arrays(columns, schema=target)


def _as_struct(schema: DataType) -> StructType:
    if isinstance(schema, StructType):
        return schema
    return StructType([StructField("value", schema, True)])


@lru_cache(maxsize=256)
def _type_verifier(schema_json: str, name: str | None) -> Callable[[Any], None]:
    """PySpark's check of a row against a schema (by its JSON), made once per schema:
    making it takes milliseconds for a schema of a dozen columns, and a dynamic table's
    refresh history gets a row of the same schema after every refresh."""
    return _make_type_verifier(_parse_datatype_json_string(schema_json), name=name)


def _from_records(data: Iterable[Any], schema: DataType | list[str] | None) -> pa.Table:
    # PySpark 3.5's _create_dataframe and _createFromLocal, with Arrow at the end instead
    # of the JVM: verify against the schema, infer it if not given, then toInternal.
    from pyspark.errors import PySparkTypeError, PySparkValueError

    rows = list(data)
    if schema is None or isinstance(schema, list):
        if not rows:
            raise PySparkValueError(error_class="CANNOT_INFER_EMPTY_SCHEMA", message_parameters={})
        struct_type = _infer_struct(rows, schema)
        converter = _create_converter(struct_type)
        tupled: Iterable[Any] = [converter(row) for row in rows]
        if isinstance(schema, list):
            for i, name in enumerate(schema):
                struct_type.fields[i].name = name
                struct_type.names[i] = name
    elif isinstance(schema, StructType):
        struct_type = schema
        verify = _type_verifier(schema.json(), None)
        for row in rows:
            verify(row)
        tupled = rows
    elif isinstance(schema, DataType):
        struct_type = _as_struct(schema)
        verify = _type_verifier(schema.json(), "field value")
        for row in rows:
            verify(row)
        tupled = [(row,) for row in rows]
    else:
        raise PySparkTypeError(
            error_class="NOT_LIST_OR_NONE_OR_STRUCT",
            message_parameters={"arg_name": "schema", "arg_type": type(schema).__name__},
        )
    arrow_schema = to_arrow_schema(struct_type)
    internal = [struct_type.toInternal(row) for row in tupled]
    arrays = []
    for i, field in enumerate(struct_type.fields):
        fix = _jvm_coercion(field.dataType)
        values = [row[i] for row in internal]
        if fix is not None:
            values = [None if v is None else fix(v) for v in values]
        arrays.append(pa.array(values, type=arrow_schema.field(i).type))
    return pa.Table.from_arrays(arrays, schema=arrow_schema)


def _infer_struct(rows: list[Any], names: list[str] | None) -> StructType:
    """PySpark 3.5's ``_inferSchemaFromList`` with the default session settings."""
    from pyspark.errors import PySparkValueError

    inferred = (_infer_schema(row, names) for row in rows)
    struct_type: StructType = reduce(_merge_type, inferred)
    if _has_nulltype(struct_type):
        raise PySparkValueError(error_class="CANNOT_DETERMINE_TYPE", message_parameters={})
    return struct_type


def _jvm_coercion(spark_type: DataType) -> Callable[[Any], Any] | None:
    """What the JVM does to an internal Python value on the way in, where it is more than
    storing it: decimals are rounded HALF_UP to the scale (and fail when too wide), and any
    value given for a string becomes its Java ``toString``."""
    if isinstance(spark_type, DecimalType):
        return _decimal_coercion(spark_type)
    if isinstance(spark_type, (StringType, CharType, VarcharType)):
        return _java_to_string
    if isinstance(spark_type, ArrayType):
        element = _jvm_coercion(spark_type.elementType)
        if element is None:
            return None
        fix_element = element
        return lambda values: [None if v is None else fix_element(v) for v in values]
    if isinstance(spark_type, MapType):
        key = _jvm_coercion(spark_type.keyType) or _identity
        value = _jvm_coercion(spark_type.valueType) or _identity
        if key is _identity and value is _identity:
            return None
        return lambda m: {key(k): None if v is None else value(v) for k, v in m.items()}
    if isinstance(spark_type, StructType):
        fixes = [_jvm_coercion(f.dataType) for f in spark_type.fields]
        if all(f is None for f in fixes):
            return None
        return lambda row: tuple(
            v if f is None or v is None else f(v) for f, v in zip(fixes, row, strict=True)
        )
    return None


def _identity(value: Any) -> Any:
    return value


def _decimal_coercion(spark_type: DecimalType) -> Callable[[Any], Any]:
    quantum = decimal.Decimal(1).scaleb(-spark_type.scale)
    context = decimal.Context(prec=MAX_DECIMAL_PRECISION * 2, rounding=decimal.ROUND_HALF_UP)

    def coerce(value: decimal.Decimal) -> decimal.Decimal:
        rounded = value.quantize(quantum, context=context)
        digits = len(rounded.as_tuple().digits)
        if digits > spark_type.precision and rounded != 0:
            raise ArithmeticException(
                message=f"[DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION] Decimal precision {digits}"
                f" exceeds max precision {spark_type.precision}."
            )
        return rounded

    return coerce


def _java_to_string(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return format_double(value)
    raise UnsupportedSqlError(
        f"a Python {type(value).__name__} given for a STRING column",
        "pass a str (Spark would store the Java toString() of the object)",
    )


def _records_from_pandas(
    pdf: Any, schema: DataType | list[str], time_zone: str | None
) -> list[Any]:
    """PySpark 3.5's ``_convert_from_pandas`` (the path without Arrow, Spark's default)."""
    from pyspark.sql.pandas.types import (
        _check_series_convert_timestamps_tz_local,
        _get_local_timezone,
    )

    pd = importlib.import_module("pandas")
    np = importlib.import_module("numpy")
    zone = time_zone or _get_local_timezone()

    if isinstance(schema, StructType):
        if len(pdf.columns) > 0:
            converted = []
            for (_, series), field in zip(pdf.items(), schema.fields, strict=False):
                if isinstance(field.dataType, TimestampType):
                    converted.append(_check_series_convert_timestamps_tz_local(series, zone))
                else:
                    nested = _pandas_nested_timestamps(field.dataType, zone)
                    converted.append(series if nested is None else series.apply(nested))
            pdf = pd.concat(converted, axis="columns")
    else:
        pdf = pdf.copy()
        for column, series in pdf.items():
            if isinstance(series.dtype, pd.DatetimeTZDtype):
                pdf[column] = _check_series_convert_timestamps_tz_local(series, zone)
    for column, series in pdf.items():
        if pd.api.types.is_timedelta64_dtype(series):
            pdf[column] = pd.Series(
                series.dt.to_pytimedelta(), index=series.index, dtype="object", name=series.name
            )

    records = pdf.set_axis([f"col_{i}" for i in range(len(pdf.columns))], axis="columns")
    records = records.to_records(index=False)
    # Nanosecond datetimes would come out of tolist() as integers: make them microseconds.
    nanos = np.dtype("datetime64[ns]")
    fields = records.dtype
    if len(records) > 0 and any(fields[i] == nanos for i in range(len(fields))):
        micros = [
            (name, "datetime64[us]" if fields[i] == nanos else fields[i])
            for i, name in enumerate(fields.names)
        ]
        return [r.astype(np.dtype(micros)).tolist() for r in records]
    return [r.tolist() for r in records]


def _pandas_nested_timestamps(spark_type: DataType, zone: str) -> Callable[[Any], Any] | None:
    """Timestamps inside arrays, maps and structs of a pandas object column, read as wall
    clock times in the session time zone (PySpark's ``_convert_from_pandas._converter``)."""
    from pyspark.sql.pandas.types import _get_local_timezone

    if isinstance(spark_type, TimestampType):
        pd = importlib.import_module("pandas")
        local = _get_local_timezone()
        return lambda v: (
            pd.Timestamp(v)
            .tz_localize(zone, ambiguous=False)
            .tz_convert(local)
            .tz_localize(None)
            .to_pydatetime()
        )
    if isinstance(spark_type, ArrayType):
        element = _pandas_nested_timestamps(spark_type.elementType, zone) or _identity
        return lambda v: None if v is None else [element(x) for x in v]
    if isinstance(spark_type, MapType):
        key = _pandas_nested_timestamps(spark_type.keyType, zone) or _identity
        value = _pandas_nested_timestamps(spark_type.valueType, zone) or _identity
        return lambda v: None if v is None else {key(k): value(x) for k, x in v.items()}
    if isinstance(spark_type, StructType):
        names = spark_type.names
        fields = [
            _pandas_nested_timestamps(f.dataType, zone) or _identity for f in spark_type.fields
        ]

        def convert_struct(v: Any) -> Any:
            if v is None:
                return None
            items = [v.get(n) for n in names] if isinstance(v, Mapping) else list(v)
            return _create_row(names, [f(x) for f, x in zip(fields, items, strict=False)])

        return convert_struct
    return None


# ----------------------------------------------------------------------------------------
# Floating-point numbers as the JVM prints them
# ----------------------------------------------------------------------------------------


def format_double(value: float) -> str:
    """``Double.toString`` as the JVMs Spark 3.5 runs on (Java 8 to 17) print it.

    Plain notation from 10^-3 up to 10^7, scientific outside. The digits are those of
    ``FloatingDecimal`` before Java 19, which are usually, not always, the shortest that
    read back (see ``_jdk_digits``).

    >>> [format_double(v) for v in (1.0, -0.0, 123456789.0, 0.001, 1e-4, float("nan"))]
    ['1.0', '-0.0', '1.23456789E8', '0.001', '1.0E-4', 'NaN']
    >>> format_double(1e23), format_double(2.0**60)
    ('9.999999999999999E22', '1.15292150460684698E18')
    """
    return _format_binary(value, _DOUBLE)


def format_float(value: float) -> str:
    """``Float.toString`` of the float nearest ``value``, as Java 8 to 17 print it.

    >>> [format_float(v) for v in (0.1, 1e10, 3.4e38, 1/3, 1e11)]
    ['0.1', '1.0E10', '3.4E38', '0.33333334', '9.9999998E10']
    """
    return _format_binary(_to_float32(value), _FLOAT)


@dataclass(frozen=True)
class _BinaryFormat:
    struct_code: str  # how struct packs the value's bits
    bits_code: str  # ... and an unsigned integer of the same width
    significand_bits: int  # including the implicit leading bit
    exponent_bits: int


_DOUBLE = _BinaryFormat("<d", "<Q", 53, 11)
_FLOAT = _BinaryFormat("<f", "<I", 24, 8)

# FloatingDecimal prints integers below 2^63 from their integer value (see _jdk_digits).
_LARGEST_INTEGER_PATH_EXPONENT = 62


def _format_binary(value: float, fmt: _BinaryFormat) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    digits, exponent = _jdk_digits(abs(value), fmt)
    return _java_notation(value < 0, digits, exponent)


def _jdk_digits(magnitude: float, fmt: _BinaryFormat) -> tuple[str, int]:
    """The significant digits (no trailing zeros) Java 8-18 print for a positive finite
    value, and the decimal exponent of the first one.

    A model of ``FloatingDecimal.dtoa`` fitted to what Spark prints on Java 17, which
    agrees with it on a corpus of 25,000 doubles and floats (random bit patterns,
    subnormals, powers of two and ten, everyday decimals) but for the case at the end:

    * An integer below 2^63 is printed from its integer value; when it has more bits than
      the format's precision, the digits those extra bits stand for are rounded off (half
      up). So 1e11 as a float prints as 9.9999998E10.
    * Anything else gets the fewest digits that fall strictly inside half the gap to the
      next smaller value on either side (the gap below is the narrow one at a power of
      two, so those print longer than need be), rounded to nearest, ties to even.

    * A power of two is the exception: Java takes the narrower gap below it on both sides,
      so 2^-24 prints as 5.9604644775390625E-8. The smallest subnormals, which would get
      one digit, get two (Double.MIN_VALUE prints as 4.9E-324).

    The known differences: a few floats between 2^80 and 2^90 (1.5% of those in the
    corpus), where Java prints the last digit one lower, and some of the ten smallest
    float subnormals (Java prints 9.8E-45 for the seventh, the model 1.0E-44).
    """
    bits = struct.unpack(fmt.bits_code, struct.pack(fmt.struct_code, magnitude))[0]
    fraction_bits = fmt.significand_bits - 1
    biased_exponent = bits >> fraction_bits
    significand = bits & ((1 << fraction_bits) - 1)
    bias = (1 << (fmt.exponent_bits - 1)) - 1
    if biased_exponent:
        significand |= 1 << fraction_bits
        exponent2 = biased_exponent - bias - fraction_bits
    else:
        exponent2 = 1 - bias - fraction_bits
    exact = Fraction(significand) * Fraction(2) ** exponent2
    leading_bit = significand.bit_length() - 1 + exponent2
    if exact.denominator == 1 and leading_bit <= _LARGEST_INTEGER_PATH_EXPONENT:
        return _integer_digits(int(exact), leading_bit - fmt.significand_bits - 1)
    margin = Fraction(2) ** (exponent2 - 1)  # half a unit in the last place
    if significand & (significand - 1) == 0:
        margin /= 2  # a power of two: Java takes the narrower gap below, on both sides
    digits, exponent = _free_format_digits(exact, exact - margin, exact + margin)
    if len(digits) == 1 and not biased_exponent:
        # The smallest subnormals: Java prints two digits (Double.MIN_VALUE is 4.9E-324).
        return _nearest_digits(exact, exponent, 2)
    return digits, exponent


def _integer_digits(value: int, extra_bits: int) -> tuple[str, int]:
    insignificant = math.floor(extra_bits * math.log10(2)) if extra_bits > 0 else 0
    if insignificant:
        scale = 10**insignificant
        value, residue = divmod(value, scale)
        if residue >= scale // 2:
            value += 1
    text = str(value)
    return text.rstrip("0"), len(text) - 1 + insignificant


def _decimal_exponent(exact: Fraction) -> int:
    """The exponent of the first significant digit of a positive number."""
    exponent = len(str(exact.numerator // exact.denominator)) - 1 if exact >= 1 else -1
    while Fraction(10) ** exponent > exact:
        exponent -= 1
    return exponent


def _free_format_digits(exact: Fraction, low: Fraction, high: Fraction) -> tuple[str, int]:
    exponent = _decimal_exponent(exact)
    for count in itertools.count(1):
        unit = Fraction(10) ** (exponent - count + 1)
        below = exact // unit
        fits_below = below * unit > low
        fits_above = (below + 1) * unit < high
        if not (fits_below or fits_above):
            continue
        twice_remainder = (exact - below * unit) * 2
        if fits_below and fits_above:
            round_up = twice_remainder > unit or (twice_remainder == unit and below % 2 == 1)
        else:
            round_up = fits_above
        text = str(below + 1 if round_up else below)
        return text.rstrip("0"), exponent + len(text) - count
    raise AssertionError("unreachable")  # pragma: no cover


def _nearest_digits(exact: Fraction, exponent: int, count: int) -> tuple[str, int]:
    unit = Fraction(10) ** (exponent - count + 1)
    text = str(round(exact / unit))  # round() on a Fraction rounds half to even
    return text.rstrip("0"), exponent + len(text) - count


def _java_notation(negative: bool, digits: str, exponent: int) -> str:
    if -3 <= exponent < 7:
        if exponent >= 0:
            whole = digits[: exponent + 1].ljust(exponent + 1, "0")
            fraction = digits[exponent + 1 :] or "0"
        else:
            whole, fraction = "0", "0" * (-exponent - 1) + digits
        text = f"{whole}.{fraction}"
    else:
        text = f"{digits[0]}.{digits[1:] or '0'}E{exponent}"
    return "-" + text if negative else text


def _to_float32(value: float) -> float:
    try:
        return cast(float, struct.unpack("<f", struct.pack("<f", value))[0])
    except OverflowError:  # beyond the float range, as Java's (float) cast gives
        return math.copysign(math.inf, value)
