"""NATURAL JOIN by Spark's rule: the columns whose names are exactly equal on both sides.

A relation's columns are known here by their names as stored (a registered table's
schema) or as a derived table's SELECT names them; a join whose sides are not all known so
is left to DuckDB's rule, which matches names in any case (the same join unless two names
differ only in case).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sqlglot import exp


@dataclass(frozen=True)
class _Column:
    """A column of a join's result as Spark lists it: its name, and how the query refers
    to it (a relation's column, qualified; a FULL join's key, the COALESCE of its sides)."""

    name: str
    value: exp.Expr


@dataclass(frozen=True)
class _Rewrite:
    """How one NATURAL JOIN is written: ``using`` the exactly equal names; else, where the
    left side holds two columns one of those names names in any case (DuckDB's USING
    would find it ambiguous), ``on`` the pairs of columns joined, qualified; else (no name
    in common) no condition at all."""

    join: exp.Join
    using: list[str]
    on: list[tuple[_Column, _Column]] | None = None


def joins_by_exact_names(tree: exp.Expr, schemas: dict[str, dict[str, str]]) -> None:
    """Spark's NATURAL JOIN joins on the columns whose names are exactly equal on both
    sides (its analyzer intersects the names as they are spelled), where DuckDB's matches
    names in any case: ``MyId`` and ``MYID`` are two columns to Spark, and a NATURAL JOIN
    of only those is a cross join. Where the two differ (a name on one side equals one on
    the other in another case only) and the columns of every relation the join reads are
    known (a table's from ``schemas``, by registered name; a derived table's from its
    SELECT), the join is written with Spark's columns: ``USING`` the exactly equal names,
    else no condition at all.

    Where the left side holds two columns a joined name names in any case (``(t1
    NATURAL JOIN t2) NATURAL JOIN t3`` with ``MyId`` and ``MYID`` on the left), Spark
    joins the first of them; DuckDB's USING would find the name ambiguous, so the join is
    written ``ON`` the qualified columns, the SELECT's ``*`` as the columns Spark lists
    (the joined ones once, first), and an unqualified reference to a joined name as the
    one column Spark's result has by that name."""
    for select in list(tree.find_all(exp.Select)):
        source = select.args.get("from_")
        joins = select.args.get("joins") or []
        if source is None or not any(
            _is_natural(join) and join.find_ancestor(exp.Select) is select
            for join in select.find_all(exp.Join)
        ):
            continue
        rewrites: list[_Rewrite] = []
        base = _relation_columns_of(source.this, schemas, rewrites)
        result = _chain_columns(base, joins, schemas, rewrites)
        ons = [rewrite for rewrite in rewrites if rewrite.on is not None]
        if ons and (result is None or _renamed_star(select)):
            # Spark's columns not all known: DuckDB's NATURAL JOIN, refused as it was
            rewrites = [rewrite for rewrite in rewrites if rewrite.on is None]
            ons = []
        for rewrite in rewrites:
            _rewrite(rewrite)
        if ons and result is not None:
            _refer_to_spark_columns(select, result, {n for r in ons for n in r.using})


def _is_natural(join: exp.Expr) -> bool:
    return isinstance(join, exp.Join) and str(join.args.get("method") or "").upper() == "NATURAL"


def _chain_columns(
    base: list[_Column] | None,
    joins: list[exp.Join],
    schemas: dict[str, dict[str, str]],
    rewrites: list[_Rewrite],
) -> list[_Column] | None:
    """The columns of a relation (``base``, its columns) joined by ``joins`` in turn, as
    Spark lists them (None where a relation's are not known here), adding to ``rewrites``
    the NATURAL JOINs to write otherwise than DuckDB reads them."""
    result = base
    for join in joins:
        right = _relation_columns_of(join.this, schemas, rewrites)
        kind = str(join.args.get("kind") or "").upper()
        if _is_natural(join) and kind != "CROSS":  # NATURAL CROSS JOIN: refused as it was
            rewrite = _natural_rewrite(join, result, right)
            if rewrite is not None:
                rewrites.append(rewrite)
        if result is None or right is None:
            result = None
        elif kind in ("SEMI", "ANTI"):
            continue
        elif _is_natural(join) and kind != "CROSS":
            keys = [name for name in _unique(c.name for c in result) if name in _names(right)]
            result = _joined(join, result, right, keys)
        elif join.args.get("using"):
            result = _joined(join, result, right, [key.name for key in join.args["using"]])
        else:
            result = [*result, *right]
    return result


