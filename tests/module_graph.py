"""The modules of both packages, read from their source (nothing imported): which modules
each imports at run time, and which carry docstring examples. Shared by the layer test and
the doctest tests."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {
    "dyntables": ROOT / "python" / "dyntables",
    "sparkshim": ROOT / "jvm-free-shim" / "sparkshim",
}


@dataclass(frozen=True)
class Module:
    name: str
    path: Path

    @property
    def is_package(self) -> bool:
        return self.path.name == "__init__.py"


def modules() -> dict[str, Module]:
    """Every module of both packages by dotted name (the generated parser included)."""
    found: dict[str, Module] = {}
    for package, folder in PACKAGES.items():
        for path in sorted(folder.rglob("*.py")):
            parts = [package, *path.relative_to(folder).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = Module(".".join(parts), path)
    return found


def runtime_imports(module: Module, known: dict[str, Module]) -> set[str]:
    """The modules of both packages ``module`` imports when it runs, wherever the import
    statement sits (a function's lazy import counts); imports under ``if TYPE_CHECKING``
    do not."""
    tree = ast.parse(module.path.read_text())
    type_only = {id(node) for block in _type_checking_blocks(tree) for node in ast.walk(block)}
    imported: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in type_only:
            continue
        for target in _targets(node, module, known):
            while target not in known and "." in target:
                target = target.rsplit(".", 1)[0]
            if target in known and target != module.name:
                imported.add(target)
    return imported


def _type_checking_blocks(tree: ast.AST) -> Iterator[ast.If]:
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            yield node


def _targets(node: ast.AST, module: Module, known: dict[str, Module]) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    base = node.module or ""
    if node.level:
        package = module.name.split(".")
        if not module.is_package:
            package = package[:-1]
        package = package[: len(package) - (node.level - 1)]
        base = ".".join([*package, *([node.module] if node.module else [])])
    # ``from package import submodule`` imports the submodule; a name imports its module.
    return [
        f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names
    ]


def import_graph() -> dict[str, set[str]]:
    known = modules()
    return {name: runtime_imports(module, known) for name, module in known.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(name: str) -> None:
        index[name] = low[name] = len(index)
        stack.append(name)
        on_stack.add(name)
        for other in sorted(graph.get(name, ())):
            if other not in index:
                visit(other)
                low[name] = min(low[name], low[other])
            elif other in on_stack:
                low[name] = min(low[name], index[other])
        if low[name] == index[name]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == name:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return found


def modules_with_examples() -> list[str]:
    """The modules whose source holds a docstring example (``>>>``)."""
    return sorted(
        name
        for name, module in modules().items()
        if "._generated" not in name and ">>> " in module.path.read_text()
    )


# Modules whose examples start an engine (a sparkshim session): the embedded tier runs them.
ENGINE_MODULES = ("sparkshim", "dyntables.notebook", "dyntables.api")


def needs_engine(module: str) -> bool:
    return any(module == prefix or module.startswith(prefix + ".") for prefix in ENGINE_MODULES)
