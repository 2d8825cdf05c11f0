"""The type an outer join compares its keys in, for the keyed recompute of its inputs.

A keyed recompute of an outer join restricts each input to the touched keys by that
input's own key expression (``structure.keyed_join``). Spark compares a STRING with a
number, a DATE, a TIMESTAMP or a BOOLEAN in the other operand's type (``'01' = 1`` is
true: the string is cast to INT), while the touched keys, a union of each changed input's
keys, take the wider type (a STRING beside an INT is a STRING). An input whose key is a
STRING would then be compared as text (``'01'`` is not ``'1'``) and lose rows the join
matches. So where a key class mixes a STRING with another type, the STRING expressions are
cast to the type Spark compares them in, in the probes and in the restrictions alike.

The types come from the sources' schemas (each column's Spark type, as the refresh pinned
them): a key that is a column is traced down derived tables to its source's column, any
other expression typed by sqlglot's type annotation over its inputs. An expression whose
type cannot be told is left as it is.

>>> typing = KeyTyping({"a": (["k"], ["int"]), "b": (["g"], ["string"])}.__getitem__)
>>> relations = [[exp.to_table("a")], [exp.to_table("b")]]
>>> keys = [[exp.column("k", table="a")], [exp.column("g", table="b")]]
>>> [[key.sql("spark") for key in side] for side in typing.comparable(relations, keys)]
[['a.k'], ['CAST(b.g AS INT)']]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.annotate_types import annotate_types
from sqlglot.optimizer.qualify import qualify
from sqlglot.schema import MappingSchema

from dyntables.catalog import table_key

# A source's column names and their Spark types (simple strings), in one order.
SourceShape = tuple[Sequence[str], Sequence[str]]

_T = exp.DataType.Type
_INTEGRAL_ORDER = (_T.TINYINT, _T.SMALLINT, _T.INT, _T.BIGINT)


class KeyTyping:
    """Spark types of key expressions over a block's inputs, from ``shape_of`` (a source's
    key -> its column names and types)."""

    def __init__(self, shape_of: Callable[[str], SourceShape]) -> None:
        self.shape_of = shape_of

    def comparable(
        self, relations: Sequence[Sequence[exp.Expr]], keys: Sequence[Sequence[exp.Expr]]
    ) -> list[list[exp.Expr]]:
        """``keys`` (``keys[i]``: expressions over the inputs ``relations[i]`` joins, the
        ``p``-th keys of all sides equal to each other) with each STRING key of a class
        that mixes a STRING with another type cast to the type Spark compares them in."""
        types = [
            self.types_of(relation, side) for relation, side in zip(relations, keys, strict=True)
        ]
        compared = [list(side) for side in keys]
        for position in range(len(keys[0]) if keys else 0):
            column = [side[position] for side in types]
            target = comparison_type(column)
            if target is None:
                continue
            for side, kind in zip(compared, column, strict=True):
                if kind is not None and kind.is_type(*exp.DataType.TEXT_TYPES):
                    side[position] = exp.Cast(this=side[position].copy(), to=target.copy())
        return compared

    def types_of(
        self, relation: Sequence[exp.Expr], keys: Sequence[exp.Expr]
    ) -> list[exp.DataType | None]:
        """The types of ``keys`` read over the joined inputs ``relation`` (None where not
        known): traced through columns to a source's schema where each key is a column
        (a refresh's usual join keys: no copy of an input), else annotated."""
        traced = [self._traced(relation, key) for key in keys]
        if all(kind is not None for kind in traced):
            return traced
        return self._annotated(relation, keys)

    def _traced(self, relation: Sequence[exp.Expr], key: exp.Expr) -> exp.DataType | None:
        """The type of ``key``, a column (or a CAST) of one of the inputs ``relation``,
        found by following the column down derived tables to a source's schema; None
        where it is anything else."""
        if isinstance(key, exp.Cast):
            return key.to
        if not isinstance(key, exp.Column):
            return None
        named = [i for i in relation if i.alias_or_name == key.table] if key.table else relation
        if len(named) != 1:
            return None
        item = named[0]
        if isinstance(item, exp.Table):
            try:
                names, types = self.shape_of(table_key(item))
            except KeyError:
                return None
            found = [
                kind
                for name, kind in zip(names, types, strict=True)
                if name.lower() == key.name.lower()
            ]
            return exp.DataType.build(found[0], dialect="spark") if len(found) == 1 else None
        inner = item.this if isinstance(item, exp.Subquery) else None
        if not isinstance(inner, exp.Select):
            return None
        by_name = [p for p in inner.expressions if p.alias_or_name.lower() == key.name.lower()]
        if len(by_name) != 1:
            return None
        projection = by_name[0]
        definition = projection.this if isinstance(projection, exp.Alias) else projection
        return self._traced(_inputs(inner), definition)

    def _annotated(
        self, relation: Sequence[exp.Expr], keys: Sequence[exp.Expr]
    ) -> list[exp.DataType | None]:
        """The types of ``keys`` as sqlglot annotates them over the joined ``relation``."""
        first, *joined = relation
        probe = exp.select(*[key.copy() for key in keys]).from_(first.copy())
        for item in joined:  # a cross join: only the columns' types matter
            probe = probe.join(item.copy(), join_type="cross")
        try:
            schema = self._renamed_sources(probe)
            qualified = qualify(
                probe, schema=schema, dialect="spark", validate_qualify_columns=False
            )
            annotate_types(qualified, schema=schema, dialect="spark")
        except (SqlglotError, KeyError, ValueError):
            return [None] * len(keys)
        return [_known(projection.type) for projection in qualified.expressions]

    def _renamed_sources(self, probe: exp.Select) -> MappingSchema:
        """Each table ``probe`` reads renamed to a one-part name (``__dt_source0``, …;
        sources are named by one, two or three parts, or a path) under its own alias, and
        the schema of those names."""
        columns: dict[str, object] = {}
        for number, table in enumerate(list(probe.find_all(exp.Table))):
            names, types = self.shape_of(table_key(table))
            name = f"__dt_source{number}"
            columns[name] = dict(zip(names, types, strict=True))
            alias = table.alias_or_name
            renamed = exp.Table(this=exp.to_identifier(name))
            renamed.set("alias", exp.TableAlias(this=exp.to_identifier(alias)))
            table.replace(renamed)
        return MappingSchema(columns, dialect="spark")


def _inputs(relation: exp.Select) -> list[exp.Expr]:
    """The relations ``relation`` reads: its FROM's and its joins'."""
    from_ = relation.args.get("from_")
    joined = [join.this for join in relation.args.get("joins") or []]
    return ([from_.this] if from_ is not None else []) + joined


def comparison_type(types: Sequence[exp.DataType | None]) -> exp.DataType | None:
    """The type Spark (ANSI off) compares a STRING with the other ``types`` of a key class
    in (its ``PromoteStrings``): the other type where there is one (DOUBLE for a DECIMAL),
    the widest of several integral types, DOUBLE beside several numeric types, TIMESTAMP
    beside DATEs and TIMESTAMPs; None when the class has no STRING, no other
    type, or other types that do not make one.

    >>> build = exp.DataType.build
    >>> comparison_type([build("string"), build("int"), build("bigint")]).sql("spark")
    'BIGINT'
    >>> comparison_type([build("string"), build("decimal(5, 1)")]).sql("spark")
    'DOUBLE'
    >>> comparison_type([build("string"), build("string")]) is None
    True
    """
    known = [kind for kind in types if kind is not None]
    others = [kind for kind in known if not kind.is_type(*exp.DataType.TEXT_TYPES)]
    if len(others) == len(known) or not others:
        return None
    if all(kind == others[0] for kind in others) and not others[0].is_type(_T.DECIMAL):
        return others[0]
    if all(kind.is_type(*_INTEGRAL_ORDER) for kind in others):
        return max(others, key=lambda kind: _INTEGRAL_ORDER.index(kind.this))
    if all(kind.is_type(*exp.DataType.NUMERIC_TYPES) for kind in others):
        return exp.DataType.build("double")
    if all(kind.is_type(*exp.DataType.TEMPORAL_TYPES) for kind in others):
        dates = [kind for kind in others if kind.is_type(_T.DATE)]
        return others[0] if len(dates) == len(others) else _first_timestamp(others)
    if all(kind.is_type(_T.BOOLEAN) for kind in others):
        return others[0]
    return None


def _first_timestamp(kinds: Sequence[exp.DataType]) -> exp.DataType:
    return next(kind for kind in kinds if not kind.is_type(_T.DATE))


def _known(kind: exp.DataType | None) -> exp.DataType | None:
    if kind is None or kind.is_type(_T.UNKNOWN, _T.NULL):
        return None
    return kind
