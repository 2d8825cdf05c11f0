"""Change queries: the signed change of a defining query between two versions of its
sources, derived operator by operator (seed 002).

A change query returns the query's columns and ``__dt_sign``: +1 for a row the query gains,
-1 for a row it loses (a changed row is both). By operator:

* a source table's change is its change feed between the two pinned versions;
* a SELECT block over inner/cross-joined inputs with filters, scalar projections and
  ``LATERAL VIEW explode`` is linear in each input, so its change is the telescoping sum
  ``Σ_i Q(new_1..new_{i-1}, Δ_i, old_{i+1}..old_n)`` with the sign carried through;
* UNION ALL distributes: the change of ``A UNION ALL B`` is ``ΔA UNION ALL ΔB``;
* a CTE is inlined where it is used, so each use is an input of its own;
* a keyed operator — GROUP BY, DISTINCT, window functions with PARTITION BY, and an outer
  join on equality keys — is recomputed for the keys its inputs' changes touch: the rows
  of a key depend only on input rows of that key, so its change is
  ``Q(new inputs of those keys) - Q(old inputs of those keys)``. The keys are collected
  (at most ``MAX_TOUCHED``) and written into both recomputes as a null-safe predicate.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from dyntables.catalog import key_to_table, table_key
from dyntables.errors import CannotRefreshIncrementallyError
from dyntables.formats import TableFormat
from dyntables.sql.dialect import parse_one, to_spark_sql
from dyntables.sql.literals import collectable, is_scalar, matching

SIGN = "__dt_sign"
# A keyed recompute's key columns, by position.
KEY = "__dt_key{}"
# More touched row values, groups or keys than this make a full refresh cheaper and simpler.
MAX_TOUCHED = 5000
# Generators of LATERAL VIEW that make rows from one input row alone.
_ROW_GENERATORS = (exp.Explode, exp.ExplodeOuter, exp.Inline)


@dataclass(frozen=True)
class Versions:
    """Each source's version at the last refresh (old) and now (new)."""

    old: dict[str, int | None]
    new: dict[str, int | None]

    def changed(self, key: str) -> bool:
        return self.old.get(key) != self.new.get(key)


def check_output_types(columns: tuple[tuple[str, str], ...]) -> None:
    """Only scalar outputs: their values are compared and rewritten as literals."""
    for name, type_sql in columns:
        if not is_scalar(type_sql):
            raise CannotRefreshIncrementallyError(
                f"output column {name} has type {type_sql}, which incremental refresh cannot"
                " compare and rewrite row by row"
            )


def parse_query(query: str) -> exp.Query:
    tree = parse_one(query)
    assert isinstance(tree, exp.Query)
    return tree


def inlined_query(query: str) -> exp.Query:
    """``query`` parsed, its CTEs inlined (``inline_ctes``): a copy, which the caller may
    change. Kept per text: one refresh reads its definition's query several times."""
    return _inlined_query(query).copy()


@functools.lru_cache(maxsize=256)
def _inlined_query(query: str) -> exp.Query:
    return inline_ctes(parse_query(query))


def spark(tree: exp.Expr) -> str:
    return to_spark_sql(tree)


# ---- CTEs ----


def inline_ctes(tree: exp.Query) -> exp.Query:
    """``tree`` with every CTE reference replaced by the CTE's query, at every level (a
    CTE may sit in a subquery), and no WITH left: each use becomes an input of its own."""
    tree = tree.copy()
    # Innermost WITHs first, so a body is final before it is copied into its uses.
    scopes = [node for node in tree.walk() if isinstance(node, exp.Query) and _with_of(node)]
    for scope in reversed(scopes):
        with_ = _with_of(scope)
        assert with_ is not None
        bodies: dict[str, exp.Expr] = {}
        for cte in with_.expressions:
            bodies[cte.alias_or_name.lower()] = _inline_references(cte.this.copy(), bodies)
        scope.set("with_", None)
        _inline_references(scope, bodies)
    return tree


def _with_of(node: exp.Expr) -> exp.With | None:
    with_ = node.args.get("with_")
    return with_ if isinstance(with_, exp.With) else None


