"""Collective bandwidth (nccl-tests): core.collective_bandwidth, the large-message bandwidth
rule and the gradient all-reduce estimate, and their checks."""

import dagster as dg

from assets.derived import fresh_checks, rebuild
from assets.keys import table_key as key
from assets.metadata import described, table_description
from assets.resources import Warehouse
from assets.row_checks import rows_check
from assets.versions import COLLECTIVES
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

# the ledger too: rows of files gone from disk are left out (assets/derived.py)
_INPUTS = (NCCL_TESTS_RUNS, NCCL_TESTS_RESULTS, FILE_CONTEXT, INGESTED_FILES)
_SIZING = (COLLECTIVE_BANDWIDTH_RULE, GRADIENT_ALLREDUCE_ESTIMATE)
_CORE = COLLECTIVE_BANDWIDTH.qualified


@dg.asset(key=key(COLLECTIVE_BANDWIDTH), group_name="core", kinds={"duckdb"},
          code_version=COLLECTIVES, deps=[key(t) for t in _INPUTS],
          description=table_description(COLLECTIVE_BANDWIDTH),
          check_specs=fresh_checks([COLLECTIVE_BANDWIDTH]))
def collective_bandwidth(context: dg.AssetExecutionContext, warehouse: Warehouse):
    yield from rebuild(context, warehouse, [COLLECTIVE_BANDWIDTH],
                       lambda store: build_collective_bandwidth(store, context.run_id),
                       core=True)


@dg.multi_asset(
    name="collective_sizing_tables",
    specs=[dg.AssetSpec(key(COLLECTIVE_BANDWIDTH_RULE), group_name="sizing", kinds={"duckdb"},
                        code_version=COLLECTIVES, deps=[key(COLLECTIVE_BANDWIDTH)],
                        description=table_description(COLLECTIVE_BANDWIDTH_RULE)),
           dg.AssetSpec(key(GRADIENT_ALLREDUCE_ESTIMATE), group_name="sizing",
                        kinds={"duckdb"}, code_version=COLLECTIVES,
                        deps=[key(COLLECTIVE_BANDWIDTH_RULE), key(REFERENCE_MODELS)],
                        description=table_description(GRADIENT_ALLREDUCE_ESTIMATE))],
    check_specs=fresh_checks(_SIZING),
)
def collective_sizing_tables(context: dg.AssetExecutionContext, warehouse: Warehouse):
    yield from rebuild(context, warehouse, _SIZING,
                       lambda store: build_collective_sizing(store, context.run_id))


@dg.asset_check(asset=key(COLLECTIVE_BANDWIDTH), name=CHECK_LINK_LIMITS,
                description=described(
                    "No busbw above what the links can carry.",
                    "Each row's busbw (either side) stays under the lowest physical bound "
                    "known for it: the GPU's NVLink (by gpu_model) and, across nodes, the "
                    "NICs a network label '<NICs>x<Gb/s>G' names, scaled by the share of the "
                    "buffer the collective must move through them "
                    "(transforms/collectives/limits.py). Above it: a unit or label error, "
                    "or in-network reduction (SHARP) the bound leaves out."))
def busbw_within_link_limits(warehouse: Warehouse) -> dg.AssetCheckResult:
    sql, params = over_limit()
    return rows_check(warehouse, sql, "rows whose busbw is above a physical link limit",
                      dg.AssetCheckSeverity.WARN, params)


@dg.asset_check(asset=key(COLLECTIVE_BANDWIDTH), name=CHECK_WRONG_VALUES,
                description=described(
                    "No test found wrong elements.",
                    "nccl-tests validates every result: a row with #wrong > 0 or a test whose "
                    "'Out of bounds values' is not 0 had corrupted data. Its rows stay in "
                    "the table with valid = false and never feed the rule."))
def no_wrong_values(warehouse: Warehouse) -> dg.AssetCheckResult:
    return rows_check(
        warehouse,
        f"SELECT source_file, test_index, operation, gpus, nodes, "
        f"count(*) FILTER (WHERE out_of_place_wrong > 0 OR in_place_wrong > 0) "
        f"AS rows_with_wrong, sum(out_of_place_wrong) AS out_of_place_wrong, "
        f"sum(in_place_wrong) AS in_place_wrong, "
        f"max(out_of_bounds_values) AS out_of_bounds_values FROM {_CORE} GROUP BY ALL "
        f"HAVING rows_with_wrong > 0 OR max(out_of_bounds_values) > 0 "
        f"ORDER BY source_file, test_index",
        "tests with wrong elements (data corruption)", dg.AssetCheckSeverity.WARN)


@dg.asset_check(asset=key(COLLECTIVE_BANDWIDTH), name=CHECK_AVG_BUS_BANDWIDTH,
                description=described(
                    "Each test's 'Avg bus bandwidth' is the mean of its rows.",
                    "nccl-tests prints the mean busbw of every row, out-of-place and "
                    "in-place. A printed average farther from the rows' mean than rounding "
                    "allows (0.005 GB/s per row, 6 significant digits for the average) means "
                    "rows were lost, doubled or misread."))
