"""Which columns of a new Parquet file get min/max statistics: none that holds a NaN.

Parquet's min/max leave NaN out (the format says so; pyarrow and delta-rs write them so),
while DuckDB orders NaN above every value and trusts those bounds: over a file holding
``[1.5, NaN]`` with min = max = 1.5, it folds ``x <= 9`` to true and skips the file for
``x > 9``, though NaN is above 9 there as in Spark (duckdb/duckdb#25521). Spark's writer
and DuckDB's own write no min/max for a floating-point column holding a NaN; sparkshim's
writes do the same. A nested column holding a NaN somewhere has no statistics either.

>>> import pyarrow as pa
>>> statistics_columns(pa.table({"a": [1.0, 2.0], "b": ["x", "y"]}))
True
>>> statistics_columns(pa.table({"a": [1.0, float("nan")], "b": ["x", "y"]}))
['b']
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
from deltalake import ColumnProperties, WriterProperties

from sparkshim.types import holds_type

__all__ = [
    "delta_rs_rewrite_properties",
    "delta_rs_writer_properties",
    "holds_nan",
    "statistics_columns",
]


def holds_nan(values: pa.Array | pa.ChunkedArray) -> bool:
    """Whether a floating-point value anywhere in ``values`` (nested ones too) is NaN."""
    if isinstance(values, pa.ChunkedArray):
        return any(holds_nan(chunk) for chunk in values.chunks)
    kind = values.type
    if pa.types.is_floating(kind):
        return bool(pc.any(pc.is_nan(values)).as_py())
    if pa.types.is_struct(kind):
        return any(holds_nan(values.field(index)) for index in range(kind.num_fields))
    if pa.types.is_map(kind):
        return holds_nan(values.keys) or holds_nan(values.items)
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        return holds_nan(values.flatten())
    return False


def _columns_with_nan(data: pa.Table) -> list[str]:
    return [
        name
        for name, column in zip(data.column_names, data.columns, strict=True)
        if holds_nan(column)
    ]


def statistics_columns(data: pa.Table) -> bool | list[str]:
    """pyarrow's ``write_statistics`` for ``data``: True (every column) when no column
    holds a NaN, else the columns that keep them (the flat ones without a NaN; a nested
    column's leaves are named by paths, so the nested ones lose theirs)."""
    with_nan = set(_columns_with_nan(data))
    if not with_nan:
        return True
    return [
        field.name
        for field in data.schema
        if field.name not in with_nan and not pa.types.is_nested(field.type)
    ]


def delta_rs_writer_properties(data: pa.Table) -> WriterProperties:
    """delta-rs's writer settings for ``data``: its defaults when no column holds a NaN,
    else no statistics for the columns that do (for every column, when one of them is
    nested)."""
    return _without_statistics(data.schema, _columns_with_nan(data))


def delta_rs_rewrite_properties(schema: pa.Schema) -> WriterProperties:
    """delta-rs's writer settings for its rewrite of a table's files (the MERGE that
    applies an UPDATE, DELETE or MERGE to a table without deletion vectors): the rows it
    copies from the old files are not seen here, and any may hold a NaN, so no
    statistics for a column holding floating-point values (for every column, when such a
    column is nested). Without this, a file whose column holds a NaN got min/max bounds
    that leave the NaN out, and DuckDB answered ``x > 9`` and ``max(x)`` from them."""
    floating = [f.name for f in schema if holds_type(f.type, pa.types.is_floating)]
    return _without_statistics(schema, floating)


def _without_statistics(schema: pa.Schema, columns: list[str]) -> WriterProperties:
    """delta-rs's settings writing no statistics for ``columns`` of ``schema`` (for no
    column, when one of them is nested: its leaves are named by paths)."""
    if not columns:
        return WriterProperties()
    none = ColumnProperties(statistics_enabled="NONE")
    if any(pa.types.is_nested(schema.field(name).type) for name in columns):
        return WriterProperties(default_column_properties=none)
    return WriterProperties(column_properties=dict.fromkeys(columns, none))
