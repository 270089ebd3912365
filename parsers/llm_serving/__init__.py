"""LLM-serving load tests: vLLM bench JSON, SGLang bench_serving JSONL, AIPerf exports,
GuideLLM reports."""
