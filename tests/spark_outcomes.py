"""What a script of statements leaves, comparable between PySpark and the embedded engine:
the tests that run one script on both (parquet tables on Spark, Delta here) compare these."""

from __future__ import annotations

from typing import Any


def outcome(session: Any, statements: list[str], query: str, table_format: str) -> Any:
    """The columns and rows (sorted) of ``query`` after ``statements`` (each formatted
    with ``fmt=table_format``), or the error class of the first statement refused."""
    try:
        for statement in statements:
            session.sql(statement.format(fmt=table_format)).collect()
        result = session.sql(query)
        columns, rows = result.columns, result.collect()
    except Exception as failure:  # either engine's AnalysisException
        text = str(failure)
        return text[text.index("[") : text.index("]") + 1] if "[" in text else text
    return columns, sorted((tuple(row) for row in rows), key=repr)
