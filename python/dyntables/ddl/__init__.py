"""The DDL of dynamic tables: CREATE / CREATE OR REPLACE, ALTER, DROP and EXPLAIN of
dynamic tables and materialized views (``lifecycle``), the rows of a BACKFILL FROM
(``backfill``), and the CREATE half of REFRESH USING (``custom``). It analyzes a statement,
asks the planner how the table refreshes, writes the definition into the table's
properties, and hands the first refresh to ``dyntables.refresh``."""
