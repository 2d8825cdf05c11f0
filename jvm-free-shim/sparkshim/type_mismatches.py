"""Spark's analysis errors for operands whose static types Spark 3.5 (ANSI off) refuses.

DuckDB answers some of these (``1 > true``, ``7.5D div 2``, ``SELECT 1 UNION SELECT
true``, ``CASE WHEN 1 THEN ...``) and fails on others with an error no Spark user would
recognise. :func:`check_types` raises Spark's error class instead, worded as Spark words
it and naming the user's expression, wherever :mod:`sparkshim.spark_typing` derived the
types involved; an operand of a type it did not derive is left to the engine, as before.

The rules, from Spark's ``TypeCoercion`` (ANSI off) and the expressions' input checks:

* a comparison (``=``, ``<``, ``<=>``, BETWEEN, a simple CASE's WHEN) of two types of
  different kinds (number, BOOLEAN, DATE/TIMESTAMP, BINARY) is ``BINARY_OP_DIFF_TYPES``;
  a STRING compares with any of them (Spark casts it), and a number equals a BOOLEAN
  (Spark's ``BooleanEquality``, for ``=`` and ``<=>`` only);
* values Spark widens to one type (an IN's value and list, a CASE's, IF's or COALESCE's
  values, a set operation's columns pair by pair) must be of one kind, or STRINGs beside
  numbers and datetimes (``DATA_DIFF_TYPES``, ``INCOMPATIBLE_COLUMN_TYPE``);
* ``div`` takes two BIGINTs (an integral number is cast to one, a NULL too) or DECIMALs
  (an integral number or a NULL beside one is cast to it): operands of two types after
  Spark's casts (a STRING is cast to DOUBLE, a DECIMAL beside a FLOAT or DOUBLE too) are
  ``BINARY_OP_DIFF_TYPES``, two of one other type (DOUBLE, BOOLEAN, DATE ...)
  ``BINARY_OP_WRONG_TYPE`` (:func:`div_operand_types`);
* a CASE's WHEN and an IF's condition must be BOOLEAN (IF takes NULL as a BOOLEAN NULL):
  ``UNEXPECTED_INPUT_TYPE``;
* ``greatest`` and ``least`` take values of one kind (no STRING promotion):
  ``DATA_DIFF_TYPES``.
"""

from __future__ import annotations

from collections.abc import Iterator

from sqlglot import exp

from sparkshim.errors import AnalysisException
from sparkshim.naming import spark_column_name
from sparkshim.spark_typing import (
    FRACTIONAL_TYPES,
    INTEGRAL_TYPES,
    DecimalType,
    SparkType,
    StatementTypes,
    chosen,
    compared_pairs,
    wider_type,
)

__all__ = ["check_types", "div_operand_types", "spark_type_name"]

# The kinds of Spark's atomic types, by simpleString (a DECIMAL is a number).
_KINDS = {
    **dict.fromkeys((*INTEGRAL_TYPES, *FRACTIONAL_TYPES), "number"),
    "boolean": "boolean",
    **dict.fromkeys(("date", "timestamp", "timestamp_ntz"), "datetime"),
    "string": "string",
    "binary": "binary",
}
# The kinds a STRING widens with (Spark's stringPromotion: not BOOLEAN, not BINARY).
_TEXT_WIDENED_KINDS = frozenset({"string", "number", "datetime"})

# Spark's symbol for each comparison, as its message names it (``a <> b`` is NOT(a = b)).
_COMPARISON_SYMBOLS: dict[type[exp.Expr], str] = {
    exp.EQ: "=",
    exp.NEQ: "=",
    exp.NullSafeEQ: "<=>",
    exp.NullSafeNEQ: "<=>",
    exp.GT: ">",
    exp.GTE: ">=",
    exp.LT: "<",
    exp.LTE: "<=",
}
_EQUALITIES = (exp.EQ, exp.NEQ, exp.NullSafeEQ, exp.NullSafeNEQ)
_SET_OPERATORS: dict[type[exp.Expr], str] = {
    exp.Union: "UNION",
    exp.Intersect: "INTERSECT",
    exp.Except: "EXCEPT",
}
_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth")
_DIV_INPUTS = '"BIGINT" or "DECIMAL" or "INTERVAL YEAR TO MONTH" or "INTERVAL DAY TO SECOND"'


def check_types(types: StatementTypes) -> None:
    """Raise Spark's AnalysisException for the first expression of the statement (children
    before parents, as Spark's analyzer checks) whose operand types Spark refuses."""
    for node in _children_first(types.typed):
        error = _mismatch(node, types)
        if error is not None:
            raise error


