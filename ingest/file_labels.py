"""Labels a result states about itself that its context states otherwise.

The file's value is the one used (docs/context.md: file, sidecar, run.yaml, path); the
context's value is recorded beside it in raw.label_conflicts, so a folder named for one
model holding another model's log is seen, not silently relabelled. (The tf_cnn parser
already cross-checks the GPU count against the folder itself.)
"""

from __future__ import annotations

from dataclasses import dataclass

from ingest.scope import WHOLE_ROOT, Scope
from schemas.context import FILE_CONTEXT
from schemas.ledger import LABEL_CONFLICTS
from store.store import Store


@dataclass(frozen=True)
class FileLabel:
    table: str  # raw table holding the file's own value
    column: str  # its column there
    label: str  # the label it decides
    context: str  # SQL on raw.file_context (fc) giving the context's value (parenthesized
    # where it is used: DuckDB 1.5 binds ->> more loosely than AND)
    source: str  # SQL on fc giving where that value came from
    location: str = "NULL"  # SQL on the raw row (r) naming where in the file
    rows: str = "true"  # SQL on r: the rows that speak for a run (not every rank's copy)


_FROM_PATH = "'path'"
_FROM_CONTEXT = ("CASE WHEN fc.context_sources ->> '$.{key}' LIKE 'path:%' "
                 "THEN fc.context_sources ->> '$.{key}' "
                 "ELSE 'run.yaml:' || (fc.context_sources ->> '$.{key}') END")
_RUN_LINE = "'line ' || r.source_line"

FILE_LABELS = (
    FileLabel("raw.tf_cnn_runs", "model", "model", "fc.path_context ->> '$.model'",
              _FROM_PATH, _RUN_LINE, "r.primary_record"),
    FileLabel("raw.tf_cnn_runs", "precision", "precision", "fc.precision",
              _FROM_CONTEXT.format(key="precision"), _RUN_LINE, "r.primary_record"),
)


def record_file_label_conflicts(store: Store, run_id: str,
                                scope: Scope = WHOLE_ROOT) -> None:
    """After raw.file_context is rebuilt: one context conflict per disagreeing row of the
    files the run owns."""
    owned, params = scope.where("r.source_file")
    for label in FILE_LABELS:
        store.execute(f"""
            INSERT INTO {LABEL_CONFLICTS.qualified} BY NAME
            SELECT r.source_file, '{label.label}' AS column_name,
                   CAST(r.{label.column} AS VARCHAR) AS value,
                   'file:{label.column}' AS source,
                   CAST({label.context} AS VARCHAR) AS overridden_value,
                   {label.source} AS overridden_source,
                   {label.location} AS location, 'context' AS origin, ? AS run_id
            FROM {label.table} r JOIN {FILE_CONTEXT.qualified} fc USING (source_file)
            WHERE ({label.rows}) AND r.{label.column} IS NOT NULL
              AND ({label.context}) IS NOT NULL
              AND lower(trim(CAST(r.{label.column} AS VARCHAR)))
                  <> lower(trim(CAST({label.context} AS VARCHAR)))
              AND {owned}""", [run_id, *params])
