from __future__ import annotations

import json

import polars as pl
import pytest

from parsers.base import FormatError
from parsers.mlperf_storage.results import (
    MlperfStorageEpochs,
    MlperfStorageReport,
    MlperfStorageSummary,
)
from schemas.mlperf_storage import (
    MLPERF_STORAGE_EPOCHS,
    MLPERF_STORAGE_REPORT_RUNS,
    MLPERF_STORAGE_RESULTS,
)
from schemas.spec import Table
from tests.conftest import corpus_file, text_file

MIB = 1 << 20
RUNS = ("mlperf_storage/mlcommons__storage_results_v1.0/Closed/DDN/results/"
        "AI400X2T_24x14TiB_nvme_8xNDR200_18clients/unet3d-h100/runs/")
SUMMARY = RUNS + "run1/c008/summary.json"
EPOCHS = RUNS + "run1/c008/per_epoch_stats.json"
REPORT = RUNS + "mlperf_storage_report.json"
OVERRIDES = RUNS + "run1/c008/configs/overrides.yaml"
PARSERS = (MlperfStorageSummary(), MlperfStorageEpochs(), MlperfStorageReport())


def rows(parser, src, table: Table) -> pl.DataFrame:
    parsed = parser.parse(src)
    assert parsed.problems == []
    df = parsed.tables[table.key]
    lineage = df.with_columns(source_file=pl.lit("x"), file_sha256=pl.lit("0" * 64))
    table.pandera_schema().validate(table.conform(lineage))
    return df


# ---- corpus ----------------------------------------------------------------------------------

@pytest.mark.parametrize("relpath, fmt", [
    (SUMMARY, "mlperf_storage_summary"), (EPOCHS, "mlperf_storage_epochs"),
    (REPORT, "mlperf_storage_report"), (OVERRIDES, None),
])
def test_each_corpus_file_is_claimed_by_exactly_its_parser(relpath, fmt):
    src = corpus_file(relpath)
    assert [p.format for p in PARSERS if p.sniff(src)] == ([fmt] if fmt else [])


def test_summary_unet3d_h100_36_accelerators_passes_au():
    df = rows(MlperfStorageSummary(), corpus_file(SUMMARY), MLPERF_STORAGE_RESULTS)
    assert df.height == 1
    row = df.row(0, named=True)
    assert (row["model"], row["accelerator"], row["model_source"]) == ("unet3d", "h100", "path")
    assert (row["num_accelerators"], row["num_hosts"], row["hostname"]) == (36, 18, "c008")
    assert row["epochs"] == 5
    assert row["train_au_pct"] == 93.5852472392038
    assert row["train_au_stdev_pct"] == 0.37111497802130905
    assert (row["train_au_min_pct"], row["train_au_max_pct"]) == (
        92.9315530544171, 93.98807849677831)
    assert (row["status"], row["au_meets_expectation"]) == ("success", True)
    assert row["train_samples_per_s"] == 708.8530913360294
    assert (row["train_samples_min_per_s"], row["train_samples_max_per_s"]) == (
        702.5741502987518, 713.1713867677768)
    assert row["train_io_bytes_per_s"] == pytest.approx(99104.2216774018 * MIB)
    assert row["train_io_stdev_bytes_per_s"] == pytest.approx(594.526174489762 * MIB)
    assert row["runtime_s"] == pytest.approx(907.311682)  # 14:23:23.782006 -> 14:38:31.093688
    assert (row["num_files_train"], row["num_files_eval"], row["num_samples_per_file"]) == (
        126000, 0, 1)


def test_summary_io_is_mib_per_s_from_samples_times_record_size():
    row = rows(MlperfStorageSummary(), corpus_file(SUMMARY), MLPERF_STORAGE_RESULTS).row(
        0, named=True)
    unet3d_record_bytes = 146600628  # DLIO unet3d workload record_length
    assert row["train_io_bytes_per_s"] == pytest.approx(
        row["train_samples_per_s"] * unet3d_record_bytes, rel=1e-4)


def test_epoch_timings_with_a_checkpoint_in_the_last_epoch():
    df = rows(MlperfStorageEpochs(), corpus_file(EPOCHS), MLPERF_STORAGE_EPOCHS)
    assert df["epoch"].to_list() == [1, 2, 3, 4, 5]
    assert df["duration_s"].to_list() == [180.27, 177.82, 179.72, 178.43, 178.34]
    assert df["block_duration_s"].to_list() == [179.75, 176.63, 178.57, 177.32, 176.84]
    assert df["checkpoints"].to_list() == [0, 0, 0, 0, 1]
    assert df["checkpoint_duration_s"].to_list() == [None, None, None, None, 0.61]
    assert df.row(0, named=True)["started_at"] == "2024-08-07T14:23:36.497911"


