"""Dagster assets: thin wrappers that find inputs, call the engine, and report metadata."""
