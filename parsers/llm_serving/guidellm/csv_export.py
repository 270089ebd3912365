"""GuideLLM's CSV export (`--output-path benchmarks.csv`), one row per benchmark, read back
into the report's dictionaries so that `report` maps it as it maps the JSON.

- <= 0.3 (`output.py` save_csv): one header row. `Type, Run Id, Id, Name, Start Time,
  End Time, Duration`, then per status `<Status> Requests` and, per metric,
  `<Status> <Metric name> mean|median|std dev|[min, 0.1, 1, 5, 10, 25, 75, 90, 95, 99,
  max]` (the metric's snake_case name with spaces: 'Time to first token ms'), then `Args`,
  `Worker`, `Request Loader`, `Extras` as JSON.
- 0.4+ (`outputs/csv.py`): three header rows, one per level of [group, field, units]. A
  distribution is [group, '<Status> <units>', Mean|Median|Std Dev|Percentiles]; a status
  whose values sum to 0 is left out. `Run Info` Profile/Backend and `Runtime Info`
  Metadata/Arguments are JSON; the strategy's rate or streams come from the profile.
Percentiles are one cell: the list [min, p0.1, p1, p5, p10, p25, p75, p90, p95, p99, max].
"""

from __future__ import annotations

import csv
import json
import re

from parsers.base import (
    CsvLine,
    FormatError,
    Parsed,
    RowProblem,
    SourceFile,
    csv_records,
    number,
)
from parsers.llm_serving.common import RUNS
from parsers.llm_serving.guidellm.report import runs_of_report
from parsers.numbers import NumberError, shown
from schemas.llm_serving import TABLES
from schemas.spec import Table

_LIST = ("min", "p001", "p01", "p05", "p10", "p25", "p75", "p90", "p95", "p99", "max")
_LIST_HEADER = "[min, 0.1, 1, 5, 10, 25, 75, 90, 95, 99, max]"
_STATUSES = ("Successful", "Errored", "Incomplete", "Total")
_SINGLE_FIRST = "Type,Run Id,Id,Name,Start Time,End Time,Duration,"
_SINGLE_STAT = re.compile(rf"^({'|'.join(_STATUSES)}) (.+) (mean|median|std dev|\[min, .*\])$")
_SINGLE_TOTAL = re.compile(rf"^({'|'.join(_STATUSES)}) Requests$")
_SINGLE_JSON = {"Args": "args", "Worker": "worker", "Request Loader": "request_loader",
                "Extras": "extras"}
_STAT_KEY = {"mean": "mean", "median": "median", "std dev": "std_dev"}
# 0.4+ (group, units) -> metric
_MULTI_METRIC = {
    ("Request Latency", "Sec"): "request_latency",
    ("Streaming Iterations", "Count"): "request_streaming_iterations_count",
    ("Time to First Token", "ms"): "time_to_first_token_ms",
    ("Time per Output Token", "ms"): "time_per_output_token_ms",
    ("Inter Token Latency", "ms"): "inter_token_latency_ms",
    ("Server Throughput", "Requests/Sec"): "requests_per_second",
    ("Server Throughput", "Concurrency"): "request_concurrency",
    ("Token Metrics", "Input Tokens"): "prompt_token_count",
    ("Token Metrics", "Output Tokens"): "output_token_count",
    ("Token Metrics", "Total Tokens"): "total_token_count",
    ("Token Throughput", "Input Tokens/Sec"): "prompt_tokens_per_second",
    ("Token Throughput", "Output Tokens/Sec"): "output_tokens_per_second",
    ("Token Throughput", "Total Tokens/Sec"): "tokens_per_second",
}
_MULTI_STATUS = re.compile(r"^(Successful|Incomplete|Errored) (.+)$")
_MULTI_STAT = {"Mean": "mean", "Median": "median", "Std Dev": "std_dev"}


class GuidellmCsv:
    format = "guidellm_csv"
    version = 1
    tables: tuple[Table, ...] = TABLES

    def sniff(self, src: SourceFile) -> bool:
        lines = src.head(8192).lstrip("\ufeff").splitlines()
        if not lines:
            return False
        return lines[0].startswith(_SINGLE_FIRST) or (
            len(lines) > 1 and lines[0].startswith("Run Info,")
            and lines[1].startswith("Run ID,"))

    def parse(self, src: SourceFile) -> Parsed:
        try:
            records = list(csv_records(src.text()))
        except csv.Error as exc:
            raise FormatError(f"not readable as CSV: {exc}") from None
        if not records:
            raise FormatError("empty CSV")
        problems: list[RowProblem] = []
        if records[0].cells[0] == "Type":
            report = _single_header(records, problems)
        else:
            report = _multirow_header(records, problems)
        return runs_of_report(report, "csv", problems)


# ---- <= 0.3: one header row ------------------------------------------------------------------

def _single_header(records: list[CsvLine], problems: list[RowProblem]) -> dict:
    header, rows = records[0].cells, records[1:]
    benchmarks = []
    for rec in _rows(rows, len(header), problems):
        bench: dict = {"metrics": {}, "request_totals": {}}
        for name, cell in zip(header, rec.cells, strict=True):
            if name in ("Id", "Run Id"):
                bench["id_" if name == "Id" else "run_id"] = cell
            elif name == "Duration":
                bench["duration"] = _number(rec, name, cell)
            elif name in _SINGLE_JSON:
                bench[_SINGLE_JSON[name]] = _json(rec, name, cell)
            elif stat := _SINGLE_STAT.match(name):
                metric = stat[2].lower().replace(" ", "_")
                dist = bench["metrics"].setdefault(metric, {}).setdefault(stat[1].lower(), {})
                if stat[3].startswith("["):
                    if stat[3] != _LIST_HEADER:
                        raise FormatError(f"column {shown(name)}: the percentile list is "
                                          f"{_LIST_HEADER}, not {shown(stat[3])}")
                    dist.update(_percentile_list(rec, name, cell))
                else:
                    dist[_STAT_KEY[stat[3]]] = _number(rec, name, cell)
            elif total := _SINGLE_TOTAL.match(name):
                bench["request_totals"][total[1].lower()] = _number(rec, name, cell)
        benchmarks.append(bench)
    return {"benchmarks": benchmarks}


