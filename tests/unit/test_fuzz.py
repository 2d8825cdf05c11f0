"""Fuzz the front-end: whatever the text, ``parse`` returns statements or raises a
``DynamicTableError``, and ordinary SQL comes back untouched. No engine is needed.

The properties, each with its own oracle:

* Nothing but a ``DynamicTableError`` escapes. Mutated DDL (characters and tokens deleted,
  inserted, duplicated and swapped in valid statements, long runs, odd characters), random
  tokens and text after our keywords, and fully random text must not make ``parse`` raise
  anything else. They must not hit its "internal error" safety net either. A syntax error
  must point inside the text.
* Ordinary SQL passes through. Random statements (with strings and comments holding ``;``
  and quotes, and nested parentheses) joined by ``;`` with blanks and comments come back as
  one ``PassThrough`` per statement. Each one's text is the exact slice of the script, from
  the first non-blank character after the previous ``;`` up to, not including, the next
  ``;``.
* Every ``PassThrough`` that ``parse`` returns re-parses to itself.
* Blanks and comments between the tokens of a statement, or around it, do not change what
  it means.
* A comment left open at the end is a syntax error, nested or not, as in Spark.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import dyntables
from dyntables import DynamicTableError, DynamicTableSyntaxError, Statement
from dyntables.errors import line_and_column
from dyntables.statements import PassThrough, Span

# Sized so that the whole file runs in about half a minute on 2 cores.
FUZZ = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
FUZZ_MORE = settings(FUZZ, max_examples=600)  # cheap examples, the main property
FUZZ_LESS = settings(FUZZ, max_examples=200)  # examples that are slow to generate

# ---- a corpus of valid statements: every form and every clause ---------------------------

CORPUS = [
    # seed 001: frozen region plus a backfill from a Time Travel snapshot
    """CREATE OR REPLACE DYNAMIC TABLE dt_orders
  TARGET_LAG = '10 minutes'
  WAREHOUSE = transform_wh
  FROZEN WHERE (order_date < '2025-01-01')
  BACKFILL FROM dt_orders_snapshot AT (TIMESTAMP => '2025-04-01 12:00:00'::TIMESTAMP_NTZ)
AS
  SELECT
    order_id, customer_id, order_date
  FROM raw_orders
  WHERE order_status != 'returned'""",
    # every CREATE clause at once (AS <query> form)
    """CREATE OR REPLACE TRANSIENT DYNAMIC TABLE sales.`dt orders` (
  order_id BIGINT NOT NULL COMMENT 'the key; unique',
  amount DECIMAL(10, 2),
  tags ARRAY<STRING>,
  attrs MAP<STRING, STRUCT<a: INT, b: STRING NOT NULL>>,
  span INTERVAL DAY TO SECOND,
  placed_at TIMESTAMP,
  note
)
  TARGET_LAG = '90 seconds'
  WAREHOUSE = 'transform_wh'
  REFRESH_MODE = INCREMENTAL
  INITIALIZE = ON_CREATE
  IMMUTABLE WHERE (placed_at < CURRENT_TIMESTAMP() - INTERVAL '30 days')
  BACKFILL FROM snap.dt_orders_snapshot BEFORE (STATEMENT => '<statement_id>')
  CLUSTER BY (placed_at, substr(note, 1, 3))
  COMMENT = 'it''s a ; comment with \\'escapes\\''
  DATA_RETENTION_TIME_IN_DAYS = 7
  PARTITIONED BY (days(placed_at))
  TBLPROPERTIES ('delta.appendOnly' = 'false', owner = data_team, a.b.c = -1.5, n 3)
  COPY GRANTS
