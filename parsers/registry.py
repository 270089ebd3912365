"""Which parser reads a file: decided from its content, in a fixed order."""

from __future__ import annotations

from dataclasses import dataclass

from parsers.base import Parser, SourceFile
from parsers.elbencho.results import ElbenchoCsv, ElbenchoText
from parsers.fio.json_output import FioJson
from parsers.fio.terse import FioTerse
from parsers.fio.text import FioText
from parsers.gdsio.text_output import Gdsio
from parsers.genai_perf.exports import GenAiPerfCsv, GenAiPerfJson
from parsers.gpu_telemetry.amd_smi import AmdSmiEnergyCsv, AmdSmiStaticJson
from parsers.gpu_telemetry.nvidia_smi import NvidiaSmiCsv
from parsers.io500.ior_text import IorText
from parsers.io500.rank_csv import IorRankCsv
from parsers.io500.result_ini import Io500ResultIni
from parsers.io500.summary import Io500Summary
from parsers.llm_serving.aiconfigurator import AiconfiguratorSiliconCsv
from parsers.llm_serving.aiperf import AiperfCsv, AiperfJson
from parsers.llm_serving.guidellm.csv_export import GuidellmCsv
from parsers.llm_serving.guidellm.serialized import GuidellmReportJson, GuidellmReportYaml
from parsers.llm_serving.inference_perf import InferencePerfLifecycle, InferencePerfPrometheus
from parsers.llm_serving.inferencex import InferencexAggJson
from parsers.llm_serving.llm_d.report import LlmdBenchmarkReport
from parsers.llm_serving.llmperf import LlmperfResponses, LlmperfSummary
from parsers.llm_serving.predictions import LlmPredictionsCsv
from parsers.llm_serving.sglang import SglangBenchJsonl
from parsers.llm_serving.trtllm_bench import TrtllmBenchReportJson
from parsers.llm_serving.vllm import VllmBenchJson
from parsers.mlperf.paths import location_labels
from parsers.mlperf.systems import MlperfSystemsJson
from parsers.mlperf_inference import roles as mlperf_inference
from parsers.mlperf_inference.summary import MlperfInferenceSummary
from parsers.mlperf_storage.checkpoint import MlperfStorageCheckpoint
from parsers.mlperf_storage.results import (
    MlperfStorageEpochs,
    MlperfStorageReport,
    MlperfStorageSummary,
)
from parsers.mlperf_training.result_log import MlperfTrainingResult
from parsers.model_analyzer.checkpoint import ModelAnalyzerCheckpoint
from parsers.model_analyzer.csv_export import ModelAnalyzerCsv
from parsers.nccl_tests.text_output import NcclTests
from parsers.non_results import not_a_result, source_code, unsupported
from parsers.perf_analyzer.csv_export import PerfAnalyzerCsv
from parsers.reference.inference_csv import GpuPricesCsv, GpusCsv, ModelsCsv
from parsers.reference.llm_models_csv import LlmModelsCsv
from parsers.reference.model_aliases_csv import ModelAliasesCsv
from parsers.reference.sizing_yaml import CapacityScenarios, LlmSloPolicies, SloPolicies
from parsers.reference.storage_csv import CheckpointBytesCsv, DatasetsCsv
from parsers.tf_cnn.benchmark_log_dir import TfCnnBenchmarkMetrics, TfCnnBenchmarkRun
from parsers.tf_cnn.lambda_metadata import TfCnnLambdaMetadata
from parsers.tf_cnn.log import TfCnnLog
from schemas.spec import Table

