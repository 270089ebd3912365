"""Mutants of valid benchmark files, drawn by hypothesis so they shrink and replay: the
property tests (tests/test_mutants.py) and the mutant figures (bench/mutants.py) draw them
here.

`seeds()` is one valid file per format: the sample raw root of `samples.generate`, the
reference files committed under raw/reference, and small synthetic files for the formats the
sample root lacks (elbencho, MLPerf Storage, fio terse and normal, Model Analyzer
checkpoints), built to the layouts the parser tests use. `mutants(seed)` draws one mutation
of a seed: a numeric token replaced by a hostile number, a field or line deleted, a cut, a
re-encoding, a duplicated line or section, a BOM, NUL bytes, an empty file, a number
nested 5,000 arrays deep.
"""

from __future__ import annotations

import csv
import functools
import importlib
import io
import json
import math
import pkgutil
import re
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from ingest import path_conventions
from ingest.examine import FileOutcome, examine
from ingest.run_context import ContextError, parse_run_yaml
from parsers.base import RowProblem, SourceFile
from samples import generate

if TYPE_CHECKING:
    from schemas.domains import Domain
    from schemas.spec import Column, Table

try:  # numeric domains per column (schemas/domains.py, added beside this work)
    from schemas.domains import domain_of
except ImportError:  # pragma: no cover - before schemas/domains.py existed
    domain_of = None  # type: ignore[assignment]

PROJECT = Path(__file__).resolve().parents[1]
HUGE_INTEGER = "9" * 5000  # past Python's 4,300-digit int/str limit, and past any float
HOSTILE_NUMBERS = ("NaN", "nan", "Infinity", "-Infinity", "inf", "-0", "1e308", "-1e308",
                   "1e30", HUGE_INTEGER, "-1",
                   "0", "0.4", "2.5")  # a zero load, fractional counts: in range, impossible
# the spellings YAML reads as floats, and a count in hexadecimal
YAML_NUMBERS = (".nan", ".inf", "-.inf", "1.0e+400", "0x10")
NON_ASCII = "éµ°±×ÿ"
CONTEXT = "run_context"  # run.yaml: read by ingest.run_context, not by a parser
CONVENTIONS = "path_conventions"  # raw/reference/path_conventions.yaml


@dataclass(frozen=True)
class Seed:
    label: str  # the format detection must give (or CONTEXT / CONVENTIONS)
    relpath: str
    data: bytes


@dataclass(frozen=True)
class Mutant:
    kind: str  # number | numbers | delete-field | delete-line | truncate | encoding | ...
    detail: str  # what was done, for a person reading a failure
    data: bytes

    def __repr__(self) -> str:  # hypothesis prints this: keep the 5,000 digits out
        return f"Mutant({self.kind}: {self.detail}; {len(self.data)} bytes)"


@dataclass
class Verdict:
    """What ingestion made of one mutant, judged."""

    status: str  # loaded | rejected | ignored | raised
    error: str | None = None
    problems: list[RowProblem] = field(default_factory=list)  # rows held back
    bad_values: list[str] = field(default_factory=list)  # non-finite or out of domain
    outcome: FileOutcome | None = None


MAX_PARSE_SECONDS = 20.0


def judge(seed: Seed, data: bytes) -> Verdict:
    """Examine the bytes as ingestion would (run.yaml and path conventions as the engine
    reads them); an exception escaping is status 'raised', with its traceback as error."""
    try:
        if seed.label == CONTEXT:
            try:
                values, _tags = parse_run_yaml(data)
            except ContextError as exc:
                return Verdict("rejected", str(exc))
            context = {"raw.file_context": pl.DataFrame([values])} if values else {}
            return Verdict("loaded", bad_values=bad_values(context))
        if seed.label == CONVENTIONS:
            try:
                path_conventions.load(data)
            except path_conventions.ConventionError as exc:
                return Verdict("rejected", str(exc))
            return Verdict("loaded")
        outcome = examine(SourceFile(seed.relpath, data), max_parse_seconds=MAX_PARSE_SECONDS)
    except Exception:  # noqa: BLE001 - the figure being measured
        return Verdict("raised", traceback.format_exc())
    return Verdict(outcome.status, outcome.error, outcome.problems,
                   bad_values(outcome.rows), outcome)


