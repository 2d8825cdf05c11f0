"""Spark's names for unaliased SELECT items, rendered from the Spark SQL tree.

Spark 3.5 names an unaliased item by ``toPrettySQL`` of the analyzed expression: each
function's ``prettyName`` (the name the user wrote for aliases such as ``ceiling``,
the canonical name for others, upper case for the math functions of old), its default
arguments spelled out, binary operators in parentheses, string literals without quotes
and column references without their qualifier. A whole-item CAST of a column is named by
the column. :func:`spark_column_name` renders that name from the ORIGINAL tree (as
:func:`sparkshim.translate.parse_spark` returns it, before any rewrite), and
:func:`name_select_items` gives every unaliased item of every SELECT its Spark name.

>>> from sparkshim.translate import parse_spark
>>> [spark_column_name(e) for e in parse_spark(
...     "SELECT a + 1, count(*), CASE WHEN x <> 'y' THEN 1.50 END, ceil(b) FROM t"
... ).expressions]
['(a + 1)', 'count(1)', 'CASE WHEN (NOT (x = y)) THEN 1.50 END', 'CEIL(b)']

Types are unknown here, so where Spark's name depends on one (``m['k']`` of a map is
``m[k]``, of a struct ``m.k``; ``date + INTERVAL`` is a ``date_add``) the name assumes the
common case; constructs the renderer does not know are named by their Spark SQL text and
listed by :func:`unknown_constructs`.
"""

from __future__ import annotations

import datetime
import decimal
import itertools
import logging
import re
from collections.abc import Callable
from typing import NamedTuple

from sqlglot import exp
from sqlglot.dialects.spark import Spark
from sqlglot.time import format_time

from sparkshim.types import format_double, format_float

__all__ = [
    "FUNCTION_NAME_KEY",
    "UNIT_KEY",
    "NameEdges",
    "duplicate_marker",
    "name_derived_columns",
    "name_select_items",
    "result_name_edges",
    "result_names",
    "spark_column_name",
    "strip_duplicate_marker",
    "unknown_constructs",
    "with_edge_names",
]

_LOG = logging.getLogger(__name__)

# The parse tree's meta key holding the function name as the user wrote it (translate.py's
# ShimSpark parser records it): Spark keeps that name for some aliases.
FUNCTION_NAME_KEY = "spark_name"
# Set on a from_unixtime whose pattern is the Java one as written (sqlglot's parser turns
# it into strftime's, losing the letters strftime lacks).
JAVA_PATTERN_KEY = "java_pattern"
# Set on a timestampadd / timestampdiff: its unit as written (Spark names the call by it,
# ``timestampadd(day, 1, d)``; sqlglot's parser writes it in capitals).
UNIT_KEY = "spark_unit"

