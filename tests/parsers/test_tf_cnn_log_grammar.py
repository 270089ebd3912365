"""tf_cnn_benchmarks log grammar branches the corpus lacks (FORMATS.md sections 1-5)."""

from __future__ import annotations

import pytest

from parsers.base import FormatError, LabelConflict
from parsers.tf_cnn.log import TfCnnLog, lookalike_reason
from tests.conftest import text_file

RUNS, STEPS = "raw.tf_cnn_runs", "raw.tf_cnn_steps"
HVD2 = "['horovod/gpu:0', 'horovod/gpu:1']"
DASHES = "-" * 64


def header(*, batch: int = 64, per_device: int = 64, devices: str = "['/gpu:0']",
           variables: str = "replicated", mode: str = "training", single: bool = False,
           extra: tuple[str, ...] = ()) -> list[str]:
    return [
        "TensorFlow:  1.10", "Model:       resnet50", "Dataset:     imagenet (synthetic)",
        f"Mode:        {mode}", f"SingleSess:  {single}", f"Batch size:  {batch} global",
        f"             {per_device} per device", "Num batches: 100", "Num epochs:  0.00",
        f"Devices:     {devices}", "Data format: NCHW", "Optimizer:   sgd",
        f"Variables:   {variables}", *extra, "==========",
    ]


def steps(*rows: tuple[int, float], loss: str = "7.500") -> list[str]:
    return ["Step\tImg/sec\ttotal_loss"] + [
        f"{n}\timages/sec: {rate} +/- 0.0 (jitter = 0.0)\t{loss}" for n, rate in rows]


def total(rate: float) -> list[str]:
    return [DASHES, f"total images/sec: {rate:.2f}", DASHES]


def parse(lines: list[str], name: str = "x/run.log"):
    src = text_file(name, "\n".join(lines) + "\n")
    assert TfCnnLog().sniff(src)
    return TfCnnLog().parse(src)


def runs(lines: list[str]) -> list[dict]:
    result = parse(lines)
    assert result.problems == []
    return result.tables[RUNS].to_dicts()


def test_tagged_horovod_ranks_each_give_a_run_and_totals_are_not_summed():
    def rank(r: int, rate: float) -> list[str]:
        body = ["Running warm up", "Done warm up", *steps((1, 200.0), (10, 205.0)),
                *total(rate)]
        stderr = [f"[1,{r}]<stderr>:2019-01-01 00:00:00.0: I gpu_device.cc] Created TensorFlow "
                  f"device -> physical GPU (device: 0, name: Tesla V100-SXM2-16GB, pci bus id: "
                  f"0000:0{r}:00.0)"]
        return stderr + [f"[1,{r}]<stdout>:{line}" for line in
                         header(batch=128, devices=HVD2, variables="horovod",
                                extra=("Horovod on:  gpu",)) + body]

    rank0, rank1 = rank(0, 410.2), rank(1, 409.8)
    interleaved = [line for pair in zip(rank0, rank1, strict=True) for line in pair]
    found = runs(["Warning: Permanently added 'node2' to the list of known hosts.", *interleaved])
    assert [(r["rank"], r["run_index"]) for r in found] == [(0, 1), (1, 1)]
    assert [r["images_per_sec_total"] for r in found] == [410.2, 409.8]
    assert [r["primary_record"] for r in found] == [True, False]
    assert {(r["num_workers"], r["job_device_count"], r["horovod_device"]) for r in found} == {
        (2, 2, "gpu")}
    assert {r["gpu_name_from_log"] for r in found} == {"Tesla V100-SXM2-16GB"}
    step_ranks = parse(["x", *interleaved]).tables[STEPS]["rank"].to_list()
    assert step_ranks == [0, 0, 1, 1]


