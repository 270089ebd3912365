"""MLPerf Storage: summary, per-epoch stats, report."""
