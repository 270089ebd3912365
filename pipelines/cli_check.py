"""`sizing check FILE...`: what ingestion would make of some files, writing nothing.

Files people write are named for what they are and validated by the project's own readers:
a run.yaml (ingest/run_context.py), the path conventions (ingest/path_conventions.py), the
reference files (parsers/reference/, through the format registry) and DLIO's Hydra records
(ingest/sidecars.py). Results are detected, parsed and previewed as ingestion would.

Exit code: 0 when every file would load (or be recognised as not a result), 1 when some
would be rejected, 2 when some path is not a readable file (one line on stderr).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path, PurePosixPath

import polars as pl

from ingest import path_conventions
from ingest.discovery import files_in, printable
from ingest.engine import DEFAULT_MAX_FILE_BYTES
from ingest.examine import examine
from ingest.ledger import PATH_CONVENTIONS_FORMAT, RUN_CONTEXT_FORMAT
from ingest.reading import RawTree, Unreadable, read_file
from ingest.run_context import (
    CONTEXT_FILE_NAMES,
    PATH_CONVENTIONS_FILE,
    ContextError,
    read_run_yaml,
    resolver_for,
)
from ingest.sidecars import is_sidecar, sidecar_contexts
from parsers.base import FormatError, SourceFile
from parsers.mlperf_storage.hydra import SIDECAR_FILES
from parsers.reference.inference_csv import _ReferenceCsv
from parsers.registry import BY_FORMAT
from pipelines.console import (
    UsageError,
    limits_from_environment,
    number,
    one_line,
    print_frame,
    print_table,
)
from runtime import config

PREVIEW_ROWS, PREVIEW_COLUMNS, PREVIEW_CHARS = 5, 10, 40
# What the files under raw/reference/ are, by name (the registry detects them by content)
REFERENCE_FILES = {"models.csv": "reference_models", "gpus.csv": "reference_gpus",
                   "datasets.csv": "reference_datasets",
                   "checkpoint_bytes.csv": "reference_checkpoint_bytes",
                   "slo.yaml": "slo_policies", "scenarios.yaml": "capacity_scenarios"}


def check(args: argparse.Namespace) -> int:
    raw_root = config.raw_dir(args.raw)
    if args.raw is not None and not raw_root.is_dir():
        raise UsageError(f"--raw {args.raw}: {raw_root} is not a folder")
    limits_from_environment()
    max_bytes = config.max_file_bytes() or DEFAULT_MAX_FILE_BYTES
    worst, bad = 0, []
    for text in args.files:
        path = Path(text)
        if not path.is_file() or not os.access(path, os.R_OK):
            why = "not a file" if not path.is_file() else "not readable (permissions)"
            print(f"== {path}\n   {why}")
            bad.append(f"{path} ({why})")
            continue
        try:  # as ingestion reads it: never blocking, within the size limit
            data = read_file(path, max_bytes)
        except Unreadable as exc:
            print(f"== {path}\n   status: rejected\n   reason: {exc}")
            worst = max(worst, 1)
            continue
        worst = max(worst, _check_one(path, data, raw_root, max_bytes))
    if bad:
        raise UsageError(f"{len(bad)} of {len(args.files)} paths could not be checked: "
                         + "; ".join(bad))
    return worst


def _check_one(path: Path, data: bytes, raw_root: Path, max_bytes: int) -> int:
    relpath = _relative(path, raw_root)
    if path.name in CONTEXT_FILE_NAMES:
        return _run_yaml(path, data)
    if relpath == PATH_CONVENTIONS_FILE or path.name == PurePosixPath(PATH_CONVENTIONS_FILE).name:
        return _conventions(path, data)
    if is_sidecar(f"{path.parent.name}/{path.name}"):
        return _sidecar(path, max_bytes)
    outcome = examine(SourceFile(relpath, data))
    print(f"== {path}\n   format: {outcome.format or '(none)'}   status: {outcome.status}")
    worst = 0
    if outcome.error:
        print(f"   reason: {outcome.error}")
        worst = 1 if outcome.status == "rejected" else 0
        if outcome.format is None and (hint := _reference_hint(path, relpath, data)):
            print(f"   {hint}")
    for warning in _context_warnings(raw_root, path, max_bytes):  # context left out: it still loads
        print(f"   context warning: {warning}")
    for key, rows in outcome.rows.items():
        print(f"   {key}: {rows.height} rows")
        _print_preview(rows)
    for problem in outcome.problems:
        print(f"   held back {problem.location}: {problem.reason}")
    return worst


def _run_yaml(path: Path, data: bytes) -> int:
    """A run.yaml: the context it gives every file in its folder and below."""
    try:
        found = read_run_yaml(data)
    except ContextError as exc:
        print(f"== {path}\n   format: {RUN_CONTEXT_FORMAT} (run.yaml)   status: rejected\n"
              f"   reason: {one_line(exc)}\n   the files under it load without its values")
        return 1
    print(f"== {path}\n   format: {RUN_CONTEXT_FORMAT} (run.yaml)   status: loaded\n"
          "   context for every file in its folder and below (the nearest run.yaml wins key "
          "by key)")
    for doubt in found.doubts:
        print(f"   warning: {doubt}")
    rows = [(k, number(v, k)) for k, v in found.values.items()]
    rows += [(f"tags.{k}", one_line(v)) for k, v in found.tags.items()]
    if rows:
        print_table(("key", "value"), rows, indent=3)
    else:
        print("   (no values)")
    return 0


def _conventions(path: Path, data: bytes) -> int:
    """The path conventions: regular expressions that read context from folder names."""
    try:
        conventions = path_conventions.load(data)
    except path_conventions.ConventionError as exc:
        print(f"== {path}\n   format: {PATH_CONVENTIONS_FORMAT}   status: rejected\n"
              f"   reason: {one_line(exc)}\n   ingestion applies no convention while it is "
              "rejected")
        return 1
    print(f"== {path}\n   format: {PATH_CONVENTIONS_FORMAT}   status: loaded\n"
          f"   {len(conventions.conventions)} conventions, tried in order on each path under "
          "the raw root (a run.yaml value wins over a path value)")
    rows = [(c.name, ", ".join(sorted(c.maps.get(g, g) for g in c.pattern.groupindex)))
            for c in conventions.conventions]
    if rows:
        print_table(("convention", "context keys"), rows, indent=3)
    return 0


def _sidecar(path: Path, max_bytes: int) -> int:
    """A DLIO Hydra record: recorded as ignored, read (with its siblings) as the context of
    the results in its run folder. The siblings are read as ingestion reads them: regular
    files, no link followed."""
    folder = path.parent
    records: dict[str, bytes | str] = {}
    siblings = [f for f in files_in(folder, [""]) if f.relpath in SIDECAR_FILES]
    with RawTree(folder.resolve()) as tree:
        for sibling in siblings:
            try:
                records[f"{folder.name}/{sibling.relpath}"] = tree.read(sibling, max_bytes)
            except Unreadable as exc:
                records[f"{folder.name}/{sibling.relpath}"] = str(exc)
    found = next(iter(sidecar_contexts(records).values()), None)
    print(f"== {path}\n   format: (none)   status: ignored\n"
          f"   DLIO Hydra record ({path.name}): not a result; with the records beside it, "
          f"the context of the results in {folder.parent}")
    if found is None or not found.values:
        print("   labels: none found")
    else:
        print_table(("label", "value", "from"),
                    [(k, number(v, k), found.sources.get(k, "")) for k, v in found.values.items()],
                    indent=3)
    for warning in found.warnings if found else ():
        print(f"   context warning: {one_line(warning)}")
    for conflict in found.conflicts if found else ():
        print(f"   conflict: {conflict}")
    return 0


def _reference_hint(path: Path, relpath: str, data: bytes) -> str | None:
    """For a file named like a reference file that nothing recognised: what it must hold,
    in the words of its own parser."""
    in_reference = relpath.startswith("reference/") or path.parent.name in ("reference",
                                                                            "scenarios")
    fmt = REFERENCE_FILES.get(path.name) or ("capacity_scenarios" if path.parent.name ==
                                              "scenarios" else None)
    if not in_reference or fmt is None:
        return None
    parser = BY_FORMAT[fmt]
    if isinstance(parser, _ReferenceCsv):
        return (f"reference file ({fmt}): the header must be "
                f"{','.join(parser.columns)} (any order, any case)")
    try:
        parser.parse(SourceFile(relpath, data))
    except (FormatError, ValueError) as exc:
        return f"reference file ({fmt}): {one_line(exc)}"
    return f"reference file ({fmt}): its keys were not recognised"


def _relative(path: Path, raw_root: Path) -> str:
    resolved = path.resolve()
    if raw_root in resolved.parents:
        return resolved.relative_to(raw_root).as_posix()
    return resolved.name


def _context_warnings(raw_root: Path, path: Path, max_bytes: int) -> tuple[str, ...]:
    """The context ingestion would leave out of this file and why, if it is under the raw
    root."""
    resolved = path.resolve()
    if raw_root not in resolved.parents:
        return ()
    relpath = resolved.relative_to(raw_root).as_posix()
    return resolver_for(raw_root, relpath, max_bytes).resolve(printable(relpath)).warnings


def _print_preview(rows: pl.DataFrame) -> None:
    shown = rows.drop("file_sha256", "source_file", strict=False).head(PREVIEW_ROWS)
    columns = [c for c in shown.columns if shown[c].null_count() < shown.height]
    if len(columns) > PREVIEW_COLUMNS:  # the first and the last ones, as polars shows them
        half = PREVIEW_COLUMNS // 2
        shown = shown.select(*columns[:half], pl.lit("…").alias("…"), *columns[-half:])
    else:
        shown = shown.select(columns)
    long = pl.col(pl.String).str.len_chars() > PREVIEW_CHARS
    shown = shown.with_columns(
        pl.when(long).then(pl.col(pl.String).str.slice(0, PREVIEW_CHARS - 1) + "…")
        .otherwise(pl.col(pl.String)).name.keep())
    print_frame(shown, indent=3)
