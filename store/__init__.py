"""The one door to the warehouse: the only package that opens DuckDB.

`Store` wraps a connection (tables, per-file replacement, transactions, queries);
`publish` writes a run into a staging copy of the DuckDB file and publishes it atomically;
`lock` keeps writers of a file one at a time. The second backend, DuckLake on a PostgreSQL
catalog, is `lake` (settings, attach, snapshots) and `lake_run` (a run's locks and redone
commits): docs/scale-out.md.
"""
