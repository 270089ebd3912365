"""raw/reference/path_conventions.yaml and its loader."""

from __future__ import annotations

import re
import signal
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ingest.path_conventions import MAX_CONVENTIONS, ConventionError, load

SHIPPED = Path(__file__).resolve().parents[1] / "raw" / "reference" / "path_conventions.yaml"
LAMBDA = "tf_cnn_benchmarks/lambdal__lambda-tensorflow-benchmark/logs/"


@pytest.fixture(scope="module")
def shipped():
    return load(SHIPPED.read_bytes())


def test_lambda_inference_run_with_distortions(shipped):
    assert shipped.apply(
        LAMBDA + "7742-1xA100-SXM4-40GB_TF2_3.logs/real-replicated-fp16-1gpus-distortions-"
                 "inference/vgg16-448/throughput/1") == {
        "cpu": "7742", "gpu_model": "A100-SXM4-40GB", "synthetic": "false",
        "variable_update": "replicated", "precision": "fp16", "gpus": "1",
        "distortions": "true", "mode": "forward only", "model": "vgg16",
        "batch_per_device": "448", "iteration": "1"}


@pytest.mark.parametrize(("config", "cpu", "gpu"), [
    ("Gold_6230-GeForce_RTX_2080_Ti_NVLink_XLA_trt_TF2_2", "Gold_6230", "GeForce RTX 2080 Ti"),
    ("Processor-LambdaCloud_4xQuadro_RTX_6000", "Processor", "Quadro RTX 6000"),
    ("Processor-Tesla_V100-SXM2-16GB_LambdaCloud_TF1_15", "Processor", "Tesla V100-SXM2-16GB"),
    ("i7-9750H-GeForce_RTX_2080_with_Max-Q_Design_XLA_TF1_15", "i7-9750H",
     "GeForce RTX 2080 with Max-Q Design"),
    ("7742-A100-SXM4-40GB_TF2_3_XLA", "7742", "A100-SXM4-40GB"),
    ("7742-8xA100-SXM4-40GB_TF2_3", "7742", "A100-SXM4-40GB"),
    ("3970X-Radeon-VII-Pro-PCIEGen4-10bit", "3970X", "Radeon-VII-Pro-PCIEGen4-10bit"),
    ("7742-A100-SXM4-40GB-2020-3-9", "7742", "A100-SXM4-40GB"),
])
def test_lambda_config_names_lose_their_unreliable_suffixes(shipped, config, cpu, gpu):
    context = shipped.apply(f"{LAMBDA}{config}.logs/syn-parameter_server-fp32-8gpus/"
                            "resnet152-256/throughput/1")
    assert (context["cpu"], context["gpu_model"], context["synthetic"], context["mode"]) == (
        cpu, gpu, "true", "training")
    assert (context["variable_update"], context["gpus"], context["distortions"]) == (
        "parameter_server", "8", "false")


@pytest.mark.parametrize("relpath", [
    LAMBDA + "7742-1xA100-SXM4-40GB_TF2_3.logs/metadata",
    LAMBDA + "7742-1xA100-SXM4-40GB_TF2_3.logs/real-replicated-fp16-1gpus/resnet50-448/thermal/1",
    "tf_cnn_benchmarks/codyaustun__tensorflow-benchmarks/scripts/tf_cnn_benchmarks/logs/"
    "resnet50_train_gpus=4.log",
    LAMBDA + "x.logs/syn-replicated-bf16-1gpus/resnet50-64/throughput/1",  # unknown precision
])
def test_paths_outside_the_layout_give_nothing(shipped, relpath):
    assert shipped.apply(relpath) == {}


def test_first_matching_convention_wins():
    conventions = load(b"- name: a\n  pattern: '/(?P<model>m\\d)/'\n"
                       b"- name: b\n  pattern: '/(?P<gpus>\\d)/'\n")
    assert conventions.apply("x/m1/3/f") == {"model": "m1"}
    assert conventions.apply("x/3/f") == {"gpus": "3"}


def test_maps_values_and_absent_optional_groups():
    conventions = load(b"- name: a\n  pattern: '(?P<fp>fp16|fp32)(?P<x>-xla)?'\n"
                       b"  maps: {fp: precision, x: xla}\n"
                       b"  values: {x: {'-xla': 'true', '': 'false'}}\n")
    assert conventions.apply("run-fp16-xla") == {"precision": "fp16", "xla": "true"}
    assert conventions.apply("run-fp32") == {"precision": "fp32", "xla": "false"}


