"""The docstring examples that need an engine run (the rest run in the unit tier:
``tests/unit/test_package.py``); every module with an example is found, none listed."""

from __future__ import annotations

import doctest
import importlib

import pytest
from module_graph import modules_with_examples, needs_engine

pytestmark = pytest.mark.embedded


@pytest.mark.parametrize("module_name", [m for m in modules_with_examples() if needs_engine(m)])
def test_doctests(module_name: str) -> None:
    module = importlib.import_module(module_name)
    failures, tried = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert tried > 0, f"{module_name} has no doctest examples"
    assert failures == 0
