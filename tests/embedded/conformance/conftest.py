"""Print the conformance counts in pytest's terminal summary (visible without ``-s``)."""

from __future__ import annotations

import sys
from typing import Any


def pytest_terminal_summary(terminalreporter: Any) -> None:
    module = next((m for name, m in sys.modules.items() if name.endswith("test_conformance")), None)
    outcomes = getattr(module, "OUTCOMES", None)
    if not outcomes:
        return
    queries = len(module.QUERIES)
    rate = outcomes["MATCH"] / queries
    terminalreporter.section("sparkshim conformance")
    terminalreporter.write_line(
        f"{queries} queries: "
        + ", ".join(f"{k}={v}" for k, v in sorted(outcomes.items()))
        + f"; match rate {rate:.1%} (required: 90%)"
    )
    for sql, reason in module.REFUSALS:
        terminalreporter.write_line(f"  refused: {reason}  <- {sql[:90]}")
