"""FROZEN WHERE predicates: validation, Spark spelling, the active region, and implication.

A dynamic table's ``FROZEN WHERE (<predicate>)`` (legacy ``IMMUTABLE WHERE``) freezes the rows
where the predicate is TRUE; rows where it is FALSE or NULL form the active region, the only
rows a refresh touches. Everything here is pure: sqlglot trees in, sqlglot trees (or a bool)
out, no engine.

>>> tree = check_frozen_predicate("order_date < CURRENT_TIMESTAMP() - INTERVAL '30 days'",
...                               ["order_id", "order_date"])
>>> to_spark_sql(active_region(tree))
"NOT COALESCE((order_date < CURRENT_TIMESTAMP() - INTERVAL '30' DAY), FALSE)"
>>> expands(parse_one("y <= 2023"), parse_one("y <= 2024"))
True
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any, TypeAlias

from sqlglot import exp

from dyntables.errors import DynamicTableError
from dyntables.planner.analysis import function_name, short_sql
from dyntables.planner.rules import NONDETERMINISTIC_FUNCTIONS
from dyntables.sql.dialect import parse_one, to_spark_sql

__all__ = [
    "SPARK_BUILTIN_FUNCTIONS",
    "TIME_FUNCTIONS",
    "active_region",
    "bind_current_time",
    "check_frozen_predicate",
    "expands",
    "is_frozen",
    "to_spark_predicate",
]

# The clock functions a frozen predicate may call (Spark names, lower case): they make
# "older than 30 days" possible, and `bind_current_time` pins them to a refresh's data
# timestamp. Spark 3.5 has no CURRENT_TIME; sqlglot reads it, so it is refused explicitly.
TIME_FUNCTIONS = frozenset(
    {"current_timestamp", "now", "current_date", "curdate", "localtimestamp"}
)

# Spark 3.5 built-in scalar functions that sqlglot's Spark dialect reads as exp.Anonymous
# (every other built-in it reads as a typed node). Generated once from Spark 3.5's
# FunctionRegistry (SHOW SYSTEM FUNCTIONS with each function's group), minus aggregate,
# window and generator functions, the nondeterministic ones, and reflect/java_method, which
# call arbitrary Java code (the spec's "external functions").
SPARK_BUILTIN_FUNCTIONS = frozenset(
    {
        # misc
        "aes_decrypt", "aes_encrypt", "assert_true", "hll_sketch_estimate", "hll_union",
        "raise_error", "try_aes_decrypt", "user", "version",
        # array, collection, map
        "array_repeat", "array_union", "arrays_overlap", "get", "cardinality", "map_concat",
        "map_entries", "map_values",
        # conversion
        "bigint", "binary", "decimal", "smallint", "tinyint",
        # math, bitwise, hash
        "bin", "bround", "conv", "e", "expm1", "hypot", "log1p", "pmod", "positive",
        "shiftrightunsigned", "crc32", "hash", "xxhash64",
        # string, url
        "btrim", "find_in_set", "format_number", "luhn_check", "mask", "octet_length", "printf",
        "sentences", "to_varchar", "try_to_binary", "try_to_number", "url_decode", "url_encode",
        # date and time
        "date_part", "datepart", "make_date", "make_dt_interval", "make_timestamp_ltz",
        "make_timestamp_ntz", "make_ym_interval", "now", "timestamp_micros",
        "timestamp_millis", "timestamp_seconds", "to_timestamp_ltz", "to_timestamp_ntz",
        "try_to_timestamp", "weekday",
        # higher-order
        "forall", "map_filter", "map_zip_with", "transform_keys", "transform_values",
        "zip_with",
        # predicates, csv, json, xml
        "isnotnull", "isnull", "regexp", "from_csv", "schema_of_csv", "to_csv",
        "json_array_length", "schema_of_json", "xpath", "xpath_boolean", "xpath_double",
        "xpath_float", "xpath_int", "xpath_long", "xpath_number", "xpath_short",
        "xpath_string",
    }
)  # fmt: skip

# Aggregate, window and generator functions sqlglot reads as exp.Anonymous (the typed ones
# are exp.AggFunc subclasses); named so that the refusal says what they are.
_AGGREGATE_FUNCTIONS = frozenset(
    {
        "count_min_sketch", "every", "histogram_numeric", "hll_sketch_agg", "hll_union_agg",
        "mean", "some", "std", "try_avg", "try_sum",
    }
)  # fmt: skip
_WINDOW_FUNCTIONS = frozenset(
    {
        "row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile", "lag",
        "lead", "nth_value", "session_window", "window", "window_time",
    }
)  # fmt: skip
_GENERATOR_FUNCTIONS = frozenset(
    {
        "explode", "explode_outer", "posexplode", "posexplode_outer", "inline",
        "inline_outer", "stack", "json_tuple",
    }
)  # fmt: skip

# Expression shapes that are certainly not boolean: cheap to recognise at the root.
_NOT_BOOLEAN = (
    exp.Literal,
    exp.Neg,
    exp.Add,
    exp.Sub,
    exp.Mul,
    exp.Div,
    exp.Mod,
    exp.IntDiv,
    exp.DPipe,
    exp.Interval,
    exp.Array,
    exp.Tuple,
    exp.Star,
)


def check_frozen_predicate(
    predicate: str,
    columns: Sequence[str],
    known_functions: Callable[[str], bool] | None = None,
) -> exp.Expr:
    """Parse and validate a FROZEN WHERE predicate over a dynamic table's output ``columns``.

    Returns the predicate in Spark form (see `to_spark_predicate`). ``known_functions``
    tells whether a function sqlglot does not know (an ``exp.Anonymous``) is a built-in of
    the session, e.g. ``lambda name: spark.catalog.functionExists(name)``; without it such
    functions are refused unless they are in `SPARK_BUILTIN_FUNCTIONS`. Raises
    `DynamicTableError` naming the construct and the way out.

    >>> check_frozen_predicate("rand() < 0.5", ["a"])
    Traceback (most recent call last):
    ...
    dyntables.errors.DynamicTableError: FROZEN WHERE cannot call the nondeterministic \
