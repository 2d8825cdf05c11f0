"""The names of the settings sparkshim reads from a session's ``spark.conf``, and the
defaults a new session starts with.

They live here, apart from the session, so that the modules reading a setting (the
command layer, queries, maintenance) need not import the session that holds it: this
module imports nothing, and everything may import it.
"""

from __future__ import annotations

# ---- the session ----

TIME_ZONE_CONF = "spark.sql.session.timeZone"
ANSI_ENABLED_CONF = "spark.sql.ansi.enabled"
# What ``spark.conf`` answers before anything is set, and returns to on ``unset``.
DEFAULTS = {
    TIME_ZONE_CONF: "UTC",
    ANSI_ENABLED_CONF: "false",
}

# ---- writes (read into each commit's delta.CommitOptions) ----

USER_METADATA_CONF = "spark.databricks.delta.commitInfo.userMetadata"
# Idempotent writes, as Delta's SQL confs: a (txnAppId, txnVersion) already committed is skipped.
TXN_APP_ID_CONF = "spark.databricks.delta.write.txnAppId"
TXN_VERSION_CONF = "spark.databricks.delta.write.txnVersion"
# Shim-only: make writes conditional on the table version the writer read.
EXPECTED_VERSION_CONF = "sparkshim.write.expectedTableVersion"
# INSERT OVERWRITE replaces the table's schema with the query's, in the same commit
# (Delta's writer option overwriteSchema, for SQL).
OVERWRITE_SCHEMA_CONF = "sparkshim.write.overwriteSchema"

# ---- maintenance ----

# VACUUM with a retention shorter than the table's is refused unless this is false.
RETENTION_CHECK_CONF = "spark.databricks.delta.retentionDurationCheck.enabled"

# ---- queries ----

# Whether a DECIMAL result beyond 38 digits drops fractional digits (true, the default).
ALLOW_PRECISION_LOSS_CONF = "spark.sql.decimalOperations.allowPrecisionLoss"
# Spark's legacy reading of a HAVING without GROUP BY as a WHERE.
HAVING_AS_WHERE_CONF = "spark.sql.legacy.parser.havingWithoutGroupByAsWhere"
# Spark's legacy left-to-right precedence of set operations.
SETOPS_PRECEDENCE_CONF = "spark.sql.legacy.setopsPrecedence.enabled"
# Whether a semi join that looks up rows of a table with deletion vectors by some or all of
# its columns finds them through the row index (row_index.py) rather than by reading it.
ROW_INDEX_CONF = "sparkshim.rowIndex.enabled"
# A semi join through the row index only on a table whose data files store at least this
# many rows (their statistics); a smaller table is read: the lookup computes the values
# first, on their own, and reads each file holding a match at its positions, which costs
# more than a scan below a few hundred thousand rows (benchmarks/bench_lookup.py).
ROW_INDEX_MIN_ROWS_CONF = "sparkshim.rowIndex.minRows"
ROW_INDEX_MIN_ROWS = 500_000
# Spark's legacy answer of a correlated scalar subquery over a count (see scalar_subqueries).
LEGACY_COUNT_CONF = "spark.sql.optimizer.decorrelateSubqueryLegacyIncorrectCountHandling.enabled"

# ---- DataFrame display ----

EAGER_EVAL_MAX_ROWS_CONF = "spark.sql.repl.eagerEval.maxNumRows"
EAGER_EVAL_TRUNCATE_CONF = "spark.sql.repl.eagerEval.truncate"
