# Two commands from a fresh machine: `make run`, then `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed
export DAGSTER_HOME := $(CURDIR)/.dagster

.PHONY: run test lint ui samples docs bench profile bench-lake bench-mlperf clean

$(INSTALLED): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	$(BIN)/python -c 'from bench.measure import compile_project; compile_project()'
	touch $(INSTALLED)

# written once: a dagster.yaml already there (pointing at PostgreSQL, say) is left as it is
$(DAGSTER_HOME)/dagster.yaml:
	mkdir -p $(DAGSTER_HOME)
	cp pipelines/dagster.yaml $@

## run: install, ingest raw/ into warehouse/warehouse.duckdb, print what was built
run: $(INSTALLED) $(DAGSTER_HOME)/dagster.yaml
	$(BIN)/sizing ingest

## test: install, lint, type-check every package, check the layer rules, then the whole
## test suite on TEST_WORKERS xdist workers (tests sharing a module or session fixture stay
## on one: tests/xdist_scheduling.py). Three on two cores, measured faster than two: a
## worker waiting on a process its test started (`sizing ingest`, a Dagster daemon,
## PostgreSQL) leaves its core to the others; four were no faster (docs/testing.md).
## Bytecode is written even where the machine says not to (PYTHONDONTWRITEBYTECODE): pytest
## keeps the test modules it rewrote for their asserts, and the next run's workers collect
## in 5 s instead of 9.
TEST_WORKERS ?= 3
test: $(INSTALLED)
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/lint-imports
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadgroup

## lint: ruff, the type checker and the layer rules (import contracts in pyproject.toml)
lint: $(INSTALLED)
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/lint-imports

## ui: the Dagster UI on http://127.0.0.1:3000 (runs, sensor and schedule live in .dagster/)
ui: $(INSTALLED) $(DAGSTER_HOME)/dagster.yaml
	$(BIN)/dagster dev -w workspace.yaml -h 127.0.0.1 -p 3000

## samples: rewrite the sample raw root from samples/generate.py
samples: $(INSTALLED)
	$(BIN)/python -m samples.generate raw

## docs: regenerate docs/warehouse.md from the table declarations
docs: $(INSTALLED)
	$(BIN)/python -m reports.docs > docs/warehouse.md

## bench: ingestion cost at 1k, 10k and 100k files against the naive floor (not part of make
## test; about 10 minutes); SIZES=1000,10000,100000 by default
SIZES ?= 1000,10000,100000
bench: $(INSTALLED)
	$(BIN)/python -m bench.run --sizes $(SIZES)

## profile: where a cold run's time goes, step by step (imports, Dagster, parse, validate,
## write, derived steps, checks, report); FILES=10000
profile: $(INSTALLED)
	$(BIN)/python -m bench.profile --files $(FILES)

## bench-lake: the DuckLake backend (private PostgreSQL) against the DuckDB file at 10k files,
## one writer and two at once, then the archive and the lake on a local S3 server (not part of
## make test; about 8 minutes); FILES=10000, STORAGE=folder,s3 (or one of them)
FILES ?= 10000
STORAGE ?= folder,s3
bench-lake: $(INSTALLED)
	$(BIN)/python -m bench.lake --files $(FILES) --storage $(STORAGE)

## bench-mlperf: labels and storage tables on a synthetic MLPerf Storage v1.0-shaped archive
## (not part of make test); RUNS=662 by default
RUNS ?= 662
bench-mlperf: $(INSTALLED)
	$(BIN)/python -m bench.mlperf_storage_archive --runs $(RUNS)

clean:
	rm -rf warehouse/*.duckdb warehouse/*.lock .dagster
