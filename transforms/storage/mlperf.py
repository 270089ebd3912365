"""The MLPerf Storage context the storage SQL joins, made once per build from data declared
in Python: per result file its storage system and round (parsers/mlperf_storage/layout.py)
and the round whose rules apply (schemas.mlperf_rounds.applied), each round's AU thresholds
(schemas/mlperf_rounds/storage.py), and the GPU label of each emulated accelerator
(schemas.mlperf_storage.ACCELERATOR_GPU_MODELS).

They are registered on the store's connection as the relations `mlperf_storage_files`,
`mlperf_storage_rules` and `mlperf_accelerator_gpus` (no table is written).
"""

from __future__ import annotations

import polars as pl

from parsers.mlperf_storage.layout import storage_labels, system_descriptions
from schemas.ledger import INGESTED_FILES
from schemas.mlperf_rounds import applied
from schemas.mlperf_rounds.storage import ROUNDS
from schemas.mlperf_storage import (
    ACCELERATOR_GPU_MODELS,
    MLPERF_STORAGE_CHECKPOINTS,
    MLPERF_STORAGE_REPORT_RUNS,
    MLPERF_STORAGE_RESULTS,
)
from store.store import Store

RESULT_TABLES = (MLPERF_STORAGE_RESULTS, MLPERF_STORAGE_REPORT_RUNS, MLPERF_STORAGE_CHECKPOINTS)
_FILES = {"source_file": pl.Utf8, "storage_system": pl.Utf8, "storage_system_source": pl.Utf8,
          "round": pl.Utf8, "round_source": pl.Utf8, "rules_round": pl.Utf8,
          "round_warning": pl.Utf8}


def register_mlperf_context(store: Store) -> None:
    """Register the three relations for the queries that follow on this connection."""
    store.ensure([*RESULT_TABLES, INGESTED_FILES])
    results = " UNION ".join(f"SELECT source_file FROM {t.qualified}" for t in RESULT_TABLES)
    files = store.query(results)["source_file"].to_list()
    systems = system_descriptions(store.query(
        f"SELECT path FROM {INGESTED_FILES.qualified} WHERE regexp_matches(path, "
        r"'/systems/[^/]+\.(json|ya?ml)$', 'i')")["path"].to_list())
    store.register("mlperf_storage_files", file_labels(files, systems))
    store.register("mlperf_storage_rules", rules_frame())
    store.register("mlperf_accelerator_gpus", pl.DataFrame(
        {"accelerator": list(ACCELERATOR_GPU_MODELS),
         "gpu_model": list(ACCELERATOR_GPU_MODELS.values())}))


def file_labels(files: list[str], systems: dict[str, set[str]]) -> pl.DataFrame:
    rows = []
    for path in files:
        labels = storage_labels(path, systems)
        rules = applied("storage", ROUNDS, labels.round)
        rows.append({"source_file": path, "storage_system": labels.storage_system,
                     "storage_system_source": labels.storage_system_source,
                     "round": labels.round, "round_source": labels.round_source,
                     "rules_round": rules.round, "round_warning": rules.warning})
    return pl.DataFrame(rows, schema=_FILES)


def rules_frame() -> pl.DataFrame:
    """One row per declared round and workload: its AU threshold (training) or CLOSED
    process count (checkpointing)."""
    rows = [{"rules_round": name, "workload": workload, "au_threshold_pct": pct,
             "checkpoint_processes": None}
            for name, rules in ROUNDS.items() for workload, pct in rules.au_threshold_pct.items()]
    rows += [{"rules_round": name, "workload": workload, "au_threshold_pct": None,
              "checkpoint_processes": processes}
             for name, rules in ROUNDS.items()
             for workload, processes in rules.checkpoint_processes.items()]
    return pl.DataFrame(rows, schema={"rules_round": pl.Utf8, "workload": pl.Utf8,
                                      "au_threshold_pct": pl.Float64,
                                      "checkpoint_processes": pl.Int64})
