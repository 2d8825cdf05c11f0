"""Spark SQL → DuckDB SQL with Spark's semantics, or a refusal.

sqlglot reads the statement (spark_parser.py: Spark 3.5, with a few functions kept
verbatim so their Java arguments survive), :func:`to_duckdb` rewrites a copy of the tree
bottom-up into DuckDB constructs that give Spark's answer (one ``_rewrite_*`` function per
construct), and :class:`ShimDuckDB` renders it. Whatever cannot be given Spark's exact
answer raises :class:`~sparkshim.errors.UnsupportedSqlError`; :data:`REFUSED` lists those
constructs for the docs.

>>> to_duckdb(parse_spark("SELECT a FROM t ORDER BY a, b DESC"))
'SELECT a FROM t ORDER BY a NULLS FIRST, b DESC'

Types are unknown at translation time (tables are resolved, not typed), so where Spark's
answer depends on the operand's type the emitted SQL dispatches on DuckDB's ``typeof``,
which DuckDB folds to a constant per query.
"""

from __future__ import annotations

import getpass
import logging
import os
import re
from collections.abc import Callable

from sqlglot import exp
from sqlglot.dialects.duckdb import DuckDB
from sqlglot.dialects.spark import Spark
from sqlglot.errors import ErrorLevel, ParseError, TokenError, UnsupportedError

from sparkshim import (
    checksums,
    conv,
    datetime_patterns,
    decimals,
    function_gaps,
    functions,
    intervals,
    math_functions,
    nested_order,
    number_text,
)
from sparkshim.errors import AnalysisException, ParseException, UnsupportedSqlError
from sparkshim.naming import FUNCTION_NAME_KEY, JAVA_PATTERN_KEY, name_derived_columns
from sparkshim.pivot import annotate_pivots, pivot_relation
from sparkshim.spark_parser import parse_statements, tokenize
from sparkshim.spark_typing import (
    ARGUMENT_TYPES,
    ARITHMETIC_OPERATORS,
    CHOSEN_TYPES,
    COMPARISON_CASTS,
    CONCATENATED_TYPES,
    DATE_PARTS,
    FRACTIONAL_TYPES,
    INTEGRAL_TYPES,
    MAX_PRECISION,
    OPERAND_TYPES,
    SET_BRANCH_COLUMNS,
    SET_TEXT_TYPES,
    SET_WIDENED_TYPES,
    SPARK_TYPE,
    STRING_OPERANDS,
    TIMESTAMP_AVERAGE,
    CastPair,
    DecimalType,
    SparkType,
    chosen,
    concatenated,
    grouping_keys,
    literal_type,
    set_branches,
    type_text,
    wider_type,
)
from sparkshim.syntax import (
    check_statement_start,
    extra_statement_error,
    parse_error,
    token_error,
    wrong_argument_count,
)
from sparkshim.types import interval_column_alias

__all__ = ["REFUSED", "ShimDuckDB", "ShimSpark", "parse_spark", "to_duckdb"]

REFUSED: tuple[tuple[str, str], ...] = (
    ("hash() / xxhash64()", "Spark's Murmur3/xxHash64 seeds and byte layouts differ from DuckDB's"),
    ("percentile_approx / approx_percentile", "Spark's GK sketch picks different elements"),
    ("approx_count_distinct", "HyperLogLog++ and DuckDB's HLL give different estimates"),
    ("rand() / randn() / shuffle() / uuid()", "different random generators"),
    ("explode_outer / posexplode / inline in the SELECT list", "use LATERAL VIEW [OUTER]"),
    ("percentile with a frequency argument", "DuckDB's quantile_cont has no frequency"),
    ("ceil / floor with a scale argument", "no DuckDB equivalent with Spark's result type"),
    (
        "Java-only regex features",
        "lookaround, backreferences, possessive quantifiers, "
        "atomic groups, class intersection, \\p{java...}, \\G, \\Z: RE2 lacks them",
    ),
    ("a non-literal regex pattern", "cannot be checked for Java-only features"),
    ("regexp_replace with $ or \\ in the replacement", "Java and RE2 group references differ"),
    (
        "split with a positive limit and a regex or empty delimiter / regexp_replace with a"
        " position",
        "no DuckDB equivalent (split's limit is answered for a plain-text delimiter)",
    ),
    (
        "date/time patterns outside the common subset",
        "Java DateTimeFormatter letters other "
        "than y M d H h m s a E D and quoted text have no exact strftime equivalent",
    ),
    ("trunc / date_trunc with a non-literal unit", "the unit must be known to map it"),
    ("CAST to ARRAY/MAP/STRUCT", "element-wise cast rules differ"),
    (
        "CAST to an INTERVAL of a column or within an expression, CAST of a non-literal interval",
        "Spark's ANSI interval types have no equivalent here; literals are cast as Spark "
        "casts them",
    ),
    (
        "CAST of a DOUBLE/FLOAT outside [1e-3, 1e7) to STRING",
        "Java prints scientific notation there (raised at run time)",
    ),
    (
        "CAST of a date/time string Spark accepts but DuckDB parses differently",
        "e.g. a 5-digit year, a lone 'T' after the day, a zone other than Z or ±hh:mm (raised"
        " at run time); the short forms '2020', '2020-1', '2024-01-15 7', '2024-01-15T07:08'"
        " are read as Spark reads them, by CAST, to_timestamp and to_date",
    ),
    (
        "functions not in the translated set",
        "an unknown function may mean something else in DuckDB",
    ),
    ("TABLESAMPLE", "different sampling"),
    ("* over a NATURAL JOIN", "Spark lists the shared columns first; name them with USING"),
    (
        "avg / division of a DECIMAL of an untyped expression",
        "where sparkshim cannot infer an operand's Spark type (e.g. a DECIMAL from a "
        "function it does not type), Spark's result type is unknown (raised at run time)",
    ),
    (
        "array_distinct / array_remove / array_except / array_intersect / flatten / arrays_zip",
        "DuckDB's order, NULL handling or field names differ",
    ),
    (
        "substring_index() with a non-literal or self-overlapping delimiter / format_string()"
        " / typeof()",
        "no DuckDB equivalent with Spark's result",
    ),
    (
        "to_json()",
        "its JSON text is not Spark's: 1.0E10, 2.50, a timestamp's form, NULL fields",
    ),
    ("UNPIVOT", "not translated"),
    (
        "months_between / next_day / to_binary with a non-literal roundOff, day name or format",
        "the argument decides the translation (a to_binary format folded from literals is read)",
    ),
    ("struct() of * with other fields, or of an unqualified *", "only struct(t.*) is translated"),
    (
        "an interval plus or minus an interval (multi-unit literals), an interval computed "
        "from timestamps as a result column, or stored in a table, or referred to by its alias",
        "interval literals and a DATE minus a DATE are answered; "
        "other intervals: use datediff() or extract()",
    ),
    (
        "a DATE or string plus/minus an interval or a DATE whose type sqlglot cannot infer",
        "Spark's result type differs from DuckDB's there (raised at run time)",
    ),
    (
        "PIVOT with first/last/any_value, or a value of another type than its column",
        "Spark's pivot plans differ there (the type check is raised at run time); "
        "an unaliased value or aggregate other than a literal or f(column) must be named with AS",
    ),
    (
        "lpad / rpad of a BINARY and a STRING",
        "Spark decodes the bytes as UTF-8 text first; cast both to one type",
    ),
    ("positive() of a STRING column", "Spark casts it to DOUBLE (raised at run time)"),
    ("range() with non-literal bounds", "the rows are made before the query runs"),
    ("histogram_numeric()", "Spark's streaming histogram bins cannot be reproduced exactly"),
    ("btrim() of a BINARY", "Spark trims bytes, not characters"),
    (
        "GROUP BY ... GROUPING SETS with a grouping column in no set",
        "Spark groups by it as NULL; DuckDB refuses it",
    ),
    (
        "INTERSECT after UNION/EXCEPT with spark.sql.legacy.setopsPrecedence.enabled",
        "sqlglot cannot tell the implicit precedence from parentheses",
    ),
    (
        "a correlated scalar subquery over a count of constant rows or a constant condition",
        "Spark 3.5's optimizer answers NULL there where no row matches (over a table, 0)",
    ),
    (
        "a correlated scalar subquery with GROUP BY over a count with "
        "spark.sql.optimizer.decorrelateSubqueryLegacyIncorrectCountHandling.enabled",
        "Spark's legacy 0 for no group is not reproduced; unset it for the standard NULL",
    ),
)

_LOG_FILTER_TEXT = "contains unsupported syntax"


class _DropCommandFallbackWarning(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return _LOG_FILTER_TEXT not in record.getMessage()


logging.getLogger("sqlglot").addFilter(_DropCommandFallbackWarning())


class ShimSpark(Spark):
    """Spark 3.5 as sqlglot reads and writes it. sparkshim reads statements with
    :func:`sparkshim.spark_parser.parse_statements` (names and some arguments as written),
    and writes Spark SQL with this dialect."""


# Operands that bind looser than DuckDB's ``||``: a comparison, IN, BETWEEN, LIKE, IS,
# NOT, AND, OR (and a LIKE with its ESCAPE).
_LOOSER_THAN_CONCAT = (exp.Predicate, exp.Connector, exp.Not, exp.Escape)


class ShimDuckDB(DuckDB):
    """DuckDB as sqlglot writes it. A sort key without NULLS FIRST/LAST is written as it
    is: DuckDB's default places NULLs last both ascending and descending, and sqlglot
    spells out NULLS FIRST where Spark's ascending order wants it."""


# ---- entry points ----


def parse_spark(sql: str) -> exp.Expr:
    """Exactly one Spark SQL statement as a sqlglot tree.

    >>> parse_spark("SELECT 1; SELECT 2")
    Traceback (most recent call last):
    ...
    pyspark.errors.exceptions.base.ParseException: ...
    """
    if not sql.strip().rstrip(";").strip():
        raise ParseException(
            message="[PARSE_EMPTY_STATEMENT] Syntax error, unexpected empty "
            "statement (line 1, pos 0)"
        )
    check_statement_start(sql)
    try:
        tokens = tokenize(sql)
    except TokenError as failure:
        raise token_error(sql, failure) from failure
    wrong_count = wrong_argument_count(sql, tokens)  # sqlglot drops or invents some arguments
    if wrong_count is not None:
        raise wrong_count
    try:
        statements = parse_statements(sql, tokens)
    except ParseError as failure:
        raise parse_error(sql, failure) from failure
    if len(statements) != 1:
        raise extra_statement_error(sql)
    _check_ordered_windows(statements[0])
    return statements[0]


def to_duckdb(expression: exp.Expr, *, copy: bool = True) -> str:
    """DuckDB SQL giving Spark's answer for the query ``expression``; with ``copy=False``
    the caller gives up ``expression``, which is then rewritten in place (a deep copy of a
    large statement costs as much as translating it)."""
    tree = expression.copy() if copy else expression
    name_derived_columns(tree)  # Spark's names, read off the items before any rewrite
    annotate_pivots(tree)
    _fold_integral_rounds(tree)  # before the typed literals it recognizes are rewritten
    _fold_negative_typed_literals(tree)
    _keep_nested_count_bug(tree)
    _filtered_sums_as_cases(tree)
    _two_valued_in_subqueries(tree)
    _normalize_floating_group_keys(tree)  # before the keys' uses are rewritten
    tree = _rewrite(tree)
    try:
        # The tree is this function's own: the generator may change it.
        return tree.sql(dialect=ShimDuckDB, unsupported_level=ErrorLevel.RAISE, copy=False)
    except UnsupportedError as failure:
        raise UnsupportedSqlError(_unsupported_construct(str(failure))) from failure


def _normalize_floating_group_keys(tree: exp.Expr) -> None:
    """Spark shows a DOUBLE or FLOAT grouping key, or a SELECT DISTINCT's column, with
    -0.0 as 0.0 (its NormalizeFloatingNumbers: -0.0 and 0.0 make one group, shown as 0.0),
    where DuckDB shows the value of whichever row of the group it met first. Each use of
    such a key in a grouped SELECT's list outside an aggregate, and each such DISTINCT
    column, is written so (the types from the typing pass; one not typed is left as it
    is)."""
    for operation in list(tree.find_all(exp.Union, exp.Intersect, exp.Except)):
        if operation.args.get("distinct"):
            _normalize_floating_set_columns(operation)
    for select in list(tree.find_all(exp.Select)):
        group, distinct = select.args.get("group"), select.args.get("distinct")
        if group is not None:
            keys = _floating(grouping_keys(group), group.meta.get(ARGUMENT_TYPES))
            items = [_zero_normalized(item, keys) if keys else item for item in select.expressions]
        elif distinct is not None:
            floating = _floating(select.expressions, distinct.meta.get(ARGUMENT_TYPES))
            items = [
                _zero_normalized(item, [item.unalias()]) if item in floating else item
                for item in select.expressions
            ]
        else:
            continue
        select.set("expressions", items)


def _normalize_floating_set_columns(operation: exp.Expr) -> None:
    """A UNION, INTERSECT or EXCEPT without ALL (Spark's distinct rows, grouped so): each
    SELECT's DOUBLE or FLOAT columns with -0.0 as 0.0."""
    branches = set_branches(operation)
    values = [value for branch in branches for value in branch.expressions]
    floating = _floating(values, operation.meta.get(ARGUMENT_TYPES))
    for branch in branches:
        branch.set(
            "expressions",
            [
                _zero_normalized(item, [item.unalias()]) if item in floating else item
                for item in branch.expressions
            ],
        )


def _floating(values: list[exp.Expr], types: object) -> list[exp.Expr]:
    """Those of ``values`` whose Spark type (``types``, one each) is DOUBLE or FLOAT."""
    if not isinstance(types, tuple) or len(types) != len(values):
        return []
    return [value for value, kind in zip(values, types, strict=True) if kind in _FLOATING]


_FLOATING = ("double", "float")


def _zero_normalized(item: exp.Expr, keys: list[exp.Expr]) -> exp.Expr:
    """A SELECT item with each use of one of the floating ``keys`` outside an aggregate
    written as its value with -0.0 as 0.0 (an unaliased key keeps its name)."""

    def normalized(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Alias) or not any(node == key for key in keys):
            return node
        if _inside_aggregate(node):
            return node
        is_zero = exp.EQ(this=_c(node), expression=_lit(0))
        return _case((is_zero, exp.Abs(this=_c(node))), default=_c(node))

    written = item.transform(normalized)
    if isinstance(item, exp.Column) and written != item:
        return exp.alias_(written, item.name, quoted=True)
    return written


def _inside_aggregate(node: exp.Expr) -> bool:
    """Whether ``node`` is an aggregate's argument within the SELECT item being rewritten
    (``transform``'s copy of it, whose root has no parent)."""
    parent = node.parent
    while parent is not None:
        if isinstance(parent, exp.AggFunc):
            return True
        parent = parent.parent
    return False


def _unsupported_construct(detail: str) -> str:
    """What sqlglot's generator says it cannot write, without naming the engine behind
    the shim ("SOUNDEX is not supported in DuckDB" is soundex())."""
    first_line = detail.splitlines()[0]
    named = re.fullmatch(r"(\w+) is not supported in DuckDB\.?", first_line)
    if named is not None:
        return f"{named.group(1).lower()}()"
    return re.sub(r"\bDuckDB\b", "the embedded engine", first_line)


# Window functions Spark computes only over an ordered window.
_ORDERED_WINDOW_FUNCTIONS = (
    exp.RowNumber,
    exp.Rank,
    exp.DenseRank,
    exp.PercentRank,
    exp.CumeDist,
    exp.Ntile,
    exp.Lag,
    exp.Lead,
    exp.NthValue,
)


def _check_ordered_windows(tree: exp.Expr) -> None:
    """Spark's analysis error for a DISTINCT aggregate over a window (DuckDB answers it),
    and for a ranking or offset function over a window without ORDER BY in a statement's
    text (DuckDB would answer in whatever order it read the rows; the shim's own
    statements number rows so, where any order will do). A window that names a window of
    the WINDOW clause is left to it."""
    for window in tree.find_all(exp.Window):
        function = window.this
        if isinstance(function, exp.AggFunc) and isinstance(function.this, exp.Distinct):
            raise AnalysisException(
                message="[DISTINCT_WINDOW_FUNCTION_UNSUPPORTED] Distinct window functions are"
                f" not supported: {window.sql(dialect='spark', normalize_functions='lower')}."
            )
        if window.args.get("order") is not None or window.args.get("alias") is not None:
            continue
        if isinstance(function, _ORDERED_WINDOW_FUNCTIONS):
            name = function.sql(dialect="spark", normalize_functions="lower")
            raise AnalysisException(
                message=f"Window function {name} requires window to be ordered, please add"
                " ORDER BY clause."
            )


# Spark's try_ arithmetic, by sqlglot node, and the operator it equals with ANSI mode off.
_TRY_ARITHMETIC: dict[type[exp.Expr], type[exp.Binary]] = {
    exp.SafeDivide: exp.Div,
    exp.SafeAdd: exp.Add,
    exp.SafeSubtract: exp.Sub,
    exp.SafeMultiply: exp.Mul,
}


def try_arithmetic_as_operators(tree: exp.Expr) -> None:
    """``try_divide``, ``try_add``, ``try_subtract`` and ``try_multiply`` as ``/``, ``+``,
    ``-`` and ``*``: with ANSI mode off (the shim's mode) Spark's operators already give
    NULL where the try_ forms do (a division by zero, a DECIMAL overflow), and so their
    result types (a DECIMAL quotient's) and the translation's typed rewrites apply. Run
    after the columns are named (Spark names them ``try_divide(…)``) and before typing.
    An INTEGER overflow, NULL for the try_ forms, stays the shim's refusal, as for ``+``."""
    for node in list(tree.find_all(*_TRY_ARITHMETIC)):
        operator = _TRY_ARITHMETIC[type(node)]
        left, right = (_operand(node.args[key]) for key in ("this", "expression"))
        replacement = operator(this=left, expression=right)
        if isinstance(replacement, exp.Div):
            replacement.set("safe", True)  # as Spark's parser reads "/": NULL for a zero
        else:
            replacement.meta[_NULL_ON_OVERFLOW] = True
        node.replace(exp.Paren(this=replacement))


def regression_counts_and_averages(tree: exp.Expr) -> None:
    """``regr_count``, ``regr_avgx`` and ``regr_avgy`` as Spark defines them: the count of
    the rows where both values are there, and the average of one value over those rows.
    So the average's typing applies (of a DECIMAL it is a DECIMAL, where DuckDB's
    ``regr_avgx`` is a DOUBLE), and the count is a BIGINT (DuckDB's is an unsigned
    INTEGER). Run after the columns are named (Spark names them ``regr_count(…)``) and
    before typing."""
    for node in list(tree.find_all(exp.RegrCount, exp.RegrAvgx, exp.RegrAvgy)):
        y, x = node.this, node.expression
        both = exp.and_(
            exp.Is(this=_c(y), expression=exp.Null()).not_(),
            exp.Is(this=_c(x), expression=exp.Null()).not_(),
        )
        if isinstance(node, exp.RegrCount):
            node.replace(exp.Count(this=exp.Case(ifs=[exp.If(this=both, true=_lit(1))])))
            continue
        value = x if isinstance(node, exp.RegrAvgx) else y
        node.replace(exp.Avg(this=exp.Case(ifs=[exp.If(this=both, true=_c(value))])))


# Marks a +, - or * written as try_add, try_subtract or try_multiply.
_NULL_ON_OVERFLOW = "sparkshim_null_on_overflow"


def _null_on_overflow(written: exp.Expr, result: exp.Expr) -> exp.Expr:
    """An integral try_add / try_subtract / try_multiply is NULL where it overflows (where
    ``+`` is refused): DuckDB's TRY turns the overflow error into a NULL. Only where Spark
    types the result integral: its operands are then integers, whose translation raises
    nothing else that TRY would hide."""
    if written.meta.get(_NULL_ON_OVERFLOW) and written.meta.get(SPARK_TYPE) in INTEGRAL_TYPES:
        return _fn("TRY", _c(result))  # a copy: result may be the node being replaced
    return result


def _operand(value: exp.Expr) -> exp.Expr:
    """``value`` as an operator's operand: parenthesized unless it is a column or literal
    (the generator writes a tree's operators without adding parentheses)."""
    return value if isinstance(value, (exp.Column, exp.Literal, exp.Paren)) else exp.paren(value)


def _two_valued_in_subqueries(tree: exp.Expr) -> None:
    """An ``IN (subquery)`` computed as a value (in a SELECT list, not a WHERE or HAVING
    filter) is true or false in Spark, never NULL: Spark computes it by an existence join,
    so where SQL's answer is NULL (a NULL value, or no match beside a NULL in the
    subquery) ``x IN (…)`` and ``x NOT IN (…)`` are both false. Filters keep SQL's answer,
    which Spark's null-aware anti join gives too."""
    for node in list(tree.find_all(exp.In)):
        if node.args.get("query") is None or not _computed_as_a_value(node):
            continue
        target: exp.Expr = node
        parent = node.parent
        while isinstance(parent, exp.Paren):
            parent = parent.parent
        if isinstance(parent, exp.Not):
            target = parent  # NOT IN: false where SQL says NULL, not true
        target.replace(exp.Coalesce(this=target.copy(), expressions=[exp.false()]))


def _computed_as_a_value(node: exp.Expr) -> bool:
    """Whether ``node`` lies in a SELECT's list (or its GROUP BY or ORDER BY) rather than
    in a condition that filters rows."""
    child, parent = node, node.parent
    while parent is not None:
        if isinstance(parent, (exp.Where, exp.Having, exp.Join, exp.Qualify)):
            return False
        if isinstance(parent, exp.Select):
            return child.arg_key in ("expressions", "group", "order")
        child, parent = parent, parent.parent
    return False


def _filtered_sums_as_cases(tree: exp.Expr) -> None:
    """``sum(x) FILTER (WHERE c)`` as ``sum(CASE WHEN c THEN x END)``: a sum skips NULLs,
    so both add the same values, and are NULL where no row passes (the sum's rewrite,
    which wraps the SUM in Spark's result type, cannot keep a FILTER on it). The SUM node
    itself stays, with the type recorded on it. A FILTER on a window's aggregate is
    Spark's analysis error."""
    for node in list(tree.find_all(exp.Filter)):
        if isinstance(node.parent, exp.Window):
            raise AnalysisException(
                message="Window aggregate function with filter predicate is not supported yet."
            )
        total = node.this
        condition = node.expression.this if isinstance(node.expression, exp.Where) else None
        if not isinstance(total, exp.Sum) or condition is None:
            continue
        argument = total.this
        value = argument.expressions[0] if isinstance(argument, exp.Distinct) else argument
        if isinstance(argument, exp.Distinct) and len(argument.expressions) != 1:
            continue  # refused by the sum's rewrite
        value.replace(exp.Case(ifs=[exp.If(this=condition.copy(), true=value.copy())]))
        node.replace(total)


# ---- the bottom-up rewrite ----

Rewrite = Callable[[exp.Expr], exp.Expr]


def _rewrite(tree: exp.Expr) -> exp.Expr:
    for node in list(tree.walk(bfs=False))[::-1]:
        rule = _RULES.get(type(node))
        if rule is None:
            continue
        new = rule(node)
        if new is not node:
            _keep_spark_type(node, new)
            if node is tree:
                tree = new
            else:
                node.replace(new)
    return tree


def _keep_spark_type(node: exp.Expr, new: exp.Expr) -> None:
    """Give the translation ``new`` of ``node`` the Spark type the typing pass found for
    ``node`` (it gives Spark's value of ``node``, so it has that type): the rules of the
    nodes above read their operands' static types, and an operand rewritten into, say,
    the CAST that types a CASE would otherwise be untyped there and translated for any
    type at run time (its SQL written two or three times over, which DuckDB plans at
    every run)."""
    spark_type = node.meta.get(SPARK_TYPE)
    if spark_type is not None and SPARK_TYPE not in new.meta:
        new.meta[SPARK_TYPE] = spark_type


def _fold_integral_rounds(tree: exp.Expr) -> None:
    for node in list(tree.find_all(exp.Round, exp.Anonymous)):
        is_bround = isinstance(node, exp.Anonymous) and str(node.this).upper() == "BROUND"
        if not isinstance(node, exp.Round) and not is_bround:
            continue
        folded = function_gaps.fold_integral_round(node, half_even=is_bround)
        if folded is not None and node is not tree:
            node.replace(folded)


# ---- small builders ----


def _fn(name: str, *args: exp.Expr) -> exp.Anonymous:
    return exp.Anonymous(this=name, expressions=list(args))


def _c(node: exp.Expr) -> exp.Expr:
    return node.copy()


def _lit(value: str | int | float) -> exp.Expr:
    if isinstance(value, str):
        return exp.Literal.string(value)
    return exp.Literal.number(value)


def _cast(node: exp.Expr, to: str) -> exp.Cast:
    return exp.Cast(this=node, to=exp.DataType.build(to, dialect="duckdb"))


def _try_cast(node: exp.Expr, to: str) -> exp.TryCast:
    return exp.TryCast(this=node, to=exp.DataType.build(to, dialect="duckdb"))


def _case(*whens: tuple[exp.Expr, exp.Expr], default: exp.Expr | None = None) -> exp.Case:
    # Each part copied once (sqlglot's ``Case.when``/``else_`` copy the whole CASE built so
    # far at every call: a guard around a large sum copied its argument several times).
    ifs = [exp.If(this=condition.copy(), true=value.copy()) for condition, value in whens]
    return exp.Case(ifs=ifs, default=default.copy() if default is not None else None)


def _typeof_in(node: exp.Expr, *names: str) -> exp.Expr:
    return exp.In(this=_fn("TYPEOF", _c(node)), expressions=[_lit(n) for n in names])


def _typeof_like(node: exp.Expr, pattern: str) -> exp.Expr:
    return exp.Like(this=_fn("TYPEOF", _c(node)), expression=_lit(pattern))


def _as_varchar(node: exp.Expr) -> exp.Expr:
    return _cast(_c(node), "VARCHAR")


def _regex_full(node: exp.Expr, pattern: str) -> exp.Expr:
    return _fn("REGEXP_FULL_MATCH", node, _lit(pattern))


def _runtime_refusal(construct: str) -> exp.Expr:
    return _fn("ERROR", _lit(f"sparkshim does not support {construct}"))


def _written_name(node: exp.Expr) -> str:
    """The name the statement called ``node``'s function by, in lower case (sqlglot reads
    several Spark functions as one node: size and array_size, log and log10 …); '' where
    the parser recorded none."""
    return str(node.meta.get(FUNCTION_NAME_KEY, "")).lower()


def _string_value(node: exp.Expr | None) -> str | None:
    if isinstance(node, exp.Literal) and node.is_string:
        return str(node.this)
    return None


def _int_value(node: exp.Expr | None) -> int | None:
    if isinstance(node, exp.Literal) and node.is_int:
        return int(node.this)
    if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal) and node.this.is_int:
        return -int(node.this.this)
    return None


