"""Spark SQL as this project writes it: the dialect every emitted statement is rendered
with (``dialect``), and values written back into SQL as literals (``literals``)."""
