"""The warehouse resource: where raw files are read from and the warehouse written to."""

from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any, cast

import dagster as dg
from pydantic import Field, PrivateAttr

from assets.partitions import PARTITION_TAG
from ingest import mirror
from ingest.discovery import FoundFile, discover
from ingest.engine import DEFAULT_MAX_FILE_BYTES, DEFAULT_MAX_PARSE_SECONDS, Limits
from ingest.scope import Scope
from runtime import config
from runtime.spawn_pool import stop_every_pool
from schemas.ledger import INGESTION_RUNS
from store import faults, s3, stopping
from store.location import RunWriter, WarehouseLocation, written
from store.lock import DEFAULT_WAIT_S
from store.resident import holds_more_than, resident_mb
from store.store import Store
from transforms import freshness, tunables
from transforms.quality.gx_worker import GxWorker


class HandedListing:
    """The listing `sizing ingest` made to decide whether to run at all (ingest/unchanged.py),
    handed to its run as the `handed_listing` resource: a 100,000-file root is listed once.
    The definitions' own is empty (the sensor's and the schedule's runs list the root)."""

    def __init__(self, raw_root: Path | None = None, found: list[FoundFile] | None = None):
        self._root = raw_root.resolve() if raw_root is not None else None
        self._found = found

    def take(self, raw_root: Path) -> list[FoundFile] | None:
        """The listing of `raw_root`, once; None when none was handed over for it."""
        if self._root is None or self._root != raw_root.resolve():
            return None
        found, self._found = self._found, None
        return found


def no_handed_listing() -> dg.ResourceDefinition:
    return dg.ResourceDefinition.hardcoded_resource(
        HandedListing(), "The listing `sizing ingest` hands to its run (none here).")


