"""Reading Spark SQL with sqlglot's own Spark parser, as sparkshim needs it.

sqlglot may be installed compiled (``sqlglot[c]``, the ``sqlglotc`` package: its parser and
generator are mypyc native classes, about three times as fast as the Python ones), and Python
code cannot subclass a compiled class. So sparkshim reads with sqlglot's Spark dialect as
it is, and does what it needs around the parser: on the tokens before, on the tree after.
The same code runs on either build.

* **Names as written.** Spark names a result column by a function's name as written
  (``nvl(a, b)``, ``substring(s FROM 2)``: naming.py), which sqlglot's tree does not keep.
  Each call's name token gets a marker comment. sqlglot gives a call the comments of its
  name token (a window, alias, ``[i]`` or ``.field`` around the call may take them over), and
  a call it builds from a known function records where its name token was; after parsing,
  each marker is taken off and the name recorded in the call's meta under
  ``FUNCTION_NAME_KEY``.
* **Arguments as written.** sqlglot would turn some functions' arguments into something
  else on the way in (a Java date pattern into strftime, ``first(x, true)`` refused as too
  many arguments). Their name token is renamed to a private name the parser does not know,
  so it reads an anonymous call; after parsing it gets its name back, or is built as
  sparkshim builds it (``_AS_WRITTEN``).
* **Comparisons beside LIKE, BETWEEN and IN.** Spark's grammar puts all comparison
  operators on one level, left-associative, and lets a predicate (LIKE, ILIKE, RLIKE,
  BETWEEN, IN) follow a chain of them, its operand a chain too: ``s LIKE 'p' = true`` is
  ``s LIKE ('p' = true)`` and ``a = b LIKE c`` is ``(a = b) LIKE c``. sqlglot reads a
  predicate before a comparison, and ``=`` after ``<`` (``(s LIKE 'p') = true``,
  ``a = (b < c)``); such a chain is regrouped after parsing. A chain with a second
  predicate, or a comparison after one that takes no operand there (IN, ESCAPE), is no
  Spark syntax and is refused (so is one after LIKE ANY (...), which Spark's analyzer
  refuses).
* **PIVOT aggregates.** Spark takes any expression over aggregates there (``avg(x) + 1 AS
  a``); sqlglot's Spark parser reads a call there, or misreads what follows the expression
  for its alias. Such an expression is made the argument of a private call, which is taken
  off after parsing.

>>> tree = parse_statements("SELECT nvl(a, 1), substr(s FROM 2) FROM t")[0]
>>> [node.meta[FUNCTION_NAME_KEY] for node in tree.find_all(exp.Coalesce, exp.Substring)]
['nvl', 'substring']
>>> tree.sql("spark")
'SELECT COALESCE(a, 1), SUBSTRING(s, 2) FROM t'
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass

from sqlglot import exp
from sqlglot.dialects.spark import Spark
from sqlglot.helper import seq_get
from sqlglot.parsers.spark import SparkParser
from sqlglot.tokenizer_core import Token, TokenType

from sparkshim.errors import UnsupportedSqlError
from sparkshim.naming import FUNCTION_NAME_KEY, JAVA_PATTERN_KEY, UNIT_KEY
from sparkshim.spark_functions import UNIT_FIRST_CALLS

__all__ = ["parse_statements", "reads_as_operator", "tokenize"]

_SPARK = Spark()

# Marker comments and private names carry a token of this process, so that no text of a
# statement can be taken for one.
_TOKEN = secrets.token_hex(6)
_CALL_MARK = f"__sparkshim_call_{_TOKEN}_"
_PIVOT_NAME = f"__sparkshim_pivot_{_TOKEN}"
_PRIVATE_NAME = f"__sparkshim_fn_{_TOKEN}_"

# Functions Spark names otherwise when called with FROM/IN between the arguments.
_KEYWORD_CALL_NAMES = {"substr": "substring", "position": "locate"}
_KEYWORD_ARGUMENT_CALLS = frozenset({"SUBSTR", "SUBSTRING", "POSITION", "TRIM"})

# The tokens sqlglot may read as a call's name before "(", and without one.
_CALL_TOKENS = frozenset(SparkParser.FUNC_TOKENS)
_NO_PAREN_CALLS = frozenset(SparkParser.NO_PAREN_FUNCTIONS)
# Binary operators that are also functions (``a DIV (b)``, ``div(a, b)``; ``x AND (y)``):
# after an operand they are the operator (:func:`reads_as_operator`).
_OPERATORS = frozenset(
    token_type
    for table in (
        SparkParser.CONJUNCTION,
        SparkParser.DISJUNCTION,
        SparkParser.EQUALITY,
        SparkParser.COMPARISON,
        SparkParser.BITWISE,
        SparkParser.TERM,
        SparkParser.FACTOR,
        SparkParser.RANGE_PARSERS,
    )
    for token_type in table
) | {TokenType.XOR, TokenType.LIKE, TokenType.RLIKE, TokenType.IS}
_OPERAND_ENDS = frozenset(
    {
        TokenType.VAR,
        TokenType.IDENTIFIER,
        TokenType.NUMBER,
        TokenType.STRING,
        TokenType.R_PAREN,
        TokenType.R_BRACKET,
        TokenType.NULL,
        TokenType.TRUE,
        TokenType.FALSE,
        TokenType.STAR,
        TokenType.END,  # CASE ... END
    }
)
# Calls sqlglot reads with a parser of its own that gives the name token's comments to no
# node (CASE, IF(...), ANY(...), TRANSFORM(...)): their names as written are matched to
# the nodes of their kind in the order both appear.
_UNMARKED_CALLS: dict[str, type[exp.Expr]] = {
    "CASE": exp.Case,
    "IF": exp.If,
    "ANY": exp.Any,
    "TRANSFORM": exp.Transform,
}
# The nodes sqlglot puts around a call and moves the call's comments onto.
_CALL_WRAPPERS = (exp.Alias, exp.Window, exp.IgnoreNulls, exp.RespectNulls, exp.Bracket, exp.Dot)

# Spark's comparison operators, one precedence level (``<=>`` is NullSafeEQ; sqlglot reads
# IS [NOT] DISTINCT FROM as Spark groups it, its left operand parenthesized).
_COMPARISONS = (exp.EQ, exp.NEQ, exp.NullSafeEQ, exp.GT, exp.GTE, exp.LT, exp.LTE)
# The predicates that may follow a chain of comparisons, by the argument holding their last
# operand, which extends over the comparisons after it (None: no comparison may follow).
# sqlglot wraps NOT BETWEEN / NOT IN in a Not, and x LIKE p ESCAPE '!' in an Escape.
_PREDICATE_LAST_OPERANDS: dict[type[exp.Expr], str | None] = {
    exp.Like: "expression",
    exp.ILike: "expression",
    exp.RegexpLike: "expression",
    exp.Between: "high",
    exp.In: None,
}
_MIXED_PREDICATES_HINT = "parenthesize the comparisons and the predicates"


def _verbatim(name: str) -> Callable[[list[exp.Expr]], exp.Expr]:
    def build(args: list[exp.Expr]) -> exp.Expr:
        return exp.Anonymous(this=name, expressions=args)

    return build


def _corr(args: list[exp.Expr]) -> exp.Expr:
    """corr(x, y), and corr(DISTINCT x, y) (over distinct pairs in Spark and DuckDB)."""
    if len(args) == 1 and isinstance(args[0], exp.Distinct) and len(args[0].expressions) == 2:
        first, second = args[0].expressions
        return exp.Corr(this=exp.Distinct(expressions=[first]), expression=second)
    return exp.Corr(this=seq_get(args, 0), expression=seq_get(args, 1))


def _with_nulls_flag(function: type[exp.Expr]) -> Callable[[list[exp.Expr]], exp.Expr]:
    """first/last/first_value/last_value(x[, ignoreNulls]): TRUE means IGNORE NULLS,
    FALSE RESPECT NULLS (sqlglot rejects the FALSE form as having too many arguments)."""

    def build(args: list[exp.Expr]) -> exp.Expr:
        value = function(this=args[0] if args else None)
        if len(args) == 2 and args[1] == exp.true():
            return exp.IgnoreNulls(this=value)
        if len(args) == 2 and args[1] == exp.false():
            return exp.RespectNulls(this=value)
        return value if len(args) == 1 else exp.Anonymous(this=function.key, expressions=args)

    return build


# Functions read as anonymous calls, then built from their arguments as written: date/time
# functions whose Java pattern argument must be seen verbatim (sqlglot would convert it to
# strftime on the way in), and the calls sqlglot reads otherwise than Spark.
def _from_unixtime(args: list[exp.Expr]) -> exp.Expr:
    """from_unixtime(seconds[, pattern]) with its Java pattern as written (sqlglot's
    parser would turn it into strftime's, copying the letters strftime lacks: ``SSS``,
    ``QQQ``)."""
    if not 1 <= len(args) <= 2:
        return exp.Anonymous(this="from_unixtime", expressions=args)
    node = exp.UnixToStr(this=args[0], format=seq_get(args, 1))
    node.meta[JAVA_PATTERN_KEY] = True
    return node


_AS_WRITTEN: dict[str, Callable[[list[exp.Expr]], exp.Expr]] = {
    "DATE_FORMAT": _verbatim("DATE_FORMAT"),
    "FROM_UNIXTIME": _from_unixtime,
    "TO_DATE": _verbatim("TO_DATE"),
    "TO_TIMESTAMP": _verbatim("TO_TIMESTAMP"),
    "UNIX_TIMESTAMP": _verbatim("UNIX_TIMESTAMP"),
    "TRUNC": _verbatim("TRUNC"),
    "DATE_TRUNC": _verbatim("DATE_TRUNC"),
    "BROUND": _verbatim("BROUND"),
    "CORR": _corr,
    "FIRST": _with_nulls_flag(exp.First),
    "LAST": _with_nulls_flag(exp.Last),
    "FIRST_VALUE": _with_nulls_flag(exp.FirstValue),
    "LAST_VALUE": _with_nulls_flag(exp.LastValue),
}


@dataclass(frozen=True)
class _Call:
    """A call's name token: the name as Spark names the call, and where the token starts."""

    written: str
    start: int
    keyword_arguments: bool  # substr(s FROM 2), trim(c FROM s) ...
    unit: str | None = None  # timestampadd(day, ...): the unit as written