AS
  -- a comment; with a semicolon
  SELECT order_id, amount /* ; ' " */, "dq;string", `odd;name`
  FROM raw_orders
  WHERE status IN ('a;b', 'c)d') AND (x = 1 OR (y = 2))""",
    # seed 003: custom incrementalization with MERGE INTO SELF
    """CREATE OR REPLACE DYNAMIC TABLE dt_player_scores (
  player_id INT,
  total_score INT
)
  TARGET_LAG = '1 minute'
  WAREHOUSE = transform_wh
  REFRESH_MODE = CUSTOM_INCREMENTAL
  INITIALIZE = ON_SCHEDULE
  BACKFILL FROM player_scores_snapshot
  START AT (OFFSET => -3600)
  REFRESH USING (
    MERGE INTO SELF AS tgt
    USING (
      SELECT player_id, SUM(score) AS batch_score
      FROM match_results CHANGES(INFORMATION => APPEND_ONLY)
      GROUP BY player_id
    ) AS src
    ON tgt.player_id = src.player_id
    WHEN MATCHED THEN
      UPDATE SET tgt.total_score = tgt.total_score + src.batch_score
    WHEN NOT MATCHED THEN
      INSERT (player_id, total_score) VALUES (src.player_id, src.batch_score);
  )""",
    """CREATE DYNAMIC TABLE IF NOT EXISTS dt_deletions_log (id INT, name STRING, email STRING)
  TARGET_LAG = DOWNSTREAM
  START AT (STREAM => 'users_stream')
  REFRESH USING (
    INSERT INTO SELF
    SELECT * EXCLUDE (METADATA$ISUPDATE, METADATA$ACTION)
    FROM users CHANGES(INFORMATION => DEFAULT)
    WHERE NOT METADATA$ISUPDATE AND METADATA$ACTION = 'DELETE'
  )""",
    "EXPLAIN CREATE DYNAMIC TABLE t TARGET_LAG = '1 hour' AS SELECT * FROM s",
    "ALTER DYNAMIC TABLE dt_orders SUSPEND",
    "alter dynamic table if exists db.dt_orders resume",
    "ALTER DYNAMIC TABLE dt_orders REFRESH",
    "ALTER DYNAMIC TABLE dt_orders SET TARGET_LAG = '5 minutes'",
    "ALTER DYNAMIC TABLE dt_orders SET WAREHOUSE = other_wh",
    "ALTER DYNAMIC TABLE dt_orders SET REFRESH_MODE = FULL",
    "ALTER DYNAMIC TABLE dt_orders SET FROZEN WHERE (order_date < '2025-01-01')",
    "ALTER DYNAMIC TABLE dt_orders UNSET IMMUTABLE WHERE",
    "ALTER DYNAMIC TABLE dt_orders RENAME TO sales.dt_orders_v2",
    "ALTER DYNAMIC TABLE dt_orders SET COMMENT = 'hello; world'",
    "DROP DYNAMIC TABLE IF EXISTS `my``db`.dt_orders",
    "SHOW DYNAMIC TABLES LIKE 'dt_%' IN SCHEMA sales",
    "SHOW DYNAMIC TABLES IN db.sales",
    "DESCRIBE DYNAMIC TABLE dt_orders",
    "DESC DYNAMIC TABLE dt_orders",
    "EXPLAIN DYNAMIC TABLE dt_orders",
    """CREATE OR REPLACE MATERIALIZED VIEW sales.daily_totals (day, total COMMENT 'sum')
  COMMENT 'daily'
  TBLPROPERTIES ('k' = 'v')