class Warehouse(dg.ConfigurableResource):
    """Paths default to SIZING_RAW_DIR / SIZING_WAREHOUSE, then raw/ and
    warehouse/warehouse.duckdb, resolved when a run starts."""

    raw_dir: str | None = None
    # the root the run records when raw_dir is a copy of it (an s3:// root's mirror)
    raw_name: str | None = None
    path: str | None = None  # a DuckDB file, or ducklake:postgres:<conninfo> (scale-out)
    partitions: list[str] | None = None  # sub-folders of the raw root this run owns
    max_file_bytes: int | None = None
    max_parse_seconds: float | None = None
    lock_wait_s: float | None = None
    purge_missing: bool = False  # drop the rows of files no longer under the raw root
    keep_missing: bool = False  # keep rows of files gone from disk in core and sizing tables
    # the run's checks' GX worker (transforms/quality/gx_worker.py): started, deferred and
    # released by the steps; `sizing ingest` hands in the one it may have started already
    gx_worker: dg.ResourceDependency[GxWorker] = Field(
        default_factory=lambda: cast(Any, GxWorker()),  # a dependency's type is Dagster's
        description="The run's Great Expectations worker process.")
    # In a run, every step writes to one staging copy, published once when the run ends
    # (teardown): readers see the whole previous warehouse or the whole new one.
    _run: RunWriter | None = PrivateAttr(default=None)
    _location: WarehouseLocation | None = PrivateAttr(default=None)  # `path`, parsed once
    _in_run: bool = PrivateAttr(default=False)
    _run_id: str | None = PrivateAttr(default=None)
    _run_partition: str | None = PrivateAttr(default=None)  # a partitioned run's key
    _listing: list[FoundFile] | None = PrivateAttr(default=None)
    _step: str | None = PrivateAttr(default=None)  # the step that last read or wrote
    # the process's resident MB when the run's connection was last (re)opened: what it has
    # grown by since is about what DuckDB could give back (`release_memory`)
    _held_at_open_mb: float | None = PrivateAttr(default=None)

    def raw_root(self) -> Path:
        """The folder the run reads: the raw root, or the local mirror of an s3:// root
        (ingest/mirror.py; `setup_for_execution` refreshes it for a Dagster run)."""
        setting = config.raw_setting(self.raw_dir)
        if s3.is_s3(setting):
            return mirror.mirror_folder(self.file().parent, setting)
        return config.raw_dir(self.raw_dir)

    def recorded_root(self) -> str | None:
        """What the run records as its root when it is not the folder it reads: the s3://
        root of a mirror (None: the folder itself)."""
        setting = config.raw_setting(self.raw_dir)
        return self.raw_name or (mirror.canonical(setting) if s3.is_s3(setting) else None)

    def remote_listing(self) -> list[mirror.Listed] | None:
        """An s3:// root's entries from a listing of the bucket (nothing fetched); None for
        a folder. The sensor fingerprints these: the mirror is only refreshed by a run."""
        setting = config.raw_setting(self.raw_dir)
        return mirror.listed(setting) if s3.is_s3(setting) else None

    def listing(self, keep: bool = False, handed: HandedListing | None = None
                ) -> list[FoundFile]:
        """Every entry under the raw root (`handed`: the one `sizing ingest` listed, if any,
        for a run over the whole root). `keep`: also hold it for the run's raw step
        (`take_listing`), so the observation of the raw root fingerprints the very listing
        the raw step ingests, and a 100,000-file root is not listed twice."""
        root = self.raw_root()
        found = handed.take(root) if handed is not None and not self.scope().partitions \
            else None
        if found is None:
            found = discover(root, self.scope().partitions) if root.is_dir() else []
        if keep:
            self._listing = found
        return found

    def take_listing(self) -> list[FoundFile] | None:
        """The listing the observation kept for this run, once (None: list again)."""
        found, self._listing = self._listing, None
        return found

    def location(self) -> WarehouseLocation:
        if self._location is None:
            self._location = config.warehouse_location(self.path)
        return self._location

    def file(self) -> Path:
        """The DuckDB file; for a lake, the default file's place, whose folder holds the
        report (reports/paths.py)."""
        return self.location().local_path

    def scope(self) -> Scope:
        """The partitions set in the resource's config (`sizing ingest --partition`), else
        the run's partition key (a Dagster run of one sub-folder: assets/partitions.py),
        else SIZING_PARTITIONS; none: the whole root."""
        chosen = self.partitions if self.partitions is not None or self._run_partition is None \
            else [self._run_partition]
        return Scope(tuple(config.partitions(chosen)))

    def limits(self) -> Limits:
        return Limits(
            config.max_file_bytes(self.max_file_bytes) or DEFAULT_MAX_FILE_BYTES,
            config.max_parse_seconds(self.max_parse_seconds) or DEFAULT_MAX_PARSE_SECONDS,
            self.purge_missing,
            self.keep_missing,
            config.parse_workers(),
        )

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        self._in_run = True
        self._run_id = context.run_id
        run = context.dagster_run
        self._run_partition = run.tags.get(PARTITION_TAG) if run is not None else None
        setting = config.raw_setting(self.raw_dir)
        if s3.is_s3(setting):  # a run the sensor, the schedule or the UI launched
            refreshed = mirror.refresh(setting, self.file().parent, self.scope())
            if context.log is not None:
                context.log.info(refreshed.summary())
        # which stop signal arrives, whatever handler Dagster has installed (a run the
        # sensor, the schedule or the UI launched: `sizing ingest` watches already)
        stopping.watch(handlers=False)

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        """The run is over: publish what its steps committed (a step that failed rolled
        its own writes back, so what is committed is whole). A run asked to stop (SIGINT,
        SIGTERM, or terminated from the UI) publishes nothing: its workers are ended, its
        staging copy removed; on a lake, whose steps committed as they went, the derived
        tables it did not rebuild are marked stale (docs/reliability.md, "Stopping")."""
        stopped = self._stopped(context)
        if stopped is not None:
            stop_every_pool()
            self.gx_worker.release()
        if self._run is None:
            return
        run, self._run = self._run, None
        try:
            if stopped is not None and run.store is not None \
                    and not self.location().publishes_whole_runs:
                _mark_not_rebuilt_stale(run.store, self._run_id or "", stopped)
        finally:
            outcome = run.close(publish=stopped is None)
        if outcome is not None and outcome.beside and context.log:
            context.log.warning(f"not published over {self.file()}: {outcome.beside}; "
                                f"this run's warehouse is {outcome.published}")

    def _stopped(self, context: dg.InitResourceContext) -> str | None:
        """Why the run must not publish: the stop signal, or a termination asked for in
        the UI (Dagster marks the run canceling before it interrupts it); None if neither."""
        if (signum := stopping.requested()) is not None:
            return stopping.name(signum)
        found = context.instance.get_run_by_id(self._run_id) \
            if context.instance is not None and self._run_id else None
        if found is not None and found.status == dg.DagsterRunStatus.CANCELING:
            return "a termination request"
        return None

    def _step_begins(self) -> None:
        """Each time a step of a run reads or writes: a run asked to stop goes no further.
        Dagster raises the stop inside the step it interrupts, but one arriving while it
        only notes interrupts can be lost (store/stopping.py): raised here, its step fails
        as interrupted and no later step starts."""
        if not self._in_run:
            return
        step = _current_step()
        if step is not None and step != self._step:
            self._step = step
            faults.checkpoint(faults.step_point(step))
        if stopping.requested() is not None:
            raise KeyboardInterrupt

    def _wait_s(self) -> float:
        return config.lock_wait_s(self.lock_wait_s) or DEFAULT_WAIT_S

    @contextmanager
    def writer(self, serialized: bool = False) -> Iterator[Store]:
        """In a run: the run's store, opened on first use (a staging copy of the file, or
        the lake). Outside one: a staged copy under the writer lock, published atomically
        when the block succeeds. `serialized`: derived tables are rebuilt in the block, one
        run at a time on a lake (store/lake_run.py); the file backend has one writer."""
        self._step_begins()
        if not self._in_run:  # tests, tools: the block's own writer, done when it ends
            run = self._new_writer()
            with written(run) as store, run.serialized() if serialized else nullcontext():
                yield store
            return
        if self._run is None:
            self._run = self._new_writer()
            self._run.open()
            self._held_at_open_mb = resident_mb()
        assert self._run.store is not None
        with self._run.serialized() if serialized else nullcontext():
            yield self._run.store

    def _new_writer(self) -> RunWriter:
        # a run waits for others' locks as it opens: a GX worker `sizing ingest` started
        # ahead is let go meanwhile (a file's run from the CLI waits there, at its lock)
        return self.location().writer(self._wait_s(), self.scope().partitions, self._run_id,
                                      on_wait=self.gx_worker.release)

    def release_memory(self, above_mb: float | None = None, grown_mb: float = 0) -> bool:
        """Between two steps of a run on a file: reopen the run's DuckDB connection, so the
        memory DuckDB kept for reuse goes back to the system (store/publish.py). With
        `above_mb`, only when the process holds more than that and has grown by more than
        `grown_mb` since the connection was opened (a reopen costs about 50 ms on a
        100,000-file warehouse; most steps of a small run keep little, and a process large
        for other reasons, one that ran many runs, gains nothing from it). Returns whether
        it reopened."""
        if self._run is None:
            return False
        if above_mb is not None and not (holds_more_than(above_mb) and self._grown_by(grown_mb)):
            return False
        reopened = self._run.reopen()
        if reopened:
            self._held_at_open_mb = resident_mb()
        return reopened

    def _grown_by(self, mb: float) -> bool:
        """The process holds more than `mb` over what it held when the run's connection was
        last opened (True when either cannot be read: reopening is always safe)."""
        held = resident_mb()
        return held is None or self._held_at_open_mb is None \
            or held - self._held_at_open_mb > mb

    @contextmanager
    def reader(self) -> Iterator[Store]:
        """In a run that has written: the run's own store (its checks and report read what
        it is about to publish). Otherwise the published file, read-only."""
        self._step_begins()
        if self._run is not None and self._run.store is not None:
            yield self._run.store
            return
        store = self.location().open(read_only=True)
        try:
            yield store
        finally:
            store.close()


