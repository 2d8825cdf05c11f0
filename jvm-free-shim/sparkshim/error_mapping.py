"""DuckDB's errors as the errors Spark raises for the same query.

DuckDB words its errors about the *translated* statement (``Binder Error: ...``, an excerpt
of SQL the user never wrote). Each error DuckDB raises for a query Spark also rejects
becomes Spark's error class, worded as Spark 3.5 words it and naming the user's construct
(taken from the user's own statement tree); an error for a query Spark would answer is a
refusal (``UnsupportedSqlError``) naming the construct and, where there is one, the way
out. Whatever is not recognised is a refusal of the statement as a whole: no DuckDB text
reaches the user (the DuckDB error stays chained as the cause, for debugging).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import duckdb
from sqlglot import exp
from sqlglot.errors import ParseError

from sparkshim.errors import AnalysisException, ParseException, UnsupportedSqlError
from sparkshim.naming import FUNCTION_NAME_KEY
from sparkshim.spark_functions import SPARK_FUNCTIONS

# What a mapping gets: the match of its pattern in DuckDB's message, and the user's
# statement (None when it is not known).
Builder = Callable[[re.Match[str], exp.Expr | None], AnalysisException]

_SEARCH_PATH = "[`system`.`builtin`, `system`.`session`, `spark_catalog`.`default`]"
_QUOTED_NAME = re.compile(r'"([^"]+)"')
_DUCKDB_INTEGERS = {"INT8": "TINYINT", "INT16": "SMALLINT", "INT32": "INT", "INT64": "BIGINT"}
_OPERATORS = frozenset(["+", "-", "*", "/", "%", "//", "||"])


def engine_error(failure: duckdb.Error, tree: exp.Expr | None) -> AnalysisException:
    """Spark's error for ``failure``, raised by DuckDB for the user's statement ``tree``."""
    text = str(failure)
    for pattern, build in _MAPPINGS:
        match = pattern.search(text)
        if match is not None:
            return build(match, tree)
    return unsupported_statement(tree)


def unsupported_statement(tree: exp.Expr | None) -> UnsupportedSqlError:
    """The refusal of a statement the shim failed to run for a reason it cannot name."""
    return UnsupportedSqlError(
        f"this {statement_kind(tree)}",
        "the embedded engine cannot run it with Spark's semantics; rewrite it or run it on Spark",
    )


def statement_kind(tree: exp.Expr | None) -> str:
    """The statement's kind in words: ``query``, ``INSERT statement``, ..."""
    if tree is None:
        return "statement"
    if isinstance(tree, exp.Query):
        return "query"
    return f"{type(tree).__name__.upper()} statement"


def spark_type(duckdb_type: str) -> str:
    """A DuckDB type name as Spark names the type (``INTEGER[]`` is ``ARRAY<INT>``)."""
    name = duckdb_type.strip().removesuffix("_LITERAL")
    if name in _DUCKDB_INTEGERS:
        return _DUCKDB_INTEGERS[name]
    try:
        rendered = exp.DataType.build(name, dialect="duckdb").sql("spark").upper()
    except (ParseError, ValueError):
        return name
    return re.sub(r"DECIMAL\((\d+), (\d+)\)", r"DECIMAL(\1,\2)", rendered)


# ---- names and columns ----


def _backticked(name: str) -> str:
    return ".".join(f"`{part}`" for part in name.split("."))


def table_not_found(*parts: str) -> AnalysisException:
    """Spark's error for a table or view that does not exist, named by ``parts`` as Spark
    names it (as written in a query; fully qualified for DROP)."""
    name = ".".join(f"`{part}`" for part in parts if part)
    return AnalysisException(
        message=f"[TABLE_OR_VIEW_NOT_FOUND] The table or view {name} cannot be found. Verify "
        "the spelling and correctness of the schema and catalog.\nIf you did not qualify the "
        "name with a schema, verify the current_schema() output, or qualify the name with the "
        "correct schema and catalog.\nTo tolerate the error on drop use DROP VIEW IF EXISTS or "
        "DROP TABLE IF EXISTS."
    )


def _unresolved_column(name: str, candidates: list[str]) -> AnalysisException:
    prefix = f"A column or function parameter with name {_backticked(name)} cannot be resolved."
    if not candidates:
        return AnalysisException(message=f"[UNRESOLVED_COLUMN.WITHOUT_SUGGESTION] {prefix}")
    suggestions = ", ".join(_backticked(candidate) for candidate in candidates)
    return AnalysisException(
        message=f"[UNRESOLVED_COLUMN.WITH_SUGGESTION] {prefix} Did you mean one of the "
        f"following? [{suggestions}]."
    )


