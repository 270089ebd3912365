"""MLPerf Training result logs on fixtures written here: every branch of the line grammar,
the run's status and timing, the counts the log states, and hostile input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ingest.examine import examine
from parsers.base import FormatError, SourceFile
from parsers.mlperf_training.result_log import MlperfTrainingResult
from parsers.registry import detect
from samples.mlperf_training import mlperf_training_files
from schemas.mlperf_training import MLPERF_TRAINING_RESULTS

PARSER = MlperfTrainingResult()
TABLE = MLPERF_TRAINING_RESULTS.key
PATH = "training_results_v4.0/Acme/results/box_n2/resnet/result_3.txt"
T0 = 1_714_000_000_000  # run_start, Unix ms


def ev(key: str, value: object = None, time_ms: object = T0, key_first: bool = False,
       **metadata: object) -> str:
    """One MLLOG line; `key_first` orders the keys as LoadGen-based writers do."""
    fields = {"namespace": "", "time_ms": time_ms, "event_type": "POINT_IN_TIME",
              "key": key, "value": value, "metadata": {"file": "x.py", "lineno": 1,
                                                       **metadata}}
    if key_first:
        fields = {"key": fields.pop("key"), **fields}
    return ":::MLLOG " + json.dumps(fields)


def run_lines(minutes: float = 2.5, status: str | None = "success",
              accuracy: float = 0.7601) -> list[str]:
    extra: dict[str, object] = {"status": status} if status is not None else {}
    stop = [] if status == "omit" else [
        ev("run_stop", None, T0 + round(minutes * 60_000), False, **extra)]
    return [ev("submission_benchmark", "resnet", T0 - 9000), ev("submission_org", "Acme"),
            ev("submission_platform", "2xAcme Box"), ev("submission_division", "closed"),
            ev("submission_status", "cloud"), ev("init_start", None, T0 - 30_000),
            ev("seed", 42), ev("global_batch_size", 1024),
            ev("gradient_accumulation_steps", 2), ev("opt_name", "lars"),
            ev("lars_opt_base_learning_rate", 8.5), ev("run_start", None, T0),
            ev("train_samples", 1281167), ev("eval_samples", 50000),
            ev("eval_accuracy", 0.41, T0 + 10_000, epoch_num=3),
            ev("eval_accuracy", accuracy, T0 + 20_000, epoch_num=35), *stop]


def parse(lines: list[str] | str, path: str = PATH, data: bytes | None = None):
    text = lines if isinstance(lines, str) else "\n".join(lines) + "\n"
    src = SourceFile(path, data if data is not None else text.encode())
    assert PARSER.sniff(src)
    return PARSER.parse(src)


def examined(lines: list[str]):
    """What ingestion does with the file: detect, parse, validate (lineage added)."""
    return examine(SourceFile(PATH, ("\n".join(lines) + "\n").encode()))


def row(lines: list[str] | str, path: str = PATH, data: bytes | None = None) -> dict:
    frame = parse(lines, path, data).tables[TABLE]
    assert frame.height == 1
    return frame.row(0, named=True)


# ---- a clean run -----------------------------------------------------------------------------

def test_clean_run_values():
    r = row(run_lines(minutes=2.5))
    assert (r["round"], r["submitter"], r["system"], r["benchmark_dir"], r["result_index"]) \
        == ("v4.0", "Acme", "box_n2", "resnet", 3)
    assert r["round_source"] == "path"
    assert (r["benchmark"], r["submission_org"], r["submission_platform"],
            r["submission_division"], r["submission_status"]) \
        == ("resnet", "Acme", "2xAcme Box", "closed", "cloud")
    assert (r["seed"], r["global_batch_size"], r["gradient_accumulation_steps"],
            r["train_samples"], r["eval_samples"], r["opt_name"]) \
        == (42, 1024, 2, 1281167, 50000, "lars")
    assert (r["opt_base_learning_rate"], r["opt_base_learning_rate_key"]) \
        == (8.5, "lars_opt_base_learning_rate")
    assert (r["run_status"], r["run_stop_status"]) == ("success", "success")
    assert r["run_start_epoch_ms"] == T0 and r["run_stop_epoch_ms"] == T0 + 150_000
    assert r["init_start_epoch_ms"] == T0 - 30_000
    assert r["time_to_train_min"] == r["run_duration_min"] == 2.5  # 150000 ms / 60 / 1000
    assert (r["eval_accuracy_last"], r["eval_accuracy_key"], r["eval_count"],
            r["eval_epoch_num"], r["eval_samples_count"]) == (0.7601, "eval_accuracy", 2, 35,
                                                              None)
    assert (r["mllog_lines"], r["mllog_prefixed_lines"], r["mllog_bad_lines"],
            r["noise_lines"]) == (17, 0, 0, 0)
    assert (r["run_start_count"], r["run_stop_count"]) == (1, 1)
    assert r["accelerators"] is None and r["accelerators_source"] is None
    assert r["warnings"] is None


def test_minutes_computed_as_the_summarizer_does():
    stop = T0 + 338_413  # Dell's bert run: 5.640216666... minutes
    r = row([ev("submission_benchmark", "bert"), ev("run_start", None, T0),
             ev("run_stop", None, stop, status="success")])
    assert r["time_to_train_min"] == (stop - T0) / 60 / 1000


def test_key_order_of_loadgen_writers_and_opt_base_learning_rate():
    lines = [ev("submission_benchmark", "bert", key_first=True),
             ev("opt_base_learning_rate", 0.00096, key_first=True),
             ev("lamb_opt_base_learning_rate", 9.0, key_first=True),
             ev("run_start", None, T0, key_first=True),
             ev("run_stop", None, T0 + 60_000, key_first=True, status="success")]
    r = row(lines)
    assert (r["benchmark"], r["time_to_train_min"]) == ("bert", 1.0)
    assert (r["opt_base_learning_rate"], r["opt_base_learning_rate_key"]) \
        == (0.00096, "opt_base_learning_rate")


# ---- noise and prefixes ------------------------------------------------------------------------

def test_rank_and_container_prefixes_and_noise():
    body = run_lines(minutes=3.0)
    lines = ["+ echo 'Beginning trial 1 of 5'", "Beginning trial 1 of 5", "",
             "RESULT,IMAGE_CLASSIFICATION,,223,ubuntu,2024-04-25 01:02:03 AM",
             f" 0: {body[0]}", f"[1,0]<stdout>:{body[1]}", f"12: {body[2]}", *body[3:],
             "+ set +x"]
    r = row(lines)
    assert (r["mllog_lines"], r["mllog_prefixed_lines"], r["noise_lines"]) == (17, 3, 4)
    assert (r["submission_benchmark"], r["submission_org"], r["time_to_train_min"]) \
        == ("resnet", "Acme", 3.0)


def test_echoed_mllog_is_a_bad_line_as_the_official_parser_reads_it():
    # re.sub(".*:::MLLOG ", ...) keeps the quote that closes the echo: not JSON.
    echoed = "+ echo '" + ev("submission_org", "Echo") + "'"
    r = row([echoed, *run_lines()])
    assert (r["mllog_lines"], r["mllog_bad_lines"], r["submission_org"]) == (17, 1, "Acme")
    assert "line 1" in r["warnings"] and "would not score" in r["warnings"]


def test_last_token_on_the_line_wins():
    line = "junk :::MLLOG garbage :::MLLOG " + ev("run_start", None, T0)[len(":::MLLOG "):]
    r = row([ev("submission_benchmark", "resnet"), line])
    assert (r["run_start_count"], r["mllog_prefixed_lines"], r["mllog_bad_lines"]) == (1, 1, 0)


def test_crlf_and_form_feed_do_not_split_or_break_lines():
    text = "\r\n".join(run_lines(minutes=1.0)) + "\r\n"
    assert row(text)["time_to_train_min"] == 1.0
    lines = run_lines()
    lines[1] = ev("submission_org", "Ac\x0cme\x85")
    assert row(lines)["submission_org"] == "Ac\x0cme\x85"


# ---- status and timing -------------------------------------------------------------------------

def test_aborted_run_has_a_duration_but_no_time_to_train():
    r = row(run_lines(minutes=2.641, status="aborted", accuracy=0.75882))
    assert (r["run_status"], r["time_to_train_min"]) == ("aborted", None)
    assert r["run_duration_min"] == pytest.approx(2.641)
    assert r["eval_accuracy_last"] == 0.75882


def test_status_case_is_normalised_and_kept_as_written():
    r = row(run_lines(status="ABORTED"))
    assert (r["run_status"], r["run_stop_status"]) == ("aborted", "ABORTED")


def test_no_run_stop_is_incomplete_not_an_error():
    r = row(run_lines(status="omit"))
    assert (r["run_status"], r["run_stop_count"], r["time_to_train_min"], r["run_duration_min"],
            r["run_stop_epoch_ms"]) == ("incomplete", 0, None, None, None)


@pytest.mark.parametrize("status", [None, "diverged"])
def test_run_stop_without_a_known_status_is_unknown(status):
    r = row(run_lines(status=status))
    assert (r["run_status"], r["run_stop_status"], r["time_to_train_min"]) \
        == ("unknown", status, None)
    assert r["run_duration_min"] == 2.5
    assert "not success or aborted" in r["warnings"]


def test_restarted_run_is_timed_from_the_first_run_start():
    lines = [ev("submission_benchmark", "bert"), ev("run_start", None, T0),
             ev("init_start", None, T0 + 60_000), ev("run_start", None, T0 + 120_000),
             ev("run_stop", None, T0 + 180_000, status="success"),
             ev("run_stop", None, T0 + 240_000, status="success")]
    r = row(lines)
    assert (r["run_start_count"], r["run_stop_count"], r["time_to_train_min"]) == (2, 2, 3.0)
    assert "2 run_start events (a restarted run)" in r["warnings"]
    assert "2 run_stop events" in r["warnings"]


def test_run_stop_before_run_start_gives_no_duration():
    r = row([ev("submission_benchmark", "bert"), ev("run_stop", None, T0, status="success"),
             ev("run_start", None, T0 + 5)])
    assert (r["run_status"], r["run_duration_min"], r["time_to_train_min"]) \
        == ("success", None, None)
    assert "earlier than run_start" in r["warnings"]


def test_run_stop_without_run_start():
    r = row([ev("submission_benchmark", "bert"), ev("run_stop", None, T0, status="success")])
    assert (r["run_start_count"], r["time_to_train_min"]) == (0, None)
    assert "run_stop without run_start" in r["warnings"]


def test_empty_string_run_start_value_and_metric_run_stop_value():
    # Habana writes run_start's value as "", NeMo the final loss as run_stop's value.
    r = row([ev("submission_benchmark", "llama2_70b_lora"), ev("run_start", "", T0),
             ev("eval_accuracy", 0.921, T0 + 1, samples_count=3456),
             ev("run_stop", 0.921, T0 + 90_000, status="success", samples_count=3456)])
    assert (r["time_to_train_min"], r["eval_samples_count"], r["eval_epoch_num"]) \
        == (1.5, 3456, None)


# ---- scale the log states ----------------------------------------------------------------------

def sysjson(nodes: object, per_node: object) -> str:
    return ":::SYSJSON " + json.dumps({"number_of_nodes": nodes,
                                       "accelerators_per_node": per_node})


def test_sysjson_counts_and_echoed_sysjson_ignored():
    lines = ["+ echo '" + sysjson("99", "99") + "'", sysjson("8", "8"), sysjson("8", "8"),
             *run_lines()]
    r = row(lines)
    assert (r["nodes"], r["accelerators_per_node"], r["accelerators"],
            r["accelerators_source"]) == (8, 8, 64, "sysjson")
    assert r["noise_lines"] == 3 and r["warnings"] is None


def test_mllog_counts_win_over_sysjson_and_zero_per_node_counts_one():
    lines = [sysjson("4", "8"), ev("number_of_nodes", 16), ev("accelerators_per_node", 0),
             *run_lines()]
    r = row(lines)
    assert (r["nodes"], r["accelerators_per_node"], r["accelerators"],
            r["accelerators_source"]) == (16, 0, 16, "mllog")


def test_sysjson_disagreement_bad_json_and_bad_counts():
    r = row([sysjson("2", "8"), sysjson("4", "8"), *run_lines()])
    assert (r["nodes"], r["accelerators"]) == (2, 16)
    assert "disagree" in r["warnings"]
    r = row([":::SYSJSON {not json", sysjson("", "8"), *run_lines()])
    assert (r["nodes"], r["accelerators_per_node"], r["accelerators"]) == (None, 8, None)
    assert r["mllog_bad_lines"] == 1 and "SYSJSON number_of_nodes" in r["warnings"]
    r = row([":::SYSJSON [1, 2]", *run_lines()])
    assert r["accelerators_source"] is None and "not a JSON object" in r["warnings"]


def test_accelerator_product_outside_int64():
    r = row([ev("number_of_nodes", 2**62), ev("accelerators_per_node", 8), *run_lines()])
    assert r["accelerators"] is None and "accelerators left NULL" in r["warnings"]


# ---- labels --------------------------------------------------------------------------------------

def test_benchmark_folder_disagreeing_with_the_log_is_a_conflict():
    lines = run_lines()
    lines[0] = ev("submission_benchmark", "ssd")
    parsed = parse(lines)
    r = parsed.tables[TABLE].row(0, named=True)
    assert (r["benchmark"], r["benchmark_dir"]) == ("ssd", "resnet")
    assert "differs from the benchmark folder" in r["warnings"]
    (conflict,) = parsed.conflicts
    assert (conflict.column, conflict.value, conflict.source, conflict.overridden_value,
            conflict.overridden_source) == ("benchmark", "ssd", "file:submission_benchmark",
                                            "resnet", "path:Acme/results/box_n2/resnet")


def test_outside_the_submission_layout():
    r = row(run_lines(), path="logs/result_12.txt")
    assert (r["submitter"], r["system"], r["round"], r["result_index"], r["benchmark"]) \
        == (None, None, None, 12, "resnet")
    assert r["round_source"] is None  # no tree, and no MLLOG key names a round
    # a results tree without a `training_results_<round>` folder says no round either
    r = row(run_lines(), path="closed/Acme/results/box_n2/resnet/result_0.txt")
    assert (r["round"], r["round_source"], r["system"]) == (None, None, "box_n2")
    lines = run_lines()[1:]  # no submission_benchmark
    assert row(lines, path=PATH)["benchmark"] == "resnet"  # the folder says
    with pytest.raises(FormatError, match="benchmark is unknown"):
        parse(lines, path="logs/run.log")


# ---- values that are not what their key needs ---------------------------------------------------

@pytest.mark.parametrize(("value", "expected", "warned"), [
    (1024, 1024, False), (1024.0, 1024, False), ("1024", 1024, False),
    (2.5, None, True), ("abc", None, True), (1e308, None, True), (True, None, True),
    ([1], None, True), (float("nan"), None, True), ("9" * 40, None, True),
])
def test_count_values(value, expected, warned):
    lines = run_lines()
    lines[7] = ":::MLLOG " + json.dumps({"key": "global_batch_size", "value": value,
                                         "time_ms": T0}).replace("NaN", "NaN")
    r = row(lines)
    assert r["global_batch_size"] == expected
    assert (r["warnings"] is not None) == warned
    if warned:
        assert "global_batch_size left NULL" in r["warnings"]


def test_text_values_of_other_types():
    lines = run_lines()
    lines[1] = ev("submission_org", {"name": "Acme"})
    lines[2] = ev("submission_platform", 8)
    r = row(lines)
    assert (r["submission_org"], r["submission_platform"]) == (None, "8")
    assert "submission_org" in r["warnings"]


@pytest.mark.parametrize("accuracy", [float("nan"), float("inf")])
def test_non_finite_accuracy_is_no_value_and_the_run_still_loads(accuracy):
    # A diverged run: it must still count (as not converged) in the benchmark's score.
    outcome = examined(run_lines(status="aborted", accuracy=accuracy))
    assert (outcome.status, outcome.problems) == ("loaded", [])
    r = outcome.rows[TABLE].row(0, named=True)
    assert (r["run_status"], r["eval_accuracy_last"]) == ("aborted", None)
    assert "a diverged run?" in r["warnings"]


def test_non_numeric_accuracy_and_huge_times():
    r = row(run_lines(accuracy="high"))  # type: ignore[arg-type]
    assert r["eval_accuracy_last"] is None and "eval_accuracy" in r["warnings"]
    outcome = examined([ev("submission_benchmark", "bert"), ev("run_start", None, 0),
                        ev("run_stop", None, 1e308, status="success")])
    # 1e308 ms is no Unix time and no duration: the only row is held back, the file rejected
    assert (outcome.status, outcome.rows) == ("rejected", {})
    (problem,) = outcome.problems
    assert "run_stop_epoch_ms=1e+308 fails at most" in problem.reason
    assert "time_to_train_min=1.6666666666666665e+303 fails at most 525600" in problem.reason


def test_validated_clean_row_passes_the_schema():
    outcome = examined(run_lines())
    assert (outcome.status, outcome.rows[TABLE].height, outcome.problems) \
        == ("loaded", 1, [])


# ---- bad lines and unusable files ----------------------------------------------------------------

@pytest.mark.parametrize(("line", "reason"), [
    (ev("seed", 1)[:60], "truncated line"),
    (":::MLLOG [1, 2]", "a JSON list"),
    (":::MLLOG " + json.dumps({"value": 1, "time_ms": T0}), "without a 'key'"),
    (":::MLLOG " + json.dumps({"key": "seed", "value": 1}), "time_ms None"),
    (":::MLLOG " + json.dumps({"key": "seed", "time_ms": "1714"}), "time_ms '1714'"),
    (":::MLLOG " + json.dumps({"key": "seed", "time_ms": float("inf")}), "time_ms inf"),
    (":::MLLOG " + "[" * 100_000, "not a JSON object (nested deeper than 1,000 levels"),
])
def test_bad_mllog_lines_are_counted_and_the_run_still_loads(line, reason):
    r = row([*run_lines(), line])
    assert (r["mllog_bad_lines"], r["mllog_lines"], r["time_to_train_min"]) == (1, 17, 2.5)
    assert reason in r["warnings"]


def test_metadata_that_is_not_an_object_is_ignored():
    line = ":::MLLOG " + json.dumps({"key": "run_stop", "time_ms": T0 + 60_000,
                                     "metadata": "success"})
    r = row([*run_lines(status="omit"), line])
    assert (r["run_status"], r["run_duration_min"]) == ("unknown", 1.0)


def test_no_usable_event_is_a_format_error():
    with pytest.raises(FormatError,
                       match=r"no usable ':::MLLOG \{json\}' event .*\(line 1: not a JSON object"):
        parse(':::MLLOG {"key": "run_start", "time_ms": 17')


def test_non_utf8_is_read_as_latin1():
    lines = run_lines()
    lines[1] = ev("submission_org", "ACME-ORG")
    data = ("\n".join(lines) + "\n").encode().replace(b"ACME-ORG", b"Acm\xe9")
    r = row("", data=data)
    assert r["submission_org"] == "Acmé"
    assert "read as latin-1" in r["warnings"]


# ---- sniffing ------------------------------------------------------------------------------------

@pytest.mark.parametrize("content", [
    b"",
    b"\xff\xfe\x00\x00garbage",
    b"plain text without any event\n",
    b':::MLLOG {"key": "loadgen_version", "value": "4.1", "time_ms": 1}\n',  # Inference log
    b'"key": "run_start" but no token\n',
])
def test_sniff_refuses(content):
    assert not PARSER.sniff(SourceFile("x/result_0.txt", content))


def test_registry_picks_this_parser():
    src = SourceFile(PATH, ("\n".join(run_lines()) + "\n").encode())
    assert detect(src).format == "mlperf_training_result"


# ---- the sample data ------------------------------------------------------------------------

def test_every_sample_file_loads_one_valid_row():
    files = mlperf_training_files()
    systems = {path: text for path, text in files.items() if "/systems/" in path}
    assert len(files) == 13 and len(systems) == 2
    for relpath, text in systems.items():  # the systems' descriptions, for the lead's join
        outcome = examine(SourceFile(relpath, text.encode()))
        assert (outcome.format, outcome.status) == ("mlperf_systems_json", "loaded")
        row = outcome.rows["raw.mlperf_systems"].row(0, named=True)
        assert (row["suite"], row["system"], row["total_accelerators"]) == (
            "training", Path(relpath).stem, 8 if "_n1_" in relpath else 64)
    statuses = []
    for relpath, text in files.items():
        if relpath in systems:
            continue
        src = SourceFile(relpath, text.encode())
        outcome = examine(src)
        assert (outcome.format, outcome.status, outcome.problems, outcome.conflicts) \
            == ("mlperf_training_result", "loaded", [], [])
        r = outcome.rows[TABLE].row(0, named=True)
        assert r["warnings"] is None and r["round"] == "v4.0"
        statuses.append((r["system"], r["accelerators"], r["run_status"]))
    assert statuses.count(("dgxh100_n1_mxnet", 8, "success")) == 5
    assert statuses.count(("dgxh100_n8_mxnet", 64, "success")) == 5
    assert statuses.count(("dgxh100_n8_mxnet", 64, "aborted")) == 1
