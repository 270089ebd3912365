"""Storage: fio, gdsio, elbencho, MLPerf Storage and IO500/IOR results to storage
capability against GPU demand and checkpoint times."""

from assets.domain import Domain
from schemas.storage import SIZING_TABLES, STORAGE_MEASUREMENTS

DOMAIN = Domain(
    name="storage",
    summary="What bandwidth a storage system gives, against what training and "
            "checkpointing demand.",
    code=("transforms/storage", "assets/storage"),
    formats=("fio_json", "fio_terse", "fio_normal", "gdsio_text", "elbencho_text",
             "elbencho_csv", "mlperf_storage_summary", "mlperf_storage_checkpoint",
             "mlperf_storage_epochs", "mlperf_storage_report", "io500_summary", "io500_result",
             "ior_text", "ior_rank_csv", "reference_datasets",
             "reference_checkpoint_bytes"),
    report_reads=(STORAGE_MEASUREMENTS, *SIZING_TABLES),
    report_sections=("storage:storage",),
)
