"""The package's shape: no import cycles, and imports that only go down the layers the
README's layout describes (read from the source; TYPE_CHECKING imports excepted)."""

from __future__ import annotations

import pytest
from module_graph import cycles, import_graph

# dyntables' layers, lowest first. A module may import its own layer and the ones below;
# the package's ``__init__`` is the facade over all of them.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("dyntables.errors", "dyntables.statements", "dyntables.catalog"),
    ("dyntables.sql",),
    ("dyntables.parser",),
    ("dyntables.planner",),
    ("dyntables.formats",),
    ("dyntables.engine",),
    ("dyntables.history", "dyntables.compaction"),
    ("dyntables.refresh",),
    ("dyntables.ddl",),
    ("dyntables.scheduler",),
    ("dyntables.api",),
    ("dyntables.notebook", "dyntables.sql_cli", "dyntables.cli", "dyntables.__main__"),
)
FACADE = "dyntables"


def layer_of(module: str) -> int:
    for level, members in enumerate(LAYERS):
        if any(module == m or module.startswith(m + ".") for m in members):
            return level
    raise LookupError(f"{module} is in no layer: add it to LAYERS in tests/unit/test_layers.py")


def test_no_import_cycles() -> None:
    assert cycles(import_graph()) == []


def test_every_module_has_a_layer() -> None:
    for module in import_graph():
        if module.startswith("dyntables.") and "._generated" not in module:
            layer_of(module)


def test_imports_go_down_the_layers() -> None:
    upward = [
        f"{module} imports {imported}"
        for module, imports in import_graph().items()
        if module.startswith("dyntables.") and "._generated" not in module
        for imported in imports
        if imported.startswith("dyntables.") and layer_of(imported) > layer_of(module)
    ]
    assert upward == []


def test_the_engine_does_not_import_the_product() -> None:
    graph = import_graph()
    reaching = [
        m
        for m, imports in graph.items()
        if m.startswith("sparkshim") and any(i.startswith("dyntables") for i in imports)
    ]
    assert reaching == []


@pytest.mark.parametrize(
    ("graph", "expected"),
    [
        ({"a": {"b"}, "b": {"a"}, "c": set()}, [["a", "b"]]),
        ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
    ],
)
def test_cycles_are_found(graph: dict[str, set[str]], expected: list[list[str]]) -> None:
    assert cycles(graph) == expected