function rand(): only the current date/time functions (current_timestamp, current_date, now, \
localtimestamp) may change between refreshes; compare columns with literals instead
    """
    tree = _spark_form(parse_one(predicate))
    allowed = {name.lower() for name in columns}
    for node in tree.walk():
        problem = _problem(node, allowed, known_functions)
        if problem is not None:
            raise DynamicTableError(f"FROZEN WHERE {problem}")
    _check_boolean(tree)
    return tree


def to_spark_predicate(predicate: str) -> str:
    """The predicate as Spark 3.5 SQL text: Snowflake spellings become Spark's.

    >>> to_spark_predicate("order_date < '2025-01-01'::TIMESTAMP_NTZ")
    "order_date < CAST('2025-01-01' AS TIMESTAMP_NTZ)"
    >>> to_spark_predicate("order_date < CURRENT_TIMESTAMP - INTERVAL '30 days'")
    "order_date < CURRENT_TIMESTAMP() - INTERVAL '30' DAY"
    """
    return to_spark_sql(_spark_form(parse_one(predicate)))


def bind_current_time(predicate: exp.Expr, data_timestamp: datetime.datetime) -> exp.Expr:
    """A copy of ``predicate`` with every clock function replaced by ``data_timestamp``.

    So "older than 30 days" is measured from the refresh's data timestamp, not from the
    moment the statement happens to run, and every refresh of the same data agrees.

    Time zones: ``data_timestamp`` is taken as UTC (an aware value is converted to UTC, a
    naive one is assumed to be UTC already), and the Spark session time zone is assumed to
    be UTC, so that ``TIMESTAMP '…'`` means that instant and CURRENT_DATE is the UTC date.
    CURRENT_TIMESTAMP() and NOW() become TIMESTAMP literals, LOCALTIMESTAMP a TIMESTAMP_NTZ
    literal (the UTC wall time), CURRENT_DATE the DATE literal of the UTC date.

    >>> at = datetime.datetime(2025, 2, 1, 12, 30)
    >>> to_spark_sql(bind_current_time(parse_one("d < CURRENT_DATE() AND t < now()"), at))
    "d < CAST('2025-02-01' AS DATE) AND t < CAST('2025-02-01 12:30:00' AS TIMESTAMP)"
    """
    if data_timestamp.tzinfo is not None:
        data_timestamp = data_timestamp.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    stamp = data_timestamp.isoformat(sep=" ")
    literals = {
        "current_timestamp": exp.cast(exp.Literal.string(stamp), _spark_type("TIMESTAMP")),
        "localtimestamp": exp.cast(exp.Literal.string(stamp), _spark_type("TIMESTAMP_NTZ")),
        "current_date": exp.cast(
            exp.Literal.string(data_timestamp.date().isoformat()), _spark_type("DATE")
        ),
    }

    def bind(node: exp.Expr) -> exp.Expr:
        clock = _clock_name(node)
        return literals[clock].copy() if clock is not None else node

    return _spark_form(predicate).transform(bind)


def is_frozen(predicate: exp.Expr) -> exp.Expr:
    """``COALESCE((predicate), FALSE)``: TRUE exactly on the frozen rows.

    >>> to_spark_sql(is_frozen(parse_one("a < 1")))
    'COALESCE((a < 1), FALSE)'
    """
    return exp.Coalesce(this=exp.paren(predicate.copy(), copy=False), expressions=[exp.false()])


def active_region(predicate: exp.Expr) -> exp.Expr:
    """``NOT COALESCE((predicate), FALSE)``: TRUE where the predicate is FALSE or NULL.

    A plain ``NOT predicate`` would be NULL, hence not active, on the NULL rows, which the
    spec counts as active.

    >>> to_spark_sql(active_region(parse_one("a < 1 OR b = 2")))
    'NOT COALESCE((a < 1 OR b = 2), FALSE)'
    """
    return exp.not_(is_frozen(predicate), copy=False)


def expands(old: exp.Expr, new: exp.Expr) -> bool:
    """Whether every row that ``old`` freezes is also frozen by ``new`` (old ⇒ new).

    Sound, not complete: True only when it is proven, False when it cannot be (a shrink or a
    reshape, or a shape this does not understand). A row where ``old`` is NULL is active,
    so the implication only has to hold where ``old`` is TRUE.

    Clock functions on both sides are taken as the same instant; to compare predicates
    evaluated at different times, `bind_current_time` each with its own timestamp first.
    Column types are unknown here, so a string literal is compared under every reading
    Spark may give it (string, date, timestamp, number, boolean), and literals of different
    types (an INT and a DECIMAL, a DATE and a TIMESTAMP) are not compared at all. Also
    assumed: binary string collation and a UTC session time zone.

    >>> expands(parse_one("d < '2025-01-02'"), parse_one("d < '2025-01-01'"))
    False
    >>> expands(parse_one("a BETWEEN 1 AND 5"), parse_one("a > 0 AND a IN (1, 2, 3, 4, 5)"))
    False
    >>> expands(parse_one("a IN (1, 2)"), parse_one("a BETWEEN 0 AND 3 OR b IS NULL"))
    True
    """
    old_tree, new_tree = _canonical(old), _canonical(new)
    if old_tree == new_tree:
        return True
    return _implies(_normal(old_tree), _normal(new_tree))


# --- validation -----------------------------------------------------------------------------


def _problem(
    node: exp.Expr, columns: set[str], known_functions: Callable[[str], bool] | None
) -> str | None:
    """What makes ``node`` unfit for a frozen predicate, phrased to follow "FROZEN WHERE"."""
    if isinstance(node, (exp.Query, exp.Subquery)):
        return (
            f"cannot contain a subquery ({short_sql(node.parent or node)}); compare the dynamic"
            " table's own columns with literal values instead"
        )
    if isinstance(node, exp.Window):
        return (
            f"cannot contain the window function {short_sql(node)}; the predicate is evaluated"
            " on each row alone, so compute the value as a column in the defining query"
        )
    if isinstance(node, exp.Column):
        return _column_problem(node, columns)
    if isinstance(node, exp.Func):
        return _function_problem(node, known_functions)
    return None


def _column_problem(column: exp.Column, columns: set[str]) -> str | None:
    name = column.name
    if _is_lambda_variable(column):
        return None
    if name.lower().startswith("metadata$"):
        return f"cannot refer to the metadata column {name}; use the dynamic table's own columns"
    if name.lower() not in columns:
        listed = ", ".join(sorted(columns)) or "none"
        return (
            f"refers to {short_sql(column)}, which is not a column of the dynamic table"
            f" (its columns: {listed}); the predicate may use only the dynamic table's output"
            " columns, not the columns of its sources"
        )
    return None


def _is_lambda_variable(column: exp.Column) -> bool:
    """``x`` in ``exists(arr, x -> x > 0)`` is the lambda's parameter, not a column."""
    if column.table:
        return False
    lambda_node = column.find_ancestor(exp.Lambda)
    while lambda_node is not None:
        if column.name in {param.name for param in lambda_node.expressions}:
            return True
        lambda_node = lambda_node.find_ancestor(exp.Lambda)
    return False


