"""Data addressed by its path instead of a table name: ``parquet.`/data/p```,
``csv.`…```, ``json.`…```, ``delta.`…``` in SQL, and ``spark.read`` (reader.py), which
builds the same ``FileSource`` as the SQL path does: one implementation of reading files.

A path names a file or a folder; a folder's files are read, less those whose names start
with ``_`` or ``.`` (as Spark skips them); parquet folders may hold Hive-style partition
folders (``key=value``). Delta paths are read from the Delta log (query.py), not here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as ds
from sqlglot import exp

from sparkshim import csv_files, json_files
from sparkshim.catalog import is_delta_table
from sparkshim.errors import AnalysisException, UnsupportedSqlError
from sparkshim.types import normalize_table

DELTA = "delta"
# Each format read by path, with the reading options the shim honours (lower case).
OPTIONS: Mapping[str, frozenset[str]] = {
    DELTA: frozenset({"versionasof", "timestampasof"}),
    "parquet": frozenset(),
    "csv": csv_files.OPTIONS,
    "json": json_files.OPTIONS,
}
FORMATS = frozenset(OPTIONS)


@dataclass(frozen=True)
class FileSource:
    """The data at ``path`` in ``format``, read with Spark's ``options`` (keys in lower
    case) and, where given, as the declared ``schema``."""

    format: str
    path: Path
    options: Mapping[str, str] = field(default_factory=dict)
    schema: pa.Schema | None = None


def addressed(table: exp.Table) -> FileSource | None:
    """The source a ``format.`path``` reference names; None for any other table name.

    >>> addressed(exp.to_table("parquet.`/data/p`", dialect="spark"))
    FileSource(format='parquet', path=PosixPath('/data/p'), options={}, schema=None)
    >>> addressed(exp.to_table("sales.orders")) is None
    True
    """
    if not table.db or table.args.get("catalog") is not None:
        return None
    kind = table.db.lower()
    if kind not in FORMATS:
        return None
    return FileSource(kind, local_path(table.name))


def delta_location(table: exp.Table) -> Path | None:
    """The folder a ``delta.`path``` reference names, checked to hold a Delta table;
    None for any other reference."""
    source = addressed(table)
    if source is None or source.format != DELTA:
        return None
    return delta_table_at(source.path)


def delta_table_at(path: Path) -> Path:
    """``path``, checked to hold a Delta table (Spark's error when it does not)."""
    if not is_delta_table(path):
        raise AnalysisException(message=f"[DELTA_MISSING_DELTA_TABLE] {path} is not a Delta table.")
    return path


def local_path(text: str) -> Path:
    """A path as Spark takes it: ``file:`` URIs and relative paths (to the working folder)."""
    if text.startswith("file://"):
        text = text[len("file://") :]
    elif text.startswith("file:"):
        text = text[len("file:") :]
    if "://" in text:
        raise UnsupportedSqlError(f"reading {text}", "sparkshim reads local files only")
    return Path(text).absolute()


def check_options(format_name: str, options: Mapping[str, str]) -> None:
    """Refuse an option the shim would otherwise ignore (Spark ignores unknown ones, but
    an ignored ``multiline`` or ``dateFormat`` would read other values)."""
    known = OPTIONS.get(format_name)
    if known is None:
        readable = ", ".join(sorted(FORMATS))
        raise UnsupportedSqlError(f"reading the format '{format_name}'", f"read {readable}")
    for key in options:
        if key not in known:
            allowed = ", ".join(sorted(known)) or "none"
            raise UnsupportedSqlError(
                f"the {format_name} reading option '{key}'",
                f"the options sparkshim honours for {format_name} are: {allowed}",
            )


def read_files(source: FileSource, time_zone: str) -> pa.Table:
    """The rows of a parquet, CSV or JSON source."""
    check_options(source.format, source.options)
    if not source.path.exists():
        raise AnalysisException(
            message=f"[PATH_NOT_FOUND] Path does not exist: {source.path.as_uri()}."
        )
    if source.format == "parquet":
        return _read_parquet(source)
    files = _data_files(source.path)
    if not files and source.schema is None:
        raise AnalysisException(
            message=f"[UNABLE_TO_INFER_SCHEMA] Unable to infer schema for"
            f" {source.format.upper()}. It must be specified manually."
        )
    if source.format == "csv":
        return csv_files.read_csv(files, source.options, source.schema, time_zone)
    return json_files.read_json(files, source.options, source.schema, time_zone)


def _read_parquet(source: FileSource) -> pa.Table:
    dataset = ds.dataset(source.path, format="parquet", partitioning="hive")
    if not dataset.files:
        raise AnalysisException(
            message="[UNABLE_TO_INFER_SCHEMA] Unable to infer schema for Parquet. It must be"
            " specified manually."
        )
    if source.schema is not None:
        return dataset.to_table(columns=source.schema.names).cast(source.schema)
    return normalize_table(dataset.to_table())


def _data_files(path: Path) -> list[Path]:
    """The files a path names: itself, or a folder's files (not its subfolders')."""
    if path.is_file():
        return [path]
    entries = sorted(p for p in path.iterdir() if not p.name.startswith(("_", ".")))
    folders = [entry for entry in entries if entry.is_dir()]
    if folders:
        raise UnsupportedSqlError(
            f"reading the subfolders of {path} (such as {folders[0].name})",
            "name each folder of files itself",
        )
    return entries