def _window_parent(node: exp.Expr) -> exp.Window | None:
    parent = node.parent
    return parent if isinstance(parent, exp.Window) and parent.this is node else None


# ---- ORDER BY, arithmetic, rounding ----


def _rewrite_intdiv(node: exp.Expr) -> exp.Expr:
    # Spark `div`: integral part of the quotient (towards zero), BIGINT, NULL on zero.
    operands = node.meta.get(OPERAND_TYPES)
    if operands is not None:  # DECIMALs: exact (DuckDB's "/" would be a DOUBLE)
        left_type, right_type = operands
        return decimals.integral_divide(_c(node.this), left_type, _c(node.expression), right_type)
    # Integers: divided as integers (a DOUBLE quotient loses the last digits beyond 2**53),
    # wrapped to BIGINT as Java's long division wraps (Long.MIN_VALUE div -1). Operands of
    # a type not known to be an integer keep the DOUBLE quotient, truncated.
    whole = exp.IntDiv(
        this=_cast(_c(node.this), "HUGEINT"),
        expression=_fn("NULLIF", _cast(_c(node.expression), "HUGEINT"), _lit(0)),
    )
    quotient = exp.Div(this=_c(node.this), expression=_fn("NULLIF", _c(node.expression), _lit(0)))
    quotient.set("typed", False)
    integers = exp.and_(
        _typeof_in(node.this, *_DUCKDB_INTEGERS, '"NULL"'),
        _typeof_in(node.expression, *_DUCKDB_INTEGERS, '"NULL"'),
    )
    # (Each branch cast on its own: a CASE of a HUGEINT and a DOUBLE is a DOUBLE.)
    return _case(
        (integers, _cast(_wrapped(whole, 64), "BIGINT")),
        default=_cast(_fn("TRUNC", exp.Paren(this=quotient)), "BIGINT"),
    )


def _rewrite_mod(node: exp.Expr) -> exp.Expr:
    # Sign follows the dividend in both engines; Spark gives NULL for a zero divisor.
    decimal = _decimal_arithmetic(node)
    if decimal is not None:
        return decimal
    _widen_integer_literals(node)
    node = _doubled_operands(_rewrite_string_arithmetic(node))
    return exp.Mod(this=_c(node.this), expression=_fn("NULLIF", _c(node.expression), _lit(0)))


def _rewrite_string_arithmetic(node: exp.Expr) -> exp.Expr:
    # Spark casts a string operand of + - * / % to DOUBLE (and the result is DOUBLE); with
    # an INTERVAL or a date/time literal the string means a date/time instead: left alone.
    operands = (node.this, node.expression)
    is_date_arithmetic = isinstance(node, (exp.Add, exp.Sub)) and isinstance(
        node.expression, exp.Interval
    )
    if is_date_arithmetic and _string_value(node.this) is not None:
        # '2011-11-11' - INTERVAL '2' DAY: Spark reads the string as a TIMESTAMP and gives
        # the result back as a STRING.
        moved = node.copy()
        moved.set("this", _spark_cast(node.this, "TIMESTAMP"))
        return _spark_cast(moved, "VARCHAR")
    if any(isinstance(o, exp.Interval) or _is_date_time_cast(o) for o in operands):
        return node
    typed_strings = node.meta.get(STRING_OPERANDS) or (False, False)
    for key, typed_string in zip(("this", "expression"), typed_strings, strict=True):
        operand = node.args.get(key)
        if operand is not None and (typed_string or _string_value(operand) is not None):
            node.set(key, _spark_cast(operand, "DOUBLE"))
    return node


def _is_date_time_cast(node: exp.Expr) -> bool:
    """A cast to a date or time type (a DATE or TIMESTAMP literal is one), beside which a
    string is a date or time too."""
    to = node.args.get("to") if isinstance(node, (exp.Cast, exp.TryCast)) else None
    return isinstance(to, exp.DataType) and to.is_type(*exp.DataType.TEMPORAL_TYPES)


def _decimal_arithmetic(node: exp.Expr) -> exp.Expr | None:
    """Spark's exact DECIMAL arithmetic where spark_typing typed ``node`` as a DECIMAL
    operation; None where it did not."""
    operands = node.meta.get(OPERAND_TYPES)
    result = node.meta.get(SPARK_TYPE)
    if operands is None or not isinstance(result, DecimalType):
        return None
    left_type, right_type = operands
    operator = ARITHMETIC_OPERATORS[type(node)]
    return decimals.arithmetic(
        operator, _c(node.this), left_type, _c(node.expression), right_type, result
    )


def _rewrite_arithmetic(node: exp.Expr) -> exp.Expr:
    decimal = _decimal_arithmetic(node)
    if decimal is not None:
        return decimal
    _widen_integer_literals(node)
    return _null_on_overflow(node, _doubled_operands(_rewrite_string_arithmetic(node)))


def _doubled_operands(node: exp.Expr) -> exp.Expr:
    """An operation Spark computes as a DOUBLE (typed so by spark_typing) with both
    operands cast to DOUBLE, as Spark casts them: DuckDB computes a DECIMAL with a FLOAT as
    a FLOAT, losing digits Spark keeps (``d / f``)."""
    if not isinstance(node, exp.Binary):
        return node
    # A NULL stays as it is beside a value; two NULLs are DOUBLEs (NULL + NULL is DOUBLE).
    both_null = all(isinstance(node.args.get(k), exp.Null) for k in ("this", "expression"))
    if node.meta.get(SPARK_TYPE) != "double" and not both_null:
        return node
    for key in ("this", "expression"):
        operand = node.args.get(key)
        if isinstance(operand, exp.Expr) and (both_null or not isinstance(operand, exp.Null)):
            node.set(key, _cast(_c(operand), "DOUBLE"))
    return node


def _widen_integer_literals(node: exp.Expr) -> None:
    """An INT or BIGINT literal operand of an integral operation Spark types INT or BIGINT
    cast to that type: DuckDB narrows the literal to a TINYINT or SMALLINT operand's type
    (``t - 1`` of a TINYINT t is INT in Spark, TINYINT in DuckDB, and overflows there)."""
    spark_type = node.meta.get(SPARK_TYPE)
    if spark_type not in ("int", "bigint"):
        return
    operands = [node.this, node.expression]
    for operand, other in (operands, operands[::-1]):
        literal = operand.this if isinstance(operand, exp.Neg) else operand
        is_literal = isinstance(literal, exp.Literal) and literal.is_int
        if is_literal and not _is_number_literal(other) and literal_type(literal) == spark_type:
            operand.replace(_cast(_c(operand), _DUCKDB_TYPE_NAMES[str(spark_type)]))


def _is_number_literal(node: exp.Expr) -> bool:
    inner = node.this if isinstance(node, exp.Neg) else node
    return isinstance(inner, exp.Literal) and not inner.is_string


def _rewrite_add_sub(node: exp.Expr) -> exp.Expr:
    # A DECIMAL operation (spark_typing typed it), or a DATE with an interval or another
    # DATE (see intervals.py).
    decimal = _decimal_arithmetic(node)
    if decimal is not None:
        return decimal
    _widen_integer_literals(node)
    is_result = _is_result_column(node)
    if intervals.is_interval_arithmetic(node):
        # interval 3 year 1 month is such a sum too; DuckDB's interval would differ from
        # Spark's ANSI one as a value and as a string.
        raise UnsupportedSqlError(
            "an interval plus or minus an interval (or a multi-unit interval literal)",
            "Spark's answer is an interval; write one single-unit or span literal",
        )
    node = _doubled_operands(_rewrite_string_arithmetic(node))
    result = intervals.date_arithmetic(node, _runtime_refusal("this DATE arithmetic"))
    if is_result and intervals.is_interval(result):
        return _interval_result(node, intervals.date_difference_value(result), "interval day")
    micros = intervals.timestamp_difference_value(result) if is_result else None
    if micros is not None:
        return _interval_result(node, micros, "interval day to second")
    return _null_on_overflow(node, result)


def _rewrite_interval(node: exp.Expr) -> exp.Expr:
    if isinstance(node.parent, (exp.Cast, exp.TryCast, exp.DataType)):
        return node  # the cast reads the literal (_rewrite_cast), or a type's qualifier
    if _is_result_column(node):
        type_name, value = intervals.interval_value(node)
        return _interval_result(node, exp.Literal.number(value), type_name)
    return intervals.interval_literal(node)


def _interval_result(node: exp.Expr, value: exp.Expr, type_name: str) -> exp.Expr:
    """``value`` (months or microseconds) as the result column ``node`` of Spark's interval
    type ``type_name``: its name carries the type (see types.with_interval_columns)."""
    number = exp.Cast(this=value, to=exp.DataType.build("BIGINT"))
    alias = node.parent if isinstance(node.parent, exp.Alias) else None
    name = interval_column_alias(alias.alias if alias is not None else "interval", type_name)
    if alias is not None:
        _check_alias_unreferenced(alias)
        alias.set("alias", exp.to_identifier(name, quoted=True))
        return number
    return exp.alias_(number, name, quoted=True)


def _rewrite_div(node: exp.Expr) -> exp.Expr:
    # Spark divides decimals into a DECIMAL of derived precision; DuckDB gives a DOUBLE.
    decimal = _decimal_arithmetic(node)
    if decimal is not None:
        return decimal
    node = _rewrite_string_arithmetic(node)
    if node.meta.get(SPARK_TYPE) == "double":
        return _doubled_operands(node)  # typed: no DECIMAL result
    either = exp.or_(_typeof_like(node.this, "DECIMAL%"), _typeof_like(node.expression, "DECIMAL%"))
    return _case((either, _runtime_refusal("division of a DECIMAL")), default=_c(node))


def _rewrite_decimal_literal(node: exp.Expr) -> exp.Expr:
    # A DECIMAL literal that is a value of its own (a column, a branch, a VALUES row) takes
    # Spark's type (DuckDB gives `0.05` a digit more); an operand is cast by its operation.
    spark_type = node.meta.get(SPARK_TYPE)
    holder = node.parent.parent if isinstance(node.parent, exp.Neg) else node.parent
    if not isinstance(spark_type, DecimalType) or not isinstance(holder, _VALUE_HOLDERS):
        return node
    return _cast(_c(node), spark_type.sql())


_VALUE_HOLDERS = (
    exp.Select,
    exp.Alias,
    exp.Tuple,
    exp.Case,
    exp.If,
    exp.Coalesce,
    # functions whose result has their argument's type (abs(0.25) is a DECIMAL(2,2))
    exp.Abs,
    exp.Max,
    exp.Min,
    exp.First,
    exp.Last,
    exp.AnyValue,
    exp.Nullif,
)


def _rewrite_decimal_choice(node: exp.Expr) -> exp.Expr:
    # CASE / IF / COALESCE of DECIMALs: Spark's wider type of the branches.
    if isinstance(node, exp.Case):
        node = _rewrite_simple_case(node)
    spark_type = node.meta.get(SPARK_TYPE)
    if spark_type == "string":
        _choose_as_text(node)
    _choose_as_double(chosen(node), node.meta.get(CHOSEN_TYPES), spark_type)
    _widen_integer_literal_values(chosen(node), spark_type)
    if not isinstance(spark_type, DecimalType):
        return node
    # Each value in the wider type before the choice, as Spark casts them: DuckDB's common
    # type of DECIMAL(38,2) and DECIMAL(18,4) keeps two decimals (Spark's: DECIMAL(38,4)).
    _each_as_decimal(chosen(node), spark_type)
    return _cast(_c(node), spark_type.sql())


def _each_as_decimal(values: list[exp.Expr], decimal: DecimalType) -> None:
    """Each of ``values`` cast, in place, to ``decimal``, Spark's wider DECIMAL of them
    (NULL beyond it, as Spark's overflow check with ANSI mode off): DuckDB's own common
    type of DECIMALs may keep fewer decimals."""
    for value in values:
        value.replace(_try_cast(_c(value), decimal.sql()))


def _as_decimal_type(value: exp.Expr, spark_type: object) -> exp.Expr:
    """``value`` in Spark's DECIMAL type of it (NULL beyond it, as Spark's overflow check
    with ANSI mode off), where spark_typing inferred one; else as it is."""
    return _try_cast(value, spark_type.sql()) if isinstance(spark_type, DecimalType) else value


def _rewrite_greatest_least(node: exp.Expr) -> exp.Expr:
    # Spark widens the values to one type first: DECIMALs to the wider DECIMAL (a BIGINT
    # as DECIMAL(20, 0)), where DuckDB's own common type differs; a value beyond that type
    # (bounded to 38 digits) is NULL, which greatest and least skip.
    spark_type = node.meta.get(SPARK_TYPE)
    values = [node.this, *node.expressions]
    in_spark_order = _greatest_least_in_spark_order(node, values)
    if in_spark_order is not None:
        return in_spark_order
    _choose_as_double(values, node.meta.get(CHOSEN_TYPES), spark_type)
    _widen_integer_literal_values(values, spark_type)
    if not isinstance(spark_type, DecimalType):
        return node
    _each_as_decimal(values, spark_type)
    return node


def _greatest_least_in_spark_order(node: exp.Expr, values: list[exp.Expr]) -> exp.Expr | None:
    """greatest/least of STRUCTs or ARRAYs: the value whose key (nested_order.py) is the
    largest (smallest), NULLs skipped as Spark skips them; None for other values."""
    use = f"{_written_name(node) or 'greatest'}()"
    keys = _spark_order_keys(values, node.meta.get(ARGUMENT_TYPES), use)
    if keys is None:
        return _refused_if_nested(node.this, _UNTYPED_NESTED_ORDER, _c(node))
    if all(key is value for key, value in zip(keys, values, strict=True)):
        return None
    name = "GREATEST" if isinstance(node, exp.Greatest) else "LEAST"
    pairs = [nested_order.keyed(value, key) for value, key in zip(values, keys, strict=True)]
    return _fn("STRUCT_EXTRACT", _fn(name, *pairs), _lit("v"))


def _rewrite_array(node: exp.Expr) -> exp.Expr:
    # array(...) of DECIMALs of different types: Spark casts each element to their wider
    # DECIMAL (array(DECIMAL(38,2), DECIMAL(18,4)) is an array<decimal(38,4)>), where
    # DuckDB's common type keeps two decimals.
    element = wider_type(list(node.meta.get(ARGUMENT_TYPES) or ()))
    if not isinstance(element, DecimalType):
        return node
    _each_as_decimal(list(node.expressions), element)
    return node


def _widen_integer_literal_values(values: list[exp.Expr], spark_type: object) -> None:
    """The INT or BIGINT literals among the values a CASE, IF, COALESCE, greatest or least
    chooses from, where Spark types the choice INT or BIGINT, cast to that type: DuckDB
    would narrow them to a TINYINT or SMALLINT value's type (``coalesce(t, 0)`` of a
    TINYINT t is INT in Spark)."""
    if spark_type not in ("int", "bigint"):
        return
    for value in values:
        literal = value.this if isinstance(value, exp.Neg) else value
        if not isinstance(literal, exp.Literal) or not literal.is_int:
            continue
        if literal_type(literal) == spark_type:
            value.replace(_cast(_c(value), _DUCKDB_TYPE_NAMES[str(spark_type)]))


def _choose_as_double(values: list[exp.Expr], types: object, spark_type: object) -> None:
    """The values of a choice (CASE, IF, COALESCE, greatest, least) Spark types DOUBLE
    where one is a FLOAT, each cast to DOUBLE first: DuckDB's common type of a FLOAT and a
    DECIMAL is a FLOAT (12.34 would become 12.34000015...)."""
    if spark_type != "double" or not isinstance(types, tuple) or "float" not in types:
        return
    for value, value_type in zip(values, types, strict=True):
        if value_type != "double":
            value.replace(_cast(value.copy(), "DOUBLE"))


def _choose_as_text(node: exp.Expr) -> None:
    """A CASE, IF or COALESCE Spark types STRING (``coalesce(s, ts)``): each value of
    another type becomes Spark's text of it, where DuckDB would cast the strings to that
    type (a TIMESTAMP without ``+00``, a DOUBLE ``1.0E-5``)."""
    types = node.meta.get(CHOSEN_TYPES)
    if not isinstance(types, tuple):
        return
    for value, spark_type in zip(chosen(node), types, strict=True):
        if spark_type not in ("string", "void"):
            value.replace(_spark_text(value.copy()))


# ---- comparisons of a STRING with a number (spark_typing.comparison_type) ----

# The DuckDB names of the Spark types a compared operand is cast to.
_DUCKDB_TYPE_NAMES = {
    "tinyint": "TINYINT",
    "smallint": "SMALLINT",
    "int": "INTEGER",
    "bigint": "BIGINT",
    "float": "FLOAT",
    "double": "DOUBLE",
    "string": "VARCHAR",
    "boolean": "BOOLEAN",
}


def _compared_as(value: exp.Expr, spark_type: SparkType | None) -> exp.Expr:
    """``value`` cast the way Spark casts it to ``spark_type`` (with ANSI off: a string
    that does not read as a number is NULL, and the comparison finds no match, where
    DuckDB's implicit cast fails); unchanged for None."""
    if spark_type is None:
        return value
    if isinstance(spark_type, DecimalType):
        return _spark_cast(value.copy(), spark_type.sql())
    if spark_type == "date":
        return _spark_cast(value.copy(), "DATE")
    if spark_type == "timestamp":  # an instant: the wall time read in the session's zone
        wall_time = _spark_cast(value.copy(), "TIMESTAMP", exp.DataType.build("TIMESTAMP"))
        return _cast(wall_time, "TIMESTAMPTZ")
    return _spark_cast(value.copy(), _DUCKDB_TYPE_NAMES[spark_type])


def _comparison_casts(node: exp.Expr) -> tuple[CastPair, ...] | None:
    casts = node.meta.get(COMPARISON_CASTS)
    return casts if isinstance(casts, tuple) else None


def _rewrite_comparison(node: exp.Expr) -> exp.Expr:
    """``s = 12``, ``a.i < b.s``: each side cast to the type Spark compares them as."""
    casts = _comparison_casts(node)
    if casts is None:
        return node
    ((left, right),) = casts
    node.set("this", _compared_as(node.this, left))
    node.set("expression", _compared_as(node.expression, right))
    return node


def _rewrite_ordering_comparison(node: exp.Expr) -> exp.Expr:
    """``<``, ``<=``, ``>``, ``>=``: a STRUCT or ARRAY compared in Spark's order, a NULL
    field or element below every value (DuckDB puts it above), by the keys of
    nested_order.py; operands of a type not known here are refused if they turn out
    nested when the query runs (a scalar's order is DuckDB's)."""
    node = _rewrite_comparison(node)
    operands = [node.this, node.expression]
    keys = _spark_order_keys(operands, node.meta.get(ARGUMENT_TYPES), "<, <=, > or >=")
    if keys is None:
        return _refused_if_nested(node.this, _UNTYPED_NESTED_ORDER, node)
    node.set("this", keys[0])
    node.set("expression", keys[1])
    return node


# What the run-time refusal of an untyped nested value's order names, with the way out.
_UNTYPED_NESTED_ORDER = (
    "comparing or sorting STRUCT or ARRAY values whose type is not known before the query"
    " runs: CAST them to their type"
)


def _spark_order_keys(values: list[exp.Expr], recorded: object, use: str) -> list[exp.Expr] | None:
    """The keys (nested_order.py) that order ``values``, which Spark widens to one type,
    as Spark orders them; the values themselves where they are not nested; None where
    their types (``recorded``, one each, None: not known) are all unknown."""
    types = list(recorded) if isinstance(recorded, tuple) else [None] * len(values)
    known = [t for t in types if t is not None]
    nested = next((t for t in known if nested_order.is_nested(t)), None)
    if nested is None:
        if known:  # Spark widens them all to a scalar type: DuckDB's order is Spark's
            return values
        if any(isinstance(value, exp.Struct | exp.Array) for value in values):
            raise UnsupportedSqlError(
                f"{use} of STRUCT or ARRAY values of a type not known", _CAST_HINT
            )
        return None
    keys: list[exp.Expr] = []
    for value, value_type in zip(values, types, strict=True):
        key = nested_order.order_key(
            value, value_type if nested_order.is_nested(value_type) else nested
        )
        if key is None:  # a MAP inside, or a type text not read
            raise UnsupportedSqlError(f"{use} of values of type {nested}", "compare their fields")
        keys.append(key)
    return keys


_CAST_HINT = "CAST them to their type"


def _refused_if_nested(
    value: exp.Expr, construct: str, result: exp.Expr, patterns: tuple[str, ...] | None = None
) -> exp.Expr:
    """``result``, or a refusal when ``value``, of a type not known here, is a STRUCT,
    ARRAY or MAP (its DuckDB type name matches one of ``patterns``; DuckDB knows it when it
    plans the query, and folds this CASE away)."""
    kind = _fn("TYPEOF", _c(value))
    nested = exp.or_(
        *(
            exp.Like(this=kind.copy(), expression=_lit(pattern))
            for pattern in patterns or _NESTED_TYPE_NAMES
        )
    )
    return _case((nested, _runtime_refusal(construct)), default=result)


# DuckDB's names of nested types: STRUCT(a INTEGER), MAP(...), INTEGER[] and INTEGER[2];
# and of arrays of them (STRUCT(a INTEGER)[], INTEGER[][]).
_NESTED_TYPE_NAMES = ("STRUCT(%", "MAP(%", "%]")
_NESTED_ELEMENTS = ("STRUCT(%", "MAP(%", "%]%]")


def _rewrite_nullif(node: exp.Expr) -> exp.Expr:
    """``nullif(s, 1)``: Spark's ``CASE WHEN s = 1 THEN NULL ELSE s END``, the comparison
    cast as Spark casts it (a string that is no number is NULL there, so no match)."""
    casts = _comparison_casts(node)
    if casts is None:
        return node
    ((left, right),) = casts
    equal = exp.EQ(
        this=_compared_as(node.this, left), expression=_compared_as(node.expression, right)
    )
    return _case((equal, exp.Null()), default=_c(node.this))


def _rewrite_between(node: exp.Expr) -> exp.Expr:
    """``s BETWEEN 1 AND 12``: Spark's ``1 <= s AND s <= 12``, each comparison cast apart
    (the value may be compared as an INT with one bound, as a DOUBLE with the other)."""
    casts = _comparison_casts(node)
    if casts is None:
        return node
    (value_low, low), (value_high, high) = casts
    return exp.Paren(
        this=exp.and_(
            exp.GTE(
                this=_compared_as(node.this, value_low),
                expression=_compared_as(node.args["low"], low),
            ),
            exp.LTE(
                this=_compared_as(node.this, value_high),
                expression=_compared_as(node.args["high"], high),
            ),
        )
    )


def _rewrite_in(node: exp.Expr) -> exp.Expr:
    """``s IN (1, 2)``: the value and the list compared as strings, as Spark does."""
    casts = _comparison_casts(node)
    if casts is None:
        return node
    node.set("this", _compared_as(node.this, casts[0][0]))
    node.set(
        "expressions",
        [_compared_as(item, cast) for item, (_, cast) in zip(node.expressions, casts, strict=True)],
    )
    return node


def _rewrite_simple_case(node: exp.Case) -> exp.Case:
    """``CASE s WHEN 1 THEN ...``: Spark's ``CASE WHEN s = 1 THEN ...``, each WHEN's
    comparison cast apart."""
    casts = _comparison_casts(node)
    key = node.this
    if casts is None or key is None:
        return node
    for when, (key_type, value_type) in zip(node.args.get("ifs") or [], casts, strict=True):
        condition = exp.EQ(
            this=_compared_as(key, key_type), expression=_compared_as(when.this, value_type)
        )
        when.set("this", condition)
    node.set("this", None)
    return node


# The types whose DuckDB text differs from Spark's (types.py's format_double; DuckDB's +00).
_TEXT_DIFFERS = ("timestamp", "double", "float")


def _rewrite_concatenation(node: exp.Expr) -> exp.Expr:
    """``concat(ts, '!')``, ``d || ''``, ``concat_ws(',', x, ...)``: each value whose
    DuckDB text differs from Spark's turned into Spark's text, as an explicit CAST would
    (a TIMESTAMP without ``+00``, a DOUBLE ``1.0E-5``, a DECIMAL ``1E-10``)."""
    _parenthesize_loose_operands(node)
    for value in concatenated(node):
        if isinstance(value, exp.Null):
            # Spark casts a NULL to STRING to join it: the result is a STRING (DuckDB's NULL).
            value.replace(_cast(exp.Null(), "VARCHAR"))
    types = node.meta.get(CONCATENATED_TYPES)
    if not isinstance(types, tuple):
        return node
    for value, spark_type in zip(concatenated(node), types, strict=True):
        if spark_type in _TEXT_DIFFERS or isinstance(spark_type, DecimalType):
            value.replace(_spark_text(value.copy()))
    return node


def _parenthesize_loose_operands(node: exp.Expr) -> None:
    """The values of a ``concat``, ``||`` or ``concat_ws`` that bind looser than DuckDB's
    ``||`` in parentheses: sqlglot writes a concat as a ``||`` of its arguments, and
    unparenthesized, ``concat(s = '12', '!')`` would compare s with '12!'."""
    for value in concatenated(node):
        if isinstance(value, _LOOSER_THAN_CONCAT):
            paren = exp.Paren()
            value.replace(paren)
            paren.set("this", value)


def _is_result_column(node: exp.Expr) -> bool:
    """Whether ``node`` (or its window) is a whole, possibly aliased, select-list item of
    the statement's outermost SELECT: its value is then a result column as it stands."""
    item = _window_parent(node) or node
    if isinstance(item.parent, exp.Alias):
        item = item.parent
    select = item.parent
    return isinstance(select, exp.Select) and item.arg_key == "expressions" and not select.parent


def _sum_kind(node: exp.Expr) -> str | None:
    """ "integral", "fractional", or the DECIMAL type of Spark's sum, from the sum's Spark
    type where spark_typing inferred it (see ``_rewrite_sum``)."""
    spark_type = node.meta.get(SPARK_TYPE)
    if isinstance(spark_type, DecimalType):
        return spark_type.sql()
    return {"bigint": "integral", "double": "fractional"}.get(str(spark_type))


