"""Which columns of its sources a defining query reads: a source change that leaves all of
them as they were changes nothing the query computes (``refresh.changes`` then drops it
before deriving anything).

A query's result depends on a source only through the columns it reads, so an update that
sets a column the query never names (its pre-image and post-image equal on the columns it
reads) cancels out. The names are collected without resolving scopes: every identifier
anywhere in the query counts as read, whichever table it belongs to. That can only say too
much is read (a column of one source named by another is kept), never too little. A query
that reads columns it does not name — a star (``*``, ``t.*``, ``struct(*)``; ``count(*)``
reads none), a NATURAL JOIN, a PIVOT or UNPIVOT (which group by or keep the columns they
do not name), a hidden column of where a row is stored (``_metadata``, Iceberg's ``_file``
and ``_pos`` …) — has no such set.

>>> sorted(read_column_names("SELECT c.k, count(*) AS n FROM db.t AS c GROUP BY c.k"))
['c', 'db', 'k', 'n', 't']
>>> read_column_names("SELECT * FROM db.t") is None
True
>>> read_column_names("SELECT a FROM db.t NATURAL JOIN db.u") is None
True
"""

from __future__ import annotations

import functools

from sqlglot import exp

from dyntables.planner.structure import parse_query

# Hidden columns of where a row is stored (Spark's file metadata, Iceberg's metadata
# columns, Delta's row tracking): they change when an update rewrites a row elsewhere.
_STORAGE_COLUMNS = frozenset(
    {"_metadata", "_file", "_pos", "_spec_id", "_partition", "_deleted", "_row_id"}
)


@functools.lru_cache(maxsize=256)
def read_column_names(query: str) -> frozenset[str] | None:
    """The lowercased names the query could read columns by (a superset of the columns
    it reads); None when it reads some without naming them."""
    names: set[str] = set()
    for node in parse_query(query).walk():
        if isinstance(node, exp.Star):
            if isinstance(node.parent, exp.Count) and node.parent.this is node:
                continue  # count(*) counts rows, whatever their columns
            return None
        if isinstance(node, exp.Pivot):
            return None
        if isinstance(node, exp.Join) and (node.method or "").upper() == "NATURAL":
            return None
        if isinstance(node, (exp.Identifier, exp.Var)):
            name = node.name.lower()
            if name in _STORAGE_COLUMNS:
                return None
            names.add(name)
    return frozenset(names)


__all__ = ["read_column_names"]