def tokenize(sql: str) -> list[Token]:
    """sqlglot's Spark tokens of ``sql`` (a TokenError if it cannot be tokenized)."""
    return _SPARK.tokenize(sql)


def parse_statements(sql: str, tokens: list[Token] | None = None) -> list[exp.Expr]:
    """The statements (or expression) of ``sql``, read as sparkshim reads Spark SQL;
    ``tokens``: its tokens, when the caller has them already. sqlglot's ParseError or
    TokenError if it cannot be read."""
    tokens = tokenize(sql) if tokens is None else tokens
    prepared = _prepared(tokens)
    trees = _SPARK.parser().parse(prepared.tokens, sql)
    return [_finished(tree, prepared) for tree in trees if tree is not None]


# ---- before the parser ----


@dataclass
class _Prepared:
    """The tokens the parser reads, and what the tree is finished with after."""

    tokens: list[Token]
    calls: dict[int, _Call]  # by the number in each marked name's comment
    unmarked: dict[str, list[str]]  # the names of each _UNMARKED_CALLS kind, in order


def _prepared(tokens: list[Token]) -> _Prepared:
    """The tokens the parser reads: each call's name marked (its number in ``calls``),
    the names of ``_AS_WRITTEN`` made private, PIVOT aggregates that are not one call
    wrapped in a private call."""
    prepared = _Prepared([], {}, {})
    for index, token in enumerate(tokens):
        upper = token.text.upper()
        if _is_unmarked_call(tokens, index):
            prepared.unmarked.setdefault(upper, []).append(token.text)
        elif _starts_call(tokens, index):
            number = len(prepared.calls)
            prepared.calls[number] = _call(tokens, index)
            token = _marked(token, f"{_CALL_MARK}{number}")
        prepared.tokens.append(token)
    if any(token.token_type == TokenType.PIVOT for token in prepared.tokens):
        prepared.tokens = _parenthesized_pivot_aggregates(prepared.tokens)
    return prepared


