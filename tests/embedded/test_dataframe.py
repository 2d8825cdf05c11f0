"""The shim's DataFrame against real PySpark 3.5: the same data through both, compared byte
for byte (``show``, ``printSchema``, ``repr``) and value for value (``collect``, ``toPandas``).

The shim's table is Spark's own Arrow serialization of the result (``_collect_as_arrow``),
so the two sides share the data but none of the rendering code.
"""

from __future__ import annotations

import contextlib
import datetime
import decimal
import doctest
import io
import math
import os
import random
import shutil
import struct
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import hypothesis
import pyarrow as pa
import pytest
from hypothesis import strategies as st
from pyspark.errors import AnalysisException, PySparkTypeError
from pyspark.sql import DataFrame as SparkDataFrame
from pyspark.sql import Row, SparkSession
from pyspark.sql.types import ArrayType, NullType

from sparkshim import dataframe as dataframe_module
from sparkshim.dataframe import DataFrame
from sparkshim.types import format_double, format_float, to_arrow_schema

pytestmark = [
    pytest.mark.embedded,
    pytest.mark.skipif(
        shutil.which("java") is None and not os.environ.get("JAVA_HOME"),
        reason="comparing with real PySpark needs Java",
    ),
]


@dataclass
class FakeSession:
    """The two things a DataFrame needs from a session."""

    time_zone: str = "UTC"
    views: dict[str, pa.Table] = field(default_factory=dict)

    def register_temp_view(self, name: str, table: pa.Table, /) -> None:
        self.views[name] = table


@pytest.fixture(scope="module")
def spark(pyspark_session: SparkSession) -> SparkSession:
    return pyspark_session


def shim_of(spark_df: SparkDataFrame, time_zone: str = "UTC") -> DataFrame:
    """The shim DataFrame over Spark's own Arrow form of ``spark_df``'s result."""
    batches = spark_df._collect_as_arrow()
    if batches:
        table = pa.Table.from_batches(batches)
    else:
        table = to_arrow_schema(spark_df.schema).empty_table()
    return DataFrame(FakeSession(time_zone), table)


