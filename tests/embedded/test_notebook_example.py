"""examples/notebook.ipynb, executed headlessly (nbclient + ipykernel) on the embedded
engine, with its outputs checked cell by cell (cells are found by their tags)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

pytestmark = pytest.mark.embedded

NOTEBOOK = Path(__file__).parents[2] / "examples" / "notebook.ipynb"


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory) -> Any:
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    folder = tmp_path_factory.mktemp("notebook")  # the kernel's cwd: ./spark-warehouse
    client = NotebookClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": folder}}
    )
    client.execute()
    return notebook


def outputs(notebook: Any, tag: str) -> list[Any]:
    tagged = [c for c in notebook.cells if tag in c.metadata.get("tags", [])]
    assert len(tagged) == 1, f"one cell tagged {tag!r}"
    return list(tagged[0].outputs)


def result(notebook: Any, tag: str, mime: str) -> str:
    """The cell's result (its execute_result) in one MIME type."""
    results = [o for o in outputs(notebook, tag) if o.output_type == "execute_result"]
    assert len(results) == 1, f"cell {tag!r} shows one result"
    return str(results[0].data[mime])


def test_the_notebook_runs_without_errors(executed: Any) -> None:
    errors = [
        f"{o.ename}: {o.evalue}"
        for c in executed.cells
        if c.cell_type == "code"
        for o in c.outputs
        if o.output_type == "error"
    ]
    assert errors == []
    assert outputs(executed, "setup") == []  # install and %load_ext print nothing


def test_sources_show_as_an_html_table(executed: Any) -> None:
    page = result(executed, "sources", "text/html")
    assert page.count("<tr><td>") == 4
    assert "<td>returned</td>" in page


def test_dynamic_tables_are_created_and_shown(executed: Any) -> None:
    created = result(executed, "create", "text/plain")
    assert "Dynamic table dt_customer_totals successfully created." in created
    shown = result(executed, "show", "text/html")
    assert "<td>dt_orders</td>" in shown
    assert "<td>10 minutes</td>" in shown
    assert "<td>DOWNSTREAM</td>" in shown
    assert "<td>INCREMENTAL</td>" in shown
    assert "<td>CREATE DYNAMIC TABLE" not in shown  # the terminal-sized columns, not FULL's


def test_the_refresh_is_incremental(executed: Any) -> None:
    page = result(executed, "refresh", "text/html")
    assert "<td>INCREMENTAL</td>" in page
    assert "<td>SUCCEEDED</td>" in page


def test_the_frozen_region_kept_its_row(executed: Any) -> None:
    page = result(executed, "frozen", "text/html")  # plain spark.sql: sparkshim's HTML
    assert "<tr><td>1</td><td>89.97</td><td>true</td></tr>" in page
    assert "<tr><td>5</td><td>120.00</td><td>false</td></tr>" in page


def test_python_variables_and_output_dataframes(executed: Any) -> None:
    text = result(executed, "totals", "text/plain")
    assert "|          9|     2|182.50|" in text
    assert "|         12|" not in text  # total 15.00 is under {threshold}
    frame = result(executed, "pandas", "text/plain")
    assert frame.splitlines()[0].split() == ["customer_id", "orders", "total"]


def test_history_lists_every_refresh(executed: Any) -> None:
    text = result(executed, "history", "text/plain")
    rows = [line.split("|")[1:5] for line in text.splitlines() if line.startswith("|")]
    cells = [[cell.strip() for cell in row] for row in rows]
    assert cells == [
        ["name", "refresh_trigger", "refresh_action", "state"],
        ["dt_orders", "CREATION", "FULL", "SUCCEEDED"],
        ["dt_customer_totals", "CREATION", "FULL", "SUCCEEDED"],
        ["dt_orders", "MANUAL", "INCREMENTAL", "SUCCEEDED"],
        ["dt_customer_totals", "MANUAL", "INCREMENTAL", "SUCCEEDED"],
    ]


def test_the_graph_is_drawn_inline(executed: Any) -> None:
    picture = result(executed, "graph", "image/svg+xml")
    assert picture.lstrip().startswith("<svg")
    assert "dt_customer_totals" in picture
    text = result(executed, "graph", "text/plain")
    assert "default.dt_orders" in text
