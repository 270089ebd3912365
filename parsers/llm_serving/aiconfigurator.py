"""AIConfigurator's silicon_sample.csv (aiconfigurator/FORMATS.md): one row per deployment
NVIDIA measured on real GPUs ("silicon") to check AIConfigurator's predictions against.

A row states the deployment (system, backend and its version, precision, agg or disagg, the
parallel sizes) and its measured mean TTFT and TPOT in ms. Nothing else is measured: no
throughput, no request counts. The load is in the free-text `silicon_data_source`
('db-dump/2026-04-27; config_id=733; silicon_concurrency=128; measured=2026-04-17T...Z;
workflow_run_id=758; vllm/vllm-openai:v0.19.0-cu130'), and in the id's `_c<N>_`.

GPUs per engine instance are tp x pp x attention-DP (AIConfigurator's own count, which
moe_tp x moe_ep equals). An agg row fills the plain sizes and leaves prefill_*/decode_*
empty; a disagg row the reverse: its GPUs are workers x per-worker GPUs summed over roles.
The CLI's pareto.csv and best_config_topn.csv are predictions, not measurements: their
headers lack the silicon_* columns and this parser never takes them.
"""

from __future__ import annotations

import re
from datetime import datetime

from parsers.base import CsvLine, FormatError, Parsed, RowProblem, SourceFile, csv_records
from parsers.llm_serving.common import RUNS, Run, RunError, lower_text, parsed, text
from parsers.numbers import NumberError, number, whole_number
from schemas.llm_serving import TABLES
from schemas.spec import Table

TOOL = "aiconfigurator"
_REQUIRED = ("system", "backend", "mode", "isl", "osl", "silicon_ttft_ms", "silicon_tpot_ms")
_ROLES = ("prefill", "decode")
_SIZES = ("batch_size", "tp_size", "pp_size", "attention_dp_size", "moe_tp_size",
          "moe_ep_size")
_MODES = {"agg": "aggregated", "disagg": "disaggregated"}
_CONCURRENCY_IN_ID = re.compile(r"_c(\d+)_")
# Columns read into the record; the rest (gemm/moe quant modes, ...) go to extra as written
_READ = {"silicon_data_source", "backend", "backend_version", "model_path", "system",
         "precision", "mode", "isl", "osl", "silicon_ttft_ms", "silicon_tpot_ms",
         "tp_size", "pp_size", "attention_dp_size", "moe_ep_size"}


class AiconfiguratorSiliconCsv:
    format = "aiconfigurator_silicon_csv"
    version = 1
    tables: tuple[Table, ...] = TABLES

    def sniff(self, src: SourceFile) -> bool:
        first = src.head(2048).lstrip("\ufeff").split("\n", 1)[0]
        return "silicon_ttft_ms" in first and "silicon_tpot_ms" in first

    def parse(self, src: SourceFile) -> Parsed:
        records = csv_records(src.text().lstrip("\ufeff"))
        header = next(records, None)
        if header is None:
            raise FormatError("empty file: no header")
        missing = [c for c in _REQUIRED if c not in header.cells]
        if missing:
            raise FormatError(f"header lacks {', '.join(missing)}: not a silicon_sample.csv")
        runs: list[Run] = []
        problems: list[RowProblem] = []
        for index, line in enumerate(records, 1):
            try:
                runs.append(_run(_cells(header, line), index, line.number))
            except (RunError, NumberError) as exc:
                problems.append(RowProblem(f"line {line.number}", str(exc), RUNS))
        return parsed(runs, problems, tool=TOOL, export_kind="csv", single=False)


def _cells(header: CsvLine, line: CsvLine) -> dict[str, str]:
    if len(line.cells) != len(header.cells):
        raise RunError(f"{len(line.cells)} cells where the header has {len(header.cells)}")
    return dict(zip(header.cells, line.cells, strict=True))


def _run(row: dict[str, str], index: int, line: int) -> Run:
    mode = _MODES.get(row["mode"].lower())
    if mode is None:
        raise RunError(f"mode {row['mode']!r} is neither agg nor disagg")
    source = _data_source(row.get("silicon_data_source", ""))
    ttft, tpot = number(row["silicon_ttft_ms"]), number(row["silicon_tpot_ms"])
    if ttft is None or tpot is None:
        raise RunError("no measured silicon_ttft_ms or silicon_tpot_ms")
    values: dict[str, object] = {
        "model": text(row.get("model_path")),
        "gpu_model": text(row["system"]),
        "engine": lower_text(row["backend"]),
        "engine_version": text(row.get("backend_version")),
        "precision": lower_text(row.get("precision")),
        "serving_mode": mode,
        "configured_input_tokens": whole_number(row["isl"]),
        "configured_output_tokens": whole_number(row["osl"]),
        "run_timestamp_local": _measured_at(source.get("measured")),
        **_load(row, source),
        **(_roles(row) if mode == "disaggregated" else _single(row)),
    }
    run = Run(index, values, {"ttft": {"mean": ttft}, "tpot": {"mean": tpot}}, line=line)
    run.extra = {**{k: v for k, v in row.items() if k not in _READ and v},
                 **{f"silicon_{k}": v for k, v in source.items()
                    if k not in ("silicon_concurrency", "measured")},
                 "latency": "measured (silicon), mean"}
    return run


