"""One policy for numbers (schemas/domains.py): every numeric column of every table has a
domain; validate() holds back, row by row and with a reason naming column, value and bound,
what is not finite, out of its domain or does not fit its type; derived steps never raise on
rows that passed the schemas, however extreme."""

from __future__ import annotations

import math
import random
from datetime import datetime

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reports import docs
from schemas.domains import NAMES, NUMERIC, UNITS, Domain, domain_of, number
from schemas.invariants import SumAtMost, columns_named
from schemas.spec import Column, Table
from schemas.storage import STORAGE_MEASUREMENTS
from schemas.training import TRAINING_RUNS
from schemas.validate import schema_of, screen, validate
from store.store import Store, connect
from transforms.collectives.tables import build_collective_bandwidth, build_collective_sizing
from transforms.history.tables import build_rule_changes, build_rule_history
from transforms.inference.measurements import build_inference_measurements
from transforms.inference.planner import first_fit_decreasing_groups
from transforms.inference.tables import build_memory, build_optimal, build_plans
from transforms.llm import kv_cache, predictions
from transforms.llm import tables as llm
from transforms.llm.deployment_table import build_deployment_plan
from transforms.llm.energy import build_energy
from transforms.llm.scenario_plan_table import build_scenario_plan
from transforms.mlperf.tables import (
    build_inference_results,
    build_training_results,
    build_training_scores,
)
from transforms.storage.tables import build_storage_measurements, build_storage_sizing
from transforms.training.tables import build_training_runs, build_training_sizing

TABLES = docs.all_tables()  # every table declared in schemas/, each once


def numeric_columns() -> list[tuple[Table, Column]]:
    return [(t, c) for t in TABLES for c in t.all_columns if c.dtype in NUMERIC]


# --- every numeric column has a domain ----------------------------------------------------

def test_every_numeric_column_of_every_table_has_a_domain():
    missing = [f"{t.key}.{c.name}" for t, c in numeric_columns() if domain_of(c) is None]
    assert not missing, f"numeric columns without a domain (schemas/domains.py): {missing}"
    assert len(numeric_columns()) > 400


def test_text_flag_and_time_columns_have_none():
    others = [c for t in TABLES for c in t.all_columns if c.dtype not in NUMERIC]
    assert others and all(domain_of(c) is None for c in others)


def test_every_name_rule_names_a_column():
    names = {c.name for _, c in numeric_columns()}
    assert not set(NAMES) - names, "a rule for a column no table has: remove it"


def test_bounds_of_the_brief():
    by_name = {c.name: domain_of(c) for _, c in numeric_columns()}
    assert by_name["bandwidth_bytes_per_s"] == Domain(
        0, 1e13, "10 TB/s: no single storage target is faster")
    assert by_name["images_per_sec_per_gpu"].hi == 1e7
    assert by_name["latency_p99_ms"].hi == 86_400_000  # a day
    assert by_name["latency_p99_us"].hi == 86_400_000_000
    assert by_name["gpu_memory_gb"].hi == 10_000
    assert by_name["gpu_power_w"].hi in (1e4, 1e6)  # per GPU; summed over GPUs in core
    assert (by_name["gpu_utilization_pct"].lo, by_name["gpu_utilization_pct"].hi) == (0, 100)
    assert (by_name["scaling_efficiency"].lo, by_name["scaling_efficiency"].hi) == (0, 10)
    assert by_name["r_squared"].hi == 1 and by_name["r_squared"].lo is None
    assert domain_of("iodepth") == domain_of("jobs") == NAMES["gpus"]


def test_units_table_is_longest_suffix_first():
    suffixes = [s for s, _, _ in UNITS]
    for i, suffix in enumerate(suffixes):
        assert not any(suffix.endswith(s) for s in suffixes[:i]), suffix


def test_bounds_read_as_people_write_them():
    assert [number(x) for x in (0, 100, 0.5, 1e13, 8.64e7, 2**31 - 1, -100, 1e6)] == [
        "0", "100", "0.5", "1e13", "8.64e7", "2147483647", "-100", "1e6"]


def test_docs_show_each_domain():
    text = docs.render()
    assert "| `bandwidth_bytes_per_s` | DOUBLE | bytes/s | 0 to 1e13 |" in text
    assert "10 TB/s: no single storage target is faster" in text


