"""String functions at their edges, as PySpark 3.5 answers them (a differential fuzzer
found the differences): split_part by an empty delimiter splits nothing (DuckDB split the
string into its characters), and repeat(NULL, n) is a STRING (DuckDB's: a BLOB)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparkshim import ShimSession

pytestmark = pytest.mark.embedded


@pytest.fixture
def spark(tmp_path: Path) -> ShimSession:
    return ShimSession(warehouse=str(tmp_path / "warehouse"))


def test_split_part_by_an_empty_delimiter(spark: ShimSession) -> None:
    row = spark.sql(
        "SELECT split_part('a,b,c', '', 1), split_part('a,b,c', '', 2),"
        " split_part('a,b,c', '', -1), split_part('a,b,c', ',', 2)"
    ).collect()[0]
    assert tuple(row) == ("a,b,c", "", "a,b,c", "b")
    rows = spark.sql(
        "SELECT split_part(s, d, i) FROM VALUES ('a,b', '', 1), ('a,b', ',', 2), (NULL, '', 1),"
        " ('x', '', CAST(NULL AS INT)), ('x', '', 3) AS t(s, d, i)"
    ).collect()
    assert [row[0] for row in rows] == ["a,b", "b", None, None, ""]


def test_repeat_of_null_is_a_string(spark: ShimSession) -> None:
    frame = spark.sql("SELECT repeat(NULL, 2) AS r")
    assert [field.dataType.simpleString() for field in frame.schema.fields] == ["string"]
    assert frame.collect()[0][0] is None
