"""``dyntables shell``: IPython with ``spark`` and ``dt`` ready and the magics loaded."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from dyntables.cli import build_argument_parser
from dyntables.notebook.install import installation
from dyntables.notebook.shell import namespace
from sparkshim import ShimSession

pytestmark = pytest.mark.embedded

SESSION = """\
spark.sql("CREATE TABLE t (x INT) USING DELTA")
spark.sql("INSERT INTO t VALUES (1), (2)")
spark.sql("CREATE DYNAMIC TABLE d TARGET_LAG = '1 minute' AS SELECT x FROM t WHERE x > 1")
%sql -o rows SELECT * FROM d
print("rows:", rows.collect())
%sql SELECT count(*) AS n FROM t
get_ipython().run_cell_magic("dtsql", "", "SELECT 'cell' AS kind")
"""


def test_the_shell_has_spark_dt_and_the_magics(tmp_path: Path) -> None:
    finished = subprocess.run(
        [sys.executable, "-m", "dyntables", "shell", "--warehouse", str(tmp_path / "wh")],
        input=SESSION,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        check=False,
    )
    assert finished.returncode == 0, finished.stderr
    out = finished.stdout
    assert "dyntables shell: Snowflake-style dynamic tables on the embedded engine" in out
    assert "rows: [Row(x=2)]" in out
    assert "|  n|\n+---+\n|  2|" in out
    assert "|kind|\n+----+\n|cell|" in out
    assert "Error" not in out


def test_the_shell_namespace_is_installed(tmp_path: Path) -> None:
    args = build_argument_parser().parse_args(["shell", "--warehouse", str(tmp_path / "wh")])
    ready = namespace(args)
    spark, dt = ready["spark"], ready["dt"]
    assert isinstance(spark, ShimSession)
    found = installation(spark)
    assert found is not None
    assert found.tables is dt
    assert dt.session is spark