def printed(action: Callable[[], object]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        action()
    return out.getvalue()


def comparable(value: Any) -> Any:
    """``value`` with NaN made equal to itself and Rows kept distinct from tuples."""
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    if isinstance(value, Row):
        return ("Row", tuple(getattr(value, "__fields__", ())), tuple(map(comparable, value)))
    if isinstance(value, (list, tuple)):
        return type(value).__name__, [comparable(v) for v in value]
    if isinstance(value, dict):
        return "dict", [(comparable(k), comparable(v)) for k, v in value.items()]
    return type(value).__name__, value


# ----------------------------------------------------------------------------------------
# The same queries through both
# ----------------------------------------------------------------------------------------

QUERIES: dict[str, str] = {
    "integers": """
        SELECT * FROM VALUES
          (CAST(-128 AS TINYINT), CAST(-32768 AS SMALLINT), -2147483648, -9223372036854775808L),
          (CAST(127 AS TINYINT), CAST(32767 AS SMALLINT), 2147483647, 9223372036854775807L),
          (CAST(0 AS TINYINT), CAST(NULL AS SMALLINT), NULL, 42L)
        AS t(tiny, small, regular, big)""",
    "doubles": """
        SELECT * FROM VALUES
          (1.0E10D), (1.0E-5D), (CAST('NaN' AS DOUBLE)), (CAST('Infinity' AS DOUBLE)),
          (CAST('-Infinity' AS DOUBLE)), (-0.0D), (0.0D), (123456789.0D), (1234567.0D),
          (9999999.0D), (10000000.0D), (0.001D), (0.00099D), (1.0E-4D), (123.456D),
          (1.0D / 3), (2.0D / 3), (0.1D + 0.2D), (-1.5E300D), (4.9E-324D),
          (1.7976931348623157E308D), (100.0D), (1.0E22D), (NULL)
        AS t(d)""",
    "floats": """
        SELECT CAST(d AS FLOAT) AS f FROM VALUES
          (0.1D), (1.0E10D), (3.4E38D), (1.0D / 3), (123.456D), (1.4E-45D), (-2.5D),
          (CAST('NaN' AS DOUBLE)), (16777216.0D), (0.001D), (1.0E11D), (NULL)
        AS t(d)""",
    "decimals": """
        SELECT CAST(1.5 AS DECIMAL(10, 2)) AS a, CAST(-0.001 AS DECIMAL(5, 3)) AS b,
               CAST(12345678901234567890.123456789 AS DECIMAL(38, 9)) AS c,
               CAST(0 AS DECIMAL(10, 4)) AS d, CAST(1E-20 AS DECIMAL(38, 30)) AS e,
               CAST(NULL AS DECIMAL(3, 1)) AS f, CAST(7 AS DECIMAL(1, 0)) AS g""",
    "strings": """
        SELECT * FROM VALUES
          ('', ' padded ', 'abcdefghijklmnopqrstuvwxyz'),
          ('NULL', 'null', '日本語テキスト日本語テキスト日本語テキスト'),
          ('naïve 😀', 'x😀😀😀😀😀😀😀😀😀😀y',
           '\uff46\uff55\uff4c\uff4c\u3000\uff57\uff49\uff44\uff54\uff48'),
          ('tab\tnew\nline', 'cr\rff\fbs\b', CONCAT('v', CHAR(11), 'a', CHAR(7))),
          (NULL, '한국어 텍스트', 'exactly twenty chars')
        AS t(a, b, c)""",
    "booleans_and_binary": """
        SELECT * FROM VALUES
          (true, X'0102', X''), (false, X'FF00ab', CAST(NULL AS BINARY)), (NULL, X'7f', X'00')
        AS t(flag, bin, maybe)""",
    "dates": """
        SELECT * FROM VALUES
          (DATE'2024-01-02'), (DATE'1970-01-01'), (DATE'1969-12-31'), (DATE'0001-01-01'),
          (DATE'9999-12-31'), (DATE'1582-10-15'), (NULL)
        AS t(d)""",
    "timestamps": """
        SELECT * FROM VALUES
          (TIMESTAMP'2024-01-02 03:04:05', TIMESTAMP_NTZ'2024-01-02 03:04:05'),
          (TIMESTAMP'2024-01-02 03:04:05.5', TIMESTAMP_NTZ'2024-01-02 03:04:05.12'),
          (TIMESTAMP'2024-01-02 03:04:05.123456', TIMESTAMP_NTZ'2024-01-02 03:04:05.000001'),
          (TIMESTAMP'1969-12-31 23:59:59.999999', TIMESTAMP_NTZ'1900-01-01 00:00:00'),
          (TIMESTAMP'2024-03-10 10:30:00', TIMESTAMP_NTZ'2024-03-10 02:30:00'),
          (TIMESTAMP'2024-07-01 12:00:00.010', NULL),
          (NULL, TIMESTAMP_NTZ'9999-12-31 23:59:59.999999')
        AS t(ts, ntz)""",
    "arrays": """
        SELECT array(1, NULL, 3) AS ints, array(CAST(NULL AS INT)) AS one_null,
               CAST(NULL AS ARRAY<INT>) AS null_array, array('a', NULL, 'NULL') AS strs,
               array(array(1, 2), NULL, array(3)) AS nested, array(1.0D, 1.0E10D, NULL) AS dbls,
               array(X'61', NULL) AS bins, array(DATE'2024-01-02') AS dates,
               array(TIMESTAMP'2024-01-02 03:04:05.5') AS tss, array(true, false) AS bools,
               array(CAST(1.50 AS DECIMAL(4, 2))) AS decs""",
    "structs": """
        SELECT named_struct('a', 1, 'b', 'x', 'c', CAST(NULL AS STRING)) AS st,
               CAST(NULL AS STRUCT<a: INT>) AS null_struct,
               named_struct('inner', named_struct('x', array(1, 2)), 'm', map('k', 1)) AS deep,
               array(named_struct('x', 1, 'y', NULL), NULL) AS of_structs,
               named_struct('t', TIMESTAMP'2024-01-02 03:04:05', 'f', CAST(0.1 AS FLOAT))
                 AS mixed""",
    "maps": """
        SELECT map('a', 1, 'b', NULL) AS m, map(1, named_struct('q', 2)) AS to_struct,
               CAST(NULL AS MAP<STRING, INT>) AS null_map, map('k', array(1, NULL)) AS to_array,
               map(DATE'2024-01-01', X'01') AS date_to_bin,
               map('x', map('y', CAST(NULL AS STRING))) AS nested""",
    "void": "SELECT NULL AS n, 1 AS one",
    # array() is array<void> without nulls: Arrow cannot say that (see the test below).
    "empty_literals": "SELECT array() AS a, array(array()) AS aa, map(1, array()) AS m",
    "long_names": """
        SELECT 'abcdefghijklmnopqrstuvwxyz' AS a_very_long_column_name_exceeding_twenty,
               1 AS `x
y`, 2 AS `日本語の列`, 3 AS `tab	name`""",
    "many_rows": "SELECT id, id * 1.5D AS half, CAST(id AS STRING) AS s FROM range(25)",
    "empty": "SELECT 1 AS a, 'x' AS b WHERE false",
    "one_row": "SELECT 12345 AS a",
    "wide_values": """
        SELECT repeat('x', 100) AS long_string, sequence(1, 30) AS long_array,
               map_from_arrays(sequence(1, 5), sequence(6, 10)) AS long_map""",
}

SHOW_OPTIONS: dict[str, dict[str, Any]] = {
    "default": {},
    "no_truncate": {"truncate": False},
    "truncate_5": {"truncate": 5},
    "truncate_2": {"truncate": 2},
    "truncate_4": {"truncate": 4},
    "truncate_0": {"truncate": 0},
    "truncate_negative": {"truncate": -1},
    "n_1": {"n": 1},
    "n_0": {"n": 0},
    "n_negative": {"n": -3},
    "n_large": {"n": 1000},
    "vertical": {"vertical": True},
    "vertical_untruncated_n_2": {"vertical": True, "truncate": False, "n": 2},
    "vertical_n_0": {"vertical": True, "n": 0},
}


@pytest.fixture(scope="module")
def frames(spark: SparkSession) -> dict[str, tuple[SparkDataFrame, DataFrame]]:
    pairs = {}
    for name, sql in QUERIES.items():
        spark_df = spark.sql(sql).cache()
        pairs[name] = (spark_df, shim_of(spark_df))
    return pairs


# Every option on the queries whose cells vary in width; the basic three on the rest.
FULL_OPTION_QUERIES = ["strings", "long_names", "many_rows", "empty", "wide_values", "structs"]
BASIC_OPTIONS = ["default", "no_truncate", "vertical"]
SHOW_CASES = [
    pytest.param(query, SHOW_OPTIONS[option], id=f"{query}-{option}")
    for query in QUERIES
    for option in (SHOW_OPTIONS if query in FULL_OPTION_QUERIES else BASIC_OPTIONS)
]


@pytest.mark.parametrize(("query", "options"), SHOW_CASES)
def test_show_prints_what_spark_prints(
    frames: dict[str, tuple[SparkDataFrame, DataFrame]], query: str, options: dict[str, Any]
) -> None:
    spark_df, shim_df = frames[query]
    assert printed(lambda: shim_df.show(**options)) == printed(lambda: spark_df.show(**options))


@pytest.mark.parametrize("query", QUERIES.keys())
def test_collect_returns_what_spark_returns(
    frames: dict[str, tuple[SparkDataFrame, DataFrame]], query: str
) -> None:
    spark_df, shim_df = frames[query]
    assert comparable(shim_df.collect()) == comparable(spark_df.collect())


@pytest.mark.parametrize("query", [q for q in QUERIES if q != "empty_literals"])
def test_schema_repr_and_dtypes_match(
    frames: dict[str, tuple[SparkDataFrame, DataFrame]], query: str
) -> None:
    spark_df, shim_df = frames[query]
    assert shim_df.schema == spark_df.schema
    assert repr(shim_df) == repr(spark_df)
    assert shim_df.dtypes == spark_df.dtypes
    assert shim_df.columns == spark_df.columns
    assert printed(shim_df.printSchema) == printed(spark_df.printSchema)


def test_arrow_cannot_say_an_array_of_void_holds_no_nulls(
    frames: dict[str, tuple[SparkDataFrame, DataFrame]],
) -> None:
    # A deliberate difference: Arrow's null type is always nullable, so the shim's array()
    # is array<void> with containsNull = true where Spark's has false.
    spark_df, shim_df = frames["empty_literals"]
    assert spark_df.schema["a"].dataType == ArrayType(NullType(), containsNull=False)
    assert shim_df.schema["a"].dataType == ArrayType(NullType(), containsNull=True)
    assert repr(shim_df) == repr(spark_df)


@pytest.mark.parametrize("level", [1, 2, 3, 0, -1])
@pytest.mark.parametrize("query", ["structs", "maps", "arrays"])
def test_print_schema_with_a_level(
    frames: dict[str, tuple[SparkDataFrame, DataFrame]], query: str, level: int
) -> None:
    spark_df, shim_df = frames[query]
    assert printed(lambda: shim_df.printSchema(level)) == printed(
        lambda: spark_df.printSchema(level)
    )


@pytest.mark.parametrize("query", ["integers", "structs", "void", "many_rows", "empty", "one_row"])
def test_row_access_matches(
    frames: dict[str, tuple[SparkDataFrame, DataFrame]], query: str
) -> None:
    spark_df, shim_df = frames[query]
    assert shim_df.count() == spark_df.count()
    assert shim_df.isEmpty() == spark_df.isEmpty()
    assert comparable(shim_df.first()) == comparable(spark_df.first())
    assert comparable(shim_df.head()) == comparable(spark_df.head())
    for n in (0, 2, 30):
        assert comparable(shim_df.head(n)) == comparable(spark_df.head(n))
        assert comparable(shim_df.take(n)) == comparable(spark_df.take(n))
    assert comparable(shim_df.limit(3).collect()) == comparable(spark_df.limit(3).collect())


@pytest.mark.parametrize(
    "query", ["integers", "doubles", "decimals", "strings", "timestamps", "arrays", "empty"]
)
def test_to_pandas_matches(frames: dict[str, tuple[SparkDataFrame, DataFrame]], query: str) -> None:
    testing = pytest.importorskip("pandas.testing")
    spark_df, shim_df = frames[query]
    if query == "timestamps":  # pandas has no year 9999 in nanoseconds, on either side
        spark_df, shim_df = spark_df.limit(6), shim_df.limit(6)
    testing.assert_frame_equal(shim_df.toPandas(), spark_df.toPandas())


def test_structs_and_maps_in_pandas_match(
    frames: dict[str, tuple[SparkDataFrame, DataFrame]],
) -> None:
    pytest.importorskip("pandas")
    for query in ("structs", "maps", "booleans_and_binary", "dates"):
        spark_df, shim_df = frames[query]
        expected = spark_df.toPandas()
        actual = shim_df.toPandas()
        assert list(actual.dtypes) == list(expected.dtypes), query
        assert comparable(actual.to_dict("list")) == comparable(expected.to_dict("list")), query


# ----------------------------------------------------------------------------------------
# Time zones
# ----------------------------------------------------------------------------------------


@contextlib.contextmanager
def process_time_zone(zone: str) -> Iterator[None]:
    """The Python process's local time zone, which PySpark's collect() uses."""
    before = os.environ.get("TZ")
    os.environ["TZ"] = zone
    time.tzset()
    try:
        yield
    finally:
        if before is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = before
        time.tzset()


@pytest.mark.parametrize("zone", ["America/Los_Angeles", "Asia/Kolkata", "Europe/Berlin"])
def test_show_renders_timestamps_in_the_session_time_zone(spark: SparkSession, zone: str) -> None:
    spark.conf.set("spark.sql.session.timeZone", zone)
    try:
        spark_df = spark.sql(QUERIES["timestamps"])
        shim_df = shim_of(spark_df, time_zone=zone)
        assert printed(shim_df.show) == printed(spark_df.show)
        assert printed(partial(shim_df.show, vertical=True, truncate=False)) == printed(
            partial(spark_df.show, vertical=True, truncate=False)
        )
        testing = pytest.importorskip("pandas.testing")
        testing.assert_frame_equal(shim_df.limit(6).toPandas(), spark_df.limit(6).toPandas())
    finally:
        spark.conf.set("spark.sql.session.timeZone", "UTC")


def test_collect_gives_wall_clock_times_in_the_process_time_zone(spark: SparkSession) -> None:
    spark_df = spark.sql(QUERIES["timestamps"])
    shim_df = shim_of(spark_df)
    with process_time_zone("America/New_York"):
        expected = spark_df.collect()
        actual = shim_df.collect()
    assert actual == expected
    assert actual[0].ts == datetime.datetime(2024, 1, 1, 22, 4, 5)


# ----------------------------------------------------------------------------------------
# Arrow built by hand from Python rows, with types matching Spark's schema
# ----------------------------------------------------------------------------------------


def test_a_hand_built_table_shows_like_spark_data_from_the_same_rows(
    spark: SparkSession,
) -> None:
    rows = [
        (1, "one", 1.25, decimal.Decimal("3.14"), datetime.date(2024, 2, 29), [1, 2], {"k": "v"}),
        (None, None, None, None, None, None, None),
        (-7, "ünï", float("inf"), decimal.Decimal("-0.50"), datetime.date(1, 1, 1), [], {}),
    ]
    ddl = (
        "i INT, s STRING, f DOUBLE, d DECIMAL(5,2), dt DATE, a ARRAY<BIGINT>, m MAP<STRING,STRING>"
    )
    spark_df = spark.createDataFrame(rows, ddl)
    columns = list(zip(*rows, strict=True))
    table = pa.table(
        {
            "i": pa.array(columns[0], pa.int32()),
            "s": pa.array(columns[1], pa.string()),
            "f": pa.array(columns[2], pa.float64()),
            "d": pa.array(columns[3], pa.decimal128(5, 2)),
            "dt": pa.array(columns[4], pa.date32()),
            "a": pa.array(columns[5], pa.list_(pa.field("element", pa.int64()))),
            "m": pa.array(columns[6], pa.map_(pa.string(), pa.string())),
        }
    )
    shim_df = DataFrame(FakeSession(), table)
    assert shim_df.schema == spark_df.schema
    assert printed(shim_df.show) == printed(spark_df.show)
    assert shim_df.collect() == spark_df.collect()


def test_a_frame_without_columns_shows_like_spark(spark: SparkSession) -> None:
    spark_df = spark.range(3).select()
    empty_struct = pa.array([{}, {}, {}], pa.struct([]))
    table = pa.Table.from_struct_array(empty_struct)
    shim_df = DataFrame(FakeSession(), table)
    assert repr(shim_df) == repr(spark_df)
    assert printed(shim_df.show) == printed(spark_df.show)
    assert shim_df.collect() == spark_df.collect()  # (Spark's vertical show() fails here)


# ----------------------------------------------------------------------------------------
# Doubles and floats as the JVM prints them
# ----------------------------------------------------------------------------------------


def sample_doubles() -> list[float]:
    """Values queries produce every day (short decimals, ratios, sums, powers, large
    integers) and random bit patterns."""
    rng = random.Random(20260101)
    values = [rng.randint(-(10**6), 10**6) / 10 ** rng.randint(0, 6) for _ in range(300)]
    values += [rng.random() * 10 ** rng.randint(-8, 12) for _ in range(300)]
    values += [rng.randint(1, 999) / rng.randint(1, 999) for _ in range(200)]
    values += [round(rng.uniform(-1e4, 1e4), 2) for _ in range(200)]
    values += [float(rng.getrandbits(rng.randint(20, 70))) for _ in range(500)]
    values += [2.0**k for k in range(-1020, 1023, 7)] + [10.0**k for k in range(-300, 308, 3)]
    values += [1e23, 2e23, 0.1 + 0.2, 2.0**-24, 2.0**-25, 276804372109801.38, 2794851.25]
    values += [
        struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0] for _ in range(1500)
    ]
    return [v for v in values if math.isfinite(v)]


