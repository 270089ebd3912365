"""The Hydra records beside a DLIO run (overrides.yaml, hydra.yaml, config.yaml) as the run's
own labels: each label with the record it came from, records that disagree, records that
cannot be read. Hand-written bytes, the fixture run's records, and the corpus overrides."""

from __future__ import annotations

import pytest

from parsers.mlperf_storage.hydra import (
    CONFIG,
    HYDRA,
    OVERRIDES,
    SIDECAR_FILES,
    SIDECAR_FOLDERS,
    HydraContext,
    RecordConflict,
    run_context,
)
from tests.conftest import corpus_path
from tests.fixtures import FIXTURES, UNET

CORPUS_OVERRIDES = ("mlperf_storage/mlcommons__storage_results_v1.0/Closed/DDN/results/"
                    "AI400X2T_24x14TiB_nvme_8xNDR200_18clients/unet3d-h100/runs/run1/c008/"
                    "configs/overrides.yaml")
OVERRIDES_YAML = b"""\
- workload=unet3d_h100
- ++workload.workflow.generate_data=False
- ++workload.reader.read_threads=16
"""
HYDRA_YAML = b"""\
hydra:
  run:
    dir: results/run1
  overrides:
    hydra:
    - hydra.mode=RUN
    task:
    - workload=unet3d_h100
    - ++workload.reader.read_threads=16
  runtime:
    version: 1.3.2
    choices:
      workload: unet3d_h100
      hydra/launcher: basic
"""
CONFIG_YAML = b"""\
workload:
  model: unet3d
  framework: pytorch
  workflow:
    generate_data: false
    train: true
  reader:
    read_threads: 16
  metric:
    au: 0.9
"""
CONFIG_DLIO2 = b"""\
workload:
  model:
    name: unet3d
    type: cnn
    model_size: 499153191
  metric:
    au: 0.9
"""
RECORDS = {OVERRIDES: OVERRIDES_YAML, HYDRA: HYDRA_YAML, CONFIG: CONFIG_YAML}


def context(**records: bytes | None) -> HydraContext:
    given = {**RECORDS, **{f"{name}.yaml": data for name, data in records.items()}}
    return run_context(*(given[name] for name in SIDECAR_FILES))


def labels(found: HydraContext) -> tuple:
    return found.workload, found.model, found.accelerator, found.au_threshold_pct


# ---- the records as DLIO writes them --------------------------------------------------------

def test_the_records_are_named_in_precedence_order_for_the_ingestion_that_finds_them():
    assert SIDECAR_FILES == ("overrides.yaml", "hydra.yaml", "config.yaml")
    assert {"configs", ".hydra"} <= set(SIDECAR_FOLDERS)


def test_all_three_records_agree():
    found = context()
    assert labels(found) == ("unet3d_h100", "unet3d", "h100", 90.0)
    assert found.sources == {"workload": OVERRIDES, "model": OVERRIDES,
                             "accelerator": OVERRIDES, "au_threshold_pct": CONFIG}
    assert (found.conflicts, found.problems) == ((), ())


@pytest.mark.parametrize("missing, expected, sources", [
    ("overrides", ("unet3d_h100", "unet3d", "h100", 90.0),
     {"workload": HYDRA, "model": HYDRA, "accelerator": HYDRA, "au_threshold_pct": CONFIG}),
    ("hydra", ("unet3d_h100", "unet3d", "h100", 90.0),
     {"workload": OVERRIDES, "model": OVERRIDES, "accelerator": OVERRIDES,
      "au_threshold_pct": CONFIG}),
    ("config", ("unet3d_h100", "unet3d", "h100", None),
     {"workload": OVERRIDES, "model": OVERRIDES, "accelerator": OVERRIDES}),
])
def test_each_record_missing(missing, expected, sources):
    found = context(**{missing: None})
    assert (labels(found), found.sources, found.problems) == (expected, sources, ())


def test_config_alone_gives_the_model_and_threshold_but_no_accelerator():
    found = context(overrides=None, hydra=None)
    assert labels(found) == (None, "unet3d", None, 90.0)
    assert found.sources == {"model": CONFIG, "au_threshold_pct": CONFIG}


def test_no_records_at_all():
    assert run_context(None, None, None) == HydraContext()


@pytest.mark.parametrize("config", [CONFIG_YAML, CONFIG_DLIO2])
def test_v1_text_model_and_dlio2_mapping_model(config):
    found = context(overrides=None, hydra=None, config=config)
    assert (found.model, found.au_threshold_pct, found.problems) == ("unet3d", 90.0, ())


def test_the_fixture_run_records():
    folder = FIXTURES / UNET / "run1/host01/configs"
    found = run_context(*((folder / name).read_bytes() for name in SIDECAR_FILES))
    assert labels(found) == ("unet3d_h100", "unet3d", "h100", 90.0)
    assert (found.conflicts, found.problems) == ((), ())


def test_the_corpus_overrides():
    found = run_context(corpus_path(CORPUS_OVERRIDES).read_bytes(), None, None)
    assert labels(found) == ("unet3d_h100", "unet3d", "h100", None)
    assert set(found.sources.values()) == {OVERRIDES}
    assert found.problems == ()


# ---- workload names -------------------------------------------------------------------------

