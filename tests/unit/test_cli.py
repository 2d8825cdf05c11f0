"""The ``dyntables`` command line: output, exit status and error format."""

from __future__ import annotations

from pathlib import Path

import pytest

from dyntables.cli import main

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "pipeline.sql"


def test_parse_prints_each_statement_of_the_example_pipeline(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["parse", str(EXAMPLE)]) == 0
    lines = capsys.readouterr().out.splitlines()
    kinds = [line.split()[1] for line in lines]
    assert kinds == [
        *["PassThrough"] * 4,  # the raw tables and their rows
        *["CreateDynamicTable"] * 3,
        "CreateMaterializedView",
        *["PassThrough"] * 4,  # a look at the results, then a change to the sources
        *["AlterDynamicTable"] * 3,
        *["PassThrough"] * 4,
        "ShowDynamicTables",
        "PassThrough",
    ]
    assert "name=dt_orders" in lines[4]
    assert "target_lag=TargetLag(seconds=600, downstream=False)" in lines[4]
    assert lines[12].endswith("action=REFRESH")


def test_syntax_error_prints_error_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "bad.sql"
    script.write_text("SELECT 1;\nALTER DYNAMIC TABLE t SET TARGET_LAG = '5 parsecs'")
    assert main(["parse", str(script)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("Error: invalid TARGET_LAG '5 parsecs': unknown unit")
    assert "(line 2, column 40)" in captured.err


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    script = tmp_path / "bad.sql"
    script.write_text("DROP DYNAMIC TABLE")
    with pytest.raises(Exception, match="expected a name"):
        main(["--debug", "parse", str(script)])