def in_known_float_gap(value: float) -> bool:
    """Floats where sparkshim.types._jdk_digits is known to differ from Java 17."""
    magnitude = abs(value)
    return 2.0**80 <= magnitude < 2.0**90 or 0 < magnitude < 1.5e-44


def test_doubles_and_floats_print_as_spark_prints_them(spark: SparkSession) -> None:
    values = sample_doubles()
    spark_df = spark.createDataFrame([(v, v) for v in values], "d DOUBLE, f FLOAT")
    rendered = spark_df.selectExpr("CAST(d AS STRING)", "CAST(f AS STRING)").collect()
    wrong_doubles = [
        (v, d, format_double(v))
        for v, (d, _) in zip(values, rendered, strict=True)
        if format_double(v) != d
    ]
    wrong_floats = [
        (v, f, format_float(v))
        for v, (_, f) in zip(values, rendered, strict=True)
        if format_float(v) != f and not in_known_float_gap(v)
    ]
    assert not wrong_doubles
    assert not wrong_floats


@pytest.mark.parametrize(
    ("value", "java", "shim"),
    [(2.0**83, "9.6714065E24", "9.6714066E24"), (1e-44, "9.8E-45", "1.0E-44")],
)
def test_the_known_float_gaps_spell_the_same_float(
    spark: SparkSession, value: float, java: str, shim: str
) -> None:
    spark_text = spark.createDataFrame([(value,)], "f FLOAT").selectExpr("CAST(f AS STRING)")
    assert spark_text.first()[0] == java  # type: ignore[index]
    assert format_float(value) == shim
    as_float = [struct.unpack("<f", struct.pack("<f", float(t)))[0] for t in (java, shim)]
    assert as_float[0] == as_float[1]


