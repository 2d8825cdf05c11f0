"""sparkshim: a JVM-free stand-in for ``SparkSession.sql()`` over Delta tables.

This is the embedded default engine of spark-dynamic-tables. It stores tables as real
Delta tables written with delta-rs, executes queries with DuckDB, and translates Spark
SQL with sqlglot. It is built in a later issue; for now the package only exists so that
the distribution installs both import packages.
"""
