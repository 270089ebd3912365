"""One door to the warehouse: outside store/, no code touches a Store's DuckDB connection,
opens DuckDB itself, or asks which backend a warehouse has (store/location.py answers for
it). Read from the source, so a new call site fails here, not in review."""

from __future__ import annotations

import ast

from tests.conftest import PROJECT

PACKAGES = ("pipelines", "assets", "reports", "ingest", "transforms")
BACKENDS = {"Lake", "LakeRun", "Publication", "DuckDBFile", "DuckLake", "WarehouseLocation"}
OPENERS = {"connect", "connect_sandboxed", "read_only"}  # store.store's and store.lake's


def trespasses(source: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr == "con":
            found.append(f"line {node.lineno}: .con")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id == "isinstance" and len(node.args) == 2 \
                and BACKENDS & _names(node.args[1]):
            found.append(f"line {node.lineno}: isinstance on a backend")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("store.") \
                and OPENERS & {a.name for a in node.names}:
            found.append(f"line {node.lineno}: imports an opener from {node.module}")
        elif isinstance(node, ast.Attribute) and node.attr in OPENERS \
                and isinstance(node.value, ast.Name) and node.value.id in ("lake", "store"):
            found.append(f"line {node.lineno}: {node.value.id}.{node.attr}")
    return sorted(found, key=lambda f: int(f.split(":")[0].split()[1]))  # in line order


def _names(node: ast.AST) -> set[str]:
    """The names an expression mentions (`lake.Lake` is Lake)."""
    return {n.id if isinstance(n, ast.Name) else n.attr for n in ast.walk(node)
            if isinstance(n, ast.Name | ast.Attribute)}


def test_no_code_outside_store_opens_duckdb_or_asks_for_a_backend():
    offences = {str(path.relative_to(PROJECT)): found
                for package in PACKAGES for path in sorted((PROJECT / package).rglob("*.py"))
                if (found := trespasses(path.read_text()))}
    assert offences == {}


def test_each_trespass_is_seen():
    source = ("from store.store import connect\n"
              "store.con.execute('DELETE FROM t')\n"
              "if isinstance(where, Path | Lake): pass\n"
              "lake.connect(where)\n"
              "isinstance(run, lake_run.LakeRun)\n"
              "isinstance(path, Path)\n")  # a plain path: not a warehouse's backend
    assert trespasses(source) == [
        "line 1: imports an opener from store.store", "line 2: .con",
        "line 3: isinstance on a backend", "line 4: lake.connect",
        "line 5: isinstance on a backend"]