def _function_problem(func: exp.Func, known_functions: Callable[[str], bool] | None) -> str | None:
    name = function_name(func)
    if _clock_name(func) is not None:
        return None
    if isinstance(func, exp.CurrentTime):
        return "cannot call CURRENT_TIME, which Spark 3.5 lacks; use CURRENT_TIMESTAMP()"
    if name in NONDETERMINISTIC_FUNCTIONS or isinstance(func, (exp.Rand, exp.Randn, exp.Uuid)):
        return (
            f"cannot call the nondeterministic function {name}(): only the current date/time"
            " functions (current_timestamp, current_date, now, localtimestamp) may change"
            " between refreshes; compare columns with literals instead"
        )
    if isinstance(func, exp.AggFunc) or name in _AGGREGATE_FUNCTIONS:
        return (
            f"cannot contain the aggregate function {name}(); the predicate is evaluated on"
            " each row alone, so aggregate in the defining query and compare that column"
        )
    if name in _WINDOW_FUNCTIONS:
        return (
            f"cannot contain the window function {name}(); the predicate is evaluated on each"
            " row alone, so compute the value as a column in the defining query"
        )
    if isinstance(func, (exp.Explode, exp.Inline)) or name in _GENERATOR_FUNCTIONS:
        return f"cannot contain the generator function {name}(); it returns rows, not a value"
    if isinstance(func, exp.Anonymous) and not _known(name, known_functions):
        return (
            f"cannot call {name}(): it is not a Spark built-in function, and user-defined or"
            " external functions are not allowed; compute the value as a column of the"
            " dynamic table and compare that column"
        )
    return None