AS SELECT DATE(placed_at) AS day, SUM(amount) AS total
FROM sales.orders
GROUP BY day""",
    "REFRESH MATERIALIZED VIEW sales.daily_totals",
    "CALL BQ.REFRESH_MATERIALIZED_VIEW('project.sales.daily_totals')",
    "DROP MATERIALIZED VIEW IF EXISTS sales.daily_totals",
]

# A script mixing ordinary SQL with ours, mutated as a whole.
SCRIPT = (
    "SELECT ';' AS semi;\n"
    + ";\n".join(CORPUS[4:8])
    + ";\n/* a comment */ INSERT INTO t VALUES ('x;y');\n"
    + CORPUS[2]
)

# ---- mutations ---------------------------------------------------------------------------

# Keywords, literals and characters that mutations insert.
_WORDS_TEXT = """CREATE DYNAMIC TABLE TARGET_LAG = AS SELECT REFRESH USING MERGE INSERT INTO SELF
    FROZEN IMMUTABLE WHERE BACKFILL FROM AT BEFORE START TIMESTAMP OFFSET STATEMENT VERSION
    STREAM => :: DOWNSTREAM OR REPLACE ALTER IF NOT EXISTS MATERIALIZED VIEW TBLPROPERTIES
    CLUSTER BY PARTITIONED COMMENT NULL SET UNSET RENAME TO CALL BQ.REFRESH_MATERIALIZED_VIEW
    -1 0 1e309 ARRAY< > < ` `` ``` ' '' " \\ \\' ( ) , . ; -- /* */"""
_WORDS = [
    *_WORDS_TEXT.split(),
    *["'10 minutes'", "'-5 hours'", "'1.5 days'", "'0 seconds'", "'99999999999999999999 days'"],
    *["\n", "\r", "\r\n", "\t", "\x00", "\x0b", "\ufeff", "\u00a0", "\u2028"],
    *["é", "İ", "ß", "\U0001f600", "\udcff"],
]
# Runs of comment delimiters stay shorter: an unterminated run of n "/*" costs the ANTLR
# lexer O(n²) (about 4 s for n = 500 inside a CREATE), which would only slow the suite.
_LONG_RUNS = [
    *["(" * 3000, ")" * 3000, "a" * 20000, "'" * 501, "-" * 4001, " ." * 2000, "\\" * 999],
    *["/*" * 100, "*/" * 100, "/* " * 100 + "*/ " * 100],
]
_TOKEN = re.compile(r"\w+|\s+|.", re.S)


@st.composite
def mutated(draw: st.DrawFn) -> str:
    """A corpus statement with a few random edits applied one after another."""
    text: str = draw(st.sampled_from([*CORPUS, SCRIPT]))
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(
            st.sampled_from(
                [
                    "delete",
                    "insert",
                    "duplicate",
                    "swap",
                    "delete-token",
                    "insert-token",
                    "swap-tokens",
                    "long-run",
                    "truncate",
                    "case",
                ]
            )
        )
        size = len(text)
        i = draw(st.integers(0, size))
        j = draw(st.integers(0, size))
        i, j = min(i, j), max(i, j)
        if kind == "delete":
            text = text[:i] + text[j:]
        elif kind == "insert":
            piece = draw(st.sampled_from(_WORDS) | st.text(min_size=1, max_size=4))
            text = text[:i] + piece + text[i:]
        elif kind == "duplicate":
            text = text[:j] + text[i:j] + text[j:]
        elif kind == "swap" and j < size:
            chars = list(text)
            chars[i], chars[j] = chars[j], chars[i]
            text = "".join(chars)
        elif kind == "truncate":
            text = text[:i]
        elif kind == "case":
            text = text[:i] + text[i:j].swapcase() + text[j:]
        elif kind == "long-run":
            text = text[:i] + draw(st.sampled_from(_LONG_RUNS)) + text[i:]
        else:
            tokens = _TOKEN.findall(text)
            if not tokens:
                continue
            a = draw(st.integers(0, len(tokens) - 1))
            b = draw(st.integers(0, len(tokens) - 1))
            if kind == "delete-token":
                del tokens[a]
            elif kind == "insert-token":
                tokens.insert(a, " " + draw(st.sampled_from(_WORDS)) + " ")
            else:
                tokens[a], tokens[b] = tokens[b], tokens[a]
            text = "".join(tokens)
    return text


_OUR_PREFIXES = [
    "CREATE DYNAMIC TABLE ",
    "CREATE OR REPLACE TRANSIENT DYNAMIC TABLE t ",
    "CREATE OR ALTER DYNAMIC TABLE ",
    "ALTER DYNAMIC TABLE t ",
    "DROP DYNAMIC TABLE ",
    "SHOW DYNAMIC TABLES ",
    "DESCRIBE DYNAMIC TABLE ",
    "EXPLAIN DYNAMIC TABLE ",
    "EXPLAIN CREATE DYNAMIC TABLE t ",
    "CREATE MATERIALIZED VIEW ",
    "REFRESH MATERIALIZED VIEW ",
    "DROP MATERIALIZED VIEW ",
    "CALL BQ.REFRESH_MATERIALIZED_VIEW",
]

# ---- the checks every outcome must pass ---------------------------------------------------


def check_outcome(text: str) -> list[Statement]:
    """Parse ``text``: any exception but a ``DynamicTableError`` propagates (and fails the
    test); a syntax error must be located inside the text and must not be the "internal
    error" that ``parse`` wraps around its own defects. Returns the statements (checked
    by ``check_statements``), or ``[]`` after an error.
    """
    error: DynamicTableError | None
    try:
        statements = dyntables.parse(text)
    except DynamicTableError as raised:
        error = raised
    else:
        error = None
    if isinstance(error, DynamicTableSyntaxError):
        assert not error.reason.startswith("internal error"), error.reason
        check_location(text, error.line, error.column)
    if error is not None:
        return []
    check_statements(text, statements)
    return statements


def check_statements(text: str, statements: list[Statement]) -> None:
    """Statements carry spans inside the text, in order, with the right line and column;
    a pass-through's text is the slice of its span."""
    assert isinstance(statements, list)
    previous_stop = 0
    for statement in statements:
        assert isinstance(statement, Statement)
        span = getattr(statement, "span", None)  # every statement has one
        assert isinstance(span, Span)
        assert previous_stop <= span.start <= span.stop <= len(text)
        assert (span.line, span.column) == line_and_column(text, span.start)
        previous_stop = span.stop
        if isinstance(statement, PassThrough):
            assert text[span.start : span.stop] == statement.sql


