"""Helpers with no layer of their own: they import nothing of the project, so any package may
use them (the import contracts in pyproject.toml keep it so)."""