def _natural_rewrite(
    join: exp.Join, left: list[_Column] | None, right: list[_Column] | None
) -> _Rewrite | None:
    """How to write a NATURAL JOIN of ``left`` and ``right`` (Spark's columns of each
    side) for DuckDB to join Spark's columns; None where DuckDB's NATURAL JOIN does, or
    the columns are not known here."""
    if left is None or right is None:
        return None
    exact = [name for name in _unique(column.name for column in left) if name in _names(right)]
    in_any_case = {c.name.lower() for c in left} & {c.name.lower() for c in right}
    ambiguous = any(
        sum(column.name.lower() == name for column in side) > 1
        for name in in_any_case
        for side in (left, right)
    )
    if not ambiguous:
        if len(exact) == len(in_any_case):
            return None  # the same columns either way
        return _Rewrite(join, exact)
    pairs = [(_first(left, name), _first(right, name)) for name in exact]
    return _Rewrite(join, exact, [(a, b) for a, b in pairs if a is not None and b is not None])


def _rewrite(rewrite: _Rewrite) -> None:
    join = rewrite.join
    join.set("method", None)
    if rewrite.on:
        conditions = [exp.EQ(this=a.value.copy(), expression=b.value.copy()) for a, b in rewrite.on]
        join.set("on", exp.and_(*conditions))
    elif rewrite.on is None and rewrite.using:
        join.set("using", [exp.to_identifier(name, quoted=True) for name in rewrite.using])
    elif join.side:
        join.set("on", exp.true())
    else:
        join.set("kind", "CROSS")


def _joined(
    join: exp.Join, left: list[_Column], right: list[_Column], keys: list[str]
) -> list[_Column] | None:
    """Spark's columns of a join of ``left`` and ``right`` on the columns named ``keys``
    (each the first of a side named so in any case): the keys (the left's, the right's
    in a RIGHT join, their COALESCE in a FULL one), then the others of each side."""
    side = str(join.side or "").upper()
    pairs = [(_first(left, key), _first(right, key)) for key in keys]
    columns: list[_Column] = []
    for a, b in pairs:
        if a is None or b is None:
            return None  # a USING name one side lacks: DuckDB's error
        if side == "RIGHT":
            columns.append(b)
        elif side == "FULL":
            coalesced = exp.Coalesce(this=a.value.copy(), expressions=[b.value.copy()])
            columns.append(_Column(a.name, coalesced))
        else:
            columns.append(a)
    joined = {id(column) for pair in pairs for column in pair}
    return [
        *columns,
        *(column for column in left if id(column) not in joined),
        *(column for column in right if id(column) not in joined),
    ]


def _refer_to_spark_columns(select: exp.Select, result: list[_Column], keys: set[str]) -> None:
    """After a join written ``ON`` the qualified columns, where DuckDB keeps both sides'
    joined columns: each ``*`` of ``select`` as Spark's columns ``result``, and each
    unqualified reference to a joined name (``keys``) that Spark's result has one column
    of as that column (an unaliased item of the list keeps its name as written)."""
    items: list[exp.Expr] = []
    for item in select.expressions:
        if not isinstance(item, exp.Star):
            items.append(item)
            continue
        for column in result:
            value = column.value.copy()
            plain = isinstance(value, exp.Column) and value.name == column.name
            items.append(value if plain else exp.alias_(value, column.name, quoted=True))
    select.set("expressions", items)
    lowered = {key.lower() for key in keys}
    aliases = {item.alias.lower() for item in select.expressions if isinstance(item, exp.Alias)}
    for reference in list(select.find_all(exp.Column)):
        name = reference.name.lower()
        if reference.table or name not in lowered or reference.is_star:
            continue
        if reference.find_ancestor(exp.Select) is not select:
            continue
        if name in aliases and not reference.find_ancestor(exp.Join):
            continue  # the ORDER BY or GROUP BY may name the item so
        matches = [column for column in result if column.name.lower() == name]
        if len(matches) != 1:
            continue  # ambiguous to Spark too
        value = matches[0].value.copy()
        if reference.parent is select:
            value = exp.alias_(value, reference.name, quoted=True)
        reference.replace(value)