def _inline_references(tree: exp.Expr, bodies: dict[str, exp.Expr]) -> exp.Expr:
    for reference in list(tree.find_all(exp.Table)):
        if reference.db or reference.name.lower() not in bodies:
            continue
        alias = reference.alias or reference.name
        reference.replace(
            exp.Subquery(
                this=bodies[reference.name.lower()].copy(),
                alias=exp.TableAlias(this=exp.to_identifier(alias)),
            )
        )
    return tree


# ---- the shape of a SELECT block ----


def select_shape(select: exp.Select) -> str:
    """``"linear"`` (telescoping sum), ``"keyed"`` (GROUP BY, DISTINCT, aggregates or
    windows: recompute the touched keys) or ``"outer"`` (an outer join: recompute the
    touched join keys); anything else says what is not incremental."""
    if select.args.get("limit") or select.args.get("offset"):
        raise CannotRefreshIncrementallyError("a LIMIT inside the query is not incremental")
    for join in select.args.get("joins") or []:
        if isinstance(join.this, exp.Lateral):
            raise CannotRefreshIncrementallyError("a LATERAL join is not incremental yet")
        if (join.kind or "").upper() in ("SEMI", "ANTI"):
            raise CannotRefreshIncrementallyError(f"{join.kind} JOIN is not incremental yet")
    for lateral in select.args.get("laterals") or []:
        if not isinstance(lateral.this, _ROW_GENERATORS):
            raise CannotRefreshIncrementallyError(
                f"LATERAL VIEW {lateral.this.sql('spark')} is not incremental: only explode,"
                " posexplode and inline (and their OUTER forms) are"
            )
    if (
        select.args.get("group")
        or select.args.get("distinct")
        or _has_aggregate(select)
        or _windows(select)
    ):
        return "keyed"
    if any(_is_outer(join) for join in select.args.get("joins") or []):
        return "outer"
    return "linear"


def _is_outer(join: exp.Join) -> bool:
    return (join.side or "").upper() in ("LEFT", "RIGHT", "FULL")


def _inputs(select: exp.Select) -> list[exp.Expr]:
    """The FROM item and each joined item, in order."""
    from_ = select.args.get("from_") or select.args.get("from")
    items = [from_.this] if from_ is not None else []
    items += [join.this for join in select.args.get("joins") or []]
    return items


def _has_aggregate(select: exp.Select) -> bool:
    return any(
        isinstance(node, exp.AggFunc) and node.find_ancestor(exp.Select) is select
        for projection in select.expressions
        for node in projection.find_all(exp.AggFunc)
    )


def _windows(select: exp.Select) -> list[exp.Window]:
    return [
        window
        for projection in select.expressions
        for window in projection.find_all(exp.Window)
        if window.find_ancestor(exp.Select) is select
    ]


def recompute_keys(select: exp.Select) -> list[exp.Expr]:
    """The expressions (over the block's input rows) that a keyed block's rows depend on
    group-wise: the PARTITION BY columns every window shares, else the GROUP BY keys, else
    the DISTINCT columns."""
    windows = _windows(select)
    if windows:
        shared: dict[str, exp.Expr] | None = None
        for window in windows:
            parts = {part.sql("spark"): part for part in window.args.get("partition_by") or []}
            shared = parts if shared is None else {k: v for k, v in shared.items() if k in parts}
        if not shared:
            raise CannotRefreshIncrementallyError(
                "window functions without a PARTITION BY column they all share recompute everything"
            )
        keys = list(shared.values())
    elif select.args.get("group"):
        keys = _group_expressions(select)
    elif select.args.get("distinct"):
        if any(isinstance(p, exp.Star) or p.is_star for p in select.expressions):
            raise CannotRefreshIncrementallyError(
                "SELECT DISTINCT * is not incremental yet: name the columns"
            )
        keys = [p.this if isinstance(p, exp.Alias) else p for p in select.expressions]
    else:
        raise CannotRefreshIncrementallyError(
            "an aggregate without GROUP BY (a scalar aggregate) is recomputed in full"
        )
    for key in keys:
        if any(True for _ in key.find_all(exp.AggFunc, exp.Window)):
            raise CannotRefreshIncrementallyError(
                f"the key {key.sql('spark')} holds an aggregate or a window function"
            )
    return [key.copy() for key in keys]


