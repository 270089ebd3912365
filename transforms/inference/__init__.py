"""Inference: core measurements, optimal concurrency, the GPU-memory rule, the capacity
planner (pure functions over frames; `tables.py` reads and writes the warehouse), and
their Great Expectations suites."""
