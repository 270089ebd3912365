"""What an MLPerf submission tree's path says about a file (both suites).

MLCommons publishes each round as a repository laid out by convention
(mlperf_inference/FORMATS.md section 1, mlperf_training/FORMATS.md section 1):

    [<round folder>/][<division>/]<submitter>/systems/<system>.json
    ... <submitter>/results/<system>/<benchmark>/<scenario>/<mode>/<run>/<file>     inference
    ... <submitter>/results/<system>/<benchmark>/<scenario>/accuracy/accuracy.txt   inference
    ... <submitter>/results/<system>/<benchmark>/result_<N>.txt                     training
    ... <submitter>/compliance/... , <submitter>/measurements/...                   not results
    ... <submitter>/results/<system>/<benchmark>/<scenario>/TEST06/...              not results

The path is evidence, not truth: the system folder must match a systems JSON, the scenario
folder must match the file's `Scenario :` line; parsers compare and flag, never fix.
`submission_path` never raises: a path that does not follow the convention gives None.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from parsers.mlperf_inference.benchmarks import normalise_benchmark

# The folder under <submitter>/ that says what the rest of the path means.
KINDS = ("results", "systems", "compliance", "measurements")
DIVISIONS = ("closed", "open", "network")
# Scenario folders, matched case-insensitively (CM automation writes `offline`, `server`).
SCENARIOS = {s.lower(): s for s in ("Offline", "Server", "SingleStream", "MultiStream",
                               "Interactive")}
MODES = ("performance", "accuracy")

_ROUND = re.compile(r"(?:^|[_-])(inference|training)_results_(v\d+(?:\.\d+)*)$", re.IGNORECASE)
_TRAINING_RUN = re.compile(r"^result_(\d{1,9})\.txt$")
_TEST = re.compile(r"^TEST\d{2}$", re.IGNORECASE)  # a compliance test's folder (TEST06)
_INFERENCE_FILES = ("mlperf_log_summary.txt", "mlperf_log_detail.txt",
                    "mlperf_log_accuracy.json", "accuracy.txt")


@dataclass(frozen=True)
class SubmissionPath:
    """The parts of a submission-tree path; None where the path does not say."""

    kind: str  # results | systems | compliance | measurements
    submitter: str
    division: str | None = None  # closed | open | network, lower case (as the folder, lowered)
    division_dir: str | None = None  # the folder as written (`Closed`)
    round: str | None = None  # v4.1, from a `<suite>_results_v4.1` folder above
    suite: str | None = None  # inference | training: from the round folder or the file name
    system: str | None = None  # the system folder (results) or the JSON's stem (systems)
    benchmark_dir: str | None = None  # the benchmark folder as written
    scenario_dir: str | None = None  # inference: the scenario folder as written (`offline`)
    scenario: str | None = None  # that folder's canonical spelling (`Offline`), None if unknown
    mode: str | None = None  # inference: performance | accuracy (folder, lowered)
    run: str | None = None  # inference: `run_1`, `ranging`; training: `result_3`
    run_index: int | None = None  # the number in `run_N` / `result_N`, else None
    file: str = ""  # the file name
    test: str | None = None  # a compliance test folder below the kind (TEST06), as written

    @property
    def is_reportable_run(self) -> bool:
        """An inference performance run in `run_1` or a training `result_N.txt`: what a
        submission reports (v5.x `performance/ranging/` runs are not)."""
        if self.suite == "training":
            return self.kind == "results" and self.run_index is not None
        return self.kind == "results" and self.mode == "performance" and self.run == "run_1"


# <division>/<submitter>/code/ (v3.0 storage: code-<hash>/), and the code/ one storage
# submitter kept inside results/<system>/: MLPerf's submission rules make it the source
# code the results were produced with
_CODE_DIR = re.compile(r"^code(?:-[0-9a-f]{4,64})?$", re.IGNORECASE)


def is_submission_code(relpath: str) -> bool:
    """A file under a submission tree's code folder (`<division>/<submitter>/code/...` or
    `<division>/<submitter>/results/<system>/code/...`, the division closed, open or
    network in any case): source code, whatever it holds."""
    parts = relpath.split("/")
    for index, part in enumerate(parts[:-3]):
        if part.lower() not in DIVISIONS:
            continue
        rest = parts[index + 2:-1]  # below <division>/<submitter>/, without the file
        if rest and _CODE_DIR.match(rest[0]):
            return True
        if len(rest) >= 3 and rest[0] == "results" and _CODE_DIR.match(rest[2]):
            return True
    return False


def scenario_of_dir(folder: str) -> str | None:
    """`offline` -> `Offline`: a scenario folder's canonical spelling, None if unknown."""
    return SCENARIOS.get(folder.strip().lower())


