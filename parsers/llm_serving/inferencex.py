"""InferenceX result rows (inferencex/FORMATS.md, "Agg row"): `agg_<RESULT_FILENAME>.json`,
which `utils/process_result.py` writes from one vendored `benchmark_serving.py` result and
the run's environment, and `agg_bmk.json`, the array `collect_results.py` makes of them.

A row states the deployment (hw, framework, precision, spec_decoding, tp/ep/dp_attention,
and from 2026-07 pp, dcp_size, pcp_size; multinode rows prefill_*/decode_* and
num_prefill_gpu/num_decode_gpu) and normalises the measurements:
- latencies: every `*_ms` key of the bench JSON without `_ms`, divided by 1000 (seconds);
  back to ms here. The `*_intvty` keys are 1000 / TPOT (a unit change, not data): not read.
- throughput per GPU: total / GPUs, output / (decode GPUs, else GPUs), input / (prefill
  GPUs, else GPUs), GPUs being tp x pp x pcp_size on one node. Multiplied back here, so
  the run's throughput columns mean what every other tool's do.
- power (rows patched by aggregate_power.py): avg_power_w per GPU and total_gpu_energy_j
  over the benchmark window, trusted only when power_valid is 1.

The file name repeats the deployment (`agg_kimik2.5_1k1k_int4_vllm_tp8-ep1-dpafalse_
disagg-false_spec-mtp_conc4_<runner>.json`). The content wins; where the name says
otherwise the disagreement is a LabelConflict, and what only the name says is taken from it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from parsers.base import LabelConflict, Parsed, RowProblem, SourceFile
from parsers.llm_serving.common import (
    RUNS,
    Run,
    RunError,
    count,
    load_json,
    lower_text,
    objects,
    parsed,
    real,
    scalar,
    seconds_to_ms,
    text,
)
from parsers.numbers import NumberError, to_int
from schemas.llm_serving import TABLES
from schemas.spec import Table

TOOL = "inferencex"
_STAT = re.compile(r"^(mean|median|std|p\d+(?:\.\d+)?)_(ttft|tpot|itl|e2el)$")
_DERIVED = re.compile(r"_intvty$")
# RESULT_FILENAME as benchmark-tmpl.yml builds it, with the 'agg_' process_result.py adds
_NAME = re.compile(
    r"^(?:agg_)?(?P<prefix>.+?)_(?P<isl>\d+)k(?P<osl>\d+)k_(?P<precision>[A-Za-z0-9]+)_"
    r"(?P<framework>[A-Za-z0-9.-]+?)_tp(?P<tp>\d+)-ep(?P<ep>\d+)-dpa(?P<dpa>true|false)_"
    r"disagg-(?P<disagg>true|false)_spec-(?P<spec>[A-Za-z0-9.-]+)_conc(?P<conc>\d+)"
    r"(?:_(?P<runner>.+))?\.json$", re.IGNORECASE)
_ROLES = ("prefill", "decode")
_TOPOLOGY = ("tp", "ep", "pp", "dp_attention", "num_workers", "dcp_size", "pcp_size")
# Keys read into columns (the rest that are scalars go to extra)
_READ = {"hw", "conc", "image", "model", "framework", "precision", "spec_decoding", "disagg",
         "isl", "osl", "tp", "ep", "pp", "dp_attention", "num_prefill_gpu", "num_decode_gpu",
         "tput_per_gpu", "output_tput_per_gpu", "input_tput_per_gpu", "power_valid",
         "avg_power_w", "total_gpu_energy_j", "num_requests_total", "num_requests_successful",
         *(f"{role}_{key}" for role in _ROLES for key in _TOPOLOGY)}
_TOKENS = ('"tput_per_gpu"', '"infmax_model_prefix"')


class InferencexAggJson:
    format = "inferencex_agg_json"
    version = 1
    tables: tuple[Table, ...] = TABLES

    def sniff(self, src: SourceFile) -> bool:
        head = src.head(4096).lstrip()
        return head.startswith(("{", "[")) and '"hw"' in head \
            and any(token in head for token in _TOKENS)

    def parse(self, src: SourceFile) -> Parsed:
        data = load_json(src)
        items, collected = objects(data, "an InferenceX agg row or an agg_bmk.json list "
                                         "of them")
        named = {} if collected else _from_name(src.name)
        runs: list[Run] = []
        problems: list[RowProblem] = []
        conflicts: list[LabelConflict] = []
        for index, item in enumerate(items, 1):
            where = f"[{index - 1}]" if collected else "file"
            try:
                if not isinstance(item, dict):
                    raise RunError(f"a JSON {type(item).__name__}, not an agg row")
                run = _run(item, index)
                conflicts += _reconcile(run, named, where if collected else None)
                runs.append(run)
            except (RunError, NumberError) as exc:
                problems.append(RowProblem(where, str(exc), RUNS))
        result = parsed(runs, problems, tool=TOOL, export_kind="json", single=not collected)
        result.conflicts += conflicts
        return result


# ---- the row ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Gpus:
    total: int | None
    prefill: int | None
    decode: int | None


def _run(row: dict, index: int) -> Run:
    if row.get("scenario_type") not in (None, "fixed-seq-len", "single_turn"):
        raise RunError(f"scenario_type {row['scenario_type']!r}: an AgentX (agentic) row, "
                       "whose nested request and server metrics are not read; fixed "
                       "sequence-length rows are")
    stats = _latencies(row)
    if not stats and "tput_per_gpu" not in row:
        raise RunError("no InferenceX measurements: no tput_per_gpu and no latency statistic")
    multinode = any(f"{role}_tp" in row for role in _ROLES)
    gpus = _gpus(row, multinode)
    completed = count(row, "num_requests_successful")
    values: dict[str, object] = {
        "model": text(row.get("model")),
        "gpu_model": text(row.get("hw")),
        "engine": lower_text(row.get("framework")),
        "engine_version": text(row.get("image")),
        "precision": lower_text(row.get("precision")),
        "speculative_decoding": _speculation(row.get("spec_decoding")),
        "serving_mode": _mode(row.get("disagg")),
        "max_concurrency": count(row, "conc"),
        "load_source": "file",
        "configured_input_tokens": count(row, "isl"),
        "configured_output_tokens": count(row, "osl"),
        "num_prompts": count(row, "num_requests_total"),
        "completed": completed,
        "gpus": gpus.total,
        "prefill_gpus": gpus.prefill,
        "decode_gpus": gpus.decode,
        **(_roles(row) if multinode else _single_node(row)),
        **_throughput(row, gpus),
        **_power(row),
    }
    run = Run(index, values, stats)
    run.extra = {k: v for k, v in row.items() if k not in _READ and not _STAT.match(k)
                 and not _DERIVED.search(k) and scalar(v)}
    return run


def _latencies(row: dict) -> dict[str, dict[str, float]]:
    by_metric: dict[str, dict[str, object]] = {}
    for key, value in row.items():
        match = _STAT.match(key)
        if match:
            by_metric.setdefault(match[2], {})[match[1]] = value
    return {metric: ms for metric, stats in by_metric.items()
            if (ms := seconds_to_ms(stats, metric))}


def _flag(value: object, key: str) -> bool | None:
    """dp_attention is the string 'true'/'false' (an environment variable), disagg a JSON
    boolean; either may be either."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise RunError(f"{key} {value!r} is neither true nor false")