def test_steps_of_a_file_with_runs_of_several_ranks_carry_their_run_and_rank():
    def rank(r: int, runs: list[list[tuple[int, float]]]) -> list[str]:
        lines = []
        for rows in runs:  # a header after a total: the job ran again
            lines += header() + ["Running warm up", *steps(*rows), *total(rows[-1][1])]
        return [f"[1,{r}]<stdout>:{line}" for line in lines]

    # 1 launcher line; per run: 14 header lines, warm up, 'Step' row, steps, 3 total lines
    result = parse(["launcher chatter", *rank(0, [[(1, 100.0), (10, 110.0)], [(1, 90.0)]]),
                    *rank(1, [[(1, 200.0), (10, 210.0)]])])
    assert result.problems == []
    rows = result.tables[STEPS].select(
        "rank", "run_index", "step", "running_mean_images_per_sec", "interval_images_per_sec",
        "source_line").rows()
    assert rows == [
        (0, 1, 1, 100.0, 1 / (1 / 100.0), 18),
        (0, 1, 10, 110.0, 9 / (10 / 110.0 - 1 / 100.0), 19),
        (0, 2, 1, 90.0, 1 / (1 / 90.0), 39),
        (1, 1, 1, 200.0, 1 / (1 / 200.0), 59),
        (1, 1, 10, 210.0, 9 / (10 / 210.0 - 1 / 200.0), 60),
    ]
    summaries = result.tables[RUNS].select(
        "rank", "run_index", "step_count", "first_step", "last_step",
        "first_step_images_per_sec", "last_running_mean_images_per_sec",
        "last_interval_images_per_sec", "nan_loss_steps", "images_per_sec_total").rows()
    assert summaries == [
        (0, 1, 2, 1, 10, 100.0, 110.0, 9 / (10 / 110.0 - 1 / 100.0), 0, 110.0),
        (0, 2, 1, 1, 1, 90.0, 90.0, 1 / (1 / 90.0), 0, 90.0),
        (1, 1, 2, 1, 10, 200.0, 210.0, 9 / (10 / 210.0 - 1 / 200.0), 0, 210.0),
    ]


def test_untagged_horovod_blocks_merge_into_one_job_with_the_first_total():
    block = header(batch=128, devices=HVD2, variables="horovod")
    body = ["Generating model", "Generating model", "Running warm up", "Running warm up",
            "Done warm up", "Done warm up", "Step\tImg/sec\ttotal_loss",
            "Step\tImg/sec\ttotal_loss", "1\timages/sec: 147.9 +/- 0.0 (jitter = 0.0)\t9.144",
            "1\timages/sec: 148.1 +/- 0.0 (jitter = 0.0)\t9.150", *total(296.30),
            *total(296.10)]
    (run,) = runs(block + block + body)
    assert (run["header_copies"], run["totals_reported"], run["status"]) == (2, 2, "ok")
    assert run["images_per_sec_total"] == 296.30
    assert (run["num_workers"], run["primary_record"], run["step_count"]) == (2, True, 2)
    steps_ = parse(block + block + body).tables[STEPS]
    assert steps_["interval_images_per_sec"].null_count() == 2  # two ranks' lines mixed


def test_untagged_horovod_lines_interleaved_and_glued():
    a = header(batch=128, devices=HVD2, variables="horovod")
    lines = [line for pair in zip(a, a, strict=True) for line in pair]
    glued = lines.index("Num batches: 100")
    lines[glued:glued + 2] = ["Num batches: 100Num batches: 100"]
    (run,) = runs(lines + ["Running warm up", *steps((1, 90.0)), *total(180.0)])
    assert (run["header_copies"], run["num_batches"], run["batch_per_device"]) == (2, 100, 64)
    assert run["status"] == "ok"


def test_untagged_horovod_ranks_printing_whole_logs_one_after_another():
    one = header(batch=128, devices=HVD2, variables="horovod") + [
        "Running warm up", *steps((1, 100.0)), *total(200.0)]
    found = runs(one + one)
    assert [r["images_per_sec_total"] for r in found] == [200.0, 200.0]
    assert [r["primary_record"] for r in found] == [True, False]


def test_untagged_non_horovod_processes_sharing_a_file_are_ambiguous():
    block = header(batch=128, per_device=64, devices="['/gpu:0', '/gpu:1']",
                   variables="parameter_server")
    (run,) = runs(block + ["Generating model"] + block + ["Generating model", "Running warm up",
                                                          *steps((1, 100.0)), *total(100.0),
                                                          *total(101.0)])
    assert (run["status"], run["error_class"], run["header_copies"]) == (
        "ambiguous", "interleaved_processes", 2)
    assert run["images_per_sec_total"] is None


def test_parameter_server_task_has_no_total_and_is_not_primary():
    (run,) = runs(header(devices="['/job:ps/replica:0/task:0/cpu:0']",
                         variables="distributed_replicated", extra=("Sync:        True",))
                  + ["Running parameter server 0"])
    assert (run["status"], run["task_type"], run["task_index"]) == ("not_measured", "ps", 0)
    assert (run["primary_record"], run["sync"], run["images_per_sec_total"]) == (
        False, True, None)


