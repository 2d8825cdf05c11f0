"""The structure of a defining query as the change rules see it (seed 002): its CTEs
inlined, each SELECT block's shape (linear, keyed or an outer join), the keys a keyed block
is recomputed by, an outer join's equality keys, and a GROUP BY's output keys.

The planner asks ``check_structure`` at CREATE whether the refresh executor can derive the
query's change; the executor's change derivation (``dyntables.refresh.changes``) reads the
same functions as it builds the change, so both see one structure.

>>> select = parse_query("SELECT region, count(*) AS n FROM shop.orders GROUP BY region")
>>> select_shape(select)
'keyed'
>>> [key.sql() for key in recompute_keys(select)]
['region']
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from sqlglot import exp

from dyntables.catalog import table_key
from dyntables.errors import CannotRefreshIncrementallyError
from dyntables.planner.key_types import KeyTyping
from dyntables.sql.dialect import comparison_sql, parse_one, same_expression, to_spark_sql
from dyntables.sql.literals import is_scalar

# A keyed recompute's key columns, by position.
KEY = "__dt_key{}"


# Generators of LATERAL VIEW that make rows from one input row alone.
_ROW_GENERATORS = (exp.Explode, exp.ExplodeOuter, exp.Inline)


def check_output_types(columns: tuple[tuple[str, str], ...]) -> None:
    """Only scalar outputs: a refresh's MERGE compares the table's rows with the change's
    column by column."""
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
    return name_derived_tables(inline_ctes(parse_query(query)))


# The name a derived table written without one gets (Spark names it alike, internally):
# the refresh's queries refer to each input by its name.
UNNAMED_SUBQUERY = "__dt_subquery_{}"


def name_derived_tables(tree: exp.Query) -> exp.Query:
    """``tree`` with a name for each derived table in a FROM or JOIN written without one
    (``FROM (SELECT …)``, which Spark accepts): nothing can refer to it by name, so the
    name changes no column's meaning.

    >>> name_derived_tables(parse_query("SELECT k FROM (SELECT a AS k FROM t)")).sql("spark")
    'SELECT k FROM (SELECT a AS k FROM t) AS __dt_subquery_0'
    """
    unnamed = [
        node
        for node in tree.find_all(exp.Subquery)
        if not node.alias and isinstance(node.parent, (exp.From, exp.Join))
    ]
    for number, subquery in enumerate(unnamed):
        subquery.set(
            "alias", exp.TableAlias(this=exp.to_identifier(UNNAMED_SUBQUERY.format(number)))
        )
    return tree


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
                f"LATERAL VIEW {to_spark_sql(lateral.this)} is not incremental: only explode,"
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


def select_inputs(select: exp.Select) -> list[exp.Expr]:
    """The FROM item and each joined item, in order."""
    from_ = select.args.get("from_") or select.args.get("from")
    items = [from_.this] if from_ is not None else []
    items += [join.this for join in select.args.get("joins") or []]
    return items


def expand_stars(select: exp.Select, columns_of: Callable[[str], list[str]]) -> exp.Select | None:
    """``select`` with each ``*`` and ``t.*`` of its list replaced by the columns it stands
    for, each qualified by its input (itself when it has no star); None when the structure
    alone cannot tell them (a table function, a LATERAL VIEW without column names, a star
    with EXCEPT or REPLACE, a USING column that names no single column of a side).

    A change query adds a sign column to each input, which a star would pass on twice.

    >>> select = parse_query("SELECT *, 1 AS one FROM db.t JOIN db.u ON t.k = u.k")
    >>> expand_stars(select, {"db.t": ["k", "v"], "db.u": ["k"]}.__getitem__).sql()
    'SELECT "t"."k", "t"."v", "u"."k", 1 AS one FROM db.t JOIN db.u ON t.k = u.k'

    A ``*`` over a USING (or NATURAL) join is Spark's: each USING column once, first,
    then the other columns of the left side and those of the right side:

    >>> select = parse_query("SELECT * FROM db.t FULL JOIN db.u USING (k)")
    >>> expand_stars(select, {"db.t": ["k", "v"], "db.u": ["w", "k"]}.__getitem__).sql()
    'SELECT COALESCE("t"."k", "u"."k") AS "k", "t"."v", "u"."w" FROM db.t FULL JOIN db.u USING (k)'
    """
    if not any(_is_star(projection) for projection in select.expressions):
        return select
    sources = _star_sources(select, columns_of)
    if sources is None:
        return None
    projections: list[exp.Expr] = []
    for projection in select.expressions:
        if not _is_star(projection):
            projections.append(projection.copy())
            continue
        star = projection if isinstance(projection, exp.Star) else projection.this
        if any(star.args.get(arg) for arg in ("except", "replace", "rename")):
            return None
        if not isinstance(projection, exp.Column):  # ``*``: every input, joined as Spark joins
            everything = _star_columns(select, sources)
            if everything is None:
                return None
            projections += everything
            continue
        qualifier = projection.table.lower()
        chosen = [(a, names) for a, names in sources if a.lower() == qualifier]
        if not chosen:
            return None
        projections += [
            exp.column(name, table=alias, quoted=True) for alias, names in chosen for name in names
        ]
    expanded = select.copy()
    expanded.set("expressions", projections)
    return expanded


# One column of a ``*``: its name and the expression it reads.
_StarColumn = tuple[str, exp.Expr]


def _star_columns(
    select: exp.Select, sources: list[tuple[str, list[str]]]
) -> list[exp.Expr] | None:
    """What a ``*`` of the block stands for, as Spark resolves its joins: the inputs'
    columns in order, where a USING (or NATURAL) join gives each USING column once, first
    (the left side's; a RIGHT join's right side's; a FULL join's coalesce of both, named
    as the left side's), then the left side's other columns and the right side's other
    columns (none after a SEMI or ANTI join); then each LATERAL VIEW's. None where a USING
    column names no single column of a side."""
    joins = select.args.get("joins") or []
    inputs, laterals = sources[: len(joins) + 1], sources[len(joins) + 1 :]
    (first_alias, first_names), *joined = inputs
    columns: list[_StarColumn] = [_star_column(n, first_alias) for n in first_names]
    for join, (alias, names) in zip(joins, joined, strict=True):
        right = [_star_column(n, alias) for n in names]
        kept_right = right if (join.kind or "").upper() not in ("SEMI", "ANTI") else []
        using = _using_names(join, columns, names)
        if not using:
            columns += kept_right
            continue
        keys: list[_StarColumn] = []
        for name in using:
            left_key, right_key = _named(columns, name), _named(right, name)
            if left_key is None or right_key is None:
                return None
            keys.append(_using_key(join, left_key, right_key))
        joined_names = {name.lower() for name in using}
        columns = [
            *keys,
            *(column for column in columns if column[0].lower() not in joined_names),
            *(column for column in kept_right if column[0].lower() not in joined_names),
        ]
    columns += [_star_column(n, alias) for alias, names in laterals for n in names]
    return [expression for _, expression in columns]


def _star_column(name: str, alias: str) -> _StarColumn:
    return name, exp.column(name, table=alias, quoted=True)


def _using_names(join: exp.Join, left: list[_StarColumn], right_names: list[str]) -> list[str]:
    """The columns a join joins on by name: its USING list, or for a NATURAL join the
    left side's columns the right side has too, by exactly equal names as Spark's analyzer
    intersects them (``MyId`` and ``MYID`` are two columns), in the left side's order;
    none for a join with ON or no condition."""
    if (join.method or "").upper() == "NATURAL":
        on_right = set(right_names)
        return [name for name, _ in left if name in on_right]
    return [column.name for column in join.args.get("using") or []]


def _named(columns: list[_StarColumn], name: str) -> _StarColumn | None:
    """The only column of ``columns`` named ``name`` (in any case); None when there is
    none or more than one (Spark refuses such a USING column as ambiguous)."""
    found = [column for column in columns if column[0].lower() == name.lower()]
    return found[0] if len(found) == 1 else None


def _using_key(join: exp.Join, left: _StarColumn, right: _StarColumn) -> _StarColumn:
    """A USING column as a ``*`` over the join gives it, by the join's side."""
    side = (join.side or "").upper()
    if side == "RIGHT":
        return right
    if side == "FULL":
        merged = exp.func("coalesce", left[1].copy(), right[1].copy())
        return left[0], exp.alias_(merged, left[0], quoted=True)
    return left


def output_names(node: exp.Expr, columns_of: Callable[[str], list[str]]) -> list[str] | None:
    """The names of the columns a table, subquery or query returns, in order (stars
    expanded as ``expand_stars`` does); None where they cannot be told."""
    if isinstance(node, exp.Table):
        if isinstance(node.this, exp.Anonymous):  # a table function
            return None
        return list(columns_of(table_key(node)))
    if isinstance(node, exp.Subquery):
        return output_names(node.this, columns_of)
    if isinstance(node, exp.SetOperation):
        return output_names(node.left, columns_of)
    if isinstance(node, exp.Select):
        expanded = expand_stars(node, columns_of)
        return None if expanded is None else [p.alias_or_name for p in expanded.expressions]
    return None


def _is_star(projection: exp.Expr) -> bool:
    return isinstance(projection, exp.Star) or (
        isinstance(projection, exp.Column) and projection.is_star
    )


def through_renaming(
    select: exp.Select, columns_of: Callable[[str], list[str]]
) -> exp.Select | None:
    """The block whose rows ``select`` returns, stars expanded (``expand_stars``): the
    block inside when ``select`` only renames a derived table's columns in order (as a
    stored query with a star or a column list is wrapped), else ``select`` itself; None
    when its stars cannot be told.

    >>> wrapped = parse_query("SELECT q.k AS key, q.one FROM (SELECT *, 1 AS one FROM db.t) q")
    >>> through_renaming(wrapped, {"db.t": ["k"]}.__getitem__).sql()
    'SELECT "t"."k", 1 AS one FROM db.t'
    """
    inner = _renamed_block(select)
    if inner is not None:
        expanded = expand_stars(inner, columns_of)
        names = [p.alias_or_name.lower() for p in expanded.expressions] if expanded else None
        renamed = [p.this.name.lower() for p in select.expressions]  # columns (checked)
        if names == renamed:
            return expanded
    return expand_stars(select, columns_of)


def _renamed_block(select: exp.Select) -> exp.Select | None:
    """The SELECT of ``select``'s only input when ``select`` does nothing but name some of
    its columns (each output an aliased plain column of it); else None."""
    if any(
        select.args.get(arg)
        for arg in (
            "joins",
            "laterals",
            "where",
            "group",
            "having",
            "qualify",
            "distinct",
            "order",
            "limit",
            "windows",
        )
    ):
        return None
    inputs = select_inputs(select)
    if len(inputs) != 1 or not isinstance(inputs[0], exp.Subquery):
        return None
    inner = inputs[0].this
    if not isinstance(inner, exp.Select):
        return None
    alias = inputs[0].alias_or_name
    for projection in select.expressions:
        value = projection.this if isinstance(projection, exp.Alias) else projection
        if not isinstance(value, exp.Column) or value.table not in ("", alias):
            return None
    return inner


def _star_sources(
    select: exp.Select, columns_of: Callable[[str], list[str]]
) -> list[tuple[str, list[str]]] | None:
    """What a ``*`` of the block reads, in order: each input's alias with its columns, then
    each LATERAL VIEW's with the columns it names."""
    sources: list[tuple[str, list[str]]] = []
    for item in select_inputs(select):
        names = output_names(item, columns_of)
        if names is None:
            return None
        sources.append((item.alias_or_name, names))
    for lateral in select.args.get("laterals") or []:
        alias = lateral.args.get("alias")
        columns = [column.name for column in alias.columns] if alias is not None else []
        if not columns:
            return None
        sources.append((alias.name, columns))
    return sources


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


def recompute_keys(
    select: exp.Select, columns_of: Callable[[str], list[str]] | None = None
) -> list[exp.Expr]:
    """The expressions (over the block's input rows) that a keyed block's rows depend on
    group-wise: the PARTITION BY columns every window shares, else the GROUP BY keys, else
    the DISTINCT columns (a star's columns through ``columns_of``, ``expand_stars``)."""
    windows = _windows(select)
    if windows:
        keys = _shared_partition(windows)
        if not keys:
            raise CannotRefreshIncrementallyError(
                "window functions without a PARTITION BY column they all share recompute everything"
            )
    elif select.args.get("group"):
        keys = _group_expressions(select)
    elif select.args.get("distinct"):
        expanded = expand_stars(select, columns_of) if columns_of is not None else None
        if expanded is None and any(_is_star(p) for p in select.expressions):
            raise CannotRefreshIncrementallyError(
                "SELECT DISTINCT * over inputs whose columns cannot be told is not"
                " incremental: name the columns"
            )
        projections = (expanded or select).expressions
        keys = [p.this if isinstance(p, exp.Alias) else p for p in projections]
    else:
        raise CannotRefreshIncrementallyError(
            "an aggregate without GROUP BY (a scalar aggregate) is recomputed in full"
        )
    for key in keys:
        if any(True for _ in key.find_all(exp.AggFunc, exp.Window)):
            raise CannotRefreshIncrementallyError(
                f"the key {to_spark_sql(key)} holds an aggregate or a window function"
            )
    return [key.copy() for key in keys]


# Window functions whose value on a row depends only on where the row ranks in its
# partition: its PARTITION BY and ORDER BY values among the partition's (and the
# partition's size), never on another column of any row.
RANKING_FUNCTIONS = (
    exp.RowNumber,
    exp.Rank,
    exp.DenseRank,
    exp.PercentRank,
    exp.CumeDist,
    exp.Ntile,
)


@dataclass(frozen=True)
class RankingWindows:
    """A block whose output columns are plain expressions of its input rows and ranking
    window calls (``RANKING_FUNCTIONS``, each a whole output column). A change to its
    input rows that keeps every partition's multiset of ranking positions (the windows'
    PARTITION BY and ORDER BY values) changes no ranking value: each changed row keeps the
    values its old version had (an update of other columns, in place)."""

    window_outputs: list[int]  # the output columns (by position) that are window calls
    positions: list[exp.Expr]  # every window's PARTITION BY, then ORDER BY, expressions
    partition_count: int  # how many of ``positions`` are the PARTITION BY columns all share


def ranking_windows(select: exp.Select) -> RankingWindows | None:
    """``select`` as a block of ranking windows (see ``RankingWindows``); None if it is
    not one: a window call that is not a ranking function or is part of a larger
    expression, a named window, a star, or grouping of any kind."""
    if any(select.args.get(arg) for arg in ("group", "distinct", "having", "qualify", "windows")):
        return None
    if not _windows(select):
        return None
    window_outputs: list[int] = []
    windows: list[exp.Window] = []
    for index, projection in enumerate(select.expressions):
        if _is_star(projection):
            return None
        value = projection.this if isinstance(projection, exp.Alias) else projection
        if isinstance(value, exp.Window):
            if not isinstance(value.this, RANKING_FUNCTIONS) or value.args.get("alias"):
                return None
            window_outputs.append(index)
            windows.append(value)
        elif any(True for _ in value.find_all(exp.Window, exp.AggFunc)):
            return None  # a window inside an expression, or an aggregate (grouping)
    if len(window_outputs) == len(select.expressions):
        return None  # no other column to find a row's old version by
    shared = _shared_partition(windows)
    positions = {comparison_sql(key): key for key in shared}
    for window in windows:
        order = window.args.get("order")
        ordered = [
            o.this if isinstance(o, exp.Ordered) else o
            for o in (order.expressions if order else [])
        ]
        for expression in [*(window.args.get("partition_by") or []), *ordered]:
            positions.setdefault(comparison_sql(expression), expression)
    return RankingWindows(
        window_outputs, [p.copy() for p in positions.values()], partition_count=len(shared)
    )


def _shared_partition(windows: list[exp.Window]) -> list[exp.Expr]:
    """The PARTITION BY expressions every one of ``windows`` has."""
    shared: dict[str, exp.Expr] | None = None
    for window in windows:
        parts = {comparison_sql(part): part for part in window.args.get("partition_by") or []}
        shared = parts if shared is None else {k: v for k, v in shared.items() if k in parts}
    return list((shared or {}).values())


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


def equi_keys(select: exp.Select, columns_of: Callable[[str], list[str]]) -> list[list[exp.Expr]]:
    """For a block with an outer join: each input's key expressions (one list per input,
    in input order, the i-th keys of all inputs equal to each other), such that every join
    of the block matches rows on those keys. Then each output row comes from input rows
    of one key value (a NULL-padded side contributes none), and the block is recomputed
    key by key, whatever mix of inner and outer joins it has.

    The keys are the classes of the ON clauses' equalities (``a.k = b.k`` and ``c.k = b.k``
    make one class) that reach every input, each join's ON equating the input it joins
    with an earlier one on the class (else a join on another key could pair rows of two key
    values); a block of two inputs may join USING, or on ``<=>``."""
    inputs = select_inputs(select)
    joins = select.args.get("joins") or []
    aliases = [item.alias_or_name for item in inputs]
    using = joins[0].args.get("using") if len(joins) == 1 else None
    if using:
        return [
            [exp.column(u.name, table=aliases[0], quoted=True) for u in using],
            [exp.column(u.name, table=aliases[1], quoted=True) for u in using],
        ]
    names = [_output_names(item, columns_of) for item in inputs]
    # Among several joins only `=`: a side an earlier outer join padded with NULLs matches
    # nothing under `=`, where `<=>` would match every NULL key of the next input.
    kinds = (exp.EQ,) if len(inputs) > 2 else (exp.EQ, exp.NullSafeEQ)
    classes: list[dict[int, exp.Expr]] = []  # each class: its expression on each input
    equalities: list[list[exp.Expr]] = []  # each join's
    for join in joins:
        if join.args.get("using"):
            raise CannotRefreshIncrementallyError(
                "an outer join among other joins is incremental with ON equalities; this"
                " one joins USING: write ON a.k = b.k"
            )
        on = join.args.get("on")
        conjuncts = on.flatten() if isinstance(on, exp.And) else [on]
        equalities.append([c for c in conjuncts if isinstance(c, kinds)])
        for equality in equalities[-1]:
            _add_equality(classes, equality, aliases, names)
    spanning = [
        found
        for found in classes
        if len(found) == len(inputs)
        and all(
            _links(found, join_equalities, joined, aliases, names)
            for joined, join_equalities in enumerate(equalities, start=1)
        )
    ]
    if not spanning and len(inputs) == 2:
        raise CannotRefreshIncrementallyError(
            "an outer join is incremental on an equality between its two sides"
            " (ON l.k = r.k); this one has none"
        )
    if not spanning:
        raise CannotRefreshIncrementallyError(
            "an outer join among other joins is incremental when every join of its SELECT"
            " matches on one key (ON a.k = b.k … AND b.k = c.k), or when the last join has"
            " an equality with the inputs before it (ON p.k = o.k); these have neither:"
            " move the joins on other keys into a CTE"
        )
    return [[found[position].copy() for found in spanning] for position in range(len(inputs))]


@dataclass(frozen=True)
class KeyedJoin:
    """How a block with an outer join is recomputed key by key.

    ``probes``: queries (``__dt_key…`` columns) whose changes hold the touched keys;
    ``input_keys[i]``: the key expressions input ``i`` is restricted by before joining
    (None: read whole); ``row_keys``: the key expressions the joined rows are restricted
    by (None: none)."""

    probes: list[exp.Select]
    input_keys: list[list[exp.Expr] | None]
    row_keys: list[exp.Expr] | None = None


def keyed_join(
    select: exp.Select,
    columns_of: Callable[[str], list[str]],
    typing: KeyTyping | None = None,
) -> KeyedJoin:
    """How ``select`` (a block with an outer join) is recomputed: on one key class every
    join matches on (``equi_keys``: every input restricted by it), else by its last join
    (``last_join_keys``). With ``typing``, keys compared with a STRING are compared in the
    type Spark compares them in (``key_types``)."""
    inputs = select_inputs(select)
    try:
        sides = equi_keys(select, columns_of)
    except CannotRefreshIncrementallyError:
        if len(inputs) < 3:
            raise
        factored = last_join_keys(select, columns_of, typing)
        if factored is None:
            raise
        return factored
    if typing is not None:
        sides = typing.comparable([[item] for item in inputs], sides)
    probes = [_input_probe(item, keys) for item, keys in zip(inputs, sides, strict=True)]
    return KeyedJoin(probes, [list(keys) for keys in sides])


def _input_probe(item: exp.Expr, keys: list[exp.Expr]) -> exp.Select:
    """A query whose change holds the keys the change of input ``item`` touches: for a
    derived table that computes the keys from its own rows (``key_definitions``, e.g. a
    CTE grouped by the key), its input rows projected to them (a superset: a group whose
    rows changed but whose values did not), so that the derived table's own change, a
    recompute of its groups at both versions, is not computed just for its keys; else the
    input projected to its keys."""
    inner = item.this if isinstance(item, exp.Subquery) else None
    if isinstance(inner, exp.Select):
        definitions = key_definitions(inner, keys)
        if definitions is not None:
            return key_probe(inner, definitions)
    return exp.select(*_key_columns(keys)).from_(item.copy())


def last_join_keys(
    select: exp.Select,
    columns_of: Callable[[str], list[str]],
    typing: KeyTyping | None = None,
) -> KeyedJoin | None:
    """A block whose last join has equalities between the inputs before it (the prefix)
    and the input it joins, seen as that join of two relations (seed 002's factoring of
    joins): an output row comes from prefix rows and joined rows of one key value, so the
    rows of the touched keys are recomputed, the joined input restricted to them before
    joining and the joined rows restricted by their key (``_joined_row_keys``; a prefix row
    whose key is not touched may lose its match to the restriction, but its row is then
    not kept). The touched keys come from the joined input's change and the prefix's
    change (the prefix is a block of its own, incremental by the same rules). None where
    the last join has no such equality or joins USING."""
    inputs = select_inputs(select)
    joins = select.args.get("joins") or []
    last = joins[-1]
    if last.args.get("using"):
        return None
    aliases = [item.alias_or_name for item in inputs]
    names = [_output_names(item, columns_of) for item in inputs]
    joined = len(inputs) - 1
    prefix_keys: list[exp.Expr] = []
    joined_keys: list[exp.Expr] = []
    on = last.args.get("on")
    for conjunct in on.flatten() if isinstance(on, exp.And) else [on]:
        if not isinstance(conjunct, (exp.EQ, exp.NullSafeEQ)):
            continue
        for mine, theirs in (
            (conjunct.this, conjunct.expression),
            (conjunct.expression, conjunct.this),
        ):
            if _inputs_of(theirs, aliases, names) == {joined} and _within_prefix(
                mine, aliases, names, joined
            ):
                prefix_keys.append(mine.copy())
                joined_keys.append(theirs.copy())
                break
    if not prefix_keys:
        return None
    prefix = select.copy()
    for arg in ("where", "group", "having", "distinct", "order", "qualify", "windows"):
        prefix.set(arg, None)
    prefix.set("joins", [join.copy() for join in joins[:-1]])
    prefix.set("laterals", None)
    if typing is not None:
        prefix_keys, joined_keys = typing.comparable(
            [inputs[:joined], [inputs[joined]]], [prefix_keys, joined_keys]
        )
    prefix.set("expressions", _key_columns(prefix_keys))
    joined_probe = _input_probe(inputs[joined], joined_keys)
    input_keys: list[list[exp.Expr] | None] = [None] * joined
    row_keys = _joined_row_keys((last.side or "").upper(), prefix_keys, joined_keys)
    return KeyedJoin([prefix, joined_probe], [*input_keys, joined_keys], row_keys)


def _joined_row_keys(
    side: str, prefix_keys: list[exp.Expr], joined_keys: list[exp.Expr]
) -> list[exp.Expr]:
    """The key of a row of the last join, from the side(s) it keeps whole: the prefix's
    expression (inner and LEFT), the joined input's (RIGHT), or either, whichever the row
    has (FULL: a row of one side alone has the other's NULL; matched rows have both)."""
    if side == "RIGHT":
        return [key.copy() for key in joined_keys]
    if side == "FULL":
        # A row of one side alone has the other side's columns NULL, so that side's key is
        # NULL only where its expression is NULL whenever its columns are: a column (a
        # CAST of one), not coalesce(c.tier, 0), which would give the missing side's key.
        for key in [*prefix_keys, *joined_keys]:
            if not _null_when_its_column_is(key):
                raise CannotRefreshIncrementallyError(
                    f"a FULL JOIN after other joins is incremental on columns compared"
                    f" (ON a.k = b.k); this one compares {key.sql('spark')}: compute it as"
                    " a column of a derived table and join on that column"
                )
        return [
            exp.func("coalesce", mine.copy(), theirs.copy())
            for mine, theirs in zip(prefix_keys, joined_keys, strict=True)
        ]
    return [key.copy() for key in prefix_keys]


def _null_when_its_column_is(key: exp.Expr) -> bool:
    """Whether ``key`` is a column, parenthesized or cast (NULL exactly when it is)."""
    while isinstance(key, (exp.Paren, exp.Cast)):
        key = key.this
    return isinstance(key, exp.Column)


def _key_columns(keys: list[exp.Expr]) -> list[exp.Expr]:
    return [exp.alias_(key.copy(), KEY.format(i), quoted=True) for i, key in enumerate(keys)]


def _inputs_of(
    expression: exp.Expr, aliases: list[str], names: list[set[str] | None]
) -> set[int | None]:
    """The inputs the columns of ``expression`` belong to (None for one that cannot be
    placed); empty for an expression without columns."""
    return {_side(column, aliases, names) for column in expression.find_all(exp.Column)}


def _within_prefix(
    expression: exp.Expr, aliases: list[str], names: list[set[str] | None], joined: int
) -> bool:
    """Whether ``expression`` reads columns, all of inputs before ``joined``."""
    found = _inputs_of(expression, aliases, names)
    return bool(found) and all(i is not None and i < joined for i in found)


def _links(
    found: dict[int, exp.Expr],
    join_equalities: list[exp.Expr],
    joined: int,
    aliases: list[str],
    names: list[set[str] | None],
) -> bool:
    """Whether one of a join's equalities equates the class ``found`` on the input it
    joins (``joined``) with the class on an earlier input."""
    for equality in join_equalities:
        sides = {
            _side(equality.this, aliases, names): equality.this,
            _side(equality.expression, aliases, names): equality.expression,
        }
        earlier = [i for i in sides if i is not None and i < joined]
        on_the_class = joined in sides and same_expression(sides[joined], found[joined])
        if on_the_class and any(same_expression(sides[i], found[i]) for i in earlier):
            return True
    return False


def _add_equality(
    classes: list[dict[int, exp.Expr]],
    equality: exp.Expr,
    aliases: list[str],
    names: list[set[str] | None],
) -> None:
    """Merge the two sides of ``equality`` (each of one input) into the key classes."""
    left = _side(equality.this, aliases, names)
    right = _side(equality.expression, aliases, names)
    if left is None or right is None or left == right:
        return
    pair = {left: equality.this, right: equality.expression}
    touching = [
        found for found in classes if any(same_expression(found.get(i), e) for i, e in pair.items())
    ]
    merged: dict[int, exp.Expr] = {}
    for found in touching:
        classes.remove(found)
        for position, expression in found.items():
            merged.setdefault(position, expression)
    for position, expression in pair.items():
        merged.setdefault(position, expression)
    classes.append(merged)


def _output_names(item: exp.Expr, columns_of: Callable[[str], list[str]]) -> set[str] | None:
    if isinstance(item, exp.Table) and not isinstance(item.this, exp.Anonymous):
        return {name.lower() for name in columns_of(table_key(item))}
    inner = item.this if isinstance(item, exp.Subquery) else None
    if isinstance(inner, exp.Query) and not any(p.is_star for p in inner.selects):
        return {name.lower() for name in inner.named_selects}
    return None


def _side(expression: exp.Expr, aliases: list[str], names: list[set[str] | None]) -> int | None:
    """Which input every column of ``expression`` belongs to; None if none or several,
    or if an unqualified column cannot be placed."""
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


def key_outputs(select: exp.Select, columns_of: Callable[[str], list[str]]) -> list[str] | None:
    """For a keyed block (windows, GROUP BY, DISTINCT) or a block with an outer join: the
    output column that holds each recompute key on every output row, in the keys' order;
    None if some key has none. Then the table's rows of a key are exactly the rows whose
    output columns hold it, and a key's rows can be replaced without computing what the
    block held before.

    An outer join's key is read from an input no join pads with NULLs (a padded side's key
    column is NULL on the rows it did not match)."""
    shape = select_shape(select)
    if shape == "linear":
        return None
    inputs = select_inputs(select)
    aliases = [item.alias_or_name for item in inputs]
    names = [_output_names(item, columns_of) for item in inputs]
    if shape == "keyed":
        candidates = [[key] for key in recompute_keys(select, columns_of)]
    else:
        plan = keyed_join(select, columns_of)
        if plan.row_keys is not None:
            candidates = [[key] for key in plan.row_keys]
        else:  # one key class: each unpadded input's expressions of it
            unpadded = [
                keys
                for i, keys in enumerate(plan.input_keys)
                if keys is not None and i in _unpadded_inputs(select)
            ]
            candidates = [list(expressions) for expressions in zip(*unpadded, strict=True)]
    projections = (expand_stars(select, columns_of) or select).expressions
    outputs = []
    for expressions in candidates:
        found = next(
            (
                projection.alias_or_name
                for projection in projections
                if any(_holds(projection, e, aliases, names) for e in expressions)
            ),
            None,
        )
        if found is None:
            return None
        outputs.append(found)
    return outputs or None


def padded_inputs(select: exp.Select) -> set[int]:
    """The positions of the inputs whose rows an outer join of ``select`` pads with NULLs
    (its null-supplying sides): the joined input of a LEFT join, the inputs before a RIGHT
    join, both sides of a FULL one."""
    padded: set[int] = set()
    for position, join in enumerate(select.args.get("joins") or [], start=1):
        side = (join.side or "").upper()
        if side in ("LEFT", "FULL"):
            padded.add(position)
        if side in ("RIGHT", "FULL"):
            padded.update(range(position))
    return padded


def pads_a_change(select: exp.Select, changed: Collection[str]) -> bool:
    """Whether an input that an outer join of ``select`` pads reads a ``changed`` source
    (by key). A block is linear in each input it never pads (a preserved side: each of its
    rows joins, or is padded, on its own); a padded input's change moves rows of the other
    inputs between matched and padded."""
    inputs = select_inputs(select)
    return any(source_keys(inputs[position]) & set(changed) for position in padded_inputs(select))


def source_keys(item: exp.Expr) -> set[str]:
    """The keys of the sources ``item`` (a table, a subquery or a query) reads."""
    references = [item] if isinstance(item, exp.Table) else list(item.find_all(exp.Table))
    return {table_key(reference) for reference in references}


def _unpadded_inputs(select: exp.Select) -> list[int]:
    """The positions of the inputs whose rows no outer join of ``select`` pads with NULLs."""
    padded = padded_inputs(select)
    return [i for i in range(len(select_inputs(select))) if i not in padded]


def _holds(
    projection: exp.Expr, key: exp.Expr, aliases: list[str], names: list[set[str] | None]
) -> bool:
    """Whether the output ``projection`` is the key expression ``key`` itself (a column of
    the same input and name, or the same expression)."""
    inner = projection.this if isinstance(projection, exp.Alias) else projection
    if comparison_sql(inner) == comparison_sql(key):
        return True
    if not isinstance(inner, exp.Column) or not isinstance(key, exp.Column):
        return False
    side = _side(key, aliases, names)
    return (
        side is not None
        and _side(inner, aliases, names) == side
        and inner.name.lower() == key.name.lower()
    )


def key_definitions(inner: exp.Select, keys: list[exp.Expr]) -> list[exp.Expr] | None:
    """For a derived table's query ``inner`` and key columns read from its output: the
    expressions over ``inner``'s own rows that compute them, such that keeping those rows
    whose expressions are touched keeps exactly the output rows whose keys are touched;
    None where that does not hold (a key that is not a plain output column, an aggregate
    or window in it, a GROUP BY it is not a key of, a LIMIT, windows, a scalar aggregate,
    LATERAL VIEWs, a star)."""
    if inner.args.get("limit") or inner.args.get("offset") or inner.args.get("laterals"):
        return None
    if _windows(inner) or any(p.is_star for p in inner.expressions):
        return None
    grouped = inner.args.get("group")
    if _has_aggregate(inner) and not grouped:
        return None
    group_sql = {comparison_sql(g) for g in _group_expressions(inner)} if grouped else None
    by_name = {p.alias_or_name.lower(): p for p in inner.expressions}
    definitions: list[exp.Expr] = []
    for key in keys:
        # A key compared in another type (key_types) is a CAST of the column.
        cast = key if isinstance(key, exp.Cast) else None
        column = cast.this if cast is not None else key
        projection = by_name.get(column.name.lower()) if isinstance(column, exp.Column) else None
        if projection is None:
            return None
        definition = projection.this if isinstance(projection, exp.Alias) else projection
        if any(True for _ in definition.find_all(exp.AggFunc, exp.Window)):
            return None
        if group_sql is not None and comparison_sql(definition) not in group_sql:
            return None
        if cast is not None:
            definitions.append(exp.Cast(this=definition.copy(), to=cast.to.copy()))
        else:
            definitions.append(definition.copy())
    return definitions


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
        outputs[comparison_sql(inner)] = projection.alias_or_name
        outputs[str(position)] = projection.alias_or_name
    keys = []
    resolved = _group_expressions(select)  # GROUP BY 1 resolved to the projection
    for key, expression in zip(select.args["group"].expressions, resolved, strict=True):
        if comparison_sql(key) not in outputs:
            return None
        keys.append((expression.copy(), outputs[comparison_sql(key)]))
    return keys


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
            check_structure(key_probe(node, recompute_keys(node, columns_of)), columns_of)
            return
        if shape == "outer":
            for probe in keyed_join(node, columns_of).probes:
                check_structure(probe, columns_of)
            return
        for item in select_inputs(node):
            check_structure(item, columns_of)
    else:
        raise CannotRefreshIncrementallyError(
            f"{type(node).__name__.upper()} is not incremental yet"
        )


def with_output_names(tree: exp.Query, columns: Sequence[tuple[str, str]]) -> exp.Query:
    """``tree`` with each unaliased expression of its (first) SELECT list named by the table
    column that holds it: the engine named that column (Spark names ``count(*)`` as
    ``count(1)``), and the change rules refer to outputs by name."""
    select = tree if isinstance(tree, exp.Select) else next(tree.find_all(exp.Select), None)
    if select is None or any(p.is_star for p in select.expressions):
        return tree
    if len(select.expressions) != len(columns):
        return tree
    for projection, (name, _) in zip(list(select.expressions), columns, strict=True):
        if not isinstance(projection, (exp.Alias, exp.Column)):
            projection.replace(exp.alias_(projection.copy(), name, quoted=True))
    return tree
