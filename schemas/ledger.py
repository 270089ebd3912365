"""Bookkeeping tables: what was seen, what became of it, and what could not be used."""

from __future__ import annotations

import polars as pl

from schemas.spec import Column, Table, flag, integer, text

STATUSES = ("loaded", "unchanged", "rejected", "ignored", "missing")

INGESTED_FILES = Table(
    "raw", "ingested_files",
    "One row per file under the raw root, with what the latest ingestion did with it.",
    (
        text("path", "File path relative to the raw root (POSIX separators).", nullable=False),
        text("sha256", "SHA-256 of the file's bytes.", nullable=False),
        integer("size_bytes", "File size in bytes.", nullable=False),
        integer("mtime_ns", "Modification time (ns since the epoch) when last hashed; with the "
                "size it lets an unchanged file skip hashing."),
        text("format", "Format detected from the content (NULL when none matched)."),
        text("status", "loaded: rows written this run; unchanged: same path and sha256 as "
             "before, rows kept; rejected: nothing loaded, see error; ignored: recognised "
             "as not a result (a config, a README, a hidden or special file), see error; "
             "missing: no longer under the raw root, its rows are kept in the raw tables but "
             "left out of core and sizing tables (unless the run keeps missing files), "
             "until purged.", nullable=False),
        integer("rows_loaded", "Data rows this file currently has in the warehouse.",
                nullable=False),
        integer("rows_quarantined", "Rows of this file held back in raw.quarantine.",
                nullable=False),
        text("error", "Why the file was rejected or ignored, in words a person can act on."),
        text("notes", "What else to know about a file that loaded: a run.yaml or path "
             "convention that could not be applied to it (it loaded with the context left), "
             "or the path it was moved from."),
        integer("parser_version", "Version of the parser that produced the rows."),
        text("duplicate_of", "For a file ignored as a copy: the path with the same bytes "
             "(sha256) whose rows are loaded instead (that one was loaded first, or comes "
             "first in path order). Each measurement loads once."),
        Column("ingested_at", pl.Datetime, "When the file's current rows were written (UTC)."),
        Column("last_seen_at", pl.Datetime, "Start of the latest ingestion that saw the file."),
        text("run_id", "Ingestion run that last wrote this file's rows or status."),
    ),
    lineage=False,
)

QUARANTINE = Table(
    "raw", "quarantine",
    "Files and rows that could not be loaded, with the reason. A file's entries are "
    "replaced whenever the file is processed again.",
    (
        text("source_file", "File path relative to the raw root.", nullable=False),
        text("file_sha256", "SHA-256 of the file's bytes.", nullable=False),
        text("target_table", "Table the rows were meant for (NULL when the whole file failed)."),
        text("location", "Where in the file: 'line 12', 'row 3', a JSON path, or 'file'.",
             nullable=False),
        text("reason", "What is wrong, in words a person can act on.", nullable=False),
        text("row_values", "The offending row as JSON, when there is one."),
        text("run_id", "Ingestion run that quarantined it.", nullable=False),
    ),
    lineage=False,
)