def _renamed_star(select: exp.Select) -> bool:
    """Whether a ``*`` of ``select`` renames or drops columns (``* EXCEPT``)."""
    return any(
        isinstance(item, exp.Star) and any(item.args.get(key) for key in item.args)
        for item in select.expressions
    )


def _first(columns: list[_Column], name: str) -> _Column | None:
    """The first of ``columns`` named ``name`` in any case (Spark's pick of a join's)."""
    return next((c for c in columns if c.name.lower() == name.lower()), None)


def _names(columns: list[_Column]) -> list[str]:
    return [column.name for column in columns]


def _unique(names: Iterable[str]) -> list[str]:
    """``names``, each once, in order."""
    seen: list[str] = []
    for name in names:
        if name not in seen:
            seen.append(name)
    return seen


def _named_twice(names: list[str]) -> bool:
    """Whether two of ``names`` are one name in any case (DuckDB's binder reads them so)."""
    return len({name.lower() for name in names}) != len(names)


def _relation_columns_of(
    relation: exp.Expr, schemas: dict[str, dict[str, str]], rewrites: list[_Rewrite]
) -> list[_Column] | None:
    """The columns of ``relation`` in a FROM or JOIN, each referred to by its qualifier:
    a table's or derived table's (``_relation_columns``), or a parenthesized join's
    (``(t1 NATURAL JOIN t2)``, whose NATURAL JOINs are added to ``rewrites``) as Spark
    lists them; None where not known here."""
    inner = relation.this
    if isinstance(relation, exp.Subquery) and not relation.alias and inner.args.get("joins"):
        return _relation_columns_of(inner, schemas, rewrites)
    joins = relation.args.get("joins")
    own = _qualified(relation, schemas)
    return _chain_columns(own, joins, schemas, rewrites) if joins else own


def _qualified(relation: exp.Expr, schemas: dict[str, dict[str, str]]) -> list[_Column] | None:
    """The columns of a table or derived table, each qualified by its name; None where
    not known, or where two are one name in any case (DuckDB names one of them otherwise,
    and finds either by the other's name)."""
    names = _relation_columns([relation], schemas)
    qualifier = relation.alias_or_name
    if names is None or not qualifier or _named_twice(names):
        return None
    return [_Column(name, exp.column(name, table=qualifier, quoted=True)) for name in names]


def _relation_columns(
    relations: list[exp.Expr], schemas: dict[str, dict[str, str]]
) -> list[str] | None:
    """The column names of ``relations`` in order, each a table ``schemas`` knows or a
    derived table whose columns are known (``_derived_columns``); None when one is not."""
    names: list[str] = []
    for relation in relations:
        if isinstance(relation, exp.Table):
            columns = list(schemas.get(relation.name) or []) or None
        else:
            columns = _derived_columns(relation, schemas)
        if columns is None:
            return None
        names.extend(columns)
    return names


def _derived_columns(relation: exp.Expr, schemas: dict[str, dict[str, str]]) -> list[str] | None:
    """The column names of a derived table (``(SELECT …) AS s`` or ``AS s(a, b)``), where
    its alias or its SELECT names them, or its SELECT is a ``*`` of one relation whose
    columns are known (an incremental refresh reads each change so)."""
    if not isinstance(relation, exp.Subquery):
        return None
    alias = relation.args.get("alias")
    listed = alias.columns if isinstance(alias, exp.TableAlias) else []
    if listed:
        return [column.name for column in listed]
    query = relation.this
    if not isinstance(query, exp.Select):
        return None
    items = query.expressions
    if not any(item.is_star for item in items):
        return [item.alias_or_name for item in items]
    source = query.args.get("from_")
    if len(items) != 1 or source is None or query.args.get("joins") or query.args.get("laterals"):
        return None
    return _relation_columns([source.this], schemas)