def _mode(disagg: object) -> str | None:
    flag = _flag(disagg, "disagg")
    return None if flag is None else "disaggregated" if flag else "aggregated"


def _speculation(value: object) -> str | None:
    method = lower_text(value)
    return None if method in (None, "none", "off", "false") else method


def _single_node(row: dict) -> dict[str, object]:
    return {"tensor_parallel": count(row, "tp"), "expert_parallel": count(row, "ep"),
            "pipeline_parallel": count(row, "pp"),
            "attention_data_parallel": _flag(row.get("dp_attention"), "dp_attention")}


def _roles(row: dict) -> dict[str, object]:
    """A disaggregated row's sizes: the value both roles share (each role's own stays in
    extra, as written), and each role's workers."""
    def shared(key: str) -> object:
        found = {str(row.get(f"{role}_{key}")) for role in _ROLES}
        return row.get(f"prefill_{key}") if len(found) == 1 else None

    return {"tensor_parallel": to_int(shared("tp"), "tp"),
            "expert_parallel": to_int(shared("ep"), "ep"),
            "pipeline_parallel": to_int(shared("pp"), "pp"),
            "attention_data_parallel": _flag(shared("dp_attention"), "dp_attention"),
            "prefill_workers": count(row, "prefill_num_workers"),
            "decode_workers": count(row, "decode_num_workers")}


