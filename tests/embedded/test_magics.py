"""The IPython magics through a real ``InteractiveShell`` on the embedded engine."""

from __future__ import annotations

import io
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

from dyntables import DynamicTables
from dyntables.api import SHOW_TERMINAL_COLUMNS
from dyntables.notebook import display
from dyntables.notebook.install import installation
from dyntables.notebook.magics import DynamicTableMagics
from sparkshim import ShimSession

pytestmark = pytest.mark.embedded


@pytest.fixture
def shell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[InteractiveShell]:
    monkeypatch.chdir(tmp_path)  # the embedded default warehouse is ./spark-warehouse
    ipython = InteractiveShell.instance()
    ipython.reset(new_session=True)
    yield ipython
    if "dyntables" in ipython.extension_manager.loaded:
        ipython.run_line_magic("unload_ext", "dyntables")
    for kind in ("line", "cell"):
        ipython.magics_manager.magics[kind].pop("sql", None)
    ipython.reset(new_session=True)


def cell(shell: InteractiveShell, text: str) -> Any:
    """Run a cell as a user would; its result (raising what it raised)."""
    outcome = shell.run_cell(text, store_history=False)
    outcome.raise_error()
    return outcome.result


def shown(shell: InteractiveShell, value: Any) -> dict[str, str]:
    """The MIME bundle IPython would show for ``value``."""
    data, _ = shell.display_formatter.format(value)
    return data


def test_load_ext_registers_sql_and_dtsql(shell: InteractiveShell) -> None:
    cell(shell, "%load_ext dyntables")
    for kind in ("line", "cell"):
        assert {"sql", "dtsql"} <= set(shell.magics_manager.magics[kind])


def test_a_cell_runs_its_statements_and_shows_the_last_result(shell: InteractiveShell) -> None:
    cell(shell, "%load_ext dyntables")
    result = cell(
        shell,
        "%%sql\n"
        "CREATE TABLE orders (id INT, status STRING) USING DELTA;\n"
        "INSERT INTO orders VALUES (1, 'paid'), (2, 'returned'), (3, 'paid');\n"
        "CREATE DYNAMIC TABLE paid TARGET_LAG = '1 minute'\n"
        "  AS SELECT id FROM orders WHERE status = 'paid';\n"
        "SELECT id FROM paid ORDER BY id",
    )
    bundle = shown(shell, result)
    assert "<td>1</td>" in bundle["text/html"]
    assert "<td>3</td>" in bundle["text/html"]
    assert bundle["text/plain"].splitlines() == [
        "+---+",
        "| id|",
        "+---+",
        "|  1|",
        "|  3|",
        "+---+",
    ]


def test_without_spark_the_embedded_engine_is_made_and_shared(shell: InteractiveShell) -> None:
    cell(shell, "%load_ext dyntables")
    cell(shell, "%sql CREATE TABLE t (x INT) USING DELTA")
    spark = shell.user_ns["spark"]
    assert isinstance(spark, ShimSession)
    assert isinstance(shell.user_ns["dt"], DynamicTables)
    assert shell.user_ns["dt"].session is spark
    assert (Path.cwd() / "spark-warehouse").is_dir()
    # dyntables is installed on it: plain spark.sql takes the DDL too.
    cell(shell, "spark.sql(\"CREATE DYNAMIC TABLE d TARGET_LAG = '1 minute' AS SELECT x FROM t\")")
    assert cell(shell, "spark.sql('SHOW DYNAMIC TABLES').count()") == 1


def test_the_spark_of_the_namespace_is_used(shell: InteractiveShell, tmp_path: Path) -> None:
    spark = ShimSession(warehouse=tmp_path / "mine")
    shell.user_ns["spark"] = spark
    cell(shell, "%load_ext dyntables")
    cell(shell, "%sql CREATE TABLE t (x INT) USING DELTA")
    assert spark.catalog.tableExists("t")
    assert installation(spark) is not None
    assert not (Path.cwd() / "spark-warehouse").exists()


def test_output_option_stores_the_dataframe(shell: InteractiveShell) -> None:
    cell(shell, "%load_ext dyntables")
    result = cell(shell, "%%sql -o numbers -q\nSELECT explode(array(1, 2, 3)) AS n")
    assert result is None  # -q: nothing shown
    assert [row.n for row in shell.user_ns["numbers"].collect()] == [1, 2, 3]
    cell(shell, "%sql --output one SELECT 1 AS x")
    assert shell.user_ns["one"].collect()[0].x == 1


