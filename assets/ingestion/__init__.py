"""The raw step: every file under the raw root loaded, ignored or quarantined."""

from assets.domain import Domain
from schemas.ledger import INGESTED_FILES, INGESTION_RUNS, QUARANTINE

DOMAIN = Domain(
    name="ingestion",
    summary="Which files were read, loaded, ignored or rejected, by which run.",
    code=(),  # the raw step's code version is assets/versions.RAW
    report_reads=(INGESTED_FILES, QUARANTINE, INGESTION_RUNS),
    derived=False,
)
