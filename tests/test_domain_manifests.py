"""The domains' manifests (assets/<domain>/__init__.py, listed by pipelines/domains.py) hold
to the code they describe: a manifest that names a missing format, folder, section or
table, or code that no manifest owns, fails here."""

from __future__ import annotations

from collections import Counter

import dagster as dg
import pytest

from assets.domain import Domain
from assets.keys import table_key
from parsers.registry import BY_FORMAT
from pipelines import graph_doc
from pipelines.definitions import defs
from pipelines.domains import DOMAINS, REPORT_READS, REPORT_SECTIONS
from reports.sections import domain_section
from tests.conftest import PROJECT


def test_every_parser_format_is_owned_by_exactly_one_domain():
    owned = Counter(f for d in DOMAINS for f in d.formats)
    assert {f for f, n in owned.items() if n > 1} == set()
    assert set(owned) == set(BY_FORMAT)
    assert owned["nccl_tests_text"] == 1
    assert "nccl_tests_text" in next(d for d in DOMAINS if d.name == "collectives").formats


def test_every_domain_is_an_asset_package_and_its_code_exists():
    names = [d.name for d in DOMAINS]
    assert len(set(names)) == len(names)
    assert sorted(p.name for p in (PROJECT / "assets").iterdir()
                  if (p / "__init__.py").exists()) == sorted(names)
    for domain in DOMAINS:
        for path in domain.code:
            assert (PROJECT / path).exists(), f"{domain.name}: no {path}"


def test_every_report_section_resolves_in_the_manifests_order():
    functions = [domain_section(spec).__name__ for spec in REPORT_SECTIONS]
    assert functions == ["inference", "llm_serving", "prediction_error", "training",
                         "collectives", "storage", "mlperf"]


def test_a_section_that_does_not_exist_is_named():
    with pytest.raises(LookupError, match="no report section 'inference:nothing'"):
        domain_section("inference:nothing")
    with pytest.raises(LookupError, match="no report section 'nowhere:x'"):
        domain_section("nowhere:x")


def test_the_report_depends_on_what_the_manifests_say_it_reads():
    graph = defs.resolve_asset_graph()
    report = graph.get(dg.AssetKey(["reports", "sizing_report"]))
    assert set(report.parent_keys) == {table_key(t) for t in REPORT_READS}
    # the ledger's three tables, the chat SLOs and the model aliases (the chat charts find a
    # demand's frontier by its canonical name), every core table but MLPerf Storage's
    # checkpointing (its sizing table is what the report shows) and the predictions (their
    # error is), every sizing table
    derived = {k.to_user_string() for k in graph.get_all_asset_keys()
               if k.path[0] in ("core", "sizing")}
    assert {k.to_user_string() for k in report.parent_keys} == {
        "raw/ingested_files", "raw/quarantine", "raw/ingestion_runs", "raw/llm_slo_policies",
        "raw/reference_model_aliases",
        *derived} - {"core/mlperf_checkpointing", "core/llm_predictions"}
    assert len(REPORT_READS) == 40


def test_every_asset_belongs_to_one_domain():
    owner = Counter(k for d in DOMAINS for k in graph_doc.domain_keys(d))
    graph_keys = set(defs.resolve_asset_graph().get_all_asset_keys())
    assert max(owner.values()) == 1
    # the report asset is made by the composition root from every manifest
    assert graph_keys - set(owner) == {dg.AssetKey(["reports", "sizing_report"])}


def test_a_domain_code_version_digests_its_code():
    one = Domain("one", "x", code=("transforms/llm",))
    other = Domain("other", "x", code=("transforms/storage",))
    assert len(one.code_version) == 16 and one.code_version != other.code_version
    assert one.package == "assets.one"
