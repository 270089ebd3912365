"""The ingestion engine: discover files, parse, validate, write DuckDB. No Dagster here."""
