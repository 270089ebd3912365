"""`sizing plan`: an ad-hoc capacity plan from the warehouse (read-only), with its inputs
checked first: every mistake is one line naming the option, exit 2.

A demand `MODEL=N` is a Triton model with N concurrent users; `MODEL=Nusers` is N active
chat users of an LLM and `MODEL=Xrps` X chat requests per second, planned from the LLM
serving sweeps (sizing.llm_serving_optimal) under `--chat-slo`.

Exit code: 0 when every demand was planned, 1 when some could not be (the table of issues
says why), 2 for a bad option, an unknown model or GPU, or a warehouse that cannot be read.
"""

from __future__ import annotations

import argparse
import math

from ingest.suggest import did_you_mean as _close
from pipelines.console import UsageError, number, one_line, print_frame, say
from reports.query import connect_read_only
from runtime import config
from schemas.context import REFERENCE_GPUS
from schemas.domains import domain_of
from schemas.llm import LLM_CAPACITY_PLAN, LLM_SERVING_RUNS
from schemas.sizing import CAPACITY_PLAN, PERCENTILES
from store.store import Store, StoreError
from transforms.derived import to_frame
from transforms.inference.optimal import NO_LIMIT, Slo
from transforms.inference.planner import Demand, Plan, Scenario
from transforms.inference.tables import measurements, plan_scenario
from transforms.llm.deployment import by_workload, choose_configuration, frontiers
from transforms.llm.deployment_inputs import known, prices
from transforms.llm.deployment_plan import BY_COST, BY_GPUS, OPTIMIZE, describe
from transforms.llm.deployment_table import deployment_options, per_user_target
from transforms.llm.model_identity import resolver
from transforms.llm.planner import DEFAULT_TOKENS_PER_USER_PER_MIN, ChatDemand, merged
from transforms.llm.scenario_total import plural, scenario_total
from transforms.llm.serving_rule import NO_LIMIT as NO_CHAT_LIMIT
from transforms.llm.serving_rule import ChatSlo
from transforms.llm.tables import chat_plan, frontier_of, policies
from transforms.tunables import KNEE_FRACTION

# by importance, left to right: on a narrow terminal the last ones go first
PLAN_COLUMNS = ("model", "concurrent_users", "instances", "optimal_concurrency",
                "gpu_memory_per_instance_gb", "gpu_utilization_pct", "latency_at_slo_ms",
                "config_variant", "system")


def _upper_bound(column: str) -> float:
    """The plausible maximum of a column, as schemas/domains.py declares it."""
    domain = domain_of(column)
    return domain.hi if domain is not None and domain.hi is not None else math.inf


MAX_USERS = _upper_bound("concurrent_users")
MAX_GPUS_PER_SERVER = _upper_bound("gpus_per_server")
MAX_LATENCY_MS = _upper_bound("max_latency_ms")
MAX_REQUESTS_PER_S = _upper_bound("requests_per_s")
MAX_TOKENS = _upper_bound("mean_output_tokens")
LABELS = {"concurrent_users": "Users", "config_variant": "Config",
          "optimal_concurrency": "Users per instance",
          "gpu_memory_per_instance_gb": "GB per instance", "gpu_utilization_pct": "GPU util (%)",
          "latency_at_slo_ms": "Latency at SLO (ms)"}  # headers on a terminal
LISTED = 20  # known names a message lists before "and N more"


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    plan = sub.add_parser("plan", help="plan an ad-hoc scenario from the warehouse; writes "
                                       "nothing", parents=[common])
    plan.add_argument("--demand", action="append", required=True, metavar="MODEL=USERS",
                      help="a model and its concurrent users; for an LLM, MODEL=2000users "
                           "(active chat users) or MODEL=5rps (requests/s); repeat for "
                           "several models")
    plan.add_argument("--gpu-model", required=True)
    plan.add_argument("--gpus-per-server", type=int, required=True)
    plan.add_argument("--slo", default="none", metavar="PERCENTILE:MS",
                      help="latency limit such as p95:1500 (p50, p90, p95, p99, avg), or none")
    plan.add_argument("--chat-slo", default="none", metavar="POLICY",
                      help="chat SLO policy of raw/reference/llm_slo.yaml for LLM demands "
                           "(default none: no latency limit)")
    plan.add_argument("--tokens-per-user-per-min", type=float, metavar="TOKENS",
                      help="output tokens one chat user consumes a minute (default "
                           f"{DEFAULT_TOKENS_PER_USER_PER_MIN:g})")
    plan.add_argument("--output-tokens", type=float, metavar="TOKENS",
                      help="output tokens per request of a MODEL=Xrps demand (default: the "
                           "serving sweep's mean)")
    # the default of the SizingRules resource, so a plan and a run size alike
    plan.add_argument("--knee", type=knee_arg, default=KNEE_FRACTION.default,
                      metavar="FRACTION",
                      help="share of the peak throughput the optimum must reach, in (0, 1] "
                           f"(default {KNEE_FRACTION.default:g}; 1: the peak itself, a small "
                           "share: the smallest level measured)")
    plan.add_argument("--price-class", metavar="CLASS",
                      help="provider class of raw/reference/gpu_prices.csv the LLM deployment "
                           "is priced at (default: the first class listed for the GPU)")
    plan.add_argument("--optimize", default=BY_GPUS, metavar="|".join(OPTIMIZE),
                      help="how the LLM deployment's configuration is chosen: fewest GPUs "
                           "(default) or lowest cost a month, the latter among every GPU "
                           "model priced in the class")
    plan.add_argument("--warehouse", help="DuckDB file to read")
    plan.set_defaults(handler=plan_command)


