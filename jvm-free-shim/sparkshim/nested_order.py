"""Spark's order of STRUCT and ARRAY values, in DuckDB.

Spark compares structs field by field and arrays element by element, a NULL field or
element below every value (so ``max(struct(ts, v)).v``, the latest ``v`` by ``ts``, skips
rows whose ``ts`` is NULL). DuckDB puts a NULL inside a nested value above every value,
whatever the NULLS FIRST/LAST of the ordering. ``order_key`` builds a value DuckDB orders
as Spark orders the original: each field or element becomes a pair (is it set, its own
key), the flag first; the key of a NULL value is NULL, so aggregates skip it as they skip
the value.

>>> from sqlglot import exp
>>> order_key(exp.column("s"), "struct<a:int,b:array<int>>").sql("duckdb")[:57]
"CASE WHEN s IS NULL THEN NULL ELSE {'n0': NOT STRUCT_EXTR"
"""

from __future__ import annotations

import itertools

from pyspark.sql.types import ArrayType, DataType, MapType, StructType
from sqlglot import exp

from sparkshim.types import parse_ddl_spark_type

__all__ = ["is_nested", "keyed", "order_key"]


def order_key(value: exp.Expr, spark_type: object) -> exp.Expr | None:
    """A DuckDB value ordered as Spark orders ``value`` (a translated expression of Spark
    type ``spark_type``, a simpleString; or a ``struct(...)`` whose fields are typed
    where known); None where DuckDB's own order is Spark's (no nested value) or Spark
    has none (a map)."""
    parsed = _nested_type(spark_type)
    if isinstance(value, exp.Struct):
        return _struct_literal_key(value, parsed, itertools.count())
    if parsed is None:
        return None
    return _key(value, parsed, itertools.count())


def is_nested(spark_type: object) -> bool:
    """Whether a Spark type (a simpleString) is a STRUCT, ARRAY or MAP."""
    return isinstance(spark_type, str) and spark_type.startswith(("struct<", "array<", "map<"))


def keyed(value: exp.Expr, key: exp.Expr) -> exp.Expr:
    """``{'k': key, 'v': value}``, which DuckDB orders by the key first, NULL where the
    key is (so that greatest, least and sorts skip or place it as a NULL value)."""
    pair = exp.Struct(
        expressions=[
            exp.PropertyEQ(this=exp.to_identifier("k"), expression=key.copy()),
            exp.PropertyEQ(this=exp.to_identifier("v"), expression=value.copy()),
        ]
    )
    return exp.Case().when(exp.Is(this=key.copy(), expression=exp.Null()), exp.Null()).else_(pair)


def _nested_type(spark_type: object) -> DataType | None:
    if not isinstance(spark_type, str) or not spark_type.startswith(("struct<", "array<")):
        return None
    try:
        return parse_ddl_spark_type(spark_type)
    except Exception:  # a type text this parser does not read: DuckDB's order stays
        return None


def _key(value: exp.Expr, spark_type: DataType, names: itertools.count[int]) -> exp.Expr | None:
    if isinstance(spark_type, MapType):
        return None
    if isinstance(spark_type, StructType):
        pairs: list[tuple[exp.Expr, exp.Expr]] = []
        for field in spark_type.fields:
            member: exp.Expr = exp.Anonymous(
                this="STRUCT_EXTRACT", expressions=[value.copy(), exp.Literal.string(field.name)]
            )
            inner = _key(member, field.dataType, names)
            if inner is None and _is_nested(field.dataType):
                return None
            pairs.append((member, inner if inner is not None else member))
        return _null_if_null(value, _flagged(pairs))
    if isinstance(spark_type, ArrayType):
        element = exp.to_identifier(f"__order_element{next(names)}")
        inner = _key(exp.column(element), spark_type.elementType, names)
        if inner is None and _is_nested(spark_type.elementType):
            return None
        each = _flagged([(exp.column(element), inner or exp.column(element))])
        transformed = exp.Anonymous(
            this="LIST_TRANSFORM",
            expressions=[value.copy(), exp.Lambda(this=each, expressions=[element])],
        )
        return _null_if_null(value, transformed)
    return value


def _struct_literal_key(
    value: exp.Struct, spark_type: DataType | None, names: itertools.count[int]
) -> exp.Expr | None:
    """The key of ``struct(a, b)`` / ``named_struct('a', a, …)``: never NULL itself; its
    fields by position, each keyed by its type where that is known (a field of a nested
    type the typing does not know keeps DuckDB's order inside it)."""
    types: list[DataType | None] = [None] * len(value.expressions)
    if isinstance(spark_type, StructType) and len(spark_type.fields) == len(types):
        types = [field.dataType for field in spark_type.fields]
    pairs: list[tuple[exp.Expr, exp.Expr]] = []
    for field, field_type in zip(value.expressions, types, strict=True):
        member = field.expression if isinstance(field, exp.PropertyEQ) else field
        inner = None if field_type is None else _key(member, field_type, names)
        if inner is None and field_type is not None and _is_nested(field_type):
            return None
        pairs.append((member, inner if inner is not None else member))
    return _flagged(pairs)


def _flagged(pairs: list[tuple[exp.Expr, exp.Expr]]) -> exp.Expr:
    """A struct of ``n<i>`` (the i-th value is set) and ``v<i>`` (its key) per pair."""
    fields: list[exp.Expr] = []
    for index, (member, key) in enumerate(pairs):
        is_set = exp.Not(this=exp.Is(this=member.copy(), expression=exp.Null()))
        fields.append(exp.PropertyEQ(this=exp.to_identifier(f"n{index}"), expression=is_set))
        fields.append(exp.PropertyEQ(this=exp.to_identifier(f"v{index}"), expression=key.copy()))
    return exp.Struct(expressions=fields)


def _null_if_null(value: exp.Expr, key: exp.Expr) -> exp.Expr:
    is_null = exp.Is(this=value.copy(), expression=exp.Null())
    return exp.Case().when(is_null, exp.Null()).else_(key)


def _is_nested(spark_type: DataType) -> bool:
    return isinstance(spark_type, (StructType, ArrayType, MapType))
