"""Spark types and values on Arrow (sparkshim.types), checked against real PySpark 3.5 where
PySpark has an answer: its DDL parser, its createDataFrame, its collect()."""

from __future__ import annotations

import datetime
import decimal
import doctest
import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pytest
from pyspark.errors import ArithmeticException, ParseException, PySparkException
from pyspark.sql import Row, SparkSession
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
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
    VarcharType,
    _parse_datatype_string,
)

from sparkshim import types as types_module
from sparkshim.dataframe import DataFrame
from sparkshim.errors import UnsupportedSqlError
from sparkshim.types import (
    from_python,
    interval_column_alias,
    normalize_table,
    parse_ddl_schema,
    parse_ddl_spark_type,
    parse_ddl_type,
    parse_schema_string,
    to_arrow_schema,
    to_arrow_type,
    to_rows,
    to_spark_schema,
    to_spark_type,
    with_interval_columns,
)

pytestmark = pytest.mark.embedded

needs_java = pytest.mark.skipif(
    shutil.which("java") is None and not os.environ.get("JAVA_HOME"),
    reason="comparing with real PySpark needs Java",
)

UTC = datetime.timezone.utc


@dataclass
class FakeSession:
    time_zone: str = "UTC"

    def register_temp_view(self, name: str, table: pa.Table, /) -> None:
        del name, table


@pytest.fixture(scope="module")
def spark(pyspark_session: SparkSession) -> SparkSession:
    return pyspark_session


def test_doctests() -> None:
    failures, tried = doctest.testmod(types_module, optionflags=doctest.ELLIPSIS)
    assert tried > 0
    assert failures == 0


# ----------------------------------------------------------------------------------------
# Arrow <-> Spark
# ----------------------------------------------------------------------------------------

ARROW_TO_SPARK: list[tuple[pa.DataType, DataType]] = [
    (pa.int8(), ByteType()),
    (pa.int16(), ShortType()),
    (pa.int32(), IntegerType()),
    (pa.int64(), LongType()),
    (pa.float32(), FloatType()),
    (pa.float64(), DoubleType()),
    (pa.decimal128(10, 2), DecimalType(10, 2)),
    (pa.decimal128(38, 0), DecimalType(38, 0)),
    (pa.string(), StringType()),
    (pa.large_string(), StringType()),
    (pa.string_view(), StringType()),
    (pa.binary(), BinaryType()),
    (pa.large_binary(), BinaryType()),
    (pa.bool_(), BooleanType()),
    (pa.date32(), DateType()),
    (pa.timestamp("us", tz="UTC"), TimestampType()),
    (pa.timestamp("ns", tz="America/New_York"), TimestampType()),
    (pa.timestamp("us"), TimestampNTZType()),
    (pa.timestamp("ms"), TimestampNTZType()),
    (pa.list_(pa.int32()), ArrayType(IntegerType(), True)),
    (pa.list_(pa.field("e", pa.string(), nullable=False)), ArrayType(StringType(), False)),
    (pa.large_list(pa.float64()), ArrayType(DoubleType(), True)),
    (
        pa.struct([pa.field("a", pa.int64(), nullable=False), ("b", pa.string())]),
        StructType([StructField("a", LongType(), False), StructField("b", StringType())]),
    ),
    (pa.map_(pa.string(), pa.int32()), MapType(StringType(), IntegerType(), True)),
    (
        pa.map_(pa.string(), pa.field("value", pa.int32(), nullable=False)),
        MapType(StringType(), IntegerType(), False),
    ),
    (pa.null(), NullType()),
    (pa.dictionary(pa.int32(), pa.string()), StringType()),
]


@pytest.mark.parametrize(("arrow_type", "spark_type"), ARROW_TO_SPARK, ids=str)
def test_arrow_types_map_to_spark_types(arrow_type: pa.DataType, spark_type: DataType) -> None:
    assert to_spark_type(arrow_type) == spark_type


@pytest.mark.parametrize(("arrow_type", "spark_type"), ARROW_TO_SPARK, ids=str)
def test_spark_types_map_back_to_the_canonical_arrow_type(
    arrow_type: pa.DataType, spark_type: DataType
) -> None:
    canonical = to_arrow_type(spark_type)
    assert to_spark_type(canonical) == spark_type
    assert to_arrow_type(to_spark_type(canonical)) == canonical


