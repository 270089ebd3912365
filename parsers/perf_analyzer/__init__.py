"""perf_analyzer: the -f results CSV."""
