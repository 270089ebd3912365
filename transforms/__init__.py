"""Derived tables: SQL over the raw layer, validated before it replaces anything."""
