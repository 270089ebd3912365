"""raw/reference/llm_models.csv: LLM architectures for the KV-cache rule, recognised by its
header like the other reference CSVs (any order, any case; `aliases` and `source`
optional).

Strict, unlike models.csv: a wrong number in an architecture would size every GPU wrongly
without a trace, so one bad cell, a missing value or a label used twice (as a model or an
alias, case-insensitively) rejects the whole file, naming the line.
"""

from __future__ import annotations

from parsers.base import (
    FormatError,
    Parsed,
    SourceFile,
    csv_records,
    frame,
    number,
    whole_number,
)
from parsers.reference.inference_csv import _ReferenceCsv
from schemas.kv_cache import REFERENCE_LLM_MODELS

OPTIONAL = ("aliases", "source")
WHOLE = ("layers", "attention_heads", "kv_heads", "head_dim", "hidden_size",
         "max_context_tokens")


class LlmModelsCsv(_ReferenceCsv):
    format = "reference_llm_models"
    table = REFERENCE_LLM_MODELS
    numeric = ("parameters_billions", *WHOLE)
    optional = OPTIONAL

    def parse(self, src: SourceFile) -> Parsed:
        records = list(csv_records(src.text()))
        header = [h.lower() for h in records[0].cells]
        rows: list[dict[str, object]] = []
        seen: dict[str, int] = {}  # a label (model or alias), lower case -> its line
        for rec in records[1:]:
            line = rec.number
            if len(rec.cells) != len(header):
                raise FormatError(f"line {line}: {len(rec.cells)} cells for {len(header)} "
                                  "columns")
            cells = dict(zip(header, rec.cells, strict=True))
            row: dict[str, object] = {"model": _label(cells["model"], "model", line)}
            for name in self.numeric:
                row[name] = _positive(cells[name], name, line, whole=name in WHOLE)
            if row["kv_heads"] > row["attention_heads"]:  # type: ignore[operator]
                raise FormatError(f"line {line}: kv_heads {row['kv_heads']} is more than "
                                  f"attention_heads {row['attention_heads']}")
            aliases = [a.strip() for a in (cells.get("aliases") or "").split(";") if a.strip()]
            for label in (row["model"], *aliases):
                key = str(label).lower()
                if key in seen:
                    raise FormatError(f"line {line}: {label!r} already names the model on "
                                      f"line {seen[key]}: one architecture per label")
                seen[key] = line
            rows.append({**row, "aliases": ";".join(aliases) or None,
                         "source": cells.get("source") or None, "source_line": line})
        if not rows:
            raise FormatError(f"header only: {src.name} lists no rows")
        return Parsed({self.table.key: frame(rows, self.table)})


def _label(cell: str, column: str, line: int) -> str:
    if not cell:
        raise FormatError(f"line {line}: {column} is empty")
    return cell


def _positive(cell: str, column: str, line: int, whole: bool) -> float | int:
    """A number above 0 (a whole one for the architecture's counts); anything else, or no
    value, rejects the file."""
    try:
        value = (whole_number if whole else number)(cell or None)
    except ValueError as exc:
        raise FormatError(f"line {line}: {column}: {exc}") from None
    if value is None:
        raise FormatError(f"line {line}: {column} is missing")
    if not 0 < value < float("inf"):
        raise FormatError(f"line {line}: {column} must be above 0, not {cell!r}")
    return value