def _group_expressions(select: exp.Select) -> list[exp.Expr]:
    group = select.args["group"]
    grouping_sets = (exp.Rollup, exp.Cube, exp.GroupingSets)
    if (
        group.args.get("rollup")
        or group.args.get("cube")
        or group.args.get("grouping_sets")
        or any(isinstance(key, grouping_sets) for key in group.expressions)
    ):
        raise CannotRefreshIncrementallyError(
            "GROUPING SETS / ROLLUP / CUBE are not incremental yet"
        )
    keys = []
    for key in group.expressions:
        if isinstance(key, exp.Literal) and key.is_int:  # GROUP BY 1: the projection
            projection = select.expressions[int(key.name) - 1]
            key = projection.this if isinstance(projection, exp.Alias) else projection
        keys.append(key)
    if not keys:
        raise CannotRefreshIncrementallyError("GROUP BY () is a scalar aggregate")
    return keys


def key_probe(select: exp.Select, keys: list[exp.Expr]) -> exp.Select:
    """The keyed block's input rows, projected to the keys (``__dt_key0``, …): a linear
    block (or an outer join) whose change holds the touched keys."""
    probe = select.copy()
    for arg in ("group", "having", "distinct", "order", "qualify", "windows"):
        probe.set(arg, None)
    probe.set(
        "expressions",
        [exp.alias_(key.copy(), KEY.format(i), quoted=True) for i, key in enumerate(keys)],
    )
    return probe


def equi_keys(
    select: exp.Select, columns_of: Callable[[str], list[str]]
) -> tuple[list[exp.Expr], list[exp.Expr]]:
    """For a block ``L <outer> JOIN R ON …``: the left and right expressions of the ON
    clause's equalities between the two sides (or the USING columns)."""
    inputs = _inputs(select)
    joins = select.args.get("joins") or []
    if len(inputs) != 2:
        raise CannotRefreshIncrementallyError(
            "an outer join is incremental when it is the only join of its SELECT: move the"
            " other joins into a CTE"
        )
    aliases = [item.alias_or_name for item in inputs]
    using = joins[0].args.get("using")
    if using:
        return (
            [exp.column(u.name, table=aliases[0], quoted=True) for u in using],
            [exp.column(u.name, table=aliases[1], quoted=True) for u in using],
        )
    names = [_output_names(item, columns_of) for item in inputs]
    left: list[exp.Expr] = []
    right: list[exp.Expr] = []
    on = joins[0].args.get("on")
    for conjunct in on.flatten() if isinstance(on, exp.And) else [on]:
        if not isinstance(conjunct, (exp.EQ, exp.NullSafeEQ)):
            continue
        sides = (
            _side(conjunct.this, aliases, names),
            _side(conjunct.expression, aliases, names),
        )
        if sides == (0, 1):
            left.append(conjunct.this.copy())
            right.append(conjunct.expression.copy())
        elif sides == (1, 0):
            left.append(conjunct.expression.copy())
            right.append(conjunct.this.copy())
    if not left:
        raise CannotRefreshIncrementallyError(
            "an outer join is incremental on an equality between its two sides"
            " (ON l.k = r.k); this one has none"
        )
    return left, right


def _output_names(item: exp.Expr, columns_of: Callable[[str], list[str]]) -> set[str] | None:
    if isinstance(item, exp.Table) and not isinstance(item.this, exp.Anonymous):
        return {name.lower() for name in columns_of(table_key(item))}
    inner = item.this if isinstance(item, exp.Subquery) else None
    if isinstance(inner, exp.Query) and not any(p.is_star for p in inner.selects):
        return {name.lower() for name in inner.named_selects}
    return None


def _side(expression: exp.Expr, aliases: list[str], names: list[set[str] | None]) -> int | None:
    """Which input (0 or 1) every column of ``expression`` belongs to; None if none or
    both, or if an unqualified column cannot be placed."""
    sides = set()
    for column in expression.find_all(exp.Column):
        if column.table:
            matches = [
                i for i, alias in enumerate(aliases) if alias.lower() == column.table.lower()
            ]
        else:
            if any(known is None for known in names):
                return None
            matches = [i for i, known in enumerate(names) if known and column.name.lower() in known]
        if len(matches) != 1:
            return None
        sides.add(matches[0])
    return sides.pop() if len(sides) == 1 else None


