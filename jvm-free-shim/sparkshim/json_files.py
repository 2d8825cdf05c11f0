"""JSON files read as Spark 3.5 reads them (``spark.read.json``, ``json.`path```).

One object per line (JSON Lines; ``multiLine`` reads a file holding one object or an array
of them). The schema is inferred as Spark infers it: a whole number is a BIGINT (a DECIMAL(n,
0) beyond BIGINT), any other number a DOUBLE, an object a STRUCT, a list an ARRAY; fields
are sorted by name; a key seen only with NULL is a STRING; an empty object's key is dropped.
Values of different kinds under one key widen (BIGINT and DOUBLE to DOUBLE) or, failing
that, are all read as STRINGs holding their JSON text. A declared schema picks the keys by
name, and a value that is not one of its column's type is NULL.

>>> str(infer({"b": 1, "a": [1.5]})), str(_merge(infer(1), infer(2.5)))
('struct<a: list<item: double>, b: int64>', 'double')
"""

from __future__ import annotations

import decimal
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from sparkshim.errors import AnalysisException, UnsupportedSqlError
from sparkshim.text_values import parse_text

OPTIONS = frozenset({"multiline"})

_LONG_RANGE = range(-(2**63), 2**63)
_MAX_PRECISION = 38


def read_json(
    files: Sequence[Path],
    options: Mapping[str, str],
    schema: pa.Schema | None,
    time_zone: str,
) -> pa.Table:
    """The rows of ``files``; ``options`` are Spark's (keys in lower case)."""
    multi_line = options.get("multiline", "false").strip().lower() == "true"
    records = [record for path in files for record in _records(path, multi_line)]
    if schema is None:
        found: pa.DataType = pa.struct([])
        for record in records:
            found = _merge(found, infer(record))
        shape = _settled(found)
        if not isinstance(shape, pa.StructType) or shape.num_fields == 0:
            raise AnalysisException(
                message="[UNABLE_TO_INFER_SCHEMA] Unable to infer schema for JSON. It must be"
                " specified manually."
            )
        schema = pa.schema(list(shape))
    schema = pa.schema([field.with_nullable(True) for field in schema])  # as Spark reads
    rows = [_value(record, pa.struct(list(schema)), time_zone) for record in records]
    return pa.Table.from_pylist(rows, schema=schema)


def _records(path: Path, multi_line: bool) -> list[dict[str, Any]]:
    text = path.read_text(encoding="utf-8")
    if multi_line:
        document = _parsed(text, path, 1)
        documents = document if isinstance(document, list) else [document]
        return [_object(item, path, 1) for item in documents]
    return [
        _object(_parsed(line, path, number), path, number)
        for number, line in enumerate(text.splitlines(), 1)
        if line.strip()
    ]


def _parsed(text: str, path: Path, line: int) -> Any:
    try:
        # Decimals keep a number's text, which a STRING column shows as written.
        return json.loads(text, parse_float=decimal.Decimal)
    except json.JSONDecodeError as failure:
        raise AnalysisException(
            message=f"line {line} of {path} is not JSON ({failure.msg}): sparkshim reads one"
            " JSON object per line (or a whole file with the option multiLine), and has no"
            " _corrupt_record column: fix or remove the line"
        ) from failure


def _object(value: Any, path: Path, line: int) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise AnalysisException(
            message=f"line {line} of {path} is not a JSON object: each row must be an object"
        )
    return value


def infer(value: Any) -> pa.DataType:
    """The type of one JSON value, before ``_settled`` (NULL and empty lists stay open)."""
    if value is None:
        return pa.null()
    if isinstance(value, bool):
        return pa.bool_()
    if isinstance(value, int):
        if value in _LONG_RANGE:
            return pa.int64()
        digits = len(str(abs(value)))
        return pa.decimal128(digits, 0) if digits <= _MAX_PRECISION else pa.float64()
    if isinstance(value, decimal.Decimal | float):
        return pa.float64()
    if isinstance(value, str):
        return pa.string()
    if isinstance(value, list):
        element: pa.DataType = pa.null()
        for item in value:
            element = _merge(element, infer(item))
        return pa.list_(element)
    fields = sorted((key, infer(item)) for key, item in value.items())
    return pa.struct([pa.field(key, kind) for key, kind in fields])