def test_distributed_worker_counts_workers_from_the_batch_sizes():
    devices = "['/job:worker/replica:0/task:1/gpu:0', '/job:worker/replica:0/task:1/gpu:1']"
    (run,) = runs(header(batch=256, per_device=32, devices=devices,
                         variables="distributed_replicated", extra=("Sync:        False",))
                  + ["Running warm up", "Waiting for other replicas to finish warm up",
                     *steps((1, 60.0), loss="nan"), *total(240.5)])
    assert (run["task_type"], run["task_index"], run["num_workers"], run["job_device_count"]) \
        == ("worker", 1, 4, 8)
    assert (run["sync"], run["primary_record"], run["images_per_sec_total"]) == (
        False, False, 240.5)
    assert run["nan_loss_steps"] == 1


def test_distributed_all_reduce_controller_lists_every_task():
    devices = "['job:worker/replica:0/task0/gpu:0', 'job:worker/replica:0/task1/gpu:0']"
    (run,) = runs(header(batch=128, devices=devices, variables="distributed_all_reduce",
                         single=True, extra=("AllReduce:   xring",))
                  + ["Running warm up", *steps((1, 50.0)), *total(100.0)])
    assert (run["task_type"], run["single_session"], run["num_workers"]) == (
        "controller", True, 2)
    assert (run["job_device_count"], run["all_reduce_spec"]) == (2, "xring")


@pytest.mark.parametrize(("variables", "devices", "single", "workers"), [
    ("horovod", HVD2, False, 2),  # every rank listed
    ("distributed_all_reduce", "['job:worker/replica:0/task0/gpu:0', "
                               "'job:worker/replica:0/task1/gpu:0']", True, 2),
    ("replicated", "['/gpu:0', '/gpu:1']", False, 1),
])
def test_batch_lines_that_disagree_with_a_whole_job_device_list(variables, devices, single,
                                                               workers):
    result = parse(header(batch=512, per_device=64, devices=devices, variables=variables,
                          single=single) + ["Running warm up", *steps((1, 50.0)), *total(100.0)])
    (run,) = result.tables[RUNS].to_dicts()
    assert (run["num_workers"], run["job_device_count"]) == (workers, 2)  # not 512 / 64 = 8
    assert result.conflicts == [LabelConflict("gpus", "2", "file:device list", "8",
                                              "file:batch size lines")]


def test_evaluation_mode_steps_accuracy_and_total():
    result = parse(header(mode="evaluation") + [
        "Generating evaluation model", "10\t1234.5 examples/sec", "20\t1240.0 examples/sec",
        "Accuracy @ 1 = 0.7649 Accuracy @ 5 = 0.9309 [50000 examples]", *total(1238.11)])
    run = result.tables[RUNS].row(0, named=True)
    assert (run["mode"], run["status"], run["images_per_sec_total"]) == (
        "evaluation", "ok", 1238.11)
    assert (run["accuracy_top1_pct"], run["accuracy_top5_pct"], run["eval_examples"]) == (
        pytest.approx(76.49), pytest.approx(93.09), 50000)
    assert run["step_count"] == 0
    eval_steps = result.tables[STEPS]
    assert eval_steps["phase"].to_list() == ["eval", "eval"]
    assert eval_steps["interval_images_per_sec"].to_list() == [1234.5, 1240.0]


def test_2017_forward_only_spelling_and_precision_recall_line():
    (run,) = runs(header(mode="forward-only") + [
        *steps((1, 300.0)), "Precision @ 1 = 0.7000 recall @ 5 = 0.9000 [100 examples]",
        *total(300.0)])
    assert run["mode"] == "forward only"
    assert (run["accuracy_top1_pct"], run["accuracy_top5_pct"]) == (70.0, 90.0)


def test_training_plus_evaluation_ends_with_done_with_training():
    (run,) = runs(header(mode="training + evaluation") + [
        "Running warm up", "Done warm up", *steps((1, 100.0), (10, 100.0)),
        "Running evaluation at global_step 20", "10\t500.0 examples/sec",
        "Accuracy @ 1 = 0.1000 Accuracy @ 5 = 0.3000 [1000 examples]", "Resuming training",
        "20\timages/sec: 100.0 +/- 0.1 (jitter = 0.2)\t6.100", "Done with training",
        "Running final evaluation at global_step 30",
        "Accuracy @ 1 = 0.2500 Accuracy @ 5 = 0.5000 [1000 examples]"])
    assert (run["status"], run["images_per_sec_total"], run["step_count"]) == ("ok", None, 3)
    assert (run["accuracy_top1_pct"], run["accuracy_top5_pct"]) == (25.0, 50.0)