def _current_step() -> str | None:
    """The key of the step running in this thread, if any."""
    for kind in (dg.AssetExecutionContext, dg.AssetCheckExecutionContext):
        try:
            return kind.get().op_execution_context.get_step_execution_context().step.key
        except dg.DagsterInvariantViolationError:
            continue
    return None


def _mark_not_rebuilt_stale(store: Store, run_id: str, why: str) -> None:
    """A lake run stopped after its raw step committed: each derived table it did not
    rebuild holds what older raw rows gave, so it is stale until a run rebuilds it."""
    recorded = store.query(f"SELECT count(*) AS n FROM {INGESTION_RUNS.qualified} "
                           "WHERE run_id = ?", [run_id]) \
        if INGESTION_RUNS.key in store.table_keys() else None
    if recorded is None or not recorded["n"][0]:  # stopped before its raw step committed
        return
    rows = freshness.status(store)
    behind = rows.filter(rows["built_run_id"].fill_null("") != run_id)["table_name"]
    if behind.len():
        freshness.mark_stale(store, behind.to_list(), run_id,
                             f"run {run_id[:8]} was stopped ({why}) before rebuilding it")


def _field(tunable: tunables.Tunable) -> Any:
    """A resource field: the tunable's default, bounds and description."""
    bounds = tunable.bounds
    return Field(default=tunable.default, description=tunable.description,
                 gt=bounds.get("gt"), ge=bounds.get("ge"), lt=bounds.get("lt"),
                 le=bounds.get("le"))


class SizingRules(dg.ConfigurableResource):
    """Tunables of the sizing rules and of the checks that judge their inputs; each field's
    default, bounds and description are declared in transforms/tunables.py."""

    knee_fraction: float = _field(tunables.KNEE_FRACTION)
    littles_law_tolerance: float = _field(tunables.LITTLES_LAW_TOLERANCE)
    max_scaling_efficiency: float = _field(tunables.MAX_SCALING_EFFICIENCY)
    kv_bound_tolerance: float = _field(tunables.KV_BOUND_TOLERANCE)
    max_step_drift_pct: float = _field(tunables.MAX_STEP_DRIFT_PCT)

    @classmethod
    def defaults(cls) -> dict[str, float]:
        """Every tunable's default, by field name."""
        return {name: field.default for name, field in cls.model_fields.items()}
