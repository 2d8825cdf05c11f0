"""The ``spark_delta`` tier: real PySpark with Delta Lake's jars.

Maven is unreachable here, so the jars cannot be fetched (DESIGN.md §4): the tier runs
where ``DYNTABLES_DELTA_JARS`` names a folder of jars (delta-spark and delta-storage for
Spark 3.5) or ``DYNTABLES_SPARK_PACKAGES`` names Maven coordinates, and is skipped, with
the reason shown, everywhere else (see ``tests/conftest.py``). Like the Iceberg tier it
needs a JVM of its own: ``pytest -m spark_delta``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

EXTENSIONS = "io.delta.sql.DeltaSparkSessionExtension"
CATALOG = "org.apache.spark.sql.delta.catalog.DeltaCatalog"


def start_delta_spark(scratch: Path, app_name: str, warehouse: Path | None = None) -> SparkSession:
    """A local Spark with Delta's jars (from ``DYNTABLES_DELTA_JARS`` or
    ``DYNTABLES_SPARK_PACKAGES``), its metastore in ``scratch`` and its warehouse there
    too unless given; also used by the reliability harness's child processes
    (tests/reliability/spark_child.py), on the test session's warehouse."""
    builder = (
        SparkSession.builder.master("local[2]")
        .appName(app_name)
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.extensions", EXTENSIONS)
        .config("spark.sql.catalog.spark_catalog", CATALOG)
        .config("spark.sql.warehouse.dir", str(warehouse or scratch / "warehouse"))
        .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={scratch / 'derby'}")
    )
    jars_dir = os.environ.get("DYNTABLES_DELTA_JARS")
    if jars_dir:
        jars = ",".join(str(jar) for jar in sorted(Path(jars_dir).glob("*.jar")))
        builder = builder.config("spark.jars", jars)
    packages = os.environ.get("DYNTABLES_SPARK_PACKAGES")
    if packages:
        builder = builder.config("spark.jars.packages", packages)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session


@pytest.fixture(scope="session")
def delta_spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkSession]:
    scratch = tmp_path_factory.mktemp("delta")
    session = start_delta_spark(scratch, "dyntables-delta-tests")
    yield session
    session.stop()