def spark_type_name(spark_type: SparkType | None) -> str:
    """A type as Spark's messages name it: ``INT``, ``DECIMAL(10,2)``, ``VOID`` (a type
    not derived, never named by the checks, is ``UNKNOWN``)."""
    if isinstance(spark_type, DecimalType):
        return f"DECIMAL({spark_type.precision},{spark_type.scale})"
    return "UNKNOWN" if spark_type is None else spark_type.upper()


def _children_first(node: exp.Expr) -> Iterator[exp.Expr]:
    for child in node.iter_expressions():
        yield from _children_first(child)
    yield node


def _kind(spark_type: SparkType | None) -> str | None:
    """The kind of an atomic type; None for an unknown or other type (never refused)."""
    if isinstance(spark_type, DecimalType):
        return "number"
    return None if spark_type is None else _KINDS.get(spark_type)


def _is_known(spark_type: SparkType | None) -> bool:
    return spark_type == "void" or _kind(spark_type) is not None


def _comparable(left: SparkType | None, right: SparkType | None, equality: bool) -> bool:
    kinds = {_kind(left), _kind(right)}
    if not (_is_known(left) and _is_known(right)) or "void" in (left, right):
        return True
    if len(kinds) == 1 or "string" in kinds:
        return True
    return equality and kinds == {"number", "boolean"}


def _widenable(types: list[SparkType | None]) -> bool:
    """Whether Spark widens values of ``types`` to one type (its findWiderCommonType, which
    widens the STRINGs first); True where a type is unknown."""
    if not all(_is_known(t) for t in types):
        return True
    kinds = {_kind(t) for t in types if t != "void"}
    if len(kinds) <= 1:
        return True
    return "string" in kinds and kinds <= _TEXT_WIDENED_KINDS


def _mismatch(node: exp.Expr, types: StatementTypes) -> AnalysisException | None:
    if isinstance(node, exp.SetOperation):
        return _set_operation_mismatch(node, types)
    written = types.written(node)
    if written is None:
        return None  # not a node the typing records: nothing checked
    if isinstance(node, exp.IntDiv):
        return _div_mismatch(node, written, types)
    if isinstance(node, exp.Ordered):
        return _range_frame_mismatch(node, types)
    if isinstance(node, exp.In):
        return _in_mismatch(node, written, types)
    if isinstance(node, exp.Greatest | exp.Least):
        return _extreme_mismatch(node, written, types)
    found = _comparison_mismatch(node, written, types)
    if found is None and isinstance(node, exp.Case | exp.If):
        found = _condition_mismatch(node, written, types)
    if found is None:
        found = _chosen_mismatch(node, written, types)
    return found


# The units of a day-time interval (Spark's DayTimeIntervalType).
_DAY_TIME_UNITS = frozenset({"DAY", "HOUR", "MINUTE", "SECOND"})


def _range_frame_mismatch(node: exp.Ordered, types: StatementTypes) -> AnalysisException | None:
    """Spark's error for a window ordered by a DATE whose RANGE frame is bounded by a
    day-time interval (a DATE moves by days as a number or by months as an interval;
    DuckDB would answer it)."""
    window = node.parent.parent if isinstance(node.parent, exp.Order) else None
    spec = window.args.get("spec") if isinstance(window, exp.Window) else None
    if not isinstance(spec, exp.WindowSpec) or str(spec.args.get("kind", "")).upper() != "RANGE":
        return None
    bounds = [spec.args.get(key) for key in ("start", "end")]
    units = {bound.text("unit").upper() for bound in bounds if isinstance(bound, exp.Interval)}
    if types.type_of(node) != "date" or not units & _DAY_TIME_UNITS:
        return None
    unit = sorted(units & _DAY_TIME_UNITS)[0]
    return AnalysisException(
        message='[DATATYPE_MISMATCH.RANGE_FRAME_INVALID_TYPE] The data type "DATE" used in'
        f' the order specification does not match the data type "INTERVAL {unit}" which'
        " is used in the range frame: bound the frame by a number of days"
        " (RANGE BETWEEN n PRECEDING ...) or order by a TIMESTAMP"
    )


def _datatype_mismatch(
    written: exp.Expr, subclass: str, detail: str, way_out: str
) -> AnalysisException:
    named = spark_column_name(written)
    return AnalysisException(
        message=f'[DATATYPE_MISMATCH.{subclass}] Cannot resolve "{named}" due to data '
        f"type mismatch: {detail}. {way_out}"
    )


