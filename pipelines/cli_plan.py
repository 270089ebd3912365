"""`sizing plan`: an ad-hoc capacity plan from the warehouse (read-only), with its inputs
checked first: every mistake is one line naming the option, exit 2.

Exit code: 0 when every demand was planned, 1 when some could not be (the table of issues
says why), 2 for a bad option, an unknown model or GPU, or a warehouse that cannot be read.
"""

from __future__ import annotations

import argparse
import difflib
import math

from ingest import config
from pipelines.console import UsageError, one_line, print_frame
from reports.query import connect_read_only
from schemas.context import REFERENCE_GPUS
from schemas.domains import domain_of
from schemas.sizing import CAPACITY_PLAN, CAPACITY_PLAN_SUMMARY, PERCENTILES
from store.store import Store, StoreError
from transforms.inference.optimal import DEFAULT_KNEE_FRACTION, NO_LIMIT, Slo
from transforms.inference.planner import Demand, Scenario
from transforms.inference.tables import measurements, plan_scenario, to_frame

PLAN_COLUMNS = ("model", "concurrent_users", "config_variant", "system", "optimal_concurrency",
                "instances", "gpu_memory_per_instance_gb", "gpu_memory_gb",
                "gpu_utilization_pct", "latency_at_slo_ms")
SUMMARY_COLUMNS = ("instances", "gpu_memory_gb", "gpus_by_memory", "servers_by_memory",
                   "gpus_by_compute", "servers_by_compute", "gpus_naive", "gpus_recommended",
                   "servers_recommended")


def _upper_bound(column: str) -> float:
    """The plausible maximum of a column, as schemas/domains.py declares it."""
    domain = domain_of(column)
    return domain.hi if domain is not None and domain.hi is not None else math.inf


MAX_USERS = _upper_bound("concurrent_users")
MAX_GPUS_PER_SERVER = _upper_bound("gpus_per_server")
MAX_LATENCY_MS = _upper_bound("max_latency_ms")
LABELS = {"concurrent_users": "Users", "config_variant": "Config",
          "optimal_concurrency": "Users per instance",
          "gpu_memory_per_instance_gb": "GB per instance", "gpu_utilization_pct": "GPU util (%)",
          "latency_at_slo_ms": "Latency at SLO (ms)"}  # headers on a terminal
LISTED = 20  # known names a message lists before "and N more"


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    plan = sub.add_parser("plan", help="plan an ad-hoc scenario from the warehouse; writes "
                                       "nothing", parents=[common])
    plan.add_argument("--demand", action="append", required=True, metavar="MODEL=USERS",
                      help="a model and its concurrent users; repeat for several models")
    plan.add_argument("--gpu-model", required=True)
    plan.add_argument("--gpus-per-server", type=int, required=True)
    plan.add_argument("--slo", default="none", metavar="PERCENTILE:MS",
                      help="latency limit such as p95:1500 (p50, p90, p95, p99, avg), or none")
    plan.add_argument("--knee", type=float, default=DEFAULT_KNEE_FRACTION,
                      help="share of the peak throughput the optimum must reach")
    plan.add_argument("--warehouse", help="DuckDB file to read")
    plan.set_defaults(handler=plan_command)


def plan_command(args: argparse.Namespace) -> int:
    scenario = scenario_of(args)  # the options alone, before the warehouse is opened
    warehouse = config.warehouse_path(args.warehouse)
    store = connect_read_only(warehouse)
    try:
        try:
            _known(store, scenario)
            result = plan_scenario(store, scenario, args.knee)
        except StoreError as exc:  # a DuckDB file that is not (yet) a warehouse
            raise UsageError(f"cannot plan from warehouse {warehouse}: "
                             f"{one_line(exc)}; run `sizing ingest` first") from None
    finally:
        store.con.close()
    if result.rows:
        print_frame(to_frame(CAPACITY_PLAN, result.rows).select(PLAN_COLUMNS), labels=LABELS,
                    note_units=False)
    for issue in result.issues:
        print(f"not planned: {issue['model']}: {issue['reason']}")
    print_frame(to_frame(CAPACITY_PLAN_SUMMARY, [result.summary]).select(SUMMARY_COLUMNS),
                labels=LABELS)
    if result.summary["assumptions"]:
        print(f"assumptions: {result.summary['assumptions']}")
    return 1 if result.issues else 0


