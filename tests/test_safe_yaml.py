"""parsers/safe_yaml.py: YAML people write, read within limits, one error class for all."""

from __future__ import annotations

import codecs
import datetime as dt

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parsers.base import FormatError, SourceFile
from parsers.reference.sizing_yaml import CapacityScenarios
from parsers.safe_yaml import MESSAGE_CHARS, YamlInputError, load, shown

PROPERTY = settings(max_examples=150, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def laughs(levels: int, width: int = 10) -> bytes:
    """The billion-laughs document: each level repeats the one below `width` times."""
    lines = [f"l0: &l0 [{', '.join(['lol'] * width)}]"]
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * width)}]" for i in range(1, levels)]
    return "\n".join(lines).encode()


@pytest.mark.parametrize(("data", "reason"), [
    (b"nodes: " + b"9" * 5000,
     "an integer of 5,000 digits at line 1: write it as text (in quotes) or shorten it"),
    (b"x: 0x" + b"f" * 200, "an integer of 202 digits at line 1"),  # any base
    (b"a: " + b"[" * 5000 + b"]" * 5000, "nesting deeper than 64 levels at line 1"),
    (b"".join(b" " * i + b"- \n" for i in range(100)), "nesting deeper than 64 levels at line 65"),
    (laughs(9), "more than 100,000 values at line 5 (each alias counts the values it repeats)"),
    (b"a: &a x\n" + b"".join(b"k%d: *a\n" % i for i in range(101)),
     "more than 100 aliases (*name) at line 102: write the values out"),
    (b"a: &a " + b"[" * 40 + b"]" * 40 + b"\nb: " + b"[" * 30 + b"*a" + b"]" * 30,
     "nesting deeper than 64 levels at line 2 (counting what aliases repeat)"),
    (b"a: &a [1, *a]", "alias *a at line 1 is inside the value it names"),
    (b"x: " + b"a" * 20_000, "a value of 20,000 characters at line 1, above the 10,000 limit"),
    (b"a" * (3 * 1024 * 1024),
     "file is 3 MiB, above the 1 MiB limit for YAML context and reference files"),
    (b"nodes: \xff8", "not valid UTF-8: undecodable byte at offset 7; save the file as UTF-8"),
    (b"a: [", "not valid YAML: while parsing a flow node at line 1, expected the node "
              "content, but found '<stream end>' at line 1"),
    (b"a: 1\n---\nb: 2", "not valid YAML: expected a single document in the stream at line 1, "
                         "but found another document at line 2"),
    (b"a: *nowhere", "not valid YAML: found undefined alias 'nowhere' at line 1"),
    (b"a: \x00", "not valid YAML: unacceptable character #x0000"),
    (b"x: !!python/object/apply:os.system [ls]", "not valid YAML: could not determine a "
                                                 "constructor for the tag"),
    (b"d: !!timestamp 2026-13-45",
     "line 1: cannot read '2026-13-45' as timestamp (month must be in 1..12)"),
    (b"n: !!int twelve", "line 1: cannot read 'twelve' as int"),
    (b"b: !!bool maybe", "line 1: cannot read 'maybe' as bool"),
])
def test_each_hostile_document_is_one_error_with_a_reason(data, reason):
    with pytest.raises(YamlInputError) as caught:
        load(data)
    assert reason in str(caught.value)
    assert len(str(caught.value)) <= MESSAGE_CHARS


def test_limits_are_parameters():
    with pytest.raises(YamlInputError, match="file is 11 bytes, above the 10 bytes limit"):
        load(b"a: 12345678", max_bytes=10)
    with pytest.raises(YamlInputError, match="nesting deeper than 2 levels"):
        load(b"a: {b: [1]}", max_depth=2)
    with pytest.raises(YamlInputError, match="more than 1 aliases"):
        load(b"a: &a 1\nb: *a\nc: *a", max_aliases=1)