def _comparison_mismatch(
    node: exp.Expr, written: exp.Expr, types: StatementTypes
) -> AnalysisException | None:
    pairs, written_pairs = compared_pairs(node), compared_pairs(written)
    if len(written_pairs) != len(pairs):
        written_pairs = pairs
    symbols = _pair_symbols(node, len(pairs))
    for (left, right), (left_written, right_written), symbol in zip(
        pairs, written_pairs, symbols, strict=True
    ):
        left_type, right_type = types.type_of(left), types.type_of(right)
        if _comparable(left_type, right_type, equality=symbol in ("=", "<=>")):
            continue
        named = f"({spark_column_name(left_written)} {symbol} {spark_column_name(right_written)})"
        return AnalysisException(
            message=f'[DATATYPE_MISMATCH.BINARY_OP_DIFF_TYPES] Cannot resolve "{named}" due to '
            "data type mismatch: the left and right operands of the binary operator have "
            f'incompatible types ("{spark_type_name(left_type)}" and '
            f'"{spark_type_name(right_type)}"). Cast one operand to the other\'s type to compare '
            "them."
        )
    return None


def _pair_symbols(node: exp.Expr, count: int) -> list[str]:
    """The comparison Spark makes of each pair :func:`compared_pairs` gives."""
    if isinstance(node, exp.Between):
        return [">=", "<="]
    if isinstance(node, exp.Case):
        return ["="] * count
    return [_COMPARISON_SYMBOLS.get(type(node), "=")] * count


def _in_mismatch(
    node: exp.In, written: exp.Expr, types: StatementTypes
) -> AnalysisException | None:
    pairs = compared_pairs(node)
    if not pairs:
        return None  # an IN of a subquery: not checked
    listed = [types.type_of(node.this), *(types.type_of(item) for _, item in pairs)]
    if _widenable(listed):
        return None
    return _datatype_mismatch(
        written,
        "DATA_DIFF_TYPES",
        f"Input to `in` should all be the same type, but it's {_bracketed(listed)}",
        "Cast the values to one type.",
    )


def _bracketed(listed: list[SparkType | None]) -> str:
    return "[" + ", ".join(f'"{spark_type_name(t)}"' for t in listed if t is not None) + "]"


def _extreme_mismatch(
    node: exp.Expr, written: exp.Expr, types: StatementTypes
) -> AnalysisException | None:
    """``greatest``/``least``: Spark widens their arguments to one type without widening a
    STRING with other kinds (its findWiderTypeWithoutStringPromotion), so arguments of two
    kinds (``least(i, '7')``, ``greatest(true, 1)``) are ``DATA_DIFF_TYPES``."""
    listed = [types.type_of(value) for value in [node.this, *node.expressions]]
    if not all(_is_known(t) for t in listed):
        return None
    if len({_kind(t) for t in listed if t != "void"}) <= 1:
        return None
    function = "greatest" if isinstance(node, exp.Greatest) else "least"
    return _datatype_mismatch(
        written,
        "DATA_DIFF_TYPES",
        f"Input to `{function}` should all be the same type, but it's {_bracketed(listed)}",
        "Cast the values to one type.",
    )


def _chosen_mismatch(
    node: exp.Expr, written: exp.Expr, types: StatementTypes
) -> AnalysisException | None:
    values = chosen(node)
    if not values:
        return None
    listed = [types.type_of(value) for value in values]
    if _widenable(listed):
        return None
    if isinstance(node, exp.Coalesce):
        function = "coalesce"
        shown = "(" + " or ".join(f'"{spark_type_name(t)}"' for t in listed if t) + ")"
    else:
        function = "casewhen" if isinstance(node, exp.Case) else "if"
        shown = _bracketed(listed)
    return _datatype_mismatch(
        written,
        "DATA_DIFF_TYPES",
        f"Input to `{function}` should all be the same type, but it's {shown}",
        "Cast the values to one type.",
    )


def _condition_mismatch(
    node: exp.Case | exp.If, written: exp.Expr, types: StatementTypes
) -> AnalysisException | None:
    if isinstance(node, exp.Case):
        if node.this is not None:
            return None  # a simple CASE compares its value: see _comparison_mismatch
        conditions = [when.this for when in node.args.get("ifs") or []]
        written_conditions = [when.this for when in written.args.get("ifs") or []]
    elif isinstance(node.parent, exp.Case):
        return None  # a WHEN of a CASE: checked with its CASE
    else:
        conditions, written_conditions = [node.this], [written.this]
    if len(written_conditions) != len(conditions):
        written_conditions = conditions
    for index, (condition, condition_written) in enumerate(
        zip(conditions, written_conditions, strict=True), 1
    ):
        condition_type = types.type_of(condition)
        if condition_type == "boolean" or not _is_known(condition_type):
            continue
        if condition_type == "void" and isinstance(node, exp.If):
            continue  # Spark takes IF's NULL condition as a BOOLEAN NULL
        return _datatype_mismatch(
            written,
            "UNEXPECTED_INPUT_TYPE",
            f'Parameter {index} requires the "BOOLEAN" type, however'
            f' "{spark_column_name(condition_written)}" has the type'
            f' "{spark_type_name(condition_type)}"',
            "Write a condition (a comparison, IS NULL, ...) or cast it to BOOLEAN.",
        )
    return None