def _known(name: str, known_functions: Callable[[str], bool] | None) -> bool:
    if name in ("reflect", "java_method", "try_reflect"):
        return False  # built-in, but calls arbitrary Java code: an external function
    if name in SPARK_BUILTIN_FUNCTIONS:
        return True
    return known_functions is not None and known_functions(name)


def _check_boolean(tree: exp.Expr) -> None:
    root = tree
    while isinstance(root, exp.Paren):
        root = root.this
    not_boolean = isinstance(root, _NOT_BOOLEAN) or (
        isinstance(root, exp.Cast) and not root.to.is_type(exp.DType.BOOLEAN)
    )
    if not_boolean:
        raise DynamicTableError(
            f"FROZEN WHERE needs a boolean condition, found {short_sql(root)}, which is not"
            " boolean; write a comparison such as order_date < '2025-01-01'"
        )


# --- the Spark spelling ---------------------------------------------------------------------

# Interval units as Spark's ANSI interval literals spell them: INTERVAL '30' DAY.
_PLURAL_UNITS = {"YEARS", "MONTHS", "WEEKS", "DAYS", "HOURS", "MINUTES", "SECONDS"}


def _spark_form(tree: exp.Expr) -> exp.Expr:
    """A copy of ``tree`` as Spark 3.5 should read it.

    sqlglot already turns ``'…'::T`` into CAST and ``CURRENT_TIMESTAMP`` into
    ``CURRENT_TIMESTAMP()``; what is left is the plural interval unit ('30 days' reads
    as ``'30' DAYS``), which Spark accepts but its documented ANSI form is singular.
    """

    def rewrite(node: exp.Expr) -> exp.Expr:
        unit = node.args.get("unit") if isinstance(node, exp.Interval) else None
        if isinstance(unit, exp.Var) and unit.name.upper() in _PLURAL_UNITS:
            node.set("unit", exp.var(unit.name.upper()[:-1]))
        return node

    return tree.copy().transform(rewrite, copy=False)