def group_keys(select: exp.Select) -> list[tuple[exp.Expr, str]] | None:
    """For a GROUP BY or DISTINCT block without windows whose keys are all output columns:
    each key with the output column that holds it; None otherwise."""
    if _windows(select):
        return None
    if select.args.get("distinct"):
        if any(p.is_star for p in select.expressions):
            return None
        return [(projection.copy(), projection.alias_or_name) for projection in select.expressions]
    if select.args.get("group") is None:
        return None
    outputs = {}
    for position, projection in enumerate(select.expressions, start=1):
        inner = projection.this if isinstance(projection, exp.Alias) else projection
        outputs[inner.sql("spark")] = projection.alias_or_name
        outputs[str(position)] = projection.alias_or_name
    keys = []
    resolved = _group_expressions(select)  # GROUP BY 1 resolved to the projection
    for key, expression in zip(select.args["group"].expressions, resolved, strict=True):
        if key.sql("spark") not in outputs:
            return None
        keys.append((expression.copy(), outputs[key.sql("spark")]))
    return keys


# ---- the derivation ----


class ChangeDeriver:
    """Builds the signed change query of a query over pinned sources. Keyed operators
    collect their touched keys on ``session`` while the change is derived."""

    def __init__(
        self,
        session: Any,
        fmt: TableFormat,
        versions: Versions,
        columns_of: Callable[[str], list[str]],
        *,
        materialize_feeds: bool = False,
    ) -> None:
        self.session = session
        self.fmt = fmt
        self.versions = versions
        self.columns_of = columns_of
        # Each source's change feed as a temporary view, read once (see table_change).
        self.materialize_feeds = materialize_feeds
        self._feeds: dict[str, exp.Query] = {}  # source key -> its materialized change feed
        self._views: list[str] = []  # every temporary view made, to drop at the end

    # ---- inputs at a version ----

    def at(self, node: exp.Expr, side: str) -> exp.Expr:
        """A copy of ``node`` (a table or subquery) reading every source at ``side``."""
        copy = node.copy()
        references = [copy] if isinstance(copy, exp.Table) else list(copy.find_all(exp.Table))
        for reference in references:
            key = table_key(reference)
            version = (self.versions.old if side == "old" else self.versions.new).get(key)
            if version is None:
                raise CannotRefreshIncrementallyError(f"{key} has no version to read at")
            pinned = self.fmt.pinned(reference, version)
            if reference is copy:
                return pinned
            reference.replace(pinned)
        return copy

    def _pinned_input(self, item: exp.Expr, side: str) -> exp.Expr:
        """An input of a SELECT block at ``side``, under the name the block uses for it."""
        pinned = self.at(item, side)
        if isinstance(pinned, exp.Table) and not pinned.alias:
            pinned.set("alias", exp.TableAlias(this=exp.to_identifier(item.alias_or_name)))
        return pinned

    # ---- change queries ----

    def change(self, node: exp.Expr) -> exp.Query | None:
        """The signed change of ``node`` (a query, table or subquery), None if it has none."""
        if isinstance(node, exp.Table):
            return self.table_change(node)
        if isinstance(node, exp.Subquery):
            return self.change(node.this)
        if isinstance(node, exp.Union):
            if node.args.get("distinct"):
                raise CannotRefreshIncrementallyError("UNION (distinct) is not incremental yet")
            parts = [part for part in (self.change(node.left), self.change(node.right)) if part]
            return union_all(parts) if parts else None
        if isinstance(node, exp.Select):
            shape = select_shape(node)
            if shape == "keyed":
                return self.keyed_change(node)
            if shape == "outer":
                return self.outer_join_change(node)
            return self.linear_change(node)
        raise CannotRefreshIncrementallyError(
            f"{type(node).__name__.upper()} is not incremental yet"
        )

    def table_change(self, table: exp.Table) -> exp.Query | None:
        if isinstance(table.this, exp.Anonymous):
            raise CannotRefreshIncrementallyError(
                f"the table function {table.this.name} is not incremental"
            )
        key = table_key(table)
        if not self.versions.changed(key):
            return None
        old, new = self.versions.old.get(key), self.versions.new.get(key)
        if old is None or new is None:
            raise CannotRefreshIncrementallyError(
                f"{key} has no version range to read changes from"
            )
        if key in self._feeds:
            return self._feeds[key].copy()
        feed = self.fmt.changes(
            self.session, key_to_table(key), self.columns_of(key), old, new, SIGN
        )
        if self.materialize_feeds:
            # Read the feed once per refresh: a change query uses it several times (every
            # term of a join, counts, the MERGE), and re-reading it costs each time.
            feed = self.materialize(feed)
            self._feeds[key] = feed
        return feed

    def materialize(self, query: exp.Query) -> exp.Query:
        """``query`` as a temporary view of the session, dropped by ``drop_change_views``,
        computed once: the embedded engine's DataFrames hold their rows; on Spark the rows
        are computed now and kept by the executors (``localCheckpoint``), instead of every
        statement that reads the view computing them again (a changelog scan each time)."""
        view = f"__dt_changes_{uuid.uuid4().hex}"
        rows = self.session.sql(spark(query))
        if hasattr(rows, "localCheckpoint"):
            rows = rows.localCheckpoint(eager=True)
        rows.createOrReplaceTempView(view)
        self._views.append(view)
        return exp.select("*").from_(exp.to_table(view))

    def drop_change_views(self) -> None:
        """Forget the change feeds read by this derivation (temporary views)."""
        for view in self._views:
            self.session.catalog.dropTempView(view)
        self._views.clear()
        self._feeds.clear()

    def linear_change(self, select: exp.Select) -> exp.Query | None:
        """The telescoping sum over the block's inputs."""
        inputs = _inputs(select)
        terms: list[exp.Query] = []
        for index, changed in enumerate(inputs):
            delta = self.change(changed)
            if delta is None:
                continue
            term = select.copy()
            for position, item in enumerate(_inputs(term)):
                if position == index:
                    item.replace(aliased(delta, item.alias_or_name))
                else:
                    item.replace(self._pinned_input(item, "new" if position < index else "old"))
            sign_column = exp.column(SIGN, table=inputs[index].alias_or_name)
            term.set("expressions", [*term.expressions, exp.alias_(sign_column, SIGN)])
            terms.append(term)
        return union_all(terms) if terms else None

    def keyed_change(self, select: exp.Select) -> exp.Query | None:
        """Recompute the keys the input's change touches, at the new and the old versions."""
        keys = recompute_keys(select)
        probe = key_probe(select, keys)
        delta = self.change(probe)
        if delta is None:
            return None
        types = self._types(self.at(probe, "new"))
        values = self._key_values(delta, types)
        if not values:
            return None
        restriction = matching(list(zip(keys, types, strict=True)), values)
        return union_all(
            [
                self._recomputed(select, "new", 1, where=restriction),
                self._recomputed(select, "old", -1, where=restriction),
            ]
        )

    def outer_join_change(self, select: exp.Select) -> exp.Query | None:
        """Recompute the join keys either side's change touches, with both inputs
        restricted to those keys (a key's output rows come from its input rows alone)."""
        sides = equi_keys(select, self.columns_of)
        types: list[str] | None = None
        values: list[tuple[Any, ...]] = []
        for item, keys in zip(_inputs(select), sides, strict=True):
            delta = self.change(item)
            if delta is None:
                continue
            projected = [
                exp.alias_(k.copy(), KEY.format(i), quoted=True) for i, k in enumerate(keys)
            ]
            side_types = self._types(exp.select(*projected).from_(self._pinned_input(item, "new")))
            types = types or side_types
            touched = exp.select(*[p.copy() for p in projected]).from_(
                aliased(delta, item.alias_or_name)
            )
            values += [v for v in self._key_values(touched, side_types) if v not in values]
        if types is None or not values:
            return None
        if len(values) > MAX_TOUCHED:
            raise CannotRefreshIncrementallyError(f"more than {MAX_TOUCHED} join keys changed")
        filters = [matching(list(zip(keys, types, strict=True)), values) for keys in sides]
        return union_all(
            [
                self._recomputed(select, "new", 1, input_filters=filters),
                self._recomputed(select, "old", -1, input_filters=filters),
            ]
        )

    def _recomputed(
        self,
        select: exp.Select,
        side: str,
        sign: int,
        *,
        where: exp.Expr | None = None,
        input_filters: list[exp.Expr] | None = None,
    ) -> exp.Select:
        """The block over its inputs at ``side``, restricted (in WHERE, or on each input),
        each row signed ``sign``."""
        term = select.copy()
        for position, item in enumerate(_inputs(term)):
            pinned = self._pinned_input(item, side)
            if input_filters is not None:
                rows = exp.select("*").from_(pinned).where(input_filters[position].copy())
                pinned = aliased(rows, item.alias_or_name)
            item.replace(pinned)
        if where is not None:
            term = term.where(where.copy(), copy=False)
        signed = exp.alias_(exp.Literal.number(sign), SIGN)
        term.set("expressions", [*term.expressions, signed])
        return term

    def _types(self, query: exp.Expr) -> list[str]:
        """The column types of ``query`` (read from its schema, no rows); keys must be
        scalar to be written back as literals."""
        assert isinstance(query, exp.Select)
        schema = self.session.sql(spark(query.limit(0))).schema
        types = [field.dataType.simpleString() for field in schema.fields]
        for field, type_sql in zip(schema.fields, types, strict=True):
            if not is_scalar(type_sql):
                raise CannotRefreshIncrementallyError(
                    f"a key of type {type_sql} ({field.name}) cannot be matched as a literal"
                )
        return types

    def _key_values(self, query: exp.Query, types: list[str]) -> list[tuple[Any, ...]]:
        """The distinct ``__dt_key…`` values ``query`` returns (at most ``MAX_TOUCHED``)."""
        names = [KEY.format(i) for i in range(len(types))]
        distinct = (
            exp.select(*[collectable(n, t) for n, t in zip(names, types, strict=True)])
            .from_(aliased(query, "k"))
            .distinct()
            .limit(MAX_TOUCHED + 1)
        )
        values = [tuple(row) for row in self.session.sql(spark(distinct)).collect()]
        if len(values) > MAX_TOUCHED:
            raise CannotRefreshIncrementallyError(f"more than {MAX_TOUCHED} keys changed")
        return values