@pytest.mark.parametrize(
    "arrow_type",
    [
        pa.uint8(),
        pa.uint64(),
        pa.float16(),
        pa.time64("us"),
        pa.decimal256(40, 2),
        pa.binary(4),
        pa.date64(),
        pa.month_day_nano_interval(),
    ],
    ids=str,
)
def test_arrow_types_spark_lacks_are_refused_by_name(arrow_type: pa.DataType) -> None:
    with pytest.raises(UnsupportedSqlError, match=re.escape(str(arrow_type))):
        to_spark_type(arrow_type)


def test_interval_columns_carry_sparks_interval_types() -> None:
    # A duration is PySpark's Arrow form of an INTERVAL DAY TO SECOND; the narrower
    # day-time and the year-month types (months in an int32) are kept in field metadata.
    assert to_spark_type(pa.duration("us")) == DayTimeIntervalType()
    marked = pa.table(
        {
            interval_column_alias("d", "interval day"): pa.array([86_400_000_000], pa.int64()),
            interval_column_alias("m", "interval year to month"): pa.array([37], pa.int64()),
        }
    )
    table = normalize_table(with_interval_columns(marked))
    assert to_spark_schema(table.schema).simpleString() == (
        "struct<d:interval day,m:interval year to month>"
    )
    assert to_rows(table) == [Row(d=datetime.timedelta(days=1), m=37)]


def test_a_map_with_void_keys_is_refused() -> None:
    with pytest.raises(UnsupportedSqlError, match="map"):
        to_arrow_type(MapType(NullType(), NullType()))


def test_an_array_of_void_becomes_a_nullable_arrow_element() -> None:
    arrow = to_arrow_type(ArrayType(NullType(), containsNull=False))
    assert arrow == pa.list_(pa.field("element", pa.null()))


def test_schemas_carry_nullability_both_ways() -> None:
    arrow = pa.schema(
        [pa.field("id", pa.int64(), nullable=False), pa.field("tags", pa.list_(pa.string()))]
    )
    spark = to_spark_schema(arrow)
    assert spark == StructType(
        [
            StructField("id", LongType(), nullable=False),
            StructField("tags", ArrayType(StringType(), True), nullable=True),
        ]
    )
    assert to_arrow_schema(spark) == pa.schema(
        [
            pa.field("id", pa.int64(), nullable=False),
            pa.field("tags", pa.list_(pa.field("element", pa.string()))),
        ]
    )


def test_normalize_table_casts_to_the_canonical_types_and_keeps_the_values() -> None:
    table = pa.table(
        {
            "s": pa.array(["a", None], pa.large_string()),
            "t": pa.array([1_000_000_001_999, None], pa.timestamp("ns", tz="Asia/Tokyo")),
            "d": pa.array(["x", "x"]).dictionary_encode(),
            "l": pa.array([[1], None], pa.large_list(pa.int64())),
        }
    )
    normalized = normalize_table(table)
    assert normalized.schema == pa.schema(
        [
            ("s", pa.string()),
            ("t", pa.timestamp("us", tz="UTC")),
            ("d", pa.string()),
            ("l", pa.list_(pa.field("element", pa.int64()))),
        ]
    )
    assert normalized.column("t").cast(pa.int64()).to_pylist() == [1_000_000_001, None]
    assert normalized.column("d").to_pylist() == ["x", "x"]
    assert normalize_table(normalized) is normalized


# ----------------------------------------------------------------------------------------
# DDL type strings
# ----------------------------------------------------------------------------------------

