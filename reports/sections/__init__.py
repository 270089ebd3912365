"""The report's sections, one module per subject; each tolerates missing tables."""
