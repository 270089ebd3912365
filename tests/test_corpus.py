"""Every corpus file ends loaded, ignored with a reason, or rejected with the reason
expected here. A new corpus file fails this test until it is classified. (Values of each
file are asserted by the parser tests under tests/parsers.)"""

from __future__ import annotations

import csv

import pytest

from ingest.examine import examine
from parsers.base import SourceFile
from parsers.io500.layout import CONFIG_REASON as IO500_CONFIG_REASON
from parsers.llm_serving.llm_d import report as llm_d_report
from parsers.mlperf_storage import archive as storage_archive
from tests.conftest import CORPUS

FOLDERS = ("model_analyzer", "perf_analyzer", "genai_perf", "tf_cnn_benchmarks", "fio",
           "gdsio", "elbencho", "mlperf_storage", "nccl_tests", "mlperf_inference",
           "llm_serving", "mlperf_training", "guidellm", "llm_d_benchmark", "inferencex",
           "inference_perf", "llmperf", "vllm_sweep", "mlperf_inference_llm",
           "mlperf_storage_v2_v3", "gpu_telemetry", "aiconfigurator", "io500", "trtllm_bench")
DOC = "not a result: documentation text"
MA_CONFIG = "not a result: Model Analyzer profile config (YAML)"
FIO_JOB = ("ignored", "not a result: fio job file (or template): the run's output is loaded")
LAMBDA = "tf_cnn_benchmarks/lambdal__lambda-tensorflow-benchmark/"
MCGROF = "fio/mcgrof__fio-tests/"



class Starts(str):
    """An expected reason given by its beginning: the rest names what the file holds (the
    unrecognised-format reason counts the known formats and quotes the first line)."""


UNRECOGNISED = ("rejected", Starts("unrecognised format: none of the"))
# Files of formats no parser reads yet, per corpus folder.
NOT_READ_YET: dict[str, tuple[str, ...]] = {}
KUBECON = "inference_perf/kubernetes-sigs__inference-perf/demos/kubecon-na-2025/"
# Beside the inference-perf reports (which all load); llmperf's README.
LLM_TOOL_FILES = {
    "llmperf/ray-project__llmperf-leaderboard/raw_data/README": ("ignored", DOC),
    f"{KUBECON}analysis/analyzed_reports_legend.json": (
        "ignored", "not a result: inference-perf analysis legend (report names to result "
                   "folders)"),
    f"{KUBECON}config.yaml": (
        "ignored", "not a result: inference-perf run configuration (config.yaml); the load of "
                   "each stage is in its report (requested_rate)"),
    f"{KUBECON}vllm+batch_size/manifests.yaml": (
        "ignored", "not a result: Kubernetes manifests (the deployment under test: image, "
                   "flags, GPU node selector); the GPU belongs in the run's run.yaml"),
}
IO500 = "io500/IO500__submission-data/"
BR = "llm_d_benchmark/llm-d__llm-d-benchmark/llmdbenchmark/analysis/benchmark_report/"
GUIDELLM_ASSETS = "guidellm/vllm-project__guidellm/tests/unit/entrypoints/assets/"
# Text the sniffer takes for prose today: READMEs, and vLLM's /metrics dump, which the LLM
# formats issue reads.
PROSE = (
    "inferencex/SemiAnalysisAI__InferenceX/docs/results-and-ingestion.md",
    "inference_perf/kubernetes-sigs__inference-perf/demos/kubecon-na-2025/README.md",
    "vllm_sweep/er0080__vllm-benchmarking/packages/protocol/tests/fixtures/"
    "metrics_vllm_0_25_1_loaded.txt",
    "mlperf_inference_llm/mlcommons__inference_results_v5.1/README.md",
    "gpu_telemetry/xypp3__gpu_glasses/README.md",
)
LLM_V51 = "mlperf_inference_llm/mlcommons__inference_results_v5.1/"
KRAI_TEST06 = (f"{LLM_V51}open/Krai/compliance/xe9680_h100_x8_vllm_092/llama3_1-70b-fp8_dyn/"
               "interactive/TEST06/")
