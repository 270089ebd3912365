"""The composition root: Dagster definitions, jobs, sensors, schedules and the CLI."""

import os

# polars's allocator (jemalloc) keeps memory it freed for reuse, by default for seconds: a
# run's steps each read a large table and let it go, so the process carried hundreds of MB
# it no longer used into the next step. Set before polars is first imported (here: every
# entry point is in this package), it hands them back at once; inherited by the parse
# workers. Measured at 100,000 files: peak 1,116 -> 1,058 MB, end of run 761 -> 591 MB,
# no slower (docs/performance.md).
os.environ.setdefault("_RJEM_MALLOC_CONF", "dirty_decay_ms:0,muzzy_decay_ms:0")
