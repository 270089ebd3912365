"""LLM serving: output tokens/s per GPU against time to first token for every serving sweep,
the serving rule under each chat SLO policy, and the chat capacity plans with their
arithmetic (which sweep, which SLO, which point)."""

from __future__ import annotations

import altair as alt
import polars as pl

from reports import charts
from reports.chart_cache import memo
from reports.data import has_rows, read, text
from reports.html import Col, Section, details, number, paragraph, table
from reports.sections.llm_energy import energy_per_token
from store.store import Store

RUNS = ("model", "canonical_model", "model_resolved", "gpu_model", "gpus", "precision", "tool",
        "backend", "concurrency", "output_tokens_per_s_per_gpu", "ttft_p99_ms", "tpot_p99_ms",
        "source_file")
OPTIMAL = ("model", "canonical_model", "gpu_model", "gpus", "precision", "tool", "harnesses",
           "load_kind", "slo_policy", "slo_percentile",
           "max_ttft_ms", "max_tpot_ms", "levels_measured", "levels_within_slo",
           "max_load_within_slo", "output_tokens_per_s_per_gpu", "ttft_at_slo_ms",
           "tpot_at_slo_ms", "knee_load", "goodput_per_s", "reason", "source_files")
PLANS = ("scenario", "model", "gpu_model", "slo_policy", "chat_users", "requests_per_s",
         "instances", "gpus", "servers", "explanation", "reason")
REACH = 1.25  # SLO limits beyond this many times the largest TTFT drawn are not drawn
POLICIES = ("name", "percentile", "max_ttft_ms", "max_tpot_ms")
KV = ("model", "gpu_model", "gpus", "tool", "kv_dtype", "context_tokens",
      "measured_knee_concurrency", "kv_bound_concurrency", "agreement", "comparison")
KV_RULE = ("model", "gpu_model", "gpus", "kv_dtype", "kv_bytes_per_token", "weights_gb",
           "kv_cache_gb", "max_tokens_in_cache", "context", "max_concurrent_sequences")
TO_ADD = ("Add vLLM (`vllm bench serve --save-result`), SGLang (bench_serving JSONL), AIPerf "
          "or GenAI-Perf exports of a concurrency sweep under raw/llm_serving/<system>/, with "
          "a run.yaml naming gpu_model and gpus; chat SLO policies go in "
          "raw/reference/llm_slo.yaml.")