def _div_mismatch(
    node: exp.IntDiv, written: exp.Expr, types: StatementTypes
) -> AnalysisException | None:
    left, right = types.type_of(node.this), types.type_of(node.expression)
    if left is None or right is None or not (_is_known(left) and _is_known(right)):
        return None  # a type not derived (an interval ...): left to the engine
    left, right = div_operand_types(left, right)
    way_out = "Cast the operands to BIGINT or DECIMAL, or use / and floor()."
    if left != right:
        return _datatype_mismatch(
            written,
            "BINARY_OP_DIFF_TYPES",
            "the left and right operands of the binary operator have incompatible types "
            f'("{spark_type_name(left)}" and "{spark_type_name(right)}")',
            way_out,
        )
    if left in ("bigint", "void") or isinstance(left, DecimalType):
        return None
    return _datatype_mismatch(
        written,
        "BINARY_OP_WRONG_TYPE",
        f"the binary operator requires the input type ({_DIV_INPUTS}), "
        f'not "{spark_type_name(left)}"',
        way_out,
    )


def div_operand_types(left: SparkType, right: SparkType) -> tuple[SparkType, SparkType]:
    """The types of ``left div right``'s operands once Spark's type coercion (ANSI off)
    has cast them, for its check that they are one type among BIGINT, DECIMAL and the
    intervals: a STRING becomes a DOUBLE (PromoteStrings), a DECIMAL beside a FLOAT or
    DOUBLE a DOUBLE and beside an integral number both are DECIMALs (DecimalPrecision), an
    integral number a BIGINT (IntegralDivision), then the two their tightest common type
    where div takes it (ImplicitTypeCasts: a NULL beside a BIGINT or a DECIMAL).

    >>> div_operand_types("string", "int")
    ('double', 'bigint')
    >>> div_operand_types(DecimalType(10, 2), "double")
    ('double', 'double')
    >>> div_operand_types("void", "smallint")
    ('bigint', 'bigint')
    """
    left, right = ("double" if t == "string" else t for t in (left, right))
    decimals = [t for t in (left, right) if isinstance(t, DecimalType)]
    if decimals:
        if left in FRACTIONAL_TYPES or right in FRACTIONAL_TYPES:
            left, right = ("double" if isinstance(t, DecimalType) else t for t in (left, right))
            return left, right
        if all(isinstance(t, DecimalType) or t in (*INTEGRAL_TYPES, "void") for t in (left, right)):
            return decimals[0], decimals[0]  # DECIMALs, which div takes
        return left, right
    left, right = ("bigint" if t in INTEGRAL_TYPES else t for t in (left, right))
    if {left, right} == {"bigint", "void"}:
        return "bigint", "bigint"
    return left, right


def _set_operation_mismatch(
    node: exp.SetOperation, types: StatementTypes
) -> AnalysisException | None:
    left_types, right_types = (
        _set_column_types(node.this, types),
        _set_column_types(node.expression, types),
    )
    if left_types is None or right_types is None or len(left_types) != len(right_types):
        return None
    for index, (left, right) in enumerate(zip(left_types, right_types, strict=True)):
        if _widenable([left, right]):
            continue
        operator = _SET_OPERATORS[type(node)]
        if not isinstance(node, exp.Union) and node.args.get("distinct") is False:
            operator += " ALL"
        return AnalysisException(
            message=f"[INCOMPATIBLE_COLUMN_TYPE] {operator} can only be performed on tables with "
            f"compatible column types. The {_ordinal(index + 1)} column of the second table is "
            f'"{spark_type_name(right)}" type which is not compatible with '
            f'"{spark_type_name(left)}" at the same column of the first table.. Cast the '
            "column of one side to the other's type."
        )
    return None


def _set_column_types(query: exp.Expr, types: StatementTypes) -> list[SparkType | None] | None:
    """The column types of one side of a set operation (a nested one's are its widened
    types, which Spark checked first), None where the columns are not listed."""
    if isinstance(query, exp.Subquery):
        return _set_column_types(query.this, types)
    if isinstance(query, exp.Select):
        if any(isinstance(item, exp.Star) or item.is_star for item in query.expressions):
            return None
        return [types.type_of(item) for item in query.expressions]
    if isinstance(query, exp.SetOperation):
        left = _set_column_types(query.this, types)
        right = _set_column_types(query.expression, types)
        if left is None or right is None or len(left) != len(right):
            return None
        return [wider_type([a, b]) for a, b in zip(left, right, strict=True)]
    return None


def _ordinal(number: int) -> str:
    return _ORDINALS[number - 1] if number <= len(_ORDINALS) else f"{number}th"
