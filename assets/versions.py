"""Each asset's `code_version`: a digest of the source its output depends on, so Dagster
can show which assets' code changed since they were last materialized.

Dagster keeps that history only in a persistent instance, and `sizing ingest` usually runs
on an ephemeral one that forgets it at exit. So the warehouse also records, per run, the
digest of every derived asset's version (raw.ingestion_runs.code_fingerprint): after an
upgrade that changes how a derived table is built, the next run rebuilds the derived tables
even when no file changed.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[1]

# What every derived table is built with: the table declarations, the store, the SQL, the
# one write policy, the checks and the resources that configure them.
_DERIVING = ("common", "schemas", "store", "transforms/derived.py", "transforms/freshness.py",
             "transforms/sql", "transforms/quality", "assets/derived.py", "assets/keys.py",
             "transforms/tunables.py", "assets/metadata.py", "assets/resources.py",
             "assets/row_checks.py",
             "assets/business_rules.py")


def source_version(*paths: str) -> str:
    """A digest of the .py and .sql files at `paths` (folders or files, relative to the
    project root): it changes whenever one of them does."""
    digest = hashlib.sha256()
    files = set()
    for path in map(_ROOT.joinpath, paths):
        files |= {path} if path.is_file() else set(path.rglob("*"))
    for file in sorted(f for f in files if f.suffix in (".py", ".sql") and f.is_file()):
        digest.update(file.relative_to(_ROOT).as_posix().encode())
        digest.update(hashlib.sha256(file.read_bytes()).digest())
    return digest.hexdigest()[:16]


RAW = source_version("ingest", "runtime", "parsers", "schemas", "store", "assets/ingestion")
# how the raw root is observed: its fingerprint (the listing, not the files' bytes)
RAW_ROOT = source_version("ingest/discovery.py", "assets/ingestion/raw_root.py")


def derived_version(*paths: str) -> str:
    """The code version of a derived domain whose own source is at `paths` (its manifest's
    `code`: assets/domain.py): a digest of that source and of what every derived table is
    built with."""
    return source_version(*_DERIVING, *paths)


def derived_fingerprint() -> str:
    """One digest of the code every derived table is built from: what the warehouse records
    per run to know that the code deriving its tables changed. It covers every domain's
    source, whichever domains there are (every derived domain's `code` lies under
    transforms/, reports/ and assets/ but the raw step's assets/ingestion/)."""
    assets = sorted(p.relative_to(_ROOT).as_posix() for p in (_ROOT / "assets").iterdir()
                    if p.name != "ingestion" and p.name != "__pycache__")
    return source_version(*_DERIVING, "transforms", "reports", *assets)