def check_location(text: str, line: int, column: int) -> None:
    """A 1-based line and column that point into ``text`` (or just past a line's end)."""
    lines = text.split("\n")
    assert 1 <= line <= len(lines), (line, len(lines))
    assert 1 <= column <= len(lines[line - 1]) + 1, (column, len(lines[line - 1]))


# ---- property 1: nothing but a DynamicTableError escapes ----------------------------------


def test_the_corpus_parses() -> None:
    """The mutation fuzz starts from valid statements, or it would test little."""
    for text in CORPUS:
        (statement,) = dyntables.parse(text)
        assert not isinstance(statement, PassThrough), text
    kinds = [type(statement).__name__ for statement in dyntables.parse(SCRIPT)]
    assert kinds == [
        "PassThrough",
        "ExplainCreateDynamicTable",
        *["AlterDynamicTable"] * 3,
        "PassThrough",
        "CreateDynamicTable",
    ]


@FUZZ_MORE
@given(mutated())
def test_mutated_ddl_raises_only_dynamic_table_errors(text: str) -> None:
    check_outcome(text)


@FUZZ
@given(st.sampled_from(_OUR_PREFIXES), st.lists(st.sampled_from(_WORDS), max_size=40))
def test_random_tokens_after_our_keywords_raise_only_dynamic_table_errors(
    prefix: str, words: list[str]
) -> None:
    check_outcome(prefix + " ".join(words))


@FUZZ
@given(st.text())
@example("\x00")
@example("DROP DYNAMIC TABLE \x00")
@example("CREATE DYNAMIC TABLE t (" + "(" * 5000)
def test_random_text_raises_only_dynamic_table_errors(text: str) -> None:
    check_outcome(text)


@FUZZ
@given(
    st.sampled_from(["SELECT ", "INSERT INTO t VALUES (", *CORPUS[5:10], *_OUR_PREFIXES]),
    st.sampled_from(["'", '"', "`"]),
    st.text(max_size=8),
    st.sampled_from(["", "\\", "\\\\", "\\\\\\"]),
)
def test_an_unterminated_literal_raises_only_dynamic_table_errors(
    statement: str, quote: str, inside: str, backslashes: str
) -> None:
    """A literal left open at the end of the text, possibly ending in backslashes."""
    check_outcome(statement + " " + quote + inside + backslashes)


# Text made mostly of the characters the splitter, recognizer and lexer care about.
_PUNCTUATION = [*"'\"`\\;()-/*\n\r =,.:<>$", "a", "ab", "AS", "SELECT", "DYNAMIC TABLE "]


@FUZZ
@given(
    st.sampled_from(["", *_OUR_PREFIXES]),
    st.lists(st.sampled_from(_PUNCTUATION), max_size=30).map("".join),
)
@example("", "'\\")
@example("SELECT ", '"abc\\')
def test_random_punctuation_raises_only_dynamic_table_errors(prefix: str, rest: str) -> None:
    check_outcome(prefix + rest)


