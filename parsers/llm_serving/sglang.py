"""SGLang `python -m sglang.bench_serving --output-file X.jsonl` (llm_serving/FORMATS.md
section 2): one JSON object per line, appended run after run, written by json.dumps with
allow_nan, so `"request_rate": Infinity` is a bare token (Python's json reads it).

Each line carries the server's /get_server_info dump (`server_info`): the model, the SGLang
version, tp/dp sizes; a prefill/decode disaggregated server has `prefill` and `decode`
lists of such dumps instead. Statistics are `{mean,median,std,p<N>}_{ttft,tpot,itl,
e2e_latency}_ms`; `concurrency` is measured (sum of latencies / duration).
"""

from __future__ import annotations

import json
import re

from parsers.base import FormatError, Parsed, RowProblem, SourceFile
from parsers.llm_serving.common import (
    RUNS,
    Run,
    RunError,
    count,
    mean_per_request,
    parsed,
    real,
    request_rate,
    scalar,
    text,
)
from parsers.numbers import NumberError, loads, to_float, to_int
from schemas.llm_serving import TABLES
from schemas.spec import Table

_STAT = re.compile(r"^(mean|median|std|p\d+(?:\.\d+)?)_(ttft|tpot|itl|e2e_latency)_ms$")
_METRIC = {"e2e_latency": "e2el"}
_READ = {"tag", "backend", "dataset_name", "request_rate", "max_concurrency",
         "sharegpt_output_len", "random_input_len", "random_output_len", "server_info",
         "duration", "completed", "total_input_tokens", "total_output_tokens",
         "request_throughput", "input_throughput", "output_throughput", "total_throughput",
         "concurrency"}
_SERVER_SCALARS = ("version", "tp_size", "dp_size", "served_model_name", "model_path",
                   "tokenizer_path")


class SglangBenchJsonl:
    format = "sglang_bench_jsonl"
    version = 2  # 2: a parallel size below 1 is left out
    tables: tuple[Table, ...] = TABLES

    def sniff(self, src: SourceFile) -> bool:
        head = src.head(4096).lstrip()
        if not head.startswith("{") or '"model_id"' in head:
            return False
        return '"backend"' in head and ('"server_info"' in head or '"dataset_name"' in head) \
            and src.might_contain('_e2e_latency_ms"')

    def parse(self, src: SourceFile) -> Parsed:
        runs: list[Run] = []
        problems: list[RowProblem] = []
        index = 0
        for number, line in enumerate(src.text().splitlines(), 1):
            if not line.strip():
                continue
            index += 1
            try:
                runs.append(_run(_line(line), index, number))
            except (RunError, NumberError) as exc:
                problems.append(RowProblem(f"line {number}", str(exc), RUNS))
        if index == 0:
            raise FormatError("empty file: no JSON line")
        return parsed(runs, problems, tool="sglang", export_kind="jsonl", single=index == 1)


def _line(line: str) -> dict:
    try:
        data = loads(line)
    except json.JSONDecodeError as exc:
        raise RunError(f"not a JSON object: {exc.msg} at column {exc.colno} (a truncated, "
                       "interleaved or damaged line)") from None
    if not isinstance(data, dict):
        raise RunError(f"a JSON {type(data).__name__}, not a bench_serving result object")
    return data


def _run(data: dict, index: int, line: int) -> Run:
    stats: dict[str, dict[str, float]] = {}
    for key, value in data.items():
        match = _STAT.match(key)
        if match:
            number = to_float(value, key)
            if number is not None:
                stats.setdefault(_METRIC.get(match[2], match[2]), {})[match[1]] = number
    if not stats and "completed" not in data:
        raise RunError("no bench_serving measurements: no *_ms statistic and no 'completed'")
    rate, unlimited = request_rate(data.get("request_rate"))
    completed = count(data, "completed")
    totals = count(data, "total_input_tokens"), count(data, "total_output_tokens")
    random = str(data.get("dataset_name") or "").startswith("random")
    values: dict[str, object] = {
        "label": text(data.get("tag")),
        "backend": text(data.get("backend")),
        "dataset": text(data.get("dataset_name")),
        "request_rate_per_s": rate,
        "request_rate_unlimited": unlimited,
        "max_concurrency": count(data, "max_concurrency"),
        "load_source": "file",
        "configured_input_tokens": count(data, "random_input_len") if random else None,
        "configured_output_tokens": count(
            data, "random_output_len" if random else "sharegpt_output_len"),
        "measured_concurrency": real(data, "concurrency"),
        "completed": completed,
        "total_input_tokens": totals[0],
        "total_output_tokens": totals[1],
        "mean_input_tokens": mean_per_request(totals[0], completed),
        "mean_output_tokens": mean_per_request(totals[1], completed),
        "duration_s": real(data, "duration"),
        "request_throughput_per_s": real(data, "request_throughput"),
        "input_throughput_tokens_per_s": real(data, "input_throughput"),
        "output_throughput_tokens_per_s": real(data, "output_throughput"),
        "total_token_throughput_tokens_per_s": real(data, "total_throughput"),
        **_server(data.get("server_info")),
    }
    run = Run(index, values, stats, line=line)
    run.extra = {k: v for k, v in data.items()
                 if k not in _READ and not _STAT.match(k) and scalar(v)}
    return run


def _server(info: object) -> dict[str, object]:
    """Model, version and parallelism from server_info (one dump, or a PD pair)."""
    if not isinstance(info, dict):
        return {}
    if "prefill" in info or "decode" in info:
        roles = {role: _dumps(info.get(role)) for role in ("prefill", "decode")}
        mode = "disaggregated"
    else:
        roles, mode = {"server": [info]}, "aggregated"
    dumps = [d for ds in roles.values() for d in ds]
    if not dumps:
        return {"serving_mode": mode}
    first = dumps[0]
    versions = {role: sorted({str(d["version"]) for d in ds if scalar(d.get("version"))
                              and d.get("version") is not None})
                for role, ds in roles.items()}
    distinct = {v for vs in versions.values() for v in vs}
    if len(distinct) == 1:
        version: str | None = distinct.pop()
    elif distinct:
        version = ";".join(f"{role}={','.join(vs)}" for role, vs in versions.items() if vs)
    else:
        version = None
    return {
        "serving_mode": mode,
        "model": text(first.get("served_model_name")) or text(first.get("model_path")),
        "tokenizer": text(first.get("tokenizer_path")),
        "engine_version": version,
        "tensor_parallel": _agreed(dumps, "tp_size"),
        "data_parallel": _agreed(dumps, "dp_size"),
    }


def _dumps(value: object) -> list[dict]:
    items = value if isinstance(value, list) else [value]
    return [d for d in items if isinstance(d, dict)]


def _agreed(dumps: list[dict], key: str) -> int | None:
    """The value every dump gives, else None (a PD pair may differ); a parallel size below 1
    is no count of GPUs (None)."""
    found = {to_int(d.get(key), key) for d in dumps}
    value = found.pop() if len(found) == 1 else None
    return value if value is None or value >= 1 else None