def avg_bus_bandwidth_matches_rows(warehouse: Warehouse) -> dg.AssetCheckResult:
    return rows_check(
        warehouse,
        f"SELECT source_file, test_index, operation, printed_gb_per_s, rows_mean_gb_per_s "
        f"FROM (SELECT source_file, test_index, operation, "
        f"any_value(avg_bus_bandwidth_bytes_per_s) / 1e9 AS printed_gb_per_s, "
        f"(coalesce(sum(out_of_place_busbw_bytes_per_s), 0) "
        f" + coalesce(sum(in_place_busbw_bytes_per_s), 0)) "
        f"/ nullif(count(out_of_place_busbw_bytes_per_s) "
        f"         + count(in_place_busbw_bytes_per_s), 0) / 1e9 AS rows_mean_gb_per_s "
        f"FROM {_CORE} GROUP BY source_file, test_index, operation) "
        f"WHERE abs(printed_gb_per_s - rows_mean_gb_per_s) * 1e9 "
        f"> $1 + $2 * printed_gb_per_s * 1e9 ORDER BY source_file, test_index",
        "tests whose Avg bus bandwidth disagrees with their rows",
        dg.AssetCheckSeverity.WARN, [BUSBW_ROUNDING_BYTES_PER_S, AVG_ROUNDING_SHARE])


# a GPU model number (h100, a100, l40s, mi300x: not sxm5 or hbm3) and a memory size (80gb)
_MODEL_TOKEN = "[a-z]{1,3}[0-9]{2,4}[a-z]*"
_MEMORY_TOKEN = "[0-9]+gb"


@dg.asset_check(asset=key(COLLECTIVE_BANDWIDTH), name=CHECK_LABELS,
                description=described(
                    "The file's GPUs and nodes agree with run.yaml.",
                    "The Rank lines' GPU name, host count and GPUs per host are used "
                    "(docs/context.md); a run.yaml saying otherwise (another GPU model or "
                    "memory size, another node count) mislabels its folder or the file."))
def labels_agree_with_run_yaml(warehouse: Warehouse) -> dg.AssetCheckResult:
    return rows_check(
        warehouse,
        f"""
        WITH labels AS (
            SELECT DISTINCT c.source_file, c.test_index, c.gpu_model, c.gpu_model_source,
                   c.nodes, c.nodes_source, c.gpus_per_node, c.gpus_per_node_source,
                   fc.gpu_model AS context_gpu_model, fc.nodes AS context_nodes,
                   fc.gpus_per_node AS context_gpus_per_node,
                   regexp_split_to_array(lower(c.gpu_model), '[^a-z0-9]+') AS printed,
                   regexp_split_to_array(lower(fc.gpu_model), '[^a-z0-9]+') AS stated
            FROM {_CORE} c JOIN {FILE_CONTEXT.qualified} fc USING (source_file)
        )
        SELECT source_file, test_index, 'gpu_model' AS label, gpu_model AS file_value,
               context_gpu_model AS run_yaml_value
        FROM labels
        WHERE gpu_model_source = 'file' AND context_gpu_model IS NOT NULL
          AND (NOT list_has_all(printed, list_filter(stated, lambda t: regexp_full_match(
                   t, $1)))
               OR (len(list_filter(printed, lambda t: regexp_full_match(t, $2))) > 0
                   AND NOT list_has_all(printed, list_filter(
                       stated, lambda t: regexp_full_match(t, $2)))))
        UNION ALL
        SELECT source_file, test_index, 'nodes', CAST(nodes AS VARCHAR),
               CAST(context_nodes AS VARCHAR)
        FROM labels WHERE nodes_source = 'file' AND nodes <> context_nodes
        UNION ALL
        SELECT source_file, test_index, 'gpus_per_node', CAST(gpus_per_node AS VARCHAR),
               CAST(context_gpus_per_node AS VARCHAR)
        FROM labels WHERE gpus_per_node_source = 'file'
          AND gpus_per_node <> context_gpus_per_node
        ORDER BY source_file, test_index, label""",
        "labels the file states otherwise than its run.yaml", dg.AssetCheckSeverity.WARN,
        [_MODEL_TOKEN, _MEMORY_TOKEN])


@dg.asset_check(asset=key(COLLECTIVE_BANDWIDTH_RULE), name=CHECK_PLATEAU,
                description=described(
                    "Every rule row reached its plateau.",
                    "A plateau of one size means busbw was still rising at the largest "
                    "size measured: the sweep stopped too early (-e), and the plateau is a "
                    "lower bound of what the fabric achieves."))
def plateau_reached(warehouse: Warehouse) -> dg.AssetCheckResult:
    return rows_check(
        warehouse,
        f"SELECT operation, gpu_model, gpus, nodes, network, data_type, largest_size_bytes, "
        f"plateau_busbw_bytes_per_s, source_files FROM {COLLECTIVE_BANDWIDTH_RULE.qualified} "
        f"WHERE plateau_sizes < 2 ORDER BY ALL",
        "rule rows whose busbw was still rising at the largest size",
        dg.AssetCheckSeverity.WARN)


@dg.asset_check(asset=key(COLLECTIVE_BANDWIDTH_RULE), name=CHECK_NETWORK,
                description=described(
                    "Every multi-node rule row names its network.",
                    "nccl-tests never prints the fabric: results across nodes without a "
                    "run.yaml 'network' fall in one group whatever they ran on (EFA, "
                    "InfiniBand, TCP), and their plateau mixes them."))
def network_known_across_nodes(warehouse: Warehouse) -> dg.AssetCheckResult:
    return rows_check(
        warehouse,
        f"SELECT operation, gpu_model, gpus, nodes, data_type, files, source_files "
        f"FROM {COLLECTIVE_BANDWIDTH_RULE.qualified} WHERE nodes > 1 AND network IS NULL "
        f"ORDER BY ALL",
        "multi-node rule rows without a network", dg.AssetCheckSeverity.WARN)