def _rewrite_sum(node: exp.Expr) -> exp.Expr:
    # Spark: sum of integers is BIGINT (DuckDB: HUGEINT); of decimals/doubles, as DuckDB.
    value = node.this
    distinct = isinstance(value, exp.Distinct)
    if distinct:
        if len(value.expressions) != 1:
            raise UnsupportedSqlError("sum(DISTINCT) of several values")
        value = value.expressions[0]
    if isinstance(node.parent, exp.Filter):
        raise UnsupportedSqlError("sum(...) FILTER (WHERE ...)", "not translated")
    kind = _sum_kind(node)
    if _is_null_typed(value):
        # Spark casts a NULL to DOUBLE for sum (its default numeric type): a DOUBLE NULL
        # (``sum(nullif(NULL, i))`` too, typed DOUBLE).
        value = value.replace(_null_as_double(value))
    elif kind == "fractional":
        value = value.replace(_cast(_c(value), "DOUBLE"))  # a FLOAT is summed as a DOUBLE
    if node.find_ancestor(exp.Order) is not None:
        kind = None  # DuckDB refuses the guard's ERROR() (volatile) in an ORDER BY
    # A result column of the statement stays a plain SUM: the query runner casts HUGEINT
    # result columns to BIGINT.
    # (So does an unaliased DECIMAL one: wrapping it would lose its column name.)
    is_decimal_sum = kind is not None and kind.startswith("DECIMAL")
    named = isinstance((_window_parent(node) or node).parent, exp.Alias)
    if _is_result_column(node) and (not is_decimal_sum or not named):
        return node
    window = _window_parent(node)
    summed: exp.Expr = _c(node)
    if window is not None:
        summed = window.copy()
        summed.set("this", _c(node))
    is_hugeint = exp.EQ(this=_fn("TYPEOF", summed), expression=_lit("HUGEINT"))
    # Where spark_typing inferred the argument's type, one branch; the other is an error,
    # should the inference ever be wrong, rather than a different answer.
    mistyped = _runtime_refusal("sum() of an argument whose type was mis-inferred")
    result: exp.Expr
    if kind == "integral":
        result = _case((is_hugeint, _cast(summed.copy(), "BIGINT")), default=mistyped)
    elif kind == "fractional":
        result = _case((is_hugeint, mistyped), default=summed.copy())
    elif kind is not None and not distinct and _may_pass_38_digits(node):
        result = _decimal_total(value, node.meta[SPARK_TYPE], window)
    elif kind is not None:  # a DECIMAL sum, typed as Spark types it
        is_decimal = _typeof_like(summed, "DECIMAL%")
        # Beyond the sum's precision Spark gives NULL (ANSI mode off).
        result = _case((is_decimal, _try_cast(summed.copy(), kind)), default=mistyped)
    else:
        result = _case(
            (is_hugeint, _cast(summed.copy(), "BIGINT")),
            default=_listed_sum(value, distinct, window),
        )
    if window is not None:
        _replace_window(window, result)
        return node  # detached from the tree; the window was replaced
    return result


def _may_pass_38_digits(node: exp.Expr) -> bool:
    """Whether DuckDB's SUM of this DECIMAL sum's argument could fail on overflow (Spark's
    sum is then 38 digits wide, and NULL beyond)."""
    spark_type = node.meta.get(SPARK_TYPE)
    return isinstance(spark_type, DecimalType) and spark_type.precision == MAX_PRECISION


def _decimal_total(value: exp.Expr, total_type: DecimalType, window: exp.Window | None) -> exp.Expr:
    """Spark's sum of DECIMAL ``value``s, typed ``total_type``, NULL where it overflows
    (a sum of DISTINCT values of 28 digits or more fails in DuckDB beyond 38 digits)."""
    if total_type.precision == MAX_PRECISION and not isinstance(value, exp.Distinct):
        return decimals.wide_sum(_c(value), total_type, lambda total: _over(window, total))
    return _try_cast(_over(window, exp.Sum(this=_c(value))), total_type.sql())


def _listed_sum(value: exp.Expr, distinct: bool, window: exp.Window | None) -> exp.Expr:
    """A sum of non-integral values typed without HUGEINT, for when the type is unknown:
    the values are summed as a list, so that no HUGEINT enters the CASE's type (which
    would widen its BIGINT branch back to HUGEINT). Slow: spark_typing avoids it."""
    integral = exp.In(
        this=_fn("TYPEOF", _c(value)),
        expressions=[_lit(n) for n in _DUCKDB_INTEGERS],
    )
    widened = exp.Add(this=_c(value), expression=_cast(_lit(0), "BIGINT"))
    listed = exp.Distinct(expressions=[widened]) if distinct else widened
    keep = exp.and_(
        exp.Not(this=exp.Is(this=_c(value), expression=exp.Null())), exp.Not(this=integral)
    )
    gathered: exp.Expr = exp.Filter(this=_fn("LIST", listed), expression=exp.Where(this=keep))
    if window is not None:
        gathered_window = window.copy()
        gathered_window.set("this", gathered)
        gathered = gathered_window
    return _fn(
        "LIST_REDUCE",
        gathered,
        exp.Lambda(
            this=exp.Add(this=exp.column("_a"), expression=exp.column("_b")),
            expressions=[exp.to_identifier("_a"), exp.to_identifier("_b")],
        ),
    )


# Java's upper case of the letters it writes as several (Unicode's SpecialCasing, as
# String.toUpperCase applies it), where DuckDB keeps one letter (ß is ẞ there).
_MULTI_LETTER_UPPER_CASES = {
    letter: letter.upper()  # Python's str.upper applies SpecialCasing as Java does
    for letter in "\u00df\u0149\u01f0\u0390\u03b0\u0587\u1e96\u1e97\u1e98\u1e99\u1e9a"
    "\ufb00\ufb01\ufb02\ufb03\ufb04\ufb05\ufb06\ufb13\ufb14\ufb15\ufb16\ufb17"
}


def _rewrite_levenshtein(node: exp.Expr) -> exp.Expr:
    """Spark's ``levenshtein(a, b[, threshold])``: the distance in characters (DuckDB's
    counts bytes, 2 for 'é' against 'e'), -1 beyond the threshold. A text that is not all
    ASCII is compared through a code of its own: each distinct character of the two texts
    written as one ASCII byte (its rank among them), so at most 127 distinct characters;
    more is refused when met."""
    left, right = node.this, node.expression
    threshold = node.args.get("ins_cost")  # Spark's third argument, as sqlglot reads it
    both = exp.DPipe(this=_c(left), expression=_c(right))
    alphabet = _fn("LIST_SORT", _fn("LIST_DISTINCT", _fn("STRING_SPLIT", both, _lit(""))))

    def coded(text: exp.Expr) -> exp.Expr:
        letter = exp.column("__l")
        to_byte = exp.Lambda(
            this=_fn("CHR", _fn("LIST_POSITION", alphabet.copy(), letter)),
            expressions=[exp.to_identifier("__l")],
        )
        letters = _fn("STRING_SPLIT", _c(text), _lit(""))  # [''] for ''
        written = _fn("ARRAY_TO_STRING", _fn("LIST_TRANSFORM", letters, to_byte), _lit(""))
        return _case((exp.EQ(this=_c(text), expression=_lit("")), _lit("")), default=written)

    ascii_only = exp.and_(_is_ascii(left), _is_ascii(right))
    too_many = exp.GT(this=_fn("LEN", alphabet.copy()), expression=_lit(127))
    distance = _case(
        (ascii_only, _fn("LEVENSHTEIN", _c(left), _c(right))),
        (too_many, _runtime_refusal("levenshtein of texts with over 127 distinct characters")),
        default=_fn("LEVENSHTEIN", coded(left), coded(right)),
    )
    if threshold is None:
        return distance
    beyond = exp.GT(this=distance.copy(), expression=_c(threshold))
    return _case((beyond, _lit(-1)), default=distance)


def _rewrite_upper(node: exp.Expr) -> exp.Expr:
    """Spark's ``upper``: Java's, which writes some letters as several (``'Straße'`` is
    ``'STRASSE'``); in a text that is not all ASCII those are replaced first (about 20
    times the cost of UPPER, so not in ASCII text, whose bytes are its characters), the
    rest is DuckDB's UPPER."""
    text: exp.Expr = _c(node.this)
    for letter, upper in _MULTI_LETTER_UPPER_CASES.items():
        text = _fn("REPLACE", text, _lit(letter), _lit(upper))
    plain = exp.Upper(this=_c(node.this))
    return _case((_is_ascii(node.this), plain), default=exp.Upper(this=text))


def _is_ascii(text: exp.Expr) -> exp.Expr:
    """Whether ``text`` is all ASCII: its bytes are its characters (NULL for NULL)."""
    return exp.EQ(this=_fn("STRLEN", _c(text)), expression=_fn("LENGTH", _c(text)))


# Java's title case of the letters whose DuckDB upper case differs from it (after Spark's
# lower case): the sharp s has no one-letter capital, the Latin digraphs have title forms.
_TITLE_CASES = {"ß": "ß", "ǆ": "ǅ", "ǉ": "ǈ", "ǌ": "ǋ", "ǳ": "ǲ"}


def _rewrite_initcap(node: exp.Expr) -> exp.Expr:
    """Spark's ``initcap``: the text in lower case, then each letter that starts it or
    follows a space (a space alone delimits words) in title case, as Java's
    ``Character.toTitleCase``. Built as nodes (sqlglot's own DuckDB text of INITCAP cannot
    be read back when INITCAP is nested)."""
    word = exp.column("__w")
    first = _fn("LEFT", word, _lit(1))
    titled = exp.Case(
        this=first.copy(),
        ifs=[exp.If(this=_lit(low), true=_lit(title)) for low, title in _TITLE_CASES.items()],
        default=_fn("UPPER", first.copy()),
    )
    capitalized = exp.Lambda(
        this=exp.DPipe(this=titled, expression=_fn("SUBSTRING", word.copy(), _lit(2))),
        expressions=[exp.to_identifier("__w")],
    )
    words = _fn("STRING_SPLIT", _fn("LOWER", _c(node.this)), _lit(" "))
    return _fn("ARRAY_TO_STRING", _fn("LIST_TRANSFORM", words, capitalized), _lit(" "))


def _over(window: exp.Window | None, aggregate: exp.Expr) -> exp.Expr:
    """``aggregate`` over a copy of ``window`` (as is, without one)."""
    if window is None:
        return aggregate
    over = window.copy()
    over.set("this", aggregate)
    return over


def _replace_window(window: exp.Window, result: exp.Expr) -> None:
    """Put ``result`` where ``window`` is in the tree (``result`` holds a copy of the
    window, never the window itself, which building it would detach from the tree)."""
    placeholder = exp.Null()
    window.replace(placeholder)
    placeholder.replace(result)


def _rewrite_avg(node: exp.Expr) -> exp.Expr:
    window = _window_parent(node)
    spark_type, division = node.meta.get(SPARK_TYPE), node.meta.get(OPERAND_TYPES)
    if isinstance(spark_type, DecimalType) and division is not None:
        # Spark: the sum (NULL beyond its precision) divided by the count.
        total_type, _ = division
        total = _decimal_total(node.this, total_type, window)
        count = _over(window, exp.Count(this=_c(node.this)))
        decimal = decimals.average(total, count, total_type, spark_type)
        if window is None:
            return decimal
        _replace_window(window, decimal)
        return node  # detached from the tree; the window was replaced
    if node.meta.get(TIMESTAMP_AVERAGE):
        node.set("this", _timestamp_seconds(node.this))
        return node
    if spark_type == "double":
        return node  # typed: no DECIMAL argument
    summed = exp.Sum(this=_c(node.this))
    if window is not None:
        checked = window.copy()
        checked.set("this", summed)
        _replace_window(
            window,
            _case(
                (_typeof_like(checked, "DECIMAL%"), _runtime_refusal("avg of a DECIMAL")),
                default=window,
            ),
        )
        return node
    return _case(
        (_typeof_like(summed, "DECIMAL%"), _runtime_refusal("avg of a DECIMAL")),
        default=_c(node),
    )


def _timestamp_seconds(timestamp: exp.Expr) -> exp.Expr:
    """Spark's CAST of a TIMESTAMP to DOUBLE: its microseconds since the epoch / 1e6."""
    micros = _cast(exp.Anonymous(this="EPOCH_US", expressions=[_c(timestamp)]), "DOUBLE")
    return exp.Div(this=micros, expression=_cast(_lit(1_000_000), "DOUBLE"))


def _rewrite_count_if(node: exp.Expr) -> exp.Expr:
    # DuckDB's COUNT_IF is a HUGEINT, NULL when no row is TRUE or FALSE; Spark's is a
    # BIGINT, 0 then. Over a window, the window's value is.
    window = _window_parent(node)
    if window is not None:
        _replace_window(
            window, exp.Coalesce(this=_cast(window.copy(), "BIGINT"), expressions=[_lit(0)])
        )
        return node  # detached from the tree; the window was replaced
    return exp.Coalesce(this=_cast(_c(node), "BIGINT"), expressions=[_lit(0)])


def _rewrite_any(node: exp.Expr) -> exp.Expr:
    # `x = ANY (subquery)` stays; Spark's aggregate any(bool) is bool_or.
    if isinstance(node.parent, (exp.Binary, exp.Predicate)):
        return node
    if isinstance(node.this, (exp.Query, exp.Subquery)):
        raise UnsupportedSqlError("ANY (subquery) outside a comparison")
    value = node.this.this if isinstance(node.this, exp.Paren) else node.this
    return exp.LogicalOr(this=_c(value))


def _rewrite_sign(node: exp.Expr) -> exp.Expr:
    return math_functions.signum(node.this)


def _rewrite_ln(node: exp.Expr) -> exp.Expr:
    return math_functions.natural_log("LN", node.this)


def _rewrite_log(node: exp.Expr) -> exp.Expr:
    """log(x) is ln; log10(x) is Java's log10; log(b, x) and log2(x) are ln(x) / ln(b)."""
    if node.expression is None:
        return math_functions.natural_log("LN", node.this)
    if _written_name(node) == "log10":
        return math_functions.natural_log("LOG10", node.expression)
    return math_functions.logarithm(node.this, node.expression)


def _rewrite_pow(node: exp.Expr) -> exp.Expr:
    return math_functions.power(node.this, node.expression)


def _rewrite_isnan(node: exp.Expr) -> exp.Expr:
    return math_functions.is_nan(node.this)


def _null_if_any_null(*values: exp.Expr) -> tuple[exp.Expr, exp.Expr]:
    """A CASE branch giving NULL when any of ``values`` is NULL (Spark's rule for most
    functions, where DuckDB's own version may return a value)."""
    any_null = exp.or_(*[exp.Is(this=_c(value), expression=exp.Null()) for value in values])
    return any_null, exp.Null()


def _rewrite_array_position(node: exp.Expr) -> exp.Expr:
    # Spark: 1-based BIGINT, 0 when absent, NULL when the array or the value is NULL.
    array, value = node.this, node.expression
    return _case(
        _null_if_any_null(array, value),
        default=_fn(
            "COALESCE", _cast(_fn("LIST_POSITION", _c(array), _c(value)), "BIGINT"), _lit(0)
        ),
    )


def _rewrite_exists(node: exp.Expr) -> exp.Expr:
    if isinstance(node.this, (exp.Query, exp.Subquery)):
        return node
    return _tested_elements(node.this, node.expression, exists=True)


def _tested_elements(array: exp.Expr, test: exp.Expr, *, exists: bool) -> exp.Expr:
    """exists(array, lambda) or forall(array, lambda), three-valued as in Spark: the answer
    one element decides (TRUE for exists, FALSE for forall) if the lambda gives it for an
    element, else NULL if the lambda is NULL for one, else the other answer; NULL for a
    NULL array."""
    tested = _fn("LIST_TRANSFORM", _c(array), _c(test))
    if exists:
        decided = _fn("COALESCE", _fn("LIST_BOOL_OR", tested), exp.false())
    else:
        decided = _fn("COALESCE", exp.Not(this=_fn("LIST_BOOL_AND", tested)), exp.false())
    some_unknown = exp.LT(
        this=_fn("LIST_COUNT", tested.copy()), expression=_fn("LEN", tested.copy())
    )
    return _case(
        (exp.Is(this=_c(array), expression=exp.Null()), exp.Null()),
        (decided, exp.Boolean(this=exists)),
        (some_unknown, exp.Null()),
        default=exp.Boolean(this=not exists),
    )


def _rewrite_reduce(node: exp.Expr) -> exp.Expr:
    # aggregate(array, start, merge, finish): DuckDB's reduce has no finish, so the finish
    # lambda is applied to the reduced value (a one-element list transformed).
    finish = node.args.get("finish")
    if finish is None:
        return node
    reduced = node.copy()
    reduced.set("finish", None)
    return _fn(
        "LIST_EXTRACT",
        _fn("LIST_TRANSFORM", exp.Array(expressions=[reduced]), finish.copy()),
        _lit(1),
    )


def _rewrite_group(node: exp.Expr) -> exp.Expr:
    # Spark reads only an INT literal as a position: a longer one (1000000000000) is a
    # BIGINT value to group by, where DuckDB would read it as a position out of range.
    for item in node.expressions:
        spark_type = literal_type(item) if isinstance(item, exp.Literal) and item.is_int else None
        if isinstance(spark_type, DecimalType):
            item.replace(_cast(_c(item), spark_type.sql()))
        elif spark_type == "bigint":
            item.replace(_cast(_c(item), "BIGINT"))
    # GROUP BY a, b GROUPING SETS (...): the sets alone say how to group (a, b only list
    # the grouping columns); DuckDB has no such suffix form.
    if node.args.get("grouping_sets") and node.expressions:
        leading = [_c(e) for e in node.expressions]
        node.set("expressions", [])
        in_sets = _grouping_columns(node)
        if any(all(column != seen for seen in in_sets) for column in leading):
            # Spark groups by it as NULL in every set; DuckDB refuses a column in no set.
            raise UnsupportedSqlError(
                "GROUP BY ... GROUPING SETS with a grouping column in no set",
                "list the column in a set or drop it from GROUP BY",
            )
        node.meta["grouping_columns"] = leading
    # GROUP BY a, b WITH ROLLUP/CUBE: DuckDB wants ROLLUP (a, b) / CUBE (a, b).
    for kind, builder in (("rollup", exp.Rollup), ("cube", exp.Cube)):
        modifiers = node.args.get(kind) or []
        if any(not m.expressions for m in modifiers):
            node.set(kind, [builder(expressions=[_c(e) for e in node.expressions])])
            node.set("expressions", [])
    return node


def _rewrite_grouping_id(node: exp.Expr) -> exp.Expr:
    # Without arguments it is left for its SELECT (_replace_grouping_id_column), which
    # knows the grouping columns.
    return node


def _rewrite_within_group(node: exp.Expr) -> exp.Expr:
    # percentile_cont / percentile_disc (…) WITHIN GROUP (ORDER BY x) is a DOUBLE in Spark,
    # which reads x as a DOUBLE; DuckDB's quantile keeps x's type (and interpolates a
    # DECIMAL at its scale).
    order = node.expression
    if isinstance(node.this, (exp.PercentileCont, exp.PercentileDisc)) and isinstance(
        order, exp.Order
    ):
        for ordered in order.expressions:
            ordered.set("this", _spark_cast(ordered.this, "DOUBLE"))
    return node


def _is_null_typed(value: exp.Expr) -> bool:
    """Whether ``value`` is a NULL of Spark's NULL type: a bare NULL, or an expression the
    typing found to be one (``nullif(NULL, i)``, ``IF(c, NULL, NULL)``)."""
    inner = value.unnest()
    return isinstance(inner, exp.Null) or inner.meta.get(SPARK_TYPE) == "void"


def _null_as_double(value: exp.Expr) -> exp.Expr:
    """A copy of ``value``; a NULL (:func:`_is_null_typed`) as a DOUBLE NULL, as Spark
    casts a NULL given to a numeric function (abs, round, bround, unary minus, sum: its
    default numeric type)."""
    if isinstance(value.unnest(), exp.Null):
        return _cast(exp.Null(), "DOUBLE")
    return _cast(_c(value), "DOUBLE") if _is_null_typed(value) else _c(value)


def _rewrite_null_operand(node: exp.Expr) -> exp.Expr:
    """abs or unary minus of a NULL: of a DOUBLE NULL."""
    if _is_null_typed(node.this):
        node.set("this", _null_as_double(node.this))
    return node


def _rewrite_round(node: exp.Expr) -> exp.Expr:
    # DuckDB's ROUND is half away from zero (Spark's HALF_UP) for decimals and doubles; a
    # DECIMAL takes Spark's result type (a cast to a smaller scale rounds HALF_UP).
    digits = node.args.get("decimals")
    value = _null_as_double(node.this)
    rounded = _fn("ROUND", value, *([_c(digits)] if digits is not None else []))
    spark_type = node.meta.get(SPARK_TYPE)
    if isinstance(spark_type, DecimalType):
        return _try_cast(_null_kept(value, rounded), spark_type.sql())
    if spark_type == "double":
        return _double_rounded_as_printed(value, _c(digits) if digits is not None else _lit(0))
    return rounded


def _null_kept(value: exp.Expr, rounded: exp.Expr) -> exp.Expr:
    """``rounded`` (a rounding of the DECIMAL ``value``), NULL where ``value`` is: DuckDB's
    ROUND of a DECIMAL(p, p) column to a negative scale gives 0 for a NULL."""
    return _case((exp.Is(this=_c(value), expression=exp.Null()), exp.Null()), default=rounded)


# A DOUBLE below this is read as a DECIMAL(38, 18) to be rounded; at or above it a DOUBLE
# is a whole number (beyond 2**53 every one is), which rounding leaves as it is.
_DOUBLE_AS_DECIMAL_BELOW = 1e20


def _double_rounded_as_printed(value: exp.Expr, digits: exp.Expr) -> exp.Expr:
    """Spark's round of a DOUBLE: the decimal it prints (Scala's BigDecimal of it, from its
    shortest text) rounded HALF_UP, so that round(1.005, 2) is 1.01 and round(0.285, 2) is
    0.29; DuckDB's ROUND rounds the binary value (1.00499...), giving 1.0. NaN, the
    infinities and whole numbers past DECIMAL's range are rounded as they are."""
    as_printed = _try_cast(_cast(_c(value), "VARCHAR"), "DECIMAL(38, 18)")
    rounded_binary = _fn("ROUND", _c(value), _c(digits))
    return _case(
        (exp.Not(this=_fn("ISFINITE", _c(value))), rounded_binary),
        (
            exp.GTE(this=_fn("ABS", _c(value)), expression=_lit(_DOUBLE_AS_DECIMAL_BELOW)),
            rounded_binary.copy(),
        ),
        default=_cast(_fn("ROUND", as_printed, digits), "DOUBLE"),
    )


def _rewrite_ceil_floor(node: exp.Expr) -> exp.Expr:
    if node.args.get("decimals") is not None or node.expressions:
        raise UnsupportedSqlError(f"{node.key}() with a scale", "use round() or cast")
    rounded = _fn(node.key.upper(), _c(node.this))
    spark_type = node.meta.get(SPARK_TYPE)  # a DECIMAL stays one (spark_typing.py)
    if isinstance(spark_type, DecimalType):
        return _cast(rounded, spark_type.sql())
    # A DOUBLE's as Java's (long) of it: NaN is 0, beyond BIGINT's range its bound.
    return _case(
        (_typeof_in(rounded, "DOUBLE", "FLOAT"), _cast(_saturated(rounded.copy(), 64), "BIGINT")),
        default=_cast(rounded.copy(), "BIGINT"),
    )


# ---- LATERAL VIEW and generators ----


def _grouping_columns(group: exp.Expr) -> list[exp.Expr]:
    """The columns a GROUP BY with CUBE/ROLLUP/GROUPING SETS groups by, in Spark's order."""
    if "grouping_columns" in group.meta:
        return [_c(e) for e in group.meta["grouping_columns"]]
    columns: list[exp.Expr] = []
    sources = [*group.expressions]
    for key in ("cube", "rollup", "grouping_sets"):
        sources.extend(group.args.get(key) or [])
    while sources:
        item = sources.pop(0)
        if isinstance(item, (exp.Cube, exp.Rollup, exp.GroupingSets, exp.Tuple)):
            sources[:0] = item.expressions
        elif isinstance(item, exp.Paren):
            sources.insert(0, item.this)
        elif all(item != seen for seen in columns):
            columns.append(_c(item))
    return columns


def _replace_grouping_id_column(select: exp.Expr) -> None:
    # Spark's virtual column grouping__id, and grouping_id() without arguments, are
    # grouping_id() of all the grouping columns (DuckDB needs them spelled out).
    group = select.args.get("group")
    calls = [
        call
        for call in select.find_all(exp.GroupingId)
        if not call.expressions and call.find_ancestor(exp.Select) is select
    ]
    if calls and not (group and _has_grouping_sets(group)):
        raise AnalysisException(
            message="[UNSUPPORTED_GROUPING_EXPRESSION] grouping()/grouping_id() can only be"
            " used with GroupingSets/Cube/Rollup."
        )
    if group is None:
        return
    for call in calls:
        call.set("expressions", _grouping_columns(group))
    for column in list(select.find_all(exp.Column)):
        if column.name.lower() != "grouping__id" or column.table:
            continue
        if column.find_ancestor(exp.Select) is not select:
            continue
        column.replace(exp.GroupingId(expressions=_grouping_columns(group)))


def _has_grouping_sets(group: exp.Expr) -> bool:
    """Whether a GROUP BY has CUBE, ROLLUP or GROUPING SETS (in its own arguments or, as
    Spark's dialect parses them, among its expressions)."""
    if any(group.args.get(key) for key in ("cube", "rollup", "grouping_sets")):
        return True
    kinds = (exp.Cube, exp.Rollup, exp.GroupingSets)
    return any(isinstance(item, kinds) for item in group.expressions)


