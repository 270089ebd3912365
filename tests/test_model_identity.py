"""One model identity for LLM serving: raw/reference/model_aliases.csv resolves the names
harnesses write, so a vLLM sweep of meta-llama/Llama-3.1-8B-Instruct and a GuideLLM sweep
of Llama3.1_8B on the same GPU meet in one rule, one chart and one plan; an FP8 checkpoint
is the same model at fp8; a name the table lacks is listed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ingest.engine import ingest
from parsers.base import FormatError
from parsers.reference.model_aliases_csv import ModelAliasesCsv
from pipelines.domains import REPORT_SECTIONS
from reports.report import write_report
from samples.generate import LLM_SLO_YAML, run_yaml, write
from samples.model_aliases import model_aliases_csv
from schemas.model_aliases import model_key
from store.store import Store, connect
from tests.conftest import query, text_file
from tests.fixtures.gen_guidellm import Point, report_v05
from tests.parsers.test_llm_serving_fixtures import vllm
from tests.test_report import plots, section
from transforms.llm.tables import build_optimal, build_runs, sweep_options

CANONICAL = "meta-llama/Llama-3.1-8B-Instruct"
FP8 = "neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8"
UNKNOWN = "acme/house-model-7b"
HOST = "llm_serving/h100-lab/"


def _vllm(model: str, concurrency: int) -> str:
    """A vLLM run at one concurrency: 15 tokens/s and 10 ms of p99 TTFT per stream."""
    run = {k: v for k, v in vllm(model_id=model, tokenizer_id=model,
                                 max_concurrency=concurrency,
                                 output_throughput=15.0 * concurrency,
                                 p99_ttft_ms=100.0 + 10 * concurrency).items()
           if k not in ("gpu", "tp")}  # the GPU comes from run.yaml, as GuideLLM's does
    return json.dumps(run)


def _guidellm(model: str) -> str:
    points = tuple(Point({"type_": "concurrent", "streams": s, "max_concurrency": s}, 100,
                         requests_per_s=0.5 * s, concurrency=float(s)) for s in (1, 4, 16))
    return json.dumps(report_v05(points)).replace("org/m-8b", model)


FILES = {
    "reference/llm_slo.yaml": LLM_SLO_YAML,
    "reference/model_aliases.csv": model_aliases_csv(),
    f"{HOST}run.yaml": run_yaml(gpu_model="H100-80GB", gpus=1),
    **{f"{HOST}vllm/c{c}.json": _vllm(CANONICAL, c) for c in (1, 4, 16)},
    f"{HOST}vllm-fp8/c4.json": _vllm(FP8, 4),
    f"{HOST}vllm-house/c4.json": _vllm(UNKNOWN, 4),
    f"{HOST}guidellm/benchmarks.json": _guidellm("Llama3.1_8B"),  # the alias llama3.1-8b
}


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("identity")
    write(tmp / "raw", FILES)
    path = tmp / "w.duckdb"
    store = Store(connect(path))
    try:
        ingest(store, tmp / "raw", "t")
        build_runs(store, "t")
        build_optimal(store, 0.95)
    finally:
        store.con.close()
    return path


def test_runs_resolve_to_one_canonical_model_with_the_alias_precision(warehouse):
    rows = query(warehouse, "SELECT tool, model, canonical_model, model_resolved, precision, "
                            "precision_source, count(*) FROM core.llm_serving_runs "
                            "GROUP BY ALL ORDER BY tool, model")
    assert rows == [
        ("guidellm", "Llama3.1_8B", CANONICAL, True, None, None, 3),
        ("vllm", UNKNOWN, UNKNOWN, False, None, None, 1),
        ("vllm", CANONICAL, CANONICAL, True, None, None, 3),
        ("vllm", FP8, CANONICAL, True, "fp8", "model alias", 1),
    ]


def test_the_rule_names_both_harnesses_and_keeps_the_fp8_sweep_apart(warehouse):
    rows = query(warehouse, "SELECT canonical_model, model, precision, tool, harnesses, "
                            "levels_measured, max_load_within_slo FROM "
                            "sizing.llm_serving_optimal WHERE slo_policy = 'none' "
                            "ORDER BY canonical_model, tool, precision NULLS FIRST")
    assert rows == [
        (UNKNOWN, UNKNOWN, None, "vllm", "vllm", 1, 4.0),
        (CANONICAL, "Llama3.1_8B", None, "guidellm", "guidellm;vllm", 3, 16.0),
        (CANONICAL, CANONICAL, None, "vllm", "guidellm;vllm", 3, 16.0),
        (CANONICAL, FP8, "fp8", "vllm", "guidellm;vllm", 1, 4.0),
    ]


def test_a_plan_of_any_spelling_chooses_among_both_harnesses(warehouse):
    store = Store(connect(warehouse, read_only=True))
    try:
        found = {(o["tool"], o["precision"])
                 for o in sweep_options(store, "LLAMA3_8B", "H100-80GB", "none")}
    finally:
        store.con.close()
    assert found == {("guidellm", None), ("vllm", None), ("vllm", "fp8")}


def test_the_report_draws_both_harnesses_in_one_chart_and_lists_the_unknown_model(
        warehouse, tmp_path):
    con = connect(warehouse, read_only=True)
    try:
        html = write_report(Store(con), tmp_path / "r.html",
                            domain_sections=REPORT_SECTIONS).path.read_text()
    finally:
        con.close()
    llm = section(html, "llm-serving")
    # one chart of the Llama: vLLM (3 levels), GuideLLM (3) and the FP8 vLLM run (1);
    # one of the unknown model
    assert sorted(p for p in plots(llm) if p[0] == "llm-serving") == [
        ("llm-serving", 1, 1), ("llm-serving", 7, 3)]
    assert f"{CANONICAL}: throughput against time to first token" in llm
    assert "Models not in the alias table (1): acme/house-model-7b." in llm
    assert "guidellm;vllm" in llm


@pytest.mark.parametrize("spelling", ["Llama-3.1-8B", "llama3.1_8b", "LLAMA 3.1 8B"])
def test_case_and_separators_do_not_matter(spelling):
    assert model_key(spelling) == "llama318b"


def test_the_sql_key_is_the_python_key(warehouse):
    (key,) = query(warehouse, "SELECT lower(regexp_replace('Meta-Llama_3.1 8B/x', "
                              "'[^A-Za-z0-9]', '', 'g'))")[0]
    assert key == model_key("Meta-Llama_3.1 8B/x") == "metallama318bx"


def test_an_alias_naming_two_models_rejects_the_file():
    csv = ("alias,canonical_model,precision\nllama3_8b,meta-llama/Llama-3.1-8B-Instruct,\n"
           "Llama3-8B,meta-llama/Meta-Llama-3-8B-Instruct,\n")
    with pytest.raises(FormatError, match="line 3: 'Llama3-8B' is meta-llama/Meta-Llama-3-8B-"
                                          "Instruct .* but line 2 made it meta-llama/Llama"):
        ModelAliasesCsv().parse(text_file("reference/model_aliases.csv", csv))


def test_the_shipped_aliases_parse_and_sniff():
    src = text_file("reference/model_aliases.csv", model_aliases_csv())
    parser = ModelAliasesCsv()
    assert parser.sniff(src)
    (rows,) = parser.parse(src).tables.values()
    fp8 = rows.filter(rows["alias"] == "neuralmagic/Meta-Llama-3.1-8B-FP8").row(0, named=True)
    assert (fp8["canonical_model"], fp8["precision"], fp8["alias_key"]) == (
        CANONICAL, "fp8", "neuralmagicmetallama318bfp8")
    assert rows.height == 20