DDL_TYPES: list[tuple[str, pa.DataType]] = [
    ("INT", pa.int32()),
    ("INTEGER", pa.int32()),
    ("BIGINT", pa.int64()),
    ("LONG", pa.int64()),
    ("SMALLINT", pa.int16()),
    ("SHORT", pa.int16()),
    ("TINYINT", pa.int8()),
    ("BYTE", pa.int8()),
    ("STRING", pa.string()),
    ("VARCHAR(10)", pa.string()),
    ("CHAR(3)", pa.string()),
    ("character(2)", pa.string()),
    ("DECIMAL(10,2)", pa.decimal128(10, 2)),
    ("decimal( 16 , 8 )", pa.decimal128(16, 8)),
    ("DECIMAL", pa.decimal128(10, 0)),
    ("DECIMAL(5)", pa.decimal128(5, 0)),
    ("DEC", pa.decimal128(10, 0)),
    ("NUMERIC(38,38)", pa.decimal128(38, 38)),
    ("DOUBLE", pa.float64()),
    ("FLOAT", pa.float32()),
    ("REAL", pa.float32()),
    ("BOOLEAN", pa.bool_()),
    ("DATE", pa.date32()),
    ("TIMESTAMP", pa.timestamp("us", tz="UTC")),
    ("TIMESTAMP_LTZ", pa.timestamp("us", tz="UTC")),
    ("TIMESTAMP_NTZ", pa.timestamp("us")),
    ("BINARY", pa.binary()),
    ("VOID", pa.null()),
    ("ARRAY<INT>", pa.list_(pa.field("element", pa.int32()))),
    ("array< short>", pa.list_(pa.field("element", pa.int16()))),
    ("MAP<STRING, BIGINT>", pa.map_(pa.string(), pa.int64())),
    ("STRUCT<a: INT, b STRING>", pa.struct([("a", pa.int32()), ("b", pa.string())])),
    ("STRUCT<>", pa.struct([])),
    (
        "struct<`a b`: int NOT NULL, c: array<map<string, struct<d: date>>> COMMENT 'x'>",
        pa.struct(
            [
                pa.field("a b", pa.int32(), nullable=False),
                pa.field(
                    "c",
                    pa.list_(
                        pa.field("element", pa.map_(pa.string(), pa.struct([("d", pa.date32())])))
                    ),
                ),
            ]
        ),
    ),
]


@pytest.mark.parametrize(("ddl", "expected"), DDL_TYPES, ids=[d for d, _ in DDL_TYPES])
def test_ddl_types_parse_to_arrow(ddl: str, expected: pa.DataType) -> None:
    assert parse_ddl_type(ddl) == expected


def string_for_char(data_type: DataType) -> DataType:
    """Spark's type with CHAR and VARCHAR read as STRING, as a DataFrame schema holds them."""
    if isinstance(data_type, (CharType, VarcharType)):
        return StringType()
    if isinstance(data_type, ArrayType):
        return ArrayType(string_for_char(data_type.elementType), data_type.containsNull)
    if isinstance(data_type, MapType):
        return MapType(
            string_for_char(data_type.keyType),
            string_for_char(data_type.valueType),
            data_type.valueContainsNull,
        )
    if isinstance(data_type, StructType):
        return StructType(
            [
                StructField(f.name, string_for_char(f.dataType), f.nullable, f.metadata)
                for f in data_type.fields
            ]
        )
    return data_type


SCHEMA_STRINGS = [
    *(ddl for ddl, _ in DDL_TYPES),
    "a INT, b STRING",
    "a: int, b: string",
    "a INT NOT NULL, b STRING COMMENT 'the b', `c d` ARRAY<STRUCT<x: DOUBLE>>",
    "a int not null comment 'it\\'s'",
    "value map<int, array<timestamp_ntz>>",
    "",
]


@needs_java
@pytest.mark.parametrize("text", SCHEMA_STRINGS)
def test_schema_strings_parse_as_pyspark_parses_them(spark: SparkSession, text: str) -> None:
    expected = string_for_char(_parse_datatype_string(text))
    assert parse_schema_string(text) == expected


@needs_java
@pytest.mark.parametrize(
    "text",
    ["blabla", "array<int", "map<int, boolean>>", "a: int,", "a int b", "struct<a int"],
)
def test_bad_type_strings_raise_parse_exception_as_in_spark(spark: SparkSession, text: str) -> None:
    with pytest.raises(ParseException):
        _parse_datatype_string(text)
    with pytest.raises(ParseException):
        parse_schema_string(text)


@pytest.mark.parametrize("text", ["DECIMAL(39,0)", "DECIMAL(5,6)", "DECIMAL(0)", "CHAR", "INT(3)"])
def test_impossible_types_raise_parse_exception(text: str) -> None:
    with pytest.raises(ParseException):
        parse_ddl_spark_type(text)