def _is_unmarked_call(tokens: list[Token], index: int) -> bool:
    """Whether the token at ``index`` names one of ``_UNMARKED_CALLS``: CASE, or IF/ANY/
    TRANSFORM before "(" (``IF NOT EXISTS`` is no call)."""
    token = tokens[index]
    upper = token.text.upper()
    if upper not in _UNMARKED_CALLS or token.token_type == TokenType.IDENTIFIER:
        return False
    following = tokens[index + 1] if index + 1 < len(tokens) else None
    return upper == "CASE" or (following is not None and following.token_type == TokenType.L_PAREN)


def _starts_call(tokens: list[Token], index: int) -> bool:
    token = tokens[index]
    if token.token_type in _NO_PAREN_CALLS:
        return True
    following = tokens[index + 1] if index + 1 < len(tokens) else None
    if following is None or following.token_type != TokenType.L_PAREN:
        return False
    if token.token_type not in _CALL_TOKENS or _names_a_table(tokens, index):
        return False
    return not reads_as_operator(tokens, index)


def reads_as_operator(tokens: list[Token], index: int) -> bool:
    """Whether the word at ``index`` that may also name a function (``div``, ``like``,
    ``and`` ...) is the binary operator there: it follows an operand, so that a "(" after
    it opens its right operand, not an argument list (``CASE ... END div (b % 2)``,
    ``a[0] div (2)``, ``5L div (2)``; ``div(a, b)`` is a call).

    >>> tokens = tokenize("SELECT CASE WHEN b THEN 1 END div (2), div(7, 2)")
    >>> [reads_as_operator(tokens, i) for i, t in enumerate(tokens) if t.text == "div"]
    [True, False]
    """
    if tokens[index].token_type not in _OPERATORS or index == 0:
        return False
    before = tokens[index - 1].token_type
    # A no-parenthesis call (current_date) is an operand, and a typed number's suffix
    # (``5L`` is read 5, ``::``, BIGINT) ends one.
    suffix = index > 1 and tokens[index - 2].token_type == TokenType.DCOLON
    return before in _OPERAND_ENDS or before in _NO_PAREN_CALLS or suffix


