"""The crash and concurrency harness (DESIGN.md §3: atomicity and concurrency).

Real processes, real SIGKILLs, real races; nothing mocked. The pieces:

* ``workload`` — three sources, five dynamic tables, and the driver's model of the sources;
* ``invariants`` — the checks, engine-neutral (the Spark tiers reuse them);
* ``killpoints`` — how a worker finds its commit points and SIGKILLs itself at one;
* ``worker`` — the embedded worker process (``python -m reliability.worker``);
* ``harness`` — the embedded driver: kill trials, concurrency rounds, scheduler starts;
* ``spark_tier`` and ``spark_child`` — the same checks on real Spark (Iceberg, Delta);
* ``report`` — the figures, as a terminal summary and a JSON file;
* ``profile`` — how much of it to do.

``DYNTABLES_RELIABILITY_PROFILE`` chooses the profile: ``short`` (the default, inside
``make test``) or ``long`` (``make test-reliability``).
"""