# Functions Spark names in upper case (math functions of old and a few others).
_UPPER_CASE_NAMES = frozenset(
    {
        *("ceil", "floor", "sqrt", "exp", "log10", "log2", "log1p", "expm1", "power", "signum"),
        *("pi", "e", "sin", "cos", "tan", "cot", "sec", "csc", "asin", "acos", "atan", "atan2"),
        *("sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "degrees", "radians", "cbrt"),
        *("hypot", "rank", "dense_rank", "percent_rank", "spark_partition_id"),
        *("regexp_like", "regexp", "rlike"),
    }
)
# Functions whose Spark pretty name differs from the lower-cased name written.
_PRETTY_NAMES = {
    **{name: name.upper() for name in _UPPER_CASE_NAMES},
    "dateadd": "date_add",
    "current_schema": "current_database",
    "user": "current_user",
    "date_diff": "date_diff",
    "array_agg": "collect_list",
}

# Spark spells out the defaults of omitted trailing arguments: the full argument list
# with None for a required argument.
_DEFAULT_ARGUMENTS: dict[str, tuple[str | None, ...]] = {
    "round": (None, "0"),
    "bround": (None, "0"),
    "sort_array": (None, "true"),
    "substring": (None, None, "2147483647"),
    "substr": (None, None, "2147483647"),
    "locate": (None, None, "1"),
    "position": (None, None, "1"),
    "lpad": (None, None, " "),
    "rpad": (None, None, " "),
    "replace": (None, None, ""),
    "split": (None, None, "-1"),
    "months_between": (None, None, "true"),
    "unix_timestamp": ("current_timestamp()", "yyyy-MM-dd HH:mm:ss"),
    "to_unix_timestamp": (None, "yyyy-MM-dd HH:mm:ss"),
    "from_unixtime": (None, "yyyy-MM-dd HH:mm:ss"),
    "percentile": (None, None, "1"),
    "str_to_map": (None, ",", ":"),
    "lag": (None, "1", "NULL"),
    "lead": (None, "1", "NULL"),
    "regexp_extract": (None, None, "1"),
    "regexp_extract_all": (None, None, "1"),
    "regexp_replace": (None, None, None, "1"),
    "overlay": (None, None, None, "-1"),
}

# Ranking functions, framed ROWS by default; other window functions RANGE when ordered.
_ROWS_FRAMED = frozenset({"row_number", "RANK", "DENSE_RANK", "PERCENT_RANK", "ntile"})
_UNBOUNDED_FRAME = "ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING"

# Spark's array_sort(a) spells out its default comparator.
_ARRAY_SORT_COMPARATOR = (
    "lambdafunction((IF(((namedlambdavariable() IS NULL) AND (namedlambdavariable() IS NULL)),"
    " 0, (IF((namedlambdavariable() IS NULL), 1, (IF((namedlambdavariable() IS NULL), -1, "
    "(IF((namedlambdavariable() < namedlambdavariable()), -1, (IF((namedlambdavariable() > "
    "namedlambdavariable()), 1, 0)))))))))), namedlambdavariable(), namedlambdavariable())"
)

_BINARY_OPERATORS: dict[type[exp.Expr], str] = {
    exp.Add: "+",
    exp.Sub: "-",
    exp.Mul: "*",
    exp.Div: "/",
    exp.Mod: "%",
    exp.IntDiv: "div",
    exp.BitwiseAnd: "&",
    exp.BitwiseOr: "|",
    exp.BitwiseXor: "^",
    exp.EQ: "=",
    exp.NullSafeEQ: "<=>",
    exp.LT: "<",
    exp.LTE: "<=",
    exp.GT: ">",
    exp.GTE: ">=",
    exp.And: "AND",
    exp.Or: "OR",
}

# Spark SQL type names as Cast.sql prints them.
_TYPE_NAMES = {
    exp.DType.INT: "INT",
    exp.DType.BIGINT: "BIGINT",
    exp.DType.SMALLINT: "SMALLINT",
    exp.DType.TINYINT: "TINYINT",
    exp.DType.DOUBLE: "DOUBLE",
    exp.DType.FLOAT: "FLOAT",
    exp.DType.BOOLEAN: "BOOLEAN",
    exp.DType.DATE: "DATE",
    exp.DType.TIMESTAMP: "TIMESTAMP",
    exp.DType.TIMESTAMPTZ: "TIMESTAMP",
    exp.DType.TIMESTAMPLTZ: "TIMESTAMP",
    exp.DType.TIMESTAMPNTZ: "TIMESTAMP_NTZ",
    exp.DType.TEXT: "STRING",
    exp.DType.VARCHAR: "STRING",
    exp.DType.CHAR: "STRING",
    exp.DType.BINARY: "BINARY",
}

_TYPED_LITERALS = {
    exp.DType.DATE: "DATE",
    exp.DType.TIMESTAMP: "TIMESTAMP",
    exp.DType.TIMESTAMPTZ: "TIMESTAMP",
    exp.DType.TIMESTAMPLTZ: "TIMESTAMP",
    exp.DType.TIMESTAMPNTZ: "TIMESTAMP_NTZ",
}

_INTERVAL_UNITS = {
    "YEAR": "YEAR",
    "MONTH": "MONTH",
    "WEEK": "DAY",
    "DAY": "DAY",
    "HOUR": "HOUR",
    "MINUTE": "MINUTE",
    "SECOND": "SECOND",
}
_TWO_DIGIT_UNITS = frozenset({"HOUR", "MINUTE", "SECOND"})


# ---- entry points ----


def spark_column_name(expression: exp.Expr) -> str:
    """The name Spark 3.5 gives the unaliased SELECT item ``expression``."""
    if isinstance(expression, exp.Column):
        return expression.name
    if isinstance(expression, exp.Paren):
        return spark_column_name(expression.this)
    if _is_user_cast(expression) and isinstance(expression.this, exp.Column):
        return expression.this.name  # Spark names a cast column by the column
    if isinstance(expression, exp.Explode):
        return "col"
    return _Renderer(expression).render(expression)


def name_select_items(tree: exp.Expr) -> None:
    """Alias, in place, every unaliased item of every SELECT of ``tree`` with Spark's name,
    and mark the duplicates of a name within one SELECT list (DuckDB would rename them; see
    :func:`duplicate_marker`). ``*`` items, generators and columns keep their names (see
    :func:`result_names` for a column's)."""
    for select in tree.find_all(exp.Select):
        seen: dict[str, int] = {}
        grouped = _grouping_set_names(select)
        for item in select.expressions:
            if isinstance(item, _KEEP_NAMES) or (
                isinstance(item, exp.Column) and isinstance(item.this, exp.Star)
            ):
                continue
            name = _item_name(item, grouped)
            repeat = seen.get(name.lower(), 0)
            seen[name.lower()] = repeat + 1
            # DuckDB refuses an empty alias: the mark stands in for it.
            wanted = duplicate_marker(name, repeat) if repeat or not name else name
            if isinstance(item, exp.Alias):
                if wanted != name:
                    item.set("alias", exp.to_identifier(wanted, quoted=True))
                continue
            if isinstance(item, exp.Column) and not repeat:
                continue  # an alias would change DuckDB's error for an unknown column
            alias = exp.Alias(alias=exp.to_identifier(wanted, quoted=True))
            item.replace(alias)
            alias.set("this", item)
    for table_alias in tree.find_all(exp.TableAlias):
        _mark_duplicate_columns(table_alias)


def _mark_duplicate_columns(table_alias: exp.Expr) -> None:
    """Mark the repeated names of a column list (``WITH t(x, x)``): Spark keeps both."""
    seen: dict[str, int] = {}
    for column in table_alias.args.get("columns") or []:
        if not isinstance(column, exp.Identifier):
            continue
        repeat = seen.get(column.name.lower(), 0)
        seen[column.name.lower()] = repeat + 1
        if repeat:
            column.replace(exp.to_identifier(duplicate_marker(column.name, repeat), quoted=True))


def result_names(query: exp.Expr) -> list[str] | None:
    """Spark's names of the columns of ``query`` (after :func:`name_select_items`), or None
    where a ``*`` leaves them to the relations read. A column is named as written (DuckDB
    names it by the table's spelling)."""
    select = _first_select(query)
    if select is None:
        return None
    names = _leading_names(select)
    return names if len(names) == len(select.expressions) else None


def _first_select(query: exp.Expr) -> exp.Select | None:
    """The SELECT that names the columns of ``query`` (a set operation's first branch)."""
    while isinstance(query, exp.SetOperation | exp.Subquery):
        query = query.this
    return query if isinstance(query, exp.Select) else None


class NameEdges(NamedTuple):
    """Spark's names of the columns of a query around its ``*``s (:func:`result_name_edges`):
    ``segments[0]`` those before the first ``*``, ``segments[i]`` those after the i-th (up
    to the next, or the end); ``stars`` each ``*`` as written (``*``, ``t.*``), in lower
    case, to tell the ones that give the same columns."""

    segments: list[list[str]]
    stars: list[str]


def result_name_edges(query: exp.Expr) -> NameEdges | None:
    """Spark's names of the columns of ``query`` around its ``*``s (``SELECT myid, * FROM
    t``: ``myid`` is named as written, the ``*``'s columns as the relations name them);
    None where it has no ``*``, or an item that gives a number of columns not known here
    (a generator, a multi-column alias)."""
    select = _first_select(query)
    if select is None:
        return None
    items = select.expressions
    stars = [index for index, item in enumerate(items) if item.is_star]
    if not stars or any(isinstance(i, _KEEP_NAMES) and not i.is_star for i in items):
        return None
    grouped = _grouping_set_names(select)
    bounds = [-1, *stars, len(items)]
    segments = [
        [_item_name(item, grouped) for item in items[start + 1 : end]]
        for start, end in itertools.pairwise(bounds)
    ]
    return NameEdges(segments, [items[index].sql("spark").lower() for index in stars])


def with_edge_names(
    names: list[str], edges: NameEdges | None, widths: list[int | None] | None = None
) -> list[str]:
    """``names`` (a result's columns as DuckDB names them) with the columns around its
    ``*``s named by ``edges`` (:func:`result_name_edges`), where they fit. ``widths``: how
    many columns each ``*`` gives, where known; the columns between two ``*``s are placed
    by them, or where the ``*``s not known are the same one (``SELECT *, myid, * FROM t``)
    by sharing the rest between them; else only the columns before the first ``*`` and
    after the last are named."""
    if edges is None:
        return names
    segments, stars = edges
    named = sum(len(segment) for segment in segments)
    if named > len(names):
        return names
    spans = _star_widths(len(names) - named, stars, widths)
    if spans is None:
        leading, trailing = segments[0], segments[-1]
        middle = len(names) - len(leading) - len(trailing)
        return [*leading, *names[len(leading) : len(leading) + middle], *trailing]
    result: list[str] = []
    for segment, width in zip(segments, [*spans, 0], strict=True):
        result += segment
        result += names[len(result) : len(result) + width]
    return result


def _star_widths(free: int, stars: list[str], widths: list[int | None] | None) -> list[int] | None:
    """How many of the ``free`` columns (those no item names) each of ``stars`` gives:
    ``widths`` where known, the same share of the rest for the others where they are all one
    ``*``; None where that does not add up."""
    known = list(widths) if widths is not None and len(widths) == len(stars) else []
    known = known or [None] * len(stars)
    unknown = [index for index, width in enumerate(known) if width is None]
    rest = free - sum(width for width in known if width is not None)
    if not unknown:
        return [width for width in known if width is not None] if rest == 0 else None
    if len(unknown) > 1 and len({stars[index] for index in unknown}) != 1:
        return None
    if rest < 0 or rest % len(unknown):
        return None
    return [rest // len(unknown) if width is None else width for width in known]


def _leading_names(select: exp.Select) -> list[str]:
    """Spark's names of ``select``'s items up to its first ``*`` or generator."""
    grouped = _grouping_set_names(select)
    names = []
    for item in select.expressions:
        if isinstance(item, _KEEP_NAMES) or item.is_star:
            break
        names.append(_item_name(item, grouped))
    return names


def _item_name(item: exp.Expr, grouped: dict[str, str]) -> str:
    """Spark's name of one item of a SELECT list, ``grouped`` by the names of its
    grouping-set columns (:func:`_grouping_set_names`)."""
    if isinstance(item, exp.Alias):
        return item.alias
    column = item.unnest()
    if grouped and isinstance(column, exp.Column) and not _is_field_access(column):
        return grouped.get(column.name.lower(), column.name)
    return spark_column_name(item)


def _is_field_access(column: exp.Column) -> bool:
    """Whether ``column`` reads a field of a STRUCT column (``s.aa``, ``t.s.aa``): its
    qualifier names no relation read there. Spark names such an item as written, beside
    grouping-set keys too."""
    return bool(column.table) and column.table.lower() not in _source_names(column)


def _grouping_set_names(select: exp.Expr) -> dict[str, str]:
    """The column keys of a GROUP BY with ROLLUP, CUBE or GROUPING SETS, by lower-case
    name, as first written there: Spark names an unaliased column of such a SELECT that is a
    key by the key's spelling (``SELECT region ... GROUP BY ROLLUP(REGION)`` names it
    ``REGION``), where a plain GROUP BY leaves the column as written, as it leaves a field
    of a STRUCT (``SELECT s.aa ... GROUP BY ROLLUP(s.AA)`` names it ``aa``)."""
    group = select.args.get("group")
    if group is None:
        return {}
    kinds = (exp.Cube, exp.Rollup, exp.GroupingSets)
    if not any(group.args.get(key) for key in ("cube", "rollup", "grouping_sets")) and not any(
        isinstance(key, kinds) for key in group.expressions
    ):
        return {}
    names: dict[str, str] = {}
    for key in group.expressions:
        keys = key.expressions if isinstance(key, kinds) else [key]
        for inner in keys:
            inner = inner.unnest()
            for column in inner.expressions if isinstance(inner, exp.Tuple) else [inner]:
                if (
                    isinstance(column, exp.Column)
                    and not isinstance(column.this, exp.Star)
                    and not _is_field_access(column)
                ):
                    names.setdefault(column.name.lower(), column.name)
    return names


# A name for an unaliased subquery in FROM, which a column list needs (Spark's own).
_SUBQUERY_NAME = "__auto_generated_subquery_name"


def name_derived_columns(tree: exp.Expr) -> None:
    """Give, in place, each subquery in a FROM or JOIN and each CTE of ``tree`` a column
    list of Spark's names for its leading columns (up to a ``*``).

    DuckDB names an unaliased column of a derived query by the table's spelling where
    Spark names it as written (``SELECT * FROM (SELECT myid FROM t)`` has a column
    ``myid`` of a table's ``MyId``). The items are not aliased: an alias would change
    DuckDB's error for an unknown column; a column list renames them after binding.
    """
    for node in list(tree.find_all(exp.Subquery, exp.CTE)):
        if isinstance(node, exp.Subquery) and not (
            isinstance(node.parent, (exp.From, exp.Join)) and not node.args.get("pivots")
        ):
            continue
        alias = node.args.get("alias")
        if alias is not None and alias.args.get("columns"):
            continue
        query = node.this
        while isinstance(query, (exp.SetOperation, exp.Subquery)):
            query = query.this
        if not isinstance(query, exp.Select):
            continue
        names = _leading_names(query)
        if not names:
            continue
        if alias is None:
            alias = exp.TableAlias(this=exp.to_identifier(_SUBQUERY_NAME))
            node.set("alias", alias)
        alias.set("columns", [exp.to_identifier(name, quoted=True) for name in names])


# Items named otherwise: all columns of a relation, several columns of a generator.
_KEEP_NAMES = (exp.Star, exp.Aliases, exp.Posexplode, exp.Inline, exp.Explode)


_DUPLICATE_MARK = "\u2063sparkshim_duplicate_"
_MARKED = re.compile(re.escape(_DUPLICATE_MARK) + r"\d+$")


def duplicate_marker(name: str, repeat: int) -> str:
    """The alias of the ``repeat``-th repetition of ``name`` in one SELECT list: Spark keeps
    duplicate names, DuckDB renames them (``a_1``), so the name is carried with a mark that
    :func:`strip_duplicate_marker` removes from the result's column names."""
    return f"{name}{_DUPLICATE_MARK}{repeat}"


def strip_duplicate_marker(name: str) -> str:
    """``name`` without :func:`duplicate_marker`'s mark."""
    return _MARKED.sub("", name)


def unknown_constructs(expression: exp.Expr) -> list[str]:
    """The node types in ``expression`` the renderer names by their SQL text (a guess)."""
    renderer = _Renderer(expression)
    renderer.render(expression)
    return sorted(renderer.unknown)


# ---- the renderer ----


def _is_user_cast(node: exp.Expr) -> bool:
    written = str(node.meta.get(FUNCTION_NAME_KEY, "")).lower()
    return isinstance(node, exp.Cast) and written in ("cast", "try_cast")


def _written_name(node: exp.Expr) -> str | None:
    if isinstance(node, exp.Anonymous):
        return str(node.this).lower()
    written = node.meta.get(FUNCTION_NAME_KEY)
    return str(written).lower() if written else None


def _number(text: str) -> str:
    """A numeric literal as Spark prints its value (Java's toString of its type)."""
    if re.fullmatch(r"[0-9]+", text):
        return str(int(text))
    if "e" in text.lower():
        return format_double(float(text))
    return str(decimal.Decimal(text))


class _Renderer:
    """Renders one item; lambda variables in scope and the sources of the enclosing
    SELECTs decide how identifiers and qualified columns print."""

    def __init__(self, item: exp.Expr) -> None:
        self.lambda_variables: set[str] = set()
        self.item = item
        self._sources: set[str] | None = None
        self.unknown: set[str] = set()

    def render(self, node: exp.Expr | str | None) -> str:
        if node is None:
            return "NULL"
        if isinstance(node, str):
            return node
        rule = _RULES.get(type(node))
        if rule is not None:
            return rule(self, node)
        if isinstance(node, exp.Func):
            return self.function(node)
        self.unknown.add(type(node).__name__)
        _LOG.debug("no Spark name rule for %s", type(node).__name__)
        return node.sql(dialect="spark")

    def sources(self) -> set[str]:
        """The relations around the item (found once, on the first qualified column)."""
        if self._sources is None:
            self._sources = _source_names(self.item)
        return self._sources

    def all(self, nodes: list[exp.Expr]) -> list[str]:
        return [self.render(node) for node in nodes]

    # -- leaves --

    def column(self, node: exp.Expr) -> str:
        parts = [part.name for part in node.parts] if isinstance(node, exp.Column) else [node.name]
        if len(parts) == 1 and parts[0].lower() in self.lambda_variables:
            return "namedlambdavariable()"
        while len(parts) > 1 and parts[0].lower() in self.sources():
            parts = parts[1:]  # a qualifier naming a relation; the rest is a struct path
        return ".".join(parts)

    def identifier(self, node: exp.Expr) -> str:
        if node.name.lower() in self.lambda_variables:
            return "namedlambdavariable()"
        return node.name

    def literal(self, node: exp.Expr) -> str:
        return str(node.this) if node.is_string else _number(str(node.this))

    def neg(self, node: exp.Expr) -> str:
        # Spark's parser reads a minus before a number (typed or not) as part of the literal.
        if _is_number_literal(node.this):
            return "-" + self.render(node.this)
        return f"(- {self.render(node.this)})"

    def cast(self, node: exp.Expr) -> str:
        to = node.args.get("to")
        value = node.this
        kind = to.this if isinstance(to, exp.DataType) else None
        if _is_user_cast(node):
            keyword = (
                "TRY_CAST" if str(node.meta[FUNCTION_NAME_KEY]).lower() == "try_cast" else "CAST"
            )
            return f"{keyword}({self.render(value)} AS {_type_sql(to)})"
        if _written_name(node) in ("date", "timestamp"):
            return self.render(value)  # date(x), timestamp(x): a cast named by x
        if kind == exp.DType.DECIMAL and _is_number_literal(node):
            return _plain_decimal(value.name)  # 1.5BD
        if kind in _TYPED_LITERALS and isinstance(value, exp.Literal) and value.is_string:
            return _typed_literal(_TYPED_LITERALS[kind], value.name)
        if isinstance(value, exp.Literal) and not value.is_string:
            if kind == exp.DType.DOUBLE:
                return format_double(float(value.name))
            if kind == exp.DType.FLOAT:
                return format_float(float(value.name))
        return self.render(value)  # a typed number literal (1L, 1BD) or a cast function

    # -- operators --

    def binary(self, node: exp.Expr) -> str:
        date_arithmetic = _date_arithmetic(node)
        if date_arithmetic is not None:
            name, date, days = date_arithmetic
            return f"{name}({self.render(date)}, {self.render(days)})"
        if isinstance(node, (exp.Add, exp.Sub)) and isinstance(node.expression, exp.Interval):
            # timestamp +/- interval (Spark names date + INTERVAL ... DAY a date_add)
            operator = _BINARY_OPERATORS[type(node)]
            return f"{self.render(node.this)} {operator} {self.render(node.expression)}"
        if _written_name(node) is not None and not isinstance(node, exp.Connector):
            return self.function(node)
        operator = _BINARY_OPERATORS[type(node)]
        return f"({self.render(node.this)} {operator} {self.render(node.expression)})"

    def not_equal(self, node: exp.Expr) -> str:
        return f"(NOT ({self.render(node.this)} = {self.render(node.expression)}))"

    def negation(self, node: exp.Expr) -> str:
        inner = node.this
        if isinstance(inner, exp.Is) and isinstance(inner.expression, exp.Null):
            return f"({self.render(inner.this)} IS NOT NULL)"
        if isinstance(inner, exp.Paren):
            inner = inner.this
        return f"(NOT {self.render(inner)})"

    def is_(self, node: exp.Expr) -> str:
        if isinstance(node.expression, exp.Null):
            return f"({self.render(node.this)} IS NULL)"
        return f"({self.render(node.this)} <=> {self.render(node.expression)})"

    def distinct_from(self, node: exp.Expr) -> str:
        return f"(NOT ({self.render(node.this)} <=> {self.render(node.expression)}))"

    def in_(self, node: exp.Expr) -> str:
        if node.args.get("query") is not None:
            return f"({self.render(node.this)} IN (listquery()))"
        return f"({self.render(node.this)} IN ({', '.join(self.all(node.expressions))}))"

    def between(self, node: exp.Expr) -> str:
        value = self.render(node.this)
        low, high = self.render(node.args["low"]), self.render(node.args["high"])
        return f"(({value} >= {low}) AND ({value} <= {high}))"

    def like(self, node: exp.Expr) -> str:
        text = f"{self.render(node.this)} LIKE {self.render(node.expression)}"
        return f"(NOT {text})" if node.args.get("negate") else text

    def ilike(self, node: exp.Expr) -> str:
        text = f"ilike({self.render(node.this)}, {self.render(node.expression)})"
        return f"(NOT {text})" if node.args.get("negate") else text

    def rlike(self, node: exp.Expr) -> str:
        name = _PRETTY_NAMES.get(_written_name(node) or "rlike", "RLIKE")
        return f"{name}({self.render(node.this)}, {self.render(node.expression)})"

    def escape(self, node: exp.Expr) -> str:
        return self.render(node.this)

    def paren(self, node: exp.Expr) -> str:
        return self.render(node.this)

    def bitwise_not(self, node: exp.Expr) -> str:
        return f"~{self.render(node.this)}"

    def concat_operator(self, node: exp.Expr) -> str:
        return f"concat({self.render(node.this)}, {self.render(node.expression)})"

    def case(self, node: exp.Expr) -> str:
        subject = node.this
        parts = ["CASE"]
        for branch in node.args.get("ifs") or []:
            condition = self.render(branch.this)
            if subject is not None:
                condition = f"({self.render(subject)} = {condition})"
            parts.append(f"WHEN {condition} THEN {self.render(branch.args['true'])}")
        default = node.args.get("default")
        if default is not None:
            parts.append(f"ELSE {self.render(default)}")
        return " ".join([*parts, "END"])

    def if_(self, node: exp.Expr) -> str:
        arguments = [node.this, node.args.get("true"), node.args.get("false")]
        return f"(IF({', '.join(self.render(a) for a in arguments)}))"

    # -- values --

    def array(self, node: exp.Expr) -> str:
        return f"array({', '.join(self.all(node.expressions))})"

    def map_(self, node: exp.Expr) -> str:
        keys, values = node.args["keys"], node.args["values"]
        pairs = zip(keys.expressions, values.expressions, strict=True)
        return f"map({', '.join(f'{self.render(k)}, {self.render(v)}' for k, v in pairs)})"

    def struct(self, node: exp.Expr) -> str:
        if _written_name(node) == "named_struct":
            pairs = [
                (f.name, f.expression) for f in node.expressions if isinstance(f, exp.PropertyEQ)
            ]
            return f"named_struct({', '.join(f'{n}, {self.render(v)}' for n, v in pairs)})"
        fields = []
        for position, field in enumerate(node.expressions, 1):
            if not isinstance(field, exp.PropertyEQ):
                fields.append(self.render(field))
                continue
            value, name = field.expression, field.name
            implicit = name == f"col{position}" or (
                isinstance(value, exp.Column) and value.name == name
            )
            rendered = self.render(value)
            fields.append(rendered if implicit else f"{rendered} AS {name}")
        return f"struct({', '.join(fields)})"

    def bracket(self, node: exp.Expr) -> str:
        written = _written_name(node)
        index = self.all(node.expressions)
        if written is not None:
            return f"{written}({self.render(node.this)}, {', '.join(index)})"
        return f"{self.render(node.this)}[{', '.join(index)}]"

    def dot(self, node: exp.Expr) -> str:
        return f"{self.render(node.this)}.{node.expression.name}"

    def interval(self, node: exp.Expr) -> str:
        unit = node.args.get("unit")
        text = node.this.name if isinstance(node.this, exp.Literal) else self.render(node.this)
        if isinstance(unit, exp.IntervalSpan):
            start, end = unit.this.name.upper(), unit.expression.name.upper()
            return f"INTERVAL '{text}' {start} TO {end}"
        name = unit.name.upper().rstrip("S") if unit is not None else ""
        spark_unit = _INTERVAL_UNITS.get(name)
        if spark_unit == "SECOND" and re.fullmatch(r"-?[0-9]+\.[0-9]+", text):
            return f"INTERVAL '{_fractional_seconds(text)}' SECOND"
        if spark_unit is None or not re.fullmatch(r"-?[0-9]+", text):
            self.unknown.add(f"INTERVAL {name}")
            return f"INTERVAL '{text}' {name}"
        amount = int(text) * (7 if name == "WEEK" else 1)
        shown = f"{amount:02d}" if spark_unit in _TWO_DIGIT_UNITS else str(amount)
        return f"INTERVAL '{shown}' {spark_unit}"

    def hex_string(self, node: exp.Expr) -> str:
        return f"X'{node.name.upper()}'"

    def subquery(self, node: exp.Expr) -> str:
        # Spark lists a correlated subquery's outer references (scalarsubquery(a)); those
        # qualified by a relation the subquery does not define are recognised here.
        return f"scalarsubquery({', '.join(_outer_references(node))})"

    def exists(self, node: exp.Expr) -> str:
        if isinstance(node.this, (exp.Query, exp.Subquery)):
            return f"exists({', '.join(_outer_references(node.this))})"
        return self.function(node)

    def lambda_(self, node: exp.Expr) -> str:
        names = [variable.name.lower() for variable in node.expressions]
        outer = set(self.lambda_variables)
        self.lambda_variables |= set(names)
        body = self.render(node.this)
        self.lambda_variables = outer
        variables = ", ".join("namedlambdavariable()" for _ in names)
        return f"lambdafunction({body}, {variables})"

    # -- functions --

    def count(self, node: exp.Expr) -> str:
        argument = node.this
        if isinstance(argument, exp.Star) or argument is None:
            return "count(1)"
        if isinstance(argument, exp.Tuple):  # count((a, b)) counts a struct
            return f"count({self.named_struct(argument)})"
        if isinstance(argument, exp.Distinct) and len(argument.expressions) == 1:
            only = argument.expressions[0]
            if isinstance(only, exp.Tuple):
                return f"count(DISTINCT {self.named_struct(only)})"
        return f"count({self.aggregate_arguments(node)})"

    def named_struct(self, node: exp.Expr) -> str:
        """A row constructor ``(a, b)`` as Spark names the struct it builds: each field named
        by its column, else ``col<n>``."""
        fields = []
        for position, value in enumerate(node.expressions, start=1):
            field = value.name if isinstance(value, exp.Column) else f"col{position}"
            fields += [field, self.render(value)]
        return f"named_struct({', '.join(fields)})"

    def aggregate_arguments(self, node: exp.Expr) -> str:
        argument = node.this
        if isinstance(argument, exp.Distinct):
            # corr(DISTINCT x, y): sqlglot keeps only x in the DISTINCT
            rest = [other for other in _arguments(node) if other is not argument]
            return "DISTINCT " + ", ".join(self.all([*argument.expressions, *rest]))
        rest = [a for a in node.expressions] if "expressions" in node.arg_types else []
        return ", ".join(self.all([argument, *rest]))

    def ignore_nulls(self, node: exp.Expr) -> str:
        return self.render(node.this)

    def filter_(self, node: exp.Expr) -> str:
        condition = node.expression.this if isinstance(node.expression, exp.Where) else None
        return f"{self.render(node.this)} FILTER (WHERE {self.render(condition)})"

    def window(self, node: exp.Expr) -> str:
        node = self.named_window(node)
        function = node.this
        inner = function.this if isinstance(function, exp.IgnoreNulls) else function
        name = self.render(function)
        pretty = name.split("(", 1)[0]
        spec = []
        partition = node.args.get("partition_by") or []
        if partition:
            spec.append("PARTITION BY " + ", ".join(self.all(partition)))
        order = node.args.get("order")
        keys = order.expressions if order is not None else []
        if keys:
            spec.append("ORDER BY " + ", ".join(self.ordered(key) for key in keys))
        spec.append(self.frame(node.args.get("spec"), pretty, inner, bool(keys)))
        return f"{name} OVER ({' '.join(spec)})"

    def named_window(self, node: exp.Expr) -> exp.Expr:
        """``f OVER w`` with the definition of ``w`` (a WINDOW clause) filled in."""
        name = node.args.get("alias")
        select = node.find_ancestor(exp.Select)
        if name is None or select is None or node.args.get("partition_by"):
            return node
        for definition in select.args.get("windows") or []:
            if definition.this.name.lower() == name.name.lower():
                filled: exp.Expr = definition.copy()
                filled.set("this", node.this.copy())
                return filled
        return node

    def ordered(self, node: exp.Expr) -> str:
        if not isinstance(node, exp.Ordered):
            return f"{self.render(node)} ASC NULLS FIRST"
        descending = bool(node.args.get("desc"))
        nulls_first = node.args.get("nulls_first")
        if nulls_first is None:
            nulls_first = not descending
        direction = "DESC" if descending else "ASC"
        return f"{self.render(node.this)} {direction} NULLS {'FIRST' if nulls_first else 'LAST'}"

    def frame(self, spec: exp.Expr | None, pretty: str, function: exp.Expr, ordered: bool) -> str:
        if isinstance(spec, exp.WindowSpec):
            kind = str(spec.args.get("kind") or "ROWS").upper()
            start = _bound(spec.args.get("start"), spec.args.get("start_side"))
            end_value = spec.args.get("end")
            end = _bound(end_value, spec.args.get("end_side")) if end_value else "CURRENT ROW"
            return f"{kind} BETWEEN {start} AND {end}"
        if pretty in ("lag", "lead"):
            offset = _DEFAULT_ARGUMENTS["lag"][1]
            given = function.args.get("offset")
            amount = int(self.render(given)) if given is not None else int(str(offset))
            amount = -amount if pretty == "lag" else amount
            return f"ROWS BETWEEN {amount} FOLLOWING AND {amount} FOLLOWING"
        if not ordered:
            return _UNBOUNDED_FRAME
        if pretty in _ROWS_FRAMED:
            return "ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"
        return "RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"

    def function(self, node: exp.Expr) -> str:
        written = _written_name(node) or node.key
        special = _FUNCTIONS.get(written)
        if special is not None:
            return special(self, node)
        name = _PRETTY_NAMES.get(written, written)
        if isinstance(node, exp.AggFunc) and isinstance(node.this, exp.Distinct):
            distinct = node.this
            rest = [other for other in _arguments(node) if other is not distinct]
            arguments = self.all([*distinct.expressions, *rest])
            arguments[0] = "DISTINCT " + arguments[0]
        else:
            arguments = self.all(_arguments(node))
        defaults = _DEFAULT_ARGUMENTS.get(name, ())
        if name in ("lpad", "rpad") and _is_binary(_arguments(node)[0]):
            defaults = (None, None, "X'00'")  # a BINARY is padded with zero bytes
        arguments += [d for d in defaults[len(arguments) :] if d is not None]
        return f"{name}({', '.join(arguments)})"


def _arguments(node: exp.Expr) -> list[exp.Expr]:
    """A function's arguments in call order (sqlglot keeps them in ``arg_types`` order)."""
    if isinstance(node, exp.StrPosition):  # locate(substr, str[, pos]); instr(str, substr)
        if _written_name(node) == "instr":
            return [node.this, node.args["substr"]]
        ordered = [node.args["substr"], node.this, node.args.get("position")]
        return [argument for argument in ordered if argument is not None]
    arguments: list[exp.Expr] = []
    for key in node.arg_types:
        value = node.args.get(key)
        if key == "unit" and isinstance(value, exp.Var):
            continue  # date_add(d, n): sqlglot's implied DAY
        if isinstance(value, list):
            arguments.extend(v for v in value if isinstance(v, exp.Expr))
        elif isinstance(value, exp.Expr):
            arguments.append(value)
    return arguments


def _log(renderer: _Renderer, node: exp.Expr) -> str:
    arguments = renderer.all(_arguments(node))
    if len(arguments) == 1:
        return f"LOG(E(), {arguments[0]})"
    return f"LOG({', '.join(arguments)})"


def _adjacent_strings(renderer: _Renderer, node: exp.Expr) -> str:
    # 'a' 'b' (and 'it''s') is one literal to Spark's parser; sqlglot reads a concat.
    parts = node.expressions
    if _written_name(node) is None and all(
        isinstance(part, exp.Literal) and part.is_string for part in parts
    ):
        return "".join(part.name for part in parts)
    return renderer.function(node)


def _first_last(renderer: _Renderer, node: exp.Expr) -> str:
    # first(x, true) is first(x) IGNORE NULLS; Spark's name shows neither.
    return f"{_written_name(node) or node.key}({renderer.render(node.this)})"


def _aggregate(renderer: _Renderer, node: exp.Expr) -> str:
    # aggregate(array, start, merge) spells out the identity finish function.
    arguments = renderer.all(_arguments(node))
    if len(arguments) == 3:
        arguments.append("lambdafunction(namedlambdavariable(), namedlambdavariable())")
    return f"{_written_name(node)}({', '.join(arguments)})"


def _any(renderer: _Renderer, node: exp.Expr) -> str:
    return f"{_written_name(node) or 'any'}({renderer.render(node.this)})"


def _trim(renderer: _Renderer, node: exp.Expr) -> str:
    position = node.args.get("position")
    characters = node.args.get("expression")
    if position and characters is not None:
        return f"TRIM({position} {renderer.render(characters)} FROM {renderer.render(node.this)})"
    arguments = [node.this, *([characters] if characters is not None else [])]
    return f"{_written_name(node)}({', '.join(renderer.all(arguments))})"


def _extract(renderer: _Renderer, node: exp.Expr) -> str:
    return f"extract({node.this.name} FROM {renderer.render(node.expression)})"


def _datepart(renderer: _Renderer, node: exp.Expr) -> str:
    field, source = node.expressions
    return f"datepart({renderer.render(field)} FROM {renderer.render(source)})"


def _array_sort(renderer: _Renderer, node: exp.Expr) -> str:
    comparator = node.args.get("expression")
    shown = renderer.render(comparator) if comparator is not None else _ARRAY_SORT_COMPARATOR
    return f"array_sort({renderer.render(node.this)}, {shown})"


def _sort_array(renderer: _Renderer, node: exp.Expr) -> str:
    ascending = node.args.get("asc")
    order = renderer.render(ascending) if ascending is not None else "true"
    return f"sort_array({renderer.render(node.this)}, {order})"


def _position(renderer: _Renderer, node: exp.Expr) -> str:
    arguments = renderer.all(_arguments(node))
    arguments += ["1"][: 3 - len(arguments)] if len(arguments) == 2 else []
    return f"{_written_name(node)}({', '.join(arguments)})"


def _no_arguments(name: str) -> Callable[[_Renderer, exp.Expr], str]:
    return lambda renderer, node: name


def _last_argument(name: str) -> Callable[[_Renderer, exp.Expr], str]:
    return lambda renderer, node: f"{name}({renderer.render(_arguments(node)[-1])})"


def _first_argument(name: str) -> Callable[[_Renderer, exp.Expr], str]:
    return lambda renderer, node: f"{name}({renderer.render(_arguments(node)[0])})"


def _date_sub(renderer: _Renderer, node: exp.Expr) -> str:
    # sqlglot reads date_sub(d, n) as a date_add of n * -1.
    days = node.expression
    if isinstance(days, exp.Mul) and _written_name(days) is None:
        days = days.this
    return f"date_sub({renderer.render(node.this)}, {renderer.render(days)})"


def _from_unixtime(renderer: _Renderer, node: exp.Expr) -> str:
    # sqlglot turns the Java pattern into strftime's; Spark shows the Java one.
    pattern = node.args.get("format")
    java = "yyyy-MM-dd HH:mm:ss"
    if isinstance(pattern, exp.Literal) and node.meta.get(JAVA_PATTERN_KEY):
        java = pattern.name
    elif isinstance(pattern, exp.Literal):
        java = (
            format_time(pattern.name, Spark.INVERSE_TIME_MAPPING, Spark.INVERSE_TIME_TRIE) or java
        )
    elif pattern is not None:
        java = renderer.render(pattern)
    return f"from_unixtime({renderer.render(node.this)}, {java})"


def _cast_function(renderer: _Renderer, node: exp.Expr) -> str:
    return renderer.render(node.this)  # date(x), timestamp(x): a cast


_FUNCTIONS: dict[str, Callable[[_Renderer, exp.Expr], str]] = {
    "log": _log,
    "aggregate": _aggregate,
    "reduce": _aggregate,
    "first": _first_last,
    "last": _first_last,
    "trim": _trim,
    "ltrim": _trim,
    "rtrim": _trim,
    "log10": _last_argument("LOG10"),
    "log2": _last_argument("LOG2"),
    "initcap": _first_argument("initcap"),
    "date_sub": _date_sub,
    "from_unixtime": _from_unixtime,
    "isnull": lambda renderer, node: f"({renderer.render(_arguments(node)[0])} IS NULL)",
    "isnotnull": lambda renderer, node: f"({renderer.render(_arguments(node)[0])} IS NOT NULL)",
    "positive": lambda renderer, node: f"(+ {renderer.render(_arguments(node)[0])})",
    "extract": _extract,
    "datepart": _datepart,
    "array_sort": _array_sort,
    "sort_array": _sort_array,
    "locate": _position,
    "position": _position,
    "current_date": _no_arguments("current_date()"),
    "current_timestamp": _no_arguments("current_timestamp()"),
    "date": _cast_function,
    "timestamp": _cast_function,
}


def _bound(value: exp.Expr | str | None, side: object) -> str:
    text = value if isinstance(value, str) else (value.sql("spark") if value is not None else "")
    if text.upper() == "CURRENT ROW":
        return "CURRENT ROW"
    return f"{text.upper()} {str(side or '').upper()}".strip()


def _type_sql(to: exp.Expr | None) -> str:
    if not isinstance(to, exp.DataType):
        return "?"
    if to.this == exp.DType.DECIMAL:
        parameters = [p.this.name for p in to.expressions] or ["10", "0"]
        return f"DECIMAL({','.join(parameters + ['0'][: 2 - len(parameters)])})"
    return _TYPE_NAMES.get(to.this, to.sql("spark").upper())


def _is_number_literal(node: exp.Expr) -> bool:
    """A number literal, plain or typed (``1``, ``1L``, ``1.5BD``, ``1D``: a cast of one)."""
    if isinstance(node, exp.Literal):
        return not node.is_string
    if not isinstance(node, (exp.Cast, exp.TryCast)) or _is_user_cast(node):
        return False
    value = node.this
    if not isinstance(value, exp.Literal) or _written_name(node) is not None:
        return False
    # A BD literal is a cast of its digits as a string.
    return not value.is_string or bool(re.fullmatch(r"[0-9.]+([eE][-+]?[0-9]+)?", value.name))


def _fractional_seconds(text: str) -> str:
    """``INTERVAL '1.50' SECOND``'s amount as Spark prints it: ``01.5``."""
    sign = "-" if text.startswith("-") else ""
    whole, fraction = text.lstrip("-").split(".")
    fraction = fraction.rstrip("0")
    return f"{sign}{int(whole):02d}" + (f".{fraction}" if fraction else "")


def _plain_decimal(text: str) -> str:
    """A BD literal as Spark prints its BigDecimal: plain digits, never a negative scale
    (``5e36BD`` is 5 and 36 zeros)."""
    value = decimal.Decimal(text)
    exponent = value.as_tuple().exponent
    if isinstance(exponent, int) and exponent > 0:
        value = value.quantize(decimal.Decimal(1), context=decimal.Context(prec=100))
    return format(value, "f")


def _is_binary(node: exp.Expr) -> bool:
    """An expression evidently BINARY (types are unknown here): unhex, X'..', a cast."""
    if isinstance(node, (exp.Unhex, exp.HexString, exp.FromBase64)):
        return True
    to = node.args.get("to") if isinstance(node, (exp.Cast, exp.TryCast)) else None
    return isinstance(to, exp.DataType) and to.this == exp.DType.BINARY


def _is_date(node: exp.Expr) -> bool:
    """A DATE literal or a cast to DATE: Spark's + and - on it are date_add / date_sub."""
    to = node.args.get("to") if isinstance(node, (exp.Cast, exp.TryCast)) else None
    return isinstance(to, exp.DataType) and to.this == exp.DType.DATE


def _date_arithmetic(node: exp.Expr) -> tuple[str, exp.Expr, exp.Expr] | None:
    """``date + n``, ``n + date`` and ``date - n`` (n not an interval nor a date) as the
    date_add / date_sub Spark names them by: (name, date, days)."""
    if not isinstance(node, (exp.Add, exp.Sub)) or _written_name(node) is not None:
        return None
    left, right = node.this, node.expression
    if any(isinstance(side, exp.Interval) for side in (left, right)):
        return None
    if _is_date(left) and not _is_date(right):
        return ("date_add" if isinstance(node, exp.Add) else "date_sub", left, right)
    if isinstance(node, exp.Add) and _is_date(right) and not _is_date(left):
        return ("date_add", right, left)
    return None


def _typed_literal(keyword: str, text: str) -> str:
    """``DATE '...'`` / ``TIMESTAMP '...'`` as Spark prints the literal's value."""
    value = text.strip()
    try:
        if keyword == "DATE":
            return f"DATE '{datetime.date.fromisoformat(value[:10]).isoformat()}'"
        parsed = datetime.datetime.fromisoformat(value.replace("T", " "))
    except ValueError:
        return f"{keyword} '{value}'"
    shown = parsed.strftime("%Y-%m-%d %H:%M:%S")
    if parsed.microsecond:
        shown += f".{parsed.microsecond:06d}".rstrip("0")
    return f"{keyword} '{shown}'"


def _source_names(item: exp.Expr) -> set[str]:
    """The names of the relations the SELECTs around ``item`` read (qualifiers to drop)."""
    names: set[str] = set()
    select = item.find_ancestor(exp.Select)
    while select is not None:
        for source in [select.args.get("from_"), *(select.args.get("joins") or [])]:
            if source is None:
                continue
            for table in source.find_all(exp.Table, exp.Subquery):
                if table.alias_or_name:
                    names.add(table.alias_or_name.lower())
        select = select.find_ancestor(exp.Select)
    return names


def _within_group(renderer: _Renderer, node: exp.Expr) -> str:
    """``percentile_cont(0.25) WITHIN GROUP (ORDER BY x DESC)``, as Spark names it: the
    ordering's direction only when descending, no NULLS clause."""
    function = node.this
    name = _ORDERED_SET_NAMES.get(type(function))
    order = node.expression
    keys = order.expressions if isinstance(order, exp.Order) else []
    if name is None or len(keys) != 1:
        return renderer.function(node)
    key = keys[0]
    descending = isinstance(key, exp.Ordered) and bool(key.args.get("desc"))
    value = key.this if isinstance(key, exp.Ordered) else key
    direction = " DESC" if descending else ""
    return (
        f"{name}({renderer.render(function.this)}) WITHIN GROUP"
        f" (ORDER BY {renderer.render(value)}{direction})"
    )


def _utc_conversion(name: str) -> Callable[[_Renderer, exp.Expr], str]:
    """from_utc_timestamp / to_utc_timestamp, which sqlglot reads as AT TIME ZONE nodes
    with a cast of the timestamp of its own (Spark names the argument as written)."""

    def render(renderer: _Renderer, node: exp.Expr) -> str:
        value = node.this
        if isinstance(value, exp.Cast) and not _is_user_cast(value):
            value = value.this
        return f"{name}({', '.join(renderer.all([value, node.args['zone']]))})"

    return render


def _timestamp_arithmetic(renderer: _Renderer, node: exp.Expr) -> str:
    """``timestampadd(unit, amount, ts)`` / ``timestampdiff(unit, start, end)`` (Spark
    names its aliases, ``dateadd`` ..., so too), the unit as written; sqlglot keeps the
    timestamp (the end) as ``this``."""
    name = "timestampadd" if isinstance(node, exp.TimestampAdd) else "timestampdiff"
    unit = node.meta.get(UNIT_KEY) or node.args["unit"].name
    arguments = renderer.all([node.expression, node.this])
    return f"{name}({unit}, {', '.join(arguments)})"


_ORDERED_SET_NAMES: dict[type[exp.Expr], str] = {
    exp.PercentileCont: "percentile_cont",
    exp.PercentileDisc: "percentile_disc",
}


_RULES: dict[type[exp.Expr], Callable[[_Renderer, exp.Expr], str]] = {
    exp.Column: _Renderer.column,
    exp.Identifier: _Renderer.identifier,
    exp.Literal: _Renderer.literal,
    exp.Null: lambda renderer, node: "NULL",
    exp.Boolean: lambda renderer, node: "true" if node.this else "false",
    exp.Neg: _Renderer.neg,
    exp.Cast: _Renderer.cast,
    exp.TryCast: _Renderer.cast,
    **{operator: _Renderer.binary for operator in _BINARY_OPERATORS},
    exp.NEQ: _Renderer.not_equal,
    exp.Not: _Renderer.negation,
    exp.Is: _Renderer.is_,
    exp.NullSafeNEQ: _Renderer.distinct_from,
    exp.In: _Renderer.in_,
    exp.Between: _Renderer.between,
    exp.Like: _Renderer.like,
    exp.ILike: _Renderer.ilike,
    exp.RegexpLike: _Renderer.rlike,
    exp.Escape: _Renderer.escape,
    exp.Paren: _Renderer.paren,
    exp.BitwiseNot: _Renderer.bitwise_not,
    # Spark 3.5 has no << or >>: sqlglot's shift operators are its shiftleft/shiftright
    exp.BitwiseLeftShift: lambda renderer, node: _call(renderer, "shiftleft", node),
    exp.BitwiseRightShift: lambda renderer, node: _call(renderer, "shiftright", node),
    exp.DPipe: _Renderer.concat_operator,
    exp.Case: _Renderer.case,
    exp.If: _Renderer.if_,
    exp.Array: _Renderer.array,
    exp.VarMap: _Renderer.map_,
    exp.Struct: _Renderer.struct,
    exp.Bracket: _Renderer.bracket,
    exp.Dot: _Renderer.dot,
    exp.Interval: _Renderer.interval,
    exp.HexString: _Renderer.hex_string,
    exp.Subquery: _Renderer.subquery,
    exp.Select: _Renderer.subquery,
    exp.Exists: _Renderer.exists,
    exp.Lambda: _Renderer.lambda_,
    exp.Count: _Renderer.count,
    exp.Concat: _adjacent_strings,
    exp.Any: _any,
    exp.IgnoreNulls: _Renderer.ignore_nulls,
    exp.Filter: _Renderer.filter_,
    exp.Window: _Renderer.window,
    exp.WithinGroup: _within_group,
    exp.AtTimeZone: _utc_conversion("from_utc_timestamp"),
    exp.FromTimeZone: _utc_conversion("to_utc_timestamp"),
    exp.TimestampAdd: _timestamp_arithmetic,
    exp.TimestampDiff: _timestamp_arithmetic,
    exp.TsOrDsToDate: lambda renderer, node: (
        renderer.function(node) if _written_name(node) else renderer.render(node.this)
    ),
}


def _call(renderer: _Renderer, name: str, node: exp.Expr) -> str:
    """``name(a, b)`` of a binary node's operands."""
    return f"{name}({', '.join(renderer.all([node.this, node.expression]))})"


def _outer_references(subquery: exp.Expr) -> list[str]:
    """The names of the columns ``subquery`` takes from an enclosing query, in order of
    appearance and as often as they appear: those qualified by a relation it does not
    define itself (an unqualified outer reference cannot be told from its own columns
    without the schemas)."""
    defined = {
        source.alias_or_name.lower()
        for source in subquery.find_all(exp.Table, exp.Subquery, exp.CTE)
        if source is not subquery
    }
    names: list[str] = []
    for column in subquery.find_all(exp.Column, bfs=False):
        qualifier = column.table.lower()
        if qualifier and qualifier not in defined:
            names.append(column.name)  # each reference, as Spark lists them
    return names
