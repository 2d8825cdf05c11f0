"""``dyntables-sql``: the spark-sql-shaped shell, run in-process and once as a script."""

from __future__ import annotations

import datetime
import decimal
import io
import subprocess
import sys
from pathlib import Path

import pytest
from pyspark.sql import Row
from pyspark.sql.types import ArrayType, FloatType, MapType, StringType, StructField, StructType

from dyntables.api import SHOW_TERMINAL_COLUMNS
from dyntables.errors import DynamicTableError
from dyntables.sql_cli import format_value, main, take_complete

pytestmark = pytest.mark.embedded


def run_cli(
    capsys: pytest.CaptureFixture[str], warehouse: Path, *args: str
) -> tuple[int, list[str], str]:
    """Exit status, stdout lines and stderr of one in-process run."""
    status = main(["--warehouse", str(warehouse), *args])
    captured = capsys.readouterr()
    return status, captured.out.splitlines(), captured.err


def timings(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("Time taken: ")]


# ---- -e, -f, -i, --database, --conf ----


def test_execute_runs_every_statement_and_times_each(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    status, out, err = run_cli(
        capsys,
        tmp_path,
        "-e",
        "CREATE TABLE t (id INT, name STRING) USING DELTA;"
        " INSERT INTO t VALUES (1, 'a'), (2, 'b');"
        " SELECT * FROM t ORDER BY id; SELECT count(*) FROM t",
    )
    assert status == 0
    assert out == ["1\ta", "2\tb", "2"]
    lines = timings(err)
    assert len(lines) == 4  # one per statement, as spark-sql prints them
    assert lines[0].endswith(" seconds")  # no rows fetched: no count
    assert lines[2].endswith(" seconds, Fetched 2 row(s)")
    assert lines[3].endswith(" seconds, Fetched 1 row(s)")


def test_file_and_init_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    init = tmp_path / "init.sql"
    init.write_text("CREATE TABLE t (id INT) USING DELTA;\nINSERT INTO t VALUES (7);\n")
    script = tmp_path / "script.sql"
    script.write_text("-- a comment; with a semicolon\nSELECT id * 6 AS answer\nFROM t;\n")
    status, out, err = run_cli(
        capsys, tmp_path / "wh", "-i", str(init), "-f", str(script), "--print-header"
    )
    assert status == 0
    assert out == ["answer", "42"]
    assert len(timings(err)) == 1  # the init file runs quietly


def test_database_is_used_first(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    status, _, _ = run_cli(capsys, tmp_path, "-e", "CREATE DATABASE sales")
    assert status == 0
    status, out, _ = run_cli(
        capsys,
        tmp_path,
        "--database",
        "sales",
        "-e",
        "CREATE TABLE t (id INT) USING DELTA; SHOW TABLES",
    )
    assert status == 0
    assert out == ["sales\tt\tfalse"]


def test_missing_database_is_an_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    status, out, err = run_cli(capsys, tmp_path, "--database", "nowhere", "-e", "SELECT 1")
    assert status == 1
    assert out == []
    assert err.startswith("Error: ")


def test_conf_is_set_on_the_session(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    status, out, _ = run_cli(
        capsys,
        tmp_path,
        "--conf",
        "spark.dyntables.example=42",
        "--conf",
        "spark.sql.cli.print.header=true",
        "-e",
        "SELECT 42 AS answer",
    )
    # spark.sql.cli.print.header is read back from the session: the header shows it is set.
    # (sparkshim cannot yet read a setting with `SET key`.)
    assert status == 0
    assert out == ["answer", "42"]


def test_conf_needs_key_and_value(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    with pytest.raises(SystemExit):
        main(["--warehouse", str(tmp_path), "--conf", "novalue", "-e", "SELECT 1"])
    assert "expected KEY=VALUE" in capsys.readouterr().err


def test_header_is_printed_only_when_asked(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    sql = "SELECT 1 AS a, 'x' AS b"
    assert run_cli(capsys, tmp_path, "-e", sql)[1] == ["1\tx"]
    assert run_cli(capsys, tmp_path, "--print-header", "-e", sql)[1] == ["a\tb", "1\tx"]


def test_set_hive_cli_print_header_turns_the_header_on_and_off(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # spark-sql honours Hive's key as well as spark.sql.cli.print.header.
    status, out, _ = run_cli(
        capsys,
        tmp_path,
        "-e",
        "SELECT 1 AS a; SET hive.cli.print.header=true; SELECT 2 AS b;"
        " SET hive.cli.print.header=false; SELECT 3 AS c",
    )
    assert status == 0
    assert [line for line in out if "hive.cli" not in line] == ["1", "key\tvalue", "b", "2", "3"]
    status, out, _ = run_cli(
        capsys, tmp_path, "--hiveconf", "hive.cli.print.header=true", "-e", "SELECT 4 AS d"
    )
    assert (status, out) == (0, ["d", "4"])


def test_a_refresh_prints_its_header(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    status, out, _ = run_cli(
        capsys,
        tmp_path,
        "-e",
        "CREATE TABLE t (x INT) USING DELTA; INSERT INTO t VALUES (1);"
        " CREATE DYNAMIC TABLE d TARGET_LAG = '1 minute' AS SELECT x FROM t;"
        " INSERT INTO t VALUES (2); ALTER DYNAMIC TABLE d REFRESH;"
        " CREATE MATERIALIZED VIEW v AS SELECT x FROM t; REFRESH MATERIALIZED VIEW v;"
        " SELECT count(*) FROM d",
    )
    assert status == 0
    header = "name\taction\treason\tstate\tdata_timestamp\trows_inserted\trows_deleted"
    assert out[0] == "Dynamic table d successfully created."
    assert out[1] == header
    assert out[2].startswith("default.d\tINCREMENTAL\tNULL\tSUCCEEDED\t")
    assert out[2].endswith("\t1\t0")
    assert out[3] == "Materialized view v successfully created."
    assert out[4] == header
    assert out[5].startswith("default.v\t")
    assert out[6:] == ["2"]  # other results print no header unless asked


def test_show_prints_the_columns_that_fit_and_show_full_every_one(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The DataFrame has Snowflake's 18 columns either way (tests/embedded/test_output.py);
    the shell prints 7 of them for SHOW, all of them for SHOW FULL."""
    status, _, err = run_cli(
        capsys,
        tmp_path,
        "-e",
        "CREATE TABLE t (x INT) USING DELTA; INSERT INTO t VALUES (1), (2);"
        " CREATE DYNAMIC TABLE d TARGET_LAG = '1 minute' WAREHOUSE = wh"
        " AS SELECT x FROM t WHERE x > 1",
    )
    assert status == 0, err
    status, out, _ = run_cli(capsys, tmp_path, "--print-header", "-e", "SHOW DYNAMIC TABLES")
    assert status == 0
    assert out[0].split("\t") == list(SHOW_TERMINAL_COLUMNS)
    values = out[1].split("\t")
    assert values[:5] == ["d", "default", "1 minute", "INCREMENTAL", "ACTIVE"]
    assert values[6] == "1"
    assert len(out) == 2
    # Without a header too: the same 7 values.
    status, out, _ = run_cli(capsys, tmp_path, "-e", "SHOW DYNAMIC TABLES LIKE 'd'")
    assert (status, len(out), len(out[0].split("\t"))) == (0, 1, 7)

    status, out, _ = run_cli(
        capsys, tmp_path, "--print-header", "-e", "SHOW FULL DYNAMIC TABLES LIKE 'd'"
    )
    assert status == 0
    header = out[0].split("\t")
    assert len(header) == 18
    assert header[:2] == ["created_on", "name"]
    assert {"text", "refresh_mode_reason", "warehouse", "immutable_where"} <= set(header)
    row = dict(zip(header, out[1].split("\t"), strict=True))
    assert (row["name"], row["warehouse"], row["kind"]) == ("d", "wh", "DYNAMIC_TABLE")
    assert row["text"].startswith("CREATE DYNAMIC TABLE d")


def test_silent_drops_the_timings(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    status, out, err = run_cli(capsys, tmp_path, "-S", "-e", "SELECT 1")
    assert (status, out, err) == (0, ["1"], "")


# ---- values ----


def test_values_print_as_spark_sql_prints_them(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    status, out, _ = run_cli(
        capsys,
        tmp_path,
        "--print-header",
        "-e",
        "SELECT NULL AS n, true AS t, false AS f, CAST(1.50 AS DECIMAL(10, 2)) AS d,"
        " CAST(-0.001 AS DECIMAL(6, 3)) AS small,"
        " TIMESTAMP '2025-01-15 08:30:00' AS ts, TIMESTAMP '2025-01-15 08:30:00.120' AS ts_ms,"
        " DATE '2025-01-02' AS day, array(1, 2) AS ints, array('a', NULL) AS strs,"
        " map('k', 1) AS m, named_struct('a', 1, 'b', 'x') AS s, 1.5D AS dbl,"
        " CAST(1e20 AS DOUBLE) AS big, 0.1F AS flt, 'plain' AS str",
    )
    assert status == 0
    assert out[0].split("\t")[:3] == ["n", "t", "f"]
    assert out[1].split("\t") == [
        "NULL",
        "true",
        "false",
        "1.50",
        "-0.001",
        "2025-01-15 08:30:00",
        "2025-01-15 08:30:00.12",
        "2025-01-02",
        "[1,2]",
        '["a",null]',
        '{"k":1}',
        '{"a":1,"b":"x"}',
        "1.5",
        "1.0E20",
        "0.1",
        "plain",
    ]


@pytest.mark.parametrize(
    ("value", "data_type", "expected"),
    [
        (None, None, "NULL"),
        (True, None, "true"),
        (decimal.Decimal("1E+2"), None, "100"),
        (decimal.Decimal("0.000001"), None, "0.000001"),
        (1234567.0, None, "1234567.0"),
        (12345678.0, None, "1.2345678E7"),
        (0.001, None, "0.001"),
        (0.0001, None, "1.0E-4"),
        (float("nan"), None, "NaN"),
        (float("-inf"), None, "-Infinity"),
        (0.10000000149011612, FloatType(), "0.1"),
        (datetime.datetime(2025, 1, 1, 0, 0, 0, 1), None, "2025-01-01 00:00:00.000001"),
        (bytearray(b"AB"), None, "AB"),
        ({"b": None, "a": "1"}, MapType(StringType(), StringType()), '{"a":"1","b":null}'),
        (
            Row(x=[Row(y="z")]),
            StructType(
                [StructField("x", ArrayType(StructType([StructField("y", StringType())])), True)]
            ),
            '{"x":[{"y":"z"}]}',
        ),
    ],
)
def test_format_value(value: object, data_type: object, expected: str) -> None:
    assert format_value(value, data_type) == expected


# ---- errors ----


def test_error_stops_the_run(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    status, out, err = run_cli(
        capsys,
        tmp_path,
        "-e",
        "SELECT 'before'; SELECT * FROM no_such_table; SELECT 'after'",
    )
    assert status == 1
    assert out == ["before"]
    error_lines = [line for line in err.splitlines() if line.startswith("Error: ")]
    assert len(error_lines) == 1
    assert "no_such_table" in err
    assert len(timings(err)) == 1


def test_our_errors_print_as_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    status, _, err = run_cli(capsys, tmp_path, "-e", "ALTER DYNAMIC TABLE nope REFRESH")
    assert status == 1
    assert err.startswith("Error: ")
    assert "Traceback" not in err


def test_debug_shows_the_error_itself(tmp_path: Path) -> None:
    with pytest.raises(DynamicTableError):
        main(["--warehouse", str(tmp_path), "--debug", "-e", "ALTER DYNAMIC TABLE nope REFRESH"])


def test_unreadable_file_is_an_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    status, _, err = run_cli(capsys, tmp_path, "-f", str(tmp_path / "missing.sql"))
    assert status == 1
    assert err.startswith("Error: cannot read ")


# ---- dynamic tables ----


def test_dynamic_table_script(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    script = tmp_path / "pipeline.sql"
    script.write_text(
        """
        CREATE TABLE orders (id INT, amount DECIMAL(10, 2), status STRING) USING DELTA;
        INSERT INTO orders VALUES (1, 10.00, 'ok'), (2, 5.50, 'returned');
        CREATE DYNAMIC TABLE dt_orders TARGET_LAG = '1 minute'
          AS SELECT id, amount FROM orders WHERE status <> 'returned';
        INSERT INTO orders VALUES (3, 2.25, 'ok');
        ALTER DYNAMIC TABLE dt_orders REFRESH;
        SELECT * FROM dt_orders ORDER BY id;
        SELECT name FROM information_schema.dynamic_table_refresh_history()
          ORDER BY refresh_start_time DESC LIMIT 1;
        """
    )
    status, out, err = run_cli(capsys, tmp_path / "wh", "-f", str(script))
    assert status == 0, err
    assert out[0] == "Dynamic table dt_orders successfully created."
    assert out[1].split("\t")[:4] == ["name", "action", "reason", "state"]  # a refresh's header
    refreshed = out[2].split("\t")
    assert refreshed[:4] == ["default.dt_orders", "INCREMENTAL", "NULL", "SUCCEEDED"]
    assert out[3:] == ["1\t10.00", "3\t2.25", "dt_orders"]


# ---- the prompt ----


def test_interactive_prompt(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        sys,
        "stdin",
        io.StringIO(
            "SELECT 1 AS a,\n"
            "  'two;' AS b\n"
            ";\n"
            "SELECT * FROM no_such_table;\n"
            "CREATE DATABASE shop; USE shop;\n"
            "SELECT 'in shop';\n"
            "quit;\n"
            "SELECT 'never';\n"
        ),
    )
    status, out, err = run_cli(capsys, tmp_path)
    assert status == 0
    text = "\n".join(out)
    assert "spark-sql (default)> " in text
    assert "                   > " in text  # the continuation prompt, aligned
    assert "1\ttwo;" in text
    assert "spark-sql (shop)> in shop" in text  # the prompt follows USE
    assert "never" not in text
    assert "Error: " in err
    assert "no_such_table" in err


def test_interactive_ends_at_end_of_input(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("SELECT 5;\nSELECT 'unfinished'"))
    status, out, _ = run_cli(capsys, tmp_path)
    assert status == 0
    assert "5" in out[0].split("> ")
    assert "unfinished" not in "\n".join(out)


@pytest.mark.parametrize(
    ("buffer", "complete", "rest"),
    [
        ("SELECT 1;\n", ["SELECT 1"], ""),
        ("SELECT 1\n", [], "SELECT 1\n"),
        ("SELECT ';\n", [], "SELECT ';\n"),
        ("SELECT 1; SELECT\n", ["SELECT 1"], " SELECT\n"),
        ("/* open ;\n", [], "/* open ;\n"),
        ("-- only a comment;\n", [], "-- only a comment;\n"),
        (";\n", [], ""),
    ],
)
def test_take_complete(buffer: str, complete: list[str], rest: str) -> None:
    assert take_complete(buffer) == (complete, rest)


# ---- the installed script ----


def test_installed_script(tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("dyntables-sql")
    if not script.exists():
        pytest.skip("dyntables-sql is not installed next to this Python")
    finished = subprocess.run(
        [str(script), "--warehouse", str(tmp_path / "wh"), "-e", "SELECT 1 AS a, NULL AS b"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert finished.returncode == 0, finished.stderr
    assert finished.stdout == "1\tNULL\n"
    assert finished.stderr.startswith("Time taken: ")
    assert finished.stderr.rstrip().endswith("seconds, Fetched 1 row(s)")


def test_doctests() -> None:
    import doctest

    import dyntables.sql_cli

    failures, tried = doctest.testmod(dyntables.sql_cli)
    assert tried > 0
    assert failures == 0


def test_output_matches_spark_sql(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # The expected lines are what Spark 3.5.9's own spark-sql printed for the same -e text.
    status, out, err = run_cli(
        capsys,
        tmp_path,
        "--print-header",
        "-e",
        "SELECT map('k', 'v', 'a', NULL) m, named_struct('x', 'y', 'z', array('q', NULL)) s,"
        " 12345678.0D d2, 0.0001D d3, X'4142' bin, CAST(1E-10 AS DECIMAL(20,12)) sd;"
        " SELECT 3 WHERE false",
    )
    assert status == 0
    assert out == [
        "m\ts\td2\td3\tbin\tsd",
        '{"a":null,"k":"v"}\t{"x":"y","z":["q",null]}\t1.2345678E7\t1.0E-4\tAB\t0.000000000100',
        "3",  # a header, even for no rows
    ]
    assert timings(err)[1].endswith(" seconds")


def test_embedded_engine_stores_delta(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    status, _, err = run_cli(capsys, tmp_path, "--table-format", "iceberg", "-e", "SELECT 1")
    assert status == 1
    assert err.startswith("Error: the embedded engine stores Delta tables")
