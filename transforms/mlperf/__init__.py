"""MLPerf rounds' own rules applied to the raw result tables (pure functions, no database):
training_scores is MLPerf Training's per-benchmark score."""
