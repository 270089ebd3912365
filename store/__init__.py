"""The one door to the warehouse: the only package that opens DuckDB.

`location` is where the warehouse is, parsed once from the setting: a DuckDB file or a
DuckLake catalog, which it opens for reading, for a user's SQL or for a run's writes.
`Store` wraps a connection (tables, per-file replacement, transactions, queries);
`publish` writes a run into a staging copy of the DuckDB file and publishes it atomically;
`lock` keeps writers of a file one at a time. The second backend, DuckLake on a PostgreSQL
catalog, is `lake` (settings, attach, snapshots) and `lake_run` (a run's locks and redone
commits): docs/scale-out.md.
"""