# ---- 0.4+: three header rows -----------------------------------------------------------------

def _multirow_header(records: list[CsvLine], problems: list[RowProblem]) -> dict:
    if len(records) < 3:
        raise FormatError("fewer than the three header rows (group, field, units) of a "
                          "GuideLLM CSV")
    width = max(len(r.cells) for r in records[:3])
    columns = list(zip(*(r.cells + [""] * (width - len(r.cells)) for r in records[:3]),
                       strict=True))
    report: dict = {"benchmarks": []}
    for rec in _rows(records[3:], width, problems):
        bench: dict = {"config": {}, "metrics": {"request_totals": {}}}
        for (group, field, unit), cell in zip(columns, rec.cells, strict=True):
            _multirow_cell(report, bench, rec, (group, field, unit), cell)
        config = bench["config"]
        config["strategy"] = _strategy(config.pop("strategy_type", None),
                                       config.get("profile"), config.get("run_index"))
        report["benchmarks"].append(bench)
    return report


def _multirow_cell(report: dict, bench: dict, rec: CsvLine, column: tuple[str, str, str],
                   cell: str) -> None:
    group, field, unit = column
    config, metrics = bench["config"], bench["metrics"]
    where = " / ".join(c for c in column if c)
    if group == "Run Info":
        key = {"Run ID": "run_id", "Run Index": "run_index", "Profile": "profile",
               "Backend": "backend"}.get(field)
        if key == "run_index":
            config[key] = _number(rec, where, cell)
        elif key in ("profile", "backend"):
            config[key] = _json(rec, where, cell)
        elif key:
            config[key] = cell
    elif group == "Benchmark" and field in ("ID", "Strategy"):
        config["id_" if field == "ID" else "strategy_type"] = cell
    elif (group, field) == ("Timings", "Duration"):
        bench["duration"] = _number(rec, where, cell)
    elif group == "Request Counts":
        metrics["request_totals"][field.lower()] = _number(rec, where, cell)
    elif group == "Runtime Info" and field in ("Metadata", "Arguments"):
        value = _json(rec, where, cell)
        key = "metadata" if field == "Metadata" else \
            "config" if isinstance(value, dict) and "spec" in value else "args"
        report.setdefault(key, value)
    elif (status := _MULTI_STATUS.match(field)) and (group, status[2]) in _MULTI_METRIC:
        metric = _MULTI_METRIC[(group, status[2])]
        dist = metrics.setdefault(metric, {}).setdefault(status[1].lower(), {})
        if unit == "Percentiles":
            dist.update(_percentile_list(rec, where, cell))
        elif unit in _MULTI_STAT:
            dist[_MULTI_STAT[unit]] = _number(rec, where, cell)


def _strategy(kind: object, profile: object, run_index: object) -> dict:
    """The benchmark's strategy: the profile's completed strategy at run_index, else its
    type with the profile's streams or rate at that index."""
    profile = profile if isinstance(profile, dict) else {}
    index = int(run_index) if isinstance(run_index, float) and run_index.is_integer() else 0
    done = profile.get("completed_strategies")
    if isinstance(done, list) and index < len(done) and isinstance(done[index], dict):
        return done[index]
    strategy: dict = {"type_": kind}
    for key in ("streams", "rate"):
        value = profile.get(key)
        if isinstance(value, list):
            value = value[index] if index < len(value) else None
        strategy[key] = value
    return strategy


# ---- cells -----------------------------------------------------------------------------------

def _rows(records: list[CsvLine], width: int, problems: list[RowProblem]) -> list[CsvLine]:
    """Rows as wide as the header. GuideLLM takes the header from the first benchmark and
    leaves out a status whose values sum to 0, so another benchmark's row (one where no
    request completed) can be shorter or longer: its cells cannot be placed."""
    if not records:
        raise FormatError("no benchmark row below the header")
    fitting = []
    for rec in records:
        if len(rec.cells) == width:
            fitting.append(rec)
        else:
            problems.append(RowProblem(f"line {rec.number}", f"{len(rec.cells)} cells for "
                                       f"{width} header columns: GuideLLM writes the first "
                                       "benchmark's header, and this benchmark has other "
                                       "columns (a status with no values is left out)", RUNS))
    return fitting


def _number(rec: CsvLine, where: str, cell: str) -> float | None:
    try:
        return number(cell)
    except NumberError:
        raise FormatError(f"line {rec.number}: {where}: {shown(cell)} is not a "
                          "number") from None


def _json(rec: CsvLine, where: str, cell: str) -> object:
    try:
        return json.loads(cell) if cell else None
    except json.JSONDecodeError:
        raise FormatError(f"line {rec.number}: {where}: not the JSON GuideLLM writes there "
                          f"({shown(cell)})") from None


def _percentile_list(rec: CsvLine, where: str, cell: str) -> dict:
    parts = cell.strip().removeprefix("[").removesuffix("]").split(",")
    if len(parts) != len(_LIST):
        raise FormatError(f"line {rec.number}: {where}: {len(parts)} values, not the "
                          f"{len(_LIST)} of {_LIST_HEADER}")
    values = [_number(rec, where, p) for p in parts]
    found: dict = {"min": values[0], "max": values[-1],
                   "percentiles": dict(zip(_LIST[1:-1], values[1:-1], strict=True))}
    return found