def test_report_lists_five_runs_and_iter0_is_the_corpus_summary():
    df = rows(MlperfStorageReport(), corpus_file(REPORT), MLPERF_STORAGE_REPORT_RUNS)
    assert sorted(df["iteration"].to_list()) == [0, 1, 2, 3, 4]
    assert df["num_benchmark_runs"].unique().to_list() == [5]
    assert df["num_accelerators"].unique().to_list() == [36]  # "36" in the file
    iter0 = df.filter(pl.col("iteration") == 0).row(0, named=True)
    assert (iter0["clients"], iter0["accelerators_per_client"]) == (18, 2)
    assert (iter0["model"], iter0["accelerator"]) == ("unet3d", "h100")
    assert iter0["train_samples_per_s"] == 708.8530913360294  # == summary.json of run1/c008
    assert iter0["train_io_bytes_per_s"] == pytest.approx(99104.2216774018 * MIB)
    assert df["train_samples_per_s"].mean() == pytest.approx(708.234879563363)  # overall mean


# ---- branches the corpus lacks ----------------------------------------------------------------

def summary(**metric) -> str:
    return json.dumps({"start": "2024-01-01T00:00:00", "num_accelerators": 8, "num_hosts": 1,
                       "metric": metric, "num_files_train": 10})


def test_summary_outside_a_workload_folder_has_no_model_and_failed_au():
    src = text_file("x/summary.json", summary(
        train_au_percentage=[40.0, 50.0], train_au_meet_expectation="fail",
        train_throughput_samples_per_second=[10.0, 30.0]))
    row = rows(MlperfStorageSummary(), src, MLPERF_STORAGE_RESULTS).row(0, named=True)
    assert (row["model"], row["model_source"]) == (None, None)
    assert (row["status"], row["au_meets_expectation"]) == ("fail", False)
    assert (row["train_au_pct"], row["train_samples_per_s"]) == (45.0, 20.0)  # from the lists
    assert row["epochs"] == 2 and row["train_io_bytes_per_s"] is None
    assert row["runtime_s"] is None  # no end time


def test_workload_folder_with_underscore():
    src = text_file("sub/resnet50_a100/run3/summary.json", summary(train_au_percentage=[99.0]))
    row = rows(MlperfStorageSummary(), src, MLPERF_STORAGE_RESULTS).row(0, named=True)
    assert (row["model"], row["accelerator"]) == ("resnet50", "a100")


@pytest.mark.parametrize("relpath, model, accelerator", [
    # Lightbits: the run folder repeats the workload; the accelerator is not 'a100_run_1'
    ("r/unet3d_a100/unet3d_a100_run_1/summary.json", "unet3d", "a100"),
    ("r/cosmoflow-h100/1host@23GPUs/runs/run1/summary.json", "cosmoflow", "h100"),  # IEI
    ("r/resnet50-10acc/run1/summary.json", None, None),  # Juicedata: the configs name it
    ("r/unet3d/h100/run_1/summary.json", None, None),  # Micron, Volumez: two folders
])
def test_workload_from_the_path(relpath, model, accelerator):
    src = text_file(relpath, summary(train_au_percentage=[99.0]))
    row = rows(MlperfStorageSummary(), src, MLPERF_STORAGE_RESULTS).row(0, named=True)
    assert (row["model"], row["accelerator"]) == (model, accelerator)


def test_checkpointing_summary_is_rejected_with_the_reason():
    src = text_file("x/summary.json", summary(save_checkpoint_duration_mean_seconds=3.0))
    assert MlperfStorageSummary().sniff(src)
    with pytest.raises(FormatError, match="no training metrics"):
        MlperfStorageSummary().parse(src)


def test_summary_with_text_where_numbers_belong_is_rejected():
    src = text_file("x/summary.json", summary(train_au_percentage=["93.1"]))
    with pytest.raises(FormatError, match="train_au_percentage is not a list of numbers"):
        MlperfStorageSummary().parse(src)


def test_truncated_json_is_rejected():
    with pytest.raises(FormatError, match="not valid JSON"):
        MlperfStorageSummary().parse(text_file("x/summary.json", summary()[:-20]))


def test_epoch_with_bad_duration_is_held_back():
    text = json.dumps({"1": {"start": "a", "end": "b", "duration": "1.5"},
                       "2": {"start": "c", "end": "d", "duration": "soon"}})
    parsed = MlperfStorageEpochs().parse(text_file("x/per_epoch_stats.json", text))
    assert parsed.tables[MLPERF_STORAGE_EPOCHS.key]["duration_s"].to_list() == [1.5]
    assert [(p.location, p.reason) for p in parsed.problems] == [
        ("$.2", "'soon' is not a number")]


def test_report_without_runs_is_rejected():
    src = text_file("x/r.json", json.dumps({"overall": {"train_throughput_mean_MB_per_second": 1},
                                             "runs": {}}))
    assert MlperfStorageReport().sniff(src)
    with pytest.raises(FormatError, match="non-empty 'runs'"):
        MlperfStorageReport().parse(src)


@pytest.mark.parametrize("text", [
    '{"metric": {"latency": 1}, "model": "x"}',  # another tool's metric object
    '{"1": {"value": 3}}',
    '{"overall": {"score": 1}, "runs": {}}',
])
def test_look_alikes_do_not_sniff(text):
    src = text_file("x/a.json", text)
    assert not any(p.sniff(src) for p in PARSERS)
