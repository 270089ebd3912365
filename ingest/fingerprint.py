"""A fingerprint of the code that derives tables, so a no-op run can skip rebuilding them
unless the code changed since the last run (an upgrade must still rebuild)."""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[1]
_DERIVING = ("transforms", "assets", "reports", "schemas")


@cache
def code_fingerprint() -> str:
    digest = hashlib.sha256()
    for package in _DERIVING:
        for path in sorted((_ROOT / package).rglob("*")):
            if path.suffix in (".py", ".sql") and path.is_file():
                digest.update(path.relative_to(_ROOT).as_posix().encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()[:16]
