"""A GPU name as a driver reports it ('NVIDIA A100-SXM4-40GB', 'NVIDIA H100 80GB HBM3') as
the warehouse's GPU label: '<model>-<memory>GB' (raw/reference/gpus.csv, run.yaml
'gpu_model': 'A100-40GB', 'H100-80GB'), so a GPU a tool names itself groups, and joins the
reference, with the same GPU a person labelled.

Only data-centre models are relabelled: their model is one short token (A100, H100, L40S,
T4, GB200, MI300X) and their memory tells the variants apart. Other names (TITAN RTX,
GeForce RTX 4090, RTX A6000) are kept as the driver wrote them: no guessed label.
"""

from __future__ import annotations

import re

from schemas.units import GIB_TO_BYTES

# A data-centre model token: one letter (or GB, GH, MI) and at most three digits, a suffix
# letter allowed (L40S, A10G, MI300X). Four digits are workstation cards (A6000, P5000).
_MODEL = re.compile(r"(?<!\w)((?:GB|GH|MI|[ABHKLMPTV])\d{1,3}[A-Z]?)(?!\w)")
_STATED_GB = re.compile(r"(\d{1,4})\s*GB\b", re.IGNORECASE)
# Memory sizes GPUs are sold with, in GB. A driver reports GiB less what ECC and the driver
# reserve (an L40S 'total_memory' is 44.99 GiB, a T4's 14.6): the smallest size sold at or
# above the reported size is the one on the box.
MARKETED_GB = (1, 2, 3, 4, 5, 6, 8, 10, 11, 12, 16, 20, 24, 32, 40, 48, 64, 80, 94, 96,
               128, 141, 144, 180, 186, 192, 256, 288)
# Reported sizes a little above a sold size (a rounding of the driver's) still count as it.
_SLACK = 1.01


def gpu_label(name: str | None, total_memory_bytes: float | None = None) -> str | None:
    """The warehouse label of a GPU the driver names `name`: '<model>-<memory>GB' for a
    data-centre model whose memory is known (from `total_memory_bytes`, else stated in the
    name), else the name as written (stripped); None for no name."""
    text = (name or "").strip()
    if not text:
        return None
    model = _MODEL.search(text.upper())
    memory = _marketed(total_memory_bytes) or _stated(text)
    if model is None or memory is None:
        return text
    return f"{model[1]}-{memory}GB"


def _marketed(total_bytes: float | None) -> int | None:
    """The memory size sold for a GPU reporting `total_bytes` (None when not positive)."""
    if total_bytes is None or not total_bytes > 0:
        return None
    gib = total_bytes / GIB_TO_BYTES
    return next((gb for gb in MARKETED_GB if gb * _SLACK >= gib), None)


def _stated(name: str) -> int | None:
    """The memory a name states ('A100-SXM4-40GB', 'H100 80GB HBM3'), when it states one."""
    found = _STATED_GB.search(name)
    return int(found[1]) if found else None
