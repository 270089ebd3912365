"""gdsio: text output."""
