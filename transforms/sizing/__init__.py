"""Sizing rules as pure functions over frames; `tables.py` reads and writes the warehouse."""
