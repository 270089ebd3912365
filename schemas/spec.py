"""One declaration per warehouse table: its columns, units and meaning.

The same `Table` object produces the DuckDB DDL, the `COMMENT ON` text, the pandera
(polars) schema that guards every write, and the documentation. Nothing about a column
is written twice.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import polars as pl

from schemas.checks import FINITE, Check
from schemas.domains import Domain, domain_of

if TYPE_CHECKING:
    import pandera.polars as pa

    from schemas.invariants import Invariant

_DUCKDB_TYPES: dict[type[pl.DataType], str] = {
    pl.Utf8: "VARCHAR",
    pl.Float64: "DOUBLE",
    pl.Int64: "BIGINT",
    pl.Boolean: "BOOLEAN",
    pl.Datetime: "TIMESTAMP",
    pl.Date: "DATE",
}


@dataclass(frozen=True)
class Column:
    name: str
    dtype: type[pl.DataType]
    description: str
    nullable: bool = True
    checks: tuple[Check, ...] = ()
    domain: Domain | None = None  # only where the name's rule (schemas/domains.py) is wrong

    @property
    def duckdb_type(self) -> str:
        return _DUCKDB_TYPES[self.dtype]

    def all_checks(self) -> list[Check]:
        """The column's own checks, then its domain's (schemas/domains.py): finite, and the
        bounds its own checks do not already hold."""
        checks = list(self.checks)
        if self.dtype is pl.Float64:
            checks.append(FINITE)
        domain = domain_of(self)
        if domain is None:
            return checks
        own = [c.statistics or {} for c in self.checks]
        if domain.lo is not None and not any(s.get("min_value", -math.inf) >= domain.lo
                                             for s in own):
            checks.append(Check.ge(self._bound(domain.lo), error=domain.lo_error()))
        if domain.hi is not None and not any(s.get("max_value", math.inf) <= domain.hi
                                             for s in own):
            checks.append(Check.le(self._bound(domain.hi), error=domain.hi_error()))
        return checks

    def _bound(self, value: float) -> float | int:
        return int(value) if self.dtype is pl.Int64 else float(value)


def text(name: str, description: str, **kw: object) -> Column:
    return Column(name, pl.Utf8, description, **kw)  # type: ignore[arg-type]


def real(name: str, description: str, **kw: object) -> Column:
    return Column(name, pl.Float64, description, **kw)  # type: ignore[arg-type]


def integer(name: str, description: str, **kw: object) -> Column:
    return Column(name, pl.Int64, description, **kw)  # type: ignore[arg-type]


def flag(name: str, description: str, **kw: object) -> Column:
    return Column(name, pl.Boolean, description, **kw)  # type: ignore[arg-type]


NON_NEGATIVE = (Check.ge(0),)
PERCENT = (Check.in_range(0, 100),)

# Every data row says which file, at which version, it came from.
LINEAGE = (
    text("source_file", "Path of the input file, relative to the raw root.", nullable=False),
    text("file_sha256", "SHA-256 of the input file's bytes when these rows were loaded.",
         nullable=False),
)


@dataclass(frozen=True)
class Table:
    schema: str
    name: str
    description: str
    columns: tuple[Column, ...]
    lineage: bool = True
    unique: tuple[str, ...] = field(default=())
    # what must hold between one row's values (schemas/invariants.py), checked with the
    # domains: a row that breaks one is held back
    invariants: tuple[Invariant, ...] = field(default=())

    @property
    def key(self) -> str:
        return f"{self.schema}.{self.name}"

    @property
    def all_columns(self) -> tuple[Column, ...]:
        return self.columns + (LINEAGE if self.lineage else ())

    @property
    def column_names(self) -> list[str]:
        return [c.name for c in self.all_columns]

    @property
    def polars_schema(self) -> dict[str, type[pl.DataType]]:
        return {c.name: c.dtype for c in self.all_columns}

    def pandera_schema(self) -> pa.DataFrameSchema:
        import pandera.polars as pa  # here only: its import costs half a second

        return pa.DataFrameSchema(
            {c.name: pa.Column(c.dtype, [k.to_pandera() for k in c.all_checks()],
                               nullable=c.nullable)
             for c in self.all_columns},
            name=self.key,
            strict=True,
            ordered=False,
        )

    def create_sql(self) -> str:
        cols = ",\n  ".join(f"{quote_ident(c.name)} {c.duckdb_type}" for c in self.all_columns)
        return f"CREATE TABLE IF NOT EXISTS {self.qualified} (\n  {cols}\n)"

    def comments(self) -> dict[str | None, str]:
        """The description of the table (key None), then of each column by name."""
        return {None: self.description, **{c.name: c.description for c in self.all_columns}}

    def comment_sql(self, column: str | None) -> str:
        target = f"TABLE {self.qualified}" if column is None else \
            f"COLUMN {self.qualified}.{quote_ident(column)}"
        return f"COMMENT ON {target} IS {quote_literal(self.comments()[column])}"

    @property
    def qualified(self) -> str:
        return f"{quote_ident(self.schema)}.{quote_ident(self.name)}"

    def empty_frame(self) -> pl.DataFrame:
        return pl.DataFrame(schema=self.polars_schema)

    def conform(self, frame: pl.DataFrame, strict: bool = True) -> pl.DataFrame:
        """Add missing nullable columns as NULL, cast to declared types, order as declared.

        Strict casting makes a value that does not fit its type an error; with strict=False
        it becomes NULL (schemas.validate reports those rows, naming the value)."""
        missing = [c for c in self.all_columns if c.name not in frame.columns]
        frame = frame.with_columns(pl.lit(None, dtype=c.dtype).alias(c.name) for c in missing)
        return frame.select(pl.col(c.name).cast(c.dtype, strict=strict)
                            for c in self.all_columns)


def quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def quote_literal(value: str) -> str:
    """Only for DDL text the project itself writes (COMMENT ON takes no parameters)."""
    return "'" + value.replace("'", "''") + "'"