def test_honest_documents_load_as_pyyaml_loads_them():
    text = ("system: h100-bm-01\nnodes: 2\ngpu_memory_gb: 80.5\nok: true\nnone: ~\n"
            "base: &base {gpus_per_node: 8}\nnode: {<<: *base, nodes: 1}\n")
    assert load(text.encode()) == yaml.safe_load(text)


def test_dates_stay_text_so_each_reader_names_its_key():
    assert load(b"date: 2026-10-14\nbad: 2026-13-45") == {"date": "2026-10-14",
                                                          "bad": "2026-13-45"}
    assert load(b"d: !!timestamp 2026-10-14") == {"d": dt.date(2026, 10, 14)}


def test_empty_bom_and_text():
    assert load(b"") is None
    assert load(b"  \n# nothing\n") is None
    assert load(codecs.BOM_UTF8 + b"a: 1") == {"a": 1}
    assert load("a: ²") == {"a": "²"}  # text a caller already decoded


def test_non_finite_floats_are_values_for_the_reader_to_judge():
    doc = load(b"a: .nan\nb: -.inf\nc: 1e400\nd: 1.0e+400")
    assert doc["a"] != doc["a"] and doc["b"] == float("-inf")
    assert doc["c"] == "1e400"  # YAML 1.1: no dot, not a float
    assert doc["d"] == float("inf")


def test_shown_values_are_short():
    assert "..." in shown("x" * 1000) and len(shown("x" * 1000)) <= 80
    assert shown(10 ** 99).startswith("1000")
    assert shown({"a": [[[[1]]]]}) == "{'a': [[...]]}"


@PROPERTY
@given(st.binary(max_size=2048))
def test_any_bytes_load_or_raise_the_one_error(data):
    try:
        load(data)
    except YamlInputError as exc:
        assert 0 < len(str(exc)) <= MESSAGE_CHARS


YAMLABLE = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
    | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=5)
    | st.dictionaries(st.text(max_size=10) | st.integers(), inner, max_size=5),
    max_leaves=40)


@PROPERTY
@given(YAMLABLE)
def test_any_structure_within_the_limits_reads_back_as_written(value):
    assert load(yaml.safe_dump(value).encode()) == value


@PROPERTY
@given(YAMLABLE, st.integers(0, 200))
def test_any_structure_nested_deep_loads_or_raises_the_one_error(value, depth):
    for _ in range(depth):
        value = [value]
    try:
        load(yaml.safe_dump(value, default_flow_style=True).encode())
    except YamlInputError as exc:
        assert "nesting deeper than 64 levels" in str(exc)


SCENARIO = ("name: chat\nserver: {gpu_model: L40S-48GB, gpus_per_server: 2}\n"
            "slo: {percentile: p95, max_latency_ms: 20}\n"
            "demands:\n  - {model: llm_13b, concurrent_users: 10}\n")


@pytest.mark.parametrize(("text", "reason"), [
    (SCENARIO.replace("users: 10", "users: " + "9" * 5000),
     "an integer of 5,000 digits at line 5: write it as text (in quotes) or shorten it"),
    (SCENARIO + "x: " + "[" * 100 + "]" * 100, "nesting deeper than 64 levels at line 6"),
    (SCENARIO.replace("max_latency_ms: 20", "max_latency_ms: .inf"),
     "chat.slo.max_latency_ms must be a finite number above 0, found inf"),
    (SCENARIO.replace("users: 10", "users: 10000000000"), "chat.demands[1].concurrent_users "
     "must be a whole number above 0 and at most 1,000,000,000, found 10000000000"),
])
def test_scenarios_are_read_within_the_same_limits(text, reason):
    with pytest.raises(FormatError) as caught:
        CapacityScenarios().parse(SourceFile("reference/scenarios.yaml", text.encode()))
    assert reason in str(caught.value)


def test_scenarios_still_read_utf16():
    parsed = CapacityScenarios().parse(SourceFile("reference/scenarios.yaml",
                                                  SCENARIO.encode("utf-16")))
    assert parsed.tables["raw.capacity_scenarios"]["concurrent_users"].to_list() == [10]
