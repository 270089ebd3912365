"""LoadGen's `mlperf_log_summary.txt` (mlperf_inference/FORMATS.md section 2): one row of
raw.mlperf_inference_runs per file.

Three blocks headed by 48 '=': 'MLPerf Results Summary', 'Additional Stats', 'Test
Parameters Used', then the warning and error tally. Every data line is `<label> : <value>`,
split on the first ':' (a SUT name may hold one). Labels are matched with their spacing
collapsed and case folded; unknown labels are skipped (LoadGen adds some every round).

The round's rules (schemas/mlperf_rounds/inference.py, chosen by the round in the path)
decide the headline, whether a Server summary in an Interactive folder is Interactive, and the
TTFT/TPOT limits the run is checked against (round_rules.py). The other files of a run are not
loaded here (roles.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from parsers.base import FormatError, LabelConflict, Parsed, RowProblem, SourceFile, frame
from parsers.mlperf.paths import SubmissionPath, submission_path
from parsers.mlperf_inference.benchmarks import normalise_benchmark
from parsers.mlperf_inference.round_rules import rules_of, scenario_of, token_check
from parsers.numbers import NumberError, parse_float, parse_int, shown
from schemas.mlperf_inference import MLPERF_INFERENCE_RUNS, PERCENTILES, SCENARIOS
from schemas.mlperf_rounds.inference import HEADLINES, InferenceRules, token_headline
from schemas.units import MS_TO_NS

TABLE = MLPERF_INFERENCE_RUNS.key
RULE = "=" * 48
TITLES = {"mlperf results summary": "result", "additional stats": "stats",
          "test parameters used": "params"}
_MAX_BYTES = 1 << 20  # a summary is ~3 KB
_PCT = {v: k for k, v in PERCENTILES.items()}  # "99.90" -> "p99_9"
_LATENCY = re.compile(r"^(min|max|mean) latency \(ns\)$")
_PERCENTILE = re.compile(r"^(\d+(?:\.\d+)?) percentile latency \(ns\)$")
_TTFT = re.compile(r"^(min|max|mean) first token latency \(ns\)$")
_TTFT_PCT = re.compile(r"^(\d+(?:\.\d+)?) percentile first token latency \(ns\)$")
_TPOT = re.compile(r"^(min|max|mean) time (?:to|per) output token \(ns\)$")
_TPOT_PCT = re.compile(r"^(\d+(?:\.\d+)?) percentile time (?:to|per) output token \(ns\)$")
_TARGET = re.compile(r"^(\d+(?:\.\d+)?)th percentile latency \(ns\)$")
_TARGET_TTFT = re.compile(r"^(\d+(?:\.\d+)?)th first token percentile latency \(ns\)$")
_ESTIMATE = re.compile(r"Early stopping (\d+(?:\.\d+)?)th percentile estimate: *(\S+)")
_TALLY = re.compile(r"^(no|\d+) (warning|error)s? encountered", re.IGNORECASE)
_LISTS = {"recommendations": "recommendations", "early stopping result": "early_stopping_result",
          "ttft early stopping result": "ttft_early_stopping_result",
          "tpot early stopping result": "tpot_early_stopping_result"}
_FLAGS = {"performance constraints satisfied": "perf_constraints_met",
          "min duration satisfied": "min_duration_met",
          "min queries satisfied": "min_queries_met",
          "early stopping satisfied": "early_stopping_met"}
# (column, kind): kind is 'f' float, 'i' integer, 'ns' integer ns -> ms, 'ms' float ms, 's' text
_PARAMS = {"samples_per_query": ("samples_per_query", "i"),
           "target_qps": ("target_qps_per_s", "f"),
           "target_latency (ns)": ("target_latency_ms", "ns"),
           "ttft_latency (ns)": ("ttft_latency_ms", "ns"),
           "tpot_latency (ns)": ("tpot_latency_ms", "ns"),
           "max_async_queries": ("max_async_queries", "i"),
           "min_duration (ms)": ("min_duration_ms", "f"),
           "max_duration (ms)": ("max_duration_ms", "f"),
           "min_query_count": ("min_query_count", "i"),
           "max_query_count": ("max_query_count", "i"),
           "qsl_rng_seed": ("qsl_rng_seed", "s"),
           "sample_index_rng_seed": ("sample_index_rng_seed", "s"),
           "schedule_rng_seed": ("schedule_rng_seed", "s"),
           "performance_sample_count": ("performance_sample_count", "i"),
           "accuracy_sample_count": ("accuracy_sample_count", "i")}
_RESULT_LINES = {"samples per second": ("samples_per_s", "f"),
                 "completed samples per second": ("samples_per_s", "f"),
                 "tokens per second": ("tokens_per_s", "f"),
                 "completed tokens per second": ("tokens_per_s", "f"),
                 "tokens per second (inferred)": ("tokens_per_s", "f"),
                 "completed tokens per second (inferred)": ("tokens_per_s", "f"),
                 "scheduled samples per second": ("scheduled_samples_per_s", "f"),
                 "qps w/ loadgen overhead": ("qps_with_loadgen_overhead_per_s", "f"),
                 "qps w/o loadgen overhead": ("qps_without_loadgen_overhead_per_s", "f")}


def _label(text: str) -> str:
    return " ".join(text.split()).lower()


@dataclass
class _Scan:
    lines: list[str]
    values: dict[str, object] = field(default_factory=dict)
    # result-line label -> (line, value): block 1's, else Additional Stats' (scheduled)
    printed: dict[str, tuple[int, str]] = field(default_factory=dict)
    lists: dict[str, list[str]] = field(default_factory=dict)
    estimates: list[tuple[float, str, int]] = field(default_factory=list)
    problems: list[RowProblem] = field(default_factory=list)
    blocks: list[str] = field(default_factory=list)

    def run(self) -> None:
        block, sub, listing = None, "", None
        for number, raw in enumerate(self.lines, start=1):
            line = raw.rstrip()
            if line.strip() == RULE:
                continue
            if _label(line) in TITLES:
                block, sub, listing = TITLES[_label(line)], "", None
                self.blocks.append(block)
                continue
            if not line.strip():
                listing = None
                continue
            if tally := _TALLY.match(line.strip()):
                count = 0 if tally.group(1).lower() == "no" else int(tally.group(1)[:9])
                self.values[f"loadgen_{tally.group(2).lower()}_count"] = count
                continue
            if listing and line.startswith(" ") and (line.strip().startswith("*")
                                                     or ":" not in line):
                self._bullet(listing, line.strip(), number)
                continue
            listing = None
            label, sep, value = line.partition(":")
            key, value = _label(label), value.strip()
            if not sep:
                continue
            if block == "result" and key in _LISTS and not value:
                listing = _LISTS[key]
                self.lists.setdefault(listing, [])
            elif block == "result":
                self._result(key, value, number)
            elif block == "stats":
                if key == "per-query latency":
                    sub = "per-query"
                    continue
                self._stat(key, value, number, sub)
            elif block == "params" and key in _PARAMS:
                self._put(*_PARAMS[key], value, number, label.strip())

    def _bullet(self, listing: str, text: str, number: int) -> None:
        items = self.lists[listing]
        if text.startswith("*") or not items:
            items.append(text.lstrip("* ").strip())
        else:
            items[-1] += " " + text
        if listing == "early_stopping_result" and (found := _ESTIMATE.search(text)):
            self.estimates.append((float(found.group(1)), found.group(2), number))

    def _result(self, key: str, value: str, number: int) -> None:
        if key in ("sut name", "scenario", "mode", "result is"):
            self.values[key] = value
        elif key in _FLAGS:
            self.values[_FLAGS[key]] = value.lower() == "yes"
        elif key in _RESULT_LINES:
            self.printed[key] = (number, value)
            column, kind = _RESULT_LINES[key]
            self._put(column, kind, value, number, key)
            if "tokens" in key:
                self.values["tokens_inferred"] = key.endswith("(inferred)")
        elif found := _TARGET.match(key):
            self.printed["target"] = (number, value)
            self.values["target_percentile_pct"] = float(found.group(1))
            self._put("target_percentile_latency_ms", "ns", value, number, key)
        elif _TARGET_TTFT.match(key):
            self._put("first_token_target_percentile_latency_ms", "ns", value, number, key)

    def _stat(self, key: str, value: str, number: int, sub: str) -> None:
        if key in _RESULT_LINES:
            self.printed.setdefault(key, (number, value))
            self._put(*_RESULT_LINES[key], value, number, key)
            return
        for pattern, prefix, percentile in ((_LATENCY, "latency", False),
                                            (_PERCENTILE, "latency", True),
                                            (_TTFT, "ttft", False), (_TTFT_PCT, "ttft", True),
                                            (_TPOT, "tpot", False), (_TPOT_PCT, "tpot", True)):
            if found := pattern.match(key):
                stat = _PCT.get(f"{float(found.group(1)):.2f}") if percentile else found.group(1)
                if stat:
                    self._put(f"{prefix}_{stat}_ms", "ns", value, number, key)
                return

    def _put(self, column: str, kind: str, value: str, number: int, what: str) -> None:
        try:
            if kind == "s":
                self.values[column] = value
            elif kind == "i":
                self.values[column] = parse_int(value, what)
            elif kind == "ns":
                self.values[column] = parse_int(value, what) / MS_TO_NS
            else:
                self.values[column] = parse_float(value, what)
        except NumberError as exc:
            self.problems.append(RowProblem(f"line {number}", str(exc), TABLE, shown(value)))


class MlperfInferenceSummary:
    format = "mlperf_inference_summary"
    version = 1
    tables = (MLPERF_INFERENCE_RUNS,)

    def sniff(self, src: SourceFile) -> bool:
        if not src.might_contain("MLPerf Results Summary"):
            return False
        head = src.head(2048)
        return bool(re.search(r"(?m)^MLPerf Results Summary\s*$", head)) and \
            bool(re.search(r"(?m)^Scenario\s*:", head))

    def parse(self, src: SourceFile) -> Parsed:
        if len(src.data) > _MAX_BYTES:
            raise FormatError(f"{len(src.data)} bytes: a LoadGen summary is a few KB; this "
                              "is not one")
        scan = _Scan(src.text().splitlines())
        scan.run()
        row, conflicts = _row(scan, src.relpath)
        if scan.problems:
            return Parsed({TABLE: frame([], MLPERF_INFERENCE_RUNS)}, scan.problems, conflicts)
        return Parsed({TABLE: frame([row], MLPERF_INFERENCE_RUNS)}, conflicts=conflicts)


def _row(scan: _Scan, relpath: str) -> tuple[dict[str, object], list[LabelConflict]]:
    values, warnings = scan.values, []
    if "result" not in scan.blocks:
        raise FormatError("no 'MLPerf Results Summary' block: not a LoadGen summary")
    scenario = str(values.get("scenario") or "")
    printed = {s.lower(): s for s in SCENARIOS}.get(scenario.lower())
    if printed is None:
        raise FormatError(f"'Scenario :' is {scenario!r}, not one of {', '.join(SCENARIOS)}: "
                          "the headline cannot be chosen")
    result = str(values.get("result is") or "")
    if result not in ("VALID", "INVALID"):
        raise FormatError(f"'Result is :' is {result!r}, not VALID or INVALID: the summary is "
                          "truncated or not LoadGen's")
    row: dict[str, object] = {k: v for k, v in values.items()
                              if k in MLPERF_INFERENCE_RUNS.column_names}
    row.update({"sut_name": values.get("sut name"), "mode": values.get("mode"),
                "result_text": result, "result_valid": result == "VALID"})
    row.update({k: " | ".join(v) or None for k, v in scan.lists.items()})
    if result == "INVALID":
        warnings.append("Result is INVALID: not a result, never feeds a rule")
    path = submission_path(relpath)
    chosen = rules_of(path.round if path else None)
    rules, notes = chosen.rules, [chosen.warning] if chosen.warning else []
    row.update(round=path.round if path else None, rules_round=rules.round,
               round_source="path" if path and path.round else None)
    _path_parts(path, row, warnings)
    benchmark = str(row["benchmark"]) if row.get("benchmark") else None
    folder = (path.scenario or path.scenario_dir) if path and path.kind == "results" else None
    canonical, refused = scenario_of(printed, folder, benchmark, rules, values)
    row["scenario"] = canonical
    _headline(scan, canonical, benchmark, rules, row, notes)
    check = token_check(rules, benchmark, canonical, row)
    row.update(ttft_limit_ms=check.ttft_limit_ms, tpot_limit_ms=check.tpot_limit_ms,
               token_latency_within_limits=check.within)
    conflicts = _folders(path, folder, canonical, refused, row, warnings)
    warnings.extend(w for w in (check.warning,) if w)
    row["warnings"] = "; ".join(warnings) or None
    row["rules_warning"] = "; ".join(notes) or None
    return row, conflicts


def _headline(scan: _Scan, scenario: str, benchmark: str | None, rules: InferenceRules,
              row: dict[str, object], notes: list[str]) -> None:
    """The round's headline for the benchmark and scenario. A benchmark the round does not
    declare (an open-division model) that prints a token throughput is headlined by it, as
    the checker does once the submitter's model_mapping names a declared LLM."""
    key = rules.headline_key(benchmark, scenario)
    tokens = next((k for k in scan.printed if "tokens" in k), None)
    if tokens and not rules.declares(benchmark):
        if found := token_headline(scenario, tokens.endswith("(inferred)")):
            key = found
            notes.append(f"benchmark {benchmark or '(unknown)'!r} has no headline in the "
                         f"{rules.round} rules: its printed token throughput is taken")
    if key is None:
        raise FormatError(f"the {rules.round} rules declare no headline for {scenario}")
    headline = HEADLINES[key]
    if headline.unit == "ms":
        _latency_headline(scan, scenario, key, row)
        return
    fallback = HEADLINES.get(rules.headline_key(None, scenario) or "")
    if headline.label not in scan.printed and fallback and fallback.label in scan.printed:
        notes.append(f"the {rules.round} headline of {benchmark} {scenario} is "
                     f"'{_title(headline.label)}', not printed: '{_title(fallback.label)}' "
                     "taken")
        headline = fallback
    if headline.label not in scan.printed:
        raise FormatError(f"{scenario} summary without its '{_title(headline.label)}' line: "
                          f"the {rules.round} headline ({key}) is missing (truncated file?)")
    text = scan.printed[headline.label][1]
    try:
        value: float | None = parse_float(text, headline.label)
    except NumberError:
        value = None  # a row problem already, from where the line was read
    row.update(headline_metric=_title(headline.label), headline_key=headline.key,
               metric_value=value, metric_unit=headline.unit)


