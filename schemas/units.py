"""The one units table: every conversion factor the project uses, declared once, named after
what it converts. Parsers convert at parse time; a sizing rule that reads a size as tools
quote it (a link in Gb/s, GPU memory in decimal GB) converts with the same factors.

Every factor is a multiplier: `value_in_X * X_TO_Y` is the value in Y. Dividing by it
converts the other way, and parsers divide where exactness matters: 120002 ms / S_TO_MS is
exactly 120.002 s, 120002 * MS_TO_S is not. A parser uses whichever of the two operations
it always used, so its output does not change by a bit.

Sizes: the binary prefixes (KiB, MiB, ...) are integers, so byte counts stay integers; the
decimal ones some tools write ("MB" = 1e6 bytes) are floats, as the tools mean them.
"""

from __future__ import annotations

# ---- sizes -----------------------------------------------------------------------------------
BINARY_PREFIX_BASE = 1024  # K, M, G ... as powers of 1024 (KiB, and fio's legacy KB)
DECIMAL_PREFIX_BASE = 1000  # K, M, G ... as powers of 1000 (kB, MB)

KIB_TO_BYTES = 1024
MIB_TO_BYTES = 1024**2
GIB_TO_BYTES = 1024**3
TIB_TO_BYTES = 1024**4
PIB_TO_BYTES = 1024**5

KB_TO_BYTES = 1e3  # decimal kilobytes, megabytes, ...
MB_TO_BYTES = 1e6
GB_TO_BYTES = 1e9
TB_TO_BYTES = 1e12
BYTES_TO_MB = 1e-6
BYTE_TO_BITS = 8
GBIT_TO_BYTES = GB_TO_BYTES / BYTE_TO_BITS  # network links are quoted in Gb/s
# A size's unit as tools print it ("80 GB", "11.92GiB"): decimal or binary prefixes
BYTE_UNITS = {"KB": KB_TO_BYTES, "MB": MB_TO_BYTES, "GB": GB_TO_BYTES, "TB": TB_TO_BYTES,
              "KiB": KIB_TO_BYTES, "MiB": MIB_TO_BYTES, "GiB": GIB_TO_BYTES,
              "TiB": TIB_TO_BYTES}
GB_PER_S_TO_BYTES_PER_S = 1e9  # decimal GB/s (nccl-tests algbw and busbw: 1 GB = 10^9 B)

# ---- times -----------------------------------------------------------------------------------
S_TO_MS = 1000.0
S_TO_US = 1e6
MS_TO_US = 1000.0
MS_TO_NS = 1e6
US_TO_NS = 1000.0

MS_TO_S = 1e-3
US_TO_S = 1e-6
US_TO_MS = 1e-3
NS_TO_US = 1e-3
NS_TO_MS = 1e-6

MIN_TO_S = 60.0
H_TO_S = 3600.0
D_TO_S = 86400.0

# ---- counts ----------------------------------------------------------------------------------
FRACTION_TO_PCT = 100.0
THOUSANDS = 1e3  # a count's 'k' suffix (fio's num2str: '11.9k')
MILLIONS = 1e6
BILLIONS = 1e9
TRILLIONS = 1e12
QUADRILLIONS = 1e15
