"""Packaging promises: what importing does (and does not do), both packages, doctests."""

from __future__ import annotations

import doctest
import importlib
import subprocess
import sys

import pytest
from module_graph import modules_with_examples, needs_engine

import dyntables


def imported_modules_after(statement: str) -> set[str]:
    """Modules loaded by a fresh interpreter after running ``statement``."""
    code = f"import sys; {statement}; print('\\n'.join(sorted(sys.modules)))"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    return set(result.stdout.split())


def test_importing_dyntables_imports_neither_spark_nor_the_parser_runtime() -> None:
    modules = imported_modules_after("import dyntables")
    assert "dyntables" in modules
    heavy = {"pyspark", "antlr4", "sqlglot", "duckdb", "deltalake", "pyarrow"}
    assert not {name.split(".")[0] for name in modules} & heavy


def test_importing_the_scheduler_starts_nothing() -> None:
    code = (
        "import threading; import dyntables.scheduler, dyntables.scheduler.daemon;"
        " print(threading.active_count())"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip() == "1"
    modules = imported_modules_after("import dyntables.scheduler")
    assert not {name.split(".")[0] for name in modules} & {"pyspark", "duckdb", "deltalake"}


def test_parsing_does_not_import_spark() -> None:
    modules = imported_modules_after("import dyntables; dyntables.parse('DROP DYNAMIC TABLE t')")
    assert "antlr4" in modules
    assert "pyspark" not in modules


def test_sparkshim_is_importable_with_its_docstring() -> None:
    sparkshim = importlib.import_module("sparkshim")
    assert sparkshim.__doc__
    assert "JVM-free" in sparkshim.__doc__


@pytest.mark.parametrize("module_name", [m for m in modules_with_examples() if not needs_engine(m)])
def test_doctests(module_name: str) -> None:
    module = importlib.import_module(module_name)
    failures, tried = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert tried > 0, f"{module_name} has no doctest examples"
    assert failures == 0


def test_version_is_exposed() -> None:
    assert dyntables.__version__
