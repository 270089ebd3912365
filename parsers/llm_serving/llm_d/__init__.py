"""llm-d Benchmark Reports (llm_d_benchmark/FORMATS.md): v0.1, v0.2 and v0.2.1 YAML."""
