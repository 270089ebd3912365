"""Collective bandwidth (nccl-tests): core.collective_bandwidth, the large-message bandwidth
rule and the gradient all-reduce estimate, and their checks."""

import dagster as dg

from assets.collectives import DOMAIN
from assets.derived import fresh_checks, rebuild, table_asset
from assets.keys import table_key as key
from assets.metadata import table_description
from assets.resources import Warehouse
from assets.row_checks import WARN, RowCheck, row_check
from schemas.collectives import (
    COLLECTIVE_BANDWIDTH,
    COLLECTIVE_BANDWIDTH_RULE,
    GRADIENT_ALLREDUCE_ESTIMATE,
)
from schemas.context import FILE_CONTEXT, REFERENCE_MODELS
from schemas.ledger import INGESTED_FILES
from schemas.nccl_tests import NCCL_TESTS_RESULTS, NCCL_TESTS_RUNS
from transforms.collectives.limits import over_limit
from transforms.collectives.tables import build_collective_bandwidth, build_collective_sizing

CHECK_LINK_LIMITS = "busbw_within_link_limits"
CHECK_WRONG_VALUES = "no_wrong_values"
CHECK_AVG_BUS_BANDWIDTH = "avg_bus_bandwidth_matches_rows"
CHECK_LABELS = "labels_agree_with_run_yaml"
CHECK_PLATEAU = "plateau_reached"
CHECK_NETWORK = "network_known_across_nodes"
# 'Avg bus bandwidth' against the mean of the printed rows: each busbw is printed to
# 0.01 GB/s (off by up to 0.005), the average to 6 significant digits
BUSBW_ROUNDING_BYTES_PER_S = 0.005e9
AVG_ROUNDING_SHARE = 5e-6
# a GPU model number (h100, a100, l40s, mi300x: not sxm5 or hbm3) and a memory size (80gb)
_MODEL_TOKEN = "[a-z]{1,3}[0-9]{2,4}[a-z]*"
_MEMORY_TOKEN = "[0-9]+gb"

# the ledger too: rows of files gone from disk are left out (assets/derived.py)
_INPUTS = (NCCL_TESTS_RUNS, NCCL_TESTS_RESULTS, FILE_CONTEXT, INGESTED_FILES)
_SIZING = (COLLECTIVE_BANDWIDTH_RULE, GRADIENT_ALLREDUCE_ESTIMATE)


@dg.asset(**table_asset(COLLECTIVE_BANDWIDTH, _INPUTS, DOMAIN))
def collective_bandwidth(context: dg.AssetExecutionContext, warehouse: Warehouse):
    yield from rebuild(context, warehouse, [COLLECTIVE_BANDWIDTH],
                       lambda store: build_collective_bandwidth(store, context.run_id),
                       core=True)


@dg.multi_asset(
    name="collective_sizing_tables",
    specs=[dg.AssetSpec(key(COLLECTIVE_BANDWIDTH_RULE), group_name="sizing", kinds={"duckdb"},
                        code_version=DOMAIN.code_version, deps=[key(COLLECTIVE_BANDWIDTH)],
                        description=table_description(COLLECTIVE_BANDWIDTH_RULE)),
           dg.AssetSpec(key(GRADIENT_ALLREDUCE_ESTIMATE), group_name="sizing",
                        kinds={"duckdb"}, code_version=DOMAIN.code_version,
                        deps=[key(COLLECTIVE_BANDWIDTH_RULE), key(REFERENCE_MODELS)],
                        description=table_description(GRADIENT_ALLREDUCE_ESTIMATE))],
    check_specs=fresh_checks(_SIZING),
)
def collective_sizing_tables(context: dg.AssetExecutionContext, warehouse: Warehouse):
    yield from rebuild(context, warehouse, _SIZING,
                       lambda store: build_collective_sizing(store, context.run_id))


_LINK_LIMITS_SQL, _LINK_LIMITS = over_limit()
busbw_within_link_limits = row_check(RowCheck(
    COLLECTIVE_BANDWIDTH, CHECK_LINK_LIMITS, WARN, "No busbw above what the links can carry.",
    "Each row's busbw (either side) stays under the lowest physical bound known for it: the "
    "GPU's NVLink (by gpu_model) and, across nodes, the NICs a network label "
    "'<NICs>x<Gb/s>G' names, scaled by the share of the buffer the collective must move "
    "through them (transforms/collectives/limits.py). Above it: a unit or label error, or "
    "in-network reduction (SHARP) the bound leaves out.",
    "rows whose busbw is above a physical link limit",
    params=tuple(_LINK_LIMITS), sql=_LINK_LIMITS_SQL))
no_wrong_values = row_check(RowCheck(
    COLLECTIVE_BANDWIDTH, CHECK_WRONG_VALUES, WARN, "No test found wrong elements.",
    "nccl-tests validates every result: a row with #wrong > 0 or a test whose 'Out of bounds "
    "values' is not 0 had corrupted data. Its rows stay in the table with valid = false and "
    "never feed the rule.",
    "tests with wrong elements (data corruption)"))
avg_bus_bandwidth_matches_rows = row_check(RowCheck(
    COLLECTIVE_BANDWIDTH, CHECK_AVG_BUS_BANDWIDTH, WARN,
    "Each test's 'Avg bus bandwidth' is the mean of its rows.",
    "nccl-tests prints the mean busbw of every row, out-of-place and in-place. A printed "
    "average farther from the rows' mean than rounding allows (0.005 GB/s per row, 6 "
    "significant digits for the average) means rows were lost, doubled or misread.",
    "tests whose Avg bus bandwidth disagrees with their rows",
    params=(BUSBW_ROUNDING_BYTES_PER_S, AVG_ROUNDING_SHARE)))
labels_agree_with_run_yaml = row_check(RowCheck(
    COLLECTIVE_BANDWIDTH, CHECK_LABELS, WARN, "The file's GPUs and nodes agree with run.yaml.",
    "The Rank lines' GPU name, host count and GPUs per host are used (docs/context.md); a "
    "run.yaml saying otherwise (another GPU model or memory size, another node count) "
    "mislabels its folder or the file.",
    "labels the file states otherwise than its run.yaml", params=(_MODEL_TOKEN, _MEMORY_TOKEN)))
plateau_reached = row_check(RowCheck(
    COLLECTIVE_BANDWIDTH_RULE, CHECK_PLATEAU, WARN, "Every rule row reached its plateau.",
    "A plateau of one size means busbw was still rising at the largest size measured: the "
    "sweep stopped too early (-e), and the plateau is a lower bound of what the fabric "
    "achieves.",
    "rule rows whose busbw was still rising at the largest size"))
network_known_across_nodes = row_check(RowCheck(
    COLLECTIVE_BANDWIDTH_RULE, CHECK_NETWORK, WARN,
    "Every multi-node rule row names its network.",
    "nccl-tests never prints the fabric: results across nodes without a run.yaml 'network' "
    "fall in one group whatever they ran on (EFA, InfiniBand, TCP), and their plateau mixes "
    "them.",
    "multi-node rule rows without a network"))
