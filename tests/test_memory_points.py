"""transforms/inference/tables.py memory_points: the GPU memory rule reads from DuckDB only
the measurements it can pick from, and picks what it picked from all of them."""

from __future__ import annotations

import math

import polars as pl

from schemas.core import INFERENCE_MEASUREMENTS
from store.store import Store
from transforms.inference.memory import memory_per_model
from transforms.inference.tables import measurements, memory_points

MODELS = pl.DataFrame({"model": ["llm_13b"], "parameters_billions": [13.0],
                       "precision": ["fp16"]})
# model, variant, batch, GPU, system, concurrency, GPU MB: ties on memory broken by variant
# then by the order of the measurements (system); batch NULL counts as 1; a GPU unnamed
ROWS = [
    ("llm_13b", "v2", 1, "L40S-48GB", "b", 1, 30000.0),
    ("llm_13b", "v1", 1, "L40S-48GB", "z", 1, 30000.0),
    ("llm_13b", "v1", 1, "L40S-48GB", "a", 1, 30000.0),
    ("llm_13b", "v1", 1, "L40S-48GB", "a", 2, 20000.0),  # not the lowest concurrency
    ("llm_13b", "v1", 8, "L40S-48GB", "a", 1, 10000.0),  # batch 8
    ("llm_13b", "v3", None, "H100-80GB", "c", 4, float("nan")),
    ("llm_13b", "v4", None, "H100-80GB", "c", 4, 26000.0),
    ("llm_13b", "v1", 1, None, "d", 2, 27000.0),
    ("llm_13b", "v1", 1, None, "d", 1, None),  # no memory: the lowest with one is 2
    ("resnet50", "v1", 1, "T4-16GB", "e", None, 1200.0),  # no concurrency
]


def test_the_rule_picks_the_same_points_from_the_narrowed_read(store: Store):
    store.ensure([INFERENCE_MEASUREMENTS])
    store.insert(INFERENCE_MEASUREMENTS, pl.DataFrame(
        [dict(zip(("model", "config_variant", "batch_size", "gpu_model", "system",
                   "concurrency", "gpu_memory_mb"), r, strict=True))
         | {"throughput_per_s": 100.0, "source_file": f"f{i}.csv", "source_line": i}
         for i, r in enumerate(ROWS)], infer_schema_length=None))
    narrowed = memory_points(store)
    assert narrowed.height == 6 < measurements(store).height == 9
    picked = memory_per_model(narrowed, MODELS)
    assert repr(picked) == repr(memory_per_model(measurements(store), MODELS))
    assert [(r["gpu_model"], r["config_variant"], r["concurrency"], r["gpu_memory_gb"])
            for r in picked] == [(None, "v1", 2, 27.0), ("H100-80GB", "v4", 4, 26.0),
                                 ("L40S-48GB", "v1", 1, 30.0)]
    assert not any(isinstance(r["gpu_memory_gb"], float) and math.isnan(r["gpu_memory_gb"])
                   for r in picked)