def bad_values(rows: dict[str, pl.DataFrame]) -> list[str]:
    """Loaded values that no sizing table should see: NaN or infinite floats, and (once
    schemas/domains.py exists) values outside their column's [lo, hi]."""
    found = []
    for table, frame_ in rows.items():
        for name, dtype in frame_.schema.items():
            if not dtype.is_numeric():
                continue
            values = frame_[name].drop_nulls().to_list()
            odd = [v for v in values if isinstance(v, float) and not math.isfinite(v)]
            if odd:
                found.append(f"{table}.{name} = {odd[0]!r} (not finite)")
                continue
            domain = column_domain(table, name)
            out = [v for v in values if not within(domain, v)]
            if domain is not None and out:
                found.append(f"{table}.{name} = {_short(repr(out[0]))} outside "
                             f"[{domain.lo}, {domain.hi}]")
        found += broken_invariants(table, frame_)
    return found


def broken_invariants(table: str, frame_: pl.DataFrame) -> list[str]:
    """Loaded rows that break an invariant of their table (schemas/invariants.py): values
    impossible together, which no rule may take."""
    declared = _tables().get(table)
    if declared is None or frame_.is_empty():
        return []
    found = []
    for invariant in declared.invariants:
        broken = invariant.broken(set(frame_.columns))
        if broken is not None:
            hits = frame_.filter(broken)
            if not hits.is_empty():
                found.append(f"{table}: {invariant.reason(hits.row(0, named=True))}")
    return found


def within(domain: Domain | None, value: float) -> bool:
    if domain is None:
        return True
    return (domain.lo is None or value >= domain.lo) and (domain.hi is None or
                                                          value <= domain.hi)


def column_domain(table: str, column: str) -> Domain | None:
    """The column's domain: its declaration's when the table is declared in schemas/ (a
    column may override the rule of its name), else the rule for its name."""
    if domain_of is None:
        return None
    declared = _declared_columns().get((table, column))
    return domain_of(declared if declared is not None else column)


@functools.cache
def _declared_columns() -> dict[tuple[str, str], Column]:
    return {(table.key, c.name): c for table in _tables().values() for c in table.all_columns}


@functools.cache
def _tables() -> dict[str, Table]:
    import schemas
    from schemas.spec import Table

    found: dict[str, Table] = {}
    for info in pkgutil.iter_modules(schemas.__path__):
        module = importlib.import_module(f"schemas.{info.name}")
        for value in vars(module).values():
            if isinstance(value, Table):
                found[value.key] = value
    return found


# ---- numeric tokens ---------------------------------------------------------------------------

_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_TOKENS = re.compile(r'(?P<string>"(?:[^"\\\n]|\\.)*")'
                     rf"|(?P<number>(?<![\w.+-]){_NUMBER}(?![\w.]))")
_QUOTED_NUMBER = re.compile(r"\s*[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?\s*")


def numeric_spans(text: str) -> list[tuple[int, int]]:
    """Where the numbers are: bare tokens (JSON values, CSV cells, `key: value`, `key=value`,
    log fields) and quoted cells that hold only a number ("1,024.00", DLIO's "179.75").
    Quoted JSON keys and words such as h100 or 8gpu are not numbers."""
    spans = []
    for match in _TOKENS.finditer(text):
        if match["number"] is not None:
            spans.append(match.span())
            continue
        start, end = match.span()
        if _QUOTED_NUMBER.fullmatch(text, start + 1, end - 1) and \
                not text[end:end + 8].lstrip().startswith(":"):
            spans.append((start + 1, end - 1))
    return spans


def hostile_numbers(relpath: str) -> tuple[str, ...]:
    yaml = relpath.endswith((".yaml", ".yml"))
    return HOSTILE_NUMBERS + (YAML_NUMBERS if yaml else ())


# ---- pure mutations -------------------------------------------------------------------------

def decode(data: bytes) -> str:
    return data.decode("utf-8", errors="surrogateescape")


def encode(text: str) -> bytes:
    return text.encode("utf-8", errors="surrogateescape")


