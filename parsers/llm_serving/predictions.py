"""The predictions CSV (docs/predictions.md): one row per predicted configuration and load,
from any predictor (AIConfigurator, Vidur, an in-house model), recognised by its header
(`predictor` beside `concurrency` and a predicted value), columns in any order and case.

Predictions go to raw.llm_predictions only, never to the measured serving tables. A row
whose cells cannot be read is held back with its line; the schema holds back the rest
(a TTFT of 0, a TPOT above a minute: schemas/llm_predictions.py).
"""

from __future__ import annotations

from collections.abc import Callable

from parsers.base import CsvLine, FormatError, Parsed, RowProblem, SourceFile, csv_records, frame
from parsers.gpu_names import gpu_label
from parsers.llm_serving.common import lower_text, text
from parsers.numbers import NumberError, number, whole_number
from schemas.llm_predictions import RAW_LLM_PREDICTIONS, SERVING_MODES
from schemas.spec import Table

REQUIRED = ("predictor", "model", "gpu_model", "input_tokens", "output_tokens", "concurrency")
PREDICTED = ("ttft_ms", "tpot_ms", "output_tokens_per_s_per_gpu")
WHOLE = ("tensor_parallel", "pipeline_parallel", "expert_parallel", "prefill_workers",
         "prefill_gpus", "decode_workers", "decode_gpus", "input_tokens", "output_tokens",
         "concurrency")
TEXT = ("predictor", "model", "engine_version")
_MODES = {"": "aggregated", "agg": "aggregated", "disagg": "disaggregated",
          **{m: m for m in SERVING_MODES}}


class LlmPredictionsCsv:
    format = "llm_predictions_csv"
    version = 1
    tables: tuple[Table, ...] = (RAW_LLM_PREDICTIONS,)

    def sniff(self, src: SourceFile) -> bool:
        first = src.head(2048).lstrip("\ufeff").split("\n", 1)[0].lower()
        names = {c.strip().strip('"') for c in first.split(",")}
        return {"predictor", "concurrency"} <= names and bool(names & set(PREDICTED))

    def parse(self, src: SourceFile) -> Parsed:
        records = csv_records(src.text().lstrip("\ufeff"))
        header = next(records, None)
        if header is None:
            raise FormatError("empty file: no header")
        names = [c.lower() for c in header.cells]
        missing = [c for c in REQUIRED if c not in names]
        if missing:
            raise FormatError(f"header lacks {', '.join(missing)}: not a predictions CSV "
                              "(docs/predictions.md)")
        rows: list[dict[str, object]] = []
        problems: list[RowProblem] = []
        for line in records:
            try:
                rows.append(_row(names, line))
            except (ValueError, NumberError) as exc:
                problems.append(RowProblem(f"line {line.number}", str(exc),
                                           RAW_LLM_PREDICTIONS.key))
        if not rows and not problems:
            raise FormatError(f"header only: {src.name} lists no predictions")
        return Parsed({RAW_LLM_PREDICTIONS.key: frame(rows, RAW_LLM_PREDICTIONS)}, problems)


def _row(names: list[str], line: CsvLine) -> dict[str, object]:
    if len(line.cells) != len(names):
        raise ValueError(f"{len(line.cells)} cells where the header has {len(names)}")
    cells = dict(zip(names, line.cells, strict=True))
    mode = _MODES.get(cells.get("serving_mode", "").lower())
    if mode is None:
        raise ValueError(f"serving_mode {cells['serving_mode']!r} is neither aggregated nor "
                         "disaggregated")
    row: dict[str, object] = {"source_line": line.number, "serving_mode": mode,
                              "gpu_model": gpu_label(cells["gpu_model"]),
                              "engine": lower_text(cells.get("engine")),
                              "precision": lower_text(cells.get("precision")),
                              **{c: text(cells.get(c)) for c in TEXT},
                              **{c: _cell(whole_number, cells, c) for c in WHOLE},
                              **{c: _cell(number, cells, c) for c in PREDICTED}}
    empty = [c for c in REQUIRED if row[c] is None]
    if empty:
        raise ValueError(f"no {', '.join(empty)}")
    if all(row[c] is None for c in PREDICTED):
        raise ValueError(f"nothing predicted: {', '.join(PREDICTED)} are all empty")
    return row


def _cell(read: Callable[[str | None], float | int | None], cells: dict[str, str],
          column: str) -> float | int | None:
    """A numeric cell, or the row's ValueError naming its column."""
    try:
        return read(cells.get(column) or None)
    except (ValueError, NumberError) as exc:
        raise ValueError(f"{column}: {exc}") from None
