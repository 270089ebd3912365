"""Energy per output token of the LLM serving runs (core.llm_serving_energy), per model and
GPU: a table in the LLM serving section."""

from __future__ import annotations

from reports.data import columns, has_rows, text
from reports.html import Col, Section, paragraph, table
from schemas.energy import LLM_SERVING_ENERGY
from schemas.llm import LLM_SERVING_RUNS
from store.store import Store

_PER_MODEL = f"""
SELECT r.model, r.gpu_model, e.source, count(*) AS runs,
       median(e.joules_per_output_token) AS median_j_per_token,
       min(e.joules_per_output_token) AS min_j_per_token,
       max(e.joules_per_output_token) AS max_j_per_token,
       median(e.gpu_power_w_mean) AS median_gpu_power_w
FROM {LLM_SERVING_ENERGY.qualified} e
JOIN {LLM_SERVING_RUNS.qualified} r USING (source_file, run_index)
WHERE e.joules_per_output_token IS NOT NULL
GROUP BY ALL ORDER BY r.model, r.gpu_model, e.source
"""
_WITHOUT = f"SELECT count(*) AS n FROM {LLM_SERVING_ENERGY.qualified} WHERE energy_j IS NULL"


def energy_per_token(section: Section, store: Store) -> None:
    """The table, when some run has an energy per output token."""
    if not columns(store, LLM_SERVING_ENERGY.schema, LLM_SERVING_ENERGY.name):
        return
    per_model = store.query(_PER_MODEL)
    if not has_rows(per_model):
        return
    without = store.query(_WITHOUT)["n"][0]
    section.add("<h3>Energy per output token</h3>", paragraph(
        "GPU energy over each run's measured window divided by its output tokens "
        "(core.llm_serving_energy): stated by the run's file, else from amd-smi energy "
        "readings at the run's start and end, else from nvidia-smi power samples over the "
        f"run's time window. {without} run(s) with telemetry but no energy: the table's "
        "reason column says why."), table(per_model, [
            Col("model"), Col("gpu_model", "GPU"), Col("source", format=text),
            Col("runs"), Col("median_j_per_token", "J per output token (median)"),
            Col("min_j_per_token", "min"), Col("max_j_per_token", "max"),
            Col("median_gpu_power_w", "power per GPU (W, median)")]))