def llm_serving(store: Store) -> Section:
    section = Section("llm-serving", "LLM serving: chat capacity within the SLO")
    runs = read(store, "core", "llm_serving_runs", RUNS,
                order_by=["canonical_model", "gpu_model", "tool", "concurrency"])
    if not has_rows(runs):
        return section.no_data("no LLM serving runs (core.llm_serving_runs)", TO_ADD)
    assert runs is not None
    sweeps = runs.filter(pl.col("concurrency").is_not_null()
                         & pl.col("output_tokens_per_s_per_gpu").is_not_null()
                         & pl.col("ttft_p99_ms").is_not_null())
    policies = read(store, "raw", "llm_slo_policies", POLICIES, order_by=["name"])
    limits = [] if policies is None else [
        {"ttft_ms": r["max_ttft_ms"], "label": f"{r['name']}: {r['percentile']} TTFT",
         "policy": r["name"]}
        for r in policies.rows(named=True) if r["percentile"] == "p99"]
    section.add(paragraph(
        "Each point is one load level of a serving sweep (its max concurrency): output tokens "
        "per second per GPU against the 99th-percentile time to first token. Dashed lines are "
        "the TTFT limits of the p99 chat policies; a policy also limits the time per output "
        "token, which the table below applies."))
    # one chart per model whatever each harness called it; each harness its own series
    section.grid([_curve(model, sweeps.filter(pl.col("canonical_model") == model), limits)
                  for model in sorted(set(sweeps["canonical_model"].drop_nulls().to_list()))])
    _unresolved(section, runs)
    optimal = read(store, "sizing", "llm_serving_optimal", OPTIMAL,
                   order_by=["canonical_model", "gpu_model", "tool", "load_kind",
                             "slo_policy"])
    if has_rows(optimal):
        section.add("<h3>Highest load within each chat SLO</h3>", table(optimal, [
            Col("canonical_model", "model"), Col("model", "as written"),
            Col("gpu_model", "GPU"), Col("gpus", "GPUs"),
            Col("precision", format=lambda v: text(v, "")), Col("tool", "sweep"),
            Col("harnesses", "harnesses of the model on this GPU", format=text),
            Col("slo_policy", "SLO policy", format=text),
            Col("max_load_within_slo", "max load within SLO"),
            Col("output_tokens_per_s_per_gpu", "output tokens/s per GPU"),
            Col("ttft_at_slo_ms", "TTFT at SLO (ms)"), Col("tpot_at_slo_ms", "TPOT at SLO (ms)"),
            Col("knee_load", "knee"), Col("goodput_per_s", "goodput (req/s)"),
            Col("reason", "why none", format=lambda v: text(v, ""))]))
    _kv_cache(section, store)
    energy_per_token(section, store)
    _plans(section, store)
    section.add(details("Every serving run (core.llm_serving_runs)", table(runs, [
        Col("model"), Col("gpu_model", "GPU"), Col("gpus", "GPUs"), Col("tool", "sweep"),
        Col("concurrency"), Col("output_tokens_per_s_per_gpu", "output tokens/s per GPU"),
        Col("ttft_p99_ms", "p99 TTFT (ms)"), Col("tpot_p99_ms", "p99 TPOT (ms)"),
        Col("source_file", "evidence (file)", format=lambda v: text(v, ""),
            cls="evidence")])))
    return section


def _unresolved(section: Section, runs: pl.DataFrame) -> None:
    """Names the alias table does not know: their sweeps meet no other spelling's."""
    unknown = sorted(set(runs.filter(~pl.col("model_resolved"))["model"].drop_nulls()
                         .to_list()))
    if unknown:
        section.add(paragraph(
            f"Models not in the alias table ({len(unknown)}): {', '.join(unknown)}. Each is "
            "its own model here; add its spellings to raw/reference/model_aliases.csv "
            "(alias, canonical_model, precision) to join it to another harness's sweeps."))


def _kv_cache(section: Section, store: Store) -> None:
    """Where each sweep saturates against what its KV cache can hold."""
    kv = read(store, "sizing", "kv_cache_capacity", (*KV, "origin"),
              order_by=["model", "gpu_model", "tool"])
    if not has_rows(kv):
        return
    assert kv is not None
    compared = kv.filter(pl.col("agreement").is_not_null())
    section.add("<h3>Saturation against the KV cache</h3>", paragraph(
        "KV bytes per token = 2 x layers x KV heads x head size x bytes per element; the "
        "sequences the cache holds = (GPU memory x utilization - weights - overhead) / KV "
        "bytes per token / sequence length (sizing.kv_cache_capacity, architectures from "
        "raw/reference/llm_models.csv). A knee well below it: compute sets the capacity; "
        "near it: memory does; above it: a smaller KV type, prefix caching or a wrong "
        "label."))
    if has_rows(compared):
        section.add(table(compared, [
            Col("model"), Col("gpu_model", "GPU"), Col("gpus", "GPUs"), Col("tool", "sweep"),
            Col("context_tokens", "tokens per sequence"),
            Col("measured_knee_concurrency", "measured knee"),
            Col("kv_bound_concurrency", "KV-cache bound"), Col("agreement", format=text),
            Col("comparison", "in words", format=lambda v: text(v, ""))]))
    reference = read(store, "sizing", "kv_cache_capacity", (*KV_RULE, "origin"),
                     order_by=["model", "gpu_model", "gpus", "kv_dtype", "context_tokens"])
    if has_rows(reference):
        assert reference is not None
        section.add(details("KV-cache capacity of every model on every GPU", table(
            reference.filter(pl.col("origin") == "reference"), [
                Col("model"), Col("gpu_model", "GPU"), Col("gpus", "GPUs"),
                Col("kv_dtype", "KV type", format=text),
                Col("kv_bytes_per_token", "KV bytes per token"),
                Col("weights_gb", "weights (GB)"), Col("kv_cache_gb", "KV cache (GB)"),
                Col("max_tokens_in_cache", "tokens in cache"),
                Col("context", "sequence length", format=text),
                Col("max_concurrent_sequences", "sequences")])))