@hypothesis.given(st.floats(allow_nan=False, allow_infinity=False))
@hypothesis.settings(max_examples=2000, deadline=None)
def test_a_printed_double_reads_back_as_the_same_double(value: float) -> None:
    assert float(format_double(value)) == value


@hypothesis.given(st.floats(width=32, allow_nan=False, allow_infinity=False))
@hypothesis.settings(max_examples=2000, deadline=None)
def test_a_printed_float_reads_back_as_the_same_float(value: float) -> None:
    text = format_float(value)
    assert struct.unpack("<f", struct.pack("<f", float(text)))[0] == value


# ----------------------------------------------------------------------------------------
# The rest of the surface
# ----------------------------------------------------------------------------------------


def test_create_or_replace_temp_view_registers_the_table() -> None:
    session = FakeSession()
    table = pa.table({"a": [1, 2]})
    DataFrame(session, table).createOrReplaceTempView("v")
    assert session.views["v"].equals(table)


def test_to_arrow_is_the_table_in_spark_shaped_arrow_types() -> None:
    table = pa.table({"s": pa.array(["x"], pa.large_string()), "t": pa.array([0], pa.int32())})
    arrow = DataFrame(FakeSession(), table).toArrow()
    assert arrow.schema == pa.schema([("s", pa.string()), ("t", pa.int32())])
    assert arrow.to_pylist() == [{"s": "x", "t": 0}]