def _spark_type(name: str) -> exp.DataType:
    return exp.DataType.build(name, dialect="spark")


def _clock_name(node: exp.Expr) -> str | None:
    """The canonical name of a clock function (``now`` is ``current_timestamp``), else None."""
    if isinstance(node, exp.CurrentTimestamp):
        return "current_timestamp"
    if isinstance(node, exp.CurrentDate):
        return "current_date"
    if isinstance(node, exp.Localtimestamp):
        return "localtimestamp"
    if isinstance(node, exp.Anonymous):
        name = str(node.name).lower()
        if name in ("now", "current_timestamp") and not node.expressions:
            return "current_timestamp"
        if name in ("curdate", "current_date") and not node.expressions:
            return "current_date"
        if name == "localtimestamp" and not node.expressions:
            return "localtimestamp"
    return None


# --- implication ----------------------------------------------------------------------------
#
# Both predicates are brought to negation normal form over atoms (NOT pushed down with De
# Morgan, which holds in SQL's three-valued logic; NOT of a comparison flips its operator,
# NULL staying NULL). An atom compares one "term" (any non-literal expression, compared
# structurally) with one value.

# A value as Spark may read it: per reading ("string", "date", "int32", "rel:current_date",
# …) the Python value to order by, or None when that reading makes it NULL.
_Comparable: TypeAlias = Fraction | float | str | bool | datetime.date | tuple[str, int]


@dataclass(frozen=True)
class _Value:
    key: str  # structural identity: the same literal is equal to itself under any reading
    readings: tuple[tuple[str, _Comparable | None], ...] | None  # None: identity only


@dataclass(frozen=True)
class _Const:
    value: bool | None  # TRUE, FALSE, or NULL (never TRUE)


@dataclass(frozen=True)
class _Cmp:
    term: str
    op: str
    value: _Value


@dataclass(frozen=True)
class _IsNull:
    term: str
    negated: bool


@dataclass(frozen=True)
class _Opaque:
    key: str


@dataclass(frozen=True)
class _And:
    parts: tuple[_Node, ...]


@dataclass(frozen=True)
class _Or:
    parts: tuple[_Node, ...]


_Node: TypeAlias = _Const | _Cmp | _IsNull | _Opaque | _And | _Or

_COMPARISONS: dict[type[exp.Expr], str] = {
    exp.LT: "<",
    exp.LTE: "<=",
    exp.GT: ">",
    exp.GTE: ">=",
    exp.EQ: "=",
    exp.NEQ: "<>",
}
_NEGATED = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "=": "<>", "<>": "="}
_MIRRORED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "=", "<>": "<>"}

# (old op, new op) -> the orders of (old value, new value) under which
# "term <old op> old value" implies "term <new op> new value" for every term value.
_SUFFICIENT: dict[tuple[str, str], frozenset[int]] = {
    ("=", "="): frozenset({0}),
    ("=", "<>"): frozenset({-1, 1}),
    ("=", "<"): frozenset({-1}),
    ("=", "<="): frozenset({-1, 0}),
    ("=", ">"): frozenset({1}),
    ("=", ">="): frozenset({0, 1}),
    ("<", "<"): frozenset({-1, 0}),
    ("<", "<="): frozenset({-1, 0}),
    ("<", "<>"): frozenset({-1, 0}),
    ("<=", "<"): frozenset({-1}),
    ("<=", "<="): frozenset({-1, 0}),
    ("<=", "<>"): frozenset({-1}),
    (">", ">"): frozenset({0, 1}),
    (">", ">="): frozenset({0, 1}),
    (">", "<>"): frozenset({0, 1}),
    (">=", ">"): frozenset({1}),
    (">=", ">="): frozenset({0, 1}),
    (">=", "<>"): frozenset({1}),
    ("<>", "<>"): frozenset({0}),
}


def _implies(old: _Node, new: _Node) -> bool:
    if old == new:
        return True
    if (isinstance(old, _Const) and old.value is not True) or (
        isinstance(new, _Const) and new.value is True
    ):
        return True  # old is never TRUE, or new always is
    if isinstance(old, _Or):  # each way old can hold must lead to new
        return all(_implies(part, new) for part in old.parts)
    if isinstance(new, _And):  # old must lead to each part of new
        return all(_implies(old, part) for part in new.parts)
    if isinstance(old, _And) and any(_implies(part, new) for part in old.parts):
        return True
    if isinstance(new, _Or) and any(_implies(old, part) for part in new.parts):
        return True
    return _atom_implies(old, new)


