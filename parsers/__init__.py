"""Pure parsers: bytes of one file in, typed frames and reasons out. No Dagster, no DuckDB."""
