"""Test tiers (DESIGN.md §5), chosen by marker:

* unit (no marker): no engine at all;
* ``embedded``: the JVM-free engine (sparkshim);
* ``spark``: real PySpark with Iceberg;
* ``spark_delta``: real PySpark with Delta jars, which Maven-less machines cannot fetch.
  It runs where ``DYNTABLES_DELTA_JARS`` (a folder of jars) or ``DYNTABLES_SPARK_PACKAGES``
  is set, and is skipped, with the reason shown in the summary, everywhere else.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

# Property tests run a small profile by default (CI); `make test-long` runs the long one.
settings.register_profile(
    "ci", max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "long", max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

DELTA_JARS_REASON = (
    "spark_delta tier needs Delta Lake jars: set DYNTABLES_DELTA_JARS=/dir/with/jars or"
    " DYNTABLES_SPARK_PACKAGES=io.delta:delta-spark_2.12:3.3.3 (Maven is unreachable here)"
)


def delta_jars_available() -> bool:
    return bool(
        os.environ.get("DYNTABLES_DELTA_JARS") or os.environ.get("DYNTABLES_SPARK_PACKAGES")
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if delta_jars_available():
        return
    skip_delta = pytest.mark.skip(reason=DELTA_JARS_REASON)
    for item in items:
        if "spark_delta" in item.keywords:
            item.add_marker(skip_delta)
