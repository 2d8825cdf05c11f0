"""The harness's figures: a JSON file in the test's tmp dir, and a section of pytest's
terminal summary (shown with or without ``-s``), for every tier that publishes some."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .invariants import INVARIANTS, Violation

_SUMMARY = pytest.StashKey["_Summary"]()
SHOWN_VIOLATIONS = 12


class _Summary:
    def __init__(self) -> None:
        self.sections: list[tuple[str, list[str], Path]] = []

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        terminalreporter.section("dyntables reliability figures")
        for title, lines, path in self.sections:
            terminalreporter.write_line(f"{title}  ({path})")
            for line in lines:
                terminalreporter.write_line(f"  {line}")


def publish(config: pytest.Config, title: str, figures: dict[str, Any], path: Path) -> None:
    """Write ``figures`` to ``path`` and add them to the terminal summary."""
    path.write_text(json.dumps(figures, indent=2, sort_keys=True, default=str))
    summary = config.stash.get(_SUMMARY, None)
    if summary is None:
        summary = _Summary()
        config.pluginmanager.register(summary, "dyntables-reliability-summary")
        config.stash[_SUMMARY] = summary
    lines = summary_lines(figures)
    summary.sections.append((title, lines, path))
    print(f"{title} ({path})\n" + "\n".join(f"  {line}" for line in lines))


def summary_lines(figures: dict[str, Any]) -> list[str]:
    """The headline figures, one per line (everything else is in the JSON file)."""
    lines = []
    for key, value in figures.items():
        if key in ("trials", "violations", "rounds_detail", "starts_detail"):
            continue
        if isinstance(value, dict):
            inner = ", ".join(f"{k}={v}" for k, v in sorted(value.items(), key=str))
            lines.append(f"{key}: {inner or '-'}")
        elif isinstance(value, list):
            lines.append(f"{key}: {len(value)}" + (f" (first: {value[0]})" if value else ""))
        else:
            lines.append(f"{key}: {value}")
    return lines


def violation_report(violations: list[Violation], occurrences: dict[Any, list[str]]) -> str:
    """Every distinct violation, grouped by invariant, with where it was seen."""
    if not violations:
        return "no violations"
    lines = [f"{len(violations)} distinct violation(s):"]
    by_invariant: dict[str, list[Violation]] = {}
    for violation in violations:
        by_invariant.setdefault(violation.invariant, []).append(violation)
    for invariant, found in sorted(by_invariant.items()):
        lines.append(f"- invariant {invariant}: {INVARIANTS.get(invariant, '?')} ({len(found)})")
        for violation in found[:SHOWN_VIOLATIONS]:
            seen = occurrences.get(violation.signature(), [])
            also = f" (seen {len(seen)} times: {', '.join(seen[:8])})" if len(seen) > 1 else ""
            lines.append("    " + violation.describe().replace("\n", "\n    ") + also)
        if len(found) > SHOWN_VIOLATIONS:
            lines.append(f"    ... and {len(found) - SHOWN_VIOLATIONS} more (see the JSON file)")
    return "\n".join(lines)
