"""NATURAL JOIN by Spark's rule: the columns whose names are exactly equal on both sides.

A relation's columns are known here by their names as stored (a registered table's
schema) or as a derived table's SELECT names them; a join whose sides are not all known so
is left to DuckDB's rule, which matches names in any case (the same join unless two names
differ only in case).
"""

from __future__ import annotations

from sqlglot import exp


def joins_by_exact_names(tree: exp.Expr, schemas: dict[str, dict[str, str]]) -> None:
    """Spark's NATURAL JOIN joins on the columns whose names are exactly equal on both
    sides (its analyzer intersects the names as they are spelled), where DuckDB's matches
    names in any case: ``MyId`` and ``MYID`` are two columns to Spark, and a NATURAL JOIN
    of only those is a cross join. Where the two differ (a name on one side equals one on
    the other in another case only) and the columns of every relation the join reads are
    known (a table's from ``schemas``, by registered name; a derived table's from its
    SELECT), the join is written with Spark's columns: ``USING`` the exactly equal names,
    else no condition at all."""
    for join in list(tree.find_all(exp.Join)):
        if str(join.args.get("method") or "").upper() != "NATURAL":
            continue
        if str(join.args.get("kind") or "").upper() == "CROSS":
            continue  # NATURAL CROSS JOIN: not Spark's grammar, refused as it was
        select = join.parent
        if not isinstance(select, exp.Select) or select.args.get("from_") is None:
            continue
        earlier = select.args["joins"][: select.args["joins"].index(join)]
        left = _relation_columns([select.args["from_"].this, *(j.this for j in earlier)], schemas)
        right = _relation_columns([join.this], schemas)
        if left is None or right is None or _named_twice(left) or _named_twice(right):
            continue  # columns not known here (or one name twice): DuckDB's join
        exact = [name for name in left if name in right]
        in_any_case = {name.lower() for name in left} & {name.lower() for name in right}
        if len(exact) == len(in_any_case):
            continue  # the same columns either way
        join.set("method", None)
        if exact:
            join.set("using", [exp.to_identifier(name, quoted=True) for name in exact])
        elif join.side:
            join.set("on", exp.true())
        else:
            join.set("kind", "CROSS")


def _named_twice(names: list[str]) -> bool:
    """Whether two of ``names`` are one name in any case (DuckDB's binder reads them so)."""
    return len({name.lower() for name in names}) != len(names)


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