@pytest.mark.parametrize("workload, model, accelerator", [
    ("unet3d_h100", "unet3d", "h100"),
    ("resnet50_a100", "resnet50", "a100"),
    ("cosmoflow_h100", "cosmoflow", "h100"),
    ("unet3d_b200", "unet3d", "b200"),  # the v3.0 round
    ("bert_v100", "bert", "v100"),
    ("unet3d_a100_s3", "unet3d", "a100"),  # storage variants after the accelerator
    ("unet3d_h100_adlsgen2", "unet3d", "h100"),
    ("UNet3D_H100", "unet3d", "h100"),
    ("cosmoflow", "cosmoflow", None),  # DLIO's own workload configs
    ("llama3_8b", None, None),  # a model size is not an accelerator
    ("default", None, None),
])
def test_model_and_accelerator_from_the_workload_name(workload, model, accelerator):
    found = run_context(f"- workload={workload}\n".encode(), None, None)
    assert (found.workload, found.model, found.accelerator) == (workload, model, accelerator)


def test_an_explicit_model_override_beats_the_workload_name():
    found = run_context(b"- workload=unet3d_h100\n- ++workload.model.name=UNet3D-v2\n",
                        None, None)
    assert (found.model, found.accelerator) == ("unet3d-v2", "h100")


def test_hydra_choices_name_the_composed_workload():
    hydra = b"hydra:\n  runtime:\n    choices:\n      workload: resnet50_a100\n"
    found = run_context(None, hydra, None)
    assert labels(found)[:3] == ("resnet50_a100", "resnet50", "a100")
    assert found.sources["accelerator"] == HYDRA


def test_an_au_threshold_override_wins_over_the_composed_config():
    found = context(overrides=OVERRIDES_YAML + b"- ++workload.metric.au=0.7\n")
    assert found.au_threshold_pct == 70.0
    assert found.sources["au_threshold_pct"] == OVERRIDES
    assert found.conflicts == (RecordConflict("au_threshold_pct", 70.0, OVERRIDES, 90.0,
                                              CONFIG),)


def test_empty_overrides_as_dlio_tests_write_them():
    found = context(overrides=b"[]")
    assert (found.sources["workload"], found.problems) == (HYDRA, ())


# ---- records that disagree ------------------------------------------------------------------

def test_overrides_and_config_disagree_about_the_model():
    found = context(config=CONFIG_YAML.replace(b"model: unet3d", b"model: resnet50"))
    assert found.model == "unet3d"
    assert found.conflicts == (RecordConflict("model", "unet3d", OVERRIDES, "resnet50",
                                              CONFIG),)
    assert found.problems == ()


def test_overrides_and_hydra_disagree_about_the_workload():
    found = context(hydra=HYDRA_YAML.replace(b"unet3d_h100", b"unet3d_a100"))
    assert (found.workload, found.accelerator) == ("unet3d_h100", "h100")
    assert set(found.conflicts) == {
        RecordConflict("workload", "unet3d_h100", OVERRIDES, "unet3d_a100", HYDRA),
        RecordConflict("accelerator", "h100", OVERRIDES, "a100", HYDRA)}


# ---- records that cannot be read ------------------------------------------------------------

def test_malformed_yaml_is_a_problem_and_the_other_records_still_count():
    found = context(overrides=b"- workload=unet3d_h100\n- [broken\n")
    assert labels(found) == ("unet3d_h100", "unet3d", "h100", 90.0)
    assert found.sources["workload"] == HYDRA
    (problem,) = found.problems
    assert problem.startswith("overrides.yaml: not valid YAML")


@pytest.mark.parametrize("record, data, problem", [
    ("hydra", b"- hydra\n- runtime\n", "hydra.yaml: expected a mapping at the top, found a list"),
    ("config", b"[1, 2]\n", "config.yaml: expected a mapping at the top, found a list"),
    ("overrides", b"workload: unet3d_h100\n",
     "overrides.yaml: expected a list of overrides (key=value), found a mapping"),
    ("hydra", b"hydra: [run, job]\n", "hydra.yaml: 'hydra' is a list, not a mapping"),
    ("config", b"model: unet3d\n", "config.yaml: no 'workload' key at the top"),
    ("config", b"", "config.yaml: empty document"),
    ("config", b"workload:\n  model: [unet3d]\n",
     "config.yaml: workload.model is ['unet3d'], not a model name"),
    ("config", b"workload:\n  metric:\n    au: 90\n",
     "config.yaml: workload.metric.au is 90, not a fraction in (0, 1]"),
    ("overrides", b"- workload=unet3d_h100\n- ++workload.metric.au=high\n",
     "overrides.yaml: workload.metric.au is 'high', not a fraction in (0, 1]"),
    ("overrides", b"- workload=unet3d_h100\n- {read_threads: 16}\n",
     "overrides.yaml: item 2 is {'read_threads': 16}, not a key=value override"),
    ("hydra", b"hydra:\n  runtime:\n    choices:\n      workload: [a]\n",
     "hydra.yaml: hydra.runtime.choices.workload is ['a'], not a workload name"),
    ("overrides", b"- workload=unet3d h100\n",
     "overrides.yaml: workload is 'unet3d h100', not a workload name"),
])
def test_a_record_of_the_wrong_shape_is_a_problem(record, data, problem):
    found = context(**{record: data})
    assert found.problems == (problem,)
    assert found.workload == "unet3d_h100"  # from the records that could be read


@pytest.mark.parametrize("data", [
    b"\xff\xfe\x00garbage",  # not UTF-8
    b"a: &a [x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
    b"c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
    b"e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n",
    b"[" * 5000 + b"]" * 5000,  # nesting
    b"workload:\n  metric:\n    au: " + b"9" * 5000 + b"\n",  # a huge integer
    b"\x00\x05\x16\x07\x00\x02\x00\x00Mac OS X        ",  # an AppleDouble copy
    b"--- !!python/object:os.system [echo]\n",
])
def test_hostile_bytes_in_any_record_never_raise(data):
    for record in ("overrides", "hydra", "config"):
        found = context(**{record: data})
        assert len(found.problems) == 1 and found.problems[0].startswith(f"{record}.yaml: ")
        assert found.workload == "unet3d_h100"