def replace_numbers(text: str, spans: list[tuple[int, int]],
                    edits: dict[int, str]) -> str:
    """`text` with the numeric tokens at the given span indexes replaced."""
    out, last = [], 0
    for index in sorted(edits):
        start, end = spans[index]
        out += [text[last:start], edits[index]]
        last = end
    return "".join(out) + text[last:]


def lines_of(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def delete_csv_column(text: str, column: int) -> str:
    newline = "\r\n" if "\r\n" in text else "\n"
    out = io.StringIO()
    writer = csv.writer(out, lineterminator=newline)
    for record in csv.reader(io.StringIO(text, newline="")):
        writer.writerow(record[:column] + record[column + 1:])
    return out.getvalue()


def json_key_paths(doc: object, prefix: tuple = ()) -> list[tuple]:
    paths: list[tuple] = []
    if isinstance(doc, dict):
        for key, value in doc.items():
            paths.append((*prefix, key))
            paths += json_key_paths(value, (*prefix, key))
    elif isinstance(doc, list):
        for i, value in enumerate(doc):
            paths += json_key_paths(value, (*prefix, i))
    return paths


def delete_json_key(doc: Any, path: tuple) -> Any:
    target = doc
    for step in path[:-1]:
        target = target[step]
    del target[path[-1]]
    return doc


_ASSIGNMENT = re.compile(r"\b[\w.%]+\s*=\s*[^,\s\]]+,?[ \t]*")


def load_json(text: str) -> object | None:
    stripped = text.lstrip()
    if not stripped.startswith(("{", "[")):
        return None
    try:
        return json.loads(stripped)
    except ValueError:
        return None


# ---- strategies -------------------------------------------------------------------------------

def mutants(seed: Seed) -> st.SearchStrategy[Mutant]:
    """One mutation of the seed's bytes, chosen among every kind that applies to it."""
    text = decode(seed.data)
    spans = numeric_spans(text)
    lines = lines_of(text)
    kinds = [truncated(seed.data), reencoded(text), bom(seed.data), st.just(
        Mutant("empty", "empty file", b"")), nul_bytes(seed.data), line_endings(text)]
    if spans:
        replacements = st.sampled_from(hostile_numbers(seed.relpath))
        kinds[:0] = [number_replaced(text, spans, replacements, 1, 1)]
        if len(spans) > 1:
            kinds.insert(1, number_replaced(text, spans, replacements, 2, min(6, len(spans))))
    if lines:
        kinds += [line_deleted(lines), duplicated(lines)]
    kinds.append(field_deleted(seed.relpath, text, lines))
    if spans:
        kinds.append(nested(text, spans))
    if len(spans) > 1:  # values in range each, impossible together: p99 below p50, ...
        kinds += [swapped(text, spans), copied(text, spans)]
    if keyed := _KEYED_NUMBER.findall(text):
        kinds.append(key_repeated(text, keyed))
    return st.one_of(*kinds)


def numeric_mutants(seed: Seed) -> st.SearchStrategy[Mutant]:
    """Only the number mutations: one numeric token replaced by a hostile number."""
    text = decode(seed.data)
    spans = numeric_spans(text)
    if not spans:
        return st.nothing()
    return number_replaced(text, spans, st.sampled_from(hostile_numbers(seed.relpath)), 1, 1)


def draw_mutants(strategy: st.SearchStrategy[Mutant], count: int,
                 random_seed: int) -> list[Mutant]:
    """`count` mutants drawn with a fixed seed (the same ones on every run), not shrunk."""
    drawn: list[Mutant] = []

    @hypothesis_seed(random_seed)
    @settings(max_examples=count, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(mutant: Mutant) -> None:
        drawn.append(mutant)

    collect()
    return drawn


def number_replaced(text: str, spans: list[tuple[int, int]], replacements: st.SearchStrategy,
                    least: int, most: int) -> st.SearchStrategy[Mutant]:
    edits = st.dictionaries(st.integers(0, len(spans) - 1), replacements,
                            min_size=least, max_size=most)

    def build(chosen: dict[int, str]) -> Mutant:
        what = ", ".join(f"{text[spans[i][0]:spans[i][1]]!r}@{spans[i][0]} -> "
                         f"{_short(new)}" for i, new in sorted(chosen.items()))
        return Mutant("number" if least == 1 else "numbers", what,
                      encode(replace_numbers(text, spans, chosen)))

    return edits.map(build)


DEPTH = 5_000  # past the ~1,000 levels Python's JSON reader goes


def nested(text: str, spans: list[tuple[int, int]]) -> st.SearchStrategy[Mutant]:
    """A numeric token wrapped in DEPTH arrays: valid JSON no reader can walk."""
    def wrap(i: int) -> Mutant:
        start, end = spans[i]
        return Mutant("nested", f"{text[start:end]!r}@{start} in {DEPTH:,} arrays",
                      encode(text[:start] + "[" * DEPTH + text[start:end] + "]" * DEPTH
                             + text[end:]))
    return st.integers(0, len(spans) - 1).map(wrap)


def swapped(text: str, spans: list[tuple[int, int]]) -> st.SearchStrategy[Mutant]:
    """Two numbers trade places: percentiles out of order, a first token after the last,
    a run stopped before it started."""
    def swap(pair: tuple[int, int]) -> Mutant:
        i, j = sorted(pair)
        (a, b), (c, d) = spans[i], spans[j]
        return Mutant("swap", f"{text[a:b]!r}@{a} <-> {text[c:d]!r}@{c}",
                      encode(text[:a] + text[c:d] + text[b:c] + text[a:b] + text[d:]))
    pairs = st.tuples(st.integers(0, len(spans) - 1), st.integers(0, len(spans) - 1))
    return pairs.filter(lambda p: p[0] != p[1]).map(swap)


def copied(text: str, spans: list[tuple[int, int]]) -> st.SearchStrategy[Mutant]:
    """One number written over another: a run stopped the millisecond it started, a mean
    equal to a maximum."""
    def copy(pair: tuple[int, int]) -> Mutant:
        source, target = pair
        value = text[spans[source][0]:spans[source][1]]
        return Mutant("copy", f"{value!r}@{spans[source][0]} over "
                              f"{text[spans[target][0]:spans[target][1]]!r}"
                              f"@{spans[target][0]}",
                      encode(replace_numbers(text, spans, {target: value})))
    pairs = st.tuples(st.integers(0, len(spans) - 1), st.integers(0, len(spans) - 1))
    return pairs.filter(lambda p: p[0] != p[1]).map(copy)


_KEYED_NUMBER = re.compile(r'"[^"\\\n]{1,80}"\s*:\s*-?\d[\d.eE+-]*')


def key_repeated(text: str, keyed: list[str]) -> st.SearchStrategy[Mutant]:
    """A JSON key written twice in its object, the second time with another value: json
    keeps the last without a word."""
    def repeat(i: int) -> Mutant:
        pair = keyed[i]
        key = pair[:pair.index(":")].rstrip()
        at = text.index(pair)
        return Mutant("repeat-key", f"{key} repeated with value 0",
                      encode(text[:at] + f"{key}: 0, " + text[at:]))
    return st.integers(0, len(keyed) - 1).map(repeat)


def line_deleted(lines: list[str]) -> st.SearchStrategy[Mutant]:
    return st.integers(0, len(lines) - 1).map(lambda i: Mutant(
        "delete-line", f"line {i + 1} {lines[i][:60]!r}", encode("".join(lines[:i] +
                                                                        lines[i + 1:]))))


def field_deleted(relpath: str, text: str, lines: list[str]) -> st.SearchStrategy[Mutant]:
    """A JSON key, a CSV column, a `key=value` pair, or else a `key: value` line."""
    doc = load_json(text)
    if doc is not None and (paths := json_key_paths(doc)):
        indent = 2 if "\n " in text else None

        def drop_key(i: int) -> Mutant:
            mutated = delete_json_key(load_json(text), paths[i])
            return Mutant("delete-field", f"JSON key {'/'.join(map(str, paths[i]))}",
                          (json.dumps(mutated, indent=indent) + "\n").encode())
        return st.integers(0, len(paths) - 1).map(drop_key)
    if relpath.endswith(".csv"):
        width = max((len(r) for r in csv.reader(io.StringIO(text, newline=""))), default=1)
        return st.integers(0, max(width - 1, 0)).map(lambda c: Mutant(
            "delete-field", f"CSV column {c}", encode(delete_csv_column(text, c))))
    pairs = [m.span() for m in _ASSIGNMENT.finditer(text)]
    if pairs:
        return st.integers(0, len(pairs) - 1).map(lambda i: Mutant(
            "delete-field", f"{text[pairs[i][0]:pairs[i][1]]!r}",
            encode(text[:pairs[i][0]] + text[pairs[i][1]:])))
    keyed = [i for i, line in enumerate(lines) if ":" in line] or list(range(len(lines)))
    if not keyed:
        return st.just(Mutant("delete-field", "nothing to delete", encode(text)))
    return st.sampled_from(keyed).map(lambda i: Mutant(
        "delete-field", f"line {i + 1} {lines[i][:60]!r}", encode("".join(lines[:i] +
                                                                         lines[i + 1:]))))


def truncated(data: bytes) -> st.SearchStrategy[Mutant]:
    return st.integers(0, max(len(data) - 1, 0)).map(lambda at: Mutant(
        "truncate", f"cut at byte {at} of {len(data)}", data[:at]))


def reencoded(text: str) -> st.SearchStrategy[Mutant]:
    def utf16(variant: str) -> Mutant:
        data = {"utf-16 (BOM, LE)": lambda: text.encode("utf-16", "surrogatepass"),
                "utf-16-le (no BOM)": lambda: text.encode("utf-16-le", "surrogatepass"),
                "utf-16-be (BOM)": lambda: b"\xfe\xff" + text.encode("utf-16-be",
                                                                      "surrogatepass")}[variant]
        return Mutant("encoding", variant, data())

    def latin1(args: tuple[int, str]) -> Mutant:
        at, char = args
        at = min(at, len(text))
        return Mutant("encoding", f"latin-1 with {char!r} at char {at}",
                      (text[:at] + char + text[at:]).encode("latin-1", errors="replace"))

    return st.one_of(
        st.sampled_from(["utf-16 (BOM, LE)", "utf-16-le (no BOM)", "utf-16-be (BOM)"]).map(utf16),
        st.tuples(st.integers(0, len(text)), st.sampled_from(NON_ASCII)).map(latin1))


def bom(data: bytes) -> st.SearchStrategy[Mutant]:
    return st.just(Mutant("bom", "UTF-8 BOM added", b"\xef\xbb\xbf" + data))


def nul_bytes(data: bytes) -> st.SearchStrategy[Mutant]:
    inserted = st.tuples(st.integers(0, len(data)), st.integers(1, 64)).map(
        lambda a: Mutant("nul", f"{a[1]} NUL bytes at byte {a[0]}",
                         data[:a[0]] + b"\0" * a[1] + data[a[0]:]))
    zeroed_tail = st.integers(0, max(len(data) - 1, 0)).map(  # a crash before the flush
        lambda at: Mutant("nul", f"bytes {at}.. zeroed", data[:at] + b"\0" * (len(data) - at)))
    return st.one_of(inserted, zeroed_tail)


def line_endings(text: str) -> st.SearchStrategy[Mutant]:
    unix = text.replace("\r\n", "\n")
    return st.sampled_from([
        Mutant("line-endings", "CRLF", encode(unix.replace("\n", "\r\n"))),
        Mutant("line-endings", "bare CR", encode(unix.replace("\n", "\r"))),
    ])


def duplicated(lines: list[str]) -> st.SearchStrategy[Mutant]:
    """A line or a run of lines repeated in place, or the whole file twice."""
    def section(args: tuple[int, int]) -> Mutant:
        start, length = args
        end = min(start + length, len(lines))
        block = lines[start:end]
        if block and not block[-1].endswith(("\n", "\r")):
            block = [*block[:-1], block[-1] + "\n"]
        return Mutant("duplicate", f"lines {start + 1}-{end} repeated",
                      encode("".join(lines[:end] + block + lines[end:])))

    whole = "".join(lines)
    joiner = "" if whole.endswith("\n") else "\n"
    return st.one_of(
        st.tuples(st.integers(0, len(lines) - 1), st.integers(1, max(1, len(lines) // 2)))
        .map(section),
        st.just(Mutant("duplicate", "whole file twice", encode(whole + joiner + whole))))


def _short(value: str) -> str:
    return f"<{len(value)}-digit integer>" if len(value) > 40 else repr(value)


# ---- seeds ------------------------------------------------------------------------------------

SAMPLE_SEEDS = {  # label -> path in the sample raw root of samples.generate
    "model_analyzer_csv": "inference/h100-bm-01/model_analyzer/results/metrics-model-inference.csv",
    "model_analyzer_csv (gpu)": "inference/h100-bm-01/model_analyzer/results/metrics-model-gpu.csv",
    "perf_analyzer_csv": "inference/h100-bm-01/perf_analyzer/bert_large_onnx-results.csv",
    "genai_perf_csv": "inference/h100-bm-01/genai_perf/llama3_8b-triton-tensorrtllm-"
                      "concurrency8/profile_export_genai_perf.csv",
    "genai_perf_json": "inference/h100-bm-01/genai_perf/c64/profile_export_genai_perf.json",
    "tf_cnn_log": "training/h100-pod-a/1-node/resnet50-bs256-8gpu.log",
    "tf_cnn_log (horovod)": "training/h100-pod-a/2-nodes/resnet50-bs256-16gpu.log",
    "fio_json": "storage/vast-01/fio-seqread-1m.json",
    "vllm_bench_json": "llm_serving/h100-sxm-01/vllm-llama3.1-8b/vllm-infqps-concurrency8-"
                       "Llama-3.1-8B-Instruct-20261020.json",
    "mlperf_training_result": "mlperf/training_results_v4.0/SampleCo/results/dgxh100_n8_mxnet/"
                              "resnet/result_0.txt",
    "gdsio_text": "storage/nvme-raid0/gdsio-read-w8.log",
    "reference_models": "reference/models.csv",
    "reference_gpus": "reference/gpus.csv",
    "slo_policies": "reference/slo.yaml",
    "capacity_scenarios": "reference/scenarios/vision-and-chat.yaml",
    CONTEXT: "inference/h100-bm-01/run.yaml",
}
COMMITTED_SEEDS = {  # label -> file committed under the project's raw/ (not written by generate)
    "reference_datasets": "reference/datasets.csv",
    "reference_checkpoint_bytes": "reference/checkpoint_bytes.csv",
    CONVENTIONS: "reference/path_conventions.yaml",
}


def label_of(seed_label: str) -> str:
    """The format name of a seed label ('tf_cnn_log (horovod)' -> 'tf_cnn_log')."""
    return seed_label.split(" (")[0]


def seeds() -> dict[str, Seed]:
    """label -> one valid file of that format."""
    sample = generate.all_files()
    found = {label: Seed(label, path, sample[path].encode()) for label, path in
             SAMPLE_SEEDS.items()}
    for label, path in COMMITTED_SEEDS.items():
        if (PROJECT / "raw" / path).is_file():
            found[label] = Seed(label, path, (PROJECT / "raw" / path).read_bytes())
    for label, (path, text) in synthetic_files().items():
        found[label] = Seed(label, path, text.encode())
    return found


def synthetic_files() -> dict[str, tuple[str, str]]:
    """label -> (relpath, content) for formats the sample raw root has no file of."""
    return {
        "elbencho_text": ("storage/nvme-raid0/elbencho-read.txt", ELBENCHO_TEXT),
        "elbencho_csv": ("storage/nvme-raid0/elbencho-read.csv", ELBENCHO_CSV),
        "fio_normal": ("storage/vast-01/fio-randrw.out", FIO_NORMAL),
        "fio_terse": ("storage/vast-01/fio-terse.out", fio_terse_line()),
        "mlperf_storage_summary": (f"{MLPERF}/run1/host01/summary.json", mlperf_summary()),
        "mlperf_storage_epochs": (f"{MLPERF}/run1/host01/per_epoch_stats.json", MLPERF_EPOCHS),
        "mlperf_storage_report": (f"{MLPERF}/mlperf_storage_report.json", mlperf_report()),
        "model_analyzer_checkpoint": ("inference/h100-bm-01/ma-export/checkpoints/0.ckpt",
                                      ma_checkpoint()),
    }


ELBENCHO_TEXT = """\
ISO DATE: 2026-10-16T10:00:00+0000
LABEL: nvme-seqread
COMMAND LINE: "elbencho" "-t" "16" "-b" "1m" "-s" "10g" "--iodepth=4" "--direct" "-r" \
"/dev/nvme0n1"

OPERATION   RESULT TYPE         FIRST DONE   LAST DONE
=========== ================    ==========   =========
READ        Elapsed time     :    1m2.345s    1m5.000s
            IOPS             :       24000       23500
            Throughput MB/s  :       24000       23500
            Total MiB        :     1498000     1527500
            IO latency       : [ min=123us avg=2.65ms max=1.20s ]
            IO lat % us      : [ 1%<=100 50%<=900 99%<=5000 ]
---
"""

ELBENCHO_CSV = (
    "ISO date,label,path type,paths,hosts,threads,dirs,files,file size,block size,"
    "direct IO,random,random aligned,IO depth,shared paths,truncate,operation,"
    "time ms [first],time ms [last],IOPS [first],IOPS [last],MiB/s [first],MiB/s [last],"
    "rwmix read IOPS [first],rwmix read IOPS [last],rwmix read MiB/s [first],"
    "rwmix read MiB/s [last],IO lat us [min],IO lat us [avg],IO lat us [max],version,"
    "command\n"
    "2026-10-16T10:05:00.000+0000,,bdev,2,1,16,,,10737418240,1048576,1,0,0,4,0,0,READ,"
    "64000,65000,24000,23500,24000,23500,,,,,123,2650.5,1200000,3.0-1,\"elbencho -r\"\n"
    "2026-10-16T10:07:00.000+0000,,bdev,2,1,16,,,10737418240,4096,1,1,1,8,0,0,WRITE,"
    "30000,31000,400000,390000,1562,1523,,,,,20,81.5,9000,3.0-1,\"elbencho -w --rand\"\n")

FIO_NORMAL = (
    "j: (g=0): rw=randrw, bs=(R) 4096B-4096B, (W) 8192B-8192B, (T) 4096B-4096B, "
    "ioengine=libaio, iodepth=8\nfio-3.35\nStarting 1 process\n"
    "j: (groupid=0, jobs=1): err= 0: pid=1: Mon Jan  1 00:00:00 2024\n"
    + "".join(f"  {d}: IOPS=1000, BW=8000KiB/s (8192kB/s)(7813KiB/1000msec)\n"
              "    clat (usec): min=10, max=2000, avg=100.50, stdev=20.00\n"
              "     lat (usec): min=11, max=2001, avg=101.50, stdev=20.00\n"
              "    clat percentiles (usec):\n"
              "     |  1.00th=[   12], 50.00th=[   99], 99.00th=[  500]\n"
              for d in ("read", "write"))
    + "  cpu          : usr=1.00%, sys=2.00%, ctx=1, majf=0, minf=1\n"
      "     issued rwts: total=1000,2000,0,0 short=0,0,0,0 dropped=0,0,0,0\n"
      "\nRun status group 0 (all jobs):\n   READ: bw=1MiB/s\n")


def fio_terse_line() -> str:
    """A terse v3 line (fio's stat.c layout): read and write blocks, CPU, depths, one disk."""
    def block(io_kib: int, iops: int, clat_mean: float) -> list[object]:
        fields: list[object] = [io_kib, io_kib // 2, iops, 2000, 1, 2, 1.5, 0.1, 3, 40,
                                clat_mean, 2.0, "50.000000%=10", "99.000000%=20"]
        return fields + ["0%=0"] * 18 + [4, 42, clat_mean + 1.5, 2.0, 0, 0, "0.000000%",
                                         0.0, 0.0]
    tail = ["1.500000%", "2.500000%", 10, 0, 5] + ["0.0%"] * 7 + ["0.00%"] * 22
    fields = [3, "fio-3.35", "job", 0, 0, *block(8192, 4096, 5.0), *block(4096, 2048, 7.0),
              *tail, "nvme0n1", 1, 2, 3, 4, 5, 6, 7, "99.00%"]
    return ";".join(map(str, fields)) + "\n"


MLPERF = "storage/mlperf-01/unet3d-h100/runs"


def mlperf_summary() -> str:
    return json.dumps({
        "model": "unet3d", "start": "2026-10-16T09:00:00.000000",
        "end": "2026-10-16T09:15:07.311682", "num_accelerators": 8, "num_hosts": 1,
        "hostname": "host01", "epochs": 3, "num_files_train": 4200, "num_files_eval": 0,
        "num_samples_per_file": 1,
        "metric": {
            "train_au_percentage": [93.1, 93.9, 92.9], "train_au_mean_percentage": 93.3,
            "train_au_stdev_percentage": 0.43, "train_au_meet_expectation": "success",
            "train_throughput_samples_per_second": [702.5, 713.1, 708.8],
            "train_throughput_mean_samples_per_second": 708.1,
            "train_throughput_stdev_samples_per_second": 4.3,
            "train_io_mean_MB_per_second": 99104.2, "train_io_stdev_MB_per_second": 594.5,
        }}, indent=4)


MLPERF_EPOCHS = json.dumps({
    str(n): {"start": f"2026-10-16T09:0{n}:00.000000", "end": f"2026-10-16T09:0{n}:59.000000",
             "duration": f"{170 + n}.25", "block1": {"duration": f"{169 + n}.5"},
             **({"ckpt1": {"duration": "0.61"}} if n == 3 else {})}
    for n in (1, 2, 3)}, indent=4)


def mlperf_report() -> str:
    runs = {f"result_unet3d_1_8accperclient_h100_iter{i}_2026101609{i}0": {
        "model": "unet3d", "accelerator": "h100", "train_num_accelerators": "8",
        "train_throughput_samples_per_second": 708.1 + i,
        "train_throughput_MB_per_second": 99104.2 + i, "num_files_train": 4200,
        "num_samples_per_file": 1} for i in range(3)}
    return json.dumps({"overall": {"num_benchmark_runs": 3,
                                   "train_throughput_mean_samples_per_second": 709.1,
                                   "train_throughput_mean_MB_per_second": 99105.2},
                       "runs": runs}, indent=4)


def ma_checkpoint() -> str:
    def metric(tag: str, value: object) -> list:
        return [tag, {"_value": value, "_timestamp": 0}]

    config = {"_triton_env": {}, "_model_run_configs": [
        {"_model_name": "ckpt_model", "_composing_config_variants": [],
         "_model_config_variant": {"variant_name": "ckpt_model_config_0", "cpu_only": False,
                                   "model_config": {"name": "ckpt_model", "maxBatchSize": 8,
                                                    "instanceGroup": [{"count": 1,
                                                                       "kind": "KIND_GPU"}]}}}]}
    gpu = {"GPU-0": [metric("gpu_used_memory", 2300.0), metric("gpu_free_memory", 79000.0),
                     metric("gpu_utilization", 61.5), metric("gpu_power_usage", 410.0)]}

    def measurement(concurrency: int, throughput: float) -> dict:
        return {"_model_variants_name": "ckpt_model", "_gpu_data": gpu,
                "_model_config_measurements": [{
                    "_model_config_name": "ckpt_model_config_0",
                    "_model_specific_pa_params": {"batch-size": 1,
                                                  "concurrency-range": concurrency},
                    "_non_gpu_data": [metric("perf_throughput", throughput),
                                      metric("perf_latency_p99", 4.5 * concurrency),
                                      metric("perf_latency_avg", 3.9 * concurrency)]}]}

    state = {"ResultManager.results": {"_results": {"ckpt_model": {"ckpt_model_config_0": [
        config, {f"c{c}": measurement(c, 500.0 * c) for c in (1, 2, 4)}]}}},
        "ResultManager.server_only_data": {},
        "MetricsManager.gpus": {"GPU-0": {"name": "NVIDIA H100 80GB HBM3",
                                          "total_memory": 85899345920}}}
    return json.dumps(state, indent=2)