def test_limit_returns_a_new_frame_and_refuses_a_negative_count(
    frames: dict[str, tuple[SparkDataFrame, DataFrame]],
) -> None:
    spark_df, shim_df = frames["many_rows"]
    assert shim_df.limit(3).count() == 3
    assert shim_df.count() == 25
    with pytest.raises(AnalysisException):
        spark_df.limit(-1).collect()
    with pytest.raises(AnalysisException, match="must be equal to or greater than 0"):
        shim_df.limit(-1)


@pytest.mark.parametrize(
    "arguments",
    [{"n": "3"}, {"n": True}, {"n": 2.0}, {"vertical": "yes"}, {"truncate": "wide"}],
    ids=["n_str", "n_bool", "n_float", "vertical_str", "truncate_str"],
)
def test_show_rejects_bad_arguments_as_pyspark_does(
    frames: dict[str, tuple[SparkDataFrame, DataFrame]], arguments: dict[str, Any]
) -> None:
    spark_df, shim_df = frames["one_row"]
    with pytest.raises(PySparkTypeError) as expected:
        spark_df.show(**arguments)
    with pytest.raises(PySparkTypeError) as actual:
        shim_df.show(**arguments)
    assert actual.value.getErrorClass() == expected.value.getErrorClass()
    assert str(actual.value) == str(expected.value)


def test_show_accepts_a_numeric_string_for_truncate_as_pyspark_does(
    frames: dict[str, tuple[SparkDataFrame, DataFrame]],
) -> None:
    spark_df, shim_df = frames["strings"]
    assert printed(lambda: shim_df.show(truncate="7")) == printed(  # type: ignore[arg-type]
        lambda: spark_df.show(truncate="7")  # type: ignore[arg-type]
    )


def test_doctests() -> None:
    failures, tried = doctest.testmod(dataframe_module, optionflags=doctest.ELLIPSIS)
    assert tried > 0
    assert failures == 0