def test_show_displays_the_columns_that_fit_and_show_full_every_one(
    shell: InteractiveShell,
) -> None:
    cell(shell, "%load_ext dyntables")
    cell(
        shell,
        "%%sql\nCREATE TABLE t (x INT) USING DELTA;\n"
        "CREATE DYNAMIC TABLE d TARGET_LAG = '1 minute' WAREHOUSE = wh AS SELECT x FROM t",
    )
    compact = list(SHOW_TERMINAL_COLUMNS)
    bundle = shown(shell, cell(shell, "%%sql -o stored\nSHOW DYNAMIC TABLES"))
    header = "".join(f"<th>{name}</th>" for name in compact)
    assert f"<thead><tr>{header}</tr></thead>" in bundle["text/html"]
    assert "<td>wh</td>" not in bundle["text/html"]
    title = bundle["text/plain"].splitlines()[1]
    assert [part.strip() for part in title.strip("|").split("|")] == compact
    assert len(shell.user_ns["stored"].columns) == 18  # -o keeps the DataFrame whole

    bundle = shown(shell, cell(shell, "%sql SHOW FULL DYNAMIC TABLES"))
    assert "<th>refresh_mode_reason</th>" in bundle["text/html"]
    assert "<td>wh</td>" in bundle["text/html"]
    assert "<td>CREATE DYNAMIC TABLE d" in bundle["text/html"]
    assert "refresh_mode_reason" in bundle["text/plain"]


def test_python_variables_are_substituted(shell: InteractiveShell) -> None:
    cell(shell, "%load_ext dyntables")
    cell(shell, "low = 2\nword = 'paid'")
    result = cell(
        shell, "%%sql -o r\nSELECT {low} + 1 AS three, '{word}' AS w, '{{low}}' AS braces"
    )
    assert result is not None
    assert shell.user_ns["r"].collect()[0] == (3, "paid", "{low}")
    line = cell(shell, "%sql -o s SELECT {low} AS two, 'pay$low' AS dollar")
    assert line is not None
    assert shell.user_ns["s"].collect()[0] == (2, "pay$low")  # no IPython $-expansion


def test_an_unknown_variable_is_a_usage_error(shell: InteractiveShell) -> None:
    cell(shell, "%load_ext dyntables")
    with pytest.raises(UsageError, match="names no Python variable"):
        shell.run_cell_magic("sql", "", "SELECT {nowhere}")


def test_metadata_columns_survive_the_line_magic(shell: InteractiveShell) -> None:
    cell(shell, "%load_ext dyntables")
    cell(
        shell,
        "%%sql\nCREATE TABLE t (x INT) USING DELTA;\nINSERT INTO t VALUES (1), (5);\n"
        "CREATE DYNAMIC TABLE d TARGET_LAG = '1 minute' FROZEN WHERE (x < 3) AS SELECT x FROM t",
    )
    cell(shell, "%sql -o f SELECT x, METADATA$IS_FROZEN AS frozen FROM d ORDER BY x")
    assert [tuple(row) for row in shell.user_ns["f"].collect()] == [(1, True), (5, False)]