# What a table's name follows where a column list may come after it (``CREATE TABLE
# first_value (id BIGINT)``, ``INSERT INTO rank (id) …``): not a call there.
_BEFORE_TABLE_NAMES = frozenset({TokenType.TABLE, TokenType.INTO, TokenType.EXISTS, TokenType.VIEW})


def _names_a_table(tokens: list[Token], index: int) -> bool:
    """Whether the name at ``index`` (maybe the last part of a qualified name) is a
    table's, after CREATE TABLE, INSERT INTO, IF NOT EXISTS or VIEW."""
    before = index - 1
    while before >= 1 and tokens[before].token_type == TokenType.DOT:
        before -= 2  # over ``db.``
    return before >= 0 and tokens[before].token_type in _BEFORE_TABLE_NAMES


def _call(tokens: list[Token], index: int) -> _Call:
    token = tokens[index]
    upper = token.text.upper()
    keyword_arguments = upper in _KEYWORD_ARGUMENT_CALLS and _has_keyword_arguments(tokens, index)
    written = token.text
    if keyword_arguments:
        written = _KEYWORD_CALL_NAMES.get(written.lower(), written)
    return _Call(written, token.start, keyword_arguments, _unit_as_written(tokens, index))


# The calls whose first argument is a unit (Spark's timestampadd / timestampdiff).
_UNIT_CALLS = frozenset(name.upper() for name in UNIT_FIRST_CALLS)


