"""docs/warehouse.md, generated from the table declarations in schemas/ (the same source as
the DDL, the DuckDB comments and the pandera schemas):

    python -m reports.docs > docs/warehouse.md      (make docs)

A test fails when the committed file differs from what this prints.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from dataclasses import dataclass

import schemas
from schemas.domains import domain_of, rules, unit_rule
from schemas.spec import Column, Table

SCHEMA_ORDER = ("raw", "core", "sizing")
LEDGER_FIRST = ("ingested_files", "quarantine", "ingestion_runs", "file_context")
@dataclass(frozen=True)
class Example:
    question: str
    sql: str


EXAMPLES = (
    Example("Best concurrency for a model, under each SLO policy",
            "SELECT gpu_model, config_variant, batch_size, system, slo_policy,\n"
            "       optimal_concurrency, throughput_per_s, latency_p95_ms, rule\n"
            "FROM sizing.inference_optimal_concurrency\n"
            "WHERE model = 'resnet50_trt' AND optimal_concurrency IS NOT NULL\n"
            "ORDER BY slo_policy, throughput_per_s DESC;"),
    Example("Throughput against p95 latency of every sweep point of a model",
            "SELECT config_variant, system, concurrency, throughput_per_s, latency_p95_ms,\n"
            "       source_file, source_line\n"
            "FROM core.inference_measurements\n"
            "WHERE model = 'bert_large_onnx' AND concurrency IS NOT NULL\n"
            "ORDER BY config_variant, system, concurrency;"),
    Example("Scaling of a GPU type: speedup and efficiency by GPU count",
            "SELECT model, system, virtualization, gpus, nodes, images_per_sec, speedup,\n"
            "       scaling_efficiency\n"
            "FROM sizing.training_scaling\n"
            "WHERE gpu_model = 'H100-80GB'\n"
            "ORDER BY model, system, gpus;"),
    Example("What a VM costs against bare metal",
            "SELECT model, gpu_model, gpus, vm_images_per_sec, bare_metal_images_per_sec,\n"
            "       overhead_pct\n"
            "FROM sizing.virtualization_overhead ORDER BY model, gpus;"),
    Example("Storage able to feed N GPUs (here 64) of a training configuration",
            "SELECT storage_system, model, dataset, gpu_model, gpus AS measured_gpus,\n"
            "       read_bytes_per_s_per_gpu / 1e6 AS mb_per_s_per_gpu,\n"
            "       storage_read_bandwidth_bytes_per_s / 1e9 AS storage_gb_per_s,\n"
            "       max_gpus_fed\n"
            "FROM sizing.training_storage_demand\n"
            "WHERE max_gpus_fed >= 64\n"
            "ORDER BY model, max_gpus_fed DESC;"),
    Example("Best bandwidth of each storage system, and how it was measured",
            "SELECT storage_system, direction, access,\n"
            "       best_bandwidth_bytes_per_s / 1e9 AS gb_per_s, tool, jobs, source_file\n"
            "FROM sizing.storage_capability ORDER BY storage_system, direction, access;"),
    Example("Checkpoint write time of each model on each storage system",
            "SELECT model, storage_system, checkpoint_bytes / 1e9 AS checkpoint_gb,\n"
            "       write_seconds\n"
            "FROM sizing.checkpoint_write ORDER BY model, write_seconds;"),
    Example("GPU memory rule: GB per billion parameters",
            "SELECT bytes_per_parameter, gb_per_billion_params, intercept_gb, r_squared,\n"
            "       model_names\n"
            "FROM sizing.gpu_memory_rule;"),
    Example("A capacity plan, counted by memory and by compute, and its evidence",
            "SELECT s.scenario, s.gpus_by_memory, s.gpus_by_compute, s.gpus_recommended,\n"
            "       s.servers_recommended, p.model, p.instances, p.evidence\n"
            "FROM sizing.capacity_plan_summary s\n"
            "JOIN sizing.capacity_plan p USING (scenario)\n"
            "ORDER BY s.scenario, p.model;"),
    Example("What did not load, and why",
            "SELECT source_file, target_table, location, reason FROM raw.quarantine\n"
            "ORDER BY source_file, location;"),
    Example("The schema, from the database itself",
            "SELECT schema_name, table_name, comment FROM duckdb_tables()\n"
            "WHERE schema_name IN ('raw', 'core', 'sizing') ORDER BY ALL;\n"
            "SELECT column_name, data_type, comment FROM duckdb_columns()\n"
            "WHERE schema_name = 'sizing' AND table_name = 'capacity_plan';"),
)


def all_tables() -> list[Table]:
    """Every table declared in a schemas/ module, each once, raw then core then sizing."""
    found: dict[str, Table] = {}
    for info in sorted(pkgutil.iter_modules(schemas.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"schemas.{info.name}")
        for value in vars(module).values():
            if isinstance(value, Table):
                found.setdefault(value.key, value)

    def order(table: Table) -> tuple:
        schema = SCHEMA_ORDER.index(table.schema) if table.schema in SCHEMA_ORDER else 9
        first = LEDGER_FIRST.index(table.name) if table.name in LEDGER_FIRST else 99
        return schema, first, table.name

    return sorted(found.values(), key=order)


def unit(column: Column) -> str:
    """The unit its name's suffix says (schemas/domains.py UNITS, the closed list)."""
    rule = unit_rule(column.name)
    return rule[1] if rule else ""


