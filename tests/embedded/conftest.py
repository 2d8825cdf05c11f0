"""Shared fixtures of the embedded tier: one real PySpark session for the whole run.

Starting a JVM costs seconds, so every module that compares the shim with Spark borrows
this one session (DESIGN.md §4: share one session per test run). Modules register their
own temporary views or tables on it and remove the tables they create.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import SparkSession


@pytest.fixture(scope="session")
def pyspark_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkSession]:
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("comparing with real PySpark needs Java")
    scratch: Path = tmp_path_factory.mktemp("pyspark")
    session = (
        SparkSession.builder.master("local[1]")
        .appName("sparkshim-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.ansi.enabled", "false")
        .config("spark.sql.warehouse.dir", str(scratch / "warehouse"))
        .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={scratch / 'derby'}")
        .getOrCreate()
    )
    yield session
    session.stop()


@pytest.fixture(autouse=True)
def spawnable_main() -> None:
    """Processes are spawned (delta-rs must not be forked), and spawning reads
    ``__main__.__spec__``, which IPython (the magics' tests) leaves unset on the
    ``__main__`` it installs."""
    main = sys.modules["__main__"]
    if not hasattr(main, "__spec__"):
        main.__spec__ = None
