"""The docstring examples of the embedded engine run."""

from __future__ import annotations

import doctest
import importlib

import pytest

pytestmark = pytest.mark.embedded


@pytest.mark.parametrize(
    "module_name",
    [
        "sparkshim.dataframe",
        "sparkshim.decimals",
        "sparkshim.session",
        "sparkshim.spark_typing",
        "sparkshim.translate",
        "sparkshim.types",
        "dyntables.notebook.install",
        "dyntables.notebook.display",
        "dyntables.notebook.magics",
    ],
)
def test_doctests(module_name: str) -> None:
    module = importlib.import_module(module_name)
    failures, tried = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert tried > 0, f"{module_name} has no doctest examples"
    assert failures == 0
