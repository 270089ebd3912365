"""GenAI-Perf: CSV and JSON exports."""