def _merge(first: pa.DataType, second: pa.DataType) -> pa.DataType:
    """The type holding values of both (Spark's JSON ``compatibleType``)."""
    if first == second or pa.types.is_null(second):
        return first
    if pa.types.is_null(first):
        return second
    if isinstance(first, pa.StructType) and isinstance(second, pa.StructType):
        merged = {field.name: field.type for field in first}
        for field in second:
            merged[field.name] = _merge(merged.get(field.name, pa.null()), field.type)
        return pa.struct([pa.field(name, merged[name]) for name in sorted(merged)])
    if isinstance(first, pa.ListType) and isinstance(second, pa.ListType):
        return pa.list_(_merge(first.value_type, second.value_type))
    numbers = {first, second}
    if pa.float64() in numbers and all(_is_number(kind) for kind in numbers):
        return pa.float64()
    if all(pa.types.is_decimal(kind) or kind == pa.int64() for kind in numbers):
        precision = max(kind.precision if pa.types.is_decimal(kind) else 20 for kind in numbers)
        return pa.decimal128(precision, 0)
    return pa.string()


def _is_number(kind: pa.DataType) -> bool:
    return bool(
        pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_decimal(kind)
    )


def _settled(kind: pa.DataType) -> pa.DataType | None:
    """The inferred type as Spark leaves it: NULL is a STRING; an empty STRUCT is dropped
    (None), with the field or list that holds it."""
    if pa.types.is_null(kind):
        return pa.string()
    if isinstance(kind, pa.ListType):
        element = _settled(kind.value_type)
        return None if element is None else pa.list_(element)
    if isinstance(kind, pa.StructType):
        fields = [(field.name, _settled(field.type)) for field in kind]
        kept = [pa.field(name, settled) for name, settled in fields if settled is not None]
        return pa.struct(kept) if kept else None
    return kind


def _value(value: Any, target: pa.DataType, time_zone: str) -> Any:
    """``value`` as a value of ``target`` (None where it is not one)."""
    if value is None:
        return None
    if pa.types.is_string(target):
        return value if isinstance(value, str) else _json_text(value)
    if isinstance(target, pa.StructType):
        if not isinstance(value, dict):
            return None
        return {
            field.name: _value(value.get(field.name), field.type, time_zone) for field in target
        }
    if isinstance(target, pa.ListType):
        if not isinstance(value, list):
            return None
        return [_value(item, target.value_type, time_zone) for item in value]
    if isinstance(value, (dict, list)):
        return None
    if isinstance(value, bool):
        return value if pa.types.is_boolean(target) else None
    if isinstance(value, str):
        return parse_text(value, target, time_zone) if _from_text(target) else None
    return _number(value, target, time_zone)


def _from_text(target: pa.DataType) -> bool:
    """Whether Spark reads a JSON string as a value of ``target`` (dates and timestamps)."""
    return bool(pa.types.is_date32(target) or pa.types.is_timestamp(target))


def _number(value: int | decimal.Decimal, target: pa.DataType, time_zone: str) -> Any:
    if pa.types.is_floating(target):
        return float(value)
    if pa.types.is_integer(target) or pa.types.is_decimal(target):
        return parse_text(str(value), target, time_zone)
    if pa.types.is_boolean(target) or _from_text(target):
        return None
    raise UnsupportedSqlError(
        f"reading JSON as {target}", "declare the column as STRING and cast it in a query"
    )


def _json_text(value: Any) -> str:
    """A value's JSON text, as Spark shows a non-string value in a STRING column."""
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value, separators=(",", ":"), default=str)