PARSERS: tuple[Parser, ...] = (
    ModelAnalyzerCheckpoint(),
    ModelAnalyzerCsv(),
    PerfAnalyzerCsv(),
    AiperfJson(),  # before GenAI-Perf, whose sniffers also match AIPerf's exports
    AiperfCsv(),
    VllmBenchJson(),
    SglangBenchJsonl(),
    GuidellmReportJson(),
    GuidellmReportYaml(),
    GuidellmCsv(),
    LlmperfSummary(),
    LlmperfResponses(),
    InferencePerfLifecycle(),
    InferencePerfPrometheus(),
    InferencexAggJson(),  # "hw" and "tput_per_gpu": no other format writes them
    LlmdBenchmarkReport(),  # YAML with top-level scenario and results (or v0.1 metrics)
    AiconfiguratorSiliconCsv(),  # a header with silicon_ttft_ms and silicon_tpot_ms
    LlmPredictionsCsv(),  # a header with predictor, concurrency and a predicted value
    TrtllmBenchReportJson(),  # "world_info" and "request_throughput_req_s"
    GenAiPerfJson(),
    GenAiPerfCsv(),
    ModelsCsv(),
    GpusCsv(),
    GpuPricesCsv(),  # gpu_model, provider_class, usd_per_gpu_hour
    LlmModelsCsv(),  # its header has layers, kv_heads...: never models.csv's
    ModelAliasesCsv(),  # alias, canonical_model: no other reference CSV has them
    DatasetsCsv(),
    CheckpointBytesCsv(),
    CapacityScenarios(),
    SloPolicies(),
    LlmSloPolicies(),
    TfCnnLog(),
    TfCnnBenchmarkRun(),
    TfCnnBenchmarkMetrics(),
    TfCnnLambdaMetadata(),
    FioJson(),  # before terse and normal: a file with all three output formats loads once
    FioTerse(),
    FioText(),
    ElbenchoText(),
    ElbenchoCsv(),
    Io500Summary(),
    Io500ResultIni(),
    IorText(),
    IorRankCsv(),
    MlperfStorageSummary(),
    MlperfStorageCheckpoint(),
    MlperfStorageEpochs(),
    MlperfStorageReport(),
    MlperfInferenceSummary(),
    MlperfSystemsJson(),
    MlperfTrainingResult(),
    NvidiaSmiCsv(),
    AmdSmiEnergyCsv(),
    AmdSmiStaticJson(),
    NcclTests(),  # scans up to 1 MiB of text for the header, column titles or summary
    Gdsio(),  # last: it scans up to 1 MiB of text for result lines
)
BY_FORMAT: dict[str, Parser] = {p.format: p for p in PARSERS}
# Formats filed in MLPerf's submission trees, where a file's place names what was measured
# (benchmark, accuracy target, scenario, system): ingest/duplicates.py compares copies by it
SUBMISSION_TREE_FORMATS = frozenset(p.format for p in PARSERS if isinstance(p, (
    MlperfStorageSummary, MlperfStorageEpochs, MlperfStorageReport, MlperfInferenceSummary,
    MlperfSystemsJson, MlperfTrainingResult)))


# GPU telemetry is joined to the benchmark run in its own folder (transforms/llm/energy.py):
# the folder is part of its meaning, so byte-identical logs in two run folders (a GPU
# identity dump, the same from run to run on one host) are two results, never duplicates.
FOLDER_JOINED_FORMATS = frozenset(p.format for p in PARSERS if isinstance(p, (
    NvidiaSmiCsv, AmdSmiEnergyCsv, AmdSmiStaticJson)))


def place_labels(format_: str | None, relpath: str) -> dict[str, str]:
    """The labels a file's place gives its results, by its format's layout ({} for a
    format whose place says nothing beyond the run.yaml and path conventions)."""
    if format_ in SUBMISSION_TREE_FORMATS:
        return location_labels(relpath)
    if format_ in FOLDER_JOINED_FORMATS:
        return {"folder": relpath.rpartition("/")[0]}
    return {}


def data_tables() -> list[Table]:
    """Every table a parser writes, each once."""
    seen: dict[str, Table] = {}
    for parser in PARSERS:
        for table in parser.tables:
            seen.setdefault(table.key, table)
    return list(seen.values())


@dataclass(frozen=True)
class Detection:
    parser: Parser | None
    ignored_reason: str | None = None  # recognised as not a result
    rejected_reason: str | None = None  # nothing can read it

    @property
    def format(self) -> str | None:
        return self.parser.format if self.parser else None


def detect(src: SourceFile) -> Detection:
    if reason := source_code(src):  # an MLPerf submission's code/: nothing in it is a result
        return Detection(None, ignored_reason=reason)
    # before MLPerf Training's MLLOG reader, and before a compliance run's summary is parsed
    if reason := mlperf_inference.not_a_result(src):
        return Detection(None, ignored_reason=reason)
    for parser in PARSERS:
        if parser.sniff(src):
            return Detection(parser)
    if reason := not_a_result(src):
        return Detection(None, ignored_reason=reason)
    if reason := unsupported(src):
        return Detection(None, rejected_reason=reason)
    first = src.head(200).strip().split("\n", 1)[0][:80]
    return Detection(None, rejected_reason=(
        f"unrecognised format: none of the {len(PARSERS)} known formats (README, 'Formats') "
        f"matches this content (first line: {first!r})"
    ))
