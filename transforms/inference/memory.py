"""GPU memory per model, and the GB-per-billion-parameters rule fitted from it."""

from __future__ import annotations

import math
import re

import polars as pl

from schemas.domains import domain_of

BYTES_PER_PARAMETER = {"fp32": 4.0, "fp16": 2.0, "bf16": 2.0, "fp8": 1.0, "int8": 1.0,
                       "int4": 0.5}
# an explicit size in a model name: llama3_8b, gpt_20b, opt-1.3B, bert-340m
_SIZE_IN_NAME = re.compile(r"(?:^|[_\-.])(\d+(?:\.\d+)?)([bBmM])(?=$|[_\-.])")


def parameters_from_name(model: str) -> float | None:
    """Billions of parameters an explicit size in the name says; None when there is none,
    or it is 0 or outside the column's domain (model_99999999b is a name, not a size)."""
    match = _SIZE_IN_NAME.search(model)
    if not match:
        return None
    value = float(match.group(1))
    billions = value if match.group(2) in "bB" else value / 1000.0
    domain = domain_of("parameters_billions")
    return billions if billions > 0 and (domain is None or domain.contains(billions)) else None


def memory_per_model(measurements: pl.DataFrame, models: pl.DataFrame) -> list[dict]:
    """Per model and GPU model: memory at the lowest measured concurrency with batch 1 (the
    smallest configuration if several), with parameters from models.csv or the name."""
    batch_one = measurements.filter((pl.col("batch_size").fill_null(1) == 1)
                                    & pl.col("gpu_memory_mb").is_not_null()
                                    & pl.col("concurrency").is_not_null())
    per_gpu = ["model", "gpu_model"]
    points = (batch_one.filter(pl.col("concurrency") == pl.col("concurrency").min().over(per_gpu))
              .sort([*per_gpu, "gpu_memory_mb", "config_variant"], nulls_last=True,
                    maintain_order=True)
              .group_by(per_gpu, maintain_order=True).first())
    reference = {r["model"]: r for r in models.iter_rows(named=True)}
    rows = [_with_parameters(point, reference.get(point["model"]))
            for point in points.iter_rows(named=True)]
    return sorted(rows, key=lambda r: (r["model"], r["gpu_model"] or ""))


def _with_parameters(point: dict, reference: dict | None) -> dict:
    model = point["model"]
    memory_gb = point["gpu_memory_mb"] / 1000.0
    source: str | None
    if reference:
        params, source = reference["parameters_billions"], "models.csv"
        precision = reference["precision"]
    else:
        params, source = parameters_from_name(model), "model name"
        precision = point.get("precision")
        source = source if params is not None else None
    ratio = memory_gb / params if params else None
    reason = None
    if params is None:
        reason = "parameter count unknown: add the model to raw/reference/models.csv"
    elif ratio is None or not math.isfinite(ratio):
        ratio, reason = None, (f"GB per billion parameters not computable ({memory_gb:g} GB "
                               f"/ {params:g} billion)")
    elif precision not in BYTES_PER_PARAMETER:
        reason = ("precision unknown: give it in raw/reference/models.csv or the run.yaml "
                  "'precision'")
    return {
        "model": model, "gpu_model": point["gpu_model"], "gpu_memory_gb": memory_gb,
        "concurrency": point["concurrency"], "config_variant": point["config_variant"],
        "parameters_billions": params, "parameters_source": source, "precision": precision,
        "bytes_per_parameter": BYTES_PER_PARAMETER.get(precision or ""),
        "gb_per_billion_params": ratio,
        "in_fit": reason is None, "excluded_reason": reason,
        "source_files": point["source_file"],
    }


def memory_rule(per_model: list[dict]) -> list[dict]:
    """Least squares of memory (GB) on parameters (billions), per bytes-per-parameter group."""
    fitted = pl.DataFrame([r for r in per_model if r["in_fit"]],
                          schema={"model": pl.Utf8, "precision": pl.Utf8,
                                  "bytes_per_parameter": pl.Float64,
                                  "parameters_billions": pl.Float64,
                                  "gpu_memory_gb": pl.Float64}, strict=False)
    rows = []
    for (bpp,), group in fitted.group_by(["bytes_per_parameter"], maintain_order=True):
        rows.append({"bytes_per_parameter": bpp,
                     "precisions": ";".join(sorted(set(group["precision"]))),
                     "models": group.height,
                     "model_names": ";".join(sorted(set(group["model"]))),
                     **_fit(group["parameters_billions"].to_list(),
                            group["gpu_memory_gb"].to_list())})
    return sorted(rows, key=lambda r: -r["bytes_per_parameter"])


def _fit(x: list[float], y: list[float]) -> dict:
    """Rows in the fit have parameters > 0 and a finite GB per billion, so every number
    here is finite; the line through the origin stands in if rounding ever made one not."""
    n = len(x)
    mean_x, mean_y = sum(x) / n, sum(y) / n
    origin = {"gb_per_billion_params": mean_y / mean_x, "intercept_gb": 0.0,
              "r_squared": None, "fit": "one size only, through the origin"}
    sxx = sum((a - mean_x) ** 2 for a in x)
    if n == 1 or sxx == 0:
        return origin
    slope = sum((a - mean_x) * (b - mean_y) for a, b in zip(x, y, strict=True)) / sxx
    intercept = mean_y - slope * mean_x
    ss_res = sum((b - (slope * a + intercept)) ** 2 for a, b in zip(x, y, strict=True))
    ss_tot = sum((b - mean_y) ** 2 for b in y)
    r_squared = min(1.0, 1.0 - ss_res / ss_tot) if ss_tot else 1.0
    if not all(map(math.isfinite, (slope, intercept, r_squared))):
        return {**origin, "fit": "through the origin: the least-squares line was not finite"}
    return {"gb_per_billion_params": slope, "intercept_gb": intercept,
            "r_squared": r_squared, "fit": "least squares"}