# --- validate() holds back the row, keeps the others -------------------------------------------

def storage_rows(**columns: list) -> pl.DataFrame:
    """Rows of core.storage_measurements, valid but for the columns given."""
    n = len(next(iter(columns.values())))
    base = {"tool": "fio", "source_format": "fio_json", "storage_system": "nfs",
            "access": "sequential", "direction": "read", "clones": 1, "status": "ok",
            "is_aggregate": False, "counts_as_capability": True, "source_file": "f.json",
            "file_sha256": "0" * 64}
    frame = pl.DataFrame({k: [v] * n for k, v in base.items()})
    return frame.with_columns(pl.Series(k, v, strict=False) for k, v in columns.items()) \
        .with_columns(source_line=pl.int_range(1, n + 1))


def reasons(problems) -> dict[str, str]:
    return {p.location: p.reason for p in problems}


def test_non_finite_and_out_of_domain_values_are_held_back_with_the_bound():
    rows = storage_rows(bandwidth_bytes_per_s=[1e9, float("nan"), float("inf"), float("-inf"),
                                               -1.0, 1e308, 1e13, 0.0])
    good, problems = validate(STORAGE_MEASUREMENTS, rows)
    assert good["bandwidth_bytes_per_s"].to_list() == [1e9, 1e13, 0.0]
    assert reasons(problems) == {
        "line 2": "bandwidth_bytes_per_s=nan fails finite",
        "line 3": "bandwidth_bytes_per_s=inf fails finite",
        "line 4": "bandwidth_bytes_per_s=-inf fails finite",
        "line 5": "bandwidth_bytes_per_s=-1.0 fails greater_than_or_equal_to(0)",
        "line 6": "bandwidth_bytes_per_s=1e+308 fails at most 1e13 (10 TB/s: no single "
                  "storage target is faster)",
    }
    assert all(p.table == "core.storage_measurements" and p.source_file == "f.json"
               for p in problems)


def test_a_value_that_does_not_fit_its_type_is_a_row_problem_not_a_file_failure():
    good, problems = validate(STORAGE_MEASUREMENTS, storage_rows(jobs=[4.0, 1e30, float("nan")]))
    assert good["jobs"].to_list() == [4]
    assert reasons(problems) == {"line 2": "jobs=1e+30 does not fit BIGINT",
                                 "line 3": "jobs=nan does not fit BIGINT"}
    assert '"jobs": 1e+30' in problems[0].row_values  # what the file said, not the NULL

    digits = "9" * 5000
    good, problems = validate(STORAGE_MEASUREMENTS,
                              storage_rows(jobs=["8", digits], iops=["abc", "12.5"]))
    assert good.height == 0
    assert reasons(problems) == {
        "line 1": "iops=abc does not fit DOUBLE",
        "line 2": f"jobs={'9' * 40}... (5000 characters) does not fit BIGINT",
    }


def test_every_failing_column_of_a_row_is_named_once():
    rows = storage_rows(bandwidth_bytes_per_s=[float("nan")], jobs=[-3], iops=[2e9],
                        status=["done"])
    [problem] = validate(STORAGE_MEASUREMENTS, rows)[1]
    assert problem.reason.split("; ") == [
        "jobs=-3 fails greater_than_or_equal_to(0)",
        "bandwidth_bytes_per_s=nan fails finite",
        "iops=2000000000.0 fails at most 1e9 (10^9 per second: 1,000x the fastest inference "
        "server or storage array)",
        "status=done fails isin(('ok', 'failed'))",
    ]


def test_the_schema_alone_checks_domains_with_named_checks():
    checks = {c.name: [k.to_pandera().error for k in c.all_checks()]
              for c in STORAGE_MEASUREMENTS.columns}
    assert checks["bandwidth_bytes_per_s"] == [
        "greater_than_or_equal_to(0)", "finite",
        "at most 1e13 (10 TB/s: no single storage target is faster)"]
    assert checks["jobs"][-1].startswith("at most 1e6 (")  # no 'finite' for an integer
    with pytest.raises(Exception, match="finite"):
        STORAGE_MEASUREMENTS.pandera_schema().validate(
            STORAGE_MEASUREMENTS.conform(storage_rows(iops=[float("nan")])))


# --- properties: never an exception; kept means finite and in domain -------------------------