def _unit_as_written(tokens: list[Token], name: int) -> str | None:
    """The unit of the call named at ``name`` as written, where it takes one (Spark names
    ``timestampadd(day, 1, d)`` so; sqlglot's tree has ``DAY``); else None."""
    if tokens[name].text.upper() not in _UNIT_CALLS or name + 3 >= len(tokens):
        return None
    unit, comma = tokens[name + 2], tokens[name + 3]
    if unit.token_type != TokenType.VAR or comma.token_type != TokenType.COMMA:
        return None
    return unit.text


def _has_keyword_arguments(tokens: list[Token], name: int) -> bool:
    """Whether the call named at ``name`` separates its arguments by FROM/IN."""
    depth = 0
    for token in tokens[name + 1 :]:
        depth += token.token_type == TokenType.L_PAREN
        depth -= token.token_type == TokenType.R_PAREN
        if depth == 0:
            return False
        if depth == 1 and token.token_type in (TokenType.FROM, TokenType.IN):
            return True
    return False


def _marked(token: Token, mark: str) -> Token:
    """A copy of ``token`` with ``mark`` among its comments (the caller's tokens stay as
    they are); a name in ``_AS_WRITTEN`` called is made private."""
    text = token.text
    if text.upper() in _AS_WRITTEN:
        text = _PRIVATE_NAME + text.upper()
    return Token(
        token.token_type,
        text,
        token.line,
        token.col,
        token.start,
        token.end,
        [*token.comments, mark],
    )


def _parenthesized_pivot_aggregates(tokens: list[Token]) -> list[Token]:
    """``tokens`` with each PIVOT aggregate that is not one call wrapped in a private
    call."""
    result: list[Token] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        result.append(token)
        index += 1
        if token.token_type != TokenType.PIVOT or index >= len(tokens):
            continue
        if tokens[index].token_type != TokenType.L_PAREN:
            continue
        result.append(tokens[index])
        index += 1
        for start, end in _pivot_items(tokens, index):
            result.extend(_wrapped_item(tokens[start:end]))
            if end < len(tokens):
                result.append(tokens[end])  # the comma, or FOR
            index = end + 1
            if end >= len(tokens) or tokens[end].token_type != TokenType.COMMA:
                break
    return result


def _pivot_items(tokens: list[Token], start: int) -> list[tuple[int, int]]:
    """The spans of the aggregates from ``start`` (after PIVOT's parenthesis) to FOR."""
    items: list[tuple[int, int]] = []
    depth = 0
    item_start = start
    for index in range(start, len(tokens)):
        kind = tokens[index].token_type
        if kind == TokenType.L_PAREN:
            depth += 1
        elif kind == TokenType.R_PAREN:
            if depth == 0:
                break
            depth -= 1
        elif depth == 0 and kind in (TokenType.COMMA, TokenType.FOR):
            items.append((item_start, index))
            if kind == TokenType.FOR:
                return items
            item_start = index + 1
    items.append((item_start, len(tokens)))
    return items


def _wrapped_item(item: list[Token]) -> list[Token]:
    """One PIVOT aggregate's tokens, its expression made the argument of a private call
    unless it is one call (sqlglot reads a call there, or a call then an alias)."""
    expression_end = _alias_start(item)
    expression = item[:expression_end]
    if not expression or _leading_call_end(expression) == len(expression):
        return item
    first, last = expression[0], expression[-1]
    name = Token(TokenType.VAR, _PIVOT_NAME, first.line, first.col, first.start, first.start)
    opening = Token(TokenType.L_PAREN, "(", first.line, first.col, first.start, first.start)
    closing = Token(TokenType.R_PAREN, ")", last.line, last.col, last.end, last.end)
    return [name, opening, *expression, closing, *item[expression_end:]]