def knee_arg(text: str) -> float:
    """An argparse type: a share of the peak throughput, in (0, 1] (nan and inf refused)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number: a share of the peak "
                                         "throughput, in (0, 1], e.g. 0.95") from None
    if not 0 < value <= 1:  # also refuses nan
        raise argparse.ArgumentTypeError(f"{text}: a share of the peak throughput, in (0, 1], "
                                         "e.g. 0.95")
    return value


CHAT_COLUMNS = ("model", "chat_users", "requests_per_s", "instances", "gpus",
                "output_tokens_per_s_per_instance", "demand_output_tokens_per_s",
                "load_at_slo", "gpus_per_instance", "tool")
CHAT_LABELS = {"chat_users": "Users", "requests_per_s": "Requests/s",
               "demand_output_tokens_per_s": "Demand (tokens/s)", "tool": "Sweep",
               "load_at_slo": "Requests per instance",
               "output_tokens_per_s_per_instance": "Tokens/s per instance",
               "gpus_per_instance": "GPUs per instance"}
COUNT_WORDS = (("gpus_by_memory", "by memory"), ("gpus_by_compute", "by compute"),
               ("gpus_naive", "naive"))


def plan_command(args: argparse.Namespace) -> int:
    scenario, chats = scenario_of(args)  # the options alone, before the warehouse is opened
    if args.optimize not in OPTIMIZE:
        raise UsageError(f"--optimize {args.optimize!r}: expected one of "
                         f"{', '.join(OPTIMIZE)}{_close(args.optimize, list(OPTIMIZE))}")
    warehouse = config.warehouse_location(args.warehouse)
    store = connect_read_only(warehouse)
    result = None
    try:
        try:
            if scenario.demands:
                _known(store, scenario)
                result = plan_scenario(store, scenario, args.knee)
            chat_rows, chat_slo = _chat_plans(store, scenario, chats, args.chat_slo)
            choices = _configurations(store, chat_rows, chat_slo)
            for model, lines in _deployments(store, chat_rows, chat_slo, args).items():
                choices.setdefault(model, []).extend(lines)
        except StoreError as exc:  # a DuckDB file that is not (yet) a warehouse
            raise UsageError(f"cannot plan from warehouse {warehouse}: "
                             f"{one_line(exc)}; run `sizing ingest` first") from None
    finally:
        store.close()
    total = scenario_total(
        scenario.name, scenario.gpu_model, scenario.gpus_per_server,
        slo=scenario.slo if result else None, triton=result.summary if result else None,
        triton_issues=result.issues if result else [],
        chat_slo_policy=chat_slo.name if chat_rows else None, chats=chat_rows)
    say(total["answer"])  # the answer first, in one sentence
    _print_slos(scenario if result else None, chat_slo if chat_rows else None)
    if result:
        _print_plan(result)
    if chat_rows:
        _print_chat_plans(chat_rows, choices)
    return 1 if total["lower_bound"] else 0


def _print_slos(scenario: Scenario | None, chat_slo: ChatSlo | None) -> None:
    """Which SLOs the answer holds under: said every time, the defaults above all."""
    if scenario is not None:
        say("SLO of the Triton models: " + (
            scenario.slo.describe() if scenario.slo.column else
            "none: planned without a latency limit (--slo p95:MS sets one)"))
    if chat_slo is not None:
        say(f"SLO of the LLM chat: {chat_slo.name!r}, {chat_slo.describe()}"
              + (" (--chat-slo POLICY sets one of raw/reference/llm_slo.yaml)"
                 if chat_slo.percentile is None else ""))


def _print_plan(result: Plan) -> None:
    s = result.summary
    print()
    say(f"Triton models: {plural(s['gpus_recommended'], 'GPU')} in "
          f"{plural(s['servers_recommended'], 'server')} ({plural(s['instances'], 'instance')}, "
          f"{number(s['gpu_memory_gb'], 'gpu_memory_gb')} GB; GPUs "
          + ", ".join(f"{words} {s[col]}" for col, words in COUNT_WORDS if s[col] is not None)
          + "; the larger of memory and compute is planned)")
    if result.rows:
        print_frame(to_frame(CAPACITY_PLAN, result.rows).select(PLAN_COLUMNS), labels=LABELS,
                    note_units=False)
    for issue in result.issues:
        say(f"not planned: {issue['model']}: {issue['reason']}", "  ")
    if s["assumptions"]:
        say(f"assumptions: {s['assumptions']}", "  ")


def _chat_plans(store: Store, scenario: Scenario, chats: list[ChatDemand],
                slo_policy: str) -> tuple[list[dict], ChatSlo]:
    """One plan per model demanded (its demands planned together), and the policy used."""
    if not chats:
        return [], NO_CHAT_LIMIT
    known = {p.name: p for p in policies(store)}
    if slo_policy not in known:
        raise UsageError(f"--chat-slo {slo_policy!r}: unknown policy"
                         f"{_close(slo_policy, sorted(known))}; raw/reference/llm_slo.yaml has "
                         f"{_listed(sorted(known))}")
    served = sorted(store.query(f"SELECT DISTINCT model FROM {LLM_SERVING_RUNS.qualified} "
                                "WHERE model IS NOT NULL")["model"].to_list())
    canonical = resolver(store)
    models = set(store.query(f"SELECT DISTINCT canonical_model FROM "
                             f"{LLM_SERVING_RUNS.qualified}")["canonical_model"].to_list())
    unknown = [d.model for d in chats if canonical(d.model) not in models]
    if unknown:
        raise UsageError(
            f"no LLM serving run of {', '.join(repr(m) + _close(m, served) for m in unknown)}; "
            + (f"the warehouse has serving runs of {_listed(served)}" if served else
               "the warehouse has no LLM serving runs yet: ingest vLLM, SGLang, AIPerf or "
               "GenAI-Perf sweeps first"))
    return ([chat_plan(store, group, scenario.gpu_model, scenario.gpus_per_server, slo_policy)
             for group in merged(chats)], known[slo_policy])


def _configurations(store: Store, rows: list[dict], slo: ChatSlo) -> dict[str, list[str]]:
    """Per planned model, its measured configurations (sizing.llm_frontier) compared at the
    SLO's interactivity (1000 / its TPOT limit; any when it has none), one line per
    workload (input and output lengths)."""
    per_user = per_user_target(slo.max_tpot_ms)
    lines: dict[str, list[str]] = {}
    for row in rows:
        if row["reason"] is not None:
            continue
        grouped = by_workload(frontiers(frontier_of(store, row["model"], row["gpu_model"])))
        lines[row["model"]] = [
            choose_configuration(row["demand_output_tokens_per_s"], per_user, found)
            .line(workload if len(grouped) > 1 else "") for workload, found in grouped.items()]
    return lines


def _deployments(store: Store, rows: list[dict], slo: ChatSlo,
                 args: argparse.Namespace) -> dict[str, list[str]]:
    """Per planned model, its chosen deployment with runner-up, GPU range, servers, power,
    cost and sources (transforms/llm/deployment_plan.py), one block per workload."""
    planned = [r for r in rows if r["reason"] is None]
    if not planned:
        return {}
    listed = prices(store)
    classes = sorted({p.provider_class for found in listed.values() for p in found})
    wanted = args.price_class
    if wanted is not None and wanted not in classes:
        raise UsageError(f"--price-class {wanted!r}: unknown provider class"
                         f"{_close(wanted, classes)}; raw/reference/gpu_prices.csv has "
                         + (_listed(classes) if classes else "no prices yet"))
    canonical = resolver(store)
    lines: dict[str, list[str]] = {}
    for row in planned:
        gpu = row["gpu_model"]
        default = listed.get(gpu, [None])[0]
        price_class = wanted or (default.provider_class if default else None)
        candidates = frontier_of(store, row["model"], None if args.optimize == BY_COST
                                 else gpu)
        if args.optimize == BY_COST:  # the GPU asked for, and every other priced in the class
            candidates = [f for f in candidates if f["gpu_model"] == gpu or any(
                p.provider_class == price_class for p in listed.get(f["gpu_model"], []))]
        across = len({f["gpu_model"] for f in candidates}) > 1
        options = deployment_options(
            candidates, row["demand_output_tokens_per_s"], per_user_target(slo.max_tpot_ms),
            row["gpus_per_server"], known(store, canonical(row["model"])), price_class,
            args.optimize)
        for workload, ranking in options.items():
            block = describe(ranking, args.optimize, row["gpus_per_server"], across,
                             price_note=f"the first class listed for {gpu}; --price-class "
                                        "sets another" if wanted is None else "")
            if len(options) > 1:
                block[0] = f"{workload}: {block[0]}"
            lines.setdefault(row["model"], []).extend(block)
    return lines


def _print_chat_plans(rows: list[dict], choices: dict[str, list[str]]) -> None:
    planned = [r for r in rows if r["reason"] is None]
    print()
    print(f"LLM chat: {plural(sum(r['gpus'] for r in planned), 'GPU')}")
    if planned:
        print_frame(to_frame(LLM_CAPACITY_PLAN, planned).select(CHAT_COLUMNS),
                    labels=CHAT_LABELS, note_units=False)
    for row in rows:
        if row["reason"] is None:
            say(f"{row['model']}: {row['explanation']}", "  ")
            if row["assumptions"]:
                say(f"assumptions: {row['assumptions']}", "  ")
            for line in choices.get(row["model"], []):
                say(line, "  ")
        else:
            say(f"not planned: {row['model']}: {row['reason']}", "  ")


def scenario_of(args: argparse.Namespace) -> tuple[Scenario, list[ChatDemand]]:
    """The scenario the options describe (its Triton demands) and its chat demands, or
    UsageError naming the first bad option."""
    demands, chats = [], []
    for text in args.demand:
        model, sep, amount = text.rpartition("=")
        model = model.strip()
        if sep and model and amount.endswith(("users", "rps")):
            chats.append(_chat_demand(text, model, amount, args))
            continue
        users = amount
        # isdecimal refuses "²", "-3", "1.5", "1e3", "nan"; the length check keeps int() away
        # from thousands of digits
        if not sep or not model or not users.isdecimal() or len(users) > 12 or int(users) < 1:
            raise UsageError(f"--demand {text!r}: expected MODEL=USERS, users a whole number "
                             "of at least 1 (MODEL=Nusers or MODEL=Xrps for LLM chat)")
        if int(users) > MAX_USERS:
            raise UsageError(f"--demand {text!r}: at most {MAX_USERS:,.0f} users")
        demands.append(Demand(model, int(users)))
    if not args.gpu_model.strip():
        raise UsageError("--gpu-model: an empty name")
    if not 1 <= args.gpus_per_server <= MAX_GPUS_PER_SERVER:
        raise UsageError(f"--gpus-per-server {args.gpus_per_server}: must be at least 1 and "
                         f"at most {MAX_GPUS_PER_SERVER:,.0f}")
    for option in ("tokens_per_user_per_min", "output_tokens"):
        value = getattr(args, option, None)
        if value is not None and not (math.isfinite(value) and 0 < value <= MAX_TOKENS):
            raise UsageError(f"--{option.replace('_', '-')} {value}: a number of tokens "
                             f"above 0 and at most {MAX_TOKENS:,.0f}")
    return (Scenario("ad hoc", args.gpu_model.strip(), args.gpus_per_server, _slo(args.slo),
                     tuple(demands)), chats)


def _chat_demand(text: str, model: str, amount: str, args: argparse.Namespace) -> ChatDemand:
    number = amount.removesuffix("users").removesuffix("rps")
    if amount.endswith("users"):
        if not number.isdecimal() or len(number) > 12 or not 1 <= int(number) <= MAX_USERS:
            raise UsageError(f"--demand {text!r}: expected MODEL=Nusers, N a whole number of "
                             f"users from 1 to {MAX_USERS:,.0f}")
        return ChatDemand(model, chat_users=int(number),
                          tokens_per_user_per_min=args.tokens_per_user_per_min)
    try:
        rate = float(number) if len(number) <= 20 else math.nan
    except ValueError:
        rate = math.nan
    if not (math.isfinite(rate) and 0 < rate <= MAX_REQUESTS_PER_S):
        raise UsageError(f"--demand {text!r}: expected MODEL=Xrps, X requests per second "
                         f"above 0 and at most {MAX_REQUESTS_PER_S:,.0f}")
    return ChatDemand(model, requests_per_s=rate, output_tokens=args.output_tokens)


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


def _listed(names: list[str]) -> str:
    shown = ", ".join(names[:LISTED])
    return shown + (f" and {len(names) - LISTED} more (sizing query \"select distinct model, "
                    "gpu_model from core.inference_measurements\")" if len(names) > LISTED
                    else "")