@pytest.mark.parametrize(("text", "message"), [
    (b"name: x", "expected a list of conventions"),
    (b"- [1]", "convention 1: expected a mapping"),
    (b"- pattern: 'x'", "convention 1: 'name' must be non-empty text"),
    (b"- {name: a, pattern: '(?P<model>x', }", "'pattern' does not compile"),
    (b"- {name: a, pattern: 'x'}", "'pattern' has no named groups"),
    (b"- {name: a, pattern: '(?P<suffix>x)'}", "group 'suffix' is not a context key"),
    (b"- {name: a, pattern: '(?P<m>x)', maps: {m: model, q: gpus}}",
     "'maps' names groups the pattern lacks: q"),
    (b"- {name: a, pattern: '(?P<model>x)', values: {model: [1]}}",
     "values of 'model' must map raw text"),
    (b"- {name: a, pattern: '(?P<model>x)', spaces: [gpus]}", "'spaces' must list named groups"),
    (b"- {name: a, pattern: '(?P<model>x)', colour: red}", "unknown fields colour"),
    (b"- {name: a, pattern: '(?P<model>x)'}\n- {name: a, pattern: '(?P<gpus>x)'}",
     "duplicate convention names: a"),
    (b"- {name: a, pattern: [}", "not valid YAML"),
    (b"- {name: a, pattern: '(?P<model>x)', spaces: [[1]]}", "'spaces' must list named groups"),
    (b"- {name: a, pattern: '(?P<m>x)', maps: {m: [model]}}",
     "'maps' must map group 'm' to a context key, found ['model']"),
    (b"- {name: a, pattern: '(?P<model>x)', values: {model: {x: [1]}}}",
     "values of 'model' must map raw text"),
    (b"- {name: " + b"n" * 101 + b", pattern: '(?P<model>x)'}",
     "'name' must be non-empty text of at most 100 characters"),
    (b"- {name: a, pattern: '(?P<model>" + b"x" * 2000 + b")'}",
     "convention 'a': 'pattern' is 2,011 characters, above the limit of 2,000"),
    (b"- {name: a, pattern: 'x'}\n" * 101, "101 conventions, above the limit of 100"),
    (b"- {name: a, pattern: '(?P<model>a)\\1'}", "convention 'a': 'pattern' does not compile: "
     "invalid escape sequence: \\1; patterns are RE2 syntax (no backreferences or lookaround)"),
    (b"- {name: a, pattern: '(?P<model>a)(?=b)'}", "'pattern' does not compile: invalid perl "
     "operator: (?=; patterns are RE2 syntax (no backreferences or lookaround)"),
    (b"- {name: a, pattern: '(?<!b)(?P<model>a)'}", "patterns are RE2 syntax"),
    (b"- {name: " + b"[" * 100 + b"]" * 100 + b"}", "nesting deeper than 64 levels"),
])
def test_invalid_files_say_what_is_wrong(text, message):
    with pytest.raises(ConventionError, match=re.escape(message)):
        load(text)


def test_empty_file_has_no_conventions():
    assert load(b"").apply("anything") == {}


def test_limits_are_generous_for_honest_files():
    entries = b"".join(b"- {name: c%d, pattern: '/(?P<model>m%d)/'}\n" % (i, i)
                       for i in range(MAX_CONVENTIONS))
    assert load(entries).apply("x/m99/f") == {"model": "m99"}


@pytest.fixture
def within_30_s():
    """A hang fails the test instead of stopping the suite (no timing is asserted)."""
    def _hung(signum, frame):
        raise AssertionError("did not return within 30 s: the pattern backtracks")

    previous = signal.signal(signal.SIGALRM, _hung)
    signal.alarm(30)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize(("pattern", "matching"), [
    ("(?P<model>(a+)+)$", "runs/aaa"), ("(?P<model>(a|aa)+)$", "runs/aaa"),
    ("(?P<model>(a*)*b)", "runs/aaab")])
def test_catastrophic_patterns_run_in_linear_time(within_30_s, pattern, matching):
    conventions = load(yaml.safe_dump([{"name": "redos", "pattern": pattern}]).encode())
    assert conventions.apply("runs/" + "a" * 100_000 + "!/f") == {}
    assert conventions.apply(matching)["model"].startswith("aaa")


def test_named_groups_read_unicode_paths_and_classes_are_ascii():
    conventions = load(b"- {name: u, pattern: '/(?P<system>[^/]+)/(?P<model>\\w+)-'}")
    assert conventions.apply("runs/noeud-é²/resnet-1") == {"system": "noeud-é²",
                                                           "model": "resnet"}
    # RE2's \w, \d, \s and \b are ASCII (Python's re are Unicode): 'é' is no word character
    assert conventions.apply("runs/noeud/résnet-1") == {}


def test_a_file_name_with_undecodable_bytes_still_matches():
    conventions = load(b"- {name: s, pattern: '^(?P<system>[^/]+)/'}")
    name = b"pod-a/r\xffn.csv".decode("utf-8", "surrogateescape")  # as os.listdir gives it
    assert conventions.apply(name) == {"system": "pod-a"}


PROPERTY = settings(max_examples=150, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
TEXT = st.text(max_size=12) | st.sampled_from(
    ["model", "gpus", "(?P<model>[^/]+)", "(?P<gpus>\\d+)gpus", "(a)\\1", "(?=x)", "[", ""])
ANY = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | TEXT,
                   lambda inner: st.lists(inner, max_size=3)
                   | st.dictionaries(TEXT | st.integers(), inner, max_size=3), max_leaves=20)
ENTRY = st.dictionaries(st.sampled_from(["name", "pattern", "maps", "values", "spaces",
                                         "description", "other"]), ANY, max_size=6)


def check(data: bytes) -> None:
    try:
        conventions = load(data)
    except ConventionError as exc:
        assert 0 < len(str(exc)) <= 600  # the list of known context keys is long
        return
    conventions.match("logs/a-b/fp16/8gpus/model-1/throughput/1")


@PROPERTY
@given(st.binary(max_size=2048))
def test_any_bytes_load_or_raise_a_convention_error(data):
    check(data)


@PROPERTY
@given(st.lists(ENTRY | ANY, max_size=4))
def test_any_structure_loads_or_raises_a_convention_error(doc):
    check(yaml.safe_dump(doc, allow_unicode=True).encode())
