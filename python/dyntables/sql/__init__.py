"""Spark SQL as this project writes it: the dialect every emitted statement is rendered
with (``dialect``), values written back into SQL as literals (``literals``), the
delete-then-insert MERGE (``merges``) and column rewrites (``columns``)."""
