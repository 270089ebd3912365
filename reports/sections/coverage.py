"""What the data does not cover: every gap the other sections found (demands not sized,
SLOs no configuration meets, extrapolations, views without data), and what the
measurements span, so a reader knows where the figures stop."""

from __future__ import annotations

from collections.abc import Sequence

from reports.data import columns, text
from reports.html import Section, esc, paragraph
from schemas.spec import quote_ident
from store.store import Store

SPANS = (("core", "inference_measurements", "gpu_model", "GPU models with inference sweeps"),
         ("core", "training_runs", "gpu_model", "GPU models with training runs"),
         ("core", "storage_measurements", "storage_system", "storage systems measured"))


def coverage(store: Store, sections: Sequence[Section]) -> Section:
    section = Section("coverage", "What the data does not cover")
    spans = []
    for schema, name, column, label in SPANS:
        found = _distinct(store, schema, name, column)
        if found is not None:
            spans.append(f"{label}: {', '.join(found) if found else 'none'}")
    if spans:
        section.add(paragraph("The measurements span: " + "; ".join(spans) + ". Anything "
                              "else (another GPU, another storage system) is not covered."))
    gaps = [g for s in sections for g in s.gaps]
    if gaps:
        section.add('<ul class="gaps">' + "".join(f"<li>{esc(g)}</li>" for g in gaps)
                    + "</ul>")
    else:
        section.add(paragraph("No gap found: every question above has data."))
    return section


def _distinct(store: Store, schema: str, name: str, column: str) -> list[str] | None:
    """The distinct values of a column (identifiers from this module, quoted); None when
    the table or column does not exist."""
    if column not in columns(store, schema, name):
        return None
    col = quote_ident(column)
    found = store.query(f"SELECT DISTINCT {col} AS v FROM {quote_ident(schema)}."
                        f"{quote_ident(name)} WHERE {col} IS NOT NULL ORDER BY 1")
    return [text(v) for v in found["v"].to_list()]
