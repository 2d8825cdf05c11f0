"""docs/sql-reference.md stays true: every example in it is run against the parser.

* each ```sql block parses, unless the next block is a ```text block starting with an
  error class name, in which case parsing must raise exactly that text;
* each row of the parse-time rules table raises its stated message;
* each row of the ALTER table parses to the stated action;
* the ```python blocks with ``>>>`` run as doctests.
"""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import pytest

import dyntables
from dyntables.statements import AlterDynamicTable

DOC_PATH = Path(__file__).resolve().parents[2] / "docs" / "sql-reference.md"
DOC = DOC_PATH.read_text()
BLOCKS = [
    (match.group(1), match.group(2), DOC.count("\n", 0, match.start()) + 1)
    for match in re.finditer(r"```(\w*)\n(.*?)```", DOC, re.DOTALL)
]
ERROR_OUTPUT = re.compile(r"(DynamicTableSyntaxError|UnsupportedStatementError): ")


def sql_examples() -> list[pytest.param]:
    examples = []
    for index, (language, body, line) in enumerate(BLOCKS):
        if language != "sql":
            continue
        following = BLOCKS[index + 1] if index + 1 < len(BLOCKS) else ("", "", 0)
        is_error = following[0] == "text" and ERROR_OUTPUT.match(following[1])
        expected_error = following[1].rstrip("\n") if is_error else None
        examples.append(pytest.param(body.rstrip("\n"), expected_error, id=f"line{line}"))
    return examples


def table_rows(marker: str) -> list[list[str]]:
    """The body rows of the table between ``<!-- marker -->`` and ``<!-- /marker -->``."""
    match = re.search(rf"<!-- {marker} -->\n(.*?)<!-- /{marker} -->", DOC, re.DOTALL)
    assert match is not None, f"docs/sql-reference.md lost its {marker} table"
    rows = [row for row in match.group(1).splitlines()[2:] if row.startswith("|")]
    return [
        [cell.strip().replace("\\|", "|") for cell in re.split(r"(?<!\\)\|", row)[1:-1]]
        for row in rows
    ]


@pytest.mark.parametrize(("sql", "expected_error"), sql_examples())
def test_sql_example(sql: str, expected_error: str | None) -> None:
    if expected_error is None:
        assert dyntables.parse(sql)
        return
    with pytest.raises(dyntables.DynamicTableError) as raised:
        dyntables.parse(sql)
    assert f"{type(raised.value).__name__}: {raised.value}" == expected_error


@pytest.mark.parametrize(
    ("rule", "example", "message"), table_rows("rules-table"), ids=lambda value: value[:40]
)
def test_parse_time_rule(rule: str, example: str, message: str) -> None:
    with pytest.raises(dyntables.DynamicTableSyntaxError) as raised:
        dyntables.parse(example.strip("`"))
    assert raised.value.reason == message.strip("`"), rule


@pytest.mark.parametrize(("action", "example", "meaning"), table_rows("alter-table"))
def test_alter_example(action: str, example: str, meaning: str) -> None:
    (statement,) = dyntables.parse(example.strip("`"))
    assert isinstance(statement, AlterDynamicTable)
    # "SET IMMUTABLE WHERE ( <predicate> )" -> SET_FROZEN_WHERE, "RENAME TO <name>" -> RENAME_TO
    words = re.sub(r"\s*[\[=(<].*$", "", action.strip("`")).replace("IMMUTABLE", "FROZEN")
    assert statement.action.value == words.replace(" ", "_")


def test_python_examples() -> None:
    source = "\n".join(body for language, body, _ in BLOCKS if language == "python")
    test = doctest.DocTestParser().get_doctest(source, {}, DOC_PATH.name, str(DOC_PATH), 0)
    assert test.examples, "the SQL reference lost its Python examples"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    assert runner.failures == 0
