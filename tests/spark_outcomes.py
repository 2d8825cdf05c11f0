"""What a script of statements leaves, comparable between PySpark and the embedded engine:
the tests that run one script on both (parquet tables on Spark, Delta here) compare these,
each on a shim session of its own and the one PySpark session of the run."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sparkshim import ShimSession


def outcome(session: Any, statements: list[str], query: str, table_format: str) -> Any:
    """The columns and rows (sorted) of ``query`` after ``statements`` (each formatted
    with ``fmt=table_format``), or the error class of the first statement refused."""
    try:
        for statement in statements:
            session.sql(statement.format(fmt=table_format)).collect()
        result = session.sql(query)
        columns, rows = result.columns, result.collect()
    except Exception as failure:  # either engine's AnalysisException
        return _error_class(failure)
    return columns, sorted((tuple(row) for row in rows), key=repr)


def typed_answer(session: Any, query: str) -> Any:
    """The schema (``simpleString``) and rows (sorted) of ``query``, or the error class it
    raises."""
    try:
        result = session.sql(query)
        schema, rows = result.schema.simpleString(), result.collect()
    except Exception as failure:  # either engine's AnalysisException
        return _error_class(failure)
    return schema, sorted((tuple(row) for row in rows), key=repr)


def _error_class(failure: Exception) -> str:
    text = str(failure)
    return text[text.index("[") : text.index("]") + 1] if "[" in text else text


def shim_with_tables(tmp_path: Path, statements: list[str]) -> Iterator[ShimSession]:
    """``shim_session`` after ``statements`` (each formatted with ``fmt=delta``)."""
    for session in shim_session(tmp_path):
        for statement in statements:
            session.sql(statement.format(fmt="delta"))
        yield session


def sparks_typed_answers(
    spark: Any, tables: tuple[str, ...], statements: list[str], cases: list[tuple[str, Any]]
) -> list[tuple[str, Any]]:
    """``cases`` (query, answer) with PySpark's ``typed_answer`` of each query after
    ``statements`` (parquet tables), for a test to compare with the answers it records;
    ``tables``, those the statements create, are dropped before and after."""
    _drop(spark, tables)
    try:
        for statement in statements:
            spark.sql(statement.format(fmt="parquet"))
        return [(query, typed_answer(spark, query)) for query, _ in cases]
    finally:
        _drop(spark, tables)


def shim_session(tmp_path: Path) -> Iterator[ShimSession]:
    """A shim session whose warehouse is under ``tmp_path``, stopped after the test: what
    a module's ``shim`` fixture yields from."""
    session = ShimSession(warehouse=str(tmp_path / "warehouse"))
    yield session
    session.stop()


def spark_and_shim_outcomes(
    spark: Any, shim: Any, tables: tuple[str, ...], statements: list[str], query: str
) -> tuple[Any, Any]:
    """The outcomes of one script on PySpark (parquet) and on the shim (Delta), for the
    test to compare. The PySpark session is shared by the whole run, so ``tables``, the
    ones the script creates, are dropped there before (a failed test may have left them)
    and after."""
    _drop(spark, tables)
    try:
        expected = outcome(spark, statements, query, "parquet")
    finally:
        _drop(spark, tables)
    return expected, outcome(shim, statements, query, "delta")


def _drop(spark: Any, tables: tuple[str, ...]) -> None:
    for table in tables:
        spark.sql(f"DROP TABLE IF EXISTS {table}")
