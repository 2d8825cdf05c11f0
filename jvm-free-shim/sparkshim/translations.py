"""Translations kept: a statement seen before is not typed and translated again.

Typing a statement (sqlglot's qualification and type inference) and rewriting it for DuckDB
cost milliseconds of Python per statement, where DuckDB's own work on a small change takes
a few milliseconds too; a dynamic table's refresh runs statements of the same shapes every
time (keeping their translations took about 10 % off an incremental refresh at 2M rows:
docs/benchmarks.md).

What is kept is the DuckDB SQL of a statement *after* its tables are resolved (resolution
reads the tables' current snapshots, so it runs every time). The relations a resolved
statement reads are registered under fresh names; :func:`by_position` renames them in the
tree to their position among the statement's relations, so that the same statement over
other snapshots has the same tree. The key is that tree (its full ``repr``, literals and
all), every node's ``meta`` (what earlier passes recorded for the translation), the
relations' Spark schemas and the settings the translation reads: everything the
translation depends on, so a kept translation is the one that would be made again. The
kept SQL names the relations by position; :meth:`Translations.get` names this statement's.

>>> from sqlglot import exp
>>> kept = Translations(capacity=2)
>>> tree = exp.select("a").from_("__shim_7")
>>> schemas = by_position(tree, ["__shim_7"], {"__shim_7": {"a": "int"}})
>>> key = kept.key(tree, schemas, ("a setting",))
>>> kept.get(key, ["__shim_7"]) is None
True
>>> kept.put(key, tree.sql("duckdb"))
>>> other = exp.select("a").from_("__shim_9")
>>> _ = by_position(other, ["__shim_9"], {"__shim_9": {"a": "int"}})
>>> kept.get(kept.key(other, schemas, ("a setting",)), ["__shim_9"])
'SELECT a FROM __shim_9'
"""

from __future__ import annotations

import hashlib
import re
import secrets
import threading
from collections import OrderedDict
from collections.abc import Hashable, Sequence

from sqlglot import exp

__all__ = ["TranslationKey", "Translations", "bind", "by_position"]

# A relation's name in a tree renamed by position: marked with a token of this process, so
# that no text of a statement can be mistaken for one.
_TOKEN = secrets.token_hex(6)
_PLACEHOLDERS = re.compile(rf"__sparkshim_{_TOKEN}_(\d+)")

TranslationKey = bytes  # a SHA-256 digest of what the translation depends on

# The parser's record of where a node was in the statement's text (sqlglot's meta keys):
# the translation does not read it, and a longer number earlier in the text moves it.
_POSITIONS = frozenset({"line", "col", "start", "end"})


def by_position(
    tree: exp.Expr, relations: Sequence[str], schemas: dict[str, dict[str, str]]
) -> dict[str, dict[str, str]]:
    """Rename in ``tree`` the ``relations`` it reads (registered names, in registration
    order) to their positions; ``schemas`` (by registered name) by the new names."""
    positions = {name: f"__sparkshim_{_TOKEN}_{index}" for index, name in enumerate(relations)}
    if positions:
        for node in tree.find_all(exp.Table, exp.Column):
            if isinstance(node, exp.Table) and node.name in positions:
                node.set("this", exp.to_identifier(positions[node.name]))
            elif isinstance(node, exp.Column) and node.table in positions:
                node.set("table", exp.to_identifier(positions[node.table]))
    return {positions.get(name, name): columns for name, columns in schemas.items()}


def bind(sql: str, relations: Sequence[str]) -> str:
    """``sql`` (translated from a tree renamed by ``by_position``) reading ``relations``."""
    return _PLACEHOLDERS.sub(lambda match: relations[int(match.group(1))], sql)


class Translations:
    """The DuckDB SQL of the statements translated lately (at most ``capacity``, the least
    recently used dropped first), by position (see ``by_position``); safe to share
    between threads."""

    def __init__(self, capacity: int = 512) -> None:
        self._capacity = capacity
        self._kept: OrderedDict[TranslationKey, str] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def key(
        renamed: exp.Expr, schemas: dict[str, dict[str, str]], settings: tuple[Hashable, ...]
    ) -> TranslationKey:
        """What the translation of ``renamed`` (a resolved tree renamed by position)
        depends on: the tree, its nodes' ``meta`` (but where the parser found them), the
        ``schemas`` of what it reads and the translation's ``settings``."""
        metas: list[tuple[int, str]] = []
        for number, node in enumerate(renamed.walk()):
            meta = node._meta  # read without creating an empty dict on every node
            if meta and not _POSITIONS.issuperset(meta):
                kept = sorted((k, v) for k, v in meta.items() if k not in _POSITIONS)
                metas.append((number, repr(kept)))
        described = tuple(
            sorted((name, tuple(sorted(columns.items()))) for name, columns in schemas.items())
        )
        # A digest: a large statement's tree prints to 100 KB and more.
        text = repr((repr(renamed), tuple(metas), described, settings))
        return hashlib.sha256(text.encode()).digest()

    def get(self, key: TranslationKey, relations: Sequence[str]) -> str | None:
        """The kept translation for ``key``, reading ``relations``; None if none is kept."""
        with self._lock:
            sql = self._kept.get(key)
            if sql is None:
                return None
            self._kept.move_to_end(key)
        return bind(sql, relations)

    def put(self, key: TranslationKey, sql: str) -> None:
        """Keep ``sql``, the translation (by position) made for ``key``."""
        with self._lock:
            self._kept[key] = sql
            self._kept.move_to_end(key)
            while len(self._kept) > self._capacity:
                self._kept.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()
