"""The committed ANTLR output must be exactly what the grammar generates today."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "python" / "dyntables" / "parser" / "_generated"


def load_generate_script():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(
        "grammar_generate", ROOT / "grammar" / "generate.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(shutil.which("java") is None, reason="the ANTLR tool needs Java")
def test_committed_parser_matches_grammar(tmp_path: Path) -> None:
    load_generate_script().generate(tmp_path)
    fresh = {path.name: path.read_text() for path in tmp_path.glob("*.py")}
    committed = {path.name: path.read_text() for path in COMMITTED.glob("*.py")}
    assert sorted(fresh) == sorted(committed)
    stale = [name for name in fresh if fresh[name] != committed[name]]
    assert not stale, f"regenerate with `make grammar`: {stale} differ from grammar/*.g4"


def test_generated_files_say_do_not_edit() -> None:
    for path in COMMITTED.glob("*.py"):
        assert path.read_text().startswith("# DO NOT EDIT"), path.name
