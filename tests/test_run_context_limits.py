"""run.yaml within limits: every bad value is a ContextError naming the key and the value,
and a bad run.yaml is left out of the files under it (with a warning), never rejects them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ingest import path_conventions
from ingest.engine import ingest
from ingest.run_context import (
    ContextError,
    ContextResolver,
    SidecarContext,
    parse_run_yaml,
)
from samples.generate import write
from store.store import Store, connect
from tests.conftest import query
from tests.parsers.test_llm_serving_fixtures import vllm
from tests.test_safe_yaml import laughs
from transforms.llm.tables import build_runs

PROPERTY = settings(max_examples=150, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
MESSAGE_CHARS = 250  # a reason is one readable line, whatever the value


def reason(data: bytes) -> str:
    with pytest.raises(ContextError) as caught:
        parse_run_yaml(data)
    assert len(str(caught.value)) <= MESSAGE_CHARS
    return str(caught.value)


@pytest.mark.parametrize(("data", "expected"), [
    ('nodes: "²"'.encode(), "'nodes' must be a whole number above 0, found '²'"),
    (b"nodes: 1e400", "'nodes' must be a whole number above 0, found '1e400'"),
    (b"nodes: 1.0e+400", "'nodes' must be a whole number above 0, found inf"),
    (b"nodes: 100001", "'nodes' must be at most 100,000, found 100001"),
    (b"nodes: '99999999999999999999'", "'nodes' must be at most 100,000, found "
                                       "'99999999999999999999'"),
    (b"nodes: true", "'nodes' must be a whole number above 0, found True"),
    (b"gpus_per_node: -1", "'gpus_per_node' must be a whole number above 0, found -1"),
    (b"gpus_per_node: 4.0", "'gpus_per_node' must be a whole number above 0, found 4.0"),
    (b"gpus_per_node: 2048", "'gpus_per_node' must be at most 1,024, found 2048"),
    (b"gpu_memory_gb: .nan", "'gpu_memory_gb' must be a number of GB above 0, found nan"),
    (b"gpu_memory_gb: -.inf", "'gpu_memory_gb' must be a number of GB above 0, found -inf"),
    (b"gpu_memory_gb: .inf", "'gpu_memory_gb' must be at most 10,000 GB per GPU, found inf"),
    (b"gpu_memory_gb: 1.0e+308",
     "'gpu_memory_gb' must be at most 10,000 GB per GPU, found 1e+308"),
    (b"gpu_memory_gb: '80'", "'gpu_memory_gb' must be a number of GB above 0, found '80'"),
    (b"date: 2026-13-45", "'date' must be an ISO date (2026-11-21), found '2026-13-45'"),
    (b"date: [2026]", "'date' must be an ISO date (2026-11-21), found [2026]"),
    (b"precision: [fp16]", "'precision' must be one of fp32, fp16, bf16, fp8, int8, int4, "
                           "found ['fp16']"),
    (b"system: {a: 1}", "'system' must be text, found {'a': 1}"),
    (b"system: .nan", "'system' must be text, found nan"),
    (b"system: " + b"s" * 300, "'system' is 300 characters, above the 200 limit for a name, "
                               "found 'sssss"),
    (b"2026: q4", "key 2026 must be text: put it in quotes"),
    (b"on: x", "key True must be text: put it in quotes (YAML reads numbers, yes/no and "
               "on/off as values)"),
    (b"tags: {1: x}", "tag 1 must be text: put it in quotes"),
    (b"tags: [x]", "'tags' must be a mapping, found ['x']"),
    (b"notes: " + b"n" * 2000, "tag 'notes' is 2,013 characters as JSON, above the 1,000 "
                               "limit, found 'nnnn"),
    (b"tags: {ratio: .nan}", "tag 'ratio' cannot be stored as JSON (Out of range float values "
                             "are not JSON compliant"),
    (b"tags: {m: {1: x, b: y}}", "tag 'm' cannot be stored as JSON"),
    (b"".join(b"k%d: v\n" % i for i in range(51)), "51 tags (unknown keys count as tags), "
                                                   "above the 50 limit"),
    (b"- nodes: 1", "must be a mapping of keys, found list"),
    (b"nodes: " + b"9" * 5000, "an integer of 5,000 digits at line 1: write it as text"),
    (b"a: " + b"[" * 5000 + b"]" * 5000, "nesting deeper than 64 levels at line 1"),
    (laughs(9), "more than 100,000 values"),
    (b"nodes: [", "not valid YAML"),
    (b"\xff", "not valid UTF-8"),
])
def test_bad_values_name_the_key_and_the_value(data, expected):
    assert expected in reason(data)


@pytest.mark.parametrize(("data", "values"), [
    (b"nodes: '8'\ngpus_per_node: 8", {"nodes": 8, "gpus_per_node": 8}),
    (b"nodes: 100000\ngpu_memory_gb: 10000", {"nodes": 100_000, "gpu_memory_gb": 10_000.0}),
    (b"date: 2026-10-14", {"run_date": "2026-10-14"}),
    (b"date: 2026-1-5", {"run_date": "2026-01-05"}),  # YAML 1.1 allows single digits
    (b"date: 2026-10-14 10:30:00", {"run_date": "2026-10-14T10:30:00"}),
    (b"date: !!timestamp 2026-10-14", {"run_date": "2026-10-14"}),
    (b"gpu_model: 4090\nprecision: ' FP16 '", {"gpu_model": "4090", "precision": "fp16"}),
    (b"nodes: ~\ntags: ~", {}),  # empty keys are left out
])
def test_good_values(data, values):
    assert parse_run_yaml(data)[0] == values


@pytest.mark.parametrize("value", ["2.5", "0.4", "0", "-1", "'0x10'", "'1e3'", "true",
                                   "'8 '", "'²'"])
@pytest.mark.parametrize("key", ["gpus", "gpus_per_server", "batch_size", "concurrency"])
def test_counts_kept_as_tags_are_whole_and_at_least_one(key, value):
    """The core SQL casts these tags to integers: 2.5 became 3 GPUs, '0x10' 16."""
    shown = {"true": "True", "'8 '": "'8 '"}.get(value, value)
    assert reason(f"{key}: {value}".encode()) == \
        f"'{key}' must be a whole number above 0, found {shown}"
    assert reason(f"tags: {{{key}: {value}}}".encode()) == \
        f"'{key}' must be a whole number above 0, found {shown}"


def test_counts_kept_as_tags_are_stored_as_integers():
    assert parse_run_yaml(b"gpus: '8'\nconcurrency: 64\ntags: {batch_size: '1'}\n"
                          b"gpus_per_server: ~") == (
        {}, {"gpus": 8, "concurrency": 64, "batch_size": 1})  # an empty key is left out
    assert reason(b"gpus: 1000001") == "'gpus' must be at most 1,000,000, found 1000001"


def test_unknown_keys_and_tags_are_kept_as_tags():
    assert parse_run_yaml(b"owner: infra\ntags: {ticket: 42}") == (
        {}, {"owner": "infra", "ticket": 42})


# the resolver: a broken run.yaml is left out, its files keep the rest of their context

ROOT = b"system: pod-a\nnodes: 2\nprecision: fp16\n"


def test_files_under_a_broken_run_yaml_keep_the_parents_values_and_a_warning():
    resolver = ContextResolver({"run.yaml": ROOT, "a/run.yaml": 'nodes: "²"\n'.encode()})
    context = resolver.resolve("a/b/result.csv")
    assert context.values == {"system": "pod-a", "nodes": 2, "precision": "fp16"}
    assert context.sources == {"system": "run.yaml", "nodes": "run.yaml",
                               "precision": "run.yaml"}
    assert context.files == ("run.yaml",)
    assert context.warnings == (
        "a/run.yaml not applied: 'nodes' must be a whole number above 0, found '²'",)
    assert resolver.errors == {"a/run.yaml": "'nodes' must be a whole number above 0, "
                                             "found '²'"}
    assert resolver.resolve("b/result.csv").warnings == ()  # other folders unaffected


def test_a_file_with_no_context_left_still_resolves():
    resolver = ContextResolver({"a/run.yaml": b"a: " + b"[" * 5000 + b"]" * 5000})
    context = resolver.resolve("a/result.csv")
    assert (context.values, context.files) == ({}, ())
    assert context.warnings == ("a/run.yaml not applied: nesting deeper than 64 levels at "
                                "line 1",)
    assert context.row()["context_files"] is None


def test_an_unreadable_run_yaml_is_left_out_with_its_reason():
    resolver = ContextResolver({"run.yaml": ROOT, "a/run.yaml": "permission denied: not read"})
    assert resolver.resolve("a/x.csv").warnings == (
        "a/run.yaml not applied: permission denied: not read",)
    assert resolver.resolve("a/x.csv").values["system"] == "pod-a"


def test_a_path_value_of_the_wrong_type_is_left_out_with_a_warning():
    conventions = path_conventions.load(
        b"- {name: layout, pattern: '/(?P<nodes>[^/]+)nodes/(?P<system>[^/]+)/'}")
    context = ContextResolver({}, conventions).resolve("runs/0nodes/pod-b/x.csv")
    assert context.values == {"system": "pod-b"}
    assert context.sources == {"system": "path:layout"}
    assert context.path_values == {"nodes": "0", "system": "pod-b"}  # what the path said
    assert context.warnings == ("path convention 'layout': value not applied: 'nodes' must "
                                "be a whole number above 0, found '0'",)


def test_a_count_a_path_says_wrong_is_left_out_of_what_the_sql_reads():
    conventions = path_conventions.load(
        b"- {name: layout, pattern: '/(?P<gpus>[^/]+)gpus/(?P<system>[^/]+)/'}")
    resolver = ContextResolver({}, conventions)
    context = resolver.resolve("runs/0gpus/pod-b/x.csv")
    assert context.path_values == {"system": "pod-b"}  # path_context: no 'gpus' to cast
    assert context.warnings == ("path convention 'layout': value not applied: 'gpus' must "
                                "be a whole number above 0, found '0'",)
    assert resolver.resolve("runs/8gpus/pod-b/x.csv").path_values == {
        "gpus": "8", "system": "pod-b"}


def test_broken_path_conventions_are_named_on_every_file():
    context = ContextResolver({"run.yaml": ROOT}, None, "not valid YAML: x").resolve("x.csv")
    assert context.values["system"] == "pod-a"
    assert context.warnings == ("reference/path_conventions.yaml not applied: not valid "
                                "YAML: x",)


def test_files_share_a_context_only_when_nothing_of_theirs_differs():
    """Contexts are resolved once per set of run.yaml above a file and its folder's
    sidecar (an archive of 100,000 files under a few run.yaml has a few contexts)."""
    sidecar = SidecarContext({"model": "llama"}, {"model": "b/meta.json"})
    resolver = ContextResolver({"run.yaml": ROOT, "a/run.yaml": b"nodes: 4\n"}, None, None,
                               {"b": sidecar})
    under_a, also_a, below_a = (resolver.resolve(p) for p in
                                ("a/x.csv", "a/y.csv", "a/deeper/z.csv"))
    assert under_a is also_a is below_a  # the same run.yaml above, no sidecar
    assert under_a.values == {"system": "pod-a", "nodes": 4, "precision": "fp16"}
    assert under_a.files == ("a/run.yaml", "run.yaml")
    root_only, with_sidecar = resolver.resolve("c/x.csv"), resolver.resolve("b/x.csv")
    assert root_only is not with_sidecar
    assert (root_only.values["nodes"], root_only.sidecar) == (2, {})
    assert with_sidecar.sidecar == {"model": "llama"}
    assert with_sidecar.sources["model"] == "sidecar:b/meta.json"
    # a row is a copy: a caller adding to it changes no other file's
    row = under_a.row()
    row["source_file"] = "a/x.csv"
    assert "source_file" not in also_a.row()
    # a tree deeper than Python's recursion limit
    deep = "/".join(["d"] * 3000)
    deeper = ContextResolver({"run.yaml": ROOT, f"{deep}/run.yaml": b"nodes: 4\n"})
    assert deeper.resolve(f"{deep}/e/x.csv").files == (f"{deep}/run.yaml", "run.yaml")
    assert deeper.resolve("d/d/x.csv").values["nodes"] == 2
    # a path convention reads the file's own name: each file its own context
    conventions = path_conventions.load(
        b"- {name: layout, pattern: '/(?P<system>pod-[a-z])/'}")
    by_name = ContextResolver({"run.yaml": ROOT}, conventions)
    b, c = by_name.resolve("runs/pod-b/x.csv"), by_name.resolve("runs/pod-c/x.csv")
    assert (b.values["system"], c.values["system"]) == ("pod-a", "pod-a")  # run.yaml first
    assert (b.path_values, c.path_values) == ({"system": "pod-b"}, {"system": "pod-c"})


# whatever the bytes or the structure: a context, or ContextError; never anything else

def check_run_yaml(data: bytes) -> None:
    try:
        parse_run_yaml(data)
    except ContextError as exc:
        assert 0 < len(str(exc)) <= MESSAGE_CHARS
    context = ContextResolver({"run.yaml": ROOT, "a/run.yaml": data}).resolve("a/b/f.csv")
    json.dumps(context.row())  # what raw.file_context stores
    assert context.values["system"] == "pod-a" or context.files[0] == "a/run.yaml"


@PROPERTY
@given(st.binary(max_size=2048))
def test_any_bytes_give_a_context_or_a_context_error(data):
    check_run_yaml(data)


SCALARS = (st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=40)
           | st.dates() | st.sampled_from(["²", "8", "-1", "fp16", "2026-13-45", "1e400"]))
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.text(max_size=8) | st.integers(), inner,
                                        max_size=4), max_leaves=30)
KEYS = st.sampled_from(["system", "gpu_model", "gpu_memory_gb", "gpus_per_node", "nodes",
                        "virtualization", "precision", "date", "tags", "dataset", "other",
                        "gpus", "concurrency"])


@PROPERTY
@given(st.dictionaries(KEYS | st.integers() | st.booleans(), VALUES, max_size=8),
       st.integers(0, 80))
def test_any_structure_gives_a_context_or_a_context_error(doc, depth):
    if depth and doc:
        key = next(iter(doc))
        for _ in range(depth):
            doc[key] = [doc[key]]
    check_run_yaml(yaml.safe_dump(doc, allow_unicode=True).encode())


# through the core tables: a refused count never reaches a per-GPU figure

LLM = "llm/vllm-l40s/"


@pytest.fixture(scope="module")
def serving(tmp_path_factory) -> Path:
    """vLLM runs that do not count their GPUs, each under a run.yaml saying how many."""
    raw, warehouse = tmp_path_factory.mktemp("counts") / "raw", None
    files = {}
    for i, gpus in enumerate(["2.5", "0", "'0x10'", "'2'"]):
        files[f"{LLM}{i}/run.yaml"] = f"gpu_model: L40S-48GB\ngpus: {gpus}\n"
        files[f"{LLM}{i}/c4.json"] = json.dumps(vllm(  # a label of its own: not a copy
            label=f"sweep-{i}", max_concurrency=4, gpu=None, tp=None, output_throughput=150.0))
    write(raw, files)
    warehouse = raw.parent / "w.duckdb"
    store = Store(connect(warehouse))
    try:
        ingest(store, raw, "t")
        build_runs(store, "t")
    finally:
        store.con.close()
    return warehouse


def test_a_refused_gpu_count_leaves_the_run_without_gpus_not_rounded(serving):
    rows = query(serving, "SELECT source_file, gpus, gpus_source, gpu_model, "
                          "output_tokens_per_s_per_gpu FROM core.llm_serving_runs "
                          "ORDER BY source_file")
    assert rows == [(f"{LLM}0/c4.json", None, None, None, None),  # not 3
                    (f"{LLM}1/c4.json", None, None, None, None),  # not 0
                    (f"{LLM}2/c4.json", None, None, None, None),  # not 16
                    (f"{LLM}3/c4.json", 2, "run.yaml", "L40S-48GB", 75.0)]


def test_the_refused_run_yaml_is_rejected_and_its_files_say_why(serving):
    rows = dict(query(serving, "SELECT path, coalesce(error, notes) FROM raw.ingested_files "
                               f"WHERE path LIKE '{LLM}0/%'"))
    assert rows == {
        f"{LLM}0/run.yaml": "run.yaml: 'gpus' must be a whole number above 0, found 2.5",
        f"{LLM}0/c4.json": f"{LLM}0/run.yaml not applied: 'gpus' must be a whole number "
                           "above 0, found 2.5"}