def test_an_existing_sql_magic_is_left_alone_until_claimed(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    def other_sql(line: str, body: str) -> str:  # another extension's %%sql
        return "other"

    shell.register_magic_function(other_sql, "cell", "sql")

    cell(shell, "%load_ext dyntables")
    assert "belongs to another extension" in capsys.readouterr().out
    assert cell(shell, "%%sql\nSELECT 1") == "other"
    assert cell(shell, "%%dtsql -o x\nSELECT 1 AS one") is not None
    cell(shell, "%dtsql --claim-sql")
    owner = shell.magics_manager.magics["cell"]["sql"].__self__
    assert isinstance(owner, DynamicTableMagics)
    cell(shell, "%%sql -o y\nSELECT 2 AS two")
    assert shell.user_ns["y"].collect()[0].two == 2


def test_html_display_limits_rows_with_a_note(shell: InteractiveShell) -> None:
    cell(shell, "%load_ext dyntables")
    result = cell(shell, "%%sql -l 2\nSELECT explode(sequence(1, 5)) AS n")
    page = shown(shell, result)["text/html"]
    assert page.count("<tr><td>") == 2
    assert "Showing the first 2 rows." in page
    text = shown(shell, result)["text/plain"]
    assert text.endswith("+\nonly showing top 2 rows")  # once


def test_ddl_without_columns_shows_nothing(shell: InteractiveShell, tmp_path: Path) -> None:
    class Frame:
        columns = ()

    assert display.displayable(Frame()) is None


def test_sparkshim_dataframes_render_as_html(shell: InteractiveShell, tmp_path: Path) -> None:
    spark = ShimSession(warehouse=tmp_path / "w")
    frame = spark.sql("SELECT explode(sequence(1, 25)) AS n, 'x' AS s")
    page = shown(shell, frame)["text/html"]
    assert page.startswith("<table border='1'>\n<tr><th>n</th><th>s</th></tr>\n")
    assert page.count("<tr><td>") == 20
    assert page.endswith("only showing top 20 rows\n")
    spark.conf.set("spark.sql.repl.eagerEval.maxNumRows", "3")
    assert shown(shell, frame)["text/html"].count("<tr><td>") == 3


def test_progress_shows_after_its_delay_as_text() -> None:
    stream = io.StringIO()
    with display.Progress(2, notebook=False, stream=stream, after=0.0) as progress:
        progress.step(0, "CreateDynamicTable")
        import time

        time.sleep(0.6)
        progress.step(1, "AlterDynamicTable")
    text = stream.getvalue()
    assert "statement 1 of 2" in text
    assert "CreateDynamicTable" in text
    assert text.rstrip().endswith("s")
    assert "] done, " in text.splitlines()[-1]


def test_quick_statements_show_no_progress() -> None:
    stream = io.StringIO()
    with display.Progress(1, notebook=False, stream=stream, after=30.0) as progress:
        progress.step(0, "PassThrough")
    assert stream.getvalue() == ""


def test_the_graph_renders_inline(shell: InteractiveShell) -> None:
    cell(shell, "%load_ext dyntables")
    cell(
        shell,
        "%%sql -q\nCREATE TABLE t (x INT) USING DELTA;\n"
        "CREATE DYNAMIC TABLE d TARGET_LAG = '1 minute' AS SELECT x FROM t",
    )
    graph = cell(shell, "dt.graph()")
    bundle = shown(shell, graph)
    assert "image/svg+xml" in bundle
    assert bundle["text/plain"] == graph.to_text()  # terminals print the text picture


def test_importing_dyntables_imports_neither_ipython_nor_spark() -> None:
    code = (
        "import sys, dyntables; dyntables.install; "
        "print(sorted(m for m in ('IPython', 'pyspark', 'sparkshim.session') if m in sys.modules))"
    )
    printed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert printed.strip() == "[]"


def test_a_session_of_unknown_format_asks_for_install_first(shell: InteractiveShell) -> None:
    class Conf:
        def get(self, key: str, default: Any = None) -> Any:
            return default

    class Session:  # a SparkSession whose extensions name neither Delta nor Iceberg
        conf = Conf()

    shell.user_ns["spark"] = Session()
    cell(shell, "%load_ext dyntables")
    with pytest.raises(UsageError, match=r"dyntables.install\(spark, table_format=...\) first"):
        shell.run_line_magic("sql", "SELECT 1")


def test_progress_in_notebooks_updates_one_display(monkeypatch: pytest.MonkeyPatch) -> None:
    import IPython.display

    shown_markup: list[str] = []

    class Handle:
        def update(self, markup: Any) -> None:
            shown_markup.append(markup.data)

    def fake_display(markup: Any, display_id: bool = False) -> Handle:
        assert display_id is True  # one output, updated in place
        shown_markup.append(markup.data)
        return Handle()

    monkeypatch.setattr(IPython.display, "display", fake_display)
    with display.Progress(2, notebook=True, after=0.0) as progress:
        progress.step(0, "CreateDynamicTable")
        import time

        time.sleep(0.6)
        progress.step(1, "PassThrough")
    assert shown_markup[0].startswith('<progress value="0" max="2"></progress>')
    assert shown_markup[-1].startswith('<progress value="2" max="2"></progress>')
    assert "done" in shown_markup[-1]