ANY_VALUE = st.one_of(
    st.none(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-2**63, max_value=2**63 - 1).map(float),
    st.sampled_from([0.0, -0.0, 1e13, 1e13 + 1e-3, 5e-324, 1e308, -1e-300, 100.0, 100.5]),
)
CASES = [(STORAGE_MEASUREMENTS, "bandwidth_bytes_per_s"), (STORAGE_MEASUREMENTS, "jobs"),
         (STORAGE_MEASUREMENTS, "latency_p99_us"), (TRAINING_RUNS, "images_per_sec"),
         (TRAINING_RUNS, "gpus"), (TRAINING_RUNS, "step_drift_pct")]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=st.sampled_from(CASES), values=st.lists(ANY_VALUE, min_size=1, max_size=12),
       as_text=st.booleans())
def test_a_value_is_kept_finite_and_in_domain_or_held_back_never_raised(case, values, as_text):
    table, name = case
    given_values = [None if v is None else repr(v) if as_text else v for v in values]
    base = storage_rows(jobs=[1] * len(values)) if table is STORAGE_MEASUREMENTS else \
        pl.DataFrame({"source_format": ["tf_cnn_log"] * len(values), "status": "ok",
                      "source_file": "f.log", "file_sha256": "0" * 64,
                      "source_line": list(range(1, len(values) + 1))})
    rows = base.with_columns(pl.Series(name, given_values, strict=False))
    good, problems = validate(table, rows)
    assert good.height + len(problems) == len(values)
    domain = domain_of(next(c for c in table.all_columns if c.name == name))
    for value in good[name].drop_nulls().to_list():
        assert math.isfinite(value) and domain.contains(value)
    for problem in problems:
        assert problem.reason.startswith(f"{name}=")


@settings(max_examples=40, deadline=None)
@given(values=st.lists(st.tuples(ANY_VALUE, ANY_VALUE, st.sampled_from(["ok", "bad", None])),
                       min_size=1, max_size=10))
def test_the_screen_finds_exactly_the_rows_pandera_fails(values):
    bandwidth, latency, status = zip(*values, strict=True)
    rows = STORAGE_MEASUREMENTS.conform(
        storage_rows(bandwidth_bytes_per_s=list(bandwidth), latency_p99_us=list(latency),
                     status=list(status)), strict=False)
    try:
        schema_of(STORAGE_MEASUREMENTS).validate(rows, lazy=True)
        failing = set()
    except Exception as exc:  # noqa: BLE001 - pandera's SchemaErrors
        failing = set(exc.failure_cases["index"].to_list())
    suspects, _ = screen(STORAGE_MEASUREMENTS, rows)
    assert set(suspects) == failing


# --- derived steps never raise on rows that passed the schemas ---------------------------------

TEXT = {"status": "ok", "direction": "read", "access": "sequential", "mode": "training",
        "phase": "benchmark", "name": "average_examples_per_sec", "precision": "fp16",
        "virtualization": "bare-metal", "format_variant": "normal", "model": "m_7b",
        "gpu_model": "G", "dataset": "imagenet", "storage_system": "S", "source_file": "f",
        "path": "f", "export_dir": "e", "log_dir": "d", "file_sha256": "0" * 64,
        "slo_percentile": "p95", "percentile": "p95", "scenario": "sc", "format": "x",
        "concurrency": None}
FALSE_FLAGS = {"is_verify_readback", "loss_not_finite", "interrupted", "is_aggregate"}


def _value(column: Column, kind: str, rng: random.Random):
    domain = domain_of(column)
    integer = column.dtype is pl.Int64
    lo = domain.lo if domain.lo is not None else -1e12
    hi = domain.hi if domain.hi is not None else (2**62 if integer else 1e300)
    tiny = 1 if integer else 5e-324
    if kind == "random":
        kind = rng.choice(["lo", "hi", "tiny", "one"])
    value = {"lo": lo, "hi": hi, "tiny": max(lo, min(hi, tiny)), "one": max(lo, min(hi, 1))}
    return int(value[kind]) if integer else float(value[kind])


SECOND_FILE = {"source_file": "g", "path": "g", "direction": "write", "virtualization": "vm"}


