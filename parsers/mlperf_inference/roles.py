"""Files of an MLPerf Inference submission that are deliberately not loaded, and why.

Checked before any parser (parsers/registry.py `detect`): MLPerf Training's MLLOG reader must
not take LoadGen's detail log, and a compliance run's summary must not load as a result.

- the detail log repeats the summary's numbers (to 6 significant digits);
- the accuracy script's output is free-form per benchmark;
- a compliance test (`<submitter>/compliance/.../TEST06/...`, or a `TEST0x` folder in a
  results tree) audits the submission: its LoadGen run may be INVALID on purpose (TEST06
  checks first-token consistency) and is never a result (mlperf_inference_llm/FORMATS.md);
- LoadGen's `mlperf.conf` / `user.conf` hold settings, not measurements: the limits a round
  checks are declared in schemas/mlperf_rounds/inference.py, and each summary prints the
  ones its run used.
"""

from __future__ import annotations

import re

from parsers.base import SourceFile
from parsers.mlperf.paths import SubmissionPath, submission_path

DETAIL_REASON = ("not a result: LoadGen detail log (mlperf_log_detail.txt); the "
                 "mlperf_log_summary.txt of the same run is loaded (same numbers, 6 "
                 "significant digits)")
ACCURACY_REASON = ("not a result: MLPerf Inference accuracy-script output (accuracy.txt, "
                   "free-form per benchmark); the run's performance summary is loaded")
MLPERF_CONF_REASON = ("not a result: LoadGen configuration (mlperf.conf): the round's latency "
                      "limits are declared in schemas/mlperf_rounds/inference.py")
USER_CONF_REASON = ("not a result: LoadGen configuration ({name}): the settings of a run; its "
                    "mlperf_log_summary.txt prints the ones used")
_HASH_LINE = re.compile(rb"(?m)^hash=[0-9a-f]{64}\s*\Z")  # accuracy.txt's last line
# `<model>.<scenario>.<key> = <value>`, '*' for any model or scenario
_CONF_LINE = re.compile(r"^[\w.*-]+\.(\*|Offline|Server|SingleStream|MultiStream)\.\w+\s*=\s*\S")


def not_a_result(src: SourceFile) -> str | None:
    """Why a file of an MLPerf Inference submission is not loaded, or None."""
    if src.data.startswith(b":::MLLOG") and b'"mlperf::logging"' in src.data[:4096]:
        return DETAIL_REASON
    if src.name.lower() == "accuracy.txt" and _HASH_LINE.search(src.data[-200:]):
        return ACCURACY_REASON
    if (path := submission_path(src.relpath)) and _is_compliance(path):
        return compliance_reason(path)
    if src.name.lower().endswith(".conf") and _loadgen_conf(src):
        return MLPERF_CONF_REASON if src.name.lower() == "mlperf.conf" else \
            USER_CONF_REASON.format(name=src.name)
    return None


def _is_compliance(path: SubmissionPath) -> bool:
    """Under `<submitter>/compliance/` of a tree that is MLPerf's (a round or division folder
    above, or a test folder below: a `compliance/` folder of anything else is not), or in
    a `TEST0x` folder of a results tree (the v6.0 layout)."""
    if path.kind == "compliance":
        return bool(path.test or path.round or path.division)
    return path.kind == "results" and path.test is not None and path.suite != "training"


def compliance_reason(path: SubmissionPath) -> str:
    test = f" ({path.test.upper()})" if path.test else ""
    return (f"not a result: MLPerf Inference compliance test output{test}, an audit of the "
            "submission whose runs may be INVALID by design; the run's own files under "
            "results/ are loaded")


def _loadgen_conf(src: SourceFile) -> bool:
    """Every line a LoadGen setting, a comment or blank, and at least one setting."""
    lines = [ln.strip() for ln in src.head(8192).splitlines()]
    if len(src.data) > 8192:
        lines = lines[:-1]  # the head may end inside a line
    settings = [ln for ln in lines if ln and not ln.startswith("#")]
    return bool(settings) and all(_CONF_LINE.match(ln) for ln in settings)
