"""MLPerf Inference LoadGen output (mlperf_inference/FORMATS.md)."""
