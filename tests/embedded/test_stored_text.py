"""A value written into a STRING column is stored as Spark's store assignment casts it:
its CAST's text. The embedded engine stored Arrow's conversion instead, for good: a
TIMESTAMP became ``2024-05-06 01:02:03.000000Z``, a DOUBLE ``1e+20`` or ``100``, NaN ``nan``
(an INSERT, an UPDATE's SET, a MERGE's SET and INSERT). The texts expected are real
PySpark 3.5's (a differential fuzzer found them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparkshim import ShimSession

pytestmark = pytest.mark.embedded

# A value and the text Spark stores for it in a STRING column.
STORED = (
    ("TIMESTAMP'2024-05-06 01:02:03'", "2024-05-06 01:02:03"),
    ("TIMESTAMP'2024-05-06 01:02:03.120'", "2024-05-06 01:02:03.12"),
    ("1e20D", "1.0E20"),
    ("100.0D", "100.0"),
    ("1e-5D", "1.0E-5"),
    ("CAST('NaN' AS DOUBLE)", "NaN"),
    ("-0.0D", "-0.0"),
    ("CAST(1e10 AS FLOAT)", "1.0E10"),
    ("true", "true"),
    ("DATE'2024-01-05'", "2024-01-05"),
    ("1.50BD", "1.50"),
    ("7", "7"),
)


@pytest.fixture
def session(tmp_path: Path) -> ShimSession:
    shim = ShimSession(warehouse=str(tmp_path / "warehouse"))
    shim.conf.set("spark.sql.session.timeZone", "UTC")
    shim.sql("CREATE TABLE t (n INT, s STRING) USING delta")
    return shim


def _stored(session: ShimSession) -> list[str | None]:
    return [row[0] for row in session.sql("SELECT s FROM t ORDER BY n").collect()]


def test_an_insert_stores_spark_text(session: ShimSession) -> None:
    for number, (value, _) in enumerate(STORED):
        session.sql(f"INSERT INTO t VALUES ({number}, {value})")
    session.sql("INSERT INTO t SELECT 100, NULL")
    assert _stored(session) == [text for _, text in STORED] + [None]


def test_an_update_stores_spark_text(session: ShimSession) -> None:
    session.sql(f"INSERT INTO t VALUES {', '.join(f'({n}, NULL)' for n in range(len(STORED)))}")
    for number, (value, _) in enumerate(STORED):
        session.sql(f"UPDATE t SET s = {value} WHERE n = {number}")
    assert _stored(session) == [text for _, text in STORED]


def test_a_merge_stores_spark_text(session: ShimSession) -> None:
    session.sql("INSERT INTO t VALUES (0, 'old')")
    session.sql("CREATE TABLE u (n INT, ts TIMESTAMP, d DOUBLE) USING delta")
    session.sql("INSERT INTO u VALUES (0, TIMESTAMP'2024-01-01 10:00:00', 1e20D)")
    session.sql("INSERT INTO u VALUES (1, TIMESTAMP'2024-01-02 10:00:00.5', 100.0D)")
    session.sql(
        "MERGE INTO t USING u ON t.n = u.n WHEN MATCHED THEN UPDATE SET s = u.ts"
        " WHEN NOT MATCHED THEN INSERT (n, s) VALUES (u.n, u.d)"
    )
    assert _stored(session) == ["2024-01-01 10:00:00", "100.0"]
