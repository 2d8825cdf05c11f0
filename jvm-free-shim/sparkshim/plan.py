"""What a DataFrame is: a Spark SQL query (a sqlglot tree) and the rows it reads.

Every DataFrame operation builds a new query from its parents' (``select``, ``where``,
``join`` ...), and every action runs the query through the session's ``sql``, so the
DataFrame API inherits the shim's Spark SQL fidelity and refusals. A result that is already
materialized (what ``session.sql`` returns) is read as a hidden temporary view, registered
for the duration of one statement only.

Each plan goes by an alias (``__df_<n>``, or the user's ``df.alias(name)``). A Column taken
from a DataFrame (``df["a"]``) is qualified by that alias; ``names`` says how a child query
reaches each alias it may meet (its own and its ancestors'), so such a Column still
resolves after the DataFrame was filtered, projected or joined, as it does in PySpark.

A plan is *open* when its query is ``SELECT *`` over aliased FROM items (a base relation or
a join): a child then extends that query in place instead of nesting it, so the aliases of
both sides of a join stay visible to the operations that follow it.

>>> base = Plan.over_relation(exp.to_table("t"))
>>> child = base.derive(lambda query: query.where("x > 1"))
>>> child.query.sql("spark")
'SELECT * FROM t AS `__df_...` WHERE x > 1'
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import pyarrow as pa
from sqlglot import exp

__all__ = ["Plan"]

_ALIASES = itertools.count(1)


def fresh_alias() -> str:
    return f"__df_{next(_ALIASES)}"


@dataclass(frozen=True)
class Plan:
    """A Spark SQL query, the hidden views it reads, and how its columns are reached."""

    query: exp.Query
    alias: str
    # qualifier a Column may carry → the qualifier that reaches those rows in a child
    # query of this plan (None: unqualified, the name alone)
    names: Mapping[str, str | None]
    is_open: bool
    inputs: Mapping[str, pa.Table] = field(default_factory=dict)

    @classmethod
    def over_relation(
        cls, relation: exp.Expr, inputs: Mapping[str, pa.Table] | None = None
    ) -> Plan:
        """``SELECT *`` from one table (or a hidden view of rows)."""
        alias = fresh_alias()
        query = exp.select(exp.Star()).from_(exp.alias_(relation, alias, table=True, quoted=True))
        return cls(query, alias, {alias: alias}, True, dict(inputs or {}))

    @classmethod
    def over_rows(cls, rows: pa.Table) -> Plan:
        """``SELECT *`` from materialized rows (a hidden temporary view of them)."""
        view = f"__sparkshim_rows_{uuid.uuid4().hex}"
        return cls.over_relation(exp.to_table(view, quoted=True), {view: rows})

    # ---- building children ----

    def as_source(self) -> tuple[exp.Select, Mapping[str, str | None]]:
        """A ``SELECT *`` to build a child query on, and the qualifiers valid in it."""
        if self.is_open and isinstance(self.query, exp.Select):
            return self.query.copy(), self.names
        return _wrap(self.query, self.alias), {name: self.alias for name in self.names}

    def derive(self, build: Callable[[exp.Select], exp.Query]) -> Plan:
        """The plan of ``build(a SELECT * over this plan)``, its Columns requalified."""
        base, names = self.as_source()
        query = requalify(build(base), names)
        return closed(query, names, self.inputs)

    def aliased(self, alias: str) -> Plan:
        """This plan's rows under the name ``alias`` (``df.alias``)."""
        query = _wrap(self.query, alias)
        names = {name: alias for name in self.names} | {alias: alias}
        return Plan(query, alias, names, True, self.inputs)


def closed(
    query: exp.Query, names: Mapping[str, str | None], inputs: Mapping[str, pa.Table]
) -> Plan:
    """A plan whose query a child must nest, reached by its own fresh alias."""
    alias = fresh_alias()
    return Plan(query, alias, {name: alias for name in names} | {alias: alias}, False, inputs)


def join(left: Plan, right: Plan, build: Callable[[exp.Select, exp.Expr], exp.Select]) -> Plan:
    """The open plan of ``left`` joined with ``right``: ``build(left's SELECT *, right's
    FROM item)`` adds the join; Columns of either side stay reachable after it."""
    base, left_names = left.as_source()
    if right.is_open and isinstance(right.query, exp.Select) and not right.query.args.get("joins"):
        item, right_names = right.query.args["from_"].this.copy(), dict(right.names)
    else:
        item = exp.Subquery(this=right.query.copy(), alias=_table_alias(right.alias))
        right_names = {name: right.alias for name in right.names}
    if item.alias_or_name in {source.alias_or_name for source in _items(base)}:
        # The same rows on both sides (a self-join): the right side gets a name of its own;
        # a Column of that DataFrame is then ambiguous, as in PySpark.
        other = fresh_alias()
        item = exp.Subquery(this=right.query.copy(), alias=_table_alias(other))
        right_names = {name: None for name in right.names}
    names: dict[str, str | None] = dict(left_names)
    for name, reach in right_names.items():
        names[name] = None if name in names and names[name] != reach else reach
    alias = fresh_alias()
    names[alias] = None
    query = requalify(build(base, item), names)
    return Plan(query, alias, names, True, {**left.inputs, **right.inputs})


def combine(left: Plan, right: Plan, build: Callable[[exp.Select, exp.Select], exp.Query]) -> Plan:
    """A set operation of the two plans' rows (``union``): each nested as a ``SELECT *``."""
    query = build(_wrap(left.query, left.alias), _wrap(right.query, right.alias))
    return closed(query, {}, {**left.inputs, **right.inputs})


def requalify(query: exp.Query, names: Mapping[str, str | None]) -> exp.Query:
    """``query`` with each column qualifier that names a DataFrame replaced by the one that
    reaches its rows here (or dropped, where the name alone does). Nested queries are left
    alone: they are parents' plans, already resolved in their own scope."""
    columns = [
        node
        for node in query.walk(prune=lambda node: isinstance(node, exp.Subquery))
        if isinstance(node, exp.Column)
    ]
    for column in columns:
        qualifier = column.table
        if qualifier not in names or column.args.get("db"):
            continue
        reach = names[qualifier]
        column.set("table", exp.to_identifier(reach, quoted=True) if reach else None)
    return query


def _items(select: exp.Select) -> list[exp.Expr]:
    items = [select.args["from_"].this]
    return items + [join.this for join in select.args.get("joins") or []]


def _wrap(query: exp.Query, alias: str) -> exp.Select:
    source = exp.Subquery(this=query.copy(), alias=_table_alias(alias))
    return exp.select(exp.Star()).from_(source)


def _table_alias(alias: str) -> exp.TableAlias:
    return exp.TableAlias(this=exp.to_identifier(alias, quoted=True))