@pytest.mark.parametrize(("tail", "status", "error_class"), [
    ([], "incomplete", "truncated_setup"),
    (["Running warm up"], "incomplete", "truncated_warmup"),
    (["Running warm up", *steps((1, 10.0))], "incomplete", "truncated_steps"),
    (["Running warm up", "Killed"], "failed", "killed"),
    (["Running warm up", "Traceback (most recent call last):", '  File "x.py", line 1',
      "ValueError: bad shape"], "failed", "runtime_error"),
    (["Traceback (most recent call last):", "ModuleNotFoundError: No module named 'horovod'"],
     "failed", "import_error"),
    (["2020-01-01 00:00:00.000001: F tensorflow/core/kernels/x.cc:1] Check failed: ok"],
     "failed", "crash"),
    (["Running warm up", "NCCL WARN Call to connect returned Connection refused",
      "Traceback (most recent call last):", "UnknownError: ncclCommInitRank failed"],
     "failed", "nccl_error"),
])
def test_runs_that_end_without_a_total(tail, status, error_class):
    (run,) = runs(header() + tail)
    assert (run["status"], run["error_class"], run["images_per_sec_total"]) == (
        status, error_class, None)


def test_oom_noise_in_a_complete_run_does_not_fail_it():
    (run,) = runs(header() + [
        "E cudnn_conv_algorithm_picker.cc:536] Resource exhausted: Out of memory while trying "
        "to allocate 633339904 bytes.", "Running warm up", *steps((1, 10.0)), *total(10.0)])
    assert (run["status"], run["error_class"]) == ("ok", None)


def test_wrapper_artifacts_ansi_nul_crlf_kubeflow_prefix():
    prefix = "INFO|2019-03-01T10:00:00|/opt/launcher.py|27| "
    lines = [f"{prefix}{line}" for line in header() + ["Running warm up", *steps((1, 88.0))]]
    lines[0] = "\x1b[0m\x00\x00" + lines[0]
    text = "\r\n".join(lines + [*total(88.0)]) + "\r\n"
    src = text_file("x/kubeflow.log", text)
    assert TfCnnLog().sniff(src)
    run = TfCnnLog().parse(src).tables[RUNS].row(0, named=True)
    assert (run["tensorflow_version"], run["batch_per_device"], run["images_per_sec_total"]) \
        == ("1.10", 64, 88.0)


def test_interval_rate_from_running_means():
    result = parse(header() + ["Running warm up", *steps((1, 100.0), (10, 110.0)),
                               *total(110.0)])
    intervals = result.tables[STEPS]["interval_images_per_sec"].to_list()
    assert intervals == [pytest.approx(100.0), pytest.approx(9 / (10 / 110.0 - 1 / 100.0))]


def test_a_subnormal_running_mean_leaves_intervals_null_and_the_run_loads():
    """1e-320 images/sec squares to 0: the interval's rounding doubt cannot be worked out,
    so no interval is given (it used to fail the file with ZeroDivisionError)."""
    result = parse(header() + ["Running warm up", *steps((1, 1e-320), (10, 110.0)),
                               *total(110.0)])
    steps_rows = result.tables[STEPS]
    assert steps_rows["interval_images_per_sec"].to_list() == [None, None]
    assert steps_rows["running_mean_images_per_sec"].to_list() == [1e-320, 110.0]
    assert result.tables[RUNS]["images_per_sec_total"].to_list() == [110.0]


def test_garbled_step_line_is_held_back_and_the_rest_loads():
    garbled = "10\timages/sec: 10.0 +/- 0.1 (jitter = 0.1)\t7.88010\timages/sec: 10.0"
    lines = header() + ["Running warm up", *steps((1, 10.0)), garbled, *total(10.0)]
    result = parse(lines)
    assert [(p.location, p.table) for p in result.problems] == [
        (f"line {lines.index(garbled) + 1}", STEPS)]
    assert "expected loss [top1 top5]" in result.problems[0].reason
    assert result.tables[STEPS].height == 1
    assert result.tables[RUNS]["status"].to_list() == ["ok"]


