"""raw/reference/model_aliases.csv: the names harnesses write for a model, each mapped onto
its canonical name (and the precision the name implies, if any), recognised by its header
(alias, canonical_model and optionally precision; any order, any case).

Strict: an alias that names two models would put one model's sweeps under another's rule
without a trace, so a conflict (the same alias, up to case and separators, mapped to two
canonical models or two precisions) rejects the whole file, naming both lines.
"""

from __future__ import annotations

from parsers.base import FormatError, Parsed, SourceFile, csv_records, frame
from parsers.reference.inference_csv import _ReferenceCsv
from schemas.model_aliases import REFERENCE_MODEL_ALIASES, model_key


class ModelAliasesCsv(_ReferenceCsv):
    format = "reference_model_aliases"
    table = REFERENCE_MODEL_ALIASES
    numeric = ()
    optional = ("precision",)

    @property
    def columns(self) -> list[str]:
        return ["alias", "canonical_model"]

    def parse(self, src: SourceFile) -> Parsed:
        records = list(csv_records(src.text()))
        header = [h.lower() for h in records[0].cells]
        rows: list[dict[str, object]] = []
        seen: dict[str, tuple[str, str | None, int]] = {}  # key -> (canonical, precision, line)
        for rec in records[1:]:
            line = rec.number
            if len(rec.cells) != len(header):
                raise FormatError(f"line {line}: {len(rec.cells)} cells for {len(header)} "
                                  "columns")
            cells = dict(zip(header, rec.cells, strict=True))
            alias, canonical = cells["alias"].strip(), cells["canonical_model"].strip()
            precision = (cells.get("precision") or "").strip().lower() or None
            if not alias or not canonical:
                raise FormatError(f"line {line}: alias and canonical_model are both needed")
            key = model_key(alias)
            if not key:
                raise FormatError(f"line {line}: alias {alias!r} has no letter or digit")
            earlier = seen.get(key)
            if earlier and earlier[:2] != (canonical, precision):
                raise FormatError(
                    f"line {line}: {alias!r} is {canonical} at {precision or 'no precision'}, "
                    f"but line {earlier[2]} made it {earlier[0]} at "
                    f"{earlier[1] or 'no precision'}: one model per alias")
            seen.setdefault(key, (canonical, precision, line))
            rows.append({"alias": alias, "canonical_model": canonical, "precision": precision,
                         "alias_key": key, "source_line": line})
        if not rows:
            raise FormatError(f"header only: {src.name} lists no rows")
        return Parsed({self.table.key: frame(rows, self.table)})