def _atom_implies(old: _Node, new: _Node) -> bool:
    if isinstance(old, _Cmp) and isinstance(new, _IsNull):
        return new.negated and old.term == new.term  # a TRUE comparison has a non-NULL term
    if not (isinstance(old, _Cmp) and isinstance(new, _Cmp) and old.term == new.term):
        return False
    sufficient = _SUFFICIENT.get((old.op, new.op), frozenset())
    if old.value.key == new.value.key:
        return 0 in sufficient
    old_readings, new_readings = old.value.readings, new.value.readings
    if not sufficient or old_readings is None or new_readings is None:
        return False
    olds, news = dict(old_readings), dict(new_readings)
    if olds.keys() != news.keys():
        return False  # literals of different types: no reading is known for both
    for reading, old_value in olds.items():
        new_value = news[reading]
        if old_value is None:
            continue  # NULL under this reading: old is never TRUE then
        order = None if new_value is None else _order(old_value, new_value)
        if order not in sufficient:
            return False
    return True


def _order(left: _Comparable, right: _Comparable) -> int | None:
    """-1, 0 or 1 as ``left`` sorts before, with or after ``right``; None if unknown."""
    if isinstance(left, tuple) and isinstance(right, tuple):
        # clock ± n units: comparable when the units agree (or one offset is zero), as
        # adding n units moves strictly forward in n, months and years included.
        (left_unit, left_n), (right_unit, right_n) = left, right
        if left_unit != right_unit and left_n != 0 and right_n != 0:
            return None
        return (left_n > right_n) - (left_n < right_n)
    a: Any = left
    b: Any = right
    return int(a > b) - int(a < b)


def _canonical(tree: exp.Expr) -> exp.Expr:
    """A copy without parentheses or column qualifiers, names lower case, so that equal
    predicates compare equal structurally (sqlglot trees compare by structure)."""

    def canonical(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Paren):
            inner: exp.Expr = node.this
            return inner
        if isinstance(node, exp.Column):
            return exp.column(node.name.lower())
        if isinstance(node, exp.TryCast):  # '…'::T reads as TRY_CAST; both are CAST in Spark
            return exp.Cast(this=node.this, to=node.to)
        clock = _clock_name(node)
        if clock == "current_timestamp":
            return exp.CurrentTimestamp()
        if clock == "current_date":
            return exp.CurrentDate()
        if clock == "localtimestamp":
            return exp.Localtimestamp()
        return node

    # Not Expr.transform: it does not descend into a replacement, so the column inside a
    # removed parenthesis would stay as it was.
    result = _spark_form(tree)
    for node in list(result.walk()):
        replacement = canonical(node)
        if replacement is node:
            continue
        if node is result:
            result = replacement
            result.pop()  # detach from the removed parent
        else:
            node.replace(replacement)
    return result


def _key(node: exp.Expr) -> str:
    return repr(node)


def _normal(node: exp.Expr, negate: bool = False) -> _Node:
    """``node`` (or NOT ``node``) in negation normal form; ``node`` is `_canonical`."""
    if isinstance(node, exp.Not):
        return _normal(node.this, not negate)
    if isinstance(node, (exp.And, exp.Or)):
        parts = tuple(_normal(part, negate) for part in node.flatten())
        return _Or(parts) if isinstance(node, exp.Or) == (not negate) else _And(parts)
    if isinstance(node, exp.Boolean):
        return _Const(node.this != negate)
    if isinstance(node, exp.Null):
        return _Const(None)
    if isinstance(node, exp.Between) and not node.args.get("symmetric"):
        low = exp.GTE(this=node.this, expression=node.args["low"])
        high = exp.LTE(this=node.this, expression=node.args["high"])
        return _normal(exp.And(this=low, expression=high), negate)
    if isinstance(node, exp.In) and node.expressions and not node.args.get("query"):
        equals = [exp.EQ(this=node.this, expression=item) for item in node.expressions]
        return _normal(exp.or_(*equals, copy=False), negate)
    if isinstance(node, exp.Is) and isinstance(node.expression, exp.Null):
        return _IsNull(_key(node.this), negate)
    op = _COMPARISONS.get(type(node))
    if op is not None:
        atom = _comparison(node.this, op, node.expression, negate)
        if atom is not None:
            return atom
    return _Opaque(_key(exp.not_(node) if negate else node))