def _rewrite_select(node: exp.Expr) -> exp.Expr:
    _using_columns_first(node)
    _drop_grand_total_of_no_rows(node)
    _replace_grouping_id_column(node)
    for lateral in list(node.args.get("laterals") or []):
        node.append("joins", _lateral_view_join(lateral))
    node.set("laterals", None)
    for projection in node.expressions:
        generator = projection.this if isinstance(projection, exp.Alias) else projection
        if isinstance(generator, exp.Explode) and not isinstance(generator, exp.Posexplode):
            if isinstance(generator, exp.ExplodeOuter):
                raise UnsupportedSqlError(
                    "explode_outer in the SELECT list", "use LATERAL VIEW OUTER explode(...)"
                )
            unnest = _fn("UNNEST", _c(generator.this))
            projection.replace(exp.alias_(unnest, projection.alias or "col"))
        elif isinstance(generator, (exp.Posexplode, exp.Inline)):
            raise UnsupportedSqlError(
                f"{generator.key} in the SELECT list", "use LATERAL VIEW posexplode(...)"
            )
        elif isinstance(projection, exp.Count) and isinstance(projection.this, exp.Star):
            # Spark names an unaliased count(*) column count(1); DuckDB, count_star().
            projection.replace(exp.alias_(_c(projection), "count(1)", quoted=True))
    return node


def _using_columns_first(select: exp.Expr) -> None:
    """Expand an unqualified ``*`` over ``JOIN ... USING (k)`` as Spark does: the USING
    columns first (those of the last USING join first), then the other columns in FROM order.

    DuckDB leaves a USING column where the left side has it; its unqualified name already
    has Spark's value (the left's, the right's in a RIGHT join, the coalesce of both in a
    FULL join), so ``*`` becomes ``k, * EXCLUDE (k)``. Without the tables' schemas this also
    drops a column named ``k`` of a table joined *after* the USING join (Spark keeps it).

    >>> to_duckdb(parse_spark("SELECT * FROM a RIGHT JOIN b USING (k)"))
    'SELECT "k", * EXCLUDE ("k") FROM a RIGHT JOIN b USING (k)'
    """
    if not any(isinstance(item, exp.Star) for item in select.expressions):
        return
    joins = select.args.get("joins") or []
    if any(str(join.args.get("method") or "").upper() == "NATURAL" for join in joins):
        raise UnsupportedSqlError(
            "* over a NATURAL JOIN", "name the shared columns: JOIN ... USING (k, ...)"
        )
    keys: list[str] = []
    for join in reversed(joins):
        for key in join.args.get("using") or []:
            if key.name.lower() not in {seen.lower() for seen in keys}:
                keys.append(key.name)
    if not keys:
        return
    items: list[exp.Expr] = []
    for item in select.expressions:
        if isinstance(item, exp.Star) and not item.args.get("except_"):
            items += [exp.column(key, quoted=True) for key in keys]
            item = exp.Star(except_=[exp.column(key, quoted=True) for key in keys])
        items.append(item)
    select.set("expressions", items)


def _drop_grand_total_of_no_rows(select: exp.Expr) -> None:
    """GROUPING SETS / ROLLUP / CUBE over no rows: Spark aggregates per grouping set, so
    it returns no row at all, where DuckDB returns the row of the empty set ``()``."""
    group = select.args.get("group")
    if group is None:
        return
    sets = (exp.GroupingSets, exp.Rollup, exp.Cube)
    listed = any(isinstance(item, sets) for item in group.expressions)
    if not listed and not any(group.args.get(k) for k in ("grouping_sets", "rollup", "cube")):
        return
    _only_groups_with_rows(select)


def _only_groups_with_rows(select: exp.Expr) -> None:
    """Add ``count(*) > 0`` to ``select``'s HAVING."""
    some_row = exp.GT(this=exp.Count(this=exp.Star()), expression=_lit(0))
    having = select.args.get("having")
    condition = some_row if having is None else exp.and_(exp.Paren(this=having.this), some_row)
    select.set("having", exp.Having(this=condition))


def _lateral_view_join(lateral: exp.Expr) -> exp.Join:
    generator = lateral.this
    alias = lateral.args.get("alias")
    table_name = alias.name if alias is not None and alias.name else "_lateral_view"
    columns = [c.name for c in alias.columns] if alias is not None else []
    outer = bool(lateral.args.get("outer")) or isinstance(generator, exp.ExplodeOuter)
    if isinstance(generator, exp.Posexplode):
        source = _c(generator.this)
        names = columns or ["pos", "col"]
        if len(names) == 3:
            projections = [
                exp.alias_(
                    _cast(  # Spark's position is an INT
                        exp.Sub(
                            this=_fn("GENERATE_SUBSCRIPTS", _fn("MAP_KEYS", _c(source)), _lit(1)),
                            expression=_lit(1),
                        ),
                        "INTEGER",
                    ),
                    names[0],
                ),
                exp.alias_(_fn("UNNEST", _fn("MAP_KEYS", _c(source))), names[1]),
                exp.alias_(_fn("UNNEST", _fn("MAP_VALUES", _c(source))), names[2]),
            ]
        elif len(names) == 2:
            projections = [
                exp.alias_(
                    _cast(
                        exp.Sub(
                            this=_fn("GENERATE_SUBSCRIPTS", _c(source), _lit(1)),
                            expression=_lit(1),
                        ),
                        "INTEGER",
                    ),
                    names[0],
                ),
                exp.alias_(_fn("UNNEST", _c(source)), names[1]),
            ]
        else:
            raise UnsupportedSqlError("posexplode with this column list")
    elif isinstance(generator, exp.Explode):
        source = generator.this
        names = columns or ["col"]
        if len(names) == 2:  # explode(map) AS key, value
            projections = [
                exp.alias_(_fn("UNNEST", _fn("MAP_KEYS", _c(source))), names[0]),
                exp.alias_(_fn("UNNEST", _fn("MAP_VALUES", _c(source))), names[1]),
            ]
        elif len(names) == 1:
            projections = [exp.alias_(_fn("UNNEST", _c(source)), names[0])]
        else:
            raise UnsupportedSqlError("explode with this column list")
    else:
        raise UnsupportedSqlError(
            f"LATERAL VIEW {generator.sql(dialect='spark')[:40]}",
            "only explode/posexplode are translated",
        )
    subquery = exp.Lateral(
        this=exp.Subquery(this=exp.select(*projections)),
        alias=exp.TableAlias(this=exp.to_identifier(table_name)),
    )
    if outer:
        return exp.Join(this=subquery, side="LEFT", on=exp.true())
    return exp.Join(this=subquery, kind="CROSS")


# ---- functions ----


def _rewrite_dayofweek(node: exp.Expr) -> exp.Expr:
    return _spark_day_of_week(node.this)


def _spark_day_of_week(value: exp.Expr) -> exp.Expr:
    """Spark's day of the week of ``value``: 1 (Sunday) to 7; DuckDB counts from 0."""
    return exp.Add(this=_fn("DAYOFWEEK", _c(value)), expression=_lit(1))


def _rewrite_json_format(node: exp.Expr) -> exp.Expr:
    # sqlglot reads to_json as JSONFormat, past the refusal of TO_JSON by name: DuckDB's
    # JSON text differs from Spark's (1e10 as 10000000000.0, 2.50 as 2.5, a timestamp's
    # form, NULL fields kept where Spark drops them).
    raise UnsupportedSqlError("to_json()", _REFUSED_FUNCTIONS["TO_JSON"])


def _rewrite_ts_or_ds_to_date(node: exp.Expr) -> exp.Expr:
    # The DATE year(), month(), datediff() … read from their argument: a string is cast as
    # Spark casts it (NULL where it is no date, where DuckDB's cast fails the query).
    if node.args.get("format") is not None:
        return node
    if isinstance(node.this, exp.Literal) and not node.this.is_string:
        return node
    return _spark_cast(_c(node.this), "DATE")  # a literal folds to a DATE, or NULL


def _rewrite_extract(node: exp.Expr) -> exp.Expr:
    # Spark's DOW / DAYOFWEEK are dayofweek()'s (and sqlglot's name for DOW_ISO is not
    # DuckDB's).
    field = node.this.name.upper()
    if field in ("DOW", "DAYOFWEEK"):
        return _spark_day_of_week(node.expression)
    if field in ("DOW_ISO", "DAYOFWEEK_ISO"):  # 1 (Monday) to 7, DuckDB's ISODOW
        return _fn("ISODOW", _c(node.expression))
    if field == "QTR":  # Spark's short name, not DuckDB's
        return exp.Extract(this=exp.var("QUARTER"), expression=_c(node.expression))
    if field in _SECOND_FIELDS:
        # Spark: the seconds with their fraction, a DECIMAL(8, 6) (DuckDB: whole seconds).
        micros = _cast(_fn("DATE_PART", _lit("microseconds"), _c(node.expression)), "DECIMAL(8, 0)")
        one_millionth = _cast(_lit("0.000001"), "DECIMAL(7, 6)")
        return _cast(exp.Mul(this=micros, expression=one_millionth), "DECIMAL(8, 6)")
    return node


_SECOND_FIELDS = frozenset({"SECOND", "SECONDS", "S", "SEC", "SECS"})


def _rewrite_unix_seconds(node: exp.Expr) -> exp.Expr:
    # Whole seconds since the epoch, rounded down as Spark does (DuckDB's cast rounds).
    return _floor_division(_fn("EPOCH_US", _c(node.this)), 1_000_000)


def _rewrite_unix_millis(node: exp.Expr) -> exp.Expr:
    # Whole milliseconds, rounded down (DuckDB's EPOCH_MS rounds half a millisecond up).
    return _floor_division(_fn("EPOCH_US", _c(node.this)), 1_000)


def _floor_division(value: exp.Expr, divisor: int) -> exp.Expr:
    """``value`` divided by ``divisor`` rounded down, in integers (exact for any BIGINT)."""
    remainder = exp.Mod(
        this=exp.paren(
            exp.Add(this=exp.Mod(this=value, expression=_lit(divisor)), expression=_lit(divisor))
        ),
        expression=_lit(divisor),
    )
    return exp.IntDiv(
        this=exp.paren(exp.Sub(this=value.copy(), expression=remainder)), expression=_lit(divisor)
    )


def _nonneg(value: exp.Expr) -> exp.Expr:
    # CASE keeps NULL where GREATEST would skip it.
    return _case((exp.LT(this=_c(value), expression=_lit(0)), _lit(0)), default=_c(value))


def _rewrite_substring(node: exp.Expr) -> exp.Expr:
    # Spark's UTF8String.substringSQL: pos > 0 is 1-based, pos < 0 counts from the end,
    # 0 is the start; the window [start, start + len) is clipped at 0.
    text, pos, length = node.this, node.args["start"], node.args.get("length")
    literal = _int_value(pos)
    start0: exp.Expr = _case(
        (exp.GT(this=_c(pos), expression=_lit(0)), exp.Sub(this=_c(pos), expression=_lit(1))),
        (
            exp.LT(this=_c(pos), expression=_lit(0)),
            exp.Add(this=_fn("LENGTH", _c(text)), expression=_c(pos)),
        ),
        (exp.EQ(this=_c(pos), expression=_lit(0)), _lit(0)),
    )
    if literal is not None and literal >= 0:
        start0 = _lit(max(literal - 1, 0))
    elif literal is not None:
        start0 = exp.Add(this=_fn("LENGTH", _c(text)), expression=_lit(literal))
    begin = _nonneg(start0)
    first = exp.Add(this=exp.Paren(this=_c(begin)), expression=_lit(1))
    if length is None:
        return _fn("SUBSTRING", _c(text), first)
    end = exp.Add(this=exp.Paren(this=_c(start0)), expression=_c(length))
    count = _nonneg(exp.Sub(this=exp.Paren(this=end), expression=exp.Paren(this=begin)))
    return _fn("SUBSTRING", _c(text), first, count)


def _rewrite_date_add(node: exp.Expr) -> exp.Expr:
    unit = node.args.get("unit")
    if unit is not None and unit.name.upper() not in ("DAY", "DAYS"):
        raise UnsupportedSqlError(f"date_add with unit {unit.name}")
    return exp.Add(
        this=_spark_cast(node.this, "DATE"), expression=_cast(_c(node.expression), "INTEGER")
    )


# timestampdiff's units counted in microseconds (a day and a week are whole days: Spark's
# local date-times have no daylight-saving gaps), and those counted in months.
_DIFF_UNIT_MICROS = {
    "MICROSECOND": 1,
    "MILLISECOND": 1_000,
    "SECOND": 1_000_000,
    "MINUTE": 60_000_000,
    "HOUR": 3_600_000_000,
    "DAY": 86_400_000_000,
    "WEEK": 7 * 86_400_000_000,
}
_DIFF_UNIT_MONTHS = {"MONTH": 1, "QUARTER": 3, "YEAR": 12}
_LAST_MICROSECOND_OF_DAY = 86_400_000_000 - 1


def _local_date_time(value: exp.Expr) -> exp.Expr:
    """``value`` as the local date-time Spark's timestampdiff reads: a DATE or a STRING is
    cast to a TIMESTAMP (as Spark casts it), which is taken in the session's time zone.
    DuckDB's TIMESTAMP is that wall-clock time (its cast of a TIMESTAMPTZ reads the
    TimeZone)."""
    if _never_a_string(value):
        return _cast(_c(value), "TIMESTAMP")
    return _spark_cast(value, "TIMESTAMP")


def _truncated_division(value: exp.Expr, divisor: int) -> exp.Expr:
    """``value`` divided by ``divisor`` towards zero, as Java's long division (DuckDB's
    ``//`` of integers truncates so)."""
    return exp.IntDiv(this=exp.paren(value, copy=False), expression=_lit(divisor))


def _months_until(start: exp.Expr, end: exp.Expr) -> exp.Expr:
    """Java's ``LocalDateTime.until(end, MONTHS)``, which Spark's timestampdiff counts
    months, quarters and years by: the end's date moves a day towards the start where its
    time of day has not reached the start's (2024-03-01 00:00 is 2024-02-29 after
    2024-01-31 12:00), and then ``(month * 32 + day)`` of the two dates differ by 32 a
    month, truncated: 2024-01-31 to 2024-02-29 is no whole month (DuckDB's date_sub counts
    one, the end being its month's last day), 2024-03-31 to 2024-02-29 is minus one."""
    start_date = _cast(_c(start), "DATE")
    time_of_day = exp.Sub(this=_c(start), expression=_fn("DATE_TRUNC", _lit("day"), _c(start)))
    # Rounding the shifted end down to its date moves it back a day where its time of day
    # is before the start's; for an end before the start it is rounded up instead.
    rounded_up = exp.Interval(this=_lit(str(_LAST_MICROSECOND_OF_DAY)), unit=exp.var("MICROSECOND"))
    shift = _case(
        (exp.GTE(this=_c(end), expression=_c(start)), time_of_day),
        default=exp.Sub(this=time_of_day.copy(), expression=rounded_up),
    )
    end_date = _cast(exp.Sub(this=_c(end), expression=exp.paren(shift, copy=False)), "DATE")
    months = _fn("DATE_DIFF", _lit("month"), start_date, end_date)
    days = exp.Sub(this=_fn("DAY", end_date.copy()), expression=_fn("DAY", start_date.copy()))
    packed = exp.Add(this=exp.Mul(this=months, expression=_lit(32)), expression=days)
    return _truncated_division(packed, 32)


def _rewrite_timestamp_diff(node: exp.Expr) -> exp.Expr:
    """Spark's ``timestampdiff(unit, start, end)``: the whole units elapsed between the two
    local date-times (Java's ``ChronoUnit.between``), truncated towards zero, a BIGINT.
    DuckDB's date_diff counts the unit boundaries crossed instead (a year from 2023-12-31 to
    2024-01-01). sqlglot reads ``end`` as the node's ``this``, ``start`` as its expression."""
    unit = node.args.get("unit")
    name = unit.name.upper() if unit is not None else ""
    start, end = _local_date_time(node.expression), _local_date_time(node.this)
    if name in _DIFF_UNIT_MICROS:
        elapsed = exp.Sub(this=_fn("EPOCH_US", end), expression=_fn("EPOCH_US", start))
        return _truncated_division(elapsed, _DIFF_UNIT_MICROS[name])
    if name in _DIFF_UNIT_MONTHS:
        months = _months_until(start, end)
        months_per_unit = _DIFF_UNIT_MONTHS[name]
        return months if months_per_unit == 1 else _truncated_division(months, months_per_unit)
    raise UnsupportedSqlError(f"timestampdiff with unit {name or '?'}")


# What Spark's timestampadd reads as a DATE or a STRING (cast to its TIMESTAMP), as the
# argument shows it after its own translation (a DATE literal or to_date() is a cast).
_DATE_RESULTS = (exp.CurrentDate, exp.DateFromUnixDate, exp.LastDay, exp.NextDay)


def _spark_timestamp_of(value: exp.Expr) -> exp.Expr | None:
    """``value`` cast to Spark's TIMESTAMP (DuckDB's TIMESTAMPTZ: a DATE's midnight, a
    string's wall-clock time, in the session's time zone) where its form shows it is a DATE
    or a STRING; None otherwise."""
    inner = value
    while isinstance(inner, exp.Paren):
        inner = inner.this
    to = inner.args.get("to") if isinstance(inner, exp.Cast | exp.TryCast) else None
    is_date = isinstance(to, exp.DataType) and to.is_type(exp.DType.DATE)
    if is_date or isinstance(inner, (exp.Null, *_DATE_RESULTS)):
        return _cast(_c(value), "TIMESTAMPTZ")
    is_text = isinstance(to, exp.DataType) and to.is_type(*exp.DataType.TEXT_TYPES)
    if is_text or _string_value(inner) is not None:
        return _cast(_spark_cast(value, "TIMESTAMP"), "TIMESTAMPTZ")
    return None


def _rewrite_timestamp_add(node: exp.Expr) -> exp.Expr:
    """Spark's ``timestampadd(unit, amount, ts)`` takes an INT amount, cast as Spark casts
    (1.5 seconds is 1, 3000000000 wraps around; DuckDB's interval keeps the fraction), and
    a TIMESTAMP or TIMESTAMP_NTZ, its result's type: a DATE or a STRING is cast to its
    TIMESTAMP, DuckDB's TIMESTAMPTZ (DuckDB's DATE plus an interval is a TIMESTAMP, Spark's
    TIMESTAMP_NTZ). A DATE or STRING is seen in the argument's form, or in its type where
    the statement was typed (a DATE column)."""
    node.set("expression", _spark_cast(node.expression, "INTEGER"))
    timestamp = _spark_timestamp_of(node.this) or _timestamp_of_typed(
        node.this, _argument_type(node)
    )
    if timestamp is not None:
        node.set("this", timestamp)
    return node


def _timestamp_of_typed(value: exp.Expr, value_type: SparkType | None) -> exp.Expr | None:
    """``value`` cast to Spark's TIMESTAMP (DuckDB's TIMESTAMPTZ) where the typing pass
    found it a DATE or a STRING; None for any other type, or none known."""
    if value_type == "date":
        return _cast(_c(value), "TIMESTAMPTZ")
    if value_type == "string":
        return _cast(_spark_cast(value, "TIMESTAMP"), "TIMESTAMPTZ")
    return None


# DuckDB's integral types, which a Spark TINYINT ... BIGINT value is.
_DUCKDB_INTEGRAL_TYPES = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT")


def _a_number(value: exp.Expr) -> bool:
    """Whether ``value`` is a number by its form: a numeric literal (negated or not), or a
    cast to a numeric type."""
    inner = value.this if isinstance(value, exp.Neg) else value
    if isinstance(inner, exp.Literal):
        return not inner.is_string
    to = inner.args.get("to") if isinstance(inner, exp.Cast | exp.TryCast) else None
    return isinstance(to, exp.DataType) and to.is_type(*exp.DataType.NUMERIC_TYPES)


def _rewrite_offset_default(node: exp.Expr) -> exp.Expr:
    """lag/lead's default value: Spark casts it to the value's type with its CAST (2.7,
    -2.7 or '3.9' is 2, -2 or 3 for an INT, 'x' NULL, 300.5 wraps around to 44 for a
    TINYINT), where DuckDB's cast rounds, or fails. Where the typing pass knows both
    types, the default is cast to the value's as Spark casts it. Otherwise, for a literal
    number or string, the value's type is known at run time only: its integral types are
    each cast to as Spark casts (a string default then read as a string again, the CASE
    having one type), other types are left to DuckDB's cast (the same answer for a
    fractional number or a string). A default of another form (a DATE, a column) must have
    the value's type at run time: DuckDB binds every branch of a CASE by type, and a DATE
    has no cast to an integer."""
    default = node.args.get("default")
    if default is None or _is_null_literal(default):
        return node
    types = node.meta.get(ARGUMENT_TYPES)
    if isinstance(types, tuple) and None not in types:
        node.set("default", _default_as_value_type(default, *types))
        return node
    as_text = _string_value(default) is not None or (
        isinstance(default, exp.Cast | exp.TryCast) and default.to.is_type(*exp.DataType.TEXT_TYPES)
    )
    if not as_text and not _a_number(default):
        node.set("default", _default_of_value_type(node.this, default))
        return node
    value_type = _fn("TYPEOF", _c(node.this))
    casts = []
    for duckdb_type in _DUCKDB_INTEGRAL_TYPES:
        cast = _spark_cast(default, duckdb_type)
        casts.append(
            (
                exp.EQ(this=value_type.copy(), expression=_lit(duckdb_type)),
                _as_varchar(cast) if as_text else cast,
            )
        )
    node.set("default", _case(*casts, default=_c(default)))
    return node


# The types Spark implicitly casts lag's and lead's default to, by the types it casts from
# (its ImplicitTypeCasts; another pair is Spark's DATATYPE_MISMATCH).
_NUMBERS = (*INTEGRAL_TYPES, *FRACTIONAL_TYPES)
_DEFAULT_CASTS: dict[str, tuple[str, ...]] = {
    **{number: (*_NUMBERS, "decimal", "string") for number in _NUMBERS},
    "decimal": (*_NUMBERS, "decimal", "string"),
    "string": (*_NUMBERS, "decimal", "date", "timestamp", "boolean"),
    "date": ("string", "timestamp"),
    "timestamp": ("string", "date"),
}


def _type_kind(spark_type: SparkType) -> str:
    return "decimal" if isinstance(spark_type, DecimalType) else spark_type


def _default_as_value_type(
    default: exp.Expr, value_type: SparkType, default_type: SparkType
) -> exp.Expr:
    """lag/lead's ``default`` cast to the value's type as Spark casts it (2.7 is 2 for an
    INT, where DuckDB's cast rounds; 'x' is NULL), where the typing pass knows both types;
    a pair Spark does not cast implicitly (a DATE for an INT) is refused."""
    if default_type in (value_type, "void"):
        return default
    if _type_kind(default_type) not in _DEFAULT_CASTS.get(_type_kind(value_type), ()):
        raise UnsupportedSqlError(
            f"lag/lead with a default of type {type_text(default_type).upper()} for a value "
            f"of type {type_text(value_type).upper()}",
            "cast the default to the value's type",
        )
    return _compared_as(default, value_type)


def _default_of_value_type(value: exp.Expr, default: exp.Expr) -> exp.Expr:
    """lag/lead's ``default`` where its type or the value's is unknown: as it is where
    both have one type at run time, else refused there (Spark's cast of it could differ
    from DuckDB's)."""
    same_type = exp.EQ(this=_fn("TYPEOF", _c(value)), expression=_fn("TYPEOF", _c(default)))
    refusal = _runtime_refusal(
        "lag/lead with a default of another type than its value: cast the default to the "
        "value's type"
    )
    return _case((same_type, _c(default)), default=refusal)


def _rewrite_add_months(node: exp.Expr) -> exp.Expr:
    shifted = exp.Add(
        this=_spark_cast(node.this, "DATE"),
        expression=_fn("TO_MONTHS", _cast(_c(node.expression), "INTEGER")),
    )
    return _cast(shifted, "DATE")


def _rewrite_quantile(node: exp.Expr) -> exp.Expr:
    """Spark's ``percentile``: interpolated between DOUBLEs (Spark reads each value as a
    DOUBLE first; DuckDB interpolates a DECIMAL or a FLOAT in its own type and rounds)."""
    quantile = node.args["quantile"]
    result = "DOUBLE[]" if isinstance(quantile, exp.Array) else "DOUBLE"
    value = _cast(_c(node.this), "DOUBLE")
    return _cast_aggregate(node, _fn("QUANTILE_CONT", value, _c(quantile)), result)


def _rewrite_median(node: exp.Expr) -> exp.Expr:
    """Spark's ``median`` is its ``percentile(x, 0.5)``: a DOUBLE."""
    value = _cast(_c(node.this), "DOUBLE")
    return _cast_aggregate(node, _fn("QUANTILE_CONT", value, _lit(0.5)), "DOUBLE")


def _cast_aggregate(node: exp.Expr, aggregate: exp.Expr, target: str) -> exp.Expr:
    """``aggregate`` (what ``node`` becomes) cast to ``target``; over ``node``'s window,
    when it has one, inside the cast (DuckDB takes no OVER after a CAST): the window is
    then replaced in the tree, and ``node``, detached, returned."""
    window = _window_parent(node)
    if window is None:
        return _cast(aggregate, target)
    over = window.copy()
    over.set("this", aggregate)
    _replace_window(window, _cast(over, target))
    return node


def _refuse(construct: str, hint: str = "") -> Rewrite:
    def rule(node: exp.Expr) -> exp.Expr:
        raise UnsupportedSqlError(construct, hint)

    return rule


def _rewrite_substring_index(node: exp.Expr) -> exp.Expr:
    delimiter = node.args["delimiter"]
    text = _string_value(delimiter)
    if text is None:
        raise UnsupportedSqlError(
            "substring_index() with a non-literal delimiter", "write the delimiter as a literal"
        )
    if function_gaps.overlaps_itself(text):
        raise UnsupportedSqlError(
            f"substring_index() with the delimiter {text!r}, whose occurrences can overlap",
            "Spark counts overlapping occurrences; split the text another way",
        )
    return function_gaps.substring_index(node.this, delimiter, node.args["count"])


def _rewrite_size(node: exp.Expr) -> exp.Expr:
    length = _cast(_fn("CARDINALITY", _c(node.this)), "INTEGER")  # lists and maps alike
    if _written_name(node) == "array_size":
        return length  # array_size(NULL) is NULL
    # size and cardinality: spark.sql.legacy.sizeOfNull (true with ANSI off): -1 for NULL.
    return _case((exp.Is(this=_c(node.this), expression=exp.Null()), _lit(-1)), default=length)


def _rewrite_ignore_nulls(node: exp.Expr) -> exp.Expr:
    inner = node.this
    if not isinstance(inner, (exp.First, exp.Last, exp.FirstValue, exp.LastValue)):
        return node
    value = inner.this
    name = "FIRST" if isinstance(inner, (exp.First, exp.FirstValue)) else "LAST"
    if isinstance(node.parent, exp.Window):
        window_function = exp.FirstValue if name == "FIRST" else exp.LastValue
        return exp.IgnoreNulls(this=window_function(this=_c(value)))
    not_null = exp.Not(this=exp.Is(this=_c(value), expression=exp.Null()))
    return exp.Filter(this=_fn(name, _c(value)), expression=exp.Where(this=not_null))


