"""MLPerf Storage / DLIO outputs on fixtures the project writes
(tests/fixtures/mlperf_storage): a passing unet3d summary with its per-epoch stats and the
submission report, a failing resnet50 summary without mean fields, a checkpointing summary
that is not a training result, and the Hydra overrides beside them. DLIO's 'MB' is MiB."""

from __future__ import annotations

import json
import statistics

import pytest

from parsers.base import FormatError, SourceFile
from parsers.mlperf_storage.results import (
    MlperfStorageEpochs,
    MlperfStorageReport,
    MlperfStorageSummary,
)
from tests.conftest import only
from tests.fixtures import MLPS, UNET, fixture

MIB = 2**20
SUMMARY = UNET + "run1/host01/summary.json"
EPOCHS = UNET + "run1/host01/per_epoch_stats.json"
REPORT = UNET + "mlperf_storage_report.json"
RESNET = MLPS + "resnet50-a100/runs/run2/host07/summary.json"
CHECKPOINTING = MLPS + "checkpointing/llama3-8b/summary.json"
READERS = {SUMMARY: MlperfStorageSummary, RESNET: MlperfStorageSummary,
           CHECKPOINTING: MlperfStorageSummary, EPOCHS: MlperfStorageEpochs,
           REPORT: MlperfStorageReport}


@pytest.mark.parametrize("relpath", sorted(READERS))
def test_each_file_is_claimed_by_its_reader_only(relpath):
    src = fixture(relpath)
    claims = {cls.__name__ for cls in (MlperfStorageSummary, MlperfStorageEpochs,
                                       MlperfStorageReport) if cls().sniff(src)}
    assert claims == {READERS[relpath].__name__}


def summary(relpath: str) -> dict:
    parsed = MlperfStorageSummary().parse(fixture(relpath))
    assert parsed.problems == []
    (row,) = parsed.tables["raw.mlperf_storage_results"].rows(named=True)
    return row


def test_passing_summary_identity_from_the_path():
    row = summary(SUMMARY)
    assert (row["model"], row["accelerator"], row["model_source"]) == ("unet3d", "h100", "path")
    assert (row["num_accelerators"], row["num_hosts"], row["hostname"]) == (32, 4, "host01")
    assert (row["started_at"], row["ended_at"]) == ("2024-07-20T10:00:00.000000",
                                                    "2024-07-20T10:12:30.500000")
    assert (row["runtime_s"], row["epochs"]) == (750.5, 5)
    assert (row["num_files_train"], row["num_files_eval"], row["num_samples_per_file"]) == (
        8400, 0, 1)


def test_passing_summary_metrics():
    row = summary(SUMMARY)
    # DLIO's mean and stdev as written; min and max from the per-epoch lists
    assert (row["train_au_pct"], row["train_au_stdev_pct"]) == (92.0, 0.85)
    assert (row["train_au_min_pct"], row["train_au_max_pct"]) == (90.75, 93.0)
    assert (row["train_samples_per_s"], row["train_samples_stdev_per_s"]) == (413.1, 3.4)
    assert (row["train_samples_min_per_s"], row["train_samples_max_per_s"]) == (408.25, 417.75)
    assert (row["au_meets_expectation"], row["status"]) == (True, "success")
    assert row["train_io_bytes_per_s"] == 57_773.5 * MIB
    assert row["train_io_stdev_bytes_per_s"] == 475.5 * MIB


def test_failing_summary_without_means_or_epoch_count():
    row = summary(RESNET)
    assert (row["model"], row["accelerator"]) == ("resnet50", "a100")
    assert (row["au_meets_expectation"], row["status"]) == (False, "fail")
    assert row["epochs"] == 3  # no 'epochs' key: one AU value per epoch
    assert row["train_au_pct"] == pytest.approx(statistics.fmean([88.5, 89.5, 87.0]))
    assert (row["train_au_stdev_pct"], row["train_au_min_pct"], row["train_au_max_pct"]) == (
        None, 87.0, 89.5)
    assert row["train_samples_per_s"] == 21_000.0
    assert row["train_io_bytes_per_s"] == 2353.5 * MIB
    assert row["runtime_s"] is None  # 'end' is not a timestamp
    assert (row["num_files_eval"], row["num_samples_per_file"]) == (None, 1251)


def test_a_summary_outside_a_workload_folder_has_no_model():
    src = SourceFile("uploads/summary.json", fixture(SUMMARY).data)
    (row,) = MlperfStorageSummary().parse(src).tables["raw.mlperf_storage_results"].rows(
        named=True)
    assert (row["model"], row["accelerator"], row["model_source"]) == (None, None, None)


def test_a_checkpointing_summary_is_not_a_training_result():
    with pytest.raises(FormatError, match="DLIO summary has no training metrics"):
        MlperfStorageSummary().parse(fixture(CHECKPOINTING))