def domain(column: Column) -> str:
    """'0 to 1e13' for a numeric column (finite is implied), '' for the others."""
    found = domain_of(column)
    return "" if found is None else found.describe()


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def table_markdown(table: Table) -> list[str]:
    lines = [f"### `{table.key}`", "", table.description, "",
             "| column | type | unit | domain | null | meaning |", "|---|---|---|---|---|---|"]
    for c in table.all_columns:
        lines.append(f"| `{c.name}` | {c.duckdb_type} | {unit(c)} | {domain(c)} | "
                     f"{'yes' if c.nullable else 'no'} | {_cell(c.description)} |")
    present = set(table.column_names)
    held = [d for i in table.invariants if (d := i.describe(present))]
    if held:
        lines += ["", "Invariants (a row that breaks one is held back in `raw.quarantine`; "
                      "NULLs are skipped):", "", *(f"- {d}" for d in held)]
    return [*lines, ""]


def domains_markdown(tables: list[Table]) -> list[str]:
    """Every domain rule with its reason: by column name, by unit, and the columns that
    declare their own."""
    lines = ["## Numeric domains", "",
             "Every numeric value is finite: NaN and ±Infinity are never data. Each numeric "
             "column also has a domain (declared once in `schemas/domains.py`): from the "
             "column's own declaration where one table means something else by the name, "
             "else from its name, else from its unit suffix. A row with a value outside it, "
             "or a value that does not fit the column's type, is held back in "
             "`raw.quarantine` with the column, the value and the bound "
             "(`bandwidth_bytes_per_s=1e+30 fails at most 1e13 (10 TB/s: ...)`); the rest "
             "of the file loads.", "",
             "| columns | unit | domain | why |", "|---|---|---|---|"]
    for names, unit_, rule in rules():
        shown = ", ".join(f"`{n}`" for n in names) if not unit_ else f"`*{names[0]}`"
        lines.append(f"| {shown} | {unit_} | {rule.describe()} | {_cell(rule.why)} |")
    for table in tables:
        for c in table.all_columns:
            if c.domain is not None:
                lines.append(f"| `{table.key}.{c.name}` | {unit(c)} | {c.domain.describe()} | "
                             f"{_cell(c.domain.why)} |")
    return [*lines, ""]


def render() -> str:
    tables = all_tables()
    out = [
        "# The warehouse: tables, columns, units",
        "",
        "_Generated by `python -m reports.docs` (`make docs`) from the table declarations in "
        "`schemas/`, the same source as the DDL, the DuckDB comments and the pandera "
        "schemas. Do not edit by hand._",
        "",
        "Open it read-only: `duckdb -readonly warehouse/warehouse.duckdb`, "
        "`sizing query \"SELECT ...\"` (`--format csv|json|markdown`), or the Parquet "
        "export (`sizing export`, one folder per table under `warehouse/parquet/`). The "
        "database describes itself: every table and column carries the comment shown here "
        "(`duckdb_tables()`, `duckdb_columns()`).",
        "",
        "Conventions: units are in column names (`_ms`, `_us`, `_mb`, `_gb`, `_pct`, `_w`, "
        "`_per_s`, `_bytes`); MB and GB are decimal (10^6, 10^9 bytes). Numbers are finite "
        "and within their column's domain ([Numeric domains](#numeric-domains)). A metric a "
        "tool did not report is NULL, never 0. Data rows carry their lineage: `source_file` "
        "(relative to the raw root) and `file_sha256`, and usually `source_line`. `raw` "
        "holds what the files say, `core` one normalized record per measurement, `sizing` "
        "the derived rules and plans.",
        "",
        "## Common questions",
        "",
    ]
    for example in EXAMPLES:
        out += [f"**{example.question}**", "", "```sql", example.sql, "```", ""]
    out += ["## Tables", ""]
    for schema in SCHEMA_ORDER:
        members = [t for t in tables if t.schema == schema]
        out += [f"- `{schema}`: " + ", ".join(f"[`{t.name}`](#{_anchor(t)})" for t in members)]
    out.append("")
    out += domains_markdown(tables)
    for schema in SCHEMA_ORDER:
        out += [f"## Schema `{schema}`", ""]
        for table in (t for t in tables if t.schema == schema):
            out += table_markdown(table)
    return "\n".join(out).rstrip("\n") + "\n"


def _anchor(table: Table) -> str:
    """GitHub's heading anchor of '### `schema.name`'."""
    return f"{table.schema}{table.name}".lower()


def main() -> int:
    sys.stdout.write(render())
    return 0


if __name__ == "__main__":
    sys.exit(main())