def _rewrite_respect_nulls(node: exp.Expr) -> exp.Expr:
    # first(x, false) and the like: NULLs respected, as without the flag.
    return _c(node.this)


def _rewrite_first_last(node: exp.Expr) -> exp.Expr:
    if isinstance(node.parent, exp.IgnoreNulls):
        return node
    name = "FIRST" if isinstance(node, exp.First) else "LAST"
    if isinstance(node.parent, exp.Window):
        return (exp.FirstValue if name == "FIRST" else exp.LastValue)(this=_c(node.this))
    return _fn(name, _c(node.this))


def _collect(node: exp.Expr, distinct: bool) -> exp.Expr:
    value = exp.Distinct(expressions=[_c(node.this)]) if distinct else _c(node.this)
    not_null = exp.Not(this=exp.Is(this=_c(node.this), expression=exp.Null()))
    aggregate = exp.Filter(this=_fn("LIST", value), expression=exp.Where(this=not_null))
    window = _window_parent(node)
    if window is not None:
        if distinct:
            raise UnsupportedSqlError("collect_set over a window")
        placeholder = exp.Null()  # (the window goes inside the result: replaced first)
        window.replace(placeholder)
        placeholder.replace(exp.Coalesce(this=window, expressions=[exp.Array()]))
        return aggregate
    return exp.Coalesce(this=aggregate, expressions=[exp.Array()])


def _rewrite_count(node: exp.Expr) -> exp.Expr:
    if node.expressions and not isinstance(node.this, exp.Distinct):
        # count(a, b, ...): the rows where every argument is non-NULL.
        values = [node.this, *node.expressions]
        every = exp.and_(*[exp.Not(this=exp.Is(this=_c(v), expression=exp.Null())) for v in values])
        return exp.Count(this=_case((every, _lit(1))))
    distinct = node.this
    if not isinstance(distinct, exp.Distinct) or len(distinct.expressions) < 2:
        return node
    values = distinct.expressions
    any_null = exp.or_(*[exp.Is(this=_c(v), expression=exp.Null()) for v in values])
    row = _case((any_null, exp.Null()), default=_fn("ROW", *[_c(v) for v in values]))
    return exp.Count(this=exp.Distinct(expressions=[row]))


def _spark_int(length: exp.Expr) -> exp.Expr:
    # A length argument: Spark casts it to INT (a non-numeric string gives NULL, 2.7 gives 2).
    return _c(length) if _int_value(length) is not None else _spark_cast(length, "INT")


def _rewrite_pad(node: exp.Expr) -> exp.Expr:
    value, length, pad = node.this, node.expression, node.args.get("fill_pattern")
    left = bool(node.args.get("is_left"))
    if function_gaps.is_binary(value) and (
        pad is None or isinstance(pad, exp.Null) or function_gaps.is_binary(pad)
    ):
        return function_gaps.binary_pad(left, value, _spark_int(length), pad)
    if function_gaps.is_binary(value) or (pad is not None and function_gaps.is_binary(pad)):
        raise UnsupportedSqlError("lpad / rpad of a BINARY and a STRING", "cast both to one type")
    padded = node.copy()
    padded.set("expression", _spark_int(length))
    return padded


def _rewrite_left_right(node: exp.Expr) -> exp.Expr:
    # Spark: '' for a length <= 0 (DuckDB's LEFT/RIGHT then drop characters from the end).
    length = _spark_int(node.expression)
    cut = node.copy()
    cut.set("expression", length)
    if (_int_value(length) or 0) > 0:
        return cut
    return _case(
        (exp.Is(this=_c(node.this), expression=exp.Null()), exp.Null()),
        (exp.LTE(this=length.copy(), expression=_lit(0)), _lit("")),
        default=cut,
    )


def _rewrite_map_contains_key(node: exp.Expr) -> exp.Expr:
    return function_gaps.map_contains_key(node.this, node.args["key"])


def _rewrite_contains(node: exp.Expr) -> exp.Expr:
    return function_gaps.null_safe_contains(node.this, node.expression)


def _rewrite_replace(node: exp.Expr) -> exp.Expr:
    if node.args.get("replacement") is None:
        return function_gaps.replace_with_empty(node.this, node.expression)
    return node


def _rewrite_join(node: exp.Expr) -> exp.Expr:
    # Spark reads `a CROSS JOIN b ON cond` (or USING (k)) as an inner join.
    criteria = node.args.get("on") is not None or node.args.get("using")
    if node.args.get("kind", "").upper() == "CROSS" and criteria:
        node.set("kind", None)
    return node


def _rewrite_literal(node: exp.Expr) -> exp.Expr:
    # An integer literal beyond BIGINT is a DECIMAL(digits, 0) in Spark (DuckDB: HUGEINT).
    if not node.is_int:
        return _rewrite_decimal_literal(node)
    if isinstance(node.parent, (exp.Cast, exp.TryCast)):
        return node
    digits = str(node.this).lstrip("-")
    # Spark reads the sign as part of the literal: -9223372036854775808 is a BIGINT.
    value = -int(node.this) if isinstance(node.parent, exp.Neg) else int(node.this)
    if -(2**63) <= value < 2**63 or len(digits) > 38:
        return node
    return _cast(_c(node), f"DECIMAL({len(digits)}, 0)")


def _rewrite_array_contains(node: exp.Expr) -> exp.Expr:
    # Three-valued like Spark: NULL when not found but the array holds a NULL.
    array, value = node.this, node.expression
    return _case(
        _null_if_any_null(array, value),
        (_fn("LIST_CONTAINS", _c(array), _c(value)), exp.true()),
        (exp.LT(this=_fn("LIST_COUNT", _c(array)), expression=_fn("LEN", _c(array))), exp.Null()),
        default=exp.false(),
    )


def _rewrite_bracket(node: exp.Expr) -> exp.Expr:
    if len(node.expressions) != 1:
        raise UnsupportedSqlError("a multi-index subscript")
    container, index = node.this, node.expressions[0]
    if node.args.get("offset") == 1:  # element_at: 1-based, negative from the end
        if _int_value(index) == 0:
            raise UnsupportedSqlError("element_at(array, 0)", "SQL array indices start at 1")
        return exp.Bracket(this=_c(container), expressions=[_c(index)], offset=1)
    if _string_value(index) is not None:  # map['key'] / struct['field']
        return exp.Bracket(this=_c(container), expressions=[_c(index)], offset=1)
    # a[i]: 0-based for arrays (NULL when negative or out of range), a key for maps.
    as_list = exp.Bracket(
        this=_c(container), offset=1, expressions=[exp.Add(this=_c(index), expression=_lit(1))]
    )
    as_map = exp.Bracket(this=_c(container), expressions=[_c(index)], offset=1)
    return _case(
        (_typeof_like(container, "MAP(%"), as_map),
        (exp.GTE(this=_c(index), expression=_lit(0)), as_list),
    )


def _rewrite_array_sort(node: exp.Expr) -> exp.Expr:
    # sort_array: ASC puts NULLs first, DESC last; array_sort: ascending, NULLs last.
    if node.args.get("expression") is not None:
        raise UnsupportedSqlError("array_sort with a comparator")
    ascending = node.args.get("asc")
    nulls_first = node.args.get("nulls_first")
    if not isinstance(ascending, (exp.Boolean, type(None))) or not isinstance(
        nulls_first, (exp.Boolean, type(None))
    ):
        raise UnsupportedSqlError("sort_array with a non-literal order")
    order = "ASC" if ascending is None or ascending.this else "DESC"
    nulls = "NULLS FIRST" if nulls_first is not None and nulls_first.this else "NULLS LAST"
    array_type = _argument_type(node)
    if array_type is None:
        unknown = _fn("LIST_SORT", _c(node.this), _lit(order), _lit(nulls))
        return _refused_if_nested(node.this, _UNTYPED_NESTED_ORDER, unknown, _NESTED_ELEMENTS)
    element = exp.to_identifier("__sorted_element")
    key = _spark_order_key(exp.column(element), array_type, "sort_array()")
    if key is None:
        return _fn("LIST_SORT", _c(node.this), _lit(order), _lit(nulls))
    # Sorted as {key, element} pairs, each NULL where its element is (placed by `nulls`).
    pairs = _list_transform(node.this, element, nested_order.keyed(exp.column(element), key))
    pair = exp.to_identifier("__sorted_pair")
    value = _fn("STRUCT_EXTRACT", exp.column(pair), _lit("v"))
    return _list_transform(_fn("LIST_SORT", pairs, _lit(order), _lit(nulls)), pair, value)


def _spark_order_key(element: exp.Expr, array_type: object, use: str) -> exp.Expr | None:
    """The key (nested_order.py) of an element of an array of Spark type ``array_type``;
    None where its elements are not nested (DuckDB's order is Spark's)."""
    if not isinstance(array_type, str) or not array_type.startswith("array<"):
        return None
    element_type = array_type[len("array<") : -1]
    if not nested_order.is_nested(element_type):
        return None
    key = nested_order.order_key(element, element_type)
    if key is None:  # a MAP inside, or a type text not read
        raise UnsupportedSqlError(f"{use} of values of type {element_type}", "sort by a field")
    return key


def _list_transform(array: exp.Expr, element: exp.Identifier, body: exp.Expr) -> exp.Expr:
    lambda_ = exp.Lambda(this=body, expressions=[element])
    return _fn("LIST_TRANSFORM", _c(array), lambda_)


def _rewrite_like(node: exp.Expr) -> exp.Expr:
    _compared_as_text(node)
    # Spark's LIKE escapes with a backslash by default; DuckDB's has no default escape.
    if isinstance(node.parent, exp.Escape):
        return node
    return exp.Escape(this=_c(node), expression=_lit("\\"))


def _compared_as_text(node: exp.Expr) -> None:
    """A comparison or predicate operand of LIKE or RLIKE (``(a = b) LIKE 'tr%'``, Spark's
    grouping of ``a = b LIKE 'tr%'``) cast to its text, 'true' or 'false', as Spark casts
    it; DuckDB has no LIKE of a BOOLEAN."""
    for key in ("this", "expression"):
        operand = node.args.get(key)
        if isinstance(operand, exp.Expr) and isinstance(operand.unnest(), exp.Predicate):
            node.set(key, _as_varchar(operand))


def _rewrite_current_date(node: exp.Expr) -> exp.Expr:
    # The date in the session's time zone (DuckDB's TimeZone, set to it), as Spark's.
    return _cast(_fn("GET_CURRENT_TIMESTAMP"), "DATE")


def _rewrite_current_user(node: exp.Expr) -> exp.Expr:
    # Spark's current_user() is the user its session runs as (SPARK_USER where set, else
    # the operating system's); DuckDB's is its own name, 'duckdb'.
    return _lit(_session_user())


def _session_user() -> str:
    try:
        return os.environ.get("SPARK_USER") or getpass.getuser()
    except (OSError, KeyError):  # no user name known to the system (a bare container)
        return str(os.getuid())


def _rewrite_current_timestamp(node: exp.Expr) -> exp.Expr:
    return _fn("GET_CURRENT_TIMESTAMP")  # the instant: Spark's TIMESTAMP


def _rewrite_values(node: exp.Expr) -> exp.Expr:
    # Spark names VALUES columns col1, col2, ...; DuckDB names them col0, col1, ...
    _recover_table_alias(node)
    alias = node.args.get("alias")
    renamed = node.copy()
    if alias is None or not alias.columns:
        width = len(node.expressions[0].expressions) if node.expressions else 0
        name = alias.name if alias is not None and alias.name else "_values"
        columns = [exp.to_identifier(f"col{i + 1}") for i in range(width)]
        renamed.set("alias", exp.TableAlias(this=exp.to_identifier(name), columns=columns))
    elif not alias.name:
        renamed.set(
            "alias",
            exp.TableAlias(
                this=exp.to_identifier("_values"), columns=[_c(column) for column in alias.columns]
            ),
        )
    elif node.parent is not None and not isinstance(node.parent, _SET_OPERATIONS):
        return node
    if node.parent is None or isinstance(node.parent, _SET_OPERATIONS):
        return exp.select("*").from_(renamed)  # DuckDB takes no alias on a bare VALUES
    return renamed


_SET_OPERATIONS = (exp.Union, exp.Except, exp.Intersect)


def _rewrite_set_operation(node: exp.Expr) -> exp.Expr:
    """A set operation Spark widens a column of to STRING (a string beside a TIMESTAMP,
    DOUBLE or DECIMAL): each SELECT's value of another type becomes Spark's text of it,
    first cast to the type a nested set operation widened it to, where DuckDB would give
    its own text (``+00``, ``1e-05``, ``.5000``)."""
    branches = set_branches(node)
    plan = node.meta.get(SET_TEXT_TYPES)
    if not isinstance(plan, tuple) or len(plan) != len(branches):
        plan = (None,) * len(branches)
    widened = node.meta.get(SET_WIDENED_TYPES)
    names = node.meta.get(SET_BRANCH_COLUMNS) or (None,) * len(branches)
    for branch, text_types, columns in zip(branches, plan, names, strict=True):
        if isinstance(branch, exp.Select) and columns is not None:
            _expand_star(branch, columns)
        projections = branch.expressions if isinstance(branch, exp.Select) else []
        if any(_star_of(p) is not None for p in projections):
            # The typed columns cannot be matched to these: a value Spark turns into text
            # would take DuckDB's text instead.
            if text_types is not None and any(t is not None for t in text_types):
                raise UnsupportedSqlError(
                    "a * (beside another *, naming a column twice, or over a USING, NATURAL "
                    "or LATERAL join) in a UNION, INTERSECT or EXCEPT that turns its value "
                    "into a STRING",
                    "name the columns instead of *",
                )
            continue
        if text_types is not None and len(projections) == len(text_types):
            for projection, text_type in zip(projections, text_types, strict=True):
                if text_type is not None:
                    _replace_value(
                        projection,
                        _spark_text(_as_spark_type(projection.unalias().copy(), text_type)),
                    )
        if isinstance(widened, tuple) and len(projections) == len(widened):
            for projection, column_type in zip(projections, widened, strict=True):
                if column_type is not None:
                    _replace_value(
                        projection, _as_spark_type(projection.unalias().copy(), column_type)
                    )
    return node


def _replace_value(projection: exp.Expr, value: exp.Expr) -> None:
    """A SELECT's projection given another value, under the name it had."""
    if isinstance(projection, exp.Alias):
        projection.this.replace(value)
    else:
        projection.replace(exp.alias_(value, projection.alias_or_name))


def _star_of(projection: exp.Expr) -> exp.Star | None:
    """The ``*`` a SELECT's projection is (``*`` or ``t.*``), else None."""
    value = projection.unalias()
    if isinstance(value, exp.Column) and value.is_star:
        value = value.this
    return value if isinstance(value, exp.Star) else None


def _expand_star(branch: exp.Select, columns: tuple[str | None, ...]) -> None:
    """A SELECT of a set operation with one ``*`` (or ``t.*``) in its list: the star's
    columns (as the typing expanded them, ``columns`` being the whole list's) named
    instead, so that each can be turned into Spark's text. Left as it is where a name
    could bind otherwise than the star's column: a name the star gives twice (two
    relations' ``k``), a USING or NATURAL join (Spark's ``*`` gives its key once), a
    LATERAL VIEW, a name whose spelling is not known."""
    projections = branch.expressions
    stars = [index for index, p in enumerate(projections) if _star_of(p) is not None]
    if len(stars) != 1 or branch.args.get("laterals"):
        return
    index = stars[0]
    star = _star_of(projections[index])
    if star is None or any(star.args.get(a) for a in ("except", "replace")):
        return
    width = len(columns) - (len(projections) - 1)
    names = [name for name in columns[index : index + width] if name is not None]
    if width < 1 or len(names) != width or len({name.lower() for name in names}) != width:
        return
    joins = branch.args.get("joins") or []
    if any(join.args.get("using") or join.args.get("method") for join in joins):
        return
    written = projections[index].unalias()
    qualifier = written.table if isinstance(written, exp.Column) and written.table else None
    expanded = [exp.column(name, table=qualifier, quoted=True) for name in names]
    branch.set("expressions", [*projections[:index], *expanded, *projections[index + 1 :]])


def _as_spark_type(value: exp.Expr, spark_type: SparkType) -> exp.Expr:
    """``value`` cast to the Spark type a set operation widened it to (it may be
    narrower: an INT beside a DOUBLE, a DATE beside a TIMESTAMP)."""
    if spark_type == value.meta.get(SPARK_TYPE):
        return value
    if isinstance(spark_type, DecimalType):
        return _spark_cast(value, spark_type.sql())
    name = _WIDENED_TYPE_NAMES.get(spark_type)
    return value if name is None else _spark_cast(value, name)


# The DuckDB names of the Spark types a set operation widens a column to, before its text.
_WIDENED_TYPE_NAMES = {**_DUCKDB_TYPE_NAMES, "date": "DATE", "timestamp": "TIMESTAMPTZ"}


def _recover_table_alias(node: exp.Expr) -> None:
    # `VALUES 0, 1 AS t(id)` / `VALUES 1 T(col)`: without parentheses around the rows
    # sqlglot reads the table alias's name as an alias of the last value (Spark allows no
    # alias inside VALUES rows, so such an alias is always the table's).
    last_row = node.expressions[-1] if node.expressions else None
    if not isinstance(last_row, exp.Tuple) or not last_row.expressions:
        return
    last_value = last_row.expressions[-1]
    if not isinstance(last_value, exp.Alias):
        return
    last_value.replace(last_value.this)
    alias = node.args.get("alias")
    columns = [_c(column) for column in alias.columns] if alias is not None else []
    node.set("alias", exp.TableAlias(this=_c(last_value.args["alias"]), columns=columns))


# ---- regular expressions ----

_JAVA_ONLY_REGEX = re.compile(r"\(\?<?[=!]|\(\?>|\\[1-9]|[*+?}]\+|\\p\{java|\\[GZzRXhHe]|&&|\\k<")


def _check_regex(pattern: exp.Expr | None, function: str) -> None:
    text = _string_value(pattern)
    if text is None:
        raise UnsupportedSqlError(
            f"{function} with a non-literal pattern", "write the pattern as a string literal"
        )
    found = _JAVA_ONLY_REGEX.search(text)
    if found:
        raise UnsupportedSqlError(
            f"{function} with the Java-only regex feature {found.group(0)!r}",
            "the embedded engine's regular expressions (RE2) lack it: rewrite the pattern",
        )


def _rewrite_regexp_extract(node: exp.Expr) -> exp.Expr:
    _check_regex(node.expression, "regexp_extract")
    group = node.args.get("group")
    return _fn(
        "REGEXP_EXTRACT",
        _c(node.this),
        _c(node.expression),
        _c(group) if group is not None else _lit(1),
    )


def _rewrite_regexp_replace(node: exp.Expr) -> exp.Expr:
    _check_regex(node.expression, "regexp_replace")
    replacement = node.args.get("replacement")
    text = _string_value(replacement)
    if text is None or "$" in text or "\\" in text:
        raise UnsupportedSqlError(
            "regexp_replace with group references or a non-literal replacement",
            "Java's $1 and RE2's \\1 differ",
        )
    if node.args.get("position") is not None or node.args.get("occurrence") is not None:
        raise UnsupportedSqlError("regexp_replace with a position")
    return _fn("REGEXP_REPLACE", _c(node.this), _c(node.expression), _lit(text), _lit("g"))


def _rewrite_regexp_like(node: exp.Expr) -> exp.Expr:
    _check_regex(node.expression, "rlike")
    if node.args.get("flag") is not None:
        raise UnsupportedSqlError("regexp_like with flags")
    _compared_as_text(node)
    return _fn("REGEXP_MATCHES", _c(node.this), _c(node.expression))


# The characters that make a Java regex more than the literal text it is.
_REGEX_METACHARACTERS = frozenset("\\^$.|?*+()[]{}")


def _rewrite_split(node: exp.Expr) -> exp.Expr:
    """Spark's split(str, regex[, limit]): a limit of 0 or below splits at every match; a
    positive limit keeps at most that many parts, the last one holding the rest of the
    text. DuckDB's split has no limit, so that case takes a delimiter that is a literal
    text (no regex metacharacter): the parts after the limit are joined back with it."""
    _check_regex(node.expression, "split")
    limit = node.args.get("limit")
    parts = None if limit is None else _int_value(limit)
    if limit is None or (parts is not None and parts <= 0):
        if _matches_empty_text(_string_value(node.expression) or ""):
            raise UnsupportedSqlError(
                "split by a pattern that matches empty text (Spark keeps an empty last part)",
                "make the pattern match at least one character (x+ for x*)",
            )
        return _fn("STR_SPLIT_REGEX", _c(node.this), _c(node.expression))
    delimiter = _string_value(node.expression) or ""
    if parts is None or not delimiter or _REGEX_METACHARACTERS & set(delimiter):
        raise UnsupportedSqlError(
            "split with a positive limit of a regex, an empty pattern or a non-literal limit",
            "write the limit as a number and the delimiter as plain text",
        )
    split = _fn("STR_SPLIT", _c(node.this), _lit(delimiter))
    rest = _fn(
        "ARRAY_TO_STRING", _fn("LIST_SLICE", split.copy(), _lit(parts), _lit(-1)), _lit(delimiter)
    )
    kept = _fn("LIST_SLICE", split.copy(), _lit(1), _lit(parts - 1))
    return _case(
        (exp.LTE(this=_fn("LEN", split.copy()), expression=_lit(parts)), split.copy()),
        (
            exp.Not(this=exp.Is(this=split.copy(), expression=exp.Null())),
            _fn("LIST_CONCAT", kept, exp.Array(expressions=[rest])),
        ),
    )


# ^ (not a class's negation), $ and \b, \B, \A, \z, \Z, \G, not escaped.
_ZERO_WIDTH_ASSERTION = re.compile(r"(?<![\\\[])\^|(?<!\\)\$|\\[bBAzZG]")


def _matches_empty_text(pattern: str) -> bool:
    """Whether a split's regex matches empty text, where Spark (Java's split) and DuckDB
    place the empty parts differently (``split('abc', 'x*')`` ends with an empty part in
    Spark); the empty pattern splits into characters in both. A pattern with an anchor or
    a word boundary (which match empty text between characters), or one Python's ``re``
    does not read, counts as matching, to be safe."""
    if not pattern:
        return False
    if _ZERO_WIDTH_ASSERTION.search(pattern):
        return True
    try:
        return re.fullmatch(pattern, "") is not None
    except re.error:
        return True


def _rewrite_chr(node: exp.Expr) -> exp.Expr:
    """Spark's chr(n): the character of code n mod 256 (so chr(256) is U+0000), '' for a
    negative n; DuckDB's CHR takes any Unicode code point."""
    code = _spark_cast(_c(node.expressions[0]), "BIGINT")
    latin1 = _cast(exp.Mod(this=code.copy(), expression=_lit(256)), "INTEGER")
    return _case((exp.LT(this=code, expression=_lit(0)), _lit("")), default=_fn("CHR", latin1))


def _argument_type(node: exp.Expr) -> SparkType | None:
    """The Spark type of the argument ``node``'s translation reads (spark_typing's
    ``typed_arguments``), where the statement was typed."""
    (argument_type,) = node.meta.get(ARGUMENT_TYPES) or (None,)
    return argument_type


def _as_bytes(value: exp.Expr, value_type: SparkType | None) -> exp.Expr:
    """A BINARY argument: a STRING as its UTF-8 bytes (Spark's implicit cast), where
    DuckDB's functions of bytes take a BLOB only."""
    return _fn("ENCODE", _c(value)) if value_type == "string" else _c(value)


def _rewrite_hex(node: exp.Expr) -> exp.Expr:
    """Spark's hex of a DOUBLE, FLOAT or DECIMAL is the hex of it cast to BIGINT (hex takes
    a BIGINT, a STRING or a BINARY); DuckDB's hex reads such a number otherwise. Of a
    value whose type is unknown: a DOUBLE or FLOAT refused at run time."""
    value_type = _argument_type(node)
    if isinstance(value_type, DecimalType) or value_type in ("double", "float"):
        return _fn("HEX", _spark_cast(_c(node.this), "BIGINT"))
    if value_type is not None:
        return node
    return _case(
        (_typeof_in(node.this, "DOUBLE", "FLOAT"), _runtime_refusal("hex() of a DOUBLE")),
        default=_fn("HEX", _c(node.this)),
    )


def _rewrite_base64(node: exp.Expr) -> exp.Expr:
    """Spark's base64 of a STRING encodes its UTF-8 bytes (the implicit cast to BINARY);
    DuckDB's takes a BLOB only."""
    value_type = _argument_type(node)
    return _fn("TO_BASE64", _as_bytes(node.this, value_type)) if value_type == "string" else node


def _rewrite_width_bucket(node: exp.Expr) -> exp.Expr:
    """Spark's width_bucket(value, min, max, n): the 1-based bucket of ``value`` among ``n``
    equal ones from ``min`` to ``max`` (descending where ``min`` is above ``max``), 0 before
    them and n + 1 after; NULL for n below 1, equal bounds, a NaN, or an infinite bound.
    In DOUBLEs, as Spark computes it."""
    value, low, high = (
        _spark_cast(node.args[key], "DOUBLE") for key in ("this", "min_value", "max_value")
    )
    buckets = _spark_cast(node.args["num_buckets"], "BIGINT")
    lower, upper = _fn("LEAST", low.copy(), high.copy()), _fn("GREATEST", low.copy(), high.copy())
    width = exp.Sub(this=upper.copy(), expression=lower.copy())

    def bucket(offset: exp.Expr) -> exp.Expr:  # offset from the range's start, in [0, width)
        share = exp.Div(
            this=exp.Mul(this=_cast(buckets.copy(), "DOUBLE"), expression=exp.paren(offset)),
            expression=exp.paren(width.copy()),
        )
        return exp.Add(this=_cast(_fn("TRUNC", share), "BIGINT"), expression=_lit(1))

    after = exp.Add(this=buckets.copy(), expression=_lit(1))
    ascending = _case(
        (exp.LT(this=value.copy(), expression=lower.copy()), _lit(0)),
        (exp.GTE(this=value.copy(), expression=upper.copy()), after),
        default=bucket(exp.Sub(this=value.copy(), expression=lower.copy())),
    )
    descending = _case(
        (exp.GT(this=value.copy(), expression=upper.copy()), _lit(0)),
        (exp.LTE(this=value.copy(), expression=lower.copy()), after.copy()),
        default=bucket(exp.Sub(this=upper.copy(), expression=value.copy())),
    )
    undefined = exp.or_(
        exp.LTE(this=buckets.copy(), expression=_lit(0)),
        exp.EQ(this=buckets.copy(), expression=_lit(2**63 - 1)),
        _fn("ISNAN", value.copy()),
        exp.EQ(this=low.copy(), expression=high.copy()),
        *[_fn(check, bound.copy()) for bound in (low, high) for check in ("ISNAN", "ISINF")],
    )
    return _case(
        (undefined, exp.Null()),
        (exp.LT(this=low.copy(), expression=high.copy()), ascending),
        default=descending,
    )