def union_all(parts: list[exp.Query]) -> exp.Query:
    combined = parts[0]
    for part in parts[1:]:
        combined = exp.union(combined, part, distinct=False)
    return combined


def aliased(query: exp.Query, alias: str) -> exp.Subquery:
    return exp.Subquery(this=query.copy(), alias=exp.TableAlias(this=exp.to_identifier(alias)))


def quoted_columns(names: list[str], table: str | None = None) -> list[exp.Expr]:
    """The columns ``names`` (of ``table``, when given), quoted."""
    return [exp.column(name, table=table, quoted=True) for name in names]


def null_safe_equal(names: list[str], left: str, right: str) -> exp.Expr:
    """Every column of ``names`` equal in ``left`` and ``right``, NULL equal to NULL."""
    return exp.and_(
        *[
            exp.NullSafeEQ(
                this=exp.column(name, table=left, quoted=True),
                expression=exp.column(name, table=right, quoted=True),
            )
            for name in names
        ]
    )


# ---- the check at CREATE ----


def check_structure(node: exp.Expr, columns_of: Callable[[str], list[str]]) -> None:
    """Walk a query as ``ChangeDeriver.change`` would, without versions or a session, and
    raise what is not incremental."""
    if isinstance(node, exp.Table):
        if isinstance(node.this, exp.Anonymous):
            raise CannotRefreshIncrementallyError(
                f"the table function {node.this.name} is not incremental"
            )
    elif isinstance(node, exp.Subquery):
        check_structure(node.this, columns_of)
    elif isinstance(node, exp.Union):
        if node.args.get("distinct"):
            raise CannotRefreshIncrementallyError("UNION (distinct) is not incremental yet")
        check_structure(node.left, columns_of)
        check_structure(node.right, columns_of)
    elif isinstance(node, exp.Select):
        shape = select_shape(node)
        if shape == "keyed":
            check_structure(key_probe(node, recompute_keys(node)), columns_of)
            return
        if shape == "outer":
            equi_keys(node, columns_of)
        for item in _inputs(node):
            check_structure(item, columns_of)
    else:
        raise CannotRefreshIncrementallyError(
            f"{type(node).__name__.upper()} is not incremental yet"
        )