def test_unknown_type_names_are_named() -> None:
    with pytest.raises(ParseException, match='Unsupported data type "BLOB"'):
        parse_ddl_type("blob")


def test_interval_types_are_refused_as_unsupported() -> None:
    with pytest.raises(UnsupportedSqlError, match="INTERVAL"):
        parse_ddl_type("INTERVAL DAY TO SECOND")


def test_a_column_list_keeps_names_nullability_and_comments() -> None:
    schema = parse_ddl_schema("id BIGINT NOT NULL COMMENT 'key', `odd ``name```: string")
    assert schema.fields == [
        StructField("id", LongType(), False, {"comment": "key"}),
        StructField("odd `name`", StringType(), True),
    ]


# ----------------------------------------------------------------------------------------
# Arrow values -> Python values
# ----------------------------------------------------------------------------------------


def test_to_rows_keeps_duplicate_struct_field_names() -> None:
    struct = pa.StructArray.from_arrays(
        [pa.array([1, 2]), pa.array(["a", "b"])],
        fields=[pa.field("x", pa.int64()), pa.field("x", pa.string())],
    )
    rows = to_rows(pa.table({"s": struct}))
    assert rows == [Row(s=Row(1, "a")), Row(s=Row(2, "b"))]
    assert rows[0].s.__fields__ == ["x", "x"]


def test_to_rows_honours_slices_and_chunks() -> None:
    lists = pa.array([[1], [2, 3], None, [4]], pa.list_(pa.int64()))
    maps = pa.array(
        [[("a", 1)], [("b", 2)], None, [("c", 3), ("d", None)]], pa.map_(pa.string(), pa.int64())
    )
    structs = pa.array([{"x": 1}, None, {"x": 3}, {"x": None}], pa.struct([("x", pa.int64())]))
    table = pa.table({"l": lists, "m": maps, "s": structs}).slice(1)
    chunked = pa.concat_tables([table.slice(0, 1), table.slice(1)])
    expected = [
        Row(l=[2, 3], m={"b": 2}, s=None),
        Row(l=None, m=None, s=Row(x=3)),
        Row(l=[4], m={"c": 3, "d": None}, s=Row(x=None)),
    ]
    assert to_rows(table) == expected
    assert to_rows(chunked) == expected


def test_to_rows_gives_timestamps_as_wall_clock_time_in_the_given_zone() -> None:
    instant = datetime.datetime(2024, 1, 1, 12, 0, tzinfo=UTC)
    table = pa.table(
        {
            "ts": pa.array([instant], pa.timestamp("us", tz="UTC")),
            "ntz": pa.array([datetime.datetime(2024, 1, 1, 12, 0)], pa.timestamp("us")),
            "nested": pa.array([[instant]], pa.list_(pa.timestamp("us", tz="UTC"))),
        }
    )
    (tokyo,) = to_rows(table, "Asia/Tokyo")
    assert tokyo.ts == datetime.datetime(2024, 1, 1, 21, 0)
    assert tokyo.ntz == datetime.datetime(2024, 1, 1, 12, 0)
    assert tokyo.nested == [datetime.datetime(2024, 1, 1, 21, 0)]
    (local,) = to_rows(table)
    assert local.ts == instant.astimezone().replace(tzinfo=None)


def test_to_rows_of_a_table_without_columns_keeps_the_row_count() -> None:
    table = pa.Table.from_struct_array(pa.array([{}, {}], pa.struct([])))
    assert to_rows(table) == [Row(), Row()]


# ----------------------------------------------------------------------------------------
# createDataFrame input -> Arrow, against PySpark's createDataFrame
# ----------------------------------------------------------------------------------------

NOW = datetime.datetime(2024, 5, 6, 7, 8, 9, 123456)

