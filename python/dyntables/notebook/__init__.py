"""Notebooks and plain PySpark sessions: the JVM-free shim layer.

No Scala parser extension is needed: every statement a user types reaches Python first
(``spark.sql`` is a Python method, a notebook cell is Python text), so the library
recognises its statements there and hands everything else to Spark untouched.

* ``install`` — ``dyntables.install(spark)``: the session's own ``spark.sql`` accepts the
  dynamic-table statements (``uninstall`` restores it);
* ``magics`` — ``%load_ext dyntables``: ``%%sql`` / ``%sql`` / ``%%dtsql``;
* ``display`` — results as HTML tables in notebooks and text in terminals, and the
  progress of long statements;
* ``shell`` — ``dyntables shell``: IPython with ``spark`` and ``dt`` ready.

Only ``magics``, ``display``'s notebook parts and ``shell`` import IPython, on first use.
"""
