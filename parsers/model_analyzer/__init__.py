"""Triton Model Analyzer: results CSVs and the checkpoint."""