@FUZZ
@given(st.sampled_from(_OUR_PREFIXES), st.text())
def test_random_text_after_our_keywords_raises_only_dynamic_table_errors(
    prefix: str, rest: str
) -> None:
    check_outcome(prefix + rest)


def test_a_non_string_is_a_dynamic_table_error() -> None:
    with pytest.raises(DynamicTableError):
        dyntables.parse(b"SELECT 1")  # type: ignore[arg-type]


# ---- property 2: ordinary SQL passes through, one statement each, exactly -----------------

# Words that could turn ordinary SQL into one of our forms if they came second or third.
_OUR_WORDS = {"DYNAMIC", "MATERIALIZED", "TABLES", "BQ", "OR", "REPLACE", "ALTER", "VIEW"}
# Blank to Spark's lexer and ours (Spark 3.5 rejects U+00A0 and other Unicode spaces).
_BLANKS = [" ", "  ", "\n", "\t", "\r\n", "\f", "\v"]

_NAME_START = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_"
identifiers = (
    st.tuples(st.sampled_from(_NAME_START), st.text(_NAME_START + "0123456789", max_size=8))
    .map("".join)
    .filter(lambda name: name.upper() not in _OUR_WORDS)
)


def _quoted(quote: str) -> st.SearchStrategy[str]:
    """A string literal with ``;``, the other quotes, doubled and escaped quotes inside."""
    plain = st.text(
        st.characters(exclude_characters=quote + "\\", exclude_categories=["Cs"]), max_size=6
    )
    fragment = plain | st.sampled_from([";", quote * 2, "\\" + quote, "\\\\", "--", "/*", "("])
    return st.lists(fragment, max_size=5).map(lambda parts: quote + "".join(parts) + quote)


def _comment_body() -> st.SearchStrategy[str]:
    """Comment text: no line end (Spark ends a ``--`` comment at ``\r`` too, the splitter
    only at ``\n``), and no ``/*`` or ``*/`` even where it meets the delimiters around it."""
    fragments = st.text(st.characters(exclude_characters="\n\r", exclude_categories=["Cs"]))
    fragments |= st.sampled_from(["*", "/", "**", "'", ";", "--", "; CREATE DYNAMIC TABLE x"])
    return (
        st.lists(fragments, max_size=4)
        .map("".join)
        .filter(lambda body: "/*" not in body and "*/" not in body)
        .filter(lambda body: not body.startswith(("*", "/")) and not body.endswith(("*", "/")))
    )


block_comments = st.recursive(
    _comment_body().map(lambda body: "/*" + body + "*/"),
    lambda inner: st.tuples(_comment_body(), inner, _comment_body()).map(
        lambda parts: "/*" + parts[0] + parts[1] + parts[2] + "*/"
    ),
    max_leaves=3,
)
line_comments = _comment_body().map(lambda body: "--" + body + "\n")
# Cheap to draw, and each one a trap for a naive splitter or recognizer.
_FIXED_COMMENTS = [
    "/* c */",
    "/**/",
    "/* ; */",
    '/* it\'s; "x" `y */',
    "/* /* nested; */ still; */",
    "/* CREATE DYNAMIC TABLE t */",
    "/* ( */",
    "/* ) */",
    "/*+ hint */",
    "/* -- */",
    "-- x; y\n",
    "-- it's\n",
    "--\n",
    "-- DROP DYNAMIC TABLE t;\n",
    "-- /*\n",
]
fixed_comments = st.sampled_from(_FIXED_COMMENTS)
comments = fixed_comments | block_comments | line_comments

literals = (
    st.integers(-(10**6), 10**6).map(str)
    | _quoted("'")
    | _quoted('"')
    | st.text(st.characters(exclude_characters="`", exclude_categories=["Cs"]), max_size=6).map(
        lambda name: "`" + name + "`"
    )
    | identifiers
)
expressions = st.recursive(
    literals,
    lambda inner: (
        st.tuples(inner, st.sampled_from(["+", "*", "=", "<>", "AND", "||", "-", "/"]), inner).map(
            " ".join
        )
        | st.tuples(identifiers, st.lists(inner, max_size=3)).map(
            lambda parts: parts[0] + "(" + ", ".join(parts[1]) + ")"
        )
        | inner.map(lambda expression: "( " + expression + " )")
    ),
    max_leaves=8,
)