def _alias_start(item: list[Token]) -> int:
    """Where the alias of a PIVOT aggregate starts (``AS a`` or a trailing name), or its
    length when it has none."""
    depth = 0
    for index, token in enumerate(item):
        depth += token.token_type == TokenType.L_PAREN
        depth -= token.token_type == TokenType.R_PAREN
        if depth == 0 and token.token_type == TokenType.ALIAS:
            return index
    operands = (TokenType.R_PAREN, TokenType.VAR, TokenType.IDENTIFIER, TokenType.NUMBER)
    if (
        len(item) >= 2
        and item[-1].token_type in (TokenType.VAR, TokenType.IDENTIFIER)
        and item[-2].token_type in operands
    ):
        return len(item) - 1
    return len(item)


def _leading_call_end(expression: list[Token]) -> int | None:
    """Where the call that ``expression`` starts with ends (after its closing
    parenthesis), or None if it does not start with a call."""
    if len(expression) < 3 or expression[1].token_type != TokenType.L_PAREN:
        return None
    depth = 0
    for index, token in enumerate(expression[1:], start=1):
        depth += token.token_type == TokenType.L_PAREN
        depth -= token.token_type == TokenType.R_PAREN
        if depth == 0:
            return index + 1
    return None


# ---- after the parser ----


def _finished(tree: exp.Expr, prepared: _Prepared) -> exp.Expr:
    """``tree`` with the private calls undone and the markers read: each call's written
    name in its meta, no marker left in a comment."""
    hosts: dict[int, list[exp.Expr]] = {}
    chains: list[exp.Expr] = []
    for node in list(tree.walk()):
        if node.comments:
            _take_marks(node, hosts)
        if isinstance(node, _COMPARISONS) and not _continues_chain(node):
            chains.append(node)
    for chain in chains:
        tree = _regrouped_chain(tree, chain)
    _truth_tests_as_null_safe_equality(tree)
    tree = _built_as_written(tree)
    by_start = _calls_by_start(tree)
    # The innermost call first: a call whose builder returns its argument keeps the
    # argument's name, as the parser recorded them.
    for number in sorted(hosts, reverse=True):
        call = prepared.calls[number]
        target = by_start.get(call.start) or _call_under(hosts[number])
        if target is None:
            continue
        if (
            call.keyword_arguments
            and isinstance(target, exp.Trim)
            and not target.args.get("position")
        ):
            target.set("position", "BOTH")  # trim(c FROM s) is Spark's TRIM(BOTH c FROM s)
        if call.unit is not None and isinstance(target, exp.DateDiff):
            target = _as_timestamp_diff(target)
        target.meta.setdefault(FUNCTION_NAME_KEY, call.written)
        if call.unit is not None and isinstance(target, exp.TimestampAdd | exp.TimestampDiff):
            target.meta.setdefault(UNIT_KEY, call.unit)
    _name_unmarked_calls(tree, prepared.unmarked)
    return tree


def _truth_tests_as_null_safe_equality(tree: exp.Expr) -> None:
    """``x IS TRUE`` and ``x IS FALSE`` as Spark reads them: ``x <=> true`` (``false``), so
    that a number is compared as one (``5 IS TRUE`` is false: ``5 <=> 1``), where SQL's
    truth test takes any number but zero for true; ``IS NOT TRUE`` is the NOT of it."""
    for node in list(tree.find_all(exp.Is)):
        if isinstance(node.expression, exp.Boolean) and node is not tree:
            node.replace(exp.NullSafeEQ(this=node.this, expression=node.expression))


def _as_timestamp_diff(call: exp.DateDiff) -> exp.Expr:
    """``datediff(unit, start, end)`` as Spark reads it, timestampdiff (sqlglot builds a
    DateDiff of the two values made dates, a day count); its other form is left as it is."""
    unit = call.args.get("unit")
    if unit is None:
        return call
    end, start = (_undated(call.this), _undated(call.expression))
    return call.replace(exp.TimestampDiff(this=end, expression=start, unit=unit.copy()))


