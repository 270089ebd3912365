"""Every corpus file of the inference tools ends loaded, ignored with a reason, or rejected
with the reason expected here. A new corpus file fails this test until it is classified."""

from __future__ import annotations

import csv

import pytest

from ingest.engine import examine
from parsers.base import SourceFile
from tests.conftest import CORPUS

FOLDERS = ("model_analyzer", "perf_analyzer", "genai_perf")
DOC = "not a result: documentation text"
MA_CONFIG = "not a result: Model Analyzer profile config (YAML)"

# Files that do not load, and why. Everything else under FOLDERS must load.
NOT_LOADED = {
    "genai_perf/PROVENANCE.md": ("ignored", DOC),
    "model_analyzer/FORMATS.md": ("ignored", DOC),
    "model_analyzer/PROVENANCE.md": ("ignored", DOC),
    "perf_analyzer/PROVENANCE.md": ("ignored", DOC),
    "model_analyzer/NguyenTranDat__test-docker/config/triton_python.yaml": ("ignored", MA_CONFIG),
    "model_analyzer/minhminh2k__Triton_Backup/perf.yaml": ("ignored", MA_CONFIG),
    "model_analyzer/okdimok__triton_model_analyzer/profile_config_manual.yaml":
        ("ignored", MA_CONFIG),
    "model_analyzer/okdimok__triton_model_analyzer/profile_config_quick.yaml":
        ("ignored", MA_CONFIG),
    "model_analyzer/triton-inference-server__model_analyzer/experiments-config/"
    "minimize_latency.yml": ("ignored", MA_CONFIG),
    **{f"model_analyzer/triton-inference-server__model_analyzer/{d}/README.txt": ("ignored", DOC)
       for d in ("golden-2022-05-single-model", "golden-head-bls", "golden-head-ensemble",
                 "golden-head-multi-model", "golden-head-request-rate",
                 "golden-head-single-model")},
    "perf_analyzer/triton-inference-server__server/qa-L0_perf_nomodel-baseline/"
    "19.08__16mb_latency_http__onnx_sbatch1_instance1.log": (
        "rejected", "perf_analyzer console output is not parsed (it is rounded and unstable "
                    "across versions): export the same run with perf_analyzer -f results.csv"),
}
# Checkpoint measurements per file (one row per measurement and model), and GenAI-Perf rows
LOADED_ROWS = {
    "model_analyzer/NguyenTranDat__test-docker/checkpoints/0.ckpt": 24,
    "model_analyzer/triton-inference-server__model_analyzer/golden-2022-05-single-model/0.ckpt":
        16,
    "model_analyzer/triton-inference-server__model_analyzer/golden-head-ensemble/0.ckpt": 21,
    "model_analyzer/triton-inference-server__model_analyzer/golden-head-single-model/0.ckpt": 16,
    "genai_perf/NVIDIA__cloudai/doc-ai_dynamo-2025-07/profile_export_genai_perf.csv": 1,
    "genai_perf/triton-inference-server__perf_analyzer__issue-298/"
    "profile_export_genai_perf.streaming.json": 1,
}


def corpus_files() -> list[str]:
    if not CORPUS.is_dir():
        return []
    return sorted(p.relative_to(CORPUS).as_posix() for folder in FOLDERS
                  for p in (CORPUS / folder).rglob("*") if p.is_file())


def csv_measurements(relpath: str) -> int:
    """Data rows of a results CSV, counted independently of the parsers: a concurrent
    multi-model row ("m1,m2" in the first cell) is one measurement per model."""
    with open(CORPUS / relpath, newline="") as handle:
        rows = [r for r in csv.reader(handle) if any(c.strip() for c in r)][1:]
    return sum(len(r[0].split(",")) for r in rows)


@pytest.mark.parametrize("relpath", corpus_files())
def test_corpus_file_outcome(relpath):
    outcome = examine(SourceFile(relpath, (CORPUS / relpath).read_bytes()))
    if relpath in NOT_LOADED:
        assert (outcome.status, outcome.error) == NOT_LOADED[relpath]
        return
    assert outcome.status == "loaded", outcome.error
    assert outcome.problems == []
    if relpath.endswith(".csv") and relpath not in LOADED_ROWS:
        expected = csv_measurements(relpath)
        main_table = max(outcome.rows.values(), key=lambda f: f.height)
        assert main_table.height == expected
    else:
        measurements = next(iter(outcome.rows.values()))
        assert measurements.height == LOADED_ROWS[relpath]


def test_every_expectation_names_a_real_file():
    files = set(corpus_files())
    if not files:
        pytest.skip("corpus not present")
    assert set(NOT_LOADED) <= files
    assert set(LOADED_ROWS) <= files