def submission_path(relpath: str) -> SubmissionPath | None:
    """The submission-tree parts of a relative POSIX path, or None when it does not follow
    the convention (no `<submitter>/results|systems|...` in it)."""
    parts = [p for p in relpath.replace("\\", "/").split("/") if p not in ("", ".")]
    if len(parts) < 3:
        return None
    # From the right: a raw root may itself sit under a folder named `results`.
    anchor = next((i for i in range(len(parts) - 2, 0, -1) if parts[i] in KINDS), None)
    if anchor is None:
        return None
    kind, submitter, file = parts[anchor], parts[anchor - 1], parts[-1]
    above = parts[:anchor - 1]
    division_dir = above[-1] if above and above[-1].lower() in DIVISIONS else None
    suite = round_ = None
    for folder in reversed(above):
        if found := _ROUND.search(folder):
            suite, round_ = found.group(1).lower(), found.group(2).lower()
            break
    below = parts[anchor + 1:-1]  # folders between the kind and the file
    base = SubmissionPath(kind=kind, submitter=submitter, file=file, round=round_,
                     division=division_dir.lower() if division_dir else None,
                     division_dir=division_dir,
                     suite=suite or _suite_of_file(file),
                     test=next((p for p in below if _TEST.match(p)), None))
    if kind == "systems":
        stem = file[:-5] if file.lower().endswith(".json") else None
        return replace(base, system=stem if not below else None)
    if kind != "results" or not below:
        return replace(base, system=below[0] if below else None)
    return _results(base, below)


def _results(base: SubmissionPath, below: list[str]) -> SubmissionPath:
    system, rest = below[0], below[1:]
    benchmark = rest[0] if rest else None
    if (training := _TRAINING_RUN.match(base.file)) and len(rest) == 1:
        return replace(base, system=system, benchmark_dir=benchmark,
                   suite=base.suite or "training", run=base.file[:-4],
                   run_index=int(training.group(1)))
    scenario_dir = rest[1] if len(rest) > 1 else None
    mode = rest[2].lower() if len(rest) > 2 and rest[2].lower() in MODES else None
    run = rest[3] if len(rest) > 3 and mode == "performance" else None
    index = re.fullmatch(r"run_(\d{1,9})", run or "")
    return replace(base, system=system, benchmark_dir=benchmark, scenario_dir=scenario_dir,
                    scenario=scenario_of_dir(scenario_dir) if scenario_dir else None,
                    mode=mode, run=run, run_index=int(index.group(1)) if index else None)


def _suite_of_file(file: str) -> str | None:
    if file.lower() in _INFERENCE_FILES:
        return "inference"
    return "training" if _TRAINING_RUN.match(file) else None


def location_labels(relpath: str) -> dict[str, str]:
    """What a file's place in a submission tree says was measured: submitter, system,
    benchmark (canonical, with its accuracy target), scenario and mode. Two copies of one
    log under `gptj-99/` and `gptj-99.9/` are two results; the division and the run folder
    are left out (the same run filed as run_1 and run_2, or in closed and open, is one)."""
    found = submission_path(relpath)
    if found is None:
        return {}
    labels = {"submitter": found.submitter, "system": found.system,
              "scenario": found.scenario or (found.scenario_dir or "").lower() or None,
              "mode": found.mode}
    if found.benchmark_dir:
        name, target, _ = normalise_benchmark(found.benchmark_dir)
        labels |= {"benchmark": name, "accuracy_target_pct": f"{target:g}" if target else None}
    return {k: v for k, v in labels.items() if v}