# Templates whose leading words are never one of our forms; {} are expressions, {n} names.
_TEMPLATES = [
    "SELECT {}, {} FROM {n} WHERE {}",
    "select * from {n} where {} group by {} having {}",
    "INSERT INTO {n} VALUES ({}, {})",
    "INSERT OVERWRITE TABLE {n} SELECT {} FROM {n}",
    "UPDATE {n} SET {n} = {} WHERE {}",
    "DELETE FROM {n} WHERE {}",
    "WITH {n} AS (SELECT {} AS {n}) SELECT * FROM {n}",
    "MERGE INTO {n} USING {n} ON {} WHEN MATCHED THEN UPDATE SET {n} = {}",
    "CREATE TABLE {n} (id INT, {n} STRING) USING delta",
    "CREATE TABLE dynamic_table AS SELECT {} FROM {n}",
    "CREATE OR REPLACE TEMPORARY VIEW {n} AS SELECT {}",
    "create view dynamic_tables as select {}",
    "DROP TABLE IF EXISTS {n}",
    "DROP VIEW materialized_view",
    "ALTER TABLE {n} SET TBLPROPERTIES ('dynamic' = {})",
    "SHOW TABLES LIKE 'dynamic%'",
    "DESCRIBE TABLE {n}",
    "DESC {n}",
    "EXPLAIN SELECT 'CREATE DYNAMIC TABLE x' FROM {n}",
    "REFRESH TABLE {n}",
    "CALL {n}.{n}({})",
    "USE {n}",
    "SET spark.sql.shuffle.partitions = {}",
    "VALUES ({}), ({})",
    "(SELECT {}) UNION ALL (SELECT {})",
    "CACHE TABLE {n}",
    "OPTIMIZE {n} ZORDER BY ({n})",
]


_TEMPLATE_ATOM = re.compile(r"'[^']*'|\{n?\}|[^\s{']+")


def _case(word: str, flips: list[bool]) -> str:
    return "".join(c.swapcase() if i < len(flips) and flips[i] else c for i, c in enumerate(word))


@st.composite
def ordinary_statements(draw: st.DrawFn) -> str:
    """One ordinary SQL statement with no top-level ``;``: a template filled with random
    names and expressions, tokens separated by blanks or comments."""
    template = draw(st.sampled_from(_TEMPLATES))
    atoms: list[str] = []  # never split: a gap inside a string literal would change it
    for atom in _TEMPLATE_ATOM.findall(template):
        if atom == "{}":
            atoms.append(draw(expressions))
        elif atom == "{n}":
            atoms.append(draw(identifiers))
        else:
            atoms.append(atom)
    # The first word keeps its spelling up to case; later gaps may hold comments.
    text = _case(atoms[0], draw(st.lists(st.booleans(), max_size=8)))
    for atom in atoms[1:]:
        gap = draw(st.sampled_from(_BLANKS) | fixed_comments.map(lambda c: " " + c + " "))
        text += gap + atom
    return text


@st.composite
def scripts(draw: st.DrawFn) -> tuple[str, list[tuple[int, int]]]:
    """A script of ordinary statements and the expected ``[start, stop)`` of each.

    Between statements: blanks, comments, and empty statements (``;`` with only blanks
    and comments before it), which ``parse`` drops.
    """
    statements = draw(st.lists(ordinary_statements(), min_size=1, max_size=5))
    filler = st.lists(st.sampled_from(_BLANKS) | comments, max_size=3).map("".join)
    text = ""
    expected: list[tuple[int, int]] = []
    for index, statement in enumerate(statements):
        for _ in range(draw(st.integers(0, 2))):  # empty statements
            text += draw(filler) + ";"
        leading = draw(filler)
        trailing = draw(filler)
        chunk = leading + statement + trailing
        start = len(text) + len(chunk) - len(chunk.lstrip())
        text += chunk
        expected.append((start, len(text)))
        terminated = index < len(statements) - 1 or draw(st.booleans())
        if terminated:
            text += ";"
    # After a last ";", blanks and comments make a piece that is dropped; without one,
    # they belong to the last statement, which runs to the end of the text.
    text += draw(filler)
    if not terminated:
        expected[-1] = (expected[-1][0], len(text))
    return text, expected