def _title(label: str) -> str:
    return label[0].upper() + label[1:]


def _latency_headline(scan: _Scan, scenario: str, key: str, row: dict[str, object]) -> None:
    """SingleStream / MultiStream: the early-stopping estimate at the target percentile, else
    (or where the round reads the printed percentile) the '<p>th percentile latency' line."""
    target = row.get("target_percentile_pct")
    estimate = next(((p, v, n) for p, v, n in scan.estimates if p == target),
                    scan.estimates[0] if scan.estimates else None)
    for pct, value, number in scan.estimates:
        column = ("early_stopping_estimate_ms" if estimate and pct == estimate[0]
                  else "early_stopping_p99_estimate_ms" if pct == 99.0 else None)
        if column:
            scan._put(column, "ns", value, number, f"early stopping {pct:g}th estimate")
    row["early_stopping_estimate_ms"] = scan.values.get("early_stopping_estimate_ms")
    row["early_stopping_p99_estimate_ms"] = scan.values.get("early_stopping_p99_estimate_ms")
    if estimate and key.startswith("early_stopping"):
        row.update(headline_metric=f"Early stopping {estimate[0]:g}th percentile estimate",
                   headline_key=key, metric_value=row["early_stopping_estimate_ms"],
                   metric_unit="ms")
    elif "target" in scan.printed:
        row.update(headline_metric=f"{row['target_percentile_pct']:g}th percentile latency",
                   headline_key=None if key.startswith("early_stopping") else key,
                   metric_value=row["target_percentile_latency_ms"], metric_unit="ms")
    else:
        raise FormatError(f"{scenario} summary without its '<p>th percentile latency (ns)' "
                          "line: the headline is missing")


