"""MLPerf Training: the result logs (`result_N.txt`). The systems JSONs are read by
parsers/mlperf/systems.py, shared with MLPerf Inference."""