@pytest.mark.parametrize("old, new, message", [
    ('"num_accelerators": 32', '"num_accelerators": 32.5',
     r"num_accelerators: .*32\.5.*whole number"),
    ('"train_au_mean_percentage": 92.0', '"train_au_mean_percentage": "high"',
     r"train_au_mean_percentage: .*'high'.*number"),
    ('"train_au_percentage": [', '"train_au_percentage": ["a", ',
     "metric.train_au_percentage is not a list of numbers"),
    ('"num_accelerators": 32', '"num_accelerators": 32,}', "not valid JSON"),
])
def test_a_broken_summary_is_rejected(old, new, message):
    text = fixture(SUMMARY).data.decode()
    assert old in text
    with pytest.raises(FormatError, match=message):
        MlperfStorageSummary().parse(SourceFile(SUMMARY, text.replace(old, new).encode()))


# ---- per_epoch_stats.json --------------------------------------------------------------------

@pytest.mark.parametrize("epoch, duration, blocks, block_s, checkpoints, ckpt_s", [
    (1, 150.10, 1, 149.90, 1, 0.20),
    (2, 149.50, 2, 74.90 + 74.60, 0, None),
    (3, 150.25, 0, None, 0, None),  # a number here, strings in the others
])
def test_epoch_rows(epoch, duration, blocks, block_s, checkpoints, ckpt_s):
    parsed = MlperfStorageEpochs().parse(fixture(EPOCHS))
    assert parsed.problems == []
    row = only(parsed.tables["raw.mlperf_storage_epochs"], epoch=epoch)
    assert row["duration_s"] == duration
    assert (row["blocks"], row["checkpoints"]) == (blocks, checkpoints)
    assert row["block_duration_s"] == (None if block_s is None else pytest.approx(block_s))
    assert row["checkpoint_duration_s"] == ckpt_s
    assert row["started_at"].startswith("2024-07-20T10:0")


def test_a_bad_epoch_is_held_back_and_the_others_load():
    doc = json.loads(fixture(EPOCHS).data)
    doc["4"] = {"start": "x", "block1": {"start": "y"}}
    doc["summary"] = {"duration": "1"}
    parsed = MlperfStorageEpochs().parse(SourceFile(EPOCHS, json.dumps(doc).encode()))
    assert parsed.tables["raw.mlperf_storage_epochs"]["epoch"].to_list() == [1, 2, 3]
    assert [(p.location, p.reason) for p in parsed.problems] == [
        ("$.4", "block1 has no duration"), ("$.summary", "epoch 'summary' is not a numbered "
                                                         "object")]


def test_a_file_without_a_usable_epoch_is_rejected():
    with pytest.raises(FormatError, match="holds no usable epoch"):
        MlperfStorageEpochs().parse(SourceFile(EPOCHS, b'{"1": {"start": "x", '
                                                       b'"block1": {}}}'))


# ---- mlperf_storage_report.json --------------------------------------------------------------

@pytest.mark.parametrize("iteration, samples, mib_s", [(1, 413.1, 57_773.5), (2, 412.0, 57_619.7)])
def test_report_runs(iteration, samples, mib_s):
    parsed = MlperfStorageReport().parse(fixture(REPORT))
    assert parsed.problems == []
    row = only(parsed.tables["raw.mlperf_storage_report_runs"], iteration=iteration)
    assert row["run_key"].startswith(f"result_unet3d_4_8accperclient_h100_iter{iteration}_")
    assert (row["clients"], row["accelerators_per_client"]) == (4, 8)
    assert (row["model"], row["accelerator"], row["num_accelerators"]) == ("unet3d", "h100", 32)
    assert (row["train_samples_per_s"], row["train_io_bytes_per_s"]) == (samples, mib_s * MIB)
    assert (row["num_files_train"], row["num_samples_per_file"]) == (8400, 1)
    assert row["num_benchmark_runs"] == 2


def test_a_report_run_without_throughput_is_held_back():
    doc = json.loads(fixture(REPORT).data)
    doc["runs"]["result_custom_name"] = {"model": "unet3d", "train_throughput_samples_per_"
                                                            "second": 1.0}
    doc["runs"]["result_renamed"] = {"train_throughput_samples_per_second": 400.0,
                                     "train_throughput_MB_per_second": 50_000.0}
    parsed = MlperfStorageReport().parse(SourceFile(REPORT, json.dumps(doc).encode()))
    df = parsed.tables["raw.mlperf_storage_report_runs"]
    renamed = only(df, run_key="result_renamed")
    assert (renamed["iteration"], renamed["clients"]) == (None, None)  # key without the pattern
    assert [(p.location, p.reason) for p in parsed.problems] == [(
        "$.runs.result_custom_name", "run lacks numeric train_throughput_samples_per_second and "
                                     "train_throughput_MB_per_second")]


def test_a_report_without_runs_is_rejected():
    text = b'{"overall": {"train_throughput_mean_MB_per_second": 1.0}, "runs": {}}'
    with pytest.raises(FormatError, match="non-empty 'runs' map"):
        MlperfStorageReport().parse(SourceFile(REPORT, text))
    with pytest.raises(FormatError, match="expected a JSON object"):
        MlperfStorageReport().parse(SourceFile(REPORT, b"[1, 2]"))