def _gpus(row: dict, multinode: bool) -> _Gpus:
    """The GPUs process_result.py divided by: prefill + decode GPUs on several nodes,
    tp x pp x pcp_size on one (pp and pcp_size are 1 in rows that predate them)."""
    if multinode:
        prefill, decode = count(row, "num_prefill_gpu"), count(row, "num_decode_gpu")
        total = prefill + decode if prefill is not None and decode is not None else None
        return _Gpus(total or None, prefill, decode)
    tp = count(row, "tp")
    if not tp:
        return _Gpus(None, None, None)
    return _Gpus(tp * (count(row, "pp") or 1) * (count(row, "pcp_size") or 1), None, None)


def _throughput(row: dict, gpus: _Gpus) -> dict[str, object]:
    def times(key: str, divisor: int | None) -> float | None:
        per_gpu = real(row, key)
        return per_gpu * divisor if per_gpu is not None and divisor else None

    return {
        "total_token_throughput_tokens_per_s": times("tput_per_gpu", gpus.total),
        "output_throughput_tokens_per_s": times("output_tput_per_gpu",
                                                gpus.decode or gpus.total),
        "input_throughput_tokens_per_s": times("input_tput_per_gpu",
                                               gpus.prefill or gpus.total),
    }


def _power(row: dict) -> dict[str, object]:
    """The deployment's power, only where aggregate_power.py validated the telemetry
    (power_valid 1; rows patched before power_valid existed carry avg_power_w alone)."""
    valid = row.get("power_valid")
    if valid is not None and to_int(valid, "power_valid") != 1:
        return {}
    return {"gpu_power_w_mean": real(row, "avg_power_w"),
            "energy_j": real(row, "total_gpu_energy_j")}


# ---- the file name ---------------------------------------------------------------------------

def _from_name(name: str) -> dict[str, object]:
    """What RESULT_FILENAME says, in the row's own keys and values ({} for another name)."""
    match = _NAME.match(name)
    if not match:
        return {}
    return {"isl": int(match["isl"]) * 1024, "osl": int(match["osl"]) * 1024,
            "precision": match["precision"].lower(), "framework": match["framework"].lower(),
            "tp": int(match["tp"]), "ep": int(match["ep"]),
            "dp_attention": match["dpa"].lower() == "true",
            "disagg": match["disagg"].lower() == "true",
            "spec_decoding": _speculation(match["spec"]), "conc": int(match["conc"]),
            "infmax_model_prefix": match["prefix"], "runner": match["runner"]}


# name key -> (column, how the row's value reads as the name's)
_NAME_COLUMNS = {
    "isl": "configured_input_tokens", "osl": "configured_output_tokens",
    "precision": "precision", "framework": "engine", "tp": "tensor_parallel",
    "ep": "expert_parallel", "dp_attention": "attention_data_parallel",
    "spec_decoding": "speculative_decoding", "conc": "max_concurrency",
}


_ROLE_SIZES = ("tensor_parallel", "expert_parallel", "attention_data_parallel")


def _reconcile(run: Run, named: dict[str, object], location: str | None
               ) -> list[LabelConflict]:
    """Fill what only the name says; record where name and content disagree. A multinode
    row's sizes are per role: the name's single tp/ep/dpa neither fills nor contradicts
    them."""
    conflicts = []
    per_role = run.values.get("prefill_gpus") is not None
    for key, column in _NAME_COLUMNS.items():
        if key not in named or (per_role and column in _ROLE_SIZES):
            continue
        said, found = named[key], run.values.get(column)
        if found is None and said is not None:
            run.values[column] = said
            run.extra[f"{column}_source"] = "file name"
        elif found != said and not (found is None and said is None):
            conflicts.append(LabelConflict(column, str(found), f"file:{key}", str(said),
                                           "path:file name", location))
    disagg = named.get("disagg")
    if disagg is not None and run.values.get("serving_mode") is None:
        run.values["serving_mode"] = "disaggregated" if disagg else "aggregated"
    elif disagg is not None and (run.values["serving_mode"] == "disaggregated") != disagg:
        conflicts.append(LabelConflict("serving_mode", str(run.values["serving_mode"]),
                                       "file:disagg", f"disagg-{str(disagg).lower()}",
                                       "path:file name", location))
    for key in ("infmax_model_prefix", "runner"):
        if named.get(key) is not None:
            run.extra.setdefault(key, named[key])
    return conflicts
