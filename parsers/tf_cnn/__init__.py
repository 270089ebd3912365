"""tf_cnn_benchmarks: logs (line grammar, runs, rows), --benchmark_log_dir, Lambda metadata."""
