"""The composition root: Dagster definitions, jobs, sensors, schedules and the CLI."""

import os

# polars's allocator (jemalloc) keeps memory it freed for reuse, by default for seconds: a
# run's steps each read a large table and let it go, so the process would carry hundreds of
# MB it no longer uses into the next step. Set before polars is first imported (here: every
# entry point is in this package), it hands them back at once, at no cost in time
# (docs/performance.md); inherited by the parse workers.
os.environ.setdefault("_RJEM_MALLOC_CONF", "dirty_decay_ms:0,muzzy_decay_ms:0")