CREATE_CASES: dict[str, tuple[Any, Any]] = {
    "tuples_inferred": ([(1, "a", 1.5, True), (2, None, None, False)], None),
    "names": ([(1, "a"), (2, None)], ["n", "s"]),
    "more_names_than_columns_fails_in_both": ([(1, "a")], ["n", "s", "extra"]),
    "dicts_sorted_by_key": ([{"b": 1, "a": "x"}, {"a": "y", "b": None}], None),
    "rows": ([Row(a=1, b="x"), Row(a=2, b="y")], None),
    "row_field_order": ([Row(b=1, a="x")], None),
    "lists": ([[1, "a"], [2, "b"]], None),
    "values_of_every_kind": (
        [
            (
                NOW,
                datetime.date(2024, 1, 2),
                decimal.Decimal("1.5"),
                bytearray(b"ab"),
                [1, 2],
                {"k": 1},
                Row(x=1, y="z"),
                2**40,
            )
        ],
        None,
    ),
    "nested": ([([[1, None]], {"a": [1.5]}, [Row(x=1, y="a")])], None),
    "types_merged_across_rows": ([(1, None), (None, "x")], ["a", "b"]),
    "ddl": ([(1, "x"), (None, None)], "a INT, b STRING"),
    "ddl_with_colons": ([(1, "x")], "a: int, b: string"),
    "single_type": ([1, 2, None], "int"),
    "single_type_object": ([[1, 2], None], ArrayType(IntegerType())),
    "decimal_rounding_half_up": (
        [(decimal.Decimal("1.235"),), (decimal.Decimal("-1.235"),), (decimal.Decimal("7"),)],
        "d DECIMAL(10,2)",
    ),
    "strings_from_other_values": (
        [(1, True, 1.5, 1e10, "s")],
        "a string, b string, c string, d string, e string",
    ),
    "date_from_datetime": ([(NOW,)], "d date"),
    "aware_datetime": ([(datetime.datetime(2024, 1, 1, 12, tzinfo=UTC),)], None),
    "empty_with_schema": ([], "a INT, b STRING"),
    "explicit_struct_type": (
        [
            (
                1,
                2,
                3,
                4,
                0.5,
                0.25,
                decimal.Decimal("12.34"),
                "s",
                b"\x00\xff",
                True,
                datetime.date(2000, 2, 29),
                NOW,
                NOW,
                [1, 2],
                {"k": None},
                (1, "inner"),
            ),
            (None,) * 16,
        ],
        StructType(
            [
                StructField("byte", ByteType()),
                StructField("short", ShortType()),
                StructField("int", IntegerType()),
                StructField("long", LongType()),
                StructField("float", FloatType()),
                StructField("double", DoubleType()),
                StructField("dec", DecimalType(10, 2)),
                StructField("str", StringType()),
                StructField("bin", BinaryType()),
                StructField("bool", BooleanType()),
                StructField("date", DateType()),
                StructField("ts", TimestampType()),
                StructField("ntz", TimestampNTZType()),
                StructField("arr", ArrayType(IntegerType(), False)),
                StructField("map", MapType(StringType(), LongType())),
                StructField(
                    "st",
                    StructType([StructField("a", IntegerType()), StructField("b", StringType())]),
                ),
            ]
        ),
    ),
    # Errors: both sides must raise the same PySpark error class.
    "empty_without_schema": ([], None),
    "all_null_column": ([(None,), (None,)], ["a"]),
    "wrong_type": ([(1.5,)], "a INT"),
    "null_in_not_null": ([(None,)], StructType([StructField("a", IntegerType(), False)])),
    "out_of_range": ([(300,)], "a TINYINT"),
    "int_then_string_rows": ([(1,), ("x",)], None),
}


def outcome(create: Callable[[], Any]) -> tuple[str, Any]:
    """What ``create`` returns, or the kind of error it raises."""
    try:
        return "ok", create()
    except PySparkException as error:
        return "error", error.getErrorClass()
    except Exception as error:
        return "error", type(error).__name__


@needs_java
@pytest.mark.parametrize("case", CREATE_CASES.keys())
def test_from_python_builds_what_create_data_frame_builds(spark: SparkSession, case: str) -> None:
    data, schema = CREATE_CASES[case]

    def with_spark() -> tuple[StructType, list[Row]]:
        df = spark.createDataFrame(data, schema)
        return df.schema, df.collect()

    def with_shim() -> tuple[StructType, list[Row]]:
        df = DataFrame(FakeSession(), from_python(data, schema))
        return df.schema, df.collect()

    assert outcome(with_shim) == outcome(with_spark)