def _candidates(text: str) -> list[str]:
    bindings = re.search(r"Candidate bindings:(.*)", text)
    return _QUOTED_NAME.findall(bindings.group(1)) if bindings is not None else []


def _unknown_column(match: re.Match[str], tree: exp.Expr | None) -> AnalysisException:
    return _unresolved_column(match["name"], _candidates(match.string))


def _unknown_qualified_column(match: re.Match[str], tree: exp.Expr | None) -> AnalysisException:
    table = match["table"]
    candidates = [f"{table}.{name}" for name in _candidates(match.string)]
    return _unresolved_column(f"{table}.{match['name']}", candidates)


def _unknown_qualifier(match: re.Match[str], tree: exp.Expr | None) -> AnalysisException:
    qualifier = match["table"]
    columns = tree.find_all(exp.Column) if tree is not None else iter(())
    column = next((c for c in columns if c.table.lower() == qualifier.lower()), None)
    name = f"{qualifier}.{column.name}" if column is not None else qualifier
    return _unresolved_column(name, [])


def _ambiguous_column(match: re.Match[str], tree: exp.Expr | None) -> AnalysisException:
    candidates = re.findall(r"'([^']+)'", match["candidates"])
    listed = ", ".join(_backticked(candidate) for candidate in candidates)
    return AnalysisException(
        message=f"[AMBIGUOUS_REFERENCE] Reference {_backticked(match['name'])} is ambiguous, "
        f"could be: [{listed}]."
    )


# ---- aggregation ----


def _not_grouped(match: re.Match[str], tree: exp.Expr | None) -> AnalysisException:
    if tree is not None and tree.find(exp.Group) is None:
        return AnalysisException(
            message="[MISSING_GROUP_BY] The query does not include a GROUP BY clause. Add GROUP "
            "BY or turn it into the window functions using OVER clauses."
        )
    name = match["name"]
    return AnalysisException(
        message=f'[MISSING_AGGREGATION] The non-aggregating expression "{name}" is based on '
        "columns which are not participating in the GROUP BY clause.\nAdd the columns or the "
        'expression to the GROUP BY, aggregate the expression, or use "any_value('
        f'{name})" if you do not care which of the values within a group is returned.'
    )


def _aggregate_in_where(match: re.Match[str], tree: exp.Expr | None) -> AnalysisException:
    where = tree.find(exp.Where) if tree is not None else None
    condition = where.this.sql("spark", normalize_functions="lower") if where is not None else ""
    invalid = (
        [node.sql("spark", normalize_functions="lower") for node in where.find_all(exp.AggFunc)]
        if where
        else []
    )
    return AnalysisException(
        message=f'[INVALID_WHERE_CONDITION] The WHERE condition "{condition}" contains invalid '
        f"expressions: {', '.join(invalid)}.\nRewrite the query to avoid window functions, "
        "aggregate functions, and generator functions in the WHERE clause."
    )


def _window_in_where(match: re.Match[str], tree: exp.Expr | None) -> AnalysisException:
    return AnalysisException(
        message="It is not allowed to use window functions inside WHERE clause."
    )


def _nested_aggregate(match: re.Match[str], tree: exp.Expr | None) -> AnalysisException:
    return AnalysisException(
        message="[NESTED_AGGREGATE_FUNCTION] It is not allowed to use an aggregate function in "
        "the argument of another aggregate function. Please use the inner aggregate function "
        "in a sub-query."
    )


def _window_without_over(match: re.Match[str], tree: exp.Expr | None) -> AnalysisException:
    windowed = (
        [n for n in tree.find_all(exp.RowNumber, exp.Rank, exp.DenseRank, exp.Ntile)]
        if tree is not None
        else []
    )
    bare = next((n for n in windowed if not isinstance(n.parent, exp.Window)), None)
    if bare is None:
        return unsupported_statement(tree)
    return AnalysisException(
        message="[WINDOW_FUNCTION_WITHOUT_OVER_CLAUSE] Window function "
        f'"{bare.sql("spark", normalize_functions="lower")}" requires an OVER clause.'
    )