INGESTION_RUNS = Table(
    "raw", "ingestion_runs",
    "One row per ingestion run: when, over what, and what came of it.",
    (
        text("run_id", "Dagster run id, or a local id for runs outside Dagster.", nullable=False),
        Column("started_at", pl.Datetime, "Start of the run (UTC).", nullable=False),
        Column("finished_at", pl.Datetime, "End of the run (UTC)."),
        text("raw_root", "Absolute raw root the run scanned, or the s3:// root whose local "
             "mirror it read.", nullable=False),
        integer("files_seen", "Files found under the raw root.", nullable=False),
        integer("files_loaded", "Files parsed and loaded this run.", nullable=False),
        integer("files_unchanged", "Files skipped because path and sha256 were unchanged.",
                nullable=False),
        integer("files_rejected", "Files rejected this run.", nullable=False),
        integer("files_ignored", "Files recognised as not a result.", nullable=False),
        integer("files_removed", "Files no longer under the raw root (rows kept, or purged).",
                nullable=False),
        flag("data_changed", "Whether any file's rows changed; when not (and the code is the "
             "same, and the previous rebuild completed), derived tables were kept as they "
             "were.", nullable=False),
        flag("derived_complete", "For a run that changed data: whether every derived table "
             "and the report were brought up to date (rebuilt, or kept when none of their "
             "inputs changed); a crash in between makes the next run rebuild them all."),
        text("code_fingerprint", "Digest of the code versions of every derived asset "
             "(assets/versions.py); a run whose digest differs from the last run's "
             "rebuilds the derived tables though no file changed."),
        text("raw_code_version", "Digest of the code that reads raw files (ingest, parsers, "
             "schemas, store: assets/versions.py RAW). `sizing ingest` skips a run over an "
             "unchanged raw root only when it equals the current code's."),
        flag("missing_rows_kept", "Whether this run let rows of files no longer under the raw "
             "root feed the core and sizing tables (`sizing ingest --keep-missing`)."),
        text("tables_changed", "Raw tables whose rows this run changed, comma-separated (all "
             "of them when the run rebuilds everything: new code, an unfinished rebuild). "
             "Only the derived tables downstream of one of them are rebuilt; the others keep "
             "their content, and their Dagster materialization says rebuilt=false."),
        text("files_changed", "The files whose rows this run changed, as a JSON array of "
             "paths, when at most 1,000 did; NULL when more did or the run rebuilds "
             "everything. A core table whose rows are grouped by run folder replaces only "
             "the folders of these files (its materialization's updated_folders), and "
             "sizing.inference_optimal_concurrency derives again only the sweeps measured "
             "in those folders."),
    ),
    lineage=False,
)

# Where a label's value came from, in order of precedence (docs/context.md)
LABEL_SOURCES = ("file", "sidecar", "run.yaml", "path")

LABEL_CONFLICTS = Table(
    "raw", "label_conflicts",
    "Evidence that disagrees about a label of a file's rows (a GPU count, a model, an "
    "accelerator, a precision): the value kept, where it came from, and the value it "
    "overrode. Sources in order of precedence: file (what the result states about "
    "itself), sidecar (the tool's own records beside it, e.g. DLIO's Hydra configs/), "
    "run.yaml, path (path conventions, folder names). Context conflicts are rebuilt on "
    "every ingestion; a parser's are replaced whenever its file is parsed again.",
    (
        text("source_file", "File path relative to the raw root.", nullable=False),
        text("column_name", "The label the evidence is about (gpus, model, accelerator, "
             "precision, ...).", nullable=False),
        text("value", "The value kept.", nullable=False),
        text("source", "Where the kept value came from: 'file:<what in the file>', "
             "'sidecar:<path>', 'run.yaml:<path>', 'path:<convention>'.", nullable=False),
        text("overridden_value", "The value that disagreed and was not used.",
             nullable=False),
        text("overridden_source", "Where the overridden value came from (same forms).",
             nullable=False),
        text("location", "Where in the file, when the file holds several runs ('line 12')."),
        text("origin", "parser (evidence inside the file) or context (sidecar, run.yaml "
             "and path evidence about the file).", nullable=False),
        text("run_id", "Ingestion run that recorded it.", nullable=False),
    ),
    lineage=False,
)

DERIVED_STATUS = Table(
    "raw", "derived_status",
    "One row per derived table (core, sizing, and the report): whether its content is "
    "fresh (rebuilt from the current raw rows by the latest run that rebuilt anything) or "
    "stale (its last rebuild failed: the last good content is kept) and why. A stale table "
    "is rebuilt again by the next run; its 'fresh' asset check fails until then.",
    (
        text("table_name", "Table, as schema.name (reports.sizing_report for the report).",
             nullable=False),
        text("status", "fresh or stale.", nullable=False),
        text("built_run_id", "Run that last built the content the table holds."),
        Column("built_at", pl.Datetime, "When that content was built (UTC)."),
        text("stale_since_run_id", "First run whose rebuild failed, while stale."),
        Column("stale_since", pl.Datetime, "When the table became stale (UTC)."),
        text("reason", "Why the latest rebuild failed, while stale."),
    ),
    lineage=False,
)

TABLES = (INGESTED_FILES, QUARANTINE, INGESTION_RUNS, DERIVED_STATUS,
          LABEL_CONFLICTS)