def _rewrite_factorial(node: exp.Expr) -> exp.Expr:
    """Spark's factorial(n): a BIGINT for n from 0 to 20, NULL for any other n."""
    n = _spark_cast(_c(node.this), "INT")
    in_range = exp.Between(this=n, low=_lit(0), high=_lit(20))
    return _case((in_range, _cast(_fn("FACTORIAL", n.copy()), "BIGINT")))


# ---- CAST with ANSI off ----

# The integral types by name, with their width in bits.
_INTEGRAL_BITS = {"TINYINT": 8, "SMALLINT": 16, "INT": 32, "INTEGER": 32, "BIGINT": 64}
_DUCKDB_INTEGERS = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT")
# Spark's reading of a string as an integer: a sign, digits, then a fraction it drops
# (the digits may be on either side of the point alone: '.5' and '-.' are 0).
_INTEGER_STRING = r"[\x00-\x20]*[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]*)[\x00-\x20]*"
_TRUE_STRINGS = ("t", "true", "y", "yes", "1")
_FALSE_STRINGS = ("f", "false", "n", "no", "0")
_STRICT_DATE = r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}"
# A year of five to seven digits (or a sign) Spark reads and DuckDB cannot hold: refused; Spark
# reads no year of eight digits or more (NULL, as no branch matches).
_SPARK_DATE_PREFIX = r"[+-]?[0-9]{4,7}(-[0-9]{1,2}(-[0-9]{1,2}([ T].*)?)?)?"
_STRICT_TIMESTAMP = _STRICT_DATE + r"( [0-9]{1,2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,6})?)?)?"
# The shorter forms Spark's string-to-date/timestamp cast also reads, by field (year,
# month, day, hour, minute, second, fraction): '2024', '2024-1', '2024-01-15 7',
# '2024-01-15T07:08'; a DATE ignores what follows the day.
# A full timestamp with a zone: UTC ('Z') or an offset, which DuckDB's TIMESTAMPTZ reads.
_ZONED_TIMESTAMP = (
    _STRICT_DATE + r"[ T][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,6})?(Z|[+-][0-9]{2}:[0-9]{2})"
)
_LOOSE_DATE = r"([0-9]{4})(?:-([0-9]{1,2})(?:-([0-9]{1,2})(?:[ T].*)?)?)?"
_LOOSE_TIMESTAMP = (
    r"([0-9]{4})(?:-([0-9]{1,2})(?:-([0-9]{1,2})"
    r"(?:[ T]([0-9]{1,2})(?::([0-9]{1,2})(?::([0-9]{1,2})(\.[0-9]{1,6})?)?)?)?)?)?"
)


# A time of day alone, which Spark reads as that time today (in the session's time zone).
_TIME_ONLY = r"T?([0-9]{1,2}):([0-9]{1,2})(?::([0-9]{1,2})(\.[0-9]{1,6})?)?"

_INTERVAL_HINT = (
    "Spark's ANSI interval types have no equivalent in the embedded engine; "
    "write an interval literal (INTERVAL '1' DAY) or use numbers"
)


def _rewrite_cast(node: exp.Expr) -> exp.Expr:
    to = node.args["to"]
    if not isinstance(to, exp.DataType):
        raise UnsupportedSqlError("CAST to a non-type")
    if to.is_type(exp.DataType.Type.DECIMAL) and not to.expressions:
        to = exp.DataType.build("DECIMAL(10, 0)")  # Spark's DECIMAL / DEC without precision
    if isinstance(to.this, exp.Interval):
        return _cast_to_interval(node, to.this)
    written = _written_name(node)
    if (
        to.is_type(exp.DataType.Type.TIMESTAMPLTZ, exp.DataType.Type.TIMESTAMPTZ)
        or written == "timestamp"  # timestamp(x), sqlglot's CAST(x AS TIMESTAMP)
    ):
        # Spark's TIMESTAMP is an instant: the wall time read in the session time zone,
        # which is DuckDB's TimeZone setting.
        wall_time = _spark_cast(node.this, "TIMESTAMP", exp.DataType.build("TIMESTAMP"))
        return _cast(wall_time, "TIMESTAMPTZ")
    if isinstance(node.this, exp.Interval) and to.is_type(exp.DataType.Type.TEXT):
        # CAST(INTERVAL '90' MINUTE AS STRING): Spark's ANSI form of the literal.
        return exp.Literal.string(intervals.interval_string(node.this))
    number = intervals.interval_as_number(node.this)
    if number is not None and to.is_type(*exp.DataType.NUMERIC_TYPES):
        # CAST(INTERVAL '90' MINUTE AS INT): the count of the interval's unit.
        whole = number if not to.is_type(*exp.DataType.INTEGER_TYPES) else int(number)
        return _spark_cast(exp.Literal.number(whole), to.sql(dialect="duckdb"), to)
    target = to.sql(dialect="duckdb")
    if isinstance(node, exp.TryCast) and written == "try_cast" and target in _INTEGRAL_BITS:
        return _try_cast_to_integral(node, target, to)
    if to.is_type(*exp.DataType.TEXT_TYPES) and node.meta.get(ARGUMENT_TYPES) == ("string",):
        # A STRING by its static type: the cast changes nothing (a store into a STRING
        # column casts every value so, and the general form writes the value ten times);
        # should the inference ever be wrong, an error rather than DuckDB's text.
        return _case(
            (_typeof_in(node.this, "VARCHAR"), _c(node.this)),
            default=_runtime_refusal("a mis-inferred CAST"),
        )
    return _spark_cast(node.this, target, to)


# A STRING try_cast reads as an integer: digits only (ANSI's rule, no point).
_STRICT_INTEGER_STRING = r"[\x00-\x20]*[+-]?[0-9]+[\x00-\x20]*"


def _try_cast_to_integral(node: exp.Expr, target: str, to: exp.DataType) -> exp.Expr:
    """try_cast to an integral type: Spark's ANSI cast, NULL where it fails, where CAST
    (ANSI off) reads a fraction in a STRING and wraps a number beyond the type: a STRING
    with a point or a number out of the type's range is NULL (a fraction of a number is
    dropped, towards zero). Values of other types (or untyped) cast as CAST does."""
    value = node.this
    value_type = _argument_type(node)
    if value_type == "string":
        strict = _regex_full(_as_varchar(value), _STRICT_INTEGER_STRING)
        return _case((strict, _spark_cast(value, target, to)))
    if value_type in INTEGRAL_TYPES:
        return _try_cast(_c(value), target)
    wide = isinstance(value_type, DecimalType) and value_type.precision > _LONG_DIGITS
    if wide and _INTEGRAL_BITS[target] < 64:
        # Spark converts a DECIMAL wider than a long's digits to a DOUBLE first for an INT
        # or narrower (Decimal.roundToNumeric): 2.999999999999999999 is 3. To a BIGINT it
        # truncates exactly (roundToLong).
        return _try_cast(_fn("TRUNC", _cast(_c(value), "DOUBLE")), target)
    if isinstance(value_type, DecimalType) or value_type in ("double", "float"):
        return _try_cast(_fn("TRUNC", _c(value)), target)
    return _spark_cast(value, target, to)


# The digits of a DECIMAL Spark keeps in a long (Decimal.MAX_LONG_DIGITS).
_LONG_DIGITS = 18


def _cast_to_interval(node: exp.Expr, qualifier: exp.Interval) -> exp.Expr:
    """CAST(3 AS INTERVAL DAY), CAST('3-1' AS INTERVAL YEAR TO MONTH) as a result column:
    the literal it means. A non-literal value (Spark's run-time string and number rules)
    or such a cast inside an expression is refused."""
    refusal = UnsupportedSqlError(f"CAST to {qualifier.sql('spark')}", _INTERVAL_HINT)
    literal = intervals.cast_literal(node.this, qualifier)
    if literal is None or not _is_result_column(node):
        raise refusal
    try:
        type_name, value = intervals.interval_value(literal)
    except UnsupportedSqlError as failure:
        raise refusal from failure
    return _interval_result(node, exp.Literal.number(value), type_name)


def _check_alias_unreferenced(alias: exp.Alias) -> None:
    """Refuse an interval result column whose alias the query refers to (ORDER BY a): the
    alias is renamed to carry the column's type."""
    select = alias.parent
    if select is None:
        return
    clauses = [select.args.get(key) for key in ("order", "having", "qualify", "group")]
    for clause in (c for c in clauses if c is not None):
        if any(c.name == alias.alias and not c.table for c in clause.find_all(exp.Column)):
            raise UnsupportedSqlError(
                f"a reference to the interval result column {alias.alias}",
                "repeat the interval's expression instead of its alias",
            )


def _is_empty_collection(value: exp.Expr) -> bool:
    """Whether ``value`` is ``array()`` or ``map()`` (as translated for DuckDB)."""
    if isinstance(value, exp.Array):
        return not value.expressions
    if isinstance(value, exp.VarMap):
        keys = value.args.get("keys")
        return isinstance(keys, exp.Array) and not keys.expressions
    return False


def _spark_cast(value: exp.Expr, target: str, to: exp.DataType | None = None) -> exp.Expr:
    """``value`` cast to ``target`` the way Spark does it with ANSI mode off."""
    kind = to.this if to is not None else exp.DataType.build(target, dialect="duckdb").this
    if isinstance(kind, exp.Interval) or kind == exp.DType.INTERVAL:
        # An INTERVAL DAY/YEAR TO MONTH ... is Spark's ANSI interval, which DuckDB has not
        # (one INTERVAL type, another string form, other field rules).
        raise UnsupportedSqlError(f"CAST to {to.sql('spark') if to else target}", _INTERVAL_HINT)
    if isinstance(value, exp.Interval):
        raise UnsupportedSqlError(f"CAST of an interval to {target}", _INTERVAL_HINT)
    # sqlglot builds DuckDB's TIMESTAMP as TIMESTAMPNTZ: the same string rules apply.
    name = "TIMESTAMP" if kind == exp.DType.TIMESTAMPNTZ else kind.value.upper()
    if to is not None and to.is_type(*exp.DataType.NESTED_TYPES):
        if isinstance(value, exp.Null):
            return _cast(exp.Null(), target)  # a typed NULL: no element to cast
        if _is_empty_collection(value):
            return _cast(value, target)  # array() or map(): no element to cast either
        raise UnsupportedSqlError(f"CAST to {target}", "element-wise cast rules differ")
    folded = _literal_cast(value, name, target)
    if folded is not None:
        return folded
    if name in _INTEGRAL_BITS and value.meta.get(SPARK_TYPE) in INTEGRAL_TYPES:
        # An integer by its static type (spark_typing): only the wrap to the type's width
        # is left of the general form (an incremental refresh casts its sums so); should
        # the inference ever be wrong, an error rather than a different answer.
        wrapped = _cast(_wrapped(_cast(_c(value), "HUGEINT"), _INTEGRAL_BITS[name]), target)
        is_integer = _typeof_in(value, *_DUCKDB_INTEGERS)
        return _case((is_integer, wrapped), default=_runtime_refusal("a mis-inferred CAST"))
    if _never_a_string(value) and not _may_be_a_timestamp(value):
        # A number: the string and timestamp branches below could never be taken; without
        # them the value is copied once, not three to five times (an incremental refresh
        # casts large CASE expressions to integral types and DECIMALs).
        if name in _INTEGRAL_BITS:
            return _narrowed_number(value, name, target)
        if name in _DECIMAL_TYPES:
            return _decimal_from_number(value, target)
        if name in _FRACTIONAL_TYPES:
            return _try_cast(_c(value), target)
    is_timestamp = _typeof_in(value, "TIMESTAMP WITH TIME ZONE")
    text = _fn(
        "REGEXP_REPLACE",
        _as_varchar(value),
        _lit(r"^[\x00-\x20]+|[\x00-\x20]+$"),
        _lit(""),
        _lit("g"),
    )
    is_string = _typeof_in(value, "VARCHAR")
    if name in _INTEGRAL_BITS:
        # A string out of the type's range is NULL in Spark; a number wraps around.
        from_text = _case(
            (
                _regex_full(_as_varchar(value), _INTEGER_STRING),
                _try_cast(
                    _fn("TRUNC", _try_cast(_zero_before_point(text), "DECIMAL(38, 9)")), target
                ),
            )
        )
        return _case(
            (is_string, from_text),
            (is_timestamp, _narrowed_number(_epoch_seconds(value), name, target)),
            default=_narrowed_number(value, name, target),
        )
    if name in _FRACTIONAL_TYPES:
        # A TIMESTAMP is its seconds since the epoch, with their fraction (Spark divides
        # its microseconds as a DOUBLE; a DECIMAL is made from that DOUBLE).
        seconds = exp.Div(this=_epoch_micros(value), expression=_lit(1e6))
        if name in _DECIMAL_TYPES:
            return _case(
                (is_timestamp, _decimal_from_double(seconds, target)),
                default=_decimal_from_number(value, target),
            )
        return _case(
            (is_timestamp, _try_cast(seconds, target)), default=_try_cast(_c(value), target)
        )
    if name == "BOOLEAN":
        lowered = _fn("LOWER", text)
        from_text = _case(
            (exp.In(this=lowered, expressions=[_lit(s) for s in _TRUE_STRINGS]), exp.true()),
            (
                exp.In(this=lowered.copy(), expressions=[_lit(s) for s in _FALSE_STRINGS]),
                exp.false(),
            ),
        )
        return _case((is_string, from_text), default=_try_cast(_c(value), "BOOLEAN"))
    if name in ("DATE", "TIMESTAMP", "DATETIME"):
        strict = _STRICT_DATE if name == "DATE" else _STRICT_TIMESTAMP
        loose = _LOOSE_DATE if name == "DATE" else _LOOSE_TIMESTAMP
        zoned: list[tuple[exp.Expr, exp.Expr]] = []
        if name == "TIMESTAMP":
            zoned = [
                (
                    _regex_full(text.copy(), _ZONED_TIMESTAMP),
                    _cast(_try_cast(text.copy(), "TIMESTAMPTZ"), target),
                ),
                (_regex_full(text.copy(), _TIME_ONLY), _try_cast(_time_today(text), target)),
            ]
        from_text = _case(
            (_regex_full(text, strict), _try_cast(text.copy(), target)),
            (
                _regex_full(text.copy(), _STRICT_TIMESTAMP),
                _cast(_try_cast(text.copy(), "TIMESTAMP"), target),
            ),
            *zoned,
            (
                _regex_full(text.copy(), loose),
                _try_cast(_canonical_date_text(text.copy(), name), target),
            ),
            (
                _regex_full(text.copy(), _SPARK_DATE_PREFIX),
                _runtime_refusal(f"CAST of this string to {target}"),
            ),
        )
        if name == "DATE":
            return _case((is_string, from_text), default=_try_cast(_c(value), target))
        return _case(
            (is_string, from_text),
            (_is_number(value), _timestamp_of_epoch_seconds(value, target)),
            default=_try_cast(_c(value), target),
        )
    if name in ("BINARY", "VARBINARY", "BLOB"):
        # A string's UTF-8 bytes (DuckDB's CAST would read \x escapes); an integer's bytes.
        return functions.integral_to_binary(
            _try_cast(_c(value), "BIGINT"),
            _case(
                (is_string, _fn("ENCODE", _as_varchar(value))), default=_try_cast(_c(value), target)
            ),
            value_type=_fn("TYPEOF", _c(value)),
        )
    if name in _TEXT_TYPES:
        return _spark_text(value)
    return _try_cast(_c(value), target)


_TEXT_TYPES = ("VARCHAR", "TEXT", "CHAR", "NVARCHAR", "STRING")


def _is_number(value: exp.Expr) -> exp.Expr:
    """Whether ``value`` is a number, told at run time (its type)."""
    return exp.Or(
        this=_typeof_in(value, *_DUCKDB_INTEGERS, "DOUBLE", "FLOAT"),
        expression=exp.Like(this=_fn("TYPEOF", _c(value)), expression=_lit("DECIMAL%")),
    )


def _timestamp_of_epoch_seconds(value: exp.Expr, target: str) -> exp.Expr:
    """Spark's CAST of a number to TIMESTAMP: that many seconds since the epoch, their
    fraction truncated to microseconds (a DOUBLE's NaN or infinity is NULL; so is a value
    past about 290,000 years, where Spark's microseconds overflow). The instant is then
    given as the other branches give a timestamp: its wall-clock time in the session's
    time zone (DuckDB's TimeZone)."""
    # TRY_CASTs: DuckDB may fold these branches for a constant of another type.
    as_double = _try_cast(_c(value), "DOUBLE")
    in_range = exp.LT(this=_fn("ABS", as_double), expression=_lit(_MAX_EPOCH_SECONDS))
    exact = exp.Mul(this=_try_cast(_c(value), "DECIMAL(38, 12)"), expression=_lit(1_000_000))
    micros = _case(
        (
            exp.And(this=_typeof_in(value, "DOUBLE", "FLOAT"), expression=in_range.copy()),
            _fn("TRUNC", exp.Mul(this=as_double.copy(), expression=_lit(1_000_000))),
        ),
        (in_range, _fn("TRUNC", exact)),
    )
    utc_wall_clock = _fn("MAKE_TIMESTAMP", _try_cast(micros, "BIGINT"))
    instant = exp.AtTimeZone(this=utc_wall_clock, zone=_lit("UTC"))
    return _try_cast(instant, target)


# Seconds since the epoch whose microseconds fit a BIGINT (Spark's timestamp).
_MAX_EPOCH_SECONDS = 9_223_372_036_854


def _time_today(text: exp.Expr) -> exp.Expr:
    """A time of day alone (``_TIME_ONLY``) as the text of that time today in the session's
    time zone, ``yyyy-MM-dd HH:mm:ss[.f]``, for DuckDB's cast."""

    def field(group: int) -> exp.Expr:
        found = _fn("REGEXP_EXTRACT", text.copy(), _lit(_TIME_ONLY), _lit(group))
        return _fn(
            "LPAD", _fn("COALESCE", _fn("NULLIF", found, _lit("")), _lit("0")), _lit(2), _lit("0")
        )

    today = _as_varchar(_rewrite_current_date(exp.CurrentDate()))
    fraction = _fn("REGEXP_EXTRACT", text.copy(), _lit(_TIME_ONLY), _lit(4))
    return _fn(
        "CONCAT", today, _lit(" "), field(1), _lit(":"), field(2), _lit(":"), field(3), fraction
    )


def _canonical_date_text(text: exp.Expr, name: str) -> exp.Expr:
    """A string of one of Spark's shorter date or timestamp forms (``_LOOSE_DATE``,
    ``_LOOSE_TIMESTAMP``) written in full, ``yyyy-MM-dd[ HH:mm:ss[.f]]``, for DuckDB's cast
    (a missing month or day is 1, a missing time field 0)."""
    pattern = _LOOSE_DATE if name == "DATE" else _LOOSE_TIMESTAMP

    def field(group: int, default: str) -> exp.Expr:
        found = _fn("REGEXP_EXTRACT", text.copy(), _lit(pattern), _lit(group))
        return _fn(
            "LPAD",
            _fn("COALESCE", _fn("NULLIF", found, _lit("")), _lit(default)),
            _lit(2),
            _lit("0"),
        )

    parts: list[exp.Expr] = [
        _fn("REGEXP_EXTRACT", text.copy(), _lit(pattern), _lit(1)),
        _lit("-"),
        field(2, "1"),
        _lit("-"),
        field(3, "1"),
    ]
    if name != "DATE":
        fraction = _fn("REGEXP_EXTRACT", text.copy(), _lit(pattern), _lit(7))
        parts += [_lit(" "), field(4, "0"), _lit(":"), field(5, "0"), _lit(":"), field(6, "0")]
        parts.append(fraction)
    return _fn("CONCAT", *parts)


def _spark_text(value: exp.Expr) -> exp.Expr:
    """``value`` as Spark's text where DuckDB's differs: a DOUBLE or FLOAT outside plain
    notation's range by the JVM's ``toString`` (``1.0E-5``, ``Infinity``), a DECIMAL below
    one by ``BigDecimal.toString`` (``0.5000``, ``1E-10``), both computed in Python
    (number_text.py) for those values only; a TIMESTAMP without DuckDB's offset (``+00``)."""
    number = _try_cast(_c(value), "DOUBLE")
    magnitude = _fn("ABS", number)
    plain = exp.or_(
        exp.EQ(this=number.copy(), expression=_lit(0)),
        exp.and_(
            exp.GTE(this=magnitude, expression=_lit(0.001)),
            exp.LT(this=magnitude.copy(), expression=_lit(1e7)),
        ),
    )
    not_plain = exp.Not(this=exp.Paren(this=plain))
    duckdb_text = _try_cast(_c(value), "VARCHAR")
    return _case(
        (
            exp.and_(_typeof_in(value, "DOUBLE"), not_plain),
            _fn(number_text.DOUBLE_TEXT, _try_cast(_c(value), "DOUBLE")),
        ),
        (
            exp.and_(_typeof_in(value, "FLOAT"), not_plain.copy()),
            _fn(number_text.FLOAT_TEXT, _try_cast(_c(value), "FLOAT")),
        ),
        (
            exp.and_(
                _typeof_like(value, "DECIMAL%"), exp.LT(this=magnitude.copy(), expression=_lit(1))
            ),
            _fn(number_text.DECIMAL_TEXT, duckdb_text.copy()),
        ),
        (
            # the local time in the session's zone, without DuckDB's offset (+00, -07:00)
            _typeof_in(value, "TIMESTAMP WITH TIME ZONE"),
            _fn("REGEXP_REPLACE", duckdb_text.copy(), _lit(_ZONE_OFFSET), _lit("")),
        ),
        default=duckdb_text,
    )


# The offset DuckDB writes after a TIMESTAMP WITH TIME ZONE's local time.
_ZONE_OFFSET = r"[+-][0-9]{2}(:[0-9]{2}(:[0-9]{2})?)?$"

# The numeric types a TIMESTAMP casts to with its seconds' fraction.
_FRACTIONAL_TYPES = ("DOUBLE", "FLOAT", "REAL", "DECIMAL", "NUMERIC")
_DECIMAL_TYPES = ("DECIMAL", "NUMERIC")


def _decimal_from_number(value: exp.Expr, target: str) -> exp.Expr:
    """``value``, not a TIMESTAMP, cast to DECIMAL ``target`` as Spark casts it: a DOUBLE
    or FLOAT by its decimal text (:func:`_decimal_from_double`; a FLOAT widened to DOUBLE
    first, as Spark widens it), any other value by DuckDB's cast, which agrees (it rounds
    HALF_UP). The static type decides where spark_typing knows it; otherwise DuckDB's type
    of the value, which DuckDB folds when it plans the statement."""
    spark_type = value.meta.get(SPARK_TYPE)
    plain = _try_cast(_c(value), target)
    if spark_type is not None and spark_type not in FRACTIONAL_TYPES:
        return plain
    from_text = _decimal_from_double(_try_cast(_c(value), "DOUBLE"), target)
    if spark_type is not None:
        return from_text
    return _case((_typeof_in(value, "DOUBLE", "FLOAT"), from_text), default=plain)


def _decimal_from_double(double: exp.Expr, target: str) -> exp.Expr:
    """A DOUBLE as DECIMAL ``target`` the way Spark makes one (``Decimal(double)``, then
    rounded HALF_UP to the scale): from the double's decimal text, Java's
    ``Double.toString``, not from its exact binary value, so 1.005D is 1.01 at scale 2
    where DuckDB's cast gives 1.00. DuckDB's text of a DOUBLE has the shortest digits that
    read back as it (Java 17's has more for a few values: 1e23 is 9.999999999999999E22),
    and its cast of a text rounds HALF_UP and reads an exponent; NaN, an infinity and a
    value beyond the type are NULL, as in Spark with ANSI mode off. The text is read as a
    DECIMAL(38, s) first: DuckDB reads an exponent into a DECIMAL whose digits are all
    fractional (``'1e-05'`` as DECIMAL(3, 3)) as NULL."""
    scale = _decimal_scale(target)
    text = _try_cast(double, "VARCHAR")
    if scale is None or scale >= MAX_PRECISION:
        return _try_cast(text, target)
    return _try_cast(_try_cast(text, f"DECIMAL({MAX_PRECISION}, {scale})"), target)


def _decimal_scale(target: str) -> int | None:
    """The scale of the DECIMAL type ``target`` (DuckDB's spelling), where it says one."""
    built = exp.DataType.build(target, dialect="duckdb")
    parameters = built.expressions
    if built.this != exp.DType.DECIMAL or len(parameters) != 2:
        return None
    return int(parameters[1].name)


def _may_be_a_timestamp(value: exp.Expr) -> bool:
    """Whether ``value``, never a string, may still be a TIMESTAMP rather than a number: a
    CAST to one, or a sum or difference with an interval (``ts + INTERVAL 1 HOUR``)."""
    while isinstance(value, exp.Paren):
        value = value.this
    if isinstance(value, exp.Cast | exp.TryCast):
        return value.to.is_type(*exp.DataType.TEMPORAL_TYPES)
    if isinstance(value, exp.Add | exp.Sub):
        return any(
            isinstance(side, exp.Interval)
            or intervals.is_interval_literal(side)
            or _may_be_a_timestamp(side)
            for side in (value.this, value.expression)
        )
    return False


def _epoch_micros(value: exp.Expr) -> exp.Expr:
    """The microseconds since the epoch of ``value`` where it is a TIMESTAMP WITH TIME ZONE
    (read through its text, which binds whatever the value's type: the CASE that uses this
    takes it only for a timestamp)."""
    instant = _try_cast(_try_cast(_c(value), "VARCHAR"), "TIMESTAMPTZ")
    return _fn("EPOCH_US", instant)


def _epoch_seconds(value: exp.Expr) -> exp.Expr:
    """The whole seconds since the epoch of a TIMESTAMP ``value``, rounded down as Spark's
    CAST to an integral type does (Math.floorDiv): exact integer arithmetic."""
    return _floor_division(_epoch_micros(value), 1_000_000)