def _plans(section: Section, store: Store) -> None:
    plans = read(store, "sizing", "llm_capacity_plan", PLANS,
                 order_by=["scenario", "demand_index"])
    section.add("<h3>Chat capacity plans</h3>")
    if not has_rows(plans):
        section.no_data("no chat demand in a capacity scenario (sizing.llm_capacity_plan)",
                        "Add a demand {model, chat_users} (or {model, requests_per_s}) and a "
                        "chat_slo to a scenario under raw/reference/scenarios/.")
        return
    section.add(table(plans, [
        Col("scenario", format=text), Col("model"), Col("gpu_model", "GPU"),
        Col("slo_policy", "chat SLO", format=text), Col("chat_users", "users"),
        Col("requests_per_s", "requests/s"), Col("instances"), Col("gpus", "GPUs"),
        Col("servers"), Col("explanation", "how", format=lambda v: text(v, "")),
        Col("reason", "not planned because", format=lambda v: text(v, ""))]))


@memo
def _curve(model: str, rows: pl.DataFrame, limits: list[dict]) -> charts.Plot:
    # a series per harness, GPU setup and precision (an FP8 checkpoint is its own curve)
    data = rows.with_columns(sweep=pl.concat_str(
        [pl.col("tool"), pl.lit(" · "), pl.col("gpu_model").fill_null("?"), pl.lit(" x"),
         pl.col("gpus").cast(pl.String).fill_null("?"),
         (pl.lit(" · ") + pl.col("precision")).fill_null("")])).select(
        "sweep", "concurrency", "ttft_p99_ms", "tpot_p99_ms", "output_tokens_per_s_per_gpu")
    tooltip = [alt.Tooltip("sweep:N"), alt.Tooltip("concurrency:Q"),
               alt.Tooltip("ttft_p99_ms:Q", title="p99 TTFT (ms)", format=",.4~r"),
               alt.Tooltip("tpot_p99_ms:Q", title="p99 TPOT (ms)", format=",.4~r"),
               alt.Tooltip("output_tokens_per_s_per_gpu:Q", title="tokens/s per GPU",
                           format=",.4~r")]
    chart = charts.lines(data, alt.X("ttft_p99_ms:Q", title="p99 time to first token (ms)"),
                         alt.Y("output_tokens_per_s_per_gpu:Q",
                               title="output tokens/s per GPU"),
                         "sweep", "sweep", tooltip, order="concurrency")
    # a limit far beyond every level would squeeze the curves into a corner: named instead
    reach = REACH * (data["ttft_p99_ms"].max() or 0.0)  # type: ignore[operator]
    near = [lim for lim in limits if lim["ttft_ms"] is not None and lim["ttft_ms"] <= reach]
    far = ", ".join(f"{lim['policy']} (p99 ≤ {number(lim['ttft_ms'])} ms)" for lim in limits
                    if lim["ttft_ms"] is not None and lim["ttft_ms"] > reach)
    return charts.plot("llm-serving", f"{model}: throughput against time to first token",
                       charts.layers(chart, charts.slo_rules(near, "ttft_ms", "label")),
                       data.height, data["sweep"].n_unique(),
                       caption=f"Every level's TTFT is within {far}, beyond the plot."
                       if far else "")
