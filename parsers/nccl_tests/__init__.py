"""nccl-tests: text output of all_reduce_perf, all_gather_perf, ... (one or many tests)."""