def _zero_before_point(text: exp.Expr) -> exp.Expr:
    """A number's text with a 0 before a point that starts it ('-.5' is '-0.5', '.' is
    '0.'), which DuckDB reads as a DECIMAL (it refuses a point without a digit before)."""
    return _fn("REGEXP_REPLACE", text, _lit(r"^([+-]?)\."), _lit(r"\10."))  # (\1, then 0)


def _narrowed_number(value: exp.Expr, name: str, target: str) -> exp.Expr:
    """A number cast to an integral type as Spark does with ANSI mode off (Java's
    narrowing): its integral part (towards zero), an integer or DECIMAL then wrapped to the
    type's width in two's complement (CAST(300 AS TINYINT) is 44), a DOUBLE or FLOAT
    first saturated to INT's (or BIGINT's) range, NaN as 0 (CAST(1e10D AS SMALLINT) is
    -1). Checked against PySpark 3.5 in the conformance queries."""
    bits = _INTEGRAL_BITS[name]
    # A DECIMAL's integral part is read from its text: exact whatever its scale and size
    # (through DECIMAL(38, 9), 2.999999999999999999 would round to 3 first). Other numbers
    # go through DECIMAL(38, 9), which holds 29 integral digits.
    digits = _fn("REGEXP_EXTRACT", _as_varchar(value), _lit("^-?[0-9]+"))
    decimal_digits = _case((_typeof_like(value, "DECIMAL%"), _try_cast(digits, "HUGEINT")))
    whole = _fn(
        "COALESCE",
        decimal_digits,
        _try_cast(_fn("TRUNC", _try_cast(_c(value), "DECIMAL(38, 9)")), "HUGEINT"),
    )
    double = _try_cast(_c(value), "DOUBLE")
    saturated = _saturated(double, 64 if bits == 64 else 32)
    is_floating = _typeof_in(value, "DOUBLE", "FLOAT")
    wrapped = _case((is_floating, saturated), default=whole)
    return _cast(_wrapped(wrapped, bits), target)


def _saturated(double: exp.Expr, bits: int) -> exp.Expr:
    """A DOUBLE's integral part clamped to a ``bits``-wide signed range, NaN as 0 (Java's
    (int) and (long) of a double)."""
    low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    return _case(
        (_fn("ISNAN", double), _cast(_lit(0), "HUGEINT")),
        (exp.GTE(this=double.copy(), expression=_lit(high)), _cast(_lit(high), "HUGEINT")),
        (exp.LTE(this=double.copy(), expression=_lit(low)), _cast(_lit(low), "HUGEINT")),
        default=_try_cast(_fn("TRUNC", double.copy()), "HUGEINT"),
    )


def _wrapped(whole: exp.Expr, bits: int) -> exp.Expr:
    """A HUGEINT narrowed to ``bits`` bits in two's complement (Java's (byte), (short),
    (int), (long) of a wider integer)."""
    modulus, half = _lit(2**bits), _lit(2 ** (bits - 1))
    shifted = exp.Mod(this=exp.Paren(this=exp.Add(this=whole, expression=half)), expression=modulus)
    positive = exp.Mod(
        this=exp.Paren(this=exp.Add(this=shifted, expression=modulus.copy())),
        expression=modulus.copy(),
    )
    return exp.Sub(this=exp.Paren(this=positive), expression=half.copy())


_NUMERIC_RESULTS = (
    exp.Add,
    exp.Sub,
    exp.Mul,
    exp.Div,
    exp.Mod,
    exp.IntDiv,
    exp.Neg,
    exp.Count,
    exp.Sum,
    exp.Avg,
)


def _never_a_string(value: exp.Expr) -> bool:
    """Whether ``value`` is never a string, whatever its columns' types: arithmetic and
    numeric aggregates (Spark and DuckDB give a number, or refuse), a number, NULL, a cast
    to another type, and a CASE or COALESCE of only those."""
    if isinstance(value, exp.Paren):
        return _never_a_string(value.this)
    if isinstance(value, (*_NUMERIC_RESULTS, exp.Null)):
        return True
    if isinstance(value, exp.Literal):
        return not value.is_string
    if isinstance(value, exp.Cast | exp.TryCast):
        to = value.args.get("to")
        return isinstance(to, exp.DataType) and not to.is_type(*exp.DataType.TEXT_TYPES)
    if isinstance(value, exp.Coalesce):
        return all(_never_a_string(v) for v in [value.this, *value.expressions])
    if isinstance(value, exp.Case):
        branches = [when.args["true"] for when in value.args.get("ifs") or []]
        default = value.args.get("default")
        return all(_never_a_string(v) for v in [*branches, *([default] if default else [])])
    return False


# The magnitude bound of each integral type: values lie in [-bound, bound).
_INTEGRAL_RANGES = {name: 2 ** (bits - 1) for name, bits in _INTEGRAL_BITS.items()}


def _literal_cast(value: exp.Expr, name: str, target: str) -> exp.Expr | None:
    """The cast of a literal whose Spark and DuckDB results agree, as a plain cast (the
    general form is a large CASE, costly to build for every literal of a VALUES list);
    None when the general form is needed."""
    if isinstance(value, exp.Null):
        return _cast(exp.Null(), target)
    if not isinstance(value, exp.Literal):
        return None
    if not value.is_string and value.is_int and name in _INTEGRAL_RANGES:
        bound = _INTEGRAL_RANGES[name]
        return _cast(value.copy(), target) if -bound <= int(value.name) < bound else None
    strict = {"DATE": _STRICT_DATE, "TIMESTAMP": _STRICT_TIMESTAMP}.get(name)
    if value.is_string and strict is not None and re.fullmatch(strict, value.name):
        return _try_cast(value.copy(), target)  # an impossible date is NULL, as in Spark
    return None


# ---- date and time ----

# The special values DuckDB's strptime reads in any text (any case, spaces around).
_STRPTIME_WORDS = r"[\x00-\x20]*(-?infinity|epoch)[\x00-\x20]*"


def _java_pattern(pattern: exp.Expr | None, function: str) -> str:
    java = _string_value(pattern)
    if java is None:
        raise UnsupportedSqlError(f"{function} with a non-literal pattern")
    return java


def _strftime(pattern: exp.Expr | None, function: str) -> exp.Expr:
    """The strptime format of a parsing function's Java pattern."""
    return _lit(datetime_patterns.strptime_format(_java_pattern(pattern, function), function))


def _date_format(value: exp.Expr, pattern: exp.Expr | None, function: str) -> exp.Expr:
    """``value`` (an instant) printed with a Java pattern, as date_format prints it."""
    java = _java_pattern(pattern, function)
    return datetime_patterns.formatted(value, java, function)


def _rewrite_anonymous(node: exp.Expr) -> exp.Expr:
    name = str(node.this).upper()
    args = node.expressions
    if name in _REFUSED_FUNCTIONS:
        raise UnsupportedSqlError(f"{name.lower()}()", _REFUSED_FUNCTIONS[name])
    if name == "DATE_FORMAT":
        return _date_format(_spark_cast(args[0], "TIMESTAMP"), args[1], "date_format")
    if name in ("TO_DATE", "TO_TIMESTAMP"):
        target = "DATE" if name == "TO_DATE" else "TIMESTAMP"
        if len(args) == 1:
            return _spark_cast(args[0], target)
        text = _as_varchar(args[0])
        parsed: exp.Expr = _case(
            # DuckDB's strptime reads these words as dates whatever the pattern (1900-01-01
            # comes back); Spark's pattern reads no date in them.
            (_regex_full(_fn("LOWER", text), _STRPTIME_WORDS), exp.Null()),
            default=_fn("TRY_STRPTIME", text.copy(), _strftime(args[1], name.lower())),
        )
        if "y" not in re.sub(r"'[^']*'", "", _string_value(args[1]) or ""):
            # A pattern without a year: Spark's default year is 1970, strptime's 1900.
            parsed = exp.Add(this=parsed, expression=_fn("TO_YEARS", _lit(70)))
        return _cast(parsed, target)
    if name == "UNIX_TIMESTAMP":
        return _unix_timestamp(args, name.lower())
    if name == "TRUNC":
        unit = _unit(args[1], _TRUNC_UNITS, "trunc")
        return _cast(_fn("DATE_TRUNC", unit, _spark_cast(args[0], "DATE")), "DATE")
    if name == "DATE_TRUNC":
        unit = _unit(args[0], _DATE_TRUNC_UNITS, "date_trunc")
        return _cast(_fn("DATE_TRUNC", unit, _spark_cast(args[1], "TIMESTAMP")), "TIMESTAMP")
    if name == "BROUND":
        value = _null_as_double(args[0])
        rounded: exp.Expr = _fn("ROUND_EVEN", value, _c(args[1]) if len(args) > 1 else _lit(0))
        spark_type = node.meta.get(SPARK_TYPE)
        if isinstance(spark_type, DecimalType):
            rounded = _null_kept(value, rounded)
        return _as_decimal_type(rounded, spark_type)
    if name in function_gaps.CAST_SHORTHANDS and len(args) == 1:
        to = exp.DataType.build(function_gaps.CAST_SHORTHANDS[name], dialect="spark")
        return _spark_cast(args[0], to.sql(dialect="duckdb"), to)
    if name in ("TIMESTAMP_SECONDS", "TIMESTAMP_MILLIS", "TIMESTAMP_MICROS") and len(args) == 1:
        return function_gaps.epoch_timestamp(name, args[0])
    if name == "POSITIVE" and len(args) == 1:
        return _positive(args[0])
    if name == "FORALL" and len(args) == 2:
        return _tested_elements(args[0], args[1], exists=False)
    if name == "MAP_VALUES" and len(args) == 1:
        return _fn("MAP_VALUES", _c(args[0]))
    if name == "CONV" and len(args) == 3:
        number = _spark_cast(args[0], "VARCHAR")  # Spark reads the number's text
        bases = [_spark_cast(base, "INTEGER") for base in args[1:]]
        return _fn(conv.FUNCTION_NAME, number, *bases)
    if name == "BIN" and len(args) == 1:
        return function_gaps.bin_string(_spark_cast(args[0], "BIGINT"))
    if name == "BTRIM" and any(function_gaps.is_binary(arg) for arg in args):
        raise UnsupportedSqlError("btrim() of a BINARY", "Spark trims bytes, not characters")
    if name == "BTRIM" and len(args) in (1, 2):
        return function_gaps.btrim(args[0], args[1] if len(args) == 2 else None)
    if name == "OCTET_LENGTH":
        return _cast(_fn("STRLEN", _as_varchar(args[0])), "INTEGER")
    if name == "CARDINALITY":
        return _rewrite_size(exp.ArraySize(this=_c(args[0])))
    if name in ("SOME", "ANY"):
        return exp.LogicalOr(this=_c(args[0]))
    if name == "EVERY":
        return exp.LogicalAnd(this=_c(args[0]))
    if name == "WEEKDAY":  # Monday = 0
        return exp.Sub(this=_fn("ISODOW", _spark_cast(args[0], "DATE")), expression=_lit(1))
    if name == "PMOD" and len(args) == 2:
        # Spark: the remainder made non-negative for a positive divisor, NULL for 0.
        divisor = _fn("NULLIF", _c(args[1]), _lit(0))
        remainder = exp.Mod(this=_c(args[0]), expression=divisor)
        modulus = _case(
            (
                exp.LT(this=remainder, expression=_lit(0)),
                exp.Mod(
                    this=exp.Paren(this=exp.Add(this=remainder.copy(), expression=divisor.copy())),
                    expression=divisor.copy(),
                ),
            ),
            default=remainder.copy(),
        )
        return _as_decimal_type(modulus, node.meta.get(SPARK_TYPE))
    if name in ("DATE_PART", "DATEPART") and len(args) == 2 and args[0].is_string:
        # date_part('FIELD', x) is extract(FIELD FROM x), typed as extract is.
        extract = exp.Extract(this=exp.var(args[0].name.upper()), expression=_c(args[1]))
        extract.meta[ARGUMENT_TYPES] = node.meta.get(ARGUMENT_TYPES)
        return _RULES[exp.Extract](extract)
    if name == "ISNULL" and len(args) == 1:
        return exp.Is(this=_c(args[0]), expression=exp.Null())
    if name == "ISNOTNULL":
        return exp.Not(this=exp.Is(this=_c(args[0]), expression=exp.Null()))
    if name == "RAISE_ERROR" and len(args) == 1:
        return _fn("ERROR", _as_varchar(args[0]))
    if name == "ASSERT_TRUE" and len(args) in (1, 2):
        # Spark: NULL when the condition is TRUE; an error for FALSE and for NULL.
        default_message = _lit(f"'{args[0].sql('spark')}' is not true!")
        message = _as_varchar(args[1]) if len(args) == 2 else default_message
        return _case((_c(args[0]), exp.Null()), default=_fn("ERROR", message))
    if name == "LOG1P" and len(args) == 1:
        return math_functions.log1p(args[0])
    if name == "EXPM1" and len(args) == 1:
        return math_functions.expm1(args[0])
    if name == "ZIP_WITH" and len(args) == 3 and isinstance(args[2], exp.Lambda):
        return _zip_with(args[0], args[1], args[2])
    if name == "STD" and len(args) == 1:  # Spark's other name of stddev (stddev_samp)
        return exp.Stddev(this=_c(args[0]))
    if name == "E" and not args:
        return _fn("EXP", _cast(_lit(1), "DOUBLE"))
    if name == "MAKE_DATE" and len(args) == 3:
        return _make_date(*[_spark_cast(a, "INT") for a in args])
    if name == "CRC32" and len(args) == 1:
        return _fn(checksums.CRC32_FUNCTION, _as_bytes(args[0], _argument_type(node)))
    if name == "FIND_IN_SET" and len(args) == 2:
        return _find_in_set(args[0], args[1])
    if name == "USER" and not args:  # Spark's other name of current_user()
        return _rewrite_current_user(node)
    if name in _SAME_IN_DUCKDB:
        return node
    raise UnsupportedSqlError(
        f"the function {name.lower()}()", "it is not in sparkshim's translated set"
    )


def _rewrite_repeat(node: exp.Expr) -> exp.Expr:
    """repeat(NULL, n) is a STRING in Spark; DuckDB's repeat takes the NULL for a BLOB."""
    if _is_null_literal(node.this):
        node.set("this", _cast(exp.Null(), "VARCHAR"))
    return node


def _rewrite_split_part(node: exp.Expr) -> exp.Expr:
    """split_part by an empty delimiter: Spark splits nothing (the whole string is part 1,
    and part -1; any other part is empty), where DuckDB splits into characters."""
    delimiter = node.args.get("delimiter")
    if delimiter is None or (delimiter.is_string and delimiter.name != ""):
        return node
    text, index = node.this, node.args.get("part_index")
    if text is None or index is None:
        return node
    whole = _case(
        (
            exp.or_(
                exp.Is(this=_c(text), expression=exp.Null()),
                exp.Is(this=_c(index), expression=exp.Null()),
            ),
            _cast(exp.Null(), "VARCHAR"),
        ),
        (exp.In(this=_c(index), expressions=[_lit(1), _lit(-1)]), _cast(_c(text), "VARCHAR")),
        default=_lit(""),
    )
    if delimiter.is_string:
        return whole
    return _case((exp.EQ(this=_c(delimiter), expression=_lit("")), whole), default=node.copy())


# The years of DuckDB's DATE (Spark's reach about as far).
_DATE_YEARS = (-5877640, 5881579)


def _make_date(year: exp.Expr, month: exp.Expr, day: exp.Expr) -> exp.Expr:
    """Spark's make_date (ANSI off): NULL for a day that does not exist, where DuckDB's
    fails (also when it folds constant arguments ahead of a CASE that would skip them).
    So the date is counted from the first of the year, which always exists: months, then
    days, added; the day existed when it is still in the month asked for."""
    counted = _cast(
        exp.Add(
            this=exp.Add(
                this=_fn("MAKE_DATE", year.copy(), _lit(1), _lit(1)),
                expression=_fn("TO_MONTHS", exp.Sub(this=month.copy(), expression=_lit(1))),
            ),
            expression=_fn("TO_DAYS", exp.Sub(this=day.copy(), expression=_lit(1))),
        ),
        "DATE",
    )
    in_month = exp.EQ(this=_fn("MONTH", counted.copy()), expression=month.copy())
    valid_fields = exp.and_(
        exp.Between(this=month.copy(), low=_lit(1), high=_lit(12)),
        exp.Between(this=day.copy(), low=_lit(1), high=_lit(31)),
    )
    beyond = exp.Not(
        this=exp.Between(this=year.copy(), low=_lit(_DATE_YEARS[0]), high=_lit(_DATE_YEARS[1]))
    )
    return _case(
        (beyond, _runtime_refusal("make_date() of a year beyond the embedded engine's dates")),
        (valid_fields, _case((in_month, counted))),
    )


def _find_in_set(value: exp.Expr, listed: exp.Expr) -> exp.Expr:
    """Spark's find_in_set(str, list): the 1-based position of ``str`` among the
    comma-separated items of ``list``, 0 where it is absent or holds a comma, NULL where
    either is NULL."""
    text, items = _spark_cast(_c(value), "STRING"), _spark_cast(_c(listed), "STRING")
    position = _fn("LIST_POSITION", _fn("STR_SPLIT", items, _lit(",")), text)
    return _case(
        (
            exp.or_(
                exp.Is(this=text.copy(), expression=exp.Null()),
                exp.Is(this=items.copy(), expression=exp.Null()),
            ),
            exp.Null(),
        ),
        (_fn("CONTAINS", text.copy(), _lit(",")), _lit(0)),
        default=_fn("COALESCE", position, _lit(0)),
    )


def _unix_timestamp(args: list[exp.Expr], function: str) -> exp.Expr:
    """Spark's unix_timestamp / to_unix_timestamp: the seconds since the epoch of an
    instant, of a DATE's midnight or of a string's local time in the session's zone (a
    string read by the pattern), of now without an argument."""
    if not args:
        return _cast(_fn("FLOOR", _fn("EPOCH", _fn("GET_CURRENT_TIMESTAMP"))), "BIGINT")
    pattern = args[1] if len(args) > 1 else _lit("yyyy-MM-dd HH:mm:ss")
    local_time = _fn("TRY_STRPTIME", _as_varchar(args[0]), _strftime(pattern, function))
    instant = _case(
        (_typeof_in(args[0], "VARCHAR"), _try_cast(local_time, "TIMESTAMPTZ")),
        default=_try_cast(_c(args[0]), "TIMESTAMPTZ"),
    )
    # Spark divides the microseconds by a million: towards zero, 1969-12-31 23:59:59.5 is 0.
    return _cast(_fn("TRUNC", _fn("EPOCH", instant)), "BIGINT")


def _rewrite_to_unix_timestamp(node: exp.Expr) -> exp.Expr:
    arguments = [a for a in (node.this, node.args.get("format")) if a is not None]
    return _unix_timestamp(arguments, "to_unix_timestamp")


_TRUNC_UNITS = {
    "YEAR": "year",
    "YYYY": "year",
    "YY": "year",
    "QUARTER": "quarter",
    "MONTH": "month",
    "MM": "month",
    "MON": "month",
    "WEEK": "week",
}
_DATE_TRUNC_UNITS = {
    **_TRUNC_UNITS,
    "DAY": "day",
    "DD": "day",
    "HOUR": "hour",
    "MINUTE": "minute",
    "SECOND": "second",
    "MILLISECOND": "millisecond",
    "MICROSECOND": "microsecond",
}


def _positive(value: exp.Expr) -> exp.Expr:
    # Spark's unary plus: a number unchanged; a string cast to DOUBLE, a bare NULL DOUBLE.
    if isinstance(value, exp.Null) or _string_value(value) is not None:
        return _spark_cast(value, "DOUBLE")
    not_a_string = _case(
        (_typeof_in(value, "VARCHAR"), _runtime_refusal("positive() of a STRING column")),
        default=_c(value),
    )
    return not_a_string


def _unit(node: exp.Expr, units: dict[str, str], function: str) -> exp.Expr:
    text = _string_value(node)
    if text is None:
        raise UnsupportedSqlError(f"{function} with a non-literal unit")
    if text.upper() not in units:
        return exp.Null()  # Spark returns NULL for an unknown unit
    return _lit(units[text.upper()])


_REFUSED_FUNCTIONS = {
    "HASH": "Spark's Murmur3 hash is not reproduced by the embedded engine",
    "XXHASH64": "Spark's xxHash64 seed differs",
    "PERCENTILE_APPROX": "use percentile() for an exact answer",
    "APPROX_PERCENTILE": "use percentile() for an exact answer",
    "RANDN": "different random generators",
    "SHUFFLE": "different random generators",
    "INLINE": "not translated",
    "INLINE_OUTER": "not translated",
    "STACK": "not translated",
    "FROM_JSON": "JSON parsing rules differ",
    "TO_JSON": ("its JSON text is not Spark's: 1.0E10, 2.50, a timestamp's form, NULL fields"),
    "FORMAT_NUMBER": "Java number formatting",
    "FORMAT_STRING": "Java format strings",
    "PRINTF": "Java format strings",
    "MONOTONICALLY_INCREASING_ID": "depends on Spark partitioning",
    "SPARK_PARTITION_ID": "depends on Spark partitioning",
    "INPUT_FILE_NAME": "depends on Spark's scan",
    "HISTOGRAM_NUMERIC": "Spark's streaming histogram bins cannot be reproduced exactly",
}
# Functions sqlglot leaves anonymous whose DuckDB namesake has Spark's semantics.
_SAME_IN_DUCKDB = frozenset(
    {
        "ASCII",
        "MD5",
        "REPEAT",
        "REVERSE",
        "TRANSLATE",
        "ACOS",
        "ASIN",
        "ATAN",
        "ATAN2",
        "COS",
        "SIN",
        "TAN",
        "COT",
        "DEGREES",
        "RADIANS",
        "PI",
        "CBRT",
        "BIT_LENGTH",
    }
)


# ---- functions built in functions.py ----


def _rewrite_from_unixtime(node: exp.Expr) -> exp.Expr:
    """from_unixtime takes a BIGINT: Spark casts a fractional number of seconds to it,
    towards zero (-1.5 is -1, 1969-12-31 23:59:59), where DuckDB's to_timestamp rounds the
    instant down."""
    node.set("this", _spark_cast(node.this, "BIGINT"))
    if node.meta.get(JAVA_PATTERN_KEY):
        # The pattern as written, printed as date_format prints it.
        java = node.args.get("format") or _lit("yyyy-MM-dd HH:mm:ss")
        return _date_format(_fn("TO_TIMESTAMP", node.this), java, "from_unixtime")
    return node


def _rewrite_shift(node: exp.Expr) -> exp.Expr:
    """shiftleft/shiftright as Java shifts: an INT (a TINYINT or SMALLINT widened to one)
    or a BIGINT, by the count masked to the type's width (``n & 31``: shiftright(x, 33)
    is x >> 1), a left shift wrapping around (shiftleft(1, 31) is INT's minimum); DuckDB
    gives 0 for a count past the width, or fails. Left as it is where the typing does not
    know the value is an integer."""
    spark_type = node.meta.get(SPARK_TYPE)
    if spark_type not in ("int", "bigint"):
        return node
    bits = 64 if spark_type == "bigint" else 32
    count = exp.Paren(
        this=exp.BitwiseAnd(this=_cast(_c(node.expression), "INTEGER"), expression=_lit(bits - 1))
    )
    target = _DUCKDB_TYPE_NAMES[str(spark_type)]
    if isinstance(node, exp.BitwiseRightShift):
        moved = exp.BitwiseRightShift(this=_cast(_c(node.this), target), expression=count)
        return _cast(exp.Paren(this=moved), target)
    # A product with a power of two: DuckDB refuses to left-shift a negative number.
    power = exp.BitwiseLeftShift(this=_cast(_lit(1), "HUGEINT"), expression=count)
    shifted = exp.Mul(this=_cast(_c(node.this), "HUGEINT"), expression=exp.Paren(this=power))
    return _cast(_wrapped(exp.Paren(this=shifted), bits), target)


def _rewrite_utc_conversion(node: exp.Expr) -> exp.Expr:
    """``from_utc_timestamp(ts, tz)`` and ``to_utc_timestamp(ts, tz)``, which sqlglot reads
    as AT TIME ZONE nodes (no Spark syntax is read so otherwise). Spark moves the instant
    by the zone's offset: from_utc takes ``ts``'s wall-clock time in ``tz`` and reads it
    as UTC, to_utc takes its wall-clock time in UTC and reads it in ``tz``. DuckDB's AT
    TIME ZONE turns an instant into a wall-clock time and a wall-clock time into an
    instant, so the value is made an instant first (TIMESTAMPTZ, Spark's TIMESTAMP)."""
    instant = exp.Cast(this=node.this, to=exp.DataType.build("TIMESTAMPTZ", dialect="duckdb"))
    zone = node.args["zone"]
    first, then = (zone, _lit("UTC")) if isinstance(node, exp.AtTimeZone) else (_lit("UTC"), zone)
    wall_clock = exp.AtTimeZone(this=instant, zone=first)
    return exp.AtTimeZone(this=wall_clock, zone=then)


def _rewrite_months_between(node: exp.Expr) -> exp.Expr:
    round_off = node.args.get("roundoff")
    if round_off is not None and not isinstance(round_off, exp.Boolean):
        raise functions.refuse_non_literal("months_between", "roundOff")
    return functions.months_between(
        _spark_cast(node.this, "TIMESTAMP"),
        _spark_cast(node.expression, "TIMESTAMP"),
        round_off=round_off is None or bool(round_off.this),
    )


def _rewrite_next_day(node: exp.Expr) -> exp.Expr:
    weekday = _string_value(node.expression)
    if weekday is None:
        raise functions.refuse_non_literal("next_day", "day of the week")
    return functions.next_day(_spark_cast(node.this, "DATE"), weekday)


def _rewrite_elt(node: exp.Expr) -> exp.Expr:
    texts = [_spark_cast(text, "VARCHAR") for text in node.expressions]
    return functions.elt(_spark_cast(node.this, "INTEGER"), texts)


def _rewrite_nanvl(node: exp.Expr) -> exp.Expr:
    return functions.nanvl(_spark_cast(node.this, "DOUBLE"), _spark_cast(node.expression, "DOUBLE"))


def _rewrite_date_from_unix_date(node: exp.Expr) -> exp.Expr:
    return functions.date_from_unix_date(_c(node.this))