def _position_out_of_range(clause: str) -> Builder:
    def build(match: re.Match[str], tree: exp.Expr | None) -> AnalysisException:
        size = int(match["size"])
        kind = exp.Group if clause == "GROUP BY" else exp.Order
        node = tree.find(kind) if tree is not None else None
        positions = [
            int(item.name)
            for item in (node.find_all(exp.Literal) if node is not None else [])
            if item.is_int and not 1 <= int(item.name) <= size
        ]
        position = f" {positions[0]}" if positions else ""
        error_class = (
            "GROUP_BY_POS_OUT_OF_RANGE" if clause == "GROUP BY" else "ORDER_BY_POS_OUT_OF_RANGE"
        )
        return AnalysisException(
            message=f"[{error_class}] {clause} position{position} is not in select list (valid "
            f"range is [1, {size}])."
        )

    return build


# ---- set operations and subqueries ----


def _set_columns_mismatch(match: re.Match[str], tree: exp.Expr | None) -> AnalysisException:
    operation = tree.find(exp.SetOperation) if tree is not None else None
    names: dict[type[exp.Expr], str] = {exp.Intersect: "INTERSECT", exp.Except: "EXCEPT"}
    name = names.get(type(operation), "UNION") if operation is not None else "UNION"
    counts = ""
    if operation is not None:
        sides = [operation.left, operation.right]
        if all(isinstance(s, exp.Select) and not s.is_star for s in sides):
            left, right = (len(s.selects) for s in sides)
            counts = (
                f", but the first input has {left} columns and the second input has {right} columns"
            )
    return AnalysisException(
        message=f"[NUM_COLUMNS_MISMATCH] {name} can only be performed on inputs with the same "
        f"number of columns{counts}."
    )


def _subquery_columns(match: re.Match[str], tree: exp.Expr | None) -> AnalysisException:
    count = match["count"]
    in_subquery = tree is not None and any(
        node.args.get("query") is not None for node in tree.find_all(exp.In)
    )
    if in_subquery:
        return AnalysisException(
            message="[DATATYPE_MISMATCH.IN_SUBQUERY_LENGTH_MISMATCH] Cannot resolve the IN "
            "subquery due to data type mismatch: The number of columns in the left hand side of "
            "an IN subquery does not match the number of columns in the output of subquery. "
            f"Left hand side columns(length: 1), right hand side columns(length: {count})."
        )
    return AnalysisException(
        message="[INVALID_SUBQUERY_EXPRESSION.SCALAR_SUBQUERY_RETURN_MORE_THAN_ONE_OUTPUT_COLUMN]"
        f" Invalid subquery: Scalar subquery must return only one column, but got {count}."
    )


def _negative_limit(match: re.Match[str], tree: exp.Expr | None) -> AnalysisException:
    limit = tree.find(exp.Limit, exp.Offset) if tree is not None else None
    value = limit.expression.sql("spark") if limit is not None and limit.expression else "?"
    return AnalysisException(
        message=f'[INVALID_LIMIT_LIKE_EXPRESSION.IS_NEGATIVE] The limit like expression "{value}" '
        f"is invalid. The limit expression must be equal to or greater than 0, but got {value}."
    )


# ---- types and functions ----


def _no_matching_function(match: re.Match[str], tree: exp.Expr | None) -> AnalysisException:
    function = match["function"]
    types = [spark_type(t) for t in _split_types(match["types"])]
    nested = any(t.startswith(("ARRAY", "MAP", "STRUCT")) for t in types)
    if function in _OPERATORS and len(types) == 2 and types[0] != types[1] and nested:
        return AnalysisException(
            message=f'[DATATYPE_MISMATCH.BINARY_OP_DIFF_TYPES] Cannot resolve "{function}" due '
            "to data type mismatch: the left and right operands of the binary operator have "
            f'incompatible types ("{types[0]}" and "{types[1]}").'
        )
    listed = ", ".join(types)
    if function in _OPERATORS:
        construct = f"the operator {function} on operands of types ({listed})"
    elif function.lower() in SPARK_FUNCTIONS:
        construct = f"{function.lower()}() on arguments of types ({listed})"
    else:
        construct = f"a function call on arguments of types ({listed})"
    return UnsupportedSqlError(construct, "cast the arguments to the types the function takes")


def _split_types(listed: str) -> list[str]:
    """The comma-separated types of DuckDB's ``f(T1, T2)`` (commas in ``DECIMAL(p,s)`` and
    ``STRUCT(...)`` kept)."""
    types: list[str] = []
    depth = 0
    current = ""
    for character in listed:
        depth += {"(": 1, ")": -1}.get(character, 0)
        if character == "," and depth == 0:
            types.append(current.strip())
            current = ""
        else:
            current += character
    return [*types, current.strip()] if current.strip() else types


