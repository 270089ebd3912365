"""The one door to the warehouse: the only package that opens DuckDB.

`Store` wraps a connection (tables, per-file replacement, transactions, queries);
`publish` writes a run into a staging copy and publishes it atomically; `lock` keeps
writers one at a time. A second backend (DuckLake) plugs in here.
"""
