"""The LLM deployment plan's cost, power and uncertainty: the arithmetic by hand, the ranking
by GPUs or by cost, the reference data, and `sizing plan` on the sample warehouse."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from parsers.base import SourceFile
from parsers.reference.inference_csv import GpuPricesCsv, GpusCsv
from pipelines.cli import main
from samples import llm_serving
from samples.gpu_reference import PRICES
from schemas.context import REFERENCE_GPU_PRICES
from store.store import Store, connect
from tests.conftest import query
from tests.test_llm_serving_tables import SLO, built
from transforms.history.noise import Spread
from transforms.llm.costing import (
    Price,
    average_power,
    combined,
    cost_usd_per_million_output_tokens,
    cost_usd_per_month,
    energy_kwh_per_month,
    gpu_range,
    margin_pct,
    servers,
    spread_of,
)
from transforms.llm.deployment import Frontier, option
from transforms.llm.deployment_inputs import spreads
from transforms.llm.deployment_plan import (
    BY_COST,
    BY_GPUS,
    Known,
    costed,
    describe,
    gpus_with_range,
    loses_because,
    ranked,
)

# ---- the arithmetic, by hand -----------------------------------------------------------------


def test_cost_per_month_and_per_million_tokens():
    # 16 GPUs x $2.50 x 730 h = $29,200; 10,000 tokens/s x 3,600 x 730 = 26,280 million
    assert cost_usd_per_month(16, 2.5) == pytest.approx(29_200)
    assert cost_usd_per_million_output_tokens(29_200, 10_000) == pytest.approx(29_200 / 26_280)
    assert cost_usd_per_million_output_tokens(29_200, 0) is None


def test_servers_and_energy():
    assert servers(17, 8) == 3 and servers(16, 8) == 2
    assert energy_kwh_per_month(5_600) == pytest.approx(4_088)  # 5.6 kW x 730 h
    assert energy_kwh_per_month(None) is None


def test_power_measured_before_nameplate():
    # 0.5 J per token x 10,000 tokens/s = 5,000 W, whatever the GPU count
    measured = average_power(10_000, 16, 0.5, 700)
    assert (measured.watts, measured.source) == (pytest.approx(5_000), "measured")
    nameplate = average_power(10_000, 16, None, 700)  # 16 x 700 W
    assert (nameplate.watts, nameplate.source) == (11_200, "nameplate")
    neither = average_power(10_000, 16, None, None)
    assert neither.watts is None and neither.source is None
    assert "no GPU power log" in (neither.reason or "")


def test_the_spread_of_repeated_runs():
    # mean 100, sample stdev 10: CV 10 %
    assert spread_of([90.0, 100.0, 110.0]) == Spread(pytest.approx(10.0), 3)
    assert spread_of([100.0]) == Spread(None, 1)
    # two points: the larger CV with the fewer runs; any point measured once: unknown
    assert combined([Spread(4.0, 5), Spread(8.0, 3)]) == Spread(8.0, 3)
    assert combined([Spread(4.0, 5), Spread(None, 1)]) == Spread(None, 1)


def test_margin_from_cv_and_runs():
    # 3 x 8 % / sqrt(4) = 12 %; 3 x 0.5 / 2 = 0.75 < the 2 % floor; once: 5 %; extrapolated x2
    assert margin_pct(Spread(8.0, 4), False)[0] == pytest.approx(12.0)
    assert margin_pct(Spread(0.5, 4), False)[0] == pytest.approx(2.0)
    assert margin_pct(Spread(None, 1), False) == (5.0, "+/-5 % (measured once: default)")
    assert margin_pct(Spread(8.0, 4), True)[0] == pytest.approx(24.0)


def test_low_and_high_gpus_from_the_margin():
    # 10,000 tokens/s at 625 per GPU: 16 GPUs; +12 %: 700 -> 14.3 -> 15; -12 %: 550 -> 18.2 -> 19
    assert gpu_range(10_000, 625, 1, 12.0) == (15, 19)
    # replicas of 2 GPUs (1,250 tokens/s): 1,400 -> 7.1 -> 8 replicas; 1,100 -> 9.1 -> 10
    assert gpu_range(10_000, 625, 2, 12.0) == (16, 20)
    assert gpu_range(10_000, 625, 1, 100.0) == (8, None)  # 1,250 -> 8; nil throughput: no top


# ---- configurations, costed and ranked -------------------------------------------------------

def frontier(name: str, gpu: str, per_gpu: float, gpus_per_replica: int = 1) -> Frontier:
    """Two measured points: (20 tokens/s per user, per_gpu) and (50, per_gpu / 2)."""
    return Frontier(name, "ISL 1024 OSL 256", None, gpus_per_replica, None, None, 2,
                    ((20.0, per_gpu), (50.0, per_gpu / 2)), gpu,
                    ((f"{name}/c64.json", 1), (f"{name}/c8.json", 1)))


H100 = frontier("tp1-h100", "H100-80GB", 2_000.0)
A100 = frontier("tp1-a100", "A100-80GB", 1_200.0)
PRICED = Known(
    joules_per_output_token={("tp1-h100/c64.json", 1): 0.4},
    spreads={("tp1-h100/c64.json", 1): Spread(8.0, 4)},
    nameplate_power_w={"H100-80GB": 700.0},
    prices={"H100-80GB": [Price("H100-80GB", "cloud", 6.0, "quote", "2026-11-01"),
                          Price("H100-80GB", "owned", 2.0)],
            "A100-80GB": [Price("A100-80GB", "cloud", 3.0)]})


def test_a_costed_configuration():
    # 10,000 tokens/s at 20 per user: measured 2,000 per GPU -> 5 GPUs, 1 server of 8;
    # CV 8 % of 4 runs: +/-12 % -> 2,240: 4.5 -> 5; 1,760: 5.7 -> 6
    c = costed(option(H100, 10_000, 20.0), 10_000, 8, PRICED, None)
    assert (c.option.gpus, c.gpus_low, c.gpus_high, c.servers) == (5, 5, 6, 1)
    assert gpus_with_range(c) == "5 GPUs (5-6)"
    # measured: 0.4 J x 10,000 tokens/s = 4 kW, 2,920 kWh a month
    assert (c.power.watts, c.power.source) == (pytest.approx(4_000), "measured")
    assert c.energy_kwh_per_month == pytest.approx(2_920)
    # the first class listed: 5 x $6 x 730 = $21,900; / 26,280 million tokens = $0.833
    assert c.price is not None and c.price.provider_class == "cloud"
    assert c.cost_usd_per_month == pytest.approx(21_900)
    assert c.cost_usd_per_million_output_tokens == pytest.approx(21_900 / 26_280)
    assert c.source_files == ("tp1-h100/c64.json",)
    owned = costed(option(H100, 10_000, 20.0), 10_000, 8, PRICED, "owned")
    assert owned.cost_usd_per_month == pytest.approx(5 * 2.0 * 730)


def test_nameplate_power_where_no_energy_joins():
    # A100's runs have no energy and gpus.csv no power: neither; between the points: the
    # spread of both used, none repeated -> the default 5 %
    c = costed(option(A100, 10_000, 35.0), 10_000, 8, PRICED, None)
    assert c.option.estimate is not None and c.option.estimate.how == "interpolated"
    assert c.power.watts is None and c.margin_pct == 5.0
    assert c.source_files == ("tp1-a100/c64.json", "tp1-a100/c8.json")
    no_energy = Known({}, {}, {"H100-80GB": 700.0}, {})
    h = costed(option(H100, 10_000, 20.0), 10_000, 8, no_energy, None)
    assert (h.power.watts, h.power.source) == (3_500, "nameplate")  # 5 x 700 W
    assert h.cost_usd_per_month is None and "no price" in (h.cost_reason or "")


def test_optimize_cost_picks_the_cheaper_configuration():
    # H100: 10,000 / 2,000 = 5 GPUs x $6 x 730 = $21,900
    # A100: 10,000 / 1,200 = 8.3 -> 9 GPUs x $3 x 730 = $19,710
    options = [costed(option(f, 10_000, 20.0), 10_000, 8, PRICED, "cloud") for f in (H100, A100)]
    by_gpus, by_cost = ranked(options, BY_GPUS), ranked(options, BY_COST)
    assert [c.option.frontier.configuration for c in by_gpus] == ["tp1-h100", "tp1-a100"]
    assert [c.option.frontier.configuration for c in by_cost] == ["tp1-a100", "tp1-h100"]
    assert loses_because(by_cost[1], by_cost[0], BY_COST) == \
        "$2,190 more a month despite 4 fewer GPUs"
    assert loses_because(by_gpus[1], by_gpus[0], BY_GPUS) == "4 more GPUs"
    lines = describe(by_cost, BY_COST, 8, across_gpus=True)
    # A100 measured once: +/-5 % -> 1,260: 7.9 -> 8; 1,140: 8.8 -> 9
    assert lines[0].startswith("Deployment (cheapest): A100-80GB tp1-a100: 9 GPUs (8-9), "
                               "2 servers of 8")
    assert lines[1] == ("runner-up: H100-80GB tp1-h100: 5 GPUs (5-6), $21,900 a month; loses: "
                        "$2,190 more a month despite 4 fewer GPUs")


def test_an_extrapolated_range_is_wider_and_flagged():
    # 60 per user, beyond the last point (50): along the last segment, 1,000 - 1,000/30 x 10
    c = costed(option(H100, 10_000, 60.0), 10_000, 8, PRICED, None)
    assert c.option.estimate is not None and c.option.estimate.how == "extrapolated"
    assert c.margin_pct == 10.0  # the default 5 %, doubled
    assert "extrapolated" in gpus_with_range(c)


# ---- the reference data ----------------------------------------------------------------------

def test_prices_load_and_a_bad_or_repeated_row_is_held_back():
    text = ("gpu_model,provider_class,usd_per_gpu_hour,source,as_of\n"
            "H100-80GB,cloud,6.88,quote,2026-11-01\n"
            "H100-80GB,cloud,5.00,another quote,2026-11-02\n"
            "A100-80GB,cloud,n/a,,\n")
    parsed = GpuPricesCsv().parse(SourceFile("reference/gpu_prices.csv", text.encode()))
    rows = parsed.tables[REFERENCE_GPU_PRICES.key].rows(named=True)
    assert [(r["gpu_model"], r["usd_per_gpu_hour"], r["source_line"]) for r in rows] == [
        ("H100-80GB", 6.88, 2), ("A100-80GB", None, 4)]  # None: the schema holds it back
    assert [p.reason for p in parsed.problems] == [
        "H100-80GB cloud is priced again (first on line 2): keep one price per GPU model and "
        "provider class"]


def test_gpus_csv_without_power_still_loads():
    src = SourceFile("reference/gpus.csv", b"gpu_model,memory_gb\nH100-80GB,80\n")
    assert GpusCsv().sniff(src)
    (row,) = GpusCsv().parse(src).tables["raw.reference_gpus"].rows(named=True)
    assert (row["memory_gb"], row["nameplate_power_w"]) == (80.0, None)


# ---- on the sample warehouse -----------------------------------------------------------------

@pytest.fixture
def sample(ingested_sample_template) -> Path:
    return ingested_sample_template.warehouse  # `plan` and the queries only read it


def plan(warehouse: Path, *options: str) -> list[str]:
    return ["plan", "--warehouse", str(warehouse), "--gpu-model", "H100-80GB",
            "--gpus-per-server", "8", "--chat-slo", "mlperf-interactive",
            "--demand", "meta-llama/Llama-3.1-8B-Instruct=2000users", *options]


def test_sizing_plan_says_the_deployment_cost_power_and_range(sample, capsys):
    assert main(plan(sample)) == 0
    out = capsys.readouterr().out.splitlines()
    genai = "inference/h100-bm-01/genai_perf/c64/profile_export_genai_perf.json"
    per_gpu = json.loads((sample.parents[1] / "raw" / genai).read_text())[
        "output_token_throughput"]["avg"]
    # 2,000 users x 300 tokens/min / 60 = 10,000 tokens/s over 6,070 per GPU: 2 GPUs; the
    # run measured once: +/-5 % -> 6,373: 1.6 -> 2; 5,766: 1.7 -> 2
    assert round(per_gpu) == 6070
    deployment = out.index(next(x for x in out if x.startswith("Deployment")))
    assert out[deployment:deployment + 5] == [
        "Deployment (fewest GPUs): (1 GPU): 2 GPUs (2 at either end of the range), 1 server "
        "of 8; measured at 6,070 tokens/s per GPU from 1 of 4 frontier points (4 measured); "
        "range +/-5 % (measured once: default)",
        # the vLLM sweep: 10,000 / 2,193 per GPU -> 5 GPUs x $6.88 x 730 = $25,112
        "runner-up: (1 GPU) bf16: 5 GPUs (5 at either end of the range), $25,112 a month; "
        "loses: 3 more GPUs",
        # no power log in the sample: 2 x 700 W (gpus.csv) = 1.4 kW x 730 h = 1,022 kWh
        "power: 1.40 kW average, 1,022 kWh a month (nameplate: 2 x 700 W, an upper bound; "
        "no GPU power log joins the runs used)",
        # 2 x $6.88 x 730 = $10,045; / 26,280 million tokens = $0.382
        "cost: $10,045 a month, $0.382 per million output tokens at hyperscaler-on-demand, "
        f"$6.88/GPU-h ({PRICES[0][3]}; 2026-11-29) (the first class listed for H100-80GB; "
        "--price-class sets another)",
        f"sources: {genai}"]


def test_sizing_plan_prices_another_class(sample, capsys):
    assert main(plan(sample, "--price-class", "owned-3y-amortised")) == 0
    out = capsys.readouterr().out
    # 2 x $1.40 x 730 = $2,044; / 26,280 = $0.0778
    assert "cost: $2,044 a month, $0.0778 per million output tokens at owned-3y-amortised" in out


@pytest.mark.parametrize("options, message", [
    (["--price-class", "neocloud"], "--price-class 'neocloud': unknown provider class (did "
                                    "you mean 'neocloud-on-demand'?)"),
    (["--optimize", "cheap"], "--optimize 'cheap': expected one of gpus, cost"),
])
def test_sizing_plan_refuses_an_unknown_class_or_goal(sample, capsys, options, message):
    assert main(plan(sample, *options)) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_the_deployment_table_ranks_the_scenarios_configurations(sample):
    rows = query(sample, "SELECT rank, configuration, gpus, gpus_low, gpus_high, servers, "
                         "estimate_how, spread_samples, power_w, power_source, price_class, "
                         "round(cost_usd_per_month, 1), why_it_loses FROM "
                         "sizing.llm_deployment_plan WHERE workload = 'lengths not stated' "
                         "ORDER BY rank")
    # the scenario's chat demand: 2,000 users x 300 tokens/min, as on the command line
    assert rows == [
        (1, "(1 GPU)", 2, 2, 2, 1, "measured", 1, 1_400.0, "nameplate",
         "hyperscaler-on-demand", 10_044.8, None),
        (2, "(1 GPU) bf16", 5, 5, 5, 1, "measured", 1, 3_500.0, "nameplate",
         "hyperscaler-on-demand", 25_112.0, "3 more GPUs")]


def test_repeated_runs_at_one_concurrency_give_the_spread(tmp_path: Path):
    files = llm_serving.llm_serving_files()
    again = llm_serving.vllm_result(64)
    again["output_throughput"] *= 1.04  # the same level run again, 4 % faster
    files[f"{llm_serving.VLLM_DIR}/vllm-concurrency64-again.json"] = json.dumps(again)
    warehouse = built(tmp_path, {**files, **SLO})
    store = Store(connect(warehouse, read_only=True))
    try:
        (model,) = {r[0] for r in query(warehouse, "SELECT canonical_model FROM "
                                                   "core.llm_serving_runs")}
        found = spreads(store, model)
    finally:
        store.con.close()
    # v and 1.04 v: mean 1.02 v, sample stdev 0.04 v / sqrt(2): CV 2.773 %, n 2; every
    # other level ran once
    c64 = [s for run, s in found.items() if "concurrency64" in run[0]]
    assert [s.samples for s in c64] == [2, 2]
    assert c64[0].cv_pct == pytest.approx(100 * 0.04 / math.sqrt(2) / 1.02, rel=1e-4)
    assert sorted({s.samples for run, s in found.items() if "concurrency64" not in run[0]}) \
        == [1]
    # the margin: 3 x 2.773 / sqrt(2) = 5.88 %
    assert margin_pct(c64[0], False)[0] == pytest.approx(5.882, abs=1e-3)