def _concat_types(match: re.Match[str], tree: exp.Expr | None) -> AnalysisException:
    left, right = spark_type(match["left"]), spark_type(match["right"])
    return AnalysisException(
        message='[DATATYPE_MISMATCH.DATA_DIFF_TYPES] Cannot resolve "concat" due to data type '
        f'mismatch: Input to `concat` should all be the same type, but it\'s ("{left}" or '
        f'"{right}").'
    )


def _missing_function(match: re.Match[str], tree: exp.Expr | None) -> AnalysisException:
    name = match["name"].lower()
    if name in SPARK_FUNCTIONS:
        return UnsupportedSqlError(f"the function {name}()", "it has no translation yet")
    return unsupported_statement(tree)


def check_functions_exist(tree: exp.Expr) -> None:
    """Raise Spark's UNRESOLVED_ROUTINE for a call of a function Spark does not have (the
    shim has no user-defined functions, so every function is a built-in)."""
    for call in tree.find_all(exp.Anonymous):
        if call.name.lower() not in SPARK_FUNCTIONS:
            raise unresolved_routine(call.name)
    for session_user in tree.find_all(exp.SessionUser):  # not in Spark 3.5 (sqlglot reads it)
        raise unresolved_routine(session_user.meta.get(FUNCTION_NAME_KEY, "session_user"))


def unresolved_routine(name: str) -> AnalysisException:
    """Spark's error for a call of a function that does not exist."""
    return AnalysisException(
        message=f"[UNRESOLVED_ROUTINE] Cannot resolve function `{name}` on search path "
        f"{_SEARCH_PATH}."
    )


def _invalid_cast_input(match: re.Match[str], tree: exp.Expr | None) -> AnalysisException:
    return cast_invalid_input(match["value"], spark_type(match["type"]))


def _invalid_date_input(match: re.Match[str], tree: exp.Expr | None) -> AnalysisException:
    return cast_invalid_input(match["value"], "DATE" if "date" in match["kind"] else "TIMESTAMP")


def cast_invalid_input(value: str, target: str) -> AnalysisException:
    """Spark's error for a string that does not read as ``target``."""
    return AnalysisException(
        message=f"[CAST_INVALID_INPUT] The value '{value}' of the type \"STRING\" "
        f'cannot be cast to "{target}" because it is malformed. Correct the value as per the '
        "syntax, or change its target type. Use `try_cast` to tolerate malformed input and "
        "return NULL instead."
    )


def _overflow(match: re.Match[str], tree: exp.Expr | None) -> AnalysisException:
    # DuckDB names no type for a negation ("of numeric value"): NUMERIC is no type of the
    # operand's (it would read as DECIMAL(18,3)).
    named = match["type"]
    overflowed = "its type" if named.lower() == "numeric" else spark_type(named)
    return UnsupportedSqlError(
        f"a {match['operation']} that overflows {overflowed}",
        "with ANSI mode off Spark returns NULL for a DECIMAL and wraps an integer around; "
        "cast the operands to a wider type (BIGINT, DECIMAL(38, s))",
    )


def _cast_out_of_range(match: re.Match[str], tree: exp.Expr | None) -> AnalysisException:
    return UnsupportedSqlError(
        f"a CAST of {match['value']} to {spark_type(match['target'])}, out of its range",
        "with ANSI mode off Spark wraps the value around; cast to a wider type",
    )


def _duplicate_cte(match: re.Match[str], tree: exp.Expr | None) -> AnalysisException:
    return ParseException(message=f"CTE definition can't have duplicate names: '{match['name']}'.")


def _runtime_refusal(match: re.Match[str], tree: exp.Expr | None) -> AnalysisException:
    return UnsupportedSqlError(match["construct"])


def _user_raised(match: re.Match[str], tree: exp.Expr | None) -> AnalysisException:
    """The error a query raised itself (``raise_error``, a failed ``assert_true``: both
    are DuckDB's ``error()`` in the translation); any other DuckDB input error is not the
    user's words."""
    calls = tree.find_all(exp.Anonymous) if tree is not None else iter(())
    if not any(call.name.lower() in _USER_ERROR_FUNCTIONS for call in calls):
        return unsupported_statement(tree)
    message = match["message"].split("\n\nLINE ")[0]
    return AnalysisException(message=f"[USER_RAISED_EXCEPTION] {message}")


_USER_ERROR_FUNCTIONS = frozenset({"raise_error", "assert_true"})


# ---- constructs Spark answers and DuckDB cannot run ----


