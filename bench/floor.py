"""The naive floor of ingesting an archive: in one process, read every file, hash it, and
parse it with the fastest generic reader (polars.read_csv for .csv, json.loads for .json,
splitting lines for the rest). No detection, no validation, no database: what reading and
parsing the same bytes costs at least, to hold `sizing ingest` against.

    python -m bench.floor ARCHIVE
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import sys
import time
from pathlib import Path

import polars as pl


def floor(root: Path) -> dict:
    started = time.perf_counter()
    counts = {"csv": 0, "json": 0, "other": 0, "unparsed": 0}
    size = 0
    for folder, _, names in os.walk(root):
        for name in names:
            data = Path(folder, name).read_bytes()
            size += len(data)
            hashlib.sha256(data).hexdigest()
            kind = "csv" if name.endswith(".csv") else "json" if name.endswith(".json") \
                else "other"
            try:
                if kind == "csv":
                    pl.read_csv(io.BytesIO(data), infer_schema_length=0, truncate_ragged_lines=True)
                elif kind == "json":
                    json.loads(data)
                else:
                    data.decode("utf-8", "replace").splitlines()
                counts[kind] += 1
            except Exception:  # noqa: BLE001 - a file the generic reader refuses still counts
                counts["unparsed"] += 1
    return {"wall_s": round(time.perf_counter() - started, 2), "files": sum(counts.values()),
            "mb": round(size / 1e6, 1), **counts}


if __name__ == "__main__":
    print(json.dumps(floor(Path(sys.argv[1]))))