def _comparison(left: exp.Expr, op: str, right: exp.Expr, negate: bool) -> _Node | None:
    right_value, left_value = _value(right), _value(left)
    if right_value is not None and left_value is None:
        term, value = left, right_value
    elif left_value is not None and right_value is None:
        term, value, op = right, left_value, _MIRRORED[op]
    else:
        return None
    if isinstance(value, str):
        return _Const(None)  # a comparison with NULL is NULL, negated or not
    return _Cmp(_key(term), _NEGATED[op] if negate else op, value)


# Readings a string literal may get from Spark's implicit casts, by the column's type.
_STRING_READINGS = ("string", "date", "timestamp", "number", "boolean")
_BOOLEAN_WORDS = {"t", "true", "y", "yes", "f", "false", "n", "no"}
_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_TIMESTAMP = re.compile(r"(\d{4})-(\d{2})-(\d{2})(?: (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?)?")
_INTEGER = re.compile(r"\d+")
_DECIMAL = re.compile(r"(\d*)\.(\d*)")
_DOUBLE = re.compile(r"(?:\d+\.?\d*|\.\d+)[eE][+-]?\d+")
_INTERVAL_UNITS = {"YEAR", "MONTH", "WEEK", "DAY", "HOUR", "MINUTE", "SECOND"}
# Integers and decimals up to this size are exact as doubles too, so their order survives
# a cast to DOUBLE (Spark's choice for some column types).
_EXACT_DOUBLE = 2**53
_EXACT_DIGITS = 15


def _value(node: exp.Expr) -> _Value | str | None:
    """``node`` as a constant: a `_Value`, ``"NULL"``, or None when it is not a constant."""
    if isinstance(node, exp.Null):
        return "NULL"
    if isinstance(node, exp.Literal) and node.is_string:
        return _Value(_key(node), _string_readings(node.this))
    if isinstance(node, exp.Literal) or (
        isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal)
    ):
        return _Value(_key(node), _number_readings(node))
    if isinstance(node, exp.Boolean):
        return _Value(_key(node), (("boolean", bool(node.this)),))
    if isinstance(node, exp.Cast) and isinstance(node.this, exp.Literal):
        return _Value(_key(node), _typed_readings(node))
    clock = _clock_offset(node)
    if clock is not None:
        anchor, unit, amount = clock
        return _Value(_key(node), ((f"rel:{anchor}", (unit, amount)),))
    return None


def _string_readings(text: str) -> tuple[tuple[str, _Comparable | None], ...] | None:
    """A string literal's value under each reading, or None if that is not certain.

    Two kinds are understood. Plain words ('shipped') are NULL under every reading but
    string. Canonical dates and timestamps ('2025-01-01', '2025-01-01 10:00:00') are also
    dates and timestamps (a DATE column reads '2025-01-01 10:00:00' as its date part) and
    NULL as numbers or booleans. Anything else compares only with itself.
    """
    if _is_plain_word(text):
        return tuple(
            (reading, text if reading == "string" else None) for reading in _STRING_READINGS
        )
    stamp = _parse_timestamp(text)
    if stamp is None:
        return None
    readings: dict[str, _Comparable] = {
        "string": text,
        "date": stamp.date(),
        "timestamp": stamp,
    }
    return tuple((reading, readings.get(reading)) for reading in _STRING_READINGS)


def _is_plain_word(text: str) -> bool:
    """Whether no Spark cast but to STRING can read ``text`` (every other cast is NULL).

    It must start with an ASCII letter (numbers, dates and times start with a digit, a sign
    or a dot), be no boolean word, and not start like 'Infinity', 'NaN', 'INTERVAL …' or a
    'T10:00' time. No trailing blank or control character either: a CHAR(n) column pads
    with blanks, which must not change the order of two words.
    """
    lowered = text.lower()
    return (
        bool(text)
        and text[0].isascii()
        and text[0].isalpha()
        and lowered not in _BOOLEAN_WORDS
        and not lowered.startswith(("inf", "nan", "i"))
        and not (lowered[0] == "t" and lowered[1:2].isdigit())
        and not text.endswith(" ")
        and all(ord(char) >= 0x20 for char in text)
    )


