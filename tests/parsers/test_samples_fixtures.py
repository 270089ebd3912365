"""The sample raw root that samples/generate.py writes is a second set of fixtures the
project makes itself: every file in it is detected as its format and loads whole, and the
numbers that come out are the ones its models put in (saturating throughput, Little's law,
the scaling table). run.yaml files are run context, read by ingest.run_context."""

from __future__ import annotations

import pytest

from ingest.examine import examine
from parsers.base import SourceFile
from samples import storage, training
from samples.generate import all_files

FILES = all_files()
RESULTS = sorted(p for p in FILES if not p.endswith("run.yaml"))
FORMATS = {  # the first part found in the path names the format
           "/systems/": "mlperf_systems_json", "mlperf_log_summary": "mlperf_inference_summary",
           "/result_": "mlperf_training_result", "_perf.log": "nccl_tests_text",
           "model_analyzer": "model_analyzer_csv", "perf_analyzer": "perf_analyzer_csv",
           "genai_perf/c64": "genai_perf_json", "genai_perf": "genai_perf_csv",
           "training": "tf_cnn_log", "/fio-": "fio_json", "/gdsio-": "gdsio_text",
           "reference/gpus": "reference_gpus", "reference/models": "reference_models",
           "reference/scenarios": "capacity_scenarios", "reference/slo": "slo_policies",
           "reference/llm_slo": "llm_slo_policies", "reference/llm_models": "reference_llm_models",
           "reference/model_aliases": "reference_model_aliases",
           "reference/gpu_prices": "reference_gpu_prices",
           "/vllm-": "vllm_bench_json", "/predictions/": "llm_predictions_csv",
           "profile_export_aiperf.json": "aiperf_json", "profile_export_aiperf.csv": "aiperf_csv"}


def expected_format(relpath: str) -> str:
    return next(fmt for part, fmt in FORMATS.items() if part in relpath)


def loaded(relpath: str) -> dict:
    outcome = examine(SourceFile(relpath, FILES[relpath].encode()))
    assert (outcome.status, outcome.problems) == ("loaded", [])
    return {key.removeprefix("raw."): rows for key, rows in outcome.rows.items()}


@pytest.mark.parametrize("relpath", RESULTS)
def test_every_sample_file_is_detected_and_loads_whole(relpath):
    outcome = examine(SourceFile(relpath, FILES[relpath].encode()))
    assert outcome.format == expected_format(relpath)
    assert (outcome.status, outcome.problems) == ("loaded", [])


@pytest.mark.parametrize("gpus", [1, 2, 4, 8])
def test_sample_single_node_log_total_follows_the_scaling_table(gpus):
    runs = loaded(f"training/h100-pod-a/1-node/resnet50-bs256-{gpus}gpu.log")["tf_cnn_runs"]
    (run,) = runs.rows(named=True)
    assert run["images_per_sec_total"] == training.images_per_sec(gpus)
    assert (run["device_count"], run["num_workers"]) == (gpus, 1)


@pytest.mark.xfail(strict=True, reason="parser gap: tf_cnn_devices reads GPU names only from "
                   "'(device: N, name: X, pci bus id' (TF <= 2.4); TF >= 2.5 writes 'Created "
                   "device ... with N MB memory:  -> device: 0, name: X, pci bus id: ...', as "
                   "the samples do, and gets NULL")
def test_sample_log_gpu_names_from_tf_2_5_device_lines():
    runs = loaded("training/h100-pod-a/1-node/resnet50-bs256-8gpu.log")["tf_cnn_runs"]
    (run,) = runs.rows(named=True)
    assert (run["gpu_name_from_log"], run["gpu_devices_from_log"]) == (training.GPU_NAME, 8)


@pytest.mark.parametrize("nodes, gpus", [(2, 16), (4, 32)])
def test_sample_horovod_log_has_one_run_per_rank(nodes, gpus):
    runs = loaded(f"training/h100-pod-a/{nodes}-nodes/resnet50-bs256-{gpus}gpu.log")[
        "tf_cnn_runs"]
    assert runs.height == gpus
    assert runs["primary_record"].sum() == 1  # rank 0 speaks for the job
    assert set(runs["images_per_sec_total"]) == {training.images_per_sec(gpus)}
    assert set(runs["num_workers"]) == {gpus}


@pytest.mark.parametrize("direction, peak, bend", [
    ("read", *storage.SEQUENTIAL["read"]), ("write", *storage.SEQUENTIAL["write"])])
def test_sample_fio_bandwidth_saturates_with_jobs(direction, peak, bend):
    jobs = loaded(f"storage/vast-01/fio-seq{direction}-1m.json")["fio_jobs"]
    assert jobs["numjobs"].to_list() == list(storage.JOBS)
    assert jobs["bandwidth_bytes_per_s"].to_list() == [
        float(int(storage.saturating(peak, bend, j))) for j in storage.JOBS]
    assert set(jobs["block_size_bytes"]) == {storage.MIB}
    assert set(jobs["iodepth"]) == {storage.IODEPTH}


@pytest.mark.parametrize("name, threads, gib_per_s", [
    ("gdsio-read-w8.log", 8, 21.4), ("gdsio-read-w16.log", 16, 24.9),
    ("gdsio-write-w8.log", 8, 12.6)])
def test_sample_gdsio_throughput_and_littles_law(name, threads, gib_per_s):
    (row,) = loaded(f"storage/nvme-raid0/{name}")["gdsio_results"].rows(named=True)
    assert row["threads"] == threads
    assert row["throughput_bytes_per_s"] == pytest.approx(gib_per_s * 2**30, rel=1e-6)
    # threads outstanding / IOPS = mean latency
    assert row["latency_mean_us"] == pytest.approx(threads / row["iops"] * 1e6, rel=1e-6)