def test_malformed_header_value_holds_back_the_run_not_its_steps():
    lines = header() + ["Running warm up", *steps((1, 10.0)), *total(10.0)]
    lines[5] = "Batch size:  lots global"
    result = parse(lines)
    assert [(p.location, p.table) for p in result.problems] == [("line 6", RUNS)]
    assert "expected '<G> global'" in result.problems[0].reason
    assert result.tables[RUNS].height == 0 and result.tables[STEPS].height == 1


NVCNN = ["TensorFlow:  1.12.0", "This script: nvcnn_hvd.py v1.1", "Cmd line args:",
         "  --batch_size=128", "Num ranks:   64", "Model:       resnet152",
         "Batch size:  128 per device", "             8192 total", "Data format: NCHW",
         "Training", "  Step Epoch Img/sec   Loss   LR", "     1   1.0     2.5  7.413  8.384 2.0"]


def test_nvcnn_lookalike_is_not_this_format():
    src = text_file("x/horovod_results.txt", "\n".join(NVCNN) + "\n")
    assert not TfCnnLog().sniff(src)
    assert "nvcnn" in (lookalike_reason(src) or "")


def test_dlbs_log_is_not_this_format_even_around_a_tf_cnn_header():
    lines = ['__exp.framework__="tensorflow"', *header(), *steps((1, 1.0)), *total(1.0)]
    src = text_file("x/dlbs.log", "\n".join(lines))
    assert not TfCnnLog().sniff(src)
    assert (lookalike_reason(src) or "").startswith("DLBS benchmark log")


def test_header_needs_variables_line_and_major_minor_version():
    assert not TfCnnLog().sniff(text_file("x/a.log", "TensorFlow:  1.12\nModel: resnet50\n"))
    assert not TfCnnLog().sniff(text_file("x/b.log", "TensorFlow:  1.12.0\nVariables: x\n"))


def test_unrelated_text_is_rejected_when_parsed():
    with pytest.raises(FormatError, match="no tf_cnn_benchmarks run found"):
        TfCnnLog().parse(text_file("x/c.log", "hello\nworld\n"))


def test_stray_key_value_line_outside_a_header_is_noise():
    (run,) = runs(header() + ["Running warm up", "Mode: 3 (pinned memory)", *steps((1, 10.0)),
                              *total(10.0)])
    assert (run["mode"], run["header_copies"], run["status"]) == ("training", 1, "ok")


def test_a_long_run_printing_every_step_keeps_every_step_and_its_interval():
    n = 5_000  # --display_every=1
    rates = [(k, 1000.0 + k % 7) for k in range(1, n + 1)]
    result = parse(header() + ["Running warm up", "Done warm up", *steps(*rates),
                               "2000\t120.5 examples/sec", *total(1003.0)])
    assert result.problems == []
    df = result.tables[STEPS]
    assert df.height == n + 1
    first, last = df.row(0, named=True), df.row(n - 1, named=True)
    assert first == {
        "run_index": 1, "rank": None, "phase": "benchmark", "step": 1,
        "running_mean_images_per_sec": 1001.0, "uncertainty_images_per_sec": 0.0,
        "jitter_images_per_sec": 0.0, "interval_images_per_sec": 1 / (1 / 1001.0),
        "loss": 7.5, "loss_not_finite": False, "top1_accuracy_pct": None,
        "top5_accuracy_pct": None, "logged_at_unix_s": None, "source_line": 18}
    # step 5000: mean 1000 + 5000 % 7; its interval rate is left out: the means, printed to
    # 0.1, cannot tell it within 2% so late in a run
    assert (last["step"], last["running_mean_images_per_sec"], last["source_line"],
            last["interval_images_per_sec"]) == (5_000, 1002.0, 5_017, None)
    assert df.row(1, named=True)["interval_images_per_sec"] == 1 / (2 / 1002.0 - 1 / 1001.0)
    assert df.row(-1, named=True) | {"source_line": 0} == {
        "run_index": 1, "rank": None, "phase": "eval", "step": 2000,
        "running_mean_images_per_sec": None, "uncertainty_images_per_sec": None,
        "jitter_images_per_sec": None, "interval_images_per_sec": 120.5, "loss": None,
        "loss_not_finite": False, "top1_accuracy_pct": None, "top5_accuracy_pct": None,
        "logged_at_unix_s": None, "source_line": 0}
    (run,) = result.tables[RUNS].to_dicts()
    assert (run["step_count"], run["first_step"], run["last_step"], run["status"]) == (
        n, 1, n, "ok")
