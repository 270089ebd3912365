"""Business rules of the inference sizing tables, as Great Expectations suites run by
asset checks (the suites: transforms/inference/suites.py)."""

from assets.business_rules import business_check
from schemas.sizing import (
    CAPACITY_PLAN,
    CAPACITY_PLAN_SUMMARY,
    GPU_MEMORY_PER_MODEL,
    GPU_MEMORY_RULE,
    INFERENCE_OPTIMAL_CONCURRENCY,
)
from transforms.inference.suites import (
    memory_suite,
    optimal_suite,
    plan_suite,
    rule_suite,
    summary_suite,
)

optimal_rules = business_check(
    INFERENCE_OPTIMAL_CONCURRENCY, optimal_suite,
    "the optimum is a measured level, within its SLO, at most the peak.")
memory_rules = business_check(GPU_MEMORY_PER_MODEL, memory_suite,
                               "GB per billion parameters is positive.")
rule_rules = business_check(GPU_MEMORY_RULE, rule_suite,
                             "r_squared within [0, 1]; a positive slope.")
plan_rules = business_check(CAPACITY_PLAN, plan_suite,
                             "instances >= 1; an instance fits in its GPU's memory.")
summary_rules = business_check(CAPACITY_PLAN_SUMMARY, summary_suite,
                                "GPU counts >= 1; packing never beats the naive count.")
