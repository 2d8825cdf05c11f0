"""split by a regex that matches empty text: Spark (Java's split) keeps an empty last part
(``split('abc', 'x*')`` is ``['a', 'b', 'c', '']`` in PySpark 3.5) and places the empty
parts between matches its own way (``split('bab', 'b*')`` is ``['', '', 'a', '', '']``),
where DuckDB gave ``['a', 'b', 'c']``: such a pattern is refused. The empty pattern and
patterns that match at least one character split as in PySpark 3.5."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparkshim import ShimSession, UnsupportedSqlError

pytestmark = pytest.mark.embedded


@pytest.fixture
def spark(tmp_path: Path) -> ShimSession:
    return ShimSession(warehouse=str(tmp_path / "warehouse"))


@pytest.mark.parametrize("pattern", ["x*", "[0-9]*", "b*", "a|", "^", "\\\\b"])
def test_a_pattern_matching_empty_text_is_refused(spark: ShimSession, pattern: str) -> None:
    with pytest.raises(UnsupportedSqlError, match="split by a pattern that matches empty text"):
        spark.sql(f"SELECT split('a1b', '{pattern}')").collect()


def test_other_patterns_split_as_spark(spark: ShimSession) -> None:
    row = spark.sql(
        "SELECT split('abc', ''), split('', ''), split('a,b', ','), split('a,,b,', ','),"
        " split('a1b22c', '[0-9]+'), split('a[b', '[^a-z]')"
    ).collect()[0]
    assert tuple(row) == (
        ["a", "b", "c"],
        [""],
        ["a", "b"],
        ["a", "", "b", ""],
        ["a", "b", "c"],
        ["a", "b"],
    )