def _parse_timestamp(text: str) -> datetime.datetime | None:
    match = _TIMESTAMP.fullmatch(text)
    if match is None:
        return None
    year, month, day, hour, minute, second = (int(part or 0) for part in match.groups()[:6])
    micros = int((match.group(7) or "0").ljust(6, "0"))
    try:
        return datetime.datetime(year, month, day, hour, minute, second, micros)
    except ValueError:
        return None  # 2025-02-30: Spark reads NULL, or fails in ANSI mode


def _number_readings(node: exp.Expr) -> tuple[tuple[str, _Comparable | None], ...] | None:
    """A numeric literal's value, under a reading named after its Spark type.

    Different types get different readings, so they never compare with each other: Spark
    may cast the column differently for an INT, a BIGINT, a DECIMAL(p, s) or a DOUBLE.
    """
    negative = isinstance(node, exp.Neg)
    text = str((node.this if negative else node).this)
    sign = -1 if negative else 1
    if _INTEGER.fullmatch(text):
        number = int(text)
        if number > _EXACT_DOUBLE:
            return None
        return (("int" if number < 2**31 else "bigint", Fraction(sign * number)),)
    decimal = _DECIMAL.fullmatch(text)
    if decimal is not None and text != ".":
        if len((decimal.group(1) + decimal.group(2)).lstrip("0")) > _EXACT_DIGITS:
            return None
        return ((f"decimal:{len(decimal.group(2))}", sign * Fraction(Decimal(text))),)
    if _DOUBLE.fullmatch(text):
        return (("double", sign * float(text)),)
    return None


def _typed_readings(cast: exp.Cast) -> tuple[tuple[str, _Comparable | None], ...] | None:
    """``DATE '…'``, ``CAST('…' AS TIMESTAMP)`` and the like: one reading, by type.

    TIMESTAMP (and TIMESTAMP_LTZ) and TIMESTAMP_NTZ stay apart, and so do DATE and the
    timestamps: a STRING column compared with each is cast differently.
    """
    text = str(cast.this.this)
    stamp = _parse_timestamp(text) if cast.this.is_string else None
    if stamp is None:
        return None
    if cast.to.is_type(exp.DType.DATE):
        return (("date", stamp.date()),) if _DATE.fullmatch(text) else None
    if cast.to.is_type(exp.DType.TIMESTAMPNTZ):
        return (("timestamp_ntz", stamp),)
    if cast.to.is_type(exp.DType.TIMESTAMPTZ, exp.DType.TIMESTAMPLTZ, exp.DType.TIMESTAMP):
        return (("timestamp", stamp),)
    return None


def _clock_offset(node: exp.Expr) -> tuple[str, str, int] | None:
    """``clock``, ``clock ± INTERVAL 'n' UNIT`` or ``INTERVAL … + clock`` as (clock, unit, n)."""
    clock = _clock_name(node)
    if clock is not None:
        return clock, "", 0
    if not isinstance(node, (exp.Add, exp.Sub)):
        return None
    base, interval = node.this, node.expression
    if isinstance(node, exp.Add) and isinstance(base, exp.Interval):
        base, interval = interval, base
    clock = _clock_name(base)
    amount = _interval_amount(interval)
    if clock is None or amount is None:
        return None
    unit, count = amount
    return clock, unit, -count if isinstance(node, exp.Sub) else count


def _interval_amount(node: exp.Expr) -> tuple[str, int] | None:
    if not isinstance(node, exp.Interval) or not isinstance(node.this, exp.Literal):
        return None
    unit = node.args.get("unit")
    text = str(node.this.this).strip()
    if not isinstance(unit, exp.Var) or unit.name.upper() not in _INTERVAL_UNITS:
        return None
    if not re.fullmatch(r"[+-]?\d+", text):
        return None
    return unit.name.upper(), int(text)