def _undated(value: exp.Expr) -> exp.Expr:
    """A DateDiff operand without the date conversion sqlglot's builder wrapped it in."""
    if isinstance(value, exp.TsOrDsToDate) and value.args.get("format") is None:
        inner: exp.Expr = value.this
        return inner
    return value


def _continues_chain(node: exp.Expr) -> bool:
    """Whether comparison ``node`` is an operand of the comparison above it (not the top
    of its chain)."""
    return isinstance(node.parent, _COMPARISONS) and node.arg_key in ("this", "expression")


def _regrouped_chain(tree: exp.Expr, top: exp.Expr) -> exp.Expr:
    """``tree`` with the chain of comparisons under ``top`` (and a predicate among its
    operands, as sqlglot reads one) grouped as Spark groups it: left to right, a predicate
    taking the comparisons before it as its first operand and those after it into its
    last (``s LIKE 'p' = true`` is ``s LIKE ('p' = true)``). The operator nodes are
    reused; a chain sqlglot grouped as Spark does is left as it is."""
    operands, operators = _chain_parts(top)
    predicates = [operand for operand in operands if _predicate(operand) is not None]
    regrouped_by_sqlglot = any(isinstance(o.expression, _COMPARISONS) for o in operators)
    if not predicates and not regrouped_by_sqlglot:
        return tree
    if len(predicates) > 1:
        raise UnsupportedSqlError(
            "two predicates (LIKE, BETWEEN, IN) in one chain of comparisons, which is not "
            "Spark syntax",
            _MIXED_PREDICATES_HINT,
        )
    parent, arg_key, index = top.parent, top.arg_key, top.index
    regrouped = _spark_grouped(operands, operators)
    if parent is None or arg_key is None:
        return regrouped
    parent.set(arg_key, regrouped, index)
    return tree


def _chain_parts(node: exp.Expr) -> tuple[list[exp.Expr], list[exp.Expr]]:
    """The operands of the chain of comparisons under ``node``, left to right, and the
    comparisons between them."""
    if not isinstance(node, _COMPARISONS):
        return [node], []
    left_operands, left_operators = _chain_parts(node.this)
    right_operands, right_operators = _chain_parts(node.expression)
    return left_operands + right_operands, [*left_operators, node, *right_operators]


def _predicate(operand: exp.Expr) -> tuple[exp.Expr, str | None] | None:
    """For a predicate (a LIKE, BETWEEN, IN, maybe negated or with ESCAPE): the node whose
    ``this`` is its first operand, and the argument of its last operand that takes the
    comparisons after it (None: none may follow); None for any other operand."""
    node = operand.this if isinstance(operand, exp.Not) else operand
    escaped = isinstance(node, exp.Escape)
    if escaped:
        node = node.this
    if type(node) not in _PREDICATE_LAST_OPERANDS:
        return None
    last = _PREDICATE_LAST_OPERANDS[type(node)]
    if escaped or isinstance(node.args.get(last or ""), exp.Any | exp.All):
        # ESCAPE '!' ends the predicate; Spark reads LIKE ANY (...) = x as a LIKE of
        # any(...) = x, which its analyzer refuses (any takes a BOOLEAN).
        return node, None
    return node, last


def _spark_grouped(operands: list[exp.Expr], operators: list[exp.Expr]) -> exp.Expr:
    """Operands and the comparisons between them, at most one operand a predicate (whose
    first operand stands for it in the chain), grouped as Spark's grammar groups them."""
    found = [(i, parts) for i, o in enumerate(operands) if (parts := _predicate(o)) is not None]
    if not found:
        return _left_grouped(operands, operators)
    position, (read, last) = found[0]
    predicate = operands[position]
    after = operators[position:]
    if after:
        if last is None:
            raise UnsupportedSqlError(
                f"a comparison after {read.key.upper()} in one chain, which is not Spark syntax",
                _MIXED_PREDICATES_HINT,
            )
        following = [read.args[last], *operands[position + 1 :]]
        read.set(last, _parenthesized(_left_grouped(following, after)))
    first = _left_grouped([*operands[:position], read.this], operators[:position])
    read.set("this", _parenthesized(first))
    return predicate