def _refusal(construct: str, hint: str) -> Builder:
    def build(match: re.Match[str], tree: exp.Expr | None) -> AnalysisException:
        return UnsupportedSqlError(construct.format(**match.groupdict()), hint)

    return build


_MAPPINGS: tuple[tuple[re.Pattern[str], Builder], ...] = tuple(
    (re.compile(pattern, re.DOTALL), build)
    for pattern, build in (
        # translate.py plants error() calls worded like UnsupportedSqlError's messages, for
        # values it can only check at run time.
        (r"sparkshim does not support (?P<construct>.*)", _runtime_refusal),
        (r'Referenced column "(?P<name>[^"]+)" not found', _unknown_column),
        (
            r'\w[\w ]* "(?P<table>[^"]+)" does not have a column named "(?P<name>[^"]+)"',
            _unknown_qualified_column,
        ),
        (r'Referenced table "(?P<table>[^"]+)" not found', _unknown_qualifier),
        (
            r'Ambiguous reference to column name "(?P<name>[^"]+)" \(use: (?P<candidates>[^)]*)\)',
            _ambiguous_column,
        ),
        (r'column "(?P<name>[^"]+)" must appear in the GROUP BY clause', _not_grouped),
        (r"WHERE clause cannot contain aggregates", _aggregate_in_where),
        (r"WHERE clause cannot contain window functions", _window_in_where),
        (r"aggregate function calls cannot be nested", _nested_aggregate),
        (r"Window functions are not supported here", _window_without_over),
        (
            r"GROUP BY term out of range - should be between 1 and (?P<size>\d+)",
            _position_out_of_range("GROUP BY"),
        ),
        (
            r"ORDER term out of range - should be between 1 and (?P<size>\d+)",
            _position_out_of_range("ORDER BY"),
        ),
        (
            r"Set operations can only apply to expressions with the same number",
            _set_columns_mismatch,
        ),
        (r"Subquery returns (?P<count>\d+) columns - expected 1", _subquery_columns),
        (r"LIMIT/OFFSET cannot be negative", _negative_limit),
        (
            r"No function matches the given name and argument types "
            r"'(?P<function>[^(']+)\((?P<types>.*?)\)'",
            _no_matching_function,
        ),
        (
            r"Could not choose a best candidate function for the function call "
            r'"(?P<function>[^("]+)\((?P<types>.*?)\)"',
            _no_matching_function,
        ),
        (r"Cannot concatenate types (?P<left>\S+) and (?P<right>\S+) -", _concat_types),
        (
            r"(?:Scalar|Aggregate|Table) Function with name (?P<name>\w+) does not exist",
            _missing_function,
        ),
        (r"Could not convert string '(?P<value>.*?)' to (?P<type>\w+)", _invalid_cast_input),
        (
            r'invalid (?P<kind>date|timestamp)\w* field format: "(?P<value>[^"]*)"',
            _invalid_date_input,
        ),
        (r"Overflow in (?P<operation>\w+) of (?P<type>[\w()]+)", _overflow),
        (
            r"Type \w+ with value (?P<value>\S+) can't be cast because the value is out of range "
            r"for the destination type (?P<target>\w+)",
            _cast_out_of_range,
        ),
        (r"^Invalid Input Error: (?P<message>.*)", _user_raised),
        (r'Duplicate CTE name "(?P<name>[^"]+)"', _duplicate_cte),
        (
            r'Ambiguous reference to table "(?P<name>[^"]+)" \(duplicate alias',
            _refusal("two tables named {name} in one FROM clause", "alias one of them"),
        ),
        (
            r"(?P<qualifier>\w+ TO \w+) is not supported",
            _refusal(
                "the interval qualifier {qualifier}",
                "add single-unit intervals: INTERVAL '1' DAY + INTERVAL '2' HOUR",
            ),
        ),
        (
            r"Columns can only be referenced within the aggregate of a PIVOT",
            _refusal(
                "this PIVOT (several pivot columns, or a column outside the aggregate)",
                "pivot one column",
            ),
        ),
        (
            r'Circular reference to CTE "(?P<name>[^"]+)"',
            _refusal("the CTE {name} that reads a table of its own name", "rename the CTE"),
        ),
        (
            r"STAR expression is only allowed as the root element",
            _refusal("* inside an expression, as in struct(t.*)", "list the columns"),
        ),
        (
            r"Pivot expression must contain exactly one aggregate",
            _refusal(
                "a PIVOT aggregate that is not a single aggregate call",
                "pivot single aggregates and combine them in an outer query",
            ),
        ),
    )
)