def _rewrite_to_binary(node: exp.Expr) -> exp.Expr:
    format_node = node.args.get("format")
    if _is_null_literal(format_node):
        return _cast(exp.Null(), "BLOB")  # Spark: to_binary(x, NULL) is NULL
    format_name = "hex" if format_node is None else functions.folded_string(format_node)
    if format_name is None:
        raise functions.refuse_non_literal("to_binary", "format")
    return functions.to_binary(_as_varchar(node.this), format_name)


def _is_null_literal(node: exp.Expr | None) -> bool:
    """NULL, or a cast of NULL (as translated)."""
    while isinstance(node, (exp.Cast, exp.TryCast)):
        node = node.this
    return isinstance(node, exp.Null)


def _rewrite_struct(node: exp.Expr) -> exp.Expr:
    stars = [e for e in node.expressions if e.find(exp.Star)]
    if not stars:
        return node
    only = node.expressions[0]
    if len(node.expressions) == 1 and isinstance(only, exp.Column) and only.table:
        # struct(t.*): DuckDB's reference to the relation t is its row as a struct.
        return exp.column(only.table, quoted=True)
    raise UnsupportedSqlError(
        "struct() of * with other fields, or of an unqualified *", "use struct(t.*) or name them"
    )


def _rewrite_indexed_lambda(node: exp.Expr) -> exp.Expr:
    # transform/filter(a, (x, i) -> ...): Spark's index i counts from 0, DuckDB's from 1.
    function = node.expression
    if isinstance(function, exp.Lambda) and len(function.expressions) == 2:
        functions.shift_lambda_parameter(function, function.expressions[1].name, -1)
    return node


def _zip_with(left: exp.Expr, right: exp.Expr, function: exp.Lambda) -> exp.Expr:
    if len(function.expressions) != 2:
        raise UnsupportedSqlError("zip_with with a lambda of other than two parameters")
    return _case(_null_if_any_null(left, right), default=functions.zip_with(left, right, function))


def _rewrite_skewness(node: exp.Expr) -> exp.Expr:
    if _window_parent(node) is not None:
        raise UnsupportedSqlError("skewness over a window")
    return _nan_if_not_finite(functions.skewness, node.this)


def _rewrite_corr(node: exp.Expr) -> exp.Expr:
    """Spark's ``corr`` is NULL where fewer than two rows hold both values, or where either
    value does not vary (its quotient divides by zero, which Spark makes NULL); DuckDB's
    is NaN there. The aggregate becomes ``CASE WHEN regr_count(y, x) < 2 OR regr_sxx(y, x)
    * regr_syy(y, x) = 0 THEN NULL ELSE corr(y, x) END``."""
    call = _sibling_aggregates(node)
    too_few = exp.LT(this=call("REGR_COUNT"), expression=_lit(2))
    constant = exp.EQ(
        this=exp.Mul(this=call("REGR_SXX"), expression=call("REGR_SYY")), expression=_lit(0)
    )
    return _in_place_of_aggregate(
        node, _case((exp.or_(too_few, constant), exp.Null()), default=call("CORR"))
    )


def _rewrite_regr_slope(node: exp.Expr) -> exp.Expr:
    """Spark's ``regr_slope`` is NULL where x does not vary over the rows holding both
    values (its quotient would divide by zero); DuckDB's is NaN there."""
    call = _sibling_aggregates(node)
    flat = exp.EQ(this=call("REGR_SXX"), expression=_lit(0))
    return _in_place_of_aggregate(node, _case((flat, exp.Null()), default=call("REGR_SLOPE")))


def _rewrite_regr_intercept(node: exp.Expr) -> exp.Expr:
    """Spark's ``regr_intercept``: NULL where x does not vary, else ``avg(y) - sxy / sxx *
    avg(x)`` over the rows holding both values, so NaN where a value is NaN or infinite
    (DuckDB's is NULL there)."""
    call = _sibling_aggregates(node)
    flat = exp.EQ(this=call("REGR_SXX"), expression=_lit(0))
    slope = exp.Div(this=call("REGR_SXY"), expression=call("REGR_SXX"))
    intercept = exp.Sub(
        this=call("REGR_AVGY"), expression=exp.Mul(this=slope, expression=call("REGR_AVGX"))
    )
    return _in_place_of_aggregate(node, _case((flat, exp.Null()), default=intercept))


def _aggregate_with_wrappers(node: exp.Expr) -> exp.Expr:
    """The aggregate call ``node`` with the FILTER and the window around it, if any."""
    outer = node
    while isinstance(outer.parent, (exp.Filter, exp.Window)) and outer.parent.this is outer:
        outer = outer.parent
    return outer


def _sibling_aggregates(node: exp.Expr) -> Callable[[str], exp.Expr]:
    """A builder of other aggregates of ``node``'s two arguments (``name(y, x)``), each
    under the FILTER and the window ``node`` has (those are already translated: rules run
    on a node's later siblings and children first)."""
    outer = _aggregate_with_wrappers(node)

    def call(name: str) -> exp.Expr:
        aggregate = _fn(name, _c(node.this), _c(node.expression))
        if outer is node:
            return aggregate
        wrapped = outer.copy()
        innermost = wrapped
        while innermost.this is not None and isinstance(innermost, (exp.Filter, exp.Window)):
            innermost = innermost.this
        innermost.replace(aggregate)
        return wrapped

    return call


def _in_place_of_aggregate(node: exp.Expr, replacement: exp.Expr) -> exp.Expr:
    """``replacement`` (built of wrapped aggregates) where ``node`` and its wrappers were."""
    outer = _aggregate_with_wrappers(node)
    if outer is node:
        return replacement
    outer.replace(replacement)
    return node


def _rewrite_value_of_extreme(node: exp.Expr) -> exp.Expr:
    """``max_by(x, y)``/``min_by(x, y)``: the x of a row whose y is largest (smallest),
    NULL when that x is (DuckDB's ``arg_max`` skips rows whose x is NULL; its
    ``arg_max_null`` does not). Among rows tied on y Spark takes whichever it meets first;
    DuckDB is as order-dependent (and threads change the order), so the ties go to the
    largest (smallest) x here, the rows fed in that order: a refresh that recomputes some
    groups then gives what recomputing all of them gives. Over a window the rows come in
    the window's order, as in Spark."""
    largest = isinstance(node, exp.ArgMax)
    name = "ARG_MAX_NULL" if largest else "ARG_MIN_NULL"
    value, ordering = node.this, _max_by_ordering(node)
    if _window_parent(node) is not None:
        return _fn(name, _c(value), _c(ordering))
    tie_break = exp.Ordered(this=_c(value), desc=largest, nulls_first=False)
    return _fn(name, _c(value), exp.Order(this=_c(ordering), expressions=[tie_break]))


def _max_by_ordering(node: exp.Expr) -> exp.Expr:
    """max_by's (min_by's) ordering: a STRUCT or ARRAY by its key in Spark's order
    (nested_order.py); of a type not known here, refused if it turns out nested."""
    ordering = node.expression
    use = f"{_written_name(node) or 'max_by'}()"
    keys = _spark_order_keys([ordering], node.meta.get(ARGUMENT_TYPES), use)
    if keys is None:
        return _refused_if_nested(ordering, _UNTYPED_NESTED_ORDER, _c(ordering))
    return keys[0]


def _rewrite_extreme(node: exp.Expr) -> exp.Expr:
    """max/min of a STRUCT or ARRAY in Spark's order (nested_order.py): the value whose
    key is largest or smallest (``arg_max(x, key)``); other values as they are."""
    key = nested_order.order_key(node.this, node.meta.get(SPARK_TYPE))
    if key is None:
        return node
    name = "ARG_MAX" if isinstance(node, exp.Max) else "ARG_MIN"
    return _fn(name, _c(node.this), key)


def _rewrite_ordered(node: exp.Expr) -> exp.Expr:
    """An ORDER BY item (of a query, a window or an aggregate) of a STRUCT or ARRAY sorts
    by its key in Spark's order (nested_order.py)."""
    key = nested_order.order_key(node.this, node.meta.get(SPARK_TYPE))
    if key is not None:
        node.set("this", key)
    return node


def _rewrite_sequence(node: exp.Expr) -> exp.Expr:
    # Spark's sequence() without a step counts down from a start above its stop (DuckDB's
    # GENERATE_SERIES counts up only: []); of INTs (TINYINTs, SMALLINTs) it is an array
    # of them (DuckDB's: BIGINTs).
    start, end = node.args.get("start"), node.args.get("end")
    if node.args.get("step") is None and start is not None and end is not None:
        upward = exp.LTE(this=_c(start), expression=_c(end))
        node.set("step", _case((upward, _lit(1)), default=_lit(-1)))
    spark_type = node.meta.get(SPARK_TYPE)
    if spark_type not in ("array<tinyint>", "array<smallint>", "array<int>"):
        return node
    element = _DUCKDB_TYPE_NAMES[str(spark_type)[len("array<") : -1]]
    return _cast(_c(node), f"{element}[]")


def _rewrite_bit_count(node: exp.Expr) -> exp.Expr:
    # Spark counts the bits of the value widened to a BIGINT (-1 as an INT has 64).
    return _fn("BIT_COUNT", _cast(_c(node.this), "BIGINT"))


def _rewrite_kurtosis(node: exp.Expr) -> exp.Expr:
    # Spark: the population excess kurtosis n m4 / m2^2 - 3, DuckDB's kurtosis_pop.
    if _window_parent(node) is not None:
        raise UnsupportedSqlError("kurtosis over a window")
    return _nan_if_not_finite(lambda value: _fn("KURTOSIS_POP", value), node.this)


def _rewrite_population_spread(node: exp.Expr) -> exp.Expr:
    """Spark's stddev_pop / var_pop of values one of which is NaN or infinite: NaN (DuckDB
    gives 0 for one such value alone). Over a window or with a FILTER, as DuckDB has it."""
    if _window_parent(node) is not None or isinstance(node.parent, exp.Filter):
        return node
    name = "STDDEV_POP" if isinstance(node, exp.StddevPop) else "VAR_POP"
    return _nan_if_not_finite(lambda value: _fn(name, value), node.this)


def _nan_if_not_finite(moment: Callable[[exp.Expr], exp.Expr], value: exp.Expr) -> exp.Expr:
    """Spark's skewness, kurtosis, stddev_pop or var_pop (``moment``, DuckDB's, of DOUBLEs):
    NaN where a value is NaN or infinite (its central moments are NaN), where DuckDB's is
    NULL, 0 or fails; so DuckDB's is given the finite values only."""
    number = _spark_cast(value, "DOUBLE")
    finite = _fn("ISFINITE", number)
    finite_values = _case((finite, number.copy()))
    not_finite = _fn("BOOL_OR", exp.Not(this=finite.copy()))
    return _case((not_finite, _cast(_lit("NaN"), "DOUBLE")), default=moment(finite_values))


def _keep_nested_count_bug(tree: exp.Expr) -> None:
    """Spark 3.5 decorrelates an aggregate without GROUP BY that is a derived table inside
    a correlated scalar subquery by grouping it by the outer reference, so where no row
    matches it gives no row (not one row of ``count(*) = 0``): ``(SELECT sum(cnt) FROM
    (SELECT count(*) cnt FROM t WHERE t.k = outer.k))`` is NULL there. HAVING count(*) > 0
    gives the same; correlation is seen through qualified outer columns."""
    for select in list(tree.find_all(exp.Select)):
        derived = select.parent
        if not (
            isinstance(derived, exp.Subquery) and isinstance(derived.parent, (exp.From, exp.Join))
        ):
            continue
        if select.args.get("group") is not None or not select.find(exp.AggFunc):
            continue
        scalar = derived.parent.parent
        while scalar is not None and not (
            isinstance(scalar, exp.Subquery) and not isinstance(scalar.parent, (exp.From, exp.Join))
        ):
            scalar = scalar.parent
        if scalar is None or isinstance(scalar.parent, exp.SetOperation):
            continue
        inner_names = {
            source.alias_or_name.lower() for source in scalar.find_all(exp.Table, exp.Subquery)
        }
        correlated = any(
            column.table and column.table.lower() not in inner_names
            for column in select.find_all(exp.Column)
        )
        if correlated:
            _only_groups_with_rows(select)


def _fold_negative_typed_literals(tree: exp.Expr) -> None:
    """``-128Y``, ``-32768S``, ``-9223372036854775808L``: the typed literal of the minimum,
    which sqlglot reads as the negation of a cast out of range."""
    for negation in list(tree.find_all(exp.Neg)):
        cast = negation.this
        if not isinstance(cast, (exp.Cast, exp.TryCast)):
            continue
        literal, to = cast.this, cast.args.get("to")
        if not (
            isinstance(literal, exp.Literal) and literal.is_int and isinstance(to, exp.DataType)
        ):
            continue
        bound = _INTEGRAL_RANGES.get(to.this.value.upper())
        if bound is not None and int(literal.name) == bound:
            negation.replace(exp.Cast(this=_lit(-bound), to=to.copy()))


# ---- the rule table ----

_RULES: dict[type[exp.Expr], Rewrite] = {
    exp.Select: _rewrite_select,
    exp.IntDiv: _rewrite_intdiv,
    exp.Mod: _rewrite_mod,
    exp.Round: _rewrite_round,
    exp.Neg: _rewrite_null_operand,
    # negative(x) is Spark's unary minus; rint(x) Java's Math.rint (nearest whole DOUBLE,
    # ties to even)
    exp.Negative: lambda node: _rewrite_null_operand(exp.Neg(this=_c(node.this))),
    exp.Rint: lambda node: _fn("ROUND_EVEN", _cast(_c(node.this), "DOUBLE"), _lit(0)),
    exp.Abs: _rewrite_null_operand,
    exp.Add: _rewrite_add_sub,
    exp.Sub: _rewrite_add_sub,
    exp.Mul: _rewrite_arithmetic,
    exp.Interval: _rewrite_interval,
    exp.Literal: _rewrite_literal,
    exp.Case: _rewrite_decimal_choice,
    **dict.fromkeys((exp.EQ, exp.NEQ, exp.NullSafeEQ, exp.NullSafeNEQ), _rewrite_comparison),
    **dict.fromkeys((exp.GT, exp.GTE, exp.LT, exp.LTE), _rewrite_ordering_comparison),
    exp.Between: _rewrite_between,
    exp.Concat: _rewrite_concatenation,
    exp.DPipe: _rewrite_concatenation,
    exp.ConcatWs: _rewrite_concatenation,
    exp.In: _rewrite_in,
    exp.If: _rewrite_decimal_choice,
    exp.Coalesce: _rewrite_decimal_choice,
    exp.Nvl2: _rewrite_decimal_choice,
    exp.Greatest: _rewrite_greatest_least,
    exp.Array: _rewrite_array,
    exp.Least: _rewrite_greatest_least,
    exp.Div: _rewrite_div,
    exp.Sum: _rewrite_sum,
    exp.Initcap: _rewrite_initcap,
    exp.Upper: _rewrite_upper,
    exp.Levenshtein: _rewrite_levenshtein,
    exp.Avg: _rewrite_avg,
    exp.Sign: _rewrite_sign,
    exp.Ln: _rewrite_ln,
    exp.Log: _rewrite_log,
    exp.Pow: _rewrite_pow,
    exp.IsNan: _rewrite_isnan,
    exp.CountIf: _rewrite_count_if,
    exp.Any: _rewrite_any,
    exp.ArrayPosition: _rewrite_array_position,
    exp.Exists: _rewrite_exists,
    exp.Reduce: _rewrite_reduce,
    exp.Group: _rewrite_group,
    exp.GroupingId: _rewrite_grouping_id,
    exp.WithinGroup: _rewrite_within_group,
    exp.ArrayDistinct: _refuse(
        "array_distinct", "the embedded engine does not keep the first-seen order"
    ),
    exp.ArrayRemove: _refuse(
        "array_remove", "the embedded engine would drop the NULL elements too"
    ),
    exp.ArrayExcept: _refuse("array_except", "NULL elements are handled differently"),
    exp.ArrayIntersect: _refuse("array_intersect", "NULL elements are handled differently"),
    exp.Flatten: _refuse("flatten", "Spark gives NULL when an inner array is NULL"),
    exp.ArraysZip: _refuse("arrays_zip", "the struct field names differ"),
    exp.SubstringIndex: _rewrite_substring_index,
    exp.Format: _refuse("format_string()", "Java format strings"),
    exp.Typeof: _refuse("typeof()", "Spark's type names differ from the embedded engine's"),
    exp.Ceil: _rewrite_ceil_floor,
    exp.Floor: _rewrite_ceil_floor,
    exp.DayOfWeek: _rewrite_dayofweek,
    exp.Extract: _rewrite_extract,
    exp.TsOrDsToDate: _rewrite_ts_or_ds_to_date,
    exp.JSONFormat: _rewrite_json_format,
    exp.UnixSeconds: _rewrite_unix_seconds,
    exp.UnixMillis: _rewrite_unix_millis,
    exp.Substring: _rewrite_substring,
    exp.TsOrDsAdd: _rewrite_date_add,
    exp.TimestampDiff: _rewrite_timestamp_diff,
    exp.SplitPart: _rewrite_split_part,
    exp.Repeat: _rewrite_repeat,
    exp.TimestampAdd: _rewrite_timestamp_add,
    exp.Lag: _rewrite_offset_default,
    exp.Lead: _rewrite_offset_default,
    exp.AddMonths: _rewrite_add_months,
    exp.Quantile: _rewrite_quantile,
    exp.Median: _rewrite_median,
    exp.ApproxQuantile: _refuse("percentile_approx", "use percentile() for an exact answer"),
    exp.ApproxDistinct: _refuse("approx_count_distinct", "use count(DISTINCT ...)"),
    exp.Rand: _refuse("rand()", "different random generators"),
    exp.Uuid: _refuse("uuid()", "different random generators"),
    exp.TableSample: _refuse("TABLESAMPLE", "different sampling"),
    exp.ArraySize: _rewrite_size,
    exp.IgnoreNulls: _rewrite_ignore_nulls,
    exp.RespectNulls: _rewrite_respect_nulls,
    exp.First: _rewrite_first_last,
    exp.Last: _rewrite_first_last,
    exp.ArrayAgg: lambda node: _collect(node, distinct=False),
    exp.ArrayUniqueAgg: lambda node: _collect(node, distinct=True),
    exp.Count: _rewrite_count,
    exp.ArrayContains: _rewrite_array_contains,
    exp.Pad: _rewrite_pad,
    exp.Join: _rewrite_join,
    exp.Left: _rewrite_left_right,
    exp.Right: _rewrite_left_right,
    exp.MapContainsKey: _rewrite_map_contains_key,
    exp.Contains: _rewrite_contains,
    exp.Replace: _rewrite_replace,
    exp.Bracket: _rewrite_bracket,
    exp.ArraySort: _rewrite_array_sort,
    exp.Like: _rewrite_like,
    exp.ILike: _rewrite_like,
    exp.CurrentDate: _rewrite_current_date,
    exp.CurrentUser: _rewrite_current_user,
    exp.CurrentTimestamp: _rewrite_current_timestamp,
    exp.Values: _rewrite_values,
    exp.RegexpExtract: _rewrite_regexp_extract,
    exp.RegexpReplace: _rewrite_regexp_replace,
    exp.RegexpLike: _rewrite_regexp_like,
    exp.RegexpSplit: _rewrite_split,
    exp.Chr: _rewrite_chr,
    exp.Hex: _rewrite_hex,
    exp.ToBase64: _rewrite_base64,
    exp.WidthBucket: _rewrite_width_bucket,
    exp.StrToUnix: _rewrite_to_unix_timestamp,
    exp.Factorial: _rewrite_factorial,
    exp.Cast: _rewrite_cast,
    exp.TryCast: _rewrite_cast,
    exp.Anonymous: _rewrite_anonymous,
    exp.Pivot: pivot_relation,
    exp.MonthsBetween: _rewrite_months_between,
    exp.AtTimeZone: _rewrite_utc_conversion,
    exp.BitwiseLeftShift: _rewrite_shift,
    exp.BitwiseRightShift: _rewrite_shift,
    # make_timestamp's fields are a wall-clock time in the session's time zone (DuckDB's
    # TimeZone), which the cast reads: Spark's TIMESTAMP, not TIMESTAMP_NTZ.
    exp.TimestampFromParts: lambda node: _cast(_c(node), "TIMESTAMPTZ"),
    exp.FromTimeZone: _rewrite_utc_conversion,
    **dict.fromkeys(_SET_OPERATIONS, _rewrite_set_operation),
    exp.UnixToStr: _rewrite_from_unixtime,
    exp.NextDay: _rewrite_next_day,
    exp.Elt: _rewrite_elt,
    exp.Nanvl: _rewrite_nanvl,
    exp.DateFromUnixDate: _rewrite_date_from_unix_date,
    exp.ToBinary: _rewrite_to_binary,
    exp.Struct: _rewrite_struct,
    exp.Transform: _rewrite_indexed_lambda,
    exp.Skewness: _rewrite_skewness,
    exp.Kurtosis: _rewrite_kurtosis,
    exp.StddevPop: _rewrite_population_spread,
    exp.VariancePop: _rewrite_population_spread,
    exp.Corr: _rewrite_corr,
    exp.RegrSlope: _rewrite_regr_slope,
    exp.RegrIntercept: _rewrite_regr_intercept,
    exp.Max: _rewrite_extreme,
    exp.ArgMax: _rewrite_value_of_extreme,
    exp.ArgMin: _rewrite_value_of_extreme,
    exp.Ordered: _rewrite_ordered,
    exp.GenerateSeries: _rewrite_sequence,
    exp.Nullif: _rewrite_nullif,
    exp.Min: _rewrite_extreme,
    exp.BitwiseCount: _rewrite_bit_count,
    exp.ArrayFilter: _rewrite_indexed_lambda,
}


# ---- Spark's result types ----

# Functions whose Spark result type differs from their DuckDB translation's: the
# translation is cast to it (DuckDB gives BIGINT for the date parts, lengths, positions and
# ranks; Spark's TIMESTAMP is DuckDB's TIMESTAMPTZ).
SPARK_RESULT_TYPES: dict[type[exp.Expr], str] = {
    exp.Year: "INTEGER",
    exp.Quarter: "INTEGER",
    exp.Month: "INTEGER",
    exp.WeekOfYear: "INTEGER",
    exp.Day: "INTEGER",
    exp.DayOfMonth: "INTEGER",
    exp.DayOfWeek: "INTEGER",
    exp.DayOfYear: "INTEGER",
    exp.Hour: "INTEGER",
    exp.Minute: "INTEGER",
    exp.Second: "INTEGER",
    exp.Length: "INTEGER",
    exp.BitLength: "INTEGER",
    exp.StrPosition: "INTEGER",
    exp.Levenshtein: "INTEGER",
    exp.DateDiff: "INTEGER",
    exp.UnixDate: "INTEGER",
    exp.RowNumber: "INTEGER",
    exp.Rank: "INTEGER",
    exp.DenseRank: "INTEGER",
    exp.Ntile: "INTEGER",
    exp.Grouping: "TINYINT",
    exp.BitwiseCount: "INTEGER",
    exp.RegexpCount: "INTEGER",
}
# ... and of the functions sqlglot leaves anonymous, by name.
SPARK_RESULT_TYPES_BY_NAME: dict[str, str] = {
    "WEEKDAY": "INTEGER",
    "TO_TIMESTAMP": "TIMESTAMPTZ",
    "DATE_TRUNC": "TIMESTAMPTZ",
}
# extract(SECOND FROM ts) is a DECIMAL(8, 6) in Spark; the other fields are INT.
_INTEGER_EXTRACT_FIELDS = frozenset(
    {"YEAR", "YEARS", "Y", "YR", "YRS", "QUARTER", "QTR", "MONTH", "MONTHS", "MON", "MONS"}
    | {"WEEK", "WEEKS", "W", "DAY", "DAYS", "D", "DAYOFWEEK", "DOW", "DAYOFWEEK_ISO", "DOW_ISO"}
    | {"DOY", "HOUR", "HOURS", "H", "HR", "HRS", "MINUTE", "MINUTES", "M", "MIN", "MINS"}
)


def _spark_result_type(node: exp.Expr) -> str | None:
    if isinstance(node, exp.Anonymous):
        return SPARK_RESULT_TYPES_BY_NAME.get(str(node.this).upper())
    if isinstance(node, exp.Extract):
        return "INTEGER" if node.this.name.upper() in _INTEGER_EXTRACT_FIELDS else None
    return SPARK_RESULT_TYPES.get(type(node))


def _with_spark_result_type(rule: Rewrite | None) -> Rewrite:
    """``rule`` (or no rewrite), then a cast of the result to Spark's result type."""

    def typed(node: exp.Expr) -> exp.Expr:
        spark_type = _spark_result_type(node)
        window = _window_parent(node)
        result = rule(node) if rule is not None else node
        if spark_type is None:
            return result
        if window is not None:  # the window's value is cast, not its function's
            placeholder = exp.Null()
            window.replace(placeholder)
            window.set("this", result)
            placeholder.replace(_cast(window, spark_type))
            return result
        if result is node:
            result = node.copy()
        return _cast(result, spark_type)

    return typed


# What Spark casts a STRING to before taking a part of it: the time of day's parts read a
# TIMESTAMP, the others a DATE (for extract, by its field).
_TIME_OF_DAY = (exp.Hour, exp.Minute, exp.Second)
_TIME_OF_DAY_FIELDS = frozenset(
    {"HOUR", "HOURS", "H", "HR", "HRS", "MINUTE", "MINUTES", "MIN", "M", "MINS", *_SECOND_FIELDS}
)


def _with_text_as_date(rule: Rewrite | None) -> Rewrite:
    """``rule`` (or no rewrite) of a date or time part, after a STRING argument is cast to
    a DATE or TIMESTAMP as Spark casts it (NULL where it is not one); DuckDB's parts take
    no STRING."""

    def read(node: exp.Expr) -> exp.Expr:
        if _argument_type(node) == "string":
            if isinstance(node, exp.Extract):
                key, timed = "expression", node.this.name.upper() in _TIME_OF_DAY_FIELDS
            else:
                key, timed = "this", isinstance(node, _TIME_OF_DAY)
            node.set(key, _spark_cast(node.args[key], "TIMESTAMP" if timed else "DATE"))
        return rule(node) if rule is not None else node

    return read


for _part_class in [*DATE_PARTS, exp.Extract]:
    _RULES[_part_class] = _with_text_as_date(_RULES.get(_part_class))

for _typed_class in [*SPARK_RESULT_TYPES, exp.Anonymous, exp.Extract]:
    _RULES[_typed_class] = _with_spark_result_type(_RULES.get(_typed_class))