V3_AZURE = "mlperf_storage_v2_v3/mlcommons__storage_results_v3.0/closed/Azure/"
V3_CHECKPOINT = (f"{V3_AZURE}results/AMLFS-Durable-Premium-125-160TiB-2-Standard_E192is_v6/"
                 "checkpointing/llama3-8b/20260722_193256/")
COMPLIANCE_TEST06 = ("not a result: MLPerf Inference compliance test output (TEST06), an audit "
                     "of the submission whose runs may be INVALID by design; the run's own "
                     "files under results/ are loaded")
LOADGEN_DETAIL = ("ignored", "not a result: LoadGen detail log (mlperf_log_detail.txt); the "
                             "mlperf_log_summary.txt of the same run is loaded (same numbers, 6 "
                             "significant digits)")

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
    **{f"{folder}/{f}": UNRECOGNISED for folder, files in NOT_READ_YET.items() for f in files},
    f"{GUIDELLM_ASSETS}benchmarks_stripped_output.txt": (
        "rejected", "GuideLLM console output is not parsed (rounded tables of a few "
                    "statistics): load the report of the same run, saved with --output-path "
                    "benchmarks.json (or .yaml / .csv)"),
    "guidellm/nirjhar17__guidellm-pd-disaggregation/reports/all-benchmarks.csv": (
        "rejected", "a summary table derived from GuideLLM reports by a project's own "
                    "script, not GuideLLM's CSV export (rounded, no model, p99 often '-'): "
                    "load the GuideLLM JSON or YAML reports it summarises"),
    **{f: ("ignored", DOC) for f in PROSE},
    # the llm-d report's JSON Schemas beside its examples (the examples load)
    **{f"{BR}br_v0_{v}_json_schema.json": ("ignored", llm_d_report.SCHEMA_REASON)
       for v in ("1", "2", "2_1")},
    **LLM_TOOL_FILES,
    f"{IO500}Core42/Maximus-01/DAOS/2025/submission-781/results/2025.11.07-04.51.46/"
    "config.ini": ("ignored", IO500_CONFIG_REASON),
    **{f"{LLM_V51}closed/{run}/performance/run_1/mlperf_log_detail.txt": LOADGEN_DETAIL
       for run in ("Dell/results/XE9680L_B200_SXM_180GBx8_TRT/llama3.1-8b/Interactive",
                   "NVIDIA/results/GB300-NVL72_GB300-288GB_aarch64x72_TRT/deepseek-r1/Server",
                   "RedHat/results/XE8640_4xH100_vLLM/llama3.1-8b/Server")},
    **{f"{KRAI_TEST06}{f}": ("ignored", COMPLIANCE_TEST06)
       for f in ("performance/run_1/mlperf_log_summary.txt", "verify_accuracy.txt")},
    "mlperf_inference_llm/mlcommons__inference/loadgen/mlperf.conf": (
        "ignored", "not a result: LoadGen configuration (mlperf.conf): the round's latency "
                   "limits are declared in schemas/mlperf_rounds/inference.py"),
    f"{V3_CHECKPOINT}dlio_config/config.yaml": (
        "ignored", "not a result: DLIO run configuration (config.yaml), read as context of the "
                   "run (workload, model, accelerator)"),
    f"{V3_CHECKPOINT}0_output.json": ("ignored", storage_archive.RANK_REASON),
    f"{V3_AZURE}results/AMLFS-Durable-Premium-40-480TiB-3-Standard_D192ds_v6/training/unet3d/"
    "run/20260721_170053/training_run.stdout.log": ("ignored", storage_archive.CAPTURE_REASON),
    f"{V3_AZURE}systems/AMLFS-Durable-Premium-40-480TiB-3-Standard_D192ds_v6.yaml": (
        "ignored", storage_archive.SYSTEM_YAML_REASON),
    **{f"{tool}/{doc}.md": ("ignored", DOC) for tool in FOLDERS[3:]
       for doc in ("PROVENANCE", "FORMATS") if (CORPUS / tool / f"{doc}.md").is_file()},
    f"{LAMBDA}tf-train-throughput-fp16.csv": (
        "ignored", "not a result: Lambda summary table derived from the tf_cnn_benchmarks logs "
                   "(rounded totals); the logs themselves are loaded"),
    f"{LAMBDA}tf-train-throughput-fp32.csv": (
        "ignored", "not a result: Lambda summary table derived from the tf_cnn_benchmarks logs "
                   "(rounded totals); the logs themselves are loaded"),
    f"{LAMBDA}logs/7742-1xA100-SXM4-40GB_TF2_3.logs/real-replicated-fp16-1gpus/resnet50-448/"
    "thermal/1": ("ignored", "not a result: Lambda thermal trace (GPU temperatures and rate "
                             "per second)"),
    "fio/CyberHuey__System-Testing/fio_output.json": (
        "rejected", "fio_json: no fio report: the file holds only fio's error messages (3 "
                    "line(s), first: 'fio: \"C is not a directory'); the run failed before "
                    "producing results: fix the job and run it again"),
    **{f"fio/{job}": FIO_JOB for job in (
        "CyberHuey__System-Testing/nvme_test_win.fio",
        "GijsVermarien__corsair_mp510_fio_test/ssd-steadystate-4k.fio",
        "GoogleCloudPlatform__PerfKitBenchmarker/tests/data/fio/fio.job",
        "GoogleCloudPlatform__PerfKitBenchmarker/tests/data/fio/hist/pkb-7fb0c9d8-0_fio.job",
        "JBernsteinIV__disk_test/configs.fio", "bensonjohnson__FIO-tests/mixed_read_write.ini",
        "bensonjohnson__FIO-tests/random_write.ini", "bensonjohnson__FIO-tests/sequential_read.ini",
        "brucechin__HardwareTest/fio.conf", "igluko__pve-scripts/fio.conf",
        "louwrentius__fio-plot/benchmark_script/random-io-template.fio",
        "mcgrof__fio-tests/templates/0001-basic-template.ini.in",
        "vincentkfu__fio-blog/0001-steadystate/bw_slope.fio",
        "vincentkfu__fio-blog/0003-xnvme-part-1/xnvme-compare.fio",
        "vincentkfu__fio-blog/0013-pi-part-2/pi-sb-512.fio")},
    "fio/GoogleCloudPlatform__PerfKitBenchmarker/tests/data/fio/hist/"
    "pkb_fio_avg_1506559526.49_clat_hist.1.log": (
        "ignored", "not a result: fio latency histogram log (write_hist_log)"),
    f"{MCGROF}tests-demo-results/tests/0004-maxiobatch-jobs/0004-maxiobatch-randread/"
    "0005-4096qd-randread/0007-bs4k-64j-4096qd-randread.ini.BAD": (
        "ignored", "not a result: empty file"),
    **{f"{MCGROF}tests-demo-results/tests/{res}": (
        "ignored", "not a result: fio-tests harness summary, numbers derived from the .out "
                   "file beside it") for res in (
        "0004-maxiobatch-jobs/0004-maxiobatch-randread/0005-4096qd-randread/"
        "0007-bs4k-64j-4096qd-randread.ini.res",
        "0003-maxiobatch-single-job/0005-maxiobatch-randwrite-70-30/"
        "0012-bs4k-1j-2048qd-randrw.ini.res")},
    "gdsio/hongsunjang__gpudirect_storage/cufile.log": (
        "ignored", "not a result: cuFile library log (libcufile), context for gdsio runs"),
    "elbencho/glennklockwood__elbencho-test/results.cgpu/elbencho-scaling/2799486/"
    "bw-direct.08threads.2799486.live.csv": (
        "ignored", "not a result: elbencho live statistics (--livecsv), progress samples; the "
                   "phase results are in the --csvfile/--resfile output"),
    "mlperf_storage/mlcommons__storage_results_v1.0/Closed/DDN/results/"
    "AI400X2T_24x14TiB_nvme_8xNDR200_18clients/unet3d-h100/runs/run1/c008/configs/"
    "overrides.yaml": ("ignored", "not a result: Hydra overrides of a DLIO run "
                                  "(overrides.yaml), read as context of the run (workload, "
                                  "model, accelerator)"),
    **{f"mlperf_inference/mlcommons__inference_results_v4.1/closed/{run}": (
        "ignored", "not a result: LoadGen detail log (mlperf_log_detail.txt); the "
                   "mlperf_log_summary.txt of the same run is loaded (same numbers, 6 "
                   "significant digits)") for run in (
        "AMD/results/8xMI300X_2xEPYC-9374F/llama2-70b-99/Server/performance/run_1/"
        "mlperf_log_detail.txt",
        "Cisco/results/C240M7_L40Sx2_TRT/gptj-99/Server/performance/run_1/mlperf_log_detail.txt",
        "Intel/results/1-node-2S-GNR-PyTorch/gptj-99/Offline/performance/run_1/"
        "mlperf_log_detail.txt",
        "Lenovo/results/SR650_V3_3xL40S_TRT/resnet50/Offline/performance/run_1/"
        "mlperf_log_detail.txt",
        "NVIDIA/results/H200-SXM-141GBx8_TRT/llama2-70b-99/Offline/performance/run_1/"
        "mlperf_log_detail.txt",
        "NeuralMagic/results/vLLM_8xL40S-reference-cpu-pytorch-v2.3.1-default_config/"
        "llama2-70b-99/offline/performance/run_1/mlperf_log_detail.txt",
        "Supermicro/results/SYS_821GE_TNHR_H100_SXM_80GBx8_TRT/resnet50/Server/performance/"
        "run_1/mlperf_log_detail.txt",
        "UntetherAI/results/r760_u6_slim/resnet50/server/performance/run_1/"
        "mlperf_log_detail.txt")},
    **{f"mlperf_inference/mlcommons__inference_results_v4.1/closed/{acc}/accuracy/accuracy.txt":
       ("ignored", "not a result: MLPerf Inference accuracy-script output (accuracy.txt, "
                   "free-form per benchmark); the run's performance summary is loaded")
       for acc in ("AMD/results/8xMI300X_2xEPYC-9374F/llama2-70b-99/Server",
                   "Lenovo/results/SR650_V3_3xL40S_TRT/resnet50/Offline")},
}
INFERENCE = FOLDERS[:3]
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
        status, reason = NOT_LOADED[relpath]
        assert outcome.status == status
        if isinstance(reason, Starts):
            assert (outcome.error or "").startswith(reason), outcome.error
        else:
            assert outcome.error == reason
        return
    assert outcome.status == "loaded", outcome.error
    assert outcome.problems == []
    if not relpath.startswith(INFERENCE):
        assert outcome.rows  # values: tests/parsers/test_<tool>*.py
    elif relpath.endswith(".csv") and relpath not in LOADED_ROWS:
        expected = csv_measurements(relpath)
        main_table = max(outcome.rows.values(), key=lambda f: f.height)
        assert main_table.height == expected
    else:
        measurements = next(iter(outcome.rows.values()))
        assert measurements.height == LOADED_ROWS[relpath]


def test_every_corpus_folder_is_classified():
    """A folder added to the corpus fails here until its files are classified above."""
    if not CORPUS.is_dir():
        pytest.skip("corpus not present")
    assert sorted(p.name for p in CORPUS.iterdir() if p.is_dir()) == sorted(FOLDERS)


def test_every_expectation_names_a_real_file():
    files = set(corpus_files())
    if not files:
        pytest.skip("corpus not present")
    assert set(NOT_LOADED) <= files
    assert set(LOADED_ROWS) <= files