@FUZZ_LESS
@given(scripts())
@example(("SELECT ';' ; -- note\n/* only; a comment */ ; SELECT (1;2)", [(0, 11), (45, 57)]))
@example(("/* CREATE DYNAMIC TABLE t */ SELECT 1", [(0, 37)]))
def test_ordinary_sql_passes_through_one_statement_each(
    script: tuple[str, list[tuple[int, int]]],
) -> None:
    text, expected = script
    statements = dyntables.parse(text)  # an error here fails the test
    check_statements(text, statements)

    passed = [s for s in statements if isinstance(s, PassThrough)]
    assert passed == statements, "ordinary SQL was taken for one of our statements"
    assert [s.sql for s in passed] == [text[start:stop] for start, stop in expected]
    assert [(s.span.start, s.span.stop) for s in passed if s.span] == expected


# ---- property 3: a pass-through re-parses to itself --------------------------------------


@FUZZ_LESS
@given(st.text() | mutated() | scripts().map(lambda script: script[0]))
def test_a_pass_through_reparses_to_itself(text: str) -> None:
    for statement in check_outcome(text):
        if isinstance(statement, PassThrough):
            assert dyntables.parse(statement.sql) == [statement]


# ---- property 4: blanks and comments between tokens do not change the statement ----------

# Statements with no embedded SQL: every gap between their tokens may hold any blanks and
# comments. (Inside a query or predicate a comment is part of the verbatim text.)
_NO_EMBEDDED_SQL = [
    s for s in CORPUS if s.split()[0].upper() in {"ALTER", "DROP", "SHOW", "DESCRIBE", "DESC"}
] + [
    "EXPLAIN DYNAMIC TABLE dt_orders",
    "REFRESH MATERIALIZED VIEW sales.daily_totals",
    "CALL BQ.REFRESH_MATERIALIZED_VIEW('project.sales.daily_totals')",
]
_NO_EMBEDDED_SQL.remove(
    "ALTER DYNAMIC TABLE dt_orders SET FROZEN WHERE (order_date < '2025-01-01')"
)
_LEXEME = re.compile(r"`(?:[^`]|``)*`|'(?:[^'\\]|\\.|'')*'|\w+|=>|\S")


@st.composite
def respaced(draw: st.DrawFn, texts: list[str], blanks: list[str]) -> tuple[str, str]:
    """A statement and the same statement with random blanks and comments in its gaps."""
    original = draw(st.sampled_from(texts))
    gap = st.lists(st.sampled_from(blanks) | fixed_comments, min_size=1, max_size=3)
    lexemes = _LEXEME.findall(original)
    return original, draw(gap.map("".join)) + "".join(
        lexeme + draw(gap.map("".join)) for lexeme in lexemes
    )


@FUZZ
@given(respaced(_NO_EMBEDDED_SQL, _BLANKS))
@example(("DROP DYNAMIC TABLE t", "DROP DYNAMIC TABLE /* c */ t"))
def test_comments_between_tokens_do_not_change_the_statement(pair: tuple[str, str]) -> None:
    original, respaced_text = pair
    assert dyntables.parse(respaced_text) == dyntables.parse(original)


@FUZZ
@given(st.sampled_from(CORPUS), st.lists(st.sampled_from(_BLANKS) | comments, max_size=3))
@example(CORPUS[0], ["/* c */"])
def test_comments_around_a_statement_do_not_change_it(text: str, filler: list[str]) -> None:
    around = "".join(filler)
    assert dyntables.parse(around + text + around) == dyntables.parse(text)


words = st.text("abcxyz;'\"`()-", min_size=1, max_size=5).filter(
    lambda word: "--" not in word and "/*" not in word and "*/" not in word
)


@FUZZ
@given(
    st.sampled_from(_NO_EMBEDDED_SQL),
    st.lists(words | block_comments, max_size=4).map(" ".join),
)
@example("DROP DYNAMIC TABLE t", "a /* b */")
def test_an_unterminated_comment_is_a_syntax_error(text: str, inside: str) -> None:
    """Comments nest, in Spark and in the splitter; one left open runs to the end."""
    with pytest.raises(DynamicTableSyntaxError):
        dyntables.parse(text + " /* " + inside)
