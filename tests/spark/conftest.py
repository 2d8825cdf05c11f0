"""The ``spark`` tier: one real PySpark 3.5 session with Apache Iceberg for the whole run.

The Iceberg runtime jar comes from the PyPI package ``snowpark-connect-deps-iceberg``
(Maven is unreachable here, DESIGN.md §4). A JVM takes its jars only at launch, so this
tier needs a process whose JVM it starts itself: when another tier has already started
PySpark without Iceberg, the tier is skipped with the reason shown (run it on its own,
``pytest -m spark``).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark import SparkContext
from pyspark.sql import SparkSession

JAR_PACKAGE = "snowpark_connect_deps_iceberg"
# The Scala 2.12 build, as PySpark 3.5's; the package's 1.0.3 jar is broken (DESIGN.md §4).
RUNTIME_JAR = "iceberg-spark-runtime-3.5_2.12-1.10.2.jar"
EXTENSIONS = "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
CATALOG = "lake"
OTHER_CATALOG = "other"  # a second Iceberg catalog, empty until a test uses it


def iceberg_runtime_jar() -> Path | None:
    """The runtime jar inside the installed package, or None when it is not installed."""
    spec = importlib.util.find_spec(JAR_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        jar = Path(location) / "jars" / RUNTIME_JAR
        if jar.is_file():
            return jar
    return None


def start_iceberg_spark(scratch: Path, jar: Path, app_name: str) -> SparkSession:
    """A local Spark with an Iceberg Hadoop catalog (the default catalog) in ``scratch``;
    also used by benchmarks/bench_refresh_iceberg.py."""
    session = (
        SparkSession.builder.master("local[2]")
        .appName(app_name)
        .config("spark.jars", str(jar))
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.extensions", EXTENSIONS)
        .config(f"spark.sql.catalog.{CATALOG}", "org.apache.iceberg.spark.SparkCatalog")
        .config(f"spark.sql.catalog.{CATALOG}.type", "hadoop")
        .config(f"spark.sql.catalog.{CATALOG}.warehouse", str(scratch / "warehouse"))
        .config("spark.sql.defaultCatalog", CATALOG)
        .config(f"spark.sql.catalog.{OTHER_CATALOG}", "org.apache.iceberg.spark.SparkCatalog")
        .config(f"spark.sql.catalog.{OTHER_CATALOG}.type", "hadoop")
        .config(f"spark.sql.catalog.{OTHER_CATALOG}.warehouse", str(scratch / OTHER_CATALOG))
        .config("spark.sql.warehouse.dir", str(scratch / "spark-warehouse"))
        .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={scratch / 'derby'}")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    return session


@pytest.fixture(scope="session")
def iceberg_spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkSession]:
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("the spark tier needs Java 17")
    jar = iceberg_runtime_jar()
    if jar is None:
        pytest.skip(
            f"the spark tier needs {RUNTIME_JAR}: pip install snowpark-connect-deps-iceberg==1.0.2"
        )
    active = SparkContext._active_spark_context
    if active is not None and EXTENSIONS not in active.getConf().get("spark.sql.extensions", ""):
        pytest.skip(
            "PySpark was already started in this process without Iceberg (another tier);"
            " a JVM takes jars only at launch: run this tier on its own, `pytest -m spark`"
        )
    session = start_iceberg_spark(
        tmp_path_factory.mktemp("iceberg"), jar, "dyntables-iceberg-tests"
    )
    yield session
    session.stop()


@pytest.fixture
def other_catalog_spark(iceberg_spark: SparkSession) -> SparkSession:
    """A session of the tier's Spark whose current catalog is a second Iceberg catalog, one
    that only the test using this fixture writes to: a scheduler tick covers every dynamic
    table of the catalog, and the shared catalog holds the tables other tests leave (some
    killed mid-refresh at random moments). Refreshes follow the user's current catalog,
    which this exercises too."""
    session = iceberg_spark.newSession()
    session.catalog.setCurrentCatalog(OTHER_CATALOG)
    return session