def scenario_of(args: argparse.Namespace) -> Scenario:
    """The scenario the options describe, or UsageError naming the first bad one."""
    demands = []
    for text in args.demand:
        model, sep, users = text.rpartition("=")
        model = model.strip()
        # isdecimal refuses "²", "-3", "1.5", "1e3", "nan"; the length check keeps int() away
        # from thousands of digits
        if not sep or not model or not users.isdecimal() or len(users) > 12 or int(users) < 1:
            raise UsageError(f"--demand {text!r}: expected MODEL=USERS, users a whole number "
                             "of at least 1")
        if int(users) > MAX_USERS:
            raise UsageError(f"--demand {text!r}: at most {MAX_USERS:,.0f} users")
        demands.append(Demand(model, int(users)))
    if not args.gpu_model.strip():
        raise UsageError("--gpu-model: an empty name")
    if not 1 <= args.gpus_per_server <= MAX_GPUS_PER_SERVER:
        raise UsageError(f"--gpus-per-server {args.gpus_per_server}: must be at least 1 and "
                         f"at most {MAX_GPUS_PER_SERVER:,.0f}")
    if not 0 < args.knee <= 1:  # also refuses nan
        raise UsageError(f"--knee {args.knee}: a share of the peak throughput, in (0, 1]")
    return Scenario("ad hoc", args.gpu_model.strip(), args.gpus_per_server, _slo(args.slo),
                    tuple(demands))


def _slo(text: str) -> Slo:
    if text == "none":
        return NO_LIMIT
    percentile, sep, limit = text.partition(":")
    if percentile not in PERCENTILES or not sep:
        raise UsageError(f"--slo {text!r}: expected PERCENTILE:MS with a percentile in "
                         f"{', '.join(PERCENTILES)}, or none")
    try:
        limit_ms = float(limit)
    except ValueError:
        raise UsageError(f"--slo {text!r}: {limit!r} is not a number of ms") from None
    if not math.isfinite(limit_ms) or limit_ms <= 0:
        raise UsageError(f"--slo {text!r}: the limit must be a finite number of ms above 0")
    if limit_ms > MAX_LATENCY_MS:
        raise UsageError(f"--slo {text!r}: at most {MAX_LATENCY_MS:,.0f} ms")
    return Slo("ad hoc", percentile, limit_ms)


def _known(store: Store, scenario: Scenario) -> None:
    """UsageError when the warehouse has never heard of a model or of the GPU. Models are
    those measured; GPUs those measured or listed in raw/reference/gpus.csv. A known model
    with no measurement on this GPU is planned as an issue (exit 1), not refused."""
    measured = measurements(store)
    models = sorted(set(measured["model"].drop_nulls().to_list()))
    gpus = sorted(set(measured["gpu_model"].drop_nulls().to_list())
                  | set(store.query(f"SELECT gpu_model FROM {REFERENCE_GPUS.qualified}")
                        ["gpu_model"].drop_nulls().to_list()))
    unknown = [d.model for d in scenario.demands if d.model not in models]
    if unknown:
        raise UsageError(
            f"unknown model{'s' if len(unknown) > 1 else ''} "
            f"{', '.join(repr(m) + _close(m, models) for m in unknown)}; "
            + (f"the warehouse has measurements of {_listed(models)}" if models else
               "the warehouse has no inference measurements yet: ingest some first"))
    if scenario.gpu_model not in gpus:
        raise UsageError(
            f"--gpu-model {scenario.gpu_model!r}: unknown GPU"
            f"{_close(scenario.gpu_model, gpus)}; "
            + (f"known (measured or in raw/reference/gpus.csv): {_listed(gpus)}" if gpus else
               "the warehouse knows no GPU yet: ingest measurements first"))


def _close(name: str, known: list[str]) -> str:
    folded = {k.lower(): k for k in known}
    match = folded.get(name.lower()) or next(iter(difflib.get_close_matches(name, known, 1)),
                                             None)
    return f" (did you mean {match!r}?)" if match else ""


def _listed(names: list[str]) -> str:
    shown = ", ".join(names[:LISTED])
    return shown + (f" and {len(names) - LISTED} more (sizing query \"select distinct model, "
                    "gpu_model from core.inference_measurements\")" if len(names) > LISTED
                    else "")
