"""CSV files read as Spark 3.5 reads them (``spark.read.csv``, ``csv.`path```).

Defaults as in Spark: no header (columns ``_c0``, ``_c1``, …), every column a STRING, ``,``
between fields, ``"`` around quoted fields, ``\\`` as the escape, and an empty field NULL.
``header`` takes each file's first line as the column names; ``inferSchema`` gives each
column the narrowest type all its fields have (``text_values.py``); ``nullValue`` is the
text of a NULL (an empty unquoted field stays NULL, an empty quoted one is then ``""``);
a declared schema names and types the columns by position, and a field that is not a
value of its column's type is NULL.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
from pyarrow import csv

from sparkshim.errors import AnalysisException
from sparkshim.text_values import parse_text, text_type, widest

OPTIONS = frozenset({"header", "inferschema", "sep", "delimiter", "nullvalue", "quote", "escape"})


def read_csv(
    files: Sequence[Path],
    options: Mapping[str, str],
    schema: pa.Schema | None,
    time_zone: str,
) -> pa.Table:
    """The rows of ``files``; ``options`` are Spark's (keys in lower case)."""
    header = _flag(options, "header")
    texts = [_read_strings(path, options, header) for path in files]
    widths = {table.num_columns for table in texts}
    if len(widths) > 1:
        raise AnalysisException(
            message=f"the CSV files {', '.join(str(path) for path in files)} have different"
            " numbers of columns: read them one at a time"
        )
    strings = pa.concat_tables(texts) if texts else pa.table({})
    if schema is not None:
        return _as_schema(strings, schema, time_zone)
    if not _flag(options, "inferschema"):
        return strings
    return _inferred(strings, time_zone)


def _flag(options: Mapping[str, str], key: str) -> bool:
    value = options.get(key, "false").strip().lower()
    if value not in ("true", "false"):
        raise AnalysisException(
            message=f"the CSV option {key} must be true or false, not '{options[key]}'"
        )
    return value == "true"


def _single_character(options: Mapping[str, str], key: str, default: str) -> str:
    value = options.get(key, default)
    if len(value) != 1:
        raise AnalysisException(
            message=f"the CSV option {key} must be one character, not '{value}'"
        )
    return value


def _read_strings(path: Path, options: Mapping[str, str], header: bool) -> pa.Table:
    """One file's fields as strings, in columns named as Spark names them."""
    delimiter = _single_character(options, "sep", options.get("delimiter", ","))
    parse = csv.ParseOptions(
        delimiter=delimiter,
        quote_char=_single_character(options, "quote", '"'),
        escape_char=_single_character(options, "escape", "\\"),
        double_quote=True,
    )
    null_value = options.get("nullvalue", "")
    width = _width(path, parse)
    names = [f"f{index}" for index in range(width)]
    convert = csv.ConvertOptions(
        column_types=dict.fromkeys(names, pa.string()),
        null_values=sorted({"", null_value}),
        strings_can_be_null=True,
        quoted_strings_can_be_null=null_value == "",
    )
    try:
        table = csv.read_csv(
            path,
            read_options=csv.ReadOptions(column_names=names),
            parse_options=parse,
            convert_options=convert,
        )
    except pa.ArrowInvalid as failure:
        raise AnalysisException(
            message=f"the CSV file {path} has a line with another number of fields than its"
            f" first ({width}): sparkshim reads only CSV files whose lines all have the same"
            " number of fields"
        ) from failure
    if not header:
        return table.rename_columns([f"_c{index}" for index in range(width)])
    if table.num_rows == 0:
        return table
    first = table.slice(0, 1).to_pylist()[0]
    titles = [first[name] or f"_c{index}" for index, name in enumerate(names)]
    return table.slice(1).rename_columns(titles)


def _width(path: Path, parse: csv.ParseOptions) -> int:
    """The number of fields on the file's first line (0 for an empty file)."""
    try:
        reader = csv.open_csv(
            path,
            read_options=csv.ReadOptions(autogenerate_column_names=True),
            parse_options=parse,
        )
    except pa.ArrowInvalid as failure:
        if "Empty CSV file" in str(failure):
            return 0
        raise
    return len(reader.schema)


def _inferred(strings: pa.Table, time_zone: str) -> pa.Table:
    columns = []
    for column in strings.columns:
        found = pa.null()
        for value in pc.unique(column).drop_null().to_pylist():
            found = widest(found, text_type(value))
        target = pa.string() if pa.types.is_null(found) else found
        columns.append(_parsed(column, target, time_zone))
    return pa.table(columns, names=strings.column_names)


def _as_schema(strings: pa.Table, schema: pa.Schema, time_zone: str) -> pa.Table:
    """The fields as the declared columns, by position: a missing column is NULL."""
    columns = []
    for index, field in enumerate(schema):
        if index < strings.num_columns:
            columns.append(_parsed(strings.column(index), field.type, time_zone))
        else:
            columns.append(pa.nulls(strings.num_rows, field.type))
    nullable = pa.schema([field.with_nullable(True) for field in schema])  # as Spark reads
    return pa.table(columns, schema=nullable)


def _parsed(column: pa.ChunkedArray, target: pa.DataType, time_zone: str) -> pa.Array:
    if pa.types.is_string(target):
        return column.combine_chunks()
    values = [
        None if text is None else parse_text(text, target, time_zone) for text in column.to_pylist()
    ]
    return pa.array(values, target)