def _left_grouped(operands: list[exp.Expr], operators: list[exp.Expr]) -> exp.Expr:
    """``operands`` joined by the comparisons ``operators``, left-associative, a
    comparison inside another parenthesized (the generated SQL is read with its reader's
    precedence)."""
    grouped = operands[0]
    for operator, operand in zip(operators, operands[1:], strict=True):
        operator.set("this", _parenthesized(grouped))
        operator.set("expression", operand)
        grouped = operator
    return grouped


def _parenthesized(operand: exp.Expr) -> exp.Expr:
    return exp.Paren(this=operand) if isinstance(operand, _COMPARISONS) else operand


def _name_unmarked_calls(tree: exp.Expr, unmarked: dict[str, list[str]]) -> None:
    """The names of the calls sqlglot reads without handing on comments (``_UNMARKED_CALLS``),
    matched to the nodes of their kind in the order both appear (a call's node comes
    before the nodes of its arguments, as its name comes before theirs); none where the
    counts differ (another construct made such a node too)."""
    for upper, written in unmarked.items():
        kind = _UNMARKED_CALLS[upper]
        # (A CASE's WHEN branches are If nodes too: they are no call.)
        nodes = [n for n in tree.walk(bfs=False) if type(n) is kind and n.arg_key != "ifs"]
        if len(nodes) != len(written):
            continue
        for node, name in zip(nodes, written, strict=True):
            node.meta.setdefault(FUNCTION_NAME_KEY, name)


def _take_marks(node: exp.Expr, hosts: dict[int, list[exp.Expr]]) -> None:
    kept: list[str] = []
    for comment in node.comments or []:
        if comment.startswith(_CALL_MARK):
            hosts.setdefault(int(comment[len(_CALL_MARK) :]), []).append(node)
        else:
            kept.append(comment)
    node.comments = kept or None


def _built_as_written(tree: exp.Expr) -> exp.Expr:
    """``tree`` with each call of a private name (``_AS_WRITTEN``) built from its
    arguments, keeping the call's meta (its position) on the function built, and each
    PIVOT aggregate wrapped in a call its argument again."""
    for node in list(tree.find_all(exp.Anonymous)):
        name = node.name
        if name == _PIVOT_NAME and len(node.expressions) == 1:
            node.replace(node.expressions[0])
            continue
        if not name.startswith(_PRIVATE_NAME):
            continue
        built = _AS_WRITTEN[name[len(_PRIVATE_NAME) :]](list(node.expressions))
        function = built
        while isinstance(function, exp.IgnoreNulls | exp.RespectNulls):
            function = function.this
        function.meta.update(node.meta)
        if node is tree:
            return built
        node.replace(built)
    return tree


def _calls_by_start(tree: exp.Expr) -> dict[int, exp.Expr]:
    """The calls sqlglot recorded the position of (known functions, whatever node their
    builder made, and anonymous calls), by where their name starts: the outermost node
    of a position but a name's identifier (the only other node made of a call's name
    token)."""
    found: dict[int, exp.Expr] = {}
    for node in tree.walk():
        meta = node._meta  # read without creating an empty dict on every node
        if meta and "start" in meta and not isinstance(node, exp.Identifier):
            found.setdefault(meta["start"], node)
    return found


def _call_under(hosts: list[exp.Expr]) -> exp.Expr | None:
    """The call whose name's comments a node took: the node, or the call inside the
    window, alias ... sqlglot put around it."""
    for host in hosts:
        node: exp.Expr | None = host
        while isinstance(node, _CALL_WRAPPERS):
            node = node.this
        if isinstance(node, exp.Func):
            return node
    return None
