"""Where a table's rows are, by value: a per-file index of row hashes, so that a statement
that looks up a few row values (a refresh's MERGE, the copies a dynamic table holds of
the rows a change touches), or rows by a few of their columns (the table rows of a
ranking window's updated rows), reads neither the table's data files nor more of the
index than the values it looks up.

Each data file of a table with deletion vectors gets an index file the first time it is
looked up (files never change once written):
``_sparkshim_row_index/<data file>.<tag>.<schema>`` in the table's folder, where Delta
readers never look (a folder whose name starts with ``_``). It holds, for every row of
the file as the table's schema reads it (a column added since reads as NULL; the name
records the schema, so a schema change means new indexes), a 64-bit hash of the row's
values and a second, independent 32-bit one (DuckDB's ``hash`` of the columns, and of the
columns in reverse order after a constant; a DECIMAL of more than 18 digits with its DOUBLE
beside it, see ``_hashed_values``), and the row's position, sorted by the first
hash; it is read by memory mapping, so a lookup touches a few pages per value. Two rows
are taken for equal when both hashes are (a 96-bit identity: for 2,000 values looked up
among 16M rows, a false match has a probability of about 10^-18), and rows a file's
deletion vector removes are left out. A lookup by some of the columns has an index of
those columns of its own (``<schema>-<columns>``); the rows' other columns are then read
from the data files at the positions found. The tag names the hashing scheme and DuckDB's
version (its hash function is not promised to stay the same): an index of another tag is
ignored and built again. ``VACUUM`` deletes the index files no lookup reads.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa
from sqlglot import exp

from sparkshim.conditions import VOLATILE, conjuncts, on_one_side
from sparkshim.types import holds_type

FOLDER = "_sparkshim_row_index"
_SCHEME = 2  # 2: a wide DECIMAL hashed with its DOUBLE (see _hashed_values)
TAG = f"rows-v{_SCHEME}-duckdb-{duckdb.__version__}"
_MAGIC = b"SHIMRIX1"
_HEADER = 16  # the magic, then the row count (little-endian 64-bit)
_SALT = "sparkshim-row-index"


def hash_columns(columns: list[tuple[exp.Expr, pa.DataType]]) -> tuple[exp.Expr, exp.Expr]:
    """The two hashes of a row whose values are ``columns`` (in the table's order, each
    already in the table's type, given beside it): DuckDB SQL expressions."""
    values = [hashed for column, kind in columns for hashed in _hashed_values(column, kind)]
    first = exp.func("hash", *[value.copy() for value in values])
    reverse = [exp.Literal.string(_SALT), *[value.copy() for value in reversed(values)]]
    second = exp.BitwiseAnd(
        this=exp.func("hash", *reverse), expression=exp.Literal.number(0xFFFFFFFF)
    )
    return first, second


def _hashed_values(column: exp.Expr, kind: pa.DataType) -> list[exp.Expr]:
    """What a row's hashes take of one column: its value, and for a DECIMAL of more than
    18 digits its DOUBLE too (for a nested value holding one, its text). DuckDB holds such
    a DECIMAL as a 128-bit integer, whose hash XORs the hashes of its two halves: -1 and 0
    (-0.0001 and 0.0000 at scale 4) hash alike, and the index took one for the other."""
    if not holds_type(kind, _is_wide_decimal):
        return [column]
    beside = "DOUBLE" if pa.types.is_decimal(kind) else "VARCHAR"
    return [column, exp.cast(column.copy(), exp.DataType.build(beside))]


def _is_wide_decimal(kind: pa.DataType) -> bool:
    return pa.types.is_decimal(kind) and bool(kind.precision > _DECIMAL_IN_64_BITS)


_DECIMAL_IN_64_BITS = 18  # digits DuckDB holds in a 64-bit integer


@dataclass(frozen=True)
class RowHashes:
    """Rows' two hashes (``hash_columns``), in the rows' order."""

    first: np.ndarray[Any, Any]  # uint64
    second: np.ndarray[Any, Any]  # uint32

    def take(self, rows: np.ndarray[Any, Any]) -> RowHashes:
        """The hashes of the rows numbered ``rows``, in that order."""
        return RowHashes(self.first[rows], self.second[rows])

    def sort(self) -> SortedProbes:
        """These hashes as probes of ``matches``: sorted once for every file searched."""
        order = np.argsort(self.first, kind="stable")
        return SortedProbes(self.first[order], self.second[order], order)


@dataclass(frozen=True)
class SortedProbes:
    """Probes' hashes in the order of the first, each with its number among the probes: a
    binary search for sorted keys walks an index's pages in order (3x faster over a
    16M-row index than in the probes' order)."""

    first: np.ndarray[Any, Any]  # uint64, ascending
    second: np.ndarray[Any, Any]  # uint32
    numbers: np.ndarray[Any, Any]  # int64: each probe's number


@dataclass(frozen=True)
class FileIndex:
    """One data file's index, memory-mapped: hashes sorted by the first."""

    first: np.ndarray[Any, Any]  # uint64, ascending
    second: np.ndarray[Any, Any]  # uint32
    positions: np.ndarray[Any, Any]  # uint32 (a file holds fewer than 2^32 rows)


def index_path(
    location: Path, data_file: str, schema: pa.Schema, columns: list[str] | None = None
) -> Path:
    """Where the index of ``data_file`` read as ``schema`` is: the hashes are of the
    file's rows as the table's columns hold them (a column added since reads as NULL),
    so an index is kept per schema; and per set of ``columns`` hashed (in the table's
    order; None: every column). An index of some columns is named after the schema's,
    with the columns' own fingerprint after it."""
    name = f"{Path(data_file).name}.{TAG}.{_fingerprint(schema)}"
    if columns is not None and columns != schema.names:
        name += f"-{_digest(json.dumps(columns))}"
    return location / FOLDER / name


@functools.lru_cache(maxsize=64)  # (a lookup names one index per data file)
def _fingerprint(schema: pa.Schema) -> str:
    return _digest(json.dumps([[field.name, str(field.type)] for field in schema]))


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def load(path: Path) -> FileIndex | None:
    """The index at ``path`` (kept open per path), or None when there is none."""
    with _lock:
        kept = _opened.get(str(path))
    if kept is not None:
        return kept
    try:
        header = np.fromfile(path, dtype=np.uint8, count=_HEADER)
    except FileNotFoundError:
        return None
    if header.size < _HEADER or header[:8].tobytes() != _MAGIC:
        return None
    rows = int(header[8:].view("<u8")[0])
    if path.stat().st_size != _HEADER + rows * 16:
        return None  # cut short: built again
    mapped = np.memmap(path, dtype=np.uint8, mode="r")
    index = FileIndex(
        mapped[_HEADER : _HEADER + rows * 8].view("<u8"),
        mapped[_HEADER + rows * 8 : _HEADER + rows * 12].view("<u4"),
        mapped[_HEADER + rows * 12 : _HEADER + rows * 16].view("<u4"),
    )
    with _lock:
        if len(_opened) >= _KEPT_OPEN:
            _opened.pop(next(iter(_opened)))
        _opened[str(path)] = index
    return index


def build(cursor: duckdb.DuckDBPyConnection, path: Path, hashed_rows_sql: str) -> FileIndex:
    """Write the index of one data file from ``hashed_rows_sql`` (DuckDB SQL giving each
    row's two hashes and its position, in columns ``h1``, ``h2``, ``pos``)."""
    # Sorted by DuckDB (on every core: 16M rows in about a second, where numpy's argsort
    # takes 3-4).
    rows = cursor.sql(f"SELECT * FROM ({hashed_rows_sql}) ORDER BY h1").to_arrow_table()
    first = rows.column("h1").to_numpy().astype("<u8", copy=False)
    second = rows.column("h2").to_numpy().astype("<u4")
    positions = rows.column("pos").to_numpy().astype("<u4")
    return _written(path, first, second, positions)


def write(path: Path, hashes: RowHashes) -> FileIndex:
    """Write the index of one data file whose rows' hashes, in the file's order, are
    ``hashes`` (a file just written: few rows, sorted here)."""
    order = np.argsort(hashes.first, kind="stable")
    first = hashes.first[order].astype("<u8", copy=False)
    second = hashes.second[order].astype("<u4", copy=False)
    return _written(path, first, second, order.astype("<u4"))


def _written(
    path: Path,
    first: np.ndarray[Any, Any],
    second: np.ndarray[Any, Any],
    positions: np.ndarray[Any, Any],
) -> FileIndex:
    """Write an index (entries sorted by the first hash) to a temporary file renamed into
    place, so that a reader never sees half an index; the index, loaded."""
    path.parent.mkdir(exist_ok=True)
    staged = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    with staged.open("wb") as out:
        out.write(_MAGIC)
        out.write(np.array([len(first)], dtype="<u8").tobytes())
        out.write(first.tobytes())
        out.write(second.tobytes())
        out.write(positions.tobytes())
    os.replace(staged, path)
    loaded = load(path)
    assert loaded is not None
    return loaded


def matches(index: FileIndex, probes: SortedProbes) -> pa.Table:
    """The rows of the file whose hashes equal a probe's: ``probe`` (the probe's number)
    and ``position``, one row per match, in the probes' numbers' order."""
    low = np.searchsorted(index.first, probes.first, side="left")
    # Most probes have no row in a given file (a table's rows are spread over its files):
    # only those whose first hash is there are followed further.
    inside = np.nonzero(low < index.first.size)[0]
    (found,) = np.nonzero(index.first[low[inside]] == probes.first[inside])
    found = inside[found]
    if not found.size:
        return _no_matches()
    counts = _run_lengths(index.first, probes.first[found], low[found])
    # Each found probe's run of equal first hashes, flattened: start + 0, 1, … within it.
    sorted_numbers = np.repeat(found, counts)
    starts = np.repeat(low[found], counts)
    offsets = np.arange(sorted_numbers.size) - np.repeat(np.cumsum(counts) - counts, counts)
    slots = starts + offsets
    same = index.second[slots] == probes.second[sorted_numbers]
    numbers = probes.numbers[sorted_numbers[same]]
    in_probe_order = np.argsort(numbers, kind="stable")
    return pa.table(
        {
            "probe": pa.array(numbers[in_probe_order].astype(np.int64)),
            "position": pa.array(index.positions[slots[same][in_probe_order]].astype(np.int64)),
        }
    )


def _run_lengths(
    hashes: np.ndarray[Any, Any], wanted: np.ndarray[Any, Any], starts: np.ndarray[Any, Any]
) -> np.ndarray[Any, Any]:
    """How many entries of the sorted ``hashes`` from each of ``starts`` on equal the
    ``wanted`` hash there: a few steps per value (most values have one copy or none),
    then a second binary search for the values with more copies than that."""
    counts = np.zeros(starts.size, dtype=np.int64)
    open_runs = np.arange(starts.size)
    for _ in range(_STEPS):
        at = starts[open_runs] + counts[open_runs]
        inside = at < hashes.size
        open_runs, at = open_runs[inside], at[inside]
        open_runs = open_runs[hashes[at] == wanted[open_runs]]
        counts[open_runs] += 1
        if not open_runs.size:
            return counts
    ends = np.searchsorted(hashes, wanted[open_runs], side="right")
    counts[open_runs] = ends - starts[open_runs]
    return counts


_STEPS = 4  # copies counted by stepping before a value's run is searched for its end


def _no_matches() -> pa.Table:
    return pa.table({"probe": pa.array([], pa.int64()), "position": pa.array([], pa.int64())})


# --- which statements it answers --------------------------------------------------


@dataclass(frozen=True)
class IndexLookup:
    """A semi join that looks up a table's rows by some of its columns: ``FROM t SEMI JOIN
    o ON t.c1 <=> o.x1 AND … [AND conditions on o alone]``."""

    other: exp.Expr  # the joined relation (o), as written
    pairs: dict[str, exp.Column]  # each looked-up column of t (lower case): the o column
    conditions: list[exp.Expr]  # on o's columns alone


def lookup_of(table: exp.Table) -> IndexLookup | None:
    """The lookup ``table`` is the FROM of, if it is (its SELECT's only join being the semi
    join)."""
    select = table.parent.parent if isinstance(table.parent, exp.From) else None
    joins = select.args.get("joins") if isinstance(select, exp.Select) else None
    if not joins or len(joins) != 1 or table.args.get("joins"):
        return None
    join = joins[0]
    if join.args.get("kind") != "SEMI" or join.args.get("side") not in (None, "LEFT"):
        return None
    on = join.args.get("on")
    if on is None or join.args.get("using") or join.this.find(*VOLATILE) is not None:
        return None  # (the joined relation is evaluated twice: first for the values)
    alias, other_alias = table.alias_or_name, join.this.alias_or_name
    pairs: dict[str, exp.Column] = {}
    conditions: list[exp.Expr] = []
    for conjunct in conjuncts(on):
        sides = _column_pair(conjunct, alias, other_alias)
        if sides is not None and sides[0] not in pairs:
            pairs[sides[0]] = sides[1]
        elif on_one_side(conjunct, other_alias):
            conditions.append(conjunct)
        else:
            return None
    return IndexLookup(join.this, pairs, conditions) if pairs else None


def _column_pair(conjunct: exp.Expr, alias: str, other_alias: str) -> tuple[str, exp.Column] | None:
    """``t.c <=> o.x`` (either way round): ``(c, o.x)``."""
    if not isinstance(conjunct, exp.NullSafeEQ):
        return None
    left, right = conjunct.this, conjunct.expression
    if not isinstance(left, exp.Column) or not isinstance(right, exp.Column):
        return None
    if left.table == other_alias and right.table == alias:
        left, right = right, left
    if left.table != alias or right.table != other_alias or alias == other_alias:
        return None
    return left.name.lower(), right


def stale_files(location: Path, schema: pa.Schema) -> list[Path]:
    """Index files no lookup reads (VACUUM deletes them): of a data file that is gone, of
    another tag, of another schema than the table's ``schema``, or left half-written."""
    folder = location / FOLDER
    if not folder.is_dir():
        return []
    current = f"{TAG}.{_fingerprint(schema)}"
    stale = []
    for path in folder.iterdir():
        name, _, rest = path.name.partition(".rows-")
        tagged = f"rows-{rest}"
        of_schema = tagged == current or tagged.startswith(f"{current}-")  # (some columns)
        written = not path.name.startswith(".") and of_schema
        if not written or not (location / name).exists():
            stale.append(path)
    return stale


_lock = threading.Lock()
# Each open index holds a file descriptor (its memory map): few enough to stay well
# below a process's usual limit of 1,024.
_KEPT_OPEN = 256
_opened: dict[str, FileIndex] = {}