@needs_java
@pytest.mark.parametrize("case", ["values_of_every_kind", "explicit_struct_type", "nested"])
def test_created_frames_show_as_spark_shows_them(
    spark: SparkSession, case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    data, schema = CREATE_CASES[case]
    spark.createDataFrame(data, schema).show(truncate=False)
    expected = capsys.readouterr().out
    DataFrame(FakeSession(), from_python(data, schema)).show(truncate=False)
    assert capsys.readouterr().out == expected


def test_a_decimal_too_wide_for_its_type_fails() -> None:
    # Spark fails the same way, but only when the job runs.
    with pytest.raises(ArithmeticException, match="DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION"):
        from_python([(decimal.Decimal("123456789012"),)], "a DECIMAL(10,2)")


def test_a_value_the_shim_cannot_spell_as_a_string_is_refused() -> None:
    with pytest.raises(UnsupportedSqlError, match="STRING"):
        from_python([(datetime.date(2024, 1, 1),)], "a STRING")


def test_an_arrow_table_is_taken_as_it_is_or_cast_to_the_schema() -> None:
    table = pa.table(
        {"a": pa.array([1, 2], pa.int32()), "b": pa.array(["x", None], pa.large_string())}
    )
    assert from_python(table).schema == pa.schema([("a", pa.int32()), ("b", pa.string())])
    renamed = from_python(table, ["x", "y"])
    assert renamed.column_names == ["x", "y"]
    cast = from_python(table, "a BIGINT, b STRING")
    assert cast.schema == pa.schema([("a", pa.int64()), ("b", pa.string())])
    assert cast.to_pylist() == [{"a": 1, "b": "x"}, {"a": 2, "b": None}]


# ----------------------------------------------------------------------------------------
# pandas input
# ----------------------------------------------------------------------------------------


def pandas_cases() -> dict[str, tuple[Any, Any]]:
    pd = pytest.importorskip("pandas")
    stamps = pd.to_datetime(["2024-01-01 10:00:00.5", "2024-07-01 23:59:59"], format="ISO8601")
    return {
        "numbers_and_strings": (
            pd.DataFrame(
                {"i": [1, 2], "f": [1.5, float("nan")], "s": ["a", "b"], "b": [True, False]}
            ),
            None,
        ),
        "ints_with_missing": (pd.DataFrame({"i": [1, None]}), None),
        "naive_timestamps": (pd.DataFrame({"t": stamps}), None),
        "aware_timestamps": (pd.DataFrame({"t": stamps.tz_localize("America/New_York")}), None),
        "timestamps_with_schema": (pd.DataFrame({"t": stamps, "n": [1, 2]}), "t TIMESTAMP, n LONG"),
        "objects": (pd.DataFrame({"l": [[1, 2], [3]], "d": [{"k": 1}, {"k": 2}]}), None),
        "column_names_from_schema": (pd.DataFrame({"a": [1], "b": ["x"]}), ["x", "y"]),
        "dates": (pd.DataFrame({"d": [datetime.date(2024, 1, 2), None]}), None),
    }


@needs_java
@pytest.mark.parametrize(
    "case",
    [
        "numbers_and_strings",
        "ints_with_missing",
        "naive_timestamps",
        "aware_timestamps",
        "timestamps_with_schema",
        "objects",
        "column_names_from_schema",
        "dates",
    ],
)
@pytest.mark.parametrize("zone", ["UTC", "America/Los_Angeles"])
def test_pandas_input_builds_what_create_data_frame_builds(
    spark: SparkSession, case: str, zone: str
) -> None:
    data, schema = pandas_cases()[case]
    spark.conf.set("spark.sql.session.timeZone", zone)
    try:

        def with_spark() -> tuple[StructType, list[Row]]:
            df = spark.createDataFrame(data, schema)
            return df.schema, df.collect()

        def with_shim() -> tuple[StructType, list[Row]]:
            df = DataFrame(FakeSession(zone), from_python(data, schema, time_zone=zone))
            return df.schema, df.collect()

        expected = outcome(with_spark)
        actual = outcome(with_shim)
    finally:
        spark.conf.set("spark.sql.session.timeZone", "UTC")
    assert repr(actual) == repr(expected)  # repr: NaN == NaN