def _path_parts(path: SubmissionPath | None, row: dict[str, object],
                warnings: list[str]) -> None:
    row["benchmark_known"] = False
    if path is None or path.kind != "results":
        warnings.append("path outside the submission layout (<submitter>/results/<system>/"
                        "<benchmark>/<scenario>/...): submitter, system and benchmark unknown")
        row["is_reportable_run"] = False
        return
    row.update(round=path.round, division=path.division, submitter=path.submitter,
               system=path.system, benchmark_dir=path.benchmark_dir,
               scenario_dir=path.scenario_dir, mode_dir=path.mode, run=path.run,
               is_reportable_run=path.is_reportable_run)
    if path.benchmark_dir:
        name, target, known = normalise_benchmark(path.benchmark_dir)
        row.update(benchmark=name, accuracy_target_pct=target, benchmark_known=known)
        if not known:
            warnings.append(f"benchmark folder {path.benchmark_dir!r} is not a known MLPerf "
                            "benchmark: kept as written")


def _folders(path: SubmissionPath | None, folder: str | None, scenario: str,
             refused: str | None, row: dict[str, object], warnings: list[str]
             ) -> list[LabelConflict]:
    """The scenario, mode and run folders against the file (a warning each; the scenario a
    label conflict too)."""
    if path is None or path.kind != "results":
        return []
    conflicts = []
    if folder and folder != scenario:
        warnings.append(refused or f"scenario folder {path.scenario_dir!r} but the file says "
                                   f"'Scenario : {scenario}': the file is kept")
        conflicts.append(LabelConflict("scenario", scenario, "file:Scenario line",
                                       str(path.scenario_dir), "path:scenario folder"))
    mode = str(row.get("mode") or "")
    if path.mode and mode and not mode.lower().startswith(path.mode):
        warnings.append(f"{path.mode} folder but 'Mode : {mode}'")
    if path.mode == "performance" and not path.is_reportable_run:
        warnings.append(f"run folder {path.run!r} is not run_1: not the reportable run")
    return conflicts