def edge_rows(table: Table, kind: str, rng: random.Random, text: dict) -> pl.DataFrame:
    """One row of `table` whose numbers are at `kind` of their domains and whose text
    joins the other tables' rows."""
    row: dict = {}
    for c in table.all_columns:
        allowed = [k.statistics["allowed_values"] for k in c.checks
                   if "allowed_values" in (k.statistics or {})]
        if c.dtype in NUMERIC:
            row[c.name] = _value(c, kind, rng)
        elif c.dtype is pl.Boolean:
            row[c.name] = c.name not in FALSE_FLAGS
        elif c.dtype is pl.Utf8:
            row[c.name] = text.get(c.name, next(iter(allowed[0])) if allowed else
                                   "{}" if "JSON" in c.description else "x")
        else:
            row[c.name] = datetime(2026, 1, 1)
    frame = table.conform(pl.DataFrame([row], schema=table.polars_schema))
    good, problems = validate(table, frame)
    if problems:  # a bound of the column's own (clones > 0, run_index >= 1): take 1 there
        frame = frame.with_columns(pl.lit(1).cast(c.dtype).alias(c.name)
                                   for c in table.all_columns
                                   if c.dtype in NUMERIC and c.name in problems[0].reason)
        good, problems = validate(table, frame)
    if problems:  # values at the edges that an invariant forbids together: make them agree
        frame = frame.with_columns(pl.lit(v).cast(table.polars_schema[c]).alias(c)
                                   for c, v in _agreeing(table).items())
        good, problems = validate(table, frame)
    assert not problems, problems
    return good


def _agreeing(table: Table) -> dict[str, int]:
    """Values of the invariants' columns that hold every invariant: equal values are in
    order and above 0; parts of 0 add up to at most a total of 1."""
    values: dict[str, int] = {}
    for invariant in table.invariants:
        values |= dict.fromkeys(columns_named(invariant), 1)
        if isinstance(invariant, SumAtMost):
            values |= dict.fromkeys(invariant.parts, 0)
    return {c: v for c, v in values.items() if c in table.polars_schema}


@pytest.mark.parametrize(("kind", "seed"), [("lo", 0), ("hi", 0), ("tiny", 0), ("random", 2),
                                            ("random", 3)])
def test_derived_steps_never_raise_at_the_edges_of_the_domains(tmp_path, kind, seed):
    rng = random.Random(seed)
    store = Store(connect(tmp_path / "edges.duckdb"))
    try:
        raw = [t for t in TABLES if t.schema == "raw"]
        store.ensure(raw)
        for table in raw:
            if table.name not in ("quarantine", "derived_status", "ingestion_runs"):
                for text in (TEXT, {**TEXT, **SECOND_FILE}):  # read on bare metal, write in a VM
                    store.insert(table, edge_rows(table, kind, rng, text))
        build_inference_measurements(store, "t")
        build_storage_measurements(store, "t")
        build_training_runs(store, "t")
        build_training_sizing(store, "t")
        build_storage_sizing(store)
        build_optimal(store, 0.95)
        build_memory(store)
        build_plans(store, 0.95)
        llm.build_runs(store, "t")
        llm.build_optimal(store, 0.95)
        llm.build_plans(store)
        llm.build_totals(store)
        llm.build_frontier(store)
        predictions.build_predictions(store)
        predictions.build_error_points(store)
        predictions.build_error(store)
        kv_cache.build_kv_cache(store, kv_bound_tolerance=0.25)
        build_energy(store)
        build_deployment_plan(store)
        build_collective_bandwidth(store, "t")
        build_collective_sizing(store, "t")
        build_scenario_plan(store)
        build_inference_results(store, "t")
        build_training_results(store, "t")
        build_training_scores(store, "t")
        build_rule_history(store, "t")
        build_rule_changes(store, "t")
        for table in (t for t in TABLES if t.schema in ("core", "sizing")):
            floats = [c.name for c in table.all_columns if c.dtype is pl.Float64]
            values = store.query(f"SELECT * FROM {table.qualified}")
            for name in floats:
                assert values[name].drop_nulls().is_finite().all(), (table.key, name)
    finally:
        store.con.close()


def test_a_plan_of_a_billion_instances_packs_in_no_time():
    assert first_fit_decreasing_groups([(13.0, 10**9), (50.0, 10**9), (0.0, 5)], 80.0) \
        == 10**9
