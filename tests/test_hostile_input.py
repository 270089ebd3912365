"""Property tests: whatever the bytes, one file ends as loaded rows, ignored or rejected with
a reason; never an unhandled exception, never a hang (the parse time limit holds)."""

from __future__ import annotations

import codecs

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ingest.examine import examine
from parsers.base import SourceFile
from tests.conftest import CORPUS

# one real file per parser family (small ones: every example parses it again)
SEEDS = (
    "model_analyzer/triton-inference-server__model_analyzer/golden-head-multi-model/"
    "golden-metrics-model-inference.csv",
    "model_analyzer/triton-inference-server__model_analyzer/golden-2022-05-single-model/0.ckpt",
    "perf_analyzer/triton-inference-server__model_analyzer/errant-commit-2023-08/"
    "add_sub-results.csv",
    "genai_perf/NVIDIA__cloudai/doc-ai_dynamo-2025-07/profile_export_genai_perf.csv",
    "genai_perf/triton-inference-server__perf_analyzer__issue-298/"
    "profile_export_genai_perf.streaming.json",
    "tf_cnn_benchmarks/lambdal__lambda-tensorflow-benchmark/logs/7742-1xA100-SXM4-40GB_TF2_3."
    "logs/real-replicated-fp16-1gpus/resnet50-448/throughput/1",
    "fio/GoogleCloudPlatform__PerfKitBenchmarker/tests/data/fio/fio-parser-sample-result.json",
    "gdsio/developer-onizuka__gpudirect_storage/result.txt",
    "elbencho/glennklockwood__elbencho-test/results.cgpu/elbencho-scaling/2799486/"
    "bw-direct.08threads.2799486.csv",
    "mlperf_storage/mlcommons__storage_results_v1.0/Closed/DDN/results/"
    "AI400X2T_24x14TiB_nvme_8xNDR200_18clients/unet3d-h100/runs/run1/c008/summary.json",
)
OUTCOMES = {"loaded", "rejected", "ignored"}
PROPERTY = settings(max_examples=12, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def seed(relpath: str) -> bytes:
    path = CORPUS / relpath
    if not path.is_file():
        pytest.skip("corpus not present")
    return path.read_bytes()


def outcome_of(relpath: str, data: bytes):
    outcome = examine(SourceFile(relpath, data), max_parse_seconds=20)
    assert outcome.status in OUTCOMES
    if outcome.status != "loaded":
        assert outcome.error  # a reason a person can read
    return outcome


@PROPERTY
@given(st.binary(max_size=4096))
def test_random_bytes(data):
    outcome_of("random.bin", data)


@pytest.mark.parametrize("relpath", SEEDS)
@PROPERTY
@given(cut=st.floats(0.0, 1.0))
def test_truncated(relpath, cut):
    data = seed(relpath)
    outcome_of(relpath, data[: int(len(data) * cut)])


@pytest.mark.parametrize("relpath", SEEDS)
@PROPERTY
@given(flips=st.lists(st.tuples(st.floats(0.0, 0.999), st.integers(0, 255)), max_size=8))
def test_bytes_flipped(relpath, flips):
    data = bytearray(seed(relpath))
    for where, value in flips:
        data[int(where * len(data))] = value
    outcome_of(relpath, bytes(data))


@pytest.mark.parametrize("relpath", SEEDS)
@PROPERTY
@given(st.randoms(use_true_random=False), st.booleans())
def test_lines_shuffled_or_duplicated(relpath, rnd, duplicate):
    lines = seed(relpath).splitlines(keepends=True)
    if duplicate:
        lines = [ln for ln in lines for _ in range(rnd.choice((1, 2)))]
    else:
        rnd.shuffle(lines)
    outcome_of(relpath, b"".join(lines))


ENCODINGS = {
    "utf-16": lambda t: t.encode("utf-16"),
    "utf-8 BOM": lambda t: codecs.BOM_UTF8 + t.encode("utf-8"),
    "CRLF": lambda t: t.replace("\n", "\r\n").encode("utf-8"),
    "latin-1": lambda t: t.encode("latin-1", errors="replace"),
}


@pytest.mark.parametrize("relpath", SEEDS)
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_reencoded(relpath, encoding):
    text = seed(relpath).decode("utf-8", errors="replace")
    outcome = outcome_of(relpath, ENCODINGS[encoding](text))
    if encoding in ("utf-16", "utf-8 BOM", "CRLF"):
        # text that only changed its encoding or line ends still loads
        assert outcome.status == "loaded", outcome.error


def test_a_parser_that_hangs_is_stopped_with_a_reason(monkeypatch):
    from parsers.perf_analyzer.csv_export import PerfAnalyzerCsv

    def forever(self, src):
        while True:
            pass

    monkeypatch.setattr(PerfAnalyzerCsv, "parse", forever)
    outcome = examine(SourceFile("pa.csv", b"Concurrency,Inferences/Second\n1,2\n"),
                      max_parse_seconds=0.5)
    assert outcome.status == "rejected"
    assert outcome.error == ("perf_analyzer_csv: gave up after 0.5 s "
                             "(SIZING_MAX_PARSE_SECONDS)")


def test_a_file_whose_every_row_is_refused_says_how_many_and_where_the_first_is():
    """NaN, 1e308, a negative latency and inf: each row is refused (raw.quarantine keeps
    its own reason), and the file's reason counts them and names the first."""
    header = ("Concurrency,Inferences/Second,Client Send,Network+Server Send/Recv,"
              "Server Queue,Server Compute Input,Server Compute Infer,"
              "Server Compute Output,Client Recv,p50 latency,p90 latency,p95 latency,"
              "p99 latency,Avg latency,request/response,response wait\n")
    rows = ("1,NaN,1,1,1,1,1,1,1,1,1,1,1,1,1,1\n"
            "2,1e308,1,1,1,1,1,1,1,1e308,1,1,1,1,1,1\n"
            "3,-0,1,1,1,1,1,1,1,-5,1,1,1,1,1,1\n"
            "4,inf,,,,,,,,,,,,,,\n")
    outcome = examine(SourceFile("pa/perf.csv", (header + rows).encode()),
                      max_parse_seconds=20)
    assert outcome.status == "rejected"
    assert outcome.error == ("perf_analyzer_csv: no row could be loaded (4 rows refused, "
                             "each in raw.quarantine; the first, line 2: no "
                             "Inferences/Second value)")
    assert [p.location for p in outcome.problems] == ["line 2", "line 3", "line 4", "line 5"]
    assert "throughput_per_s=1e+308 fails at most 1e9" in outcome.problems[1].reason
    alone = examine(SourceFile("pa.csv", b"Concurrency,Inferences/Second\n1,NaN\n"),
                    max_parse_seconds=20)
    assert alone.error == ("perf_analyzer_csv: no row could be loaded (line 2: no "
                           "Inferences/Second value)")


DEEP = "[" * 5000 + "]" * 5000  # far past the ~1,000 levels Python's JSON reader goes


def test_json_nested_too_deeply_is_unreadable_json_with_its_reason():
    """Python's reader raises RecursionError; every parser reads JSON through
    parsers.numbers, which makes it the JSONDecodeError each parser explains."""
    from json import JSONDecodeError

    from parsers.numbers import NESTED_TOO_DEEP, decoder, loads

    with pytest.raises(JSONDecodeError, match=NESTED_TOO_DEEP):
        loads(DEEP)
    with pytest.raises(JSONDecodeError, match=NESTED_TOO_DEEP) as raised:
        decoder().raw_decode("  " + DEEP, 2)
    assert raised.value.pos == 2
    assert loads('{"a": [[1]], "n": NaN}')["a"] == [[1]]  # the usual reading is unchanged
    # a tf_cnn benchmark_run.log (the parser that read JSON without parsers.numbers)
    run_log = ('{"run_parameters": [{"name": "batch_size_per_device", "long_value": 64}, '
               '{"name": "variable_update", "string_value": "replicated"}], "deep": '
               + DEEP + "}")
    outcome = examine(SourceFile("run/benchmark_run.log", run_log.encode()),
                      max_parse_seconds=20)
    assert outcome.format == "tf_cnn_benchmark_run"
    assert outcome.error == ("tf_cnn_benchmark_run: not valid JSON: nested deeper than "
                             "1,000 levels: line 1 column 1 (char 0)")
    # the metric.log sniffer read the first line with json.loads, and its RecursionError
    # stopped detection: the file is now simply of no known format
    outcome = examine(SourceFile("deep.json", DEEP.encode()), max_parse_seconds=20)
    assert outcome.error.startswith("unrecognised format: none of the")


# what each real JSON export says once a key nested too deeply opens its first object
DEEP_VERDICTS = {
    "model_analyzer": "unrecognised format: none of the",  # its sniffer reads the first key
    "genai_perf": "genai_perf_json: not valid JSON: nested deeper than 1,000 levels at line 1",
    "fio": "fio_json: no fio JSON report found",  # the report is no longer one
    "mlperf_storage": "mlperf_storage_summary: not valid JSON: nested deeper than 1,000 "
                      "levels at line 1",
}


@pytest.mark.parametrize("relpath", [s for s in SEEDS if s.endswith((".json", ".ckpt"))])
def test_a_real_json_export_with_a_value_nested_too_deeply_says_so(relpath):
    text = seed(relpath).decode("utf-8")
    deep = text.replace("{", '{"deep": ' + DEEP + ", ", 1)
    outcome = outcome_of(relpath, deep.encode())
    assert outcome.status == "rejected"
    assert outcome.error.startswith(DEEP_VERDICTS[relpath.split("/")[0]])