def _data_source(value: str) -> dict[str, str]:
    """'db-dump/2026-04-27; config_id=733; ...; vllm/vllm-openai:v0.19.0-cu130' as
    {'source': 'db-dump/2026-04-27', 'config_id': '733', ..., 'image': 'vllm/...'}:
    the parts without '=' are the dump (first) and the container image (the others)."""
    found: dict[str, str] = {}
    for position, part in enumerate(p.strip() for p in value.split(";")):
        if not part:
            continue
        key, equals, rest = part.partition("=")
        if equals:
            found[key.strip()] = rest.strip()
        else:
            found["source" if position == 0 else "image"] = part
    return found


def _measured_at(value: str | None) -> datetime | None:
    """'2026-04-17T00:00:00.000Z' as a zone-less UTC time."""
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).replace(tzinfo=None)
    except ValueError:
        return None


def _load(row: dict[str, str], source: dict[str, str]) -> dict[str, object]:
    """The measured concurrency: silicon_concurrency of the data source, else the id's c<N>
    (an agg row's batch_size is the same number; a disagg row's is per worker)."""
    stated = source.get("silicon_concurrency")
    if stated:
        return {"max_concurrency": whole_number(stated), "load_source": "file"}
    named = _CONCURRENCY_IN_ID.search(row.get("id", ""))
    if named:
        return {"max_concurrency": int(named[1]), "load_source": "file: id"}
    return {"max_concurrency": None, "load_source": None}


def _sizes(row: dict[str, str], prefix: str = "") -> dict[str, int | None]:
    return {size: whole_number(row.get(f"{prefix}{size}")) for size in _SIZES}


def _gpus_per_instance(sizes: dict[str, int | None]) -> int | None:
    tp = sizes["tp_size"]
    if tp is None:
        return None
    return tp * (sizes["pp_size"] or 1) * (sizes["attention_dp_size"] or 1)


def _dp_attention(size: int | None) -> bool | None:
    return None if size is None else size > 1


def _single(row: dict[str, str]) -> dict[str, object]:
    sizes = _sizes(row)
    return {"tensor_parallel": sizes["tp_size"], "pipeline_parallel": sizes["pp_size"],
            "data_parallel": sizes["attention_dp_size"],
            "attention_data_parallel": _dp_attention(sizes["attention_dp_size"]),
            "expert_parallel": sizes["moe_ep_size"], "gpus": _gpus_per_instance(sizes)}


def _roles(row: dict[str, str]) -> dict[str, object]:
    """A disaggregated row: each role's workers and GPUs; a size both roles share fills
    the plain column (each role's own stays in extra, as written)."""
    by_role = {role: _sizes(row, f"{role}_") for role in _ROLES}
    workers = {role: whole_number(row.get(f"{role}_num_workers")) for role in _ROLES}
    gpus: dict[str, int | None] = {}
    for role in _ROLES:
        per_worker, count = _gpus_per_instance(by_role[role]), workers[role]
        gpus[role] = count * per_worker if count is not None and per_worker is not None \
            else None

    def shared(size: str) -> int | None:
        prefill, decode = by_role["prefill"][size], by_role["decode"][size]
        return prefill if prefill == decode else None

    total = gpus["prefill"] + gpus["decode"] \
        if gpus["prefill"] is not None and gpus["decode"] is not None else None
    replicas = workers["prefill"] + workers["decode"] \
        if workers["prefill"] is not None and workers["decode"] is not None else None
    return {"tensor_parallel": shared("tp_size"), "pipeline_parallel": shared("pp_size"),
            "data_parallel": shared("attention_dp_size"),
            "attention_data_parallel": _dp_attention(shared("attention_dp_size")),
            "expert_parallel": shared("moe_ep_size"),
            "prefill_workers": workers["prefill"], "decode_workers": workers["decode"],
            "prefill_gpus": gpus["prefill"], "decode_gpus": gpus["decode"],
            "gpus": total, "replicas": replicas}
